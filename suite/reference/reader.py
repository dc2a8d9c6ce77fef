"""The reference reader: the view a viewer derives from one stream (docs/contract.md §5).

``read_view(path)`` reads a stream with the strict reader (``stream.py``),
runs the reference validator over the same lines, and returns a *view*: a
JSON document, described by ``schemas/view.schema.json``, that states what the
reader rules of the pages make of the stream (pairings, dangling calls,
orphans, effective metadata, what is in force at each seq, terminals, ...).
It is also the oracle of reader fuzzing (``harness/fuzzing/readers.py``).

It never raises on a stream's content.  A stream the validator rejects still
gets its best view, with the validator's errors in ``problems``.  Only bytes
that hold no record at all (an empty file, or no line that is a JSON object)
raise ``UnreadableStream``: there is nothing to view.  A file that cannot be
opened raises ``OSError`` as usual.

Entities: a record and the later records that supersede it (directly or in a
chain) are one entity; the entity is named by the ID of its first record, and
its latest revision (the last in stream order) says what it currently holds.
A record without a string ``id`` (only in a rejected stream) is named
``@<line>``.

    reference-reader STREAM_FILE      (examples/reference-reader: view JSON on stdout)
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from asr_conformance.reference.checks import Validation
from asr_conformance.reference.stream import LineProblem, Record, StreamReader
from asr_conformance.vocabulary.terms import CONTENT_LEVELS

VIEW_VERSION = 2
#: session_info fields, each a patch (ASR-160).
SESSION_INFO_FIELDS = ("title", "titleSource", "heads", "tags", "flags", "project", "continuedIn")
#: The members of a terminal record's field table: its snapshot (ASR-271).
TERMINAL_FIELDS = ("terminalId", "kind", "callId", "command", "description", "cwd", "status", "awaited",
                   "exitCode", "signal", "output", "startedAt", "completedAt", "capture")
#: Linkage values under which a result may be paired (ASR-263).
PAIRING_LINKAGES = ("exact", "derived")
#: A surrogate code point; a decoded JSON string holds one only when it was unpaired.
_SURROGATE = re.compile("[\ud800-\udfff]")


class UnreadableStream(Exception):
    """The bytes hold no record (no line is a JSON object), so there is no view to give."""


@dataclass(slots=True)
class Rec:
    """One record of the stream, with where it was found."""

    line: int
    value: dict[str, Any]

    @property
    def key(self) -> str:
        """The record ID, or ``@<line>`` when it has none (a rejected stream)."""
        record_id = self.value.get("id")
        return record_id if type(record_id) is str else f"@{self.line}"

    @property
    def seq(self) -> int | None:
        """The seq, or None when it is not a non-negative integer (a rejected stream)."""
        seq = self.value.get("seq")
        return seq if type(seq) is int and seq >= 0 else None

    @property
    def type(self) -> str | None:
        return _text(self.value.get("type"))

    def get(self, name: str) -> Any:
        return self.value.get(name)


@dataclass(slots=True)
class Entity:
    """A record and its revisions, in stream order."""

    records: list[Rec] = field(default_factory=list)

    @property
    def key(self) -> str:
        return self.records[0].key

    @property
    def line(self) -> int:
        return self.records[0].line

    @property
    def latest(self) -> Rec:
        return self.records[-1]


@dataclass(slots=True)
class Pairing:
    """Which result entity answers which call entity, and why the others are unpaired."""

    #: result entity key -> call entity key
    pairs: dict[str, str] = field(default_factory=dict)
    #: result entity key -> "no_call" | "ambiguous" | "linkage"
    orphans: dict[str, str] = field(default_factory=dict)


# --- reading -------------------------------------------------------------------


def read_view(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The reference view of the stream at ``path`` (see the module docstring for what raises)."""
    records, problems = read_records(StreamReader().read_path(os.fspath(path)))
    view = build_view(records, problems)
    if any(problem["rule"] == "X-SURROGATE" for problem in problems):
        view = valid_unicode(view)
    return view


def read_records(items: Iterable[Record | LineProblem]) -> tuple[list[Rec], list[dict[str, Any]]]:
    """The stream's records and the reference validator's errors, in one pass over the lines."""
    validation = Validation()
    records: list[Rec] = []
    for item in items:
        validation.add(item)
        if isinstance(item, Record) and type(item.value) is dict:
            records.append(Rec(item.line, item.value))
    outcome = validation.finish()
    if not records:
        raise UnreadableStream("no line of the stream is a JSON object, so there is no record to view")
    problems = [_problem(d.rule, d.line, d.seq, d.message) for d in outcome.errors]
    return records, problems


