"""What a stream exercises, as named features, so the fuzzer's reach can be checked against the corpus.

A valid corpus case is *reached* when the stream generators can produce every
feature it has; an invalid case is reached when its rule's mutator makes a
stream with the same defect.  ``stream_features`` names the structure of a
stream (record types and members, values at a boundary, open-enumeration
values nobody listed, and the relations between records the cross-record rules
are about: shared call IDs, results per call, revisions, roots declared before
use, records after ``ended``, triggers and turns, bytes a naive reader trips
on); ``defect_signature`` names a defect by the diagnostics a validator gives
for it, with the values taken out, so two streams that break a rule the same
way get one signature.  Both are plain functions of the stream, so the corpus
and the generators are described by the same code and neither can claim a
feature it lacks.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

#: Record types the pages define or mention with members of their own; any other is ``other``.
KNOWN_TYPES = frozenset({
    "session", "session_info", "declaration", "state", "config_change", "instructions", "memory_change",
    "tool_call", "tool_result", "permission", "input_request", "terminal", "hook", "message", "compaction",
})
ENVELOPE = frozenset({"type", "seq", "id"})
#: Members whose content is free-form (vendor data, tool arguments, raw payloads): their inner keys are no feature.
FREE_FORM = frozenset({"_meta", "input", "raw", "response", "requestedSchema", "options", "output", "schedule"})
#: Listed values of open enumerations (the pages' lists); any other string is ``unlisted``.
OPEN_ENUMS: dict[tuple[str, str], frozenset[str]] = {
    key: frozenset(values) for key, values in {
        ("session", "authority"): ("local", "remote_cache", "remote_export", "mirror"),
        ("session", "scope"): ("primary", "subagent"),
        ("session", "producer.method"): ("native", "converter", "decoded", "recorder", "observer", "import"),
        ("session", "workspace.roots[].vcs.type"): ("git", "jj", "hg", "svn", "other"),
        ("participant", "kind"): ("human", "agent", "bot", "unknown"),
        ("participant", "role"): ("owner", "member", "guest"),
        ("conversation", "channel"): ("whatsapp", "telegram", "slack", "discord", "imessage", "signal", "email", "sms",
                                      "web"),
        ("conversation", "kind"): ("direct", "group", "channel", "thread"),
        ("state", "state"): ("queued", "running", "idle", "requires_action", "error", "resumed", "ended"),
        ("state", "stopReason"): ("end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled", "error"),
        ("state", "attempt.reason"): ("initial", "steering_restart", "retry", "provider_recovery"),
        ("session_info", "titleSource"): ("model", "user", "harness"),
        ("config_change", "actor"): ("user", "harness", "model", "policy"),
        ("config_change", "capability.kind"): ("skill", "plugin", "mcp_server", "connector", "tool"),
        ("config_change", "capability.op"): ("install", "remove", "connect", "needs_auth"),
        ("instructions", "kind"): ("system_prompt", "project", "user", "local", "managed", "rules", "skill", "memory",
                                   "tool_definitions", "other"),
        ("instructions", "scope"): ("session", "turn"),
        ("memory_change", "scope"): ("session", "user", "agent", "project"),
        ("memory_change", "op"): ("add", "update", "delete", "forget", "consolidate"),
        ("memory_change", "status"): ("applied", "rejected"),
        ("memory_change", "cause.actor"): ("human", "harness", "hook", "agent"),
        ("trigger", "kind"): ("schedule", "heartbeat", "event", "webhook", "task_completion", "peer",
                              "auto_continuation", "recovery", "manual"),
        ("tool_call", "kind"): ("read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode",
                                 "other", "unknown"),
        ("tool_call", "requestedBy"): ("model", "user", "harness", "code"),
        ("provider", "kind"): ("mcp", "plugin", "connector", "builtin"),
        ("tool_result", "status"): ("completed", "failed", "denied", "cancelled", "interrupted", "unknown"),
        ("permission", "status"): ("pending", "held", "resolved", "expired"),
        ("permission", "decision"): ("allow_once", "allow_session", "allow_always", "reject_once", "reject_always",
                                     "cancelled", "timeout"),
        ("permission", "decidedBy"): ("user", "policy", "hook", "auto_mode", "agent", "classifier"),
        ("permission", "options[].kind"): ("allow_once", "allow_always", "reject_once", "reject_always"),
        ("tool_result", "permission.decision"): ("allow_once", "allow_session", "allow_always", "reject_once",
                                                 "reject_always", "cancelled", "timeout"),
        ("input_request", "mode"): ("questions", "form", "url"),
        ("input_request", "status"): ("pending", "answered", "declined", "cancelled", "timed_out"),
        ("terminal", "kind"): ("shell", "monitor"),
        ("terminal", "status"): ("running", "exited", "killed", "stopped", "unknown"),
        ("hook", "event"): ("pre_tool_use", "post_tool_use", "user_prompt_submit", "stop", "session_start", "session_end",
                             "pre_compact", "notification", "workspace_setup"),
        ("hook", "handlerKind"): ("command", "prompt", "agent", "http", "mcp_tool"),
        ("hook", "status"): ("completed", "failed", "blocked", "cancelled", "unknown"),
        ("hook", "decision"): ("allow", "deny", "ask"),
    }.items()
}
#: Integers at the edge of a range the pages or the referenced rules give.
BOUNDARIES = {2**53 - 1: "max-safe", -(2**53 - 1): "min-safe", 2**32 - 1: "max-exit", -(2**31): "min-exit"}
LONG_LINE = 1_000_000
STATE_MEMBERS = ("stopReason", "error", "attempt", "continuationOf", "parentTurn", "rootTurn", "executedBy")


def parse_lines(data: bytes) -> list[dict[str, Any]]:
    """The records of a stream's bytes (lines that are not JSON objects are skipped: they are defects)."""
    records = []
    for line in data.splitlines():
        try:
            value = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            records.append(value)
    return records


