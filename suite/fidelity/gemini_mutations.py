"""Source mutations of Gemini CLI sessions (see ``mutations``); ``MUTATIONS`` lists them.

A Gemini session records a message again whole each time it changes, so one call or message
may sit in several lines (and in a checkpoint's ``$set.messages``). Each edit therefore changes
*every* copy of its target, in both layouts, and re-serialises only the lines it changed (the
one-object layout is written again whole, pretty-printed as Gemini CLI writes it). Targets are
chosen from the witness's own reading: the first live call whose ID no other live call carries
(and, per edit, that has a result, a status to flip, a time of its own), or the first live user
message. Expectations shared with the other formats come from ``claude_code_mutations`` and
``codex_mutations``; ``null-result`` is Gemini's own.
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
    expect_name,
    expect_text,
    expect_time,
)
from asr_conformance.fidelity.codex_mutations import expect_status
from asr_conformance.fidelity.compare import PERMISSION_CATEGORIES, Lossy
from asr_conformance.fidelity.facts import Finding, NativeCall, NativeResult, NotThisFormat, SourceFacts
from asr_conformance.fidelity.gemini import GeminiWitness, layout_of
from asr_conformance.fidelity.mutations import SourceMutation, records_of
from asr_conformance.fidelity.timestamps import parse_instant

Edit = Callable[[dict[str, Any]], None]


def _messages_in(value: Any) -> list[dict[str, Any]]:
    """The message records one line (or the document) holds: itself, a checkpoint's, or a session's."""
    if not isinstance(value, dict):
        return []
    if isinstance(value.get("id"), str):
        return [value]
    holder = value["$set"] if isinstance(value.get("$set"), dict) else value
    messages = holder.get("messages")
    return [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []


def _rewrite(data: bytes, edit_message: Callable[[dict[str, Any]], bool]) -> bytes | None:
    """Apply ``edit_message`` (True when it changed something) to every message record; None if none changed."""
    layout = layout_of(data)
    if layout is None:
        return None
    if layout == "json":
        try:
            document = json.loads(data)
        except ValueError:
            return None
        changed = [edit_message(m) for m in _messages_in(document)]
        return (json.dumps(document, ensure_ascii=False, indent=2) + "\n").encode("utf-8") if any(changed) else None
    out, any_changed = [], False
    for raw in data.split(b"\n"):
        try:
            value = json.loads(raw) if raw.strip() else None
        except ValueError:
            return None
        changed = [edit_message(m) for m in _messages_in(value)]
        if any(changed):
            any_changed = True
            raw = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        out.append(raw)
    return b"\n".join(out) if any_changed else None


def _edit_calls(data: bytes, call_id: str, edit: Edit) -> bytes | None:
    def each(message: dict[str, Any]) -> bool:
        hit = False
        for call in message.get("toolCalls") or ():
            if isinstance(call, dict) and call.get("id") == call_id:
                edit(call)
                hit = True
        return hit

    return _rewrite(data, each)


def _facts(data: bytes) -> SourceFacts | None:
    try:
        return GeminiWitness().read(data)
    except NotThisFormat:
        return None


def _first_call(data: bytes, want: Callable[[NativeCall, NativeResult | None], bool]) -> str | None:
    facts = _facts(data)
    if facts is None:
        return None
    counts = Counter(c.call_id for c in facts.calls)
    results = {r.call_id: r for r in facts.results}
    return next((c.call_id for c in facts.calls if counts[c.call_id] == 1 and want(c, results.get(c.call_id))), None)


def _texted(result: NativeResult | None) -> bool:
    return result is not None and bool(result.model_texts) and any(result.model_texts or ())


# --- the edits ------------------------------------------------------------------------


def delete_result(data: bytes) -> bytes | None:
    """The call is still running in every copy: no result, status executing."""
    call_id = _first_call(data, lambda c, r: r is not None)
    return None if call_id is None else _edit_calls(data, call_id, lambda call: call.update(status="executing",
                                                                                          result=None))


def null_result(data: bytes) -> bytes | None:
    """The call's result becomes null in every copy: nothing of it reached the model as recorded."""
    call_id = _first_call(data, lambda c, r: _texted(r) and r is not None and bool(r.statuses))
    return None if call_id is None else _edit_calls(data, call_id, lambda call: call.update(result=None))


def flip_status(data: bytes) -> bytes | None:
    flipped = {"success": "error", "error": "success"}
    call_id = _first_call(data, lambda c, r: r is not None and r.statuses in ({"completed"}, {"failed"}))
    if call_id is None:
        return None
    return _edit_calls(data, call_id, lambda call: call.update(status=flipped.get(call["status"], call["status"])))


