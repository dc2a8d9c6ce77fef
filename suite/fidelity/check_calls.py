"""Fidelity checks of the header and of tool calls: session ID and agent version (ASR-051, ASR-150, ASR-179),
startedAt (ASR-154), each native call kept with its native ID (ASR-157, ASR-250, ASR-262), exact name
(ASR-252), arguments (ASR-254), requestedBy (ASR-274), a recorded nesting kept (ASR-157) and kinds (ASR-253)."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

from asr_conformance.fidelity.check_base import CheckerBase
from asr_conformance.fidelity.facts import ABSENT, NativeCall
from asr_conformance.fidelity.stream_view import (
    ARGUMENT_CATEGORIES,
    CALL_CATEGORIES,
    PARENT_CATEGORIES,
    clip,
    json_equal,
)
from asr_conformance.fidelity.timestamps import parse_instant


class CallChecks(CheckerBase):
    """The header's and the calls' checks."""

    def header(self) -> None:
        header, facts = self.stream.header, self.facts
        session_id = header.get("sessionId")
        if facts.session_ids and session_id not in facts.session_ids:
            ids = ", ".join(sorted(facts.session_ids))
            self.add("ASR-051", "exact-values",
                     f"header sessionId {clip(str(session_id))} is not the source's own session ID ({ids}), verbatim",
                     record=header)
        self.agent_version(header)
        started = header.get("startedAt")
        if isinstance(started, str) and facts.earliest_time is not None:
            instant = parse_instant(started)
            if instant not in self.instants:
                self.add("ASR-154", "nothing-invented",
                         f"header startedAt {started} is not a time the source records", record=header)
            elif instant is not None and (earliest := parse_instant(facts.earliest_time)) is not None and instant < earliest:
                self.add("ASR-154", "exact-values",
                         f"header startedAt {started} is earlier than the first time the source records "
                         f"({facts.earliest_time})", record=header)

    def agent_version(self, header: dict[str, Any]) -> None:
        agent = header["agent"] if isinstance(header.get("agent"), dict) else {}
        version = agent.get("version")
        if version is not None and version not in self.facts.agent_versions:
            expected = ", ".join(map(clip, self.facts.agent_versions)) or "none"
            self.add("ASR-150", "exact-values",
                     f"header agent.version {clip(str(version))} is not a version the source records ({expected}), "
                     f"verbatim", record=header)
        for record in self.stream.records:
            declared = record.get("agentVersion") if record.get("type") == "declaration" else None
            if declared is not None and declared not in self.facts.agent_versions:
                self.add("ASR-179", "nothing-invented",
                         f"declared agentVersion {clip(str(declared))} is not a version the source records",
                         record=record)

    def calls(self) -> None:
        seen: dict[str, int] = defaultdict(int)
        unmatched = [c for c in self.stream.all_calls if c.get("callId") not in self.native_ids]
        for call in self.facts.calls:
            record = self.next_written(seen, call.call_id, self.stream.calls)
            if record is not None:
                self.call(call, record)
            else:
                self.missing_call(call, seen[call.call_id] - 1, unmatched)

    def missing_call(self, call: NativeCall, index: int, unmatched: list[dict[str, Any]]) -> None:
        if index and self.stream.calls.get(call.call_id):
            self.add("ASR-262", "identity",
                     f"the source has {index + 1} or more tool calls with ID {call.call_id}; duplicate native "
                     f"call IDs must be kept on each call, the stream has {len(self.stream.calls[call.call_id])}",
                     call.where)
            return
        stand_in = next((r for r in unmatched if r.get("name") == call.name
                         and ("input" not in r or json_equal(r.get("input"), call.arguments))), None)
        if stand_in is not None:
            unmatched.remove(stand_in)
            self.matched.add(id(stand_in))
            self.add("ASR-262", "identity",
                     f"tool call {call.name or call.call_id} keeps no native ID: the source's ID is {call.call_id}, the stream writes "
                     f"{clip(str(stand_in.get('callId')))}; callId must be the native ID with callIdSource: native",
                     call.where, stand_in)
        elif not self.excused(CALL_CATEGORIES, call.sidechain):
            self.add("ASR-157", "completeness",
                     f"tool call {call.call_id} ({call.name}) is missing from the stream, and producer.lossy declares "
                     f"no such loss", call.where)

    def call(self, call: NativeCall, record: dict[str, Any]) -> None:
        if record.get("callIdSource") != "native":
            self.add("ASR-250", "identity",
                     f"tool call {call.call_id} keeps the native ID but says callIdSource "
                     f"{clip(str(record.get('callIdSource')))}; the ID is the source's own (native)", call.where, record)
        name = record.get("name")
        if name is not None and call.name is None:
            self.add("ASR-252", "nothing-invented",
                     f"tool call {call.call_id} has name {clip(str(name))}, but the source records no tool name for it "
                     f"(name is then absent, with capture.name)", call.where, record)
        elif name is not None and name != call.name and name not in call.updates.get("name", ()):
            self.add("ASR-252", "exact-values",
                     f"tool name {clip(str(name))} is not the exact name the source records, {clip(str(call.name))} "
                     f"(no normalization, prefix stripping or splitting)", call.where, record)
        self.arguments(call, record)
        requested = record.get("requestedBy")
        if requested is not None and call.requested_by == ABSENT:
            self.add("ASR-274", "nothing-invented",
                     f"requestedBy {clip(str(requested))}, but the source does not record who requested call "
                     f"{call.call_id}; requestedBy is then absent (an absent requestedBy is not read as model)",
                     call.where, record)
        elif requested is not None and call.requested_by is not None and requested != call.requested_by:
            self.add("ASR-274", "nothing-invented",
                     f"requestedBy {clip(str(requested))} contradicts the source, which records the call as made by "
                     f"{call.requested_by}", call.where, record)
        self.same_time(call.ts, record, call.where, call.other_ts)
        self.nesting(call, record)

    def nesting(self, call: NativeCall, record: dict[str, Any]) -> None:
        """A link the source records on the call is kept: without parentCallId a nested call (run by a code
        cell, a subagent's call) reads as one the session made at top level (ASR-275, ASR-157)."""
        if call.parent_call_id is None or "parentCallId" in record or self.excused(PARENT_CATEGORIES, call.sidechain):
            return
        self.add("ASR-157", "completeness",
                 f"tool call {call.call_id} ({clip(str(call.name))}) ran inside {clip(call.parent_call_id)}, a link the "
                 f"source records, but the stream has no parentCallId, and producer.lossy declares no such loss",
                 call.where, record)

    def arguments(self, call: NativeCall, record: dict[str, Any]) -> None:
        if "input" in record:
            if not any(json_equal(record["input"], value) for value in (call.arguments, *call.updates.get("arguments", ()))):
                self.add("ASR-254", "exact-values",
                         f"tool call {call.call_id}: input differs from the arguments the source records", call.where, record)
        elif isinstance(record.get("inputText"), str):
            if not self.same_text_arguments(record["inputText"], call):
                self.add("ASR-254", "exact-values",
                         f"tool call {call.call_id}: inputText does not hold the complete arguments the source records",
                         call.where, record)
        elif call.has_arguments and "input" not in (record.get("capture") or {}) \
                and not self.excused(ARGUMENT_CATEGORIES, call.sidechain):
            self.add("ASR-157", "completeness",
                     f"tool call {call.call_id}: the arguments are missing, and producer.lossy declares no such loss",
                     call.where, record)

    @staticmethod
    def same_text_arguments(text: str, call: NativeCall) -> bool:
        """inputText holds the arguments verbatim (text the source holds), or the same JSON value (ASR-254)."""
        if call.arguments_text is not None and text == call.arguments_text:
            return True
        try:
            return json_equal(json.loads(text), call.arguments)
        except (ValueError, RecursionError):
            return False

    def kinds(self) -> None:
        """ASR-253: a registry maps exact names to kinds, so one name has one kind (or none) throughout; a pack
        whose agent publishes no mapping allows only a kind the source records for the call."""
        if self.policy.kind_policy == "source-only":
            self.unpublished_kinds()
            return  # the source's kind per call is the judge; one tool may have several
        kinds: dict[str, dict[Any, dict[str, Any]]] = defaultdict(dict)
        for record in self.stream.all_calls:
            if isinstance(record.get("name"), str):
                kinds[record["name"]].setdefault(record.get("kind"), record)
        for name, by_kind in kinds.items():
            if len(by_kind) > 1:
                shown = ", ".join(sorted(str(k) if k is not None else "absent" for k in by_kind))
                self.add("ASR-253", "nothing-invented",
                         f"tool {clip(name)} is given several kinds ({shown}): kind comes from the source or from a "
                         f"mapping of exact names, never from the title, input or other heuristics",
                         record=list(by_kind.values())[1])

    def unpublished_kinds(self) -> None:
        """No published mapping of names to kinds: a call's kind is the source's own, or absent (ASR-253)."""
        for call in self.facts.calls:
            for record in self.stream.calls.get(call.call_id, []):
                kind = record.get("kind")
                if kind is not None and kind != call.kind and kind not in call.updates.get("kind", ()):
                    recorded = f"records {clip(call.kind)}" if call.kind is not None else "records none"
                    self.add("ASR-253", "nothing-invented",
                             f"tool call {call.call_id} ({clip(str(call.name))}) has kind {clip(str(kind))}, but the source "
                             f"{recorded} and the agent publishes no mapping of tool names to kinds", call.where, record)

    def providers(self) -> None:
        """ASR-255: a provider's ``identity`` is ``exact`` only where the source records the tool's identity in
        separate fields, and then names what it records. This holds a call's provider and its result's (ASR-276:
        a result carries the identity the source records on it). ``parsed`` depends on a registry rule and
        ``unknown`` claims nothing, so neither is checked."""
        recorded = self.facts.providers
        if recorded is None:
            return  # the pack does not say where its source records tool identities
        for record in [*self.stream.all_calls, *self.stream.all_results]:
            provider = record.get("provider")
            if not isinstance(provider, dict) or provider.get("identity") != "exact":
                continue
            call_id = record.get("callId")
            what = f"{record.get('type')} {clip(str(call_id))}"
            pairs = recorded.get(call_id) if isinstance(call_id, str) else None
            if pairs is None:
                self.add("ASR-255", "nothing-invented",
                         f"{what} has a provider with identity exact, but the source records that tool's identity "
                         f"in no separate fields (a composite name at most, which only a documented rule may "
                         f"split, as parsed)", record=record)
            elif not any(_names(provider, server, tool) for server, tool in pairs):
                shown = ", ".join(f"{s or '*'}/{t or '*'}" for s, t in sorted(pairs, key=str))
                self.add("ASR-255", "exact-values",
                         f"{what} has an exact provider {clip(str(provider.get('server')))}/"
                         f"{clip(str(provider.get('tool')))}, which is not the identity the source records ({shown})",
                         record=record)


def _names(provider: dict[str, Any], server: str | None, tool: str | None) -> bool:
    """Whether an exact provider's server and tool are the recorded ones (``None``: any value was recorded)."""
    return (server is None or provider.get("server") == server) and (tool is None or provider.get("tool") == tool)