def stream_features(data: bytes) -> frozenset[str]:
    """Every feature of a (valid) stream, from its bytes."""
    found = set(_byte_features(data))
    records = parse_lines(data)
    for record in records:
        found.update(_record_features(record))
    found.update(_relations(records))
    return frozenset(found)


# --- bytes ---------------------------------------------------------------------------------

_ESCAPED_CONTROL = re.compile(rb"\\u00[01][0-9a-fA-F]")
_SURROGATE_PAIR = re.compile(rb"\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}")


def _byte_features(data: bytes) -> Iterator[str]:
    if any(byte >= 0x80 for byte in data):
        yield "bytes:raw-non-ascii"
    if any(mark in data for mark in (b"\xe2\x80\xa8", b"\xe2\x80\xa9", b"\xc2\x85")):
        yield "bytes:raw-unicode-line-separator"
    if _ESCAPED_CONTROL.search(data):
        yield "bytes:escaped-control-character"
    if _SURROGATE_PAIR.search(data):
        yield "bytes:surrogate-pair-escape"
    if any(len(line) > LONG_LINE for line in data.splitlines()):
        yield "bytes:line-over-1MB"


# --- one record ------------------------------------------------------------------------------


def _kind(record: dict[str, Any]) -> str:
    kind = record.get("type")
    return kind if isinstance(kind, str) and kind in KNOWN_TYPES else "other"


def _record_features(record: dict[str, Any]) -> Iterator[str]:
    kind = _kind(record)
    yield f"type:{kind}"
    if kind == "other":
        return
    members = [k for k in record if k not in ENVELOPE]
    for name in members:
        yield from _member_features(kind, name, record[name])
    content_members = [k for k in members if k not in ("ts", "turnId")]
    if len(content_members) == 1:
        yield f"only:{kind}.{content_members[0]}"
    if kind == "state":
        # stopReason and error depend on the state (ASR-168's SHOULD names idle, error and ended); turn links do not.
        value = record.get("state")
        label = value if value in ("idle", "error", "ended") else "other"
        for name in STATE_MEMBERS:
            if name in record:
                yield f"state:{label}+{name}" if name in ("stopReason", "error") else f"state:+{name}"
    for path, value in _walk(record, ""):
        if type(value) is int and value in BOUNDARIES:
            yield f"boundary:{kind}.{path.split('.')[0]}={BOUNDARIES[value]}"
    yield from _unlisted(kind, record)


def _member_features(kind: str, name: str, value: object) -> Iterator[str]:
    yield f"member:{kind}.{name}"
    if value is None:
        yield f"null:{kind}.{name}"
    elif value in ([], {}):
        yield f"empty:{kind}.{name}"
    if name == "trigger" and isinstance(value, dict):  # a trigger is one shape whatever record carries it
        for sub, _ in _children(value):
            yield f"member:trigger{sub}"
        return
    if name in FREE_FORM:
        if name == "_meta" and isinstance(value, dict) and any(isinstance(v, dict) for v in value.values()):
            yield f"member:{kind}._meta.*object"
        return
    for sub, inner in _children(value):
        yield f"member:{kind}.{name}{sub}"
        if inner is None:
            yield f"null:{kind}.{name}{sub}"
        elif inner in ([], {}):
            yield f"empty:{kind}.{name}{sub}"
        if sub.rsplit(".", 1)[-1] not in FREE_FORM:
            for deeper, _ in _children(inner):
                yield f"member:{kind}.{name}{sub}{deeper}"