def _problem(rule: str, line: int, seq: int | None, message: str) -> dict[str, Any]:
    return {"rule": rule, "line": line, "seq": seq, "message": message}


def build_view(records: list[Rec], problems: list[dict[str, Any]]) -> dict[str, Any]:
    """Every member of the view, derived from the records in stream order."""
    by_type = _group_by_type(records)
    calls = entities(by_type.get("tool_call", []))
    results = entities(by_type.get("tool_result", []))
    pairing = pair_results(calls, results)
    permissions = entities(by_type.get("permission", []))
    terminals = entities(by_type.get("terminal", []))
    reads = terminal_reads(terminals, results)
    answered = {pairing.pairs[r.key]: r for r in results if r.key in pairing.pairs}
    header = records[0] if records[0].type == "session" else None
    return {
        "view_version": VIEW_VERSION,
        "records": [{"seq": r.seq, "id": _text(r.get("id")), "type": r.type} for r in records],
        "session_info": effective_session_info(by_type.get("session_info", [])),
        "lossy": loss_categories(header, by_type.get("declaration", [])),
        "in_force": in_force(records, header),
        "instructions": [_instructions_entry(r) for r in by_type.get("instructions", [])],
        "calls": {call.key: _call_entry(call, answered.get(call.key)) for call in calls},
        "pairs": _pairs(pairing, results),
        "orphans": [_orphan_entry(result, pairing) for result in results if result.key in pairing.orphans],
        "dangling": dangling_calls(calls, pairing),
        "permissions": {p.key: _permission_entry(p) for p in permissions},
        "unresolved": [p.key for p in permissions if _decision(p.latest) is None],
        "decisions": approval_decisions(permissions, results),
        "terminals": {t.key: _terminal_entry(t, reads) for t in terminals},
        "terminal_reads": reads,
        "changes": changes(entities(by_type.get("memory_change", [])), entities(by_type.get("file_change", []))),
        "problems": problems,
    }


def _group_by_type(records: list[Rec]) -> dict[str, list[Rec]]:
    grouped: dict[str, list[Rec]] = {}
    for record in records:
        if record.type is not None:
            grouped.setdefault(record.type, []).append(record)
    return grouped


def entities(records: list[Rec]) -> list[Entity]:
    """Group records of one type into entities: a record that supersedes an earlier one joins its entity."""
    found: list[Entity] = []
    by_key: dict[str, Entity] = {}
    for record in records:
        earlier = record.get("supersedes")
        entity = by_key.get(earlier) if type(earlier) is str else None
        if entity is None:
            entity = Entity()
            found.append(entity)
        entity.records.append(record)
        by_key[record.key] = entity
    return found


# --- session_info (ASR-160, ASR-181) ----------------------------------------------


def effective_session_info(records: list[Rec]) -> dict[str, Any]:
    """Each field from the last record that contains it: present replaces, null clears,
    absent keeps (ASR-160); a new title without titleSource makes the source unknown (ASR-181)."""
    effective: dict[str, Any] = dict.fromkeys(SESSION_INFO_FIELDS)
    for record in records:
        for name in SESSION_INFO_FIELDS:
            if name in record.value:
                effective[name] = record.value[name]
        if "title" in record.value and "titleSource" not in record.value:
            effective["titleSource"] = None
    return effective


# --- declarations (ASR-163, ASR-165, ASR-179) and instructions (ASR-174) -----------