def rename_tool(data: bytes) -> bytes | None:
    call_id = _first_call(data, lambda c, r: True)
    if call_id is None:
        return None
    return _edit_calls(data, call_id, lambda call: call.update(name=RENAMED_PREFIX + str(call["name"]) + RENAMED_SUFFIX))


def move_timestamp(data: bytes) -> bytes | None:
    """The call's own time moves in every copy (its message's time stays: a stream may use either)."""
    call_id = _first_call(data, lambda c, r: c.ts is not None and parse_instant(c.ts) is not None)
    facts = _facts(data)
    if call_id is None or facts is None:
        return None
    call = next(c for c in facts.calls if c.call_id == call_id)
    instant = parse_instant(str(call.ts))
    if instant is None:
        return None
    moved = (datetime.fromtimestamp(instant[0], UTC) + MOVED_BY).strftime("%Y-%m-%dT%H:%M:%S.") + "500Z"
    return _edit_calls(data, call_id, lambda value: value.update(timestamp=moved))


def await_approval(data: bytes) -> bytes | None:
    """The call waits for approval in every copy: no result yet, and a confirmation shown and pending."""
    call_id = _first_call(data, lambda c, r: r is not None)
    return None if call_id is None else _edit_calls(
        data, call_id, lambda call: call.update(status="awaiting_approval", result=None))


def change_message(data: bytes) -> bytes | None:
    """The first live user message gets more text in its first text part, in every copy."""
    facts = _facts(data)
    target = next((m.native_id for m in (facts.messages if facts else ()) if m.role == "user" and m.native_id), None)
    if target is None:
        return None

    def extend(message: dict[str, Any]) -> bool:
        if message.get("id") != target:
            return False
        content = message.get("content")
        if isinstance(content, str):
            message["content"] = content + ADDED_TEXT
            return True
        parts = content if isinstance(content, list) else [content]
        for part in parts:
            if isinstance(part, dict) and isinstance(part.get("text"), str) and not part.get("thought"):
                part["text"] += ADDED_TEXT
                return True
        return False

    return _rewrite(data, extend)


# --- Gemini's own expectation ----------------------------------------------------------


def expect_no_content(before: SourceFacts, after: SourceFacts, _: list[dict[str, Any]], stream: list[dict[str, Any]]) -> list[Finding]:
    """A result whose source became null records no content: the stream's content must be absent (ASR-259)."""
    findings = []
    earlier = {r.call_id: r for r in before.results}
    for result in after.results:
        old = earlier.get(result.call_id)
        if result.content_recorded or old is None or not old.content_recorded or result.call_id is None:
            continue
        for record in records_of(stream, "tool_result", result.call_id):
            if "content" in record:
                findings.append(Finding("ASR-259", "nothing-invented",
                                        f"after the result of {result.call_id} became null in the source, the stream "
                                        f"still writes content for it; with nothing recorded, content must be absent",
                                        result.where, record.get("seq")))
    return findings


def expect_pending_request(before: SourceFacts, after: SourceFacts, _: list[dict[str, Any]],
                           stream: list[dict[str, Any]]) -> list[Finding]:
    """A call left awaiting approval shows a request: the stream keeps it as a permission record (ASR-279)."""
    earlier = {p.call_id for p in before.permissions or ()}
    if Lossy.of(stream).excuses(PERMISSION_CATEGORIES):
        return []
    findings = []
    for native in after.permissions or ():
        if native.call_id is None or native.call_id in earlier:
            continue
        if not any(r.get("type") == "permission" and isinstance(r.get("subject"), dict)
                   and r["subject"].get("callId") == native.call_id for r in stream):
            findings.append(Finding("ASR-279", "completeness",
                                    f"after call {native.call_id} was left awaiting approval in the source, the stream "
                                    f"has no permission record for the request it shows", native.where))
    return findings


MUTATIONS: tuple[SourceMutation, ...] = (
    SourceMutation("delete-result", "ASR-265", "a call is left executing with no result: it must become dangling",
             delete_result, expect_dangling),
    SourceMutation("null-result", "ASR-259", "a call's result becomes null: the stream's result must hold no content",
             null_result, expect_no_content),
    SourceMutation("flip-status", "ASR-258", "a call's status flips between success and error: the result must follow",
             flip_status, expect_status),
    SourceMutation("rename-tool", "ASR-252", "a tool is renamed: the call's name must follow exactly",
             rename_tool, expect_name),
    SourceMutation("move-timestamp", "ASR-103", "a call's timestamp moves: the call's ts must follow",
             move_timestamp, expect_time),
    SourceMutation("await-approval", "ASR-279", "a call waits for approval with no result: the stream must keep a "
                   "pending permission record for it and give it no result", await_approval, expect_pending_request),
    SourceMutation("change-message", "ASR-157", "a user's message text changes: the message must follow byte for byte",
             change_message, expect_text),
)

__all__ = ["MUTATIONS"]
