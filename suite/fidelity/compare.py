"""Hold a converted stream against its source's facts: ``check_fidelity(facts, records)``.

Four families, each finding naming its rule:

* completeness: every native call, result and message is in the stream, and a call's recorded
  parent link is kept as ``parentCallId``, unless the stream declares its category lost in
  ``producer.lossy`` (header and declarations; ASR-157);
* identity: native call IDs kept (``callIdSource: native``), duplicates kept on each call, no
  positional pairing (ASR-262), orphans kept (ASR-266), no result made up for a dangling call
  (ASR-265);
* exact values: names (ASR-252), arguments (ASR-254), message and result text byte for byte,
  status from the source's flag (ASR-258), times as the same instants (ASR-103, ASR-154), header
  session ID and agent version (ASR-051);
* nothing invented: state records and their turn IDs and stop reasons (ASR-169), hook execution details
  (ASR-287), exit codes (ASR-260, 267), ``parentCallId`` (ASR-275), ``requestedBy``
  (ASR-274), timing (ASR-261), ``decidedBy``, ``decider``, ``rule`` and ``reviews`` (ASR-270), the
  compact permission form for a recorded request (ASR-279), terminal records (ASR-291) and their
  details (ASR-267), configuration changes (ASR-172) and snapshot values (ASR-187), answers
  (ASR-285), secrets (ASR-283), ``kind`` as a function of the name (ASR-253), times the source
  lacks (ASR-104).

Besides the findings, ``observe_fidelity`` returns what no numbered rule settles (an approval's
decision or status, a subagent's scope): family ``reported``, shown beside the verdict, never scored.

Strict where the pages say MUST, tolerant of legitimate mapping choices: a converter may split
or join text parts (texts are checked by exact containment), write times in another offset,
leave optional members out, map an error to ``failed``, ``denied`` or ``interrupted``, and declare
any category lost. Records are the stream as dicts, already valid per the reference validator.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from asr_conformance.fidelity.facts import (
    ABSENT,
    CONFIG_MEMBERS,
    HOOK_DETAILS,
    PERMISSION_PROVENANCE,
    Finding,
    NativeCall,
    NativeConfig,
    NativeHook,
    NativeMessage,
    NativePermission,
    NativeResult,
    NativeTerminal,
    NativeTransition,
    SourceFacts,
    Where,
)
from asr_conformance.fidelity.timestamps import parse_instant, same_instant

#: Categories a lossy entry may name, per kind of native item. An entry excuses an item when it
#: equals one of the item's categories or is a prefix of one up to a dot ("message" excuses
#: "message.user"); plural spellings and the judging pack's own namespace prefixes
#: (``Policy.loss_namespaces``: "claude-code." for Claude Code) are read as the same name.
CALL_CATEGORIES = ("tool_call", "tool_use")
RESULT_CATEGORIES = ("tool_result", "tool_result.content")
ARGUMENT_CATEGORIES = ("tool_call.input", "tool_use.input")
SIDECHAIN_CATEGORIES = ("sidechain", "subagent", "isSidechain")
PARENT_CATEGORIES = ("tool_call.parentCallId", "parentCallId", "lineage", "subagent")
PERMISSION_CATEGORIES = ("permission",)
TERMINAL_CATEGORIES = ("terminal",)
#: The family of an observation the pages do not settle: shown with the verdict, never scored.
REPORTED = "reported"
#: What a reported approval observation names in place of a rule: the section, which has none for it.
PERMISSIONS = "permission"
#: Likewise for a subagent's scope: the Lineage section, which is not among the pages under test.
LINEAGE = "Lineage"


def message_categories(role: str) -> tuple[str, ...]:
    return (f"message.{role}", f"content.text.{role}", f"{role}.text", f"{role}")


EXIT_CODE_CATEGORIES = ("tool_result.exec", "tool_result.exec.exitCode", "exec", "exec.exitCode", "exitCode")
RESULT_TEXT_CATEGORIES = ("tool_result.content", "content.text", "tool_result.text")
EXCERPT = 120


#: The namespaces a lossy entry may carry when no pack says otherwise (the Claude Code spellings).
DEFAULT_NAMESPACES = ("claude-code.", "claude_code.", "claude-code/")


@dataclass(frozen=True)
class Policy:
    """What the judging pack says its source cannot tell, and how its loss categories are spelled."""

    #: ``any`` or ``source-only`` (``packs.pack.KIND_POLICIES``).
    kind_policy: str = "any"
    #: Prefixes a ``producer.lossy`` entry may carry for this format; empty: ``DEFAULT_NAMESPACES``.
    loss_namespaces: tuple[str, ...] = ()


@dataclass
class Lossy:
    """The loss categories a stream declares, read generously."""

    names: frozenset[str]

    @classmethod
    def of(cls, records: list[dict[str, Any]], namespaces: tuple[str, ...] = DEFAULT_NAMESPACES) -> Lossy:
        names: set[str] = set()
        for record in records:
            source = record.get("producer") if record.get("type") == "session" else record
            lossy = source.get("lossy") if isinstance(source, dict) else None
            if record.get("type") in ("session", "declaration") and isinstance(lossy, list):
                names |= {_normal(name, namespaces) for name in lossy if isinstance(name, str)}
        return cls(frozenset(names))

    def excuses(self, categories: Iterable[str]) -> bool:
        for category in (_normal(c, ()) for c in categories):
            parts = category.split(".")
            if any(".".join(parts[:n]) in self.names for n in range(1, len(parts) + 1)):
                return True
        return False


def _normal(name: str, namespaces: tuple[str, ...] = DEFAULT_NAMESPACES) -> str:
    name = name.strip()
    for prefix in namespaces:
        if name.startswith(prefix):
            name = name[len(prefix):]
    head, dot, rest = name.partition(".")
    if head.endswith("s") and head[:-1] in ("tool_call", "tool_result", "message", "tool_use"):
        head = head[:-1]
    return head + dot + rest


@dataclass
class Stream:
    """The stream's records indexed for the checks; superseded revisions are left out."""

    records: list[dict[str, Any]]
    header: dict[str, Any] = field(default_factory=dict)
    calls: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    results: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    unlinked_results: list[dict[str, Any]] = field(default_factory=list)
    all_calls: list[dict[str, Any]] = field(default_factory=list)
    all_results: list[dict[str, Any]] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)
    message_ids: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    texts: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))

    @classmethod
    def of(cls, records: list[dict[str, Any]]) -> Stream:
        stream = cls(records)
        superseded = {r.get("supersedes") for r in records if isinstance(r.get("supersedes"), str)}
        for record in records:
            if record.get("id") in superseded:
                continue
            stream.add(record)
        return stream

    def add(self, record: dict[str, Any]) -> None:
        kind = record.get("type")
        if kind == "session":
            self.header = record
        elif kind == "tool_call":
            self.all_calls.append(record)
            if isinstance(record.get("callId"), str):
                self.calls[record["callId"]].append(record)
        elif kind == "tool_result":
            self.all_results.append(record)
            key = record.get("nativeCallId") if isinstance(record.get("nativeCallId"), str) else record.get("callId")
            if isinstance(key, str):
                self.results[key].append(record)
            else:
                self.unlinked_results.append(record)
        elif kind == "message":
            self.messages.append(record)
            for key in ("messageId", "nativeId"):
                if isinstance(record.get(key), str):
                    self.message_ids[record[key]].append(record)
            for part in parts_text(record.get("content")):
                self.texts[part].append(record)