@dataclass(slots=True)
class Declared:
    """The declarations in force: the header's, amended by each declaration for later records."""

    profiles: set[str] = field(default_factory=set)
    #: (id, version) -> effectively required
    extensions: dict[tuple[str, str], bool] = field(default_factory=dict)
    content_level: str | None = None
    agent_version: str | None = None
    client: dict[str, Any] | None = None
    environment: dict[str, Any] = field(default_factory=dict)

    def amend(self, record: Rec) -> None:
        """Apply a header or declaration: unions only grow, contentLevel only tightens,
        agentVersion and client are replaced, environment members are patched one by one."""
        self.profiles.update(_strings(record.get("profiles")))
        for extension in _objects(record.get("extensions")):
            ext_id, version = extension.get("id"), extension.get("version")
            if type(ext_id) is str and type(version) is str:
                key = (ext_id, version)
                self.extensions[key] = self.extensions.get(key, False) or extension.get("required") is True
        level = record.get("contentLevel")
        if level in CONTENT_LEVELS and (
            self.content_level is None or CONTENT_LEVELS.index(level) >= CONTENT_LEVELS.index(self.content_level)
        ):
            self.content_level = level
        if type(record.get("agentVersion")) is str:
            self.agent_version = record.get("agentVersion")
        if type(record.get("client")) is dict:
            self.client = dict(record.get("client"))
        if type(record.get("environment")) is dict:
            self.environment.update(record.get("environment"))

    def snapshot(self) -> dict[str, Any]:
        return {
            "profiles": sorted(self.profiles),
            "extensions": [
                {"id": ext_id, "version": version, "required": required}
                for (ext_id, version), required in sorted(self.extensions.items())
            ],
            "contentLevel": self.content_level,
            "agentVersion": self.agent_version,
            "client": self.client,
            "environment": dict(self.environment),
        }


def in_force(records: list[Rec], header: Rec | None) -> dict[str, dict[str, Any]]:
    """For each record's seq: the declarations and instructions in force at that record.

    The header applies from its own seq; a declaration only to records with a higher
    seq (ASR-163, ASR-165, ASR-179), so a declaration's own entry shows what was in
    force before it."""
    declared = Declared()
    if header is not None:
        declared.amend(header)
        agent = header.get("agent")
        declared.agent_version = _text(agent.get("version")) if type(agent) is dict else None
    instructions: list[Rec] = []
    found: dict[str, dict[str, Any]] = {}
    current = declared.snapshot()
    for record in records:
        if record.type == "instructions":
            instructions.append(record)
        if record.seq is not None:
            found[str(record.seq)] = {**current, "instructions": _instructions_in_force(instructions, record)}
        if record.type == "declaration":
            declared.amend(record)
            current = declared.snapshot()
    return found


def _instructions_in_force(instructions: list[Rec], at: Rec) -> list[str]:
    """Instructions recorded at or before ``at``: scope "turn" ones only within their own
    turn; the others (scope "session", absent or another value) from their seq on."""
    in_force_now = []
    for record in instructions:
        if record.get("scope") == "turn":
            turn = record.get("turnId")
            if type(turn) is not str or at.get("turnId") != turn:
                continue
        in_force_now.append(record.key)
    return in_force_now


def _instructions_entry(record: Rec) -> dict[str, Any]:
    return {"id": record.key, "seq": record.seq, "kind": _text(record.get("kind")),
            "scope": _text(record.get("scope"))}


def loss_categories(header: Rec | None, declarations: list[Rec]) -> list[str]:
    """The union over the header's producer.lossy and every declaration, wherever it stands (ASR-163)."""
    found: set[str] = set()
    producer = header.get("producer") if header is not None else None
    if type(producer) is dict:
        found.update(_strings(producer.get("lossy")))
    for declaration in declarations:
        found.update(_strings(declaration.get("lossy")))
    return sorted(found)


# --- calls and results (ASR-263 ... ASR-266, ASR-256, ASR-274, ASR-276) ------------


def pair_results(calls: list[Entity], results: list[Entity]) -> Pairing:
    """Pair a result with a call only when its linkage is exact or derived, exactly one call
    entity has its callId (ASR-263), and no other result entity has that callId (ASR-264).
    nativeCallId and position play no part (ASR-262)."""
    calls_by_id: dict[str, list[Entity]] = {}
    for call in calls:
        call_id = call.latest.get("callId")
        if type(call_id) is str:
            calls_by_id.setdefault(call_id, []).append(call)
    results_per_id: dict[str, int] = {}
    for result in results:
        call_id = result.latest.get("callId")
        if type(call_id) is str:
            results_per_id[call_id] = results_per_id.get(call_id, 0) + 1
    pairing = Pairing()
    for result in results:
        latest = result.latest
        call_id = latest.get("callId")
        if latest.get("linkage") not in PAIRING_LINKAGES:
            pairing.orphans[result.key] = "linkage"
        elif type(call_id) is not str or call_id not in calls_by_id:
            pairing.orphans[result.key] = "no_call"
        elif len(calls_by_id[call_id]) > 1 or results_per_id[call_id] > 1:
            pairing.orphans[result.key] = "ambiguous"
        else:
            pairing.pairs[result.key] = calls_by_id[call_id][0].key
    return pairing


