"""Source mutations of Codex rollouts (see ``mutations``); ``MUTATIONS`` lists them.

A rollout line is one JSON object, so each edit rewrites or drops whole lines and re-serialises
only those. Targets are chosen deterministically: the first call whose ID appears once among
the calls and once among the outputs (and, for the exit-code edits, once among the
``exec_command_end`` events with a numeric ``exit_code``), so the expected change is unambiguous.
Expectations shared with Claude Code (dangling, orphan, duplicates, name, time, text) come from
``claude_code_mutations``; the exit-code ones are Codex's own, since only rollouts record them.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from asr_conformance.fidelity.claude_code_mutations import (
    ADDED_TEXT,
    MOVED_BY,
    RENAMED_PREFIX,
    RENAMED_SUFFIX,
    expect_dangling,
    expect_duplicates_kept,
    expect_name,
    expect_orphan,
    expect_text,
    expect_time,
)
from asr_conformance.fidelity.compare import Lossy
from asr_conformance.fidelity.facts import Finding, SourceFacts
from asr_conformance.fidelity.mutations import SourceMutation, records_of
from asr_conformance.fidelity.timestamps import parse_instant

Lines = list[tuple[bytes, Any]]
CALLS = ("function_call", "custom_tool_call")
OUTPUTS = ("function_call_output", "custom_tool_call_output")
OUTCOMES = ("exec_command_end", "patch_apply_end", "mcp_tool_call_end")
#: The exit code an altered exec_command_end records: no converter writes it by accident.
ALTERED_EXIT_CODE = 113
#: Loss categories that excuse a missing exit code (ASR-157).
EXIT_CODE_CATEGORIES = ("exec.exitCode", "tool_result.exec", "exec")


def _lines(data: bytes) -> Lines | None:
    out: Lines = []
    for raw in data.split(b"\n"):
        if not raw.strip():
            out.append((raw, None))
            continue
        try:
            value = json.loads(raw)
        except ValueError:
            return None
        if not isinstance(value, dict):
            return None
        out.append((raw, value))
    return out


def _dump(lines: Lines) -> bytes:
    return b"\n".join(raw for raw, _ in lines)


def _encode(value: dict[str, Any]) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _item(value: Any) -> dict[str, Any]:
    """The response item or event of a line (envelope payload, or a bare pre-envelope item)."""
    if not isinstance(value, dict):
        return {}
    payload = value.get("payload")
    return payload if isinstance(payload, dict) else value


def _of(lines: Lines, kinds: tuple[str, ...]) -> list[tuple[int, dict[str, Any]]]:
    return [(i, _item(v)) for i, (_, v) in enumerate(lines) if _item(v).get("type") in kinds]


def _clean_pairs(lines: Lines) -> list[str]:
    """Call IDs used by exactly one call and one output, in file order."""
    calls = [item.get("call_id") for _, item in _of(lines, CALLS)]
    outputs = [item.get("call_id") for _, item in _of(lines, OUTPUTS)]
    # Counted once (a count per ID made the edit quadratic in the number of calls).
    called, answered = _tally(calls), _tally(outputs)
    return [c for c in calls if isinstance(c, str) and called[c] == 1 and answered[c] == 1]


def _tally(values: list[Any]) -> Counter[str]:
    return Counter(v for v in values if isinstance(v, str))


def _single_calls(lines: Lines) -> list[str]:
    """Clean pairs first, then calls whose ID no other call, output or outcome event carries (dangling)."""
    calls = [item.get("call_id") for _, item in _of(lines, CALLS)]
    answered = {item.get("call_id") for _, item in _of(lines, OUTPUTS + OUTCOMES)}
    called = _tally(calls)
    dangling = [c for c in calls if isinstance(c, str) and called[c] == 1 and c not in answered]
    return _clean_pairs(lines) + dangling


def _exec_pairs(lines: Lines) -> list[str]:
    """Clean pairs with exactly one exec_command_end that records a numeric exit code, then such ends of
    calls the rollout does not hold (a person's own shell command)."""
    ends = [item.get("call_id") for _, item in _of(lines, ("exec_command_end",))]
    coded = [item.get("call_id") for _, item in _of(lines, ("exec_command_end",))
             if isinstance(item.get("exit_code"), int) and not isinstance(item.get("exit_code"), bool)]
    held = {item.get("call_id") for _, item in _of(lines, CALLS + OUTPUTS)}
    ended, coded_ids = _tally(ends), set(coded)
    alone = [c for c in coded if isinstance(c, str) and ended[c] == 1 and c not in held]
    return [c for c in _clean_pairs(lines) if ended[c] == 1 and c in coded_ids] + alone


def _rewrite(lines: Lines, index: int, edit: Callable[[dict[str, Any]], None] | None) -> Lines:
    """The lines with one line edited in a copy, or dropped when ``edit`` is None."""
    changed = list(lines)
    if edit is None:
        del changed[index]
        return changed
    value = json.loads(json.dumps(lines[index][1]))
    edit(value)
    changed[index] = (_encode(value), value)
    return changed


def _drop(lines: Lines, kinds: tuple[str, ...], call_id: str) -> Lines:
    keep = [(raw, v) for raw, v in lines if not (_item(v).get("type") in kinds and _item(v).get("call_id") == call_id)]
    return keep


def _index(lines: Lines, kinds: tuple[str, ...], call_id: str) -> int:
    return next(i for i, item in _of(lines, kinds) if item.get("call_id") == call_id)


def _target(data: bytes, pick: Callable[[Lines], list[str]] = _clean_pairs, count: int = 1) -> tuple[Lines, list[str]] | None:
    lines = _lines(data)
    if lines is None:
        return None
    found = pick(lines)
    return (lines, found[:count]) if len(found) >= count else None


def _in_item(edit: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
    return lambda value: edit(_item(value))


# --- the edits ------------------------------------------------------------------------


def delete_result(data: bytes) -> bytes | None:
    """The output and every outcome event of one call go: the call is left without a result."""
    found = _target(data)
    return None if found is None else _dump(_drop(found[0], OUTPUTS + OUTCOMES, found[1][0]))


def delete_call(data: bytes) -> bytes | None:
    found = _target(data)
    return None if found is None else _dump(_drop(found[0], CALLS, found[1][0]))


def duplicate_call_id(data: bytes) -> bytes | None:
    found = _target(data, count=2)
    if found is None:
        return None
    lines, (first, second) = found
    for index, item in _of(lines, CALLS + OUTPUTS + OUTCOMES):
        if item.get("call_id") == second:
            lines = _rewrite(lines, index, _in_item(lambda item: item.update(call_id=first)))
    return _dump(lines)


def rename_tool(data: bytes) -> bytes | None:
    found = _target(data, _single_calls)
    if found is None:
        return None
    lines, (call_id,) = found
    return _dump(_rewrite(lines, _index(lines, CALLS, call_id),
                          _in_item(lambda item: item.update(name=RENAMED_PREFIX + str(item.get("name")) + RENAMED_SUFFIX))))


def move_timestamp(data: bytes) -> bytes | None:
    found = _target(data, _single_calls)
    if found is None:
        return None
    lines, (call_id,) = found
    index = _index(lines, CALLS, call_id)
    instant = parse_instant(str(lines[index][1].get("timestamp")))
    if instant is None:
        return None
    moved = (datetime.fromtimestamp(instant[0], UTC) + MOVED_BY).strftime("%Y-%m-%dT%H:%M:%S.") + "500Z"
    return _dump(_rewrite(lines, index, lambda value: value.update(timestamp=moved)))


def change_message(data: bytes) -> bytes | None:
    """The person's first message gets more text, in the item and in its user_message event alike."""
    lines = _lines(data)
    if lines is None:
        return None
    typed = [(i, item) for i, item in _of(lines, ("user_message",)) if isinstance(item.get("message"), str)]
    for index, item in _of(lines, ("message",)):
        content = item.get("content")
        texts = [p for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)] \
            if item.get("role") == "user" and isinstance(content, list) else []
        if not texts:
            continue
        text = texts[0]["text"]
        twin = next((i for i, event in typed if event["message"] == text), None)
        if typed and twin is None:
            continue  # injected context, not something the person typed

        def extend(value: dict[str, Any]) -> None:
            part = next(p for p in _item(value)["content"] if isinstance(p, dict) and isinstance(p.get("text"), str))
            part["text"] += ADDED_TEXT

        lines = _rewrite(lines, index, extend)
        if twin is not None:
            lines = _rewrite(lines, twin, _in_item(lambda event: event.update(message=event["message"] + ADDED_TEXT)))
        return _dump(lines)
    return None


def alter_exit_code(data: bytes) -> bytes | None:
    found = _target(data, _exec_pairs)
    if found is None:
        return None
    lines, (call_id,) = found

    def alter(event: dict[str, Any]) -> None:
        event["exit_code"] = ALTERED_EXIT_CODE if event["exit_code"] != ALTERED_EXIT_CODE else ALTERED_EXIT_CODE + 1

    return _dump(_rewrite(lines, _index(lines, ("exec_command_end",), call_id), _in_item(alter)))


def remove_exec_end(data: bytes) -> bytes | None:
    found = _target(data, lambda lines: [c for c in _exec_pairs(lines) if c in _clean_pairs(lines)])
    return None if found is None else _dump(_drop(found[0], ("exec_command_end",), found[1][0]))


def flip_status(data: bytes) -> bytes | None:
    """Codex's own verdict on a command (exec_command_end status) turns the other way."""
    found = _target(data, lambda lines: [c for c in _exec_pairs(lines) if _status(lines, c) in ("completed", "failed")])
    if found is None:
        return None
    lines, (call_id,) = found
    flipped = {"completed": "failed", "failed": "completed"}
    return _dump(_rewrite(lines, _index(lines, ("exec_command_end",), call_id),
                          _in_item(lambda event: event.update(status=flipped[event["status"]]))))


def _status(lines: Lines, call_id: str) -> Any:
    return next(item.get("status") for _, item in _of(lines, ("exec_command_end",)) if item.get("call_id") == call_id)


# --- the expectations -------------------------------------------------------------------


def _changed_exit(before: SourceFacts, after: SourceFacts) -> list[tuple[Any, Any]]:
    """(old result, new result) pairs of the same output whose recorded exit code changed."""
    old = {(r.call_id, r.where.line): r for r in before.results}
    pairs = []
    for new in after.results:
        match = next((r for (c, _), r in old.items() if c == new.call_id and r.model_texts == new.model_texts), None)
        if match is not None and match.exit_code != new.exit_code:
            pairs.append((match, new))
    return pairs


def expect_exit_code(before: SourceFacts, after: SourceFacts, _: list[dict[str, Any]], stream: list[dict[str, Any]]) -> list[Finding]:
    """exec.exitCode follows the rollout exactly: the new number, or nothing when none is recorded."""
    findings = []
    excused = Lossy.of(stream).excuses(EXIT_CODE_CATEGORIES)
    for old, new in _changed_exit(before, after):
        records = records_of(stream, "tool_result", new.call_id or "")
        if new.optional and not records:
            continue  # a result whose call the rollout does not hold need not be written
        codes = [r["exec"]["exitCode"] for r in records if isinstance(r.get("exec"), dict) and "exitCode" in r["exec"]]
        if new.exit_code is None:
            if codes:
                findings.append(Finding("ASR-260", "nothing-invented",
                                        f"after the exec_command_end of {new.call_id} was removed, the stream still writes "
                                        f"exitCode {codes[0]}; with no recorded exit code there must be none (not one "
                                        f"parsed from the output text)", new.where, records[0].get("seq")))
        elif codes != [new.exit_code] * len(records) or not records:
            if not codes and excused:
                continue
            written = "no exitCode" if not codes else f"exitCode {codes[0]}"
            findings.append(Finding("ASR-260", "exact-values",
                                    f"after the recorded exit code of {new.call_id} changed from {old.exit_code} to "
                                    f"{new.exit_code}, the stream writes {written}; exec.exitCode must follow the "
                                    f"source exactly", new.where, records[0].get("seq") if records else None))
    return findings


def expect_status(before: SourceFacts, after: SourceFacts, _: list[dict[str, Any]], stream: list[dict[str, Any]]) -> list[Finding]:
    findings = []
    for old, new in zip(before.results, after.results, strict=False):
        if old.statuses == new.statuses or new.call_id is None or not new.statuses:
            continue
        records = records_of(stream, "tool_result", new.call_id)
        if new.optional and not records:
            continue  # a result whose call the rollout does not hold need not be written
        if not records or records[0].get("status") not in new.statuses:
            status = records[0].get("status") if records else "no result"
            findings.append(Finding("ASR-258", "exact-values",
                                    f"after Codex's verdict on {new.call_id} was flipped, the stream says {status}; the "
                                    f"status must follow the source ({' or '.join(sorted(new.statuses))})",
                                    new.where, records[0].get("seq") if records else None))
    return findings


MUTATIONS: tuple[SourceMutation, ...] = (
    SourceMutation("delete-result", "ASR-265", "a call's output and outcome events are deleted: it must become dangling",
             delete_result, expect_dangling),
    SourceMutation("delete-call", "ASR-266", "a call is deleted: its output must be kept as an orphan",
             delete_call, expect_orphan),
    SourceMutation("duplicate-call-id", "ASR-262", "two calls share one native ID: both kept, their results unpaired",
             duplicate_call_id, expect_duplicates_kept),
    SourceMutation("alter-exit-code", "ASR-260", "a recorded exit code changes: exec.exitCode must follow exactly",
             alter_exit_code, expect_exit_code),
    SourceMutation("remove-exec-end", "ASR-260", "an exec_command_end is removed: exec.exitCode must be absent",
             remove_exec_end, expect_exit_code),
    SourceMutation("flip-status", "ASR-258", "Codex's verdict on a command flips: the result's status must follow",
             flip_status, expect_status),
    SourceMutation("rename-tool", "ASR-252", "a tool is renamed: the call's name must follow exactly",
             rename_tool, expect_name),
    SourceMutation("move-timestamp", "ASR-103", "a call's line gets another time: the call's ts must follow",
             move_timestamp, expect_time),
    SourceMutation("change-message", "ASR-157", "a user's message text changes: the message must follow byte for byte",
             change_message, expect_text),
)