def parts_text(content: Any) -> list[str]:
    """The text of each text part of a ContentPart list."""
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]


def joined(record: dict[str, Any], key: str = "content") -> str:
    return "".join(parts_text(record.get(key)))


def _clip(text: str) -> str:
    text = json.dumps(text, ensure_ascii=False)
    return text if len(text) <= EXCERPT else text[: EXCERPT - 2] + "…\""


def json_equal(a: Any, b: Any) -> bool:
    """Equal as JSON values: numbers by value, but true is not 1 and objects ignore key order."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=False))
    return type(a) is type(b) and a == b


class Checker:
    """All checks of one stream against one source; ``findings`` grows as they run."""

    def __init__(self, facts: SourceFacts, records: list[dict[str, Any]], policy: Policy | None = None) -> None:
        self.facts = facts
        self.policy = policy or Policy()
        self.stream = Stream.of(records)
        self.lossy = Lossy.of(records, self.policy.loss_namespaces or DEFAULT_NAMESPACES)
        self.findings: list[Finding] = []
        #: Disagreements no numbered rule of the pages settles: reported beside the verdict, never scored.
        self.reported: list[Finding] = []
        self.native_ids = {c.call_id for c in facts.calls} | {r.call_id for r in facts.results if r.call_id}
        self.instants = {parse_instant(t) for t in facts.times} - {None}
        self.matched: set[int] = set()  # id() of stream records tied to a native item

    def add(self, rule: str, family: str, message: str, where: Where | None = None, record: dict[str, Any] | None = None) -> None:
        seq = record.get("seq") if isinstance(record, dict) and isinstance(record.get("seq"), int) else None
        self.findings.append(Finding(rule, family, message, where, seq))

    def report(self, rule: str, message: str, where: Where | None = None, record: dict[str, Any] | None = None) -> None:
        """An observation for the vendor that no numbered rule settles (``rule`` names the section instead)."""
        seq = record.get("seq") if isinstance(record, dict) and isinstance(record.get("seq"), int) else None
        self.reported.append(Finding(rule, REPORTED, message, where, seq))

    def run(self) -> list[Finding]:
        self.header()
        self.calls()
        self.results()
        self.messages()
        self.invented()
        self.kinds()
        self.times()
        self.questions()
        self.decisions()
        self.permissions()
        self.modes()
        self.configs()
        self.states()
        self.hooks()
        self.terminals()
        self.subagents()
        self.secrets()
        return self.findings

    # --- header -----------------------------------------------------------------

    def header(self) -> None:
        header, facts = self.stream.header, self.facts
        session_id = header.get("sessionId")
        if facts.session_ids and session_id not in facts.session_ids:
            ids = ", ".join(sorted(facts.session_ids))
            self.add("ASR-051", "exact-values",
                     f"header sessionId {_clip(str(session_id))} is not the source's own session ID ({ids}), verbatim",
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
            expected = ", ".join(map(_clip, self.facts.agent_versions)) or "none"
            self.add("ASR-150", "exact-values",
                     f"header agent.version {_clip(str(version))} is not a version the source records ({expected}), "
                     f"verbatim", record=header)
        for record in self.stream.records:
            declared = record.get("agentVersion") if record.get("type") == "declaration" else None
            if declared is not None and declared not in self.facts.agent_versions:
                self.add("ASR-179", "nothing-invented",
                         f"declared agentVersion {_clip(str(declared))} is not a version the source records",
                         record=record)

    # --- calls --------------------------------------------------------------------

    def calls(self) -> None:
        seen: dict[str, int] = defaultdict(int)
        unmatched = [c for c in self.stream.all_calls if c.get("callId") not in self.native_ids]
        for call in self.facts.calls:
            index = seen[call.call_id]
            seen[call.call_id] += 1
            candidates = self.stream.calls.get(call.call_id, [])
            if index < len(candidates):
                record = candidates[index]
                self.matched.add(id(record))
                self.call(call, record)
            else:
                self.missing_call(call, index, unmatched)
        self.parent_links()

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
                     f"{_clip(str(stand_in.get('callId')))}; callId must be the native ID with callIdSource: native",
                     call.where, stand_in)
        elif not self.excused(CALL_CATEGORIES, call.sidechain):
            self.add("ASR-157", "completeness",
                     f"tool call {call.call_id} ({call.name}) is missing from the stream, and producer.lossy declares "
                     f"no such loss", call.where)

    def excused(self, categories: Iterable[str], sidechain: bool) -> bool:
        return self.lossy.excuses(categories) or (sidechain and self.lossy.excuses(SIDECHAIN_CATEGORIES))

    def call(self, call: NativeCall, record: dict[str, Any]) -> None:
        if record.get("callIdSource") != "native":
            self.add("ASR-250", "identity",
                     f"tool call {call.call_id} keeps the native ID but says callIdSource "
                     f"{_clip(str(record.get('callIdSource')))}; the ID is the source's own (native)", call.where, record)
        name = record.get("name")
        if name is not None and call.name is None:
            self.add("ASR-252", "nothing-invented",
                     f"tool call {call.call_id} has name {_clip(str(name))}, but the source records no tool name for it "
                     f"(name is then absent, with capture.name)", call.where, record)
        elif name is not None and name != call.name:
            self.add("ASR-252", "exact-values",
                     f"tool name {_clip(str(name))} is not the exact name the source records, {_clip(str(call.name))} "
                     f"(no normalization, prefix stripping or splitting)", call.where, record)
        self.arguments(call, record)
        requested = record.get("requestedBy")
        if requested is not None and call.requested_by == ABSENT:
            self.add("ASR-274", "nothing-invented",
                     f"requestedBy {_clip(str(requested))}, but the source does not record who requested call "
                     f"{call.call_id}; requestedBy is then absent (an absent requestedBy is not read as model)",
                     call.where, record)
        elif requested is not None and call.requested_by is not None and requested != call.requested_by:
            self.add("ASR-274", "nothing-invented",
                     f"requestedBy {_clip(str(requested))} contradicts the source, which records the call as made by "
                     f"{call.requested_by}", call.where, record)
        self.same_time(call.ts, record, call.where, call.other_ts)
        self.nesting(call, record)

    def nesting(self, call: NativeCall, record: dict[str, Any]) -> None:
        """A link the source records on the call is kept: without parentCallId a nested call (run by a code
        cell, a subagent's call) reads as one the session made at top level (ASR-275, ASR-157)."""
        if call.parent_call_id is None or "parentCallId" in record or self.excused(PARENT_CATEGORIES, call.sidechain):
            return
        self.add("ASR-157", "completeness",
                 f"tool call {call.call_id} ({_clip(str(call.name))}) ran inside {_clip(call.parent_call_id)}, a link the "
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
                         f"tool call {_clip(str(call_id))} has parentCallId {_clip(str(parent))}, a link the source does "
                         f"not record (it must not be inferred from position or timing)",
                         native.where if native else None, record)

    # --- results ------------------------------------------------------------------

    def results(self) -> None:
        seen: dict[str, int] = defaultdict(int)
        call_counts: dict[str, int] = defaultdict(int)
        for call in self.facts.calls:
            call_counts[call.call_id] += 1
        unlinked = list(self.stream.unlinked_results)
        for result in self.facts.results:
            if result.call_id is None:
                self.unlinked_result(result, unlinked)
                continue
            index = seen[result.call_id]
            seen[result.call_id] += 1
            candidates = self.stream.results.get(result.call_id, [])
            if index < len(candidates):
                record = candidates[index]
                self.matched.add(id(record))
                self.result(result, record, call_counts[result.call_id])
            elif not result.optional:  # an optional result is value-checked when written, never demanded
                self.missing_result(result, call_counts[result.call_id])
        self.dangling(call_counts)

    def unlinked_result(self, result: NativeResult, unlinked: list[dict[str, Any]]) -> None:
        record = next((r for r in unlinked if self.holds_texts(r, result)), None)
        if record is None:
            if not self.excused(RESULT_CATEGORIES, result.sidechain):
                self.add("ASR-157", "completeness",
                         "a tool result the source attaches to no call ID is missing from the stream", result.where)
            return
        unlinked.remove(record)
        self.matched.add(id(record))
        self.result(result, record, 0)

    def missing_result(self, result: NativeResult, calls: int) -> None:
        stand_in = next((r for r in self.stream.all_results if id(r) not in self.matched
                         and (r.get("nativeCallId") or r.get("callId")) not in self.native_ids
                         and self.holds_texts(r, result)), None)
        if stand_in is not None and calls == 0 and not stand_in.get("callId") and stand_in.get("linkage") == "none":
            self.matched.add(id(stand_in))  # an orphan kept unlinked: its ID is lost, but it is kept (ASR-266)
            self.result(result, stand_in, 0)
        elif stand_in is not None:
            self.matched.add(id(stand_in))
            self.add("ASR-262", "identity",
                     f"the result for {result.call_id} is written under {_clip(str(stand_in.get('callId')))}: a result "
                     f"keeps the ID the source attaches to it", result.where, stand_in)
        elif self.excused(RESULT_CATEGORIES, result.sidechain):
            return
        elif calls == 0:
            self.add("ASR-266", "identity",
                     f"orphan result {result.call_id} (no tool call in the source has that ID) is missing; producers must keep orphan "
                     f"results", result.where)
        else:
            self.add("ASR-157", "completeness",
                     f"the result for tool call {result.call_id} is missing from the stream, and producer.lossy declares "
                     f"no such loss", result.where)

    def result(self, result: NativeResult, record: dict[str, Any], calls: int) -> None:
        if self.paired_elsewhere(result, record):
            return
        self.pairing(result, record, calls)
        status = record.get("status")
        if result.statuses and status not in result.statuses:
            wanted = " or ".join(sorted(result.statuses))
            self.add("ASR-258", "exact-values",
                     f"result {result.call_id}: status {_clip(str(status))} does not reflect the source's own outcome "
                     f"(the source's outcome allows {wanted})", result.where, record)
        elif status in result.ruled_out:
            self.add("ASR-258", "exact-values",
                     f"result {result.call_id}: status {_clip(str(status))}, but the source records no such outcome "
                     f"(denied only where the source records a refusal)", result.where, record)
        self.result_text(result, record)
        self.execution(result, record)
        self.same_time(result.ts, record, result.where, result.other_ts)

    def paired_elsewhere(self, result: NativeResult, record: dict[str, Any]) -> bool:
        """The result's text sits under another call's ID: pairing by position, not by the source's ID."""
        if not result.model_texts or not any(result.model_texts) or self.holds_texts(record, result):
            return False
        other = next((r for r in self.stream.all_results if r is not record and self.holds_texts(r, result)), None)
        if other is None:
            return False
        self.add("ASR-262", "identity",
                 f"the result the source attaches to {result.call_id} is written under "
                 f"{_clip(str(other.get('callId') or other.get('nativeCallId')))}, and the stream's result for "
                 f"{result.call_id} holds another result's output; pairing must follow the source's IDs, never position",
                 result.where, other)
        return True

    def pairing(self, result: NativeResult, record: dict[str, Any], calls: int) -> None:
        call_id, linkage = record.get("callId"), record.get("linkage")
        if call_id is not None and call_id != result.call_id:
            self.add("ASR-262", "identity",
                     f"the result the source attaches to {result.call_id} is paired with {_clip(str(call_id))}; pairing "
                     f"must follow the ID the source records, never position", result.where, record)
        elif calls > 1 and call_id is not None and linkage in ("exact", "derived"):
            self.add("ASR-262", "identity",
                     f"{calls} calls share the native ID {result.call_id}, so the source does not show which one this "
                     f"result answers: it must stay unpaired (linkage ambiguous, nativeCallId kept)", result.where, record)

    def result_text(self, result: NativeResult, record: dict[str, Any]) -> None:
        if not result.content_recorded and "content" in record:
            self.add("ASR-259", "nothing-invented",
                     f"result {result.call_id}: the source records no result content (what reached the model is not "
                     f"recorded), but the stream writes content {_clip(joined(record))}; content must be absent",
                     result.where, record)
            return
        if result.model_texts is None or not result.model_texts:
            return
        if "content" not in record:
            if "content" not in (record.get("capture") or {}) and not self.excused(RESULT_TEXT_CATEGORIES, result.sidechain):
                self.add("ASR-259", "completeness",
                         f"result {result.call_id}: content is missing, though the source records what reached the model",
                         result.where, record)
            return
        if not self.holds_texts(record, result):
            text = next(t for t in result.model_texts if t not in joined(record))
            self.add("ASR-259", "exact-values",
                     f"result {result.call_id}: content does not hold the text that reached the model byte for byte "
                     f"(source: {_clip(text)}, stream: {_clip(joined(record))})", result.where, record)

    @staticmethod
    def holds_texts(record: dict[str, Any], result: NativeResult) -> bool:
        text = joined(record)
        return all(t in text for t in result.model_texts or ())

    def execution(self, result: NativeResult, record: dict[str, Any]) -> None:
        exec_ = record["exec"] if isinstance(record.get("exec"), dict) else {}
        if "exitCode" in exec_ and exec_["exitCode"] != result.exit_code:
            recorded = "records none" if result.exit_code is None else f"records {result.exit_code}"
            self.add("ASR-260", "nothing-invented",
                     f"result {result.call_id}: exec.exitCode {exec_['exitCode']} but the source {recorded}; exit codes "
                     f"are never parsed from output or descriptive fields (ASR-267)", result.where, record)
        elif "exitCode" not in exec_ and result.exit_code is not None \
                and not self.excused(EXIT_CODE_CATEGORIES, False) and "exec" not in (record.get("capture") or {}):
            self.add("ASR-157", "completeness",
                     f"result {result.call_id}: the source records exit code {result.exit_code}, the stream has no "
                     f"exec.exitCode, and producer.lossy declares no such loss", result.where, record)
        timing = result.timing
        for key, value in (("startedAt", timing.started_at), ("completedAt", timing.completed_at)):
            if key in record and not same_instant(record[key], value):
                self.add("ASR-261", "nothing-invented",
                         f"result {result.call_id}: {key} {_clip(str(record[key]))} is not a time the source records for "
                         f"this result", result.where, record)
        duration = record.get("durationMs")
        if duration is not None and not self.recorded_duration(duration, record, timing.duration_ms):
            self.add("ASR-261", "nothing-invented",
                     f"result {result.call_id}: durationMs {duration} does not come from the source (it records "
                     f"{'none' if timing.duration_ms is None else timing.duration_ms}); timing is never computed from "
                     f"other records' times", result.where, record)

    @staticmethod
    def recorded_duration(duration: Any, record: dict[str, Any], recorded: float | None) -> bool:
        if recorded is not None and isinstance(duration, (int, float)) and abs(duration - recorded) < 1:
            return True
        start, end = parse_instant(str(record.get("startedAt"))), parse_instant(str(record.get("completedAt")))
        return start is not None and end is not None  # ASR-261 allows the result's own start and end

    def dangling(self, call_counts: dict[str, int]) -> None:
        answered = {r.call_id for r in self.facts.results}
        for call in self.facts.calls:
            if call.call_id in answered or call_counts[call.call_id] != 1:
                continue
            for record in self.stream.results.get(call.call_id, []):
                self.add("ASR-265", "identity",
                         f"tool call {call.call_id} has no result in the source (it is dangling), but the stream gives it "
                         f"one with status {_clip(str(record.get('status')))}; producers must not synthesize results",
                         call.where, record)

    # --- messages -----------------------------------------------------------------

    def messages(self) -> None:
        haystack: str | None = None
        for message in self.facts.messages:
            for text in message.texts:
                if self.message_holds(message, text):
                    continue
                if haystack is None:
                    haystack = "\x00".join(joined(r) for r in self.stream.messages)
                if text in haystack:
                    continue
                self.missing_text(message, text)

    def message_holds(self, message: NativeMessage, text: str) -> bool:
        if text in self.stream.texts:
            return True
        return any(text in joined(r) for r in self.stream.message_ids.get(message.native_id or "", ()))

    def missing_text(self, message: NativeMessage, text: str) -> None:
        if self.excused(message_categories(message.role), message.sidechain):
            return
        records = self.stream.message_ids.get(message.native_id or "", [])
        if records:
            self.add("ASR-157", "exact-values",
                     f"{message.role} message {message.native_id}: the stream's text differs from the source's, which must "
                     f"be kept byte for byte (source: {_clip(text)}, stream: {_clip(joined(records[0]))})",
                     message.where, records[0])
        else:
            self.add("ASR-157", "completeness",
                     f"{message.role} message text {_clip(text)} is not in any message record, and producer.lossy declares "
                     f"no such loss", message.where)

    # --- nothing invented ---------------------------------------------------------------

    def invented(self) -> None:
        """Completeness the other way: calls and results the stream holds and the source does not (ASR-250, ASR-265,
        ASR-267). Messages the source lacks are not scored (no rule settles every kind of message record)."""
        for record in self.stream.all_calls:
            if id(record) in self.matched or record.get("callIdSource") != "native" or record.get("callId") in self.native_ids | self.facts.optional_ids:
                continue  # a copy of a native ID is the duplicate checks' business (ASR-262)
            self.add("ASR-250", "nothing-invented",
                     f"tool call {_clip(str(record.get('callId')))} ({_clip(str(record.get('name')))}) says callIdSource "
                     f"native, but the source records no call with that ID", record=record)
        for record in self.stream.all_results:
            if id(record) in self.matched:
                continue
            key = record.get("nativeCallId") or record.get("callId")
            if key in self.native_ids or key in self.facts.optional_ids:
                continue  # a call the source records: dangling-result and duplicate checks speak for it
            self.add("ASR-267", "nothing-invented",
                     f"tool result for {_clip(str(key))} (status {_clip(str(record.get('status')))}) is not a result the "
                     f"source records; results and their output appear only when the source records them", record=record)

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
                         f"tool {_clip(name)} is given several kinds ({shown}): kind comes from the source or from a "
                         f"mapping of exact names, never from the title, input or other heuristics",
                         record=list(by_kind.values())[1])

    def unpublished_kinds(self) -> None:
        """No published mapping of names to kinds: a call's kind is the source's own, or absent (ASR-253)."""
        for call in self.facts.calls:
            for record in self.stream.calls.get(call.call_id, []):
                kind = record.get("kind")
                if kind is not None and kind != call.kind and kind not in call.updates.get("kind", ()):
                    recorded = f"records {_clip(call.kind)}" if call.kind is not None else "records none"
                    self.add("ASR-253", "nothing-invented",
                             f"tool call {call.call_id} ({_clip(str(call.name))}) has kind {_clip(str(kind))}, but the source "
                             f"{recorded} and the agent publishes no mapping of tool names to kinds", call.where, record)

    def same_time(self, native: str | None, record: dict[str, Any], where: Where, others: frozenset[str] = frozenset()) -> None:
        ts = record.get("ts")
        if ts is None:
            return
        if native is None:
            self.add("ASR-104", "nothing-invented",
                     f"{record.get('type')} has ts {ts}, but the source records no time for it", where, record)
        elif not same_instant(ts, native) and not any(same_instant(ts, other) for other in others):
            self.add("ASR-103", "exact-values",
                     f"{record.get('type')} has ts {ts}, not the source's {native} (the same instant is required; "
                     f"the offset and precision may differ)", where, record)

    def times(self) -> None:
        """Every other ts must be a time the source records somewhere (ASR-104)."""
        for record in self.stream.records:
            ts = record.get("ts")
            if isinstance(ts, str) and id(record) not in self.matched and parse_instant(ts) not in self.instants:
                self.add("ASR-104", "nothing-invented",
                         f"{record.get('type')} has ts {ts}, a time the source does not record", record=record)

    def questions(self) -> None:
        asked = {q.call_id: q for q in self.facts.questions if q.call_id}
        for record in self.stream.records:
            if record.get("type") != "input_request" or record.get("callId") not in asked:
                continue
            question = asked[record["callId"]]
            given = [v for a in record.get("answers") or () if isinstance(a, dict) for v in _answer_values(a)]
            if question.answers is None:
                if record.get("status") == "answered" or given or "response" in record:
                    self.add("ASR-285", "nothing-invented",
                             f"input_request for {question.call_id} records an answer, but the source records none",
                             question.where, record)
                continue
            for value in given:
                if not any(value in answer for answer in question.answers):
                    self.add("ASR-285", "exact-values",
                             f"input_request for {question.call_id}: answer {_clip(value)} is not an answer the source "
                             f"records", question.where, record)

    def decisions(self) -> None:
        """ASR-270: ``decidedBy`` on a permission or a compact ``tool_result.permission`` is one the source records
        for that call (the pack's ``decided_by`` and, where it reports permissions, theirs)."""
        for record, permission, call_id in self.permission_records():
            if "decidedBy" not in permission:
                continue
            allowed = set(self.facts.decided_by.get(str(call_id), frozenset()))
            for native in self.natives_for(record, call_id):
                allowed |= native.decided_by or set()
            if permission["decidedBy"] not in allowed and "*" not in allowed:
                self.add("ASR-270", "nothing-invented",
                         f"{record.get('type')} for {_clip(str(call_id))} says decidedBy "
                         f"{_clip(str(permission['decidedBy']))}, which the source does not record", record=record)

    def permission_records(self) -> list[tuple[dict[str, Any], dict[str, Any], Any]]:
        """Each ``permission`` record and each compact ``tool_result.permission``: (record, the permission
        members, the call it is about)."""
        found = []
        for record in self.stream.records:
            kind = record.get("type")
            if kind == "permission":
                subject = record["subject"] if isinstance(record.get("subject"), dict) else {}
                found.append((record, record, subject.get("callId")))
            elif kind == "tool_result" and isinstance(record.get("permission"), dict):
                found.append((record, record["permission"], record.get("callId") or record.get("nativeCallId")))
        return found

    def natives_for(self, record: dict[str, Any], call_id: Any) -> list[NativePermission]:
        natives = self.facts.permissions or ()
        request = record.get("requestId") if record.get("type") == "permission" else None
        return [p for p in natives if (call_id is not None and p.call_id == call_id)
                or (request is not None and p.request_id == request)]

    def permissions(self) -> None:
        """Approvals held to the ones the source records: a recorded request stays a permission record
        (ASR-279) and is kept (ASR-157); decider, rule and reviews only from the source (ASR-270). A decision
        or status the source lacks is reported, not scored: no numbered rule on the pages says that
        ``decision`` or ``status`` comes from the source."""
        natives = self.facts.permissions
        if natives is None:
            return  # the pack does not say which approvals its source records
        kept: set[int] = set()
        for record, permission, call_id in self.permission_records():
            matches = self.natives_for(record, call_id)
            kept |= {id(n) for n in matches}
            subject = f"{record.get('type')} for {_clip(str(call_id if call_id is not None else record.get('requestId')))}"
            for key in PERMISSION_PROVENANCE:
                if key in permission and not any(key in n.provenance for n in matches):
                    self.add("ASR-270", "nothing-invented",
                             f"{subject} has {key}, which the source does not record for it; {key} is recorded only "
                             f"from the source", matches[0].where if matches else None, record)
            if not matches:
                if "decision" in permission:
                    self.report(PERMISSIONS, f"{subject} records decision {_clip(str(permission['decision']))}, but the "
                                f"source records no approval for it (no numbered rule says a decision comes from the "
                                f"source)", record=record)
                continue
            native = matches[0]
            if record.get("type") == "tool_result" and native.request_recorded:
                self.add("ASR-279", "exact-values",
                         f"the source records the approval request for {_clip(str(call_id))} (shown, with its title, "
                         f"options or pending state), so it is a permission record, not tool_result.permission",
                         native.where, record)
            self.permission_values(subject, permission, native, record)
        for native in natives:
            if native.request_recorded and id(native) not in kept and not self.excused(PERMISSION_CATEGORIES, False):
                self.add("ASR-157", "completeness",
                         f"the approval request the source records for {_clip(str(native.call_id or native.request_id))} "
                         f"is missing (no permission record), and producer.lossy declares no such loss", native.where)

    def permission_values(self, subject: str, permission: dict[str, Any], native: NativePermission,
                          record: dict[str, Any]) -> None:
        decision, status = permission.get("decision"), permission.get("status")
        if decision is not None and native.decisions is None:
            self.report(PERMISSIONS, f"{subject} records decision {_clip(str(decision))}, but the source records no "
                        f"decision (the request is unresolved; ASR-269 says what an absent decision means)",
                        native.where, record)
        elif decision is not None and native.decisions and decision not in native.decisions:
            allowed = " or ".join(sorted(native.decisions))
            self.report(PERMISSIONS, f"{subject} records decision {_clip(str(decision))}; the source's allows {allowed}",
                        native.where, record)
        if status is not None and native.status is not None and status != native.status:
            self.report(PERMISSIONS, f"{subject} has status {_clip(str(status))}; the source records "
                        f"{_clip(native.status)}", native.where, record)

    def modes(self) -> None:
        """A permission mode is one the source records (ASR-187, ASR-172); another spelling of it is accepted."""
        recorded = {_spelling(m) for m in self.facts.permission_modes}
        for record in self.stream.records:
            mode = record.get("permissionMode") if record.get("type") == "config_change" else None
            if isinstance(mode, str) and _spelling(mode) not in recorded:
                shown = ", ".join(sorted(self.facts.permission_modes)) or "none"
                self.add("ASR-187", "nothing-invented",
                         f"config_change says permissionMode {_clip(mode)}, a mode the source does not record "
                         f"(it records {shown})", record=record)

    def configs(self) -> None:
        """ASR-172: a config_change without snapshot stands for a change the source records there; ASR-187: a
        snapshot states values the source records at its position. Values of members the pack reads only."""
        natives = self.facts.configs
        if natives is None:
            return  # the pack does not say which configuration its source records
        read = {member for native in natives for member in native.values}
        for record in self.stream.records:
            if record.get("type") != "config_change":
                continue
            snapshot = record.get("snapshot") is True
            here = [n for n in natives if self.same_point(n, record)]
            if not snapshot:
                here = [n for n in here if n.change]
                if not here:
                    self.add("ASR-172", "nothing-invented",
                             f"config_change at {record.get('ts', 'no time')} records a change (no snapshot) the source "
                             f"does not record there; a change is written only where the source records one (never "
                             f"inferred from inference.model)", record=record)
                    continue
            elif not here:
                here = list(natives)  # a snapshot's position is not matched: its values must still be recorded ones
            for member in CONFIG_MEMBERS:
                value = _config_value(record.get(member)) if member in record else None
                if value is None or member not in read:
                    continue
                if not any(_same_config(member, value, n.values.get(member, frozenset())) for n in here):
                    rule = "ASR-187" if snapshot else "ASR-172"
                    self.add(rule, "nothing-invented",
                             f"config_change states {member} {_clip(value)}, a value the source does not record at this "
                             f"point", here[0].where if here else None, record)

    @staticmethod
    def same_point(native: NativeConfig, record: dict[str, Any]) -> bool:
        ts = record.get("ts")
        if not isinstance(ts, str) or (native.ts is None and not native.other_ts):
            return True
        return same_instant(ts, native.ts) or any(same_instant(ts, t) for t in native.other_ts)

    def states(self) -> None:
        """ASR-169: a state record stands for a transition the source records, each at most once; its
        turnId and stopReason, when written, do not contradict the source's."""
        transitions = self.facts.transitions
        if transitions is None:
            return  # the pack does not say which transitions its source records
        free = list(transitions)
        for record in self.stream.records:
            if record.get("type") != "state":
                continue
            native = next((t for t in free if self.same_transition(t, record)), None)
            if native is None:
                self.invented_state(record, transitions)
                continue
            free.remove(native)
            reason = record.get("stopReason")
            if reason is not None and native.stop_reasons is not None and reason not in native.stop_reasons:
                allowed = " or ".join(sorted(native.stop_reasons)) or "none"
                self.add("ASR-169", "exact-values",
                         f"state {_clip(str(record.get('state')))} has stopReason {_clip(str(reason))}, which contradicts "
                         f"the transition the source records (it allows {allowed})", native.where, record)

    @staticmethod
    def same_transition(native: NativeTransition, record: dict[str, Any]) -> bool:
        state, turn, ts = record.get("state"), record.get("turnId"), record.get("ts")
        if native.states and state not in native.states:
            return False
        if turn is not None and native.turn_id is not None and turn != native.turn_id:
            return False
        return not isinstance(ts, str) or same_instant(ts, native.ts) or any(same_instant(ts, t) for t in native.other_ts)

    def invented_state(self, record: dict[str, Any], transitions: tuple[NativeTransition, ...]) -> None:
        recorded = f"it records {len(transitions)} transition(s), each written at most once" if transitions \
            else "it records none"
        turn = f", turnId {_clip(str(record['turnId']))}" if "turnId" in record else ""
        self.add("ASR-169", "nothing-invented",
                 f"state {_clip(str(record.get('state')))}{turn} at {record.get('ts', 'no time')} is not a transition "
                 f"the source records ({recorded}); state records are never synthesized from message boundaries or "
                 f"timing", record=record)

    def hooks(self) -> None:
        """ASR-287: a hook's exitCode, timedOut, stdout, stderr, output and durationMs are values the source
        records for a run of that hook event, never filled in."""
        hooks = self.facts.hooks
        if hooks is None:
            return  # the pack does not say which hook runs its source records
        for record in self.stream.records:
            if record.get("type") != "hook":
                continue
            event = record.get("event")
            runs = [h for h in hooks if h.event is None or not isinstance(event, str) or _spelling(h.event) == _spelling(event)]
            for key in HOOK_DETAILS:
                if key in record and not any(_recorded_detail(key, record[key], h) for h in runs):
                    self.add("ASR-287", "nothing-invented",
                             f"hook {_clip(str(event))} has {key} {_clip(json.dumps(record[key], ensure_ascii=False))}, "
                             f"which the source does not record for a run of that hook; execution details appear only "
                             f"when the source records them", runs[0].where if runs else None, record)

    def terminals(self) -> None:
        """Terminal records only for processes whose lifecycle the source records (ASR-291, ASR-286), their exit
        code and output only as recorded (ASR-267), and each recorded one kept (ASR-157)."""
        natives = self.facts.terminals
        if natives is None:
            return  # the pack does not say which processes its source records
        kept: set[int] = set()
        for record in self.stream.records:
            if record.get("type") != "terminal":
                continue
            native = next((t for t in natives if self.same_terminal(t, record)), None)
            if native is None:
                recorded = f"it records {len(natives)}" if natives else "it records none"
                self.add("ASR-291", "nothing-invented",
                         f"terminal {_clip(str(record.get('terminalId')))} (call {_clip(str(record.get('callId')))}) is "
                         f"not a process whose lifecycle the source records ({recorded}); terminal records are never "
                         f"invented", record=record)
                continue
            kept.add(id(native))
            self.terminal_values(native, record)
        for native in natives:
            if id(native) not in kept and not self.excused(TERMINAL_CATEGORIES, False):
                self.add("ASR-157", "completeness",
                         f"the process the source records for call {_clip(str(native.call_id))} (terminal "
                         f"{_clip(str(native.terminal_id))}) has no terminal record, and producer.lossy declares no "
                         f"such loss", native.where)

    @staticmethod
    def same_terminal(native: NativeTerminal, record: dict[str, Any]) -> bool:
        terminal, call = record.get("terminalId"), record.get("callId")
        if native.terminal_id is not None and terminal == native.terminal_id:
            return True
        return native.call_id is not None and call == native.call_id

    def terminal_values(self, native: NativeTerminal, record: dict[str, Any]) -> None:
        if not native.details_read:
            return  # the pack does not follow the process's later reads
        name = _clip(str(record.get("terminalId")))
        if "exitCode" in record and not json_equal(record["exitCode"], native.exit_code):
            recorded = "records none" if native.exit_code is None else f"records {native.exit_code}"
            self.add("ASR-267", "nothing-invented",
                     f"terminal {name} has exitCode {_clip(str(record['exitCode']))}, but the source {recorded}",
                     native.where, record)
        output = record["output"] if isinstance(record.get("output"), dict) else {}
        text = output.get("text")
        if isinstance(text, str) and not (native.output_texts and text in "\x00".join(native.output_texts)):
            self.add("ASR-267", "nothing-invented",
                     f"terminal {name} has output text {_clip(text)}, which the source does not record for that process",
                     native.where, record)

    def subagents(self) -> None:
        """A subagent's records written in the session's own scope: reported, never scored (the Lineage section,
        which says how a subagent's records are scoped, is not among the pages under test)."""
        subagents = self.facts.subagents
        if not subagents:
            return
        header = self.stream.header
        has_scope = any(r.get("type") == "subagent" for r in self.stream.records)
        for subagent in subagents:
            name = _clip(subagent.agent_id) if subagent.agent_id else "without a recorded ID"
            if subagent.whole_input:
                if header.get("scope") != "subagent":
                    self.report(LINEAGE, f"the input is subagent {name}'s own transcript, but the header's scope is "
                                f"{_clip(str(header.get('scope', 'absent')))}, not subagent", subagent.where, header)
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

    def secrets(self) -> None:
        if not self.facts.secrets:
            return
        for record in self.stream.records:
            text = json.dumps(record, ensure_ascii=False)
            for secret in self.facts.secrets:
                if secret and secret in text:
                    self.add("ASR-283", "nothing-invented",
                             "the stream holds the value given for a secret; only that it was asked may be recorded",
                             record=record)