def dangling_calls(calls: list[Entity], pairing: Pairing) -> list[str]:
    """Calls with no paired result: their outcome is unknown (ASR-265)."""
    paired = set(pairing.pairs.values())
    return [call.key for call in calls if call.key not in paired]


def _pairs(pairing: Pairing, results: list[Entity]) -> list[dict[str, Any]]:
    return [{"call": pairing.pairs[r.key], "result": r.key} for r in results if r.key in pairing.pairs]


def _orphan_entry(result: Entity, pairing: Pairing) -> dict[str, Any]:
    return {"result": result.key, "reason": pairing.orphans[result.key],
            "linkage": _text(result.latest.get("linkage"))}


def _call_entry(call: Entity, paired: Entity | None) -> dict[str, Any]:
    """What a viewer shows for one call: the outcome only through a paired result (ASR-265),
    requestedBy only as recorded (ASR-274), the provider as ASR-276 and ASR-256 allow."""
    latest = call.latest
    provider, source = effective_provider(latest, paired.latest if paired else None)
    return {
        "callId": _text(latest.get("callId")),
        "name": _text(latest.get("name")),
        "requestedBy": _text(latest.get("requestedBy")),
        "provider": provider,
        "providerFrom": source,
        "result": paired.key if paired else None,
        "status": _text(paired.latest.get("status")) if paired else None,
    }


def effective_provider(call: Rec, result: Rec | None) -> tuple[dict[str, Any] | None, str | None]:
    """The call's own provider, else its paired result's (ASR-276); never split from the
    tool name (ASR-256), so a member the provider does not record stays null."""
    for record, source in ((call, "call"), (result, "result")):
        provider = record.get("provider") if record is not None else None
        if type(provider) is dict:
            members = ("kind", "server", "tool", "name", "identity")
            return {name: _text(provider.get(name)) for name in members}, source
    return None, None


# --- permissions (ASR-269, ASR-279) --------------------------------------------------


def _decision(record: Rec) -> str | None:
    return _text(record.get("decision"))


def _permission_entry(permission: Entity) -> dict[str, Any]:
    """The latest revision decides: without a decision the outcome is unknown (ASR-269)."""
    latest = permission.latest
    return {
        "requestId": _text(latest.get("requestId")),
        "status": _text(latest.get("status")),
        "decision": _decision(latest),
        "decidedBy": _text(latest.get("decidedBy")) if _decision(latest) is not None else None,
    }


def approval_decisions(permissions: list[Entity], results: list[Entity]) -> list[dict[str, Any]]:
    """One entry per decided permission entity and per result entity carrying a compact
    decision: a revision repeats a decision, it does not add one (ASR-279)."""
    found: list[tuple[int, dict[str, Any]]] = []
    for permission in permissions:
        decision = _decision(permission.latest)
        if decision is not None:
            found.append((permission.line, _decision_entry(permission, "permission", permission.latest.value)))
    for result in results:
        compact = result.latest.get("permission")
        if type(compact) is dict and _text(compact.get("decision")) is not None:
            found.append((result.line, _decision_entry(result, "compact", compact)))
    return [entry for _, entry in sorted(found, key=lambda pair: pair[0])]


def _decision_entry(entity: Entity, form: str, holder: dict[str, Any]) -> dict[str, Any]:
    return {"record": entity.key, "form": form, "decision": _text(holder.get("decision")),
            "decidedBy": _text(holder.get("decidedBy"))}


# --- terminals (ASR-271, ASR-290, ASR-291) ---------------------------------------------


def terminal_reads(terminals: list[Entity], results: list[Entity]) -> list[dict[str, Any]]:
    """Each result entity whose latest revision's exec names a terminalId or a processId: the
    terminal entity of this stream its terminalId names (null when none or several do: not
    resolved in the stream, ASR-290), and its processId verbatim, provenance only: never a
    reference, never a fallback for terminalId (ASR-291)."""
    by_terminal_id: dict[str, list[Entity]] = {}
    for terminal in terminals:
        terminal_id = terminal.latest.get("terminalId")
        if type(terminal_id) is str:
            by_terminal_id.setdefault(terminal_id, []).append(terminal)
    found = []
    for result in results:
        execution = result.latest.get("exec")
        if type(execution) is not dict or ("terminalId" not in execution and "processId" not in execution):
            continue
        terminal_id = _text(execution.get("terminalId"))
        named = by_terminal_id.get(terminal_id, []) if terminal_id is not None else []
        process_id = execution.get("processId")
        found.append({"result": result.key, "terminalId": terminal_id,
                      "terminal": named[0].key if len(named) == 1 else None,
                      "processId": process_id if type(process_id) in (str, int) else None})
    return found