def _children(value: object) -> Iterator[tuple[str, object]]:
    """``.key`` for an object's members, ``[].key`` for the members of objects in an array."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield f".{key}", inner
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, dict):
                for key, inner in item.items():
                    yield f"[].{key}", inner


def _walk(value: object, path: str) -> Iterator[tuple[str, object]]:
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _walk(inner, f"{path}.{key}" if path else key)
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item, f"{path}[]")
    else:
        yield path, value


def _listed(key: tuple[str, str], value: object) -> bool:
    return isinstance(value, str) and value in OPEN_ENUMS[key]


def _unlisted(kind: str, record: dict[str, Any]) -> Iterator[str]:
    """``unlisted:<owner>.<path>`` for each open-enumeration value the pages do not list."""
    holders: list[tuple[str, dict[str, Any]]] = [(kind, record)]
    for name in ("participants", "conversations"):
        for entry in _entries(record.get(name)):
            holders.append((name[:-1], entry))
    for name in ("provider",):
        if isinstance(record.get(name), dict):
            holders.append(("provider", record[name]))
    if isinstance(record.get("trigger"), dict) and kind != "compaction":
        holders.append(("trigger", record["trigger"]))
    for owner, holder in holders:
        for (enum_owner, path), listed in OPEN_ENUMS.items():
            if enum_owner != owner:
                continue
            for value in _values_at(holder, path):
                if isinstance(value, str) and value not in listed:
                    yield f"unlisted:{owner}.{path}"


def _entries(value: object) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _values_at(holder: object, path: str) -> Iterator[object]:
    head, _, rest = path.partition(".")
    if head.endswith("[]"):
        for item in _entries(holder.get(head[:-2]) if isinstance(holder, dict) else None):
            yield from _values_at(item, rest) if rest else iter(())
        return
    if not isinstance(holder, dict) or head not in holder:
        return
    if rest:
        yield from _values_at(holder[head], rest)
    else:
        yield holder[head]


# --- relations between records ------------------------------------------------------------------


def _relations(records: list[dict[str, Any]]) -> Iterator[str]:
    entities = [r for r in records if "supersedes" not in r]
    calls = Counter(r.get("callId") for r in entities if r.get("type") == "tool_call" and isinstance(r.get("callId"), str))
    results = [r for r in entities if r.get("type") == "tool_result"]
    answered = Counter(r.get("callId") for r in results if isinstance(r.get("callId"), str))
    if any(count > 1 for count in calls.values()):
        yield "calls:one-callId-on-two-calls"
    for result in results:
        linkage, call_id = result.get("linkage"), result.get("callId")
        if linkage in ("exact", "derived") and isinstance(call_id, str):
            if calls.get(call_id, 0) > 1:
                yield f"results:{linkage}-to-a-shared-callId"
            elif call_id not in calls:
                yield f"results:{linkage}-orphan"
            elif answered[call_id] > 1:
                yield "results:two-results-for-one-call"
        elif linkage in ("ambiguous", "none"):
            yield f"results:{linkage}"
    if any(call_id not in answered for call_id in calls):
        yield "calls:dangling"
    for record in records:
        if "supersedes" in record:
            yield f"revision:{_kind(record)}"
    yield from _session_order(records)
    yield from _declarations(records)
    yield from _turns(records)
    yield from _terminals(records)


def _session_order(records: list[dict[str, Any]]) -> Iterator[str]:
    ended = 0
    for record in records:
        if record.get("type") == "state" and record.get("state") == "ended":
            ended += 1
            if ended == 2:
                yield "session:ended-twice"
        elif ended:
            yield "session:records-after-ended"
            if record.get("type") == "state" and record.get("state") == "resumed":
                yield "session:resumed-after-ended"


def _path_roots(value: object) -> Iterator[str]:
    """The roots PathRefs in a record name."""
    if isinstance(value, dict):
        if isinstance(value.get("root"), str) and "path" in value:
            yield value["root"]
        for inner in value.values():
            yield from _path_roots(inner)
    elif isinstance(value, list):
        for item in value:
            yield from _path_roots(item)


def _declarations(records: list[dict[str, Any]]) -> Iterator[str]:
    # What the records name, as written: a defective stream may name None or a number.
    header_roots: set[object] = set()
    declared_roots: set[object] = set()
    conversations: set[object] = set()
    levels = ("full", "redacted", "metadata")
    level = None
    content_seen = False
    for record in records:
        kind = record.get("type")
        if kind == "session":
            level = record.get("contentLevel")
            workspace = record.get("workspace")
            header_roots.update(e.get("id") for e in _entries(workspace.get("roots") if isinstance(workspace, dict)
                                                              else None))
        if kind == "declaration":
            declared_roots.update(e.get("id") for e in _entries(record.get("roots")))
            new = record.get("contentLevel")
            if new in levels and level in levels:
                step = levels.index(new) - levels.index(level)
                yield "level:kept" if step == 0 else "level:tightened" if step == 1 else "level:tightened-twice-over"
                if step > 0 and content_seen:
                    yield "level:content-then-tightened"
                level = new
        if kind in ("session", "declaration"):
            earlier = set(conversations)
            for entry in _entries(record.get("conversations")):
                if isinstance(entry.get("parent"), str):
                    yield ("conversations:parent-earlier-in-the-record" if entry["parent"] not in earlier
                           else "conversations:parent-in-an-earlier-record")
                conversations.add(entry.get("id"))
        if kind not in ("session", "declaration"):
            if kind == "message" and record.get("content"):
                content_seen = True
            for root in _path_roots(record):
                yield "roots:declared-root-used" if root in declared_roots else "roots:header-root-used"
        if kind == "session_info" and "heads" in record:
            heads = record["heads"]
            if heads is None:
                yield "heads:cleared"
            elif isinstance(heads, list) and len(heads) > 1 and heads[0] is None:
                yield "heads:null-primary-then-lanes"


def _turns(records: list[dict[str, Any]]) -> Iterator[str]:
    first: dict[str, str] = {}  # turnId -> type of its first record other than a compaction
    leading_compaction: set[str] = set()
    with_trigger = set()
    for record in records[1:]:
        turn = record.get("turnId")
        if not isinstance(turn, str):
            continue
        if record.get("type") == "compaction":
            if turn not in first:
                leading_compaction.add(turn)
            continue
        if turn not in first:
            first[turn] = _kind(record)
            if "trigger" in record:
                with_trigger.add(turn)
                yield f"trigger:on-first-{_kind(record)}"
                if turn in leading_compaction:
                    yield "trigger:after-a-leading-compaction"
    if len(with_trigger) > 1:
        yield "trigger:two-turns-each-with-one"


def _terminals(records: list[dict[str, Any]]) -> Iterator[str]:
    seen: set[object] = set()
    recorded = {r.get("terminalId") for r in records if r.get("type") == "terminal"}
    if len({t for t in recorded if isinstance(t, str)}) > 1:
        yield "terminals:two-terminals"
    for record in records:
        if record.get("type") == "terminal":
            seen.add(record.get("terminalId"))
        exec_ = record.get("exec")
        if isinstance(exec_, dict) and isinstance(exec_.get("terminalId"), str):
            yield "terminals:referenced-after-record" if exec_["terminalId"] in seen else \
                "terminals:referenced-before-record" if exec_["terminalId"] in recorded else "terminals:unrecorded"


# --- defects ------------------------------------------------------------------------------------

#: A quoted value: a quote that no letter precedes (so the apostrophe of "root's" is none).
_QUOTED = re.compile(r"(?<!\w)'(?:[^'\\]|\\.)*'(?!\w)|(?<!\w)\"(?:[^\"\\]|\\.)*\"(?!\w)")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w])")


def _number_class(match: re.Match[str]) -> str:
    number = float(match.group(0))
    return "<zero>" if number == 0 else "<negative>" if number < 0 else "<positive>"


def message_shape(message: str) -> str:
    """A diagnostic's message with its values replaced by their class (string, empty, sign of a number)."""
    shaped = _QUOTED.sub(lambda m: "<empty>" if len(m.group(0)) == 2 else "<string>", message)
    return _NUMBER.sub(_number_class, shaped)


def defect_signature(diagnostics: Iterable[tuple[str, str]]) -> frozenset[str]:
    """A defect as the rules and message shapes a validator reports for it."""
    return frozenset(f"{rule}: {message_shape(message)}" for rule, message in diagnostics)
