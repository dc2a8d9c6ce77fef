"""Source mutations of Claude Code transcripts (see ``mutations``); ``MUTATIONS`` lists them.

Each edit touches one line (or drops it when nothing is left in it), re-serialising only that
line, and picks its target deterministically: the first call whose ID appears once among the
calls and once among the results, so that the expected change is unambiguous.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from asr_conformance.fidelity.claude_code import _is_harness_text
from asr_conformance.fidelity.facts import Finding, SourceFacts
from asr_conformance.fidelity.mutations import SourceMutation, records_of
from asr_conformance.fidelity.timestamps import parse_instant, same_instant

Lines = list[tuple[bytes, Any]]
#: A name no converter could produce by accident from the original: mixed case, separators, a digit.
RENAMED_PREFIX = "Mutated__"
RENAMED_SUFFIX = "-V2"
ADDED_TEXT = "\n\n  Also:\tkeep  the   spacing.  "
MOVED_BY = timedelta(days=1, seconds=1, milliseconds=500)
#: The prompt added to a session that has none of the person's own (see ``change_message``).
ADDED_PROMPT = "Now summarise what the command found."
ADDED_UUID = "00000000-0000-4000-8000-00000000e517"


def _lines(data: bytes) -> Lines | None:
    out: Lines = []
    for raw in data.split(b"\n"):
        if not raw.strip():
            out.append((raw, None))
            continue
        try:
            out.append((raw, json.loads(raw)))
        except ValueError:
            return None
    return out


def _dump(lines: Lines) -> bytes:
    return b"\n".join(raw for raw, _ in lines)


def _encode(value: dict[str, Any]) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _blocks(value: Any) -> list[Any]:
    message = value.get("message") if isinstance(value, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    return content if isinstance(content, list) else []


def _blocks_of(lines: Lines, kind: str) -> list[tuple[int, dict[str, Any]]]:
    return [(i, b) for i, (_, v) in enumerate(lines) for b in _blocks(v) if isinstance(b, dict) and b.get("type") == kind]


def _clean_pairs(lines: Lines) -> list[str]:
    """Call IDs used by exactly one tool_use and one tool_result, in file order."""
    uses = [b.get("id") for _, b in _blocks_of(lines, "tool_use")]
    results = [b.get("tool_use_id") for _, b in _blocks_of(lines, "tool_result")]
    # Counted once (a count per ID made the edit quadratic in the number of calls).
    used, answered = _tally(uses), _tally(results)
    return [i for i in uses if isinstance(i, str) and used[i] == 1 and answered[i] == 1]


def _tally(values: list[Any]) -> Counter[str]:
    return Counter(v for v in values if isinstance(v, str))


def _replace(lines: Lines, index: int, value: dict[str, Any] | None) -> Lines:
    """The lines with one line rewritten, or dropped when ``value`` is None."""
    changed = list(lines)
    if value is None:
        del changed[index]
    else:
        changed[index] = (_encode(value), value)
    return changed


def _remove_block(lines: Lines, kind: str, key: str, call_id: str) -> Lines:
    index, value = next((i, v) for i, (_, v) in enumerate(lines) if any(
        isinstance(b, dict) and b.get("type") == kind and b.get(key) == call_id for b in _blocks(v)))
    value = json.loads(json.dumps(value))
    value["message"]["content"] = [b for b in _blocks(value) if not (b.get("type") == kind and b.get(key) == call_id)]
    if kind == "tool_result":
        value.pop("toolUseResult", None)
    return _replace(lines, index, value if value["message"]["content"] else None)


def _edit_block(lines: Lines, kind: str, key: str, call_id: str, edit: Callable[[dict[str, Any], dict[str, Any]], None]) -> Lines:
    index, value = next((i, v) for i, (_, v) in enumerate(lines) if any(
        isinstance(b, dict) and b.get("type") == kind and b.get(key) == call_id for b in _blocks(v)))
    value = json.loads(json.dumps(value))
    block = next(b for b in _blocks(value) if b.get("type") == kind and b.get(key) == call_id)
    edit(value, block)
    return _replace(lines, index, value)


def _ids(lines: Lines) -> tuple[list[Any], list[Any]]:
    """The IDs of every call and every result, in file order."""
    return ([b.get("id") for _, b in _blocks_of(lines, "tool_use")],
            [b.get("tool_use_id") for _, b in _blocks_of(lines, "tool_result")])


def _alone(ids: list[Any], others: list[Any]) -> list[str]:
    """The IDs that stand once in ``ids`` and never in ``others`` (each counted once: linear in the input)."""
    seen, elsewhere = _tally(ids), set(others)
    return [i for i in ids if isinstance(i, str) and seen[i] == 1 and i not in elsewhere]


def _single_calls(lines: Lines) -> list[str]:
    """Clean pairs first, then calls whose ID no other call and no result carries (dangling calls)."""
    uses, results = _ids(lines)
    return _clean_pairs(lines) + _alone(uses, results)


def _single_results(lines: Lines) -> list[str]:
    """Results of clean pairs first, then results whose ID no call and no other result carries (orphans)."""
    uses, results = _ids(lines)
    return _clean_pairs(lines) + _alone(results, uses)


def _first_pair(data: bytes, count: int = 1, pick: Callable[[Lines], list[str]] = _clean_pairs) -> tuple[Lines, list[str]] | None:
    lines = _lines(data)
    if lines is None:
        return None
    pairs = pick(lines)
    return (lines, pairs[:count]) if len(pairs) >= count else None


# --- the edits ------------------------------------------------------------------------


def delete_result(data: bytes) -> bytes | None:
    found = _first_pair(data)
    return None if found is None else _dump(_remove_block(found[0], "tool_result", "tool_use_id", found[1][0]))


def delete_call(data: bytes) -> bytes | None:
    found = _first_pair(data)
    return None if found is None else _dump(_remove_block(found[0], "tool_use", "id", found[1][0]))


def duplicate_call_id(data: bytes) -> bytes | None:
    found = _first_pair(data, 2)
    if found is None:
        return None
    lines, (first, second) = found
    lines = _edit_block(lines, "tool_use", "id", second, lambda _, b: b.update(id=first))
    return _dump(_edit_block(lines, "tool_result", "tool_use_id", second, lambda _, b: b.update(tool_use_id=first)))


def flip_error(data: bytes) -> bytes | None:
    found = _first_pair(data, pick=_single_results)
    if found is None:
        return None
    lines, (call_id,) = found
    return _dump(_edit_block(lines, "tool_result", "tool_use_id", call_id,
                             lambda _, b: b.update(is_error=not b.get("is_error", False))))


def rename_tool(data: bytes) -> bytes | None:
    found = _first_pair(data, pick=_single_calls)
    if found is None:
        return None
    lines, (call_id,) = found
    return _dump(_edit_block(lines, "tool_use", "id", call_id,
                             lambda _, b: b.update(name=RENAMED_PREFIX + b["name"] + RENAMED_SUFFIX)))


def move_timestamp(data: bytes) -> bytes | None:
    found = _first_pair(data, pick=_single_calls)
    if found is None:
        return None
    lines, (call_id,) = found

    def move(line: dict[str, Any], _: dict[str, Any]) -> None:
        instant = parse_instant(str(line.get("timestamp")))
        if instant is None:
            raise LookupError("no timestamp")
        moved = datetime.fromtimestamp(instant[0], UTC) + MOVED_BY
        line["timestamp"] = moved.strftime("%Y-%m-%dT%H:%M:%S.") + "500Z"

    try:
        return _dump(_edit_block(lines, "tool_use", "id", call_id, move))
    except LookupError:
        return None


def change_message(data: bytes) -> bytes | None:
    """The person's first prompt gets more text (a plain string or its first text block); a session with
    no prompt of its own (only a slash command and its expansion) gets one, after its first user line."""
    lines = _lines(data)
    if lines is None:
        return None
    for index, (_, value) in enumerate(lines):
        if _is_prompt(value):
            value = json.loads(json.dumps(value))
            content = value["message"]["content"]
            if isinstance(content, str):
                value["message"]["content"] += ADDED_TEXT
            else:
                next(b for b in content if isinstance(b, dict) and b.get("type") == "text")["text"] += ADDED_TEXT
            return _dump(_replace(lines, index, value))
    first = next((i for i, (_, v) in enumerate(lines) if isinstance(v, dict) and v.get("type") == "user"
                  and isinstance(v.get("message"), dict) and not _blocks_of([(b"", v)], "tool_result")), None)
    if first is None:
        return None
    prompt = {key: value for key, value in lines[first][1].items()
              if key not in ("isMeta", "isCompactSummary", "isVisibleInTranscriptOnly", "toolUseResult")}
    prompt["message"] = {"role": "user", "content": ADDED_PROMPT + ADDED_TEXT}
    prompt["parentUuid"] = prompt.get("uuid")
    prompt["uuid"] = ADDED_UUID
    changed = list(lines)
    changed.insert(first + 1, (_encode(prompt), prompt))
    return _dump(changed)


def _is_prompt(value: Any) -> bool:
    if not isinstance(value, dict) or value.get("type") != "user":
        return False
    if any(value.get(flag) is True for flag in ("isMeta", "isCompactSummary", "isVisibleInTranscriptOnly")):
        return False
    content = value.get("message", {}).get("content") if isinstance(value.get("message"), dict) else None
    if isinstance(content, list):  # text blocks, perhaps beside an image: the first is the person's words
        first = next((b for b in content if isinstance(b, dict) and b.get("type") in ("text", "tool_result")), None)
        content = first.get("text") if isinstance(first, dict) and first.get("type") == "text" else None
    return isinstance(content, str) and bool(content.strip()) and not _is_harness_text(content)


# --- the expectations -------------------------------------------------------------------


def _changed_call(before: SourceFacts, after: SourceFacts, attribute: str) -> tuple[str, Any] | None:
    for old, new in zip(before.calls, after.calls, strict=False):
        if getattr(old, attribute) != getattr(new, attribute):
            return new.call_id, getattr(new, attribute)
    return None


def expect_dangling(before: SourceFacts, after: SourceFacts, _: list[dict[str, Any]], stream: list[dict[str, Any]]) -> list[Finding]:
    answered = {r.call_id for r in after.results}
    dangling = [c for c in after.calls if c.call_id not in answered and c.call_id in {r.call_id for r in before.results}]
    findings = []
    for call in dangling:
        if not records_of(stream, "tool_call", call.call_id):
            findings.append(Finding("ASR-157", "completeness",
                                    f"after its result was deleted, call {call.call_id} vanished from the stream", call.where))
        for record in records_of(stream, "tool_result", call.call_id):
            findings.append(Finding("ASR-265", "identity",
                                    f"after its result was deleted from the source, call {call.call_id} still has a "
                                    f"result (status {record.get('status')}); a dangling call gets none", call.where,
                                    record.get("seq")))
    return findings


def expect_orphan(before: SourceFacts, after: SourceFacts, _: list[dict[str, Any]], stream: list[dict[str, Any]]) -> list[Finding]:
    calls = {c.call_id for c in after.calls}
    orphans = [r for r in after.results if r.call_id not in calls and r.call_id in {c.call_id for c in before.calls}]
    findings = []
    for result in orphans:
        if not records_of(stream, "tool_result", result.call_id or ""):
            findings.append(Finding("ASR-266", "identity",
                                    f"after its call was deleted from the source, the result for {result.call_id} "
                                    f"vanished; orphan results must be kept", result.where))
        for record in records_of(stream, "tool_call", result.call_id or ""):
            findings.append(Finding("ASR-250", "nothing-invented",
                                    f"the call {result.call_id} was deleted from the source but the stream still has it",
                                    result.where, record.get("seq")))
    return findings


def expect_duplicates_kept(before: SourceFacts, after: SourceFacts, _: list[dict[str, Any]], stream: list[dict[str, Any]]) -> list[Finding]:
    counts: dict[str, int] = {}
    for call in after.calls:
        counts[call.call_id] = counts.get(call.call_id, 0) + 1
    findings = []
    for call_id, count in counts.items():
        if count < 2:
            continue
        where = next(c.where for c in after.calls if c.call_id == call_id)
        calls = records_of(stream, "tool_call", call_id)
        if len(calls) < count:
            findings.append(Finding("ASR-262", "identity",
                                    f"{count} calls share the native ID {call_id}; the stream keeps it on {len(calls)}",
                                    where))
        for record in records_of(stream, "tool_result", call_id):
            if record.get("callId") == call_id and record.get("linkage") in ("exact", "derived"):
                findings.append(Finding("ASR-262", "identity",
                                        f"a result for the shared ID {call_id} is paired (linkage "
                                        f"{record.get('linkage')}); it must stay ambiguous", where, record.get("seq")))
    return findings


def expect_status(before: SourceFacts, after: SourceFacts, _: list[dict[str, Any]], stream: list[dict[str, Any]]) -> list[Finding]:
    findings = []
    for old, new in zip(before.results, after.results, strict=False):
        if old.statuses == new.statuses or new.call_id is None:
            continue
        records = records_of(stream, "tool_result", new.call_id)
        if not records or records[0].get("status") not in new.statuses:
            status = records[0].get("status") if records else "no result"
            findings.append(Finding("ASR-258", "exact-values",
                                    f"after is_error was flipped for {new.call_id}, the stream says {status}; "
                                    f"the status must follow the source ({' or '.join(sorted(new.statuses))})",
                                    new.where, records[0].get("seq") if records else None))
    return findings


def expect_name(before: SourceFacts, after: SourceFacts, _: list[dict[str, Any]], stream: list[dict[str, Any]]) -> list[Finding]:
    changed = _changed_call(before, after, "name")
    if changed is None:
        return []
    call_id, name = changed
    records = records_of(stream, "tool_call", call_id)
    where = next(c.where for c in after.calls if c.call_id == call_id)
    if not records or records[0].get("name") != name:
        written = records[0].get("name") if records else "no call"
        return [Finding("ASR-252", "exact-values",
                        f"after the tool was renamed to {name!r} in the source, the stream says {written!r}",
                        where, records[0].get("seq") if records else None)]
    return []


def expect_time(before: SourceFacts, after: SourceFacts, _: list[dict[str, Any]], stream: list[dict[str, Any]]) -> list[Finding]:
    changed = _changed_call(before, after, "ts")
    if changed is None:
        return []
    call_id, ts = changed
    records = records_of(stream, "tool_call", call_id)
    where = next(c.where for c in after.calls if c.call_id == call_id)
    if not records:
        return [Finding("ASR-157", "completeness", f"after its time moved, call {call_id} vanished", where)]
    written = records[0].get("ts")
    call = next(c for c in after.calls if c.call_id == call_id)
    if written is not None and not any(same_instant(written, t) for t in (ts, *call.other_ts)):
        return [Finding("ASR-103", "exact-values",
                        f"the source line of call {call_id} now says {ts}; the stream still says {written}",
                        where, records[0].get("seq"))]
    return []


def expect_text(before: SourceFacts, after: SourceFacts, _: list[dict[str, Any]], stream: list[dict[str, Any]]) -> list[Finding]:
    new_texts = [(m, t) for m in after.messages for t in m.texts if t.endswith(ADDED_TEXT)]
    findings = []
    for message, text in new_texts:
        holders = [r for r in stream if r.get("type") == "message" and text in _text(r)]
        if not holders:
            findings.append(Finding("ASR-157", "exact-values",
                                    "after the user's message was changed in the source, no message record holds the "
                                    "new text byte for byte", message.where))
    return findings


def _text(record: dict[str, Any]) -> str:
    content = record.get("content")
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content or () if isinstance(p, dict) and isinstance(p.get("text"), str))


MUTATIONS: tuple[SourceMutation, ...] = (
    SourceMutation("delete-result", "ASR-265", "a result is deleted: its call must become dangling, with no result",
             delete_result, expect_dangling),
    SourceMutation("delete-call", "ASR-266", "a call is deleted: its result must be kept as an orphan",
             delete_call, expect_orphan),
    SourceMutation("duplicate-call-id", "ASR-262", "two calls share one native ID: both kept, their results unpaired",
             duplicate_call_id, expect_duplicates_kept),
    SourceMutation("flip-error", "ASR-258", "a result's is_error is flipped: its status must follow",
             flip_error, expect_status),
    SourceMutation("rename-tool", "ASR-252", "a tool is renamed: the call's name must follow exactly",
             rename_tool, expect_name),
    SourceMutation("move-timestamp", "ASR-103", "a call's line gets another time: the call's ts must follow",
             move_timestamp, expect_time),
    SourceMutation("change-message", "ASR-157", "a user's message text changes (or, in a session without one, a prompt "
                   "is added): the message must follow byte for byte",
             change_message, expect_text),
)