def _terminal_entry(terminal: Entity, reads: list[dict[str, Any]]) -> dict[str, Any]:
    """A terminal entity: its latest record is a complete snapshot, never merged with earlier
    ones (ASR-271); the records of its revision chain; the results that read it."""
    latest = terminal.latest.value
    return {
        "terminalId": _text(latest.get("terminalId")),
        "snapshot": {name: latest[name] for name in TERMINAL_FIELDS if name in latest},
        "revisions": [record.key for record in terminal.records],
        "readBy": [read["result"] for read in reads if read["terminal"] == terminal.key],
    }


# --- memory and file changes (ASR-191, ASR-192) ---------------------------------------


def changes(memory_changes: list[Entity], file_changes: list[Entity]) -> list[dict[str, Any]]:
    """One entry per write: a memory_change and the file_change of the same write (same
    call, same path; A-FILE-CHANGE) are one change (ASR-192).  status is the
    memory_change's, null when the source does not record it (ASR-191)."""
    waiting: dict[str, list[Entity]] = {}
    for file_change in file_changes:
        key = _write_key(file_change.latest.get("callId"), file_change.latest.get("path"))
        if key is not None:
            waiting.setdefault(key, []).append(file_change)
    matched: set[int] = set()
    found: list[tuple[int, dict[str, Any]]] = []
    for memory in memory_changes:
        cause, target = memory.latest.get("cause"), memory.latest.get("target")
        key = _write_key(cause.get("callId") if type(cause) is dict else None,
                         target.get("path") if type(target) is dict else None)
        twins = waiting.get(key, []) if key is not None else []
        twin = twins.pop(0) if twins else None
        if twin is not None:
            matched.add(id(twin))
        line = min(memory.line, twin.line) if twin else memory.line
        found.append((line, {"memory_change": memory.key, "file_change": twin.key if twin else None,
                             "status": _text(memory.latest.get("status"))}))
    for file_change in file_changes:
        if id(file_change) not in matched:
            found.append((file_change.line, {"memory_change": None, "file_change": file_change.key, "status": None}))
    return [entry for _, entry in sorted(found, key=lambda pair: pair[0])]


def _write_key(call_id: object, path: object) -> str | None:
    """What identifies one file write across record types: the call that made it and the file."""
    if type(call_id) is not str or type(path) is not dict:
        return None
    return json.dumps([call_id, path], sort_keys=True)


# --- small helpers -------------------------------------------------------------------


def valid_unicode(value: Any) -> Any:
    """``value`` with each unpaired surrogate replaced by U+FFFD: a view is UTF-8 text, and a
    rejected stream's strings may hold surrogates no UTF-8 encoder writes (X-SURROGATE)."""
    if type(value) is str:
        return _SURROGATE.sub("\ufffd", value)
    if type(value) is list:
        return [valid_unicode(item) for item in value]
    if type(value) is dict:
        return {valid_unicode(key): valid_unicode(item) for key, item in value.items()}
    return value


def _text(value: object) -> str | None:
    """A string member as is; anything else (absent, null, a wrong type) as null."""
    return value if type(value) is str else None


def _strings(value: object) -> list[str]:
    return [item for item in value if type(item) is str] if type(value) is list else []


def _objects(value: object) -> list[dict[str, Any]]:
    return [item for item in value if type(item) is dict] if type(value) is list else []


# --- one-shot command line -------------------------------------------------------------

#: Exit status when there is no view (usage, unreadable file, no record): not a view, so a failure.
NO_VIEW = 2


def main(argv: Sequence[str] | None = None) -> int:
    """``reference-reader STREAM_FILE``: the view as one JSON document on stdout, exit 0."""
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        sys.stderr.write("usage: reference-reader STREAM_FILE\n")
        return NO_VIEW
    try:
        view = read_view(argv[-1])
    except OSError as error:
        sys.stderr.write(f"reference-reader: {argv[-1]}: {error.strerror or error}\n")
        return NO_VIEW
    except UnreadableStream as error:
        sys.stderr.write(f"reference-reader: {argv[-1]}: {error}\n")
        return NO_VIEW
    sys.stdout.write(json.dumps(view, ensure_ascii=False) + "\n")
    sys.stdout.flush()
    return 0