def _config_value(value: Any) -> str | None:
    """A config_change member as one string: the model's ``id``, the sandbox's ``mode``, a string as is."""
    if isinstance(value, dict):
        value = value.get("id") if "id" in value else value.get("mode")
    return value if isinstance(value, str) else None


def _same_config(member: str, value: str, recorded: frozenset[str]) -> bool:
    """A recorded value; modes in another spelling too (``acceptEdits``, ``accept_edits``)."""
    if member in ("permissionMode", "mode"):
        return _spelling(value) in {_spelling(v) for v in recorded}
    return value in recorded


def _spelling(name: str) -> str:
    return "".join(c for c in name.lower() if c.isalnum())


def _recorded_detail(key: str, value: Any, hook: NativeHook) -> bool:
    """Whether a hook record's execution detail is one the source records for this run."""
    if key == "output":  # ContentPart[] in the stream: text the source records as the run's output or streams
        texts = [str(v) for k, v in hook.details.items() if k in ("output", "stdout", "stderr")]
        return bool(texts) and "".join(parts_text(value)) in "".join(texts)
    if key not in hook.details:
        return False
    recorded = hook.details[key]
    if key == "durationMs":
        return isinstance(value, (int, float)) and isinstance(recorded, (int, float)) and abs(value - recorded) < 1
    return json_equal(value, recorded)


def _answer_values(answer: dict[str, Any]) -> list[str]:
    values = [v for v in answer.get("selected") or () if isinstance(v, str)]
    if isinstance(answer.get("text"), str):
        values.append(answer["text"])
    return values


def check_fidelity(facts: SourceFacts, records: list[dict[str, Any]], policy: Policy | None = None) -> list[Finding]:
    """Every disagreement between the stream (a list of record dicts) and the source's facts, under the
    judging pack's policy (``Policy()``: kind from a published mapping, the default loss namespaces)."""
    return Checker(facts, records, policy).run()


def observe_fidelity(facts: SourceFacts, records: list[dict[str, Any]],
                     policy: Policy | None = None) -> tuple[list[Finding], list[Finding]]:
    """``check_fidelity``'s findings (scored) and the observations no numbered rule settles (family
    ``reported``: shown beside the verdict, never scored), from one pass."""
    checker = Checker(facts, records, policy)
    return checker.run(), checker.reported
