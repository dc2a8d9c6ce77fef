"""Fidelity checks of subagents and lineage: a parentCallId only where the source records the link
(ASR-275); a subagent's records written in the session's own scope are reported, never scored (the Lineage
section is not among the pages under test)."""

from __future__ import annotations

from collections import defaultdict

from asr_conformance.fidelity.check_base import CheckerBase
from asr_conformance.fidelity.stream_view import LINEAGE, clip, joined


class SubagentChecks(CheckerBase):
    """The lineage's and subagents' checks."""

    def parent_links(self) -> None:
        calls = {c.call_id: c for c in reversed(self.facts.calls)}  # the first call with each ID, for its place
        recorded: dict[str, set[str]] = defaultdict(set)  # every call with a shared ID may record its own parent
        for call in self.facts.calls:
            if call.parent_call_id:
                recorded[call.call_id].add(call.parent_call_id)
        for record in self.stream.all_calls:
            parent = record.get("parentCallId")
            if parent is None:
                continue
            call_id = record.get("callId")
            native = calls.get(call_id) if isinstance(call_id, str) else None
            allowed = set(self.facts.parent_links.get(call_id, ()) if isinstance(call_id, str) else ()) | recorded.get(str(call_id), set())
            if parent not in allowed:
                self.add("ASR-275", "nothing-invented",
                         f"tool call {clip(str(call_id))} has parentCallId {clip(str(parent))}, a link the source does "
                         f"not record (it must not be inferred from position or timing)",
                         native.where if native else None, record)

    def subagents(self) -> None:
        """A subagent's records written in the session's own scope: reported, never scored (the Lineage section,
        which says how a subagent's records are scoped, is not among the pages under test)."""
        subagents = self.facts.subagents
        if not subagents:
            return
        header = self.stream.header
        has_scope = any(r.get("type") == "subagent" for r in self.stream.records)
        for subagent in subagents:
            name = clip(subagent.agent_id) if subagent.agent_id else "without a recorded ID"
            if subagent.whole_input:
                if header.get("scope") != "subagent":
                    self.report(LINEAGE, f"the input is subagent {name}'s own transcript, but the header's scope is "
                                f"{clip(str(header.get('scope', 'absent')))}, not subagent", subagent.where, header)
                continue
            if has_scope:
                continue  # the stream records subagents; how it scopes them is the Lineage section's business
            prompt = next((r for r in self.stream.messages if r.get("role") == "user"
                           and any(t and t in joined(r) for t in subagent.prompts)), None)
            if prompt is not None:
                self.report(LINEAGE, f"subagent {name}'s prompt is written as the session's own user message, with "
                            f"no subagent record", subagent.where, prompt)
            flat = [c for c in subagent.call_ids for r in self.stream.calls.get(c, ()) if "parentCallId" not in r]
            if flat:
                self.report(LINEAGE, f"{len(flat)} call(s) the source records as subagent {name}'s are written as the "
                            f"session's own (no parentCallId, no subagent record)", subagent.where)
