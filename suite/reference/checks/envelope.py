"""Envelope members every record carries (type, seq, id, ts, turnId,
supersedes, capture, _meta) and references shared by several record types.

The section that defines the envelope is not in the pages; every check here
rests on an assumption written down in cases/ASSUMPTIONS.md, and the rules it
reports are suite-defined (X-...) or referenced-and-inferred (ASR-018, ASR-032).
"""

from __future__ import annotations

import re
from typing import TypeGuard

from asr_conformance.reference.checks.context import RecordContext, StreamIndex
from asr_conformance.reference.checks.shapes import (
    OBJECT,
    STRING,
    TIMESTAMP,
    MemberTable,
    check_members,
    describe,
    is_int,
    is_timestamp_quick,
)

#: Record types the two pages define.
DEFINED_TYPES = frozenset(
    {
        "session", "session_info", "declaration", "state", "config_change", "instructions",
        "memory_change", "tool_call", "tool_result", "permission", "input_request",
        "terminal", "hook",
    }
)
#: Record types the pages name without defining them (A-TYPES in ASSUMPTIONS.md).
MENTIONED_TYPES = frozenset(
    {"message", "compaction", "file_change", "subagent", "plan", "inference", "reasoning"}
)

#: ASR-018's pattern is not in the pages; the suite only rules out empty IDs and
#: IDs with whitespace or control characters (A-ID in ASSUMPTIONS.md).
RECORD_ID = re.compile(r"[^\s\x00-\x1f\x7f]+")

ENVELOPE = MemberTable({
    "turnId": STRING,
    "ts": (TIMESTAMP, "X-TS"),
    "capture": OBJECT,
    "_meta": OBJECT,
})


#: Stand-ins for absent members in the envelope's inline check (never values of a record).
_ABSENT = object()
_EMPTY: dict[str, object] = {}


def is_record_id(value: object) -> TypeGuard[str]:
    return type(value) is str and RECORD_ID.fullmatch(value) is not None


def check_envelope(ctx: RecordContext, index: StreamIndex) -> None:
    """Runs on every record, so the common case (a known type, the next seq, a new
    plain ID, a well-formed ts) is decided inline and only problems take a call."""
    record = ctx.record
    kind = record.get("type")
    if type(kind) is not str or (kind not in DEFINED_TYPES and kind not in MENTIONED_TYPES):
        _check_type(ctx)
    seq = record.get("seq")
    if type(seq) is int and seq >= 0 and (index.last_seq is None or seq > index.last_seq):
        index.last_seq = seq
    else:
        _check_seq(ctx, index)
    record_id = record.get("id")
    # An ID of letters and digits only (of any script) needs no pattern: no such character is whitespace
    # or a control character (suite/tests/test_validation_paths.py goes through every code point).
    if type(record_id) is str and record_id not in index.record_types and (
            record_id.isalnum() or RECORD_ID.fullmatch(record_id)):
        index.record_types[record_id] = kind if type(kind) is str else ""
    else:
        _check_id(ctx, index)
    # The common case inline: each present member of the right type (a mismatch is reported by
    # check_members, which walks the table as before, so the diagnostics and their order stay).
    ts = record.get("ts", _ABSENT)
    if not (
        (ts is _ABSENT or is_timestamp_quick(ts))
        and type(record.get("turnId", "")) is str
        and type(record.get("_meta", _EMPTY)) is dict
        and type(record.get("capture", _EMPTY)) is dict
    ):
        check_members(ctx, record, ENVELOPE)
    if "capture" in record:
        _check_capture(ctx)
    if "supersedes" in record:
        _check_supersedes(ctx, index)


def _check_type(ctx: RecordContext) -> None:
    kind = ctx.record.get("type")
    if kind is None:
        ctx.error("X-TYPE", "the record has no type member", "/type")
    elif type(kind) is not str:
        ctx.error("X-TYPE", f"type must be a string, not {describe(kind)}", "/type")
    elif kind not in DEFINED_TYPES and kind not in MENTIONED_TYPES:
        ctx.warn(
            "X-UNKNOWN-TYPE",
            f"record type {kind!r} is not one the pages mention; only its envelope was checked",
            "/type",
        )


def _check_seq(ctx: RecordContext, index: StreamIndex) -> None:
    seq = ctx.record.get("seq")
    if "seq" not in ctx.record:
        ctx.error("X-SEQ", "the record has no seq member", "/seq")
        return
    if not is_int(seq) or seq < 0:
        ctx.error("X-SEQ", f"seq must be a non-negative integer, not {describe(seq)}", "/seq")
        return
    if index.last_seq is not None and seq <= index.last_seq:
        ctx.error(
            "X-SEQ",
            f"seq {seq} does not increase: the record before it has seq {index.last_seq}",
            "/seq",
        )
    index.last_seq = seq if index.last_seq is None else max(seq, index.last_seq)


def _check_id(ctx: RecordContext, index: StreamIndex) -> None:
    if "id" not in ctx.record:
        ctx.error("X-ID", "the record has no id member", "/id")
        return
    value = ctx.record["id"]
    if not is_record_id(value):
        ctx.error("ASR-018", f"id must be a record ID (no whitespace, not empty), not {describe(value)}", "/id")
        return
    if value in index.record_types:
        ctx.error("X-ID", f"record ID {value!r} is already used by an earlier record", "/id")
        return
    kind = ctx.record.get("type")
    index.record_types[value] = kind if type(kind) is str else ""


def _check_capture(ctx: RecordContext) -> None:
    capture = ctx.record.get("capture")
    if type(capture) is not dict:
        return
    for key, state in capture.items():
        pointer = f"/capture/{key}"
        if type(state) is not dict:
            ctx.error("X-SHAPE", f"capture.{key} must be an object with a state, not {describe(state)}", pointer)
        elif type(state.get("state")) is not str:
            ctx.error("X-SHAPE", f"capture.{key} must contain state, a string", f"{pointer}/state")


def _check_supersedes(ctx: RecordContext, index: StreamIndex) -> None:
    target = ctx.record.get("supersedes")
    if target is None and "supersedes" not in ctx.record:
        return
    if type(target) is not str:
        ctx.error("X-SHAPE", f"supersedes must be a record ID, not {describe(target)}", "/supersedes")
        return
    earlier = index.record_types.get(target)
    if earlier is None or target == ctx.record.get("id"):
        ctx.warn(
            "X-SUPERSEDES",
            f"supersedes names {target!r}, which is not an earlier record of this stream",
            "/supersedes",
        )
    elif earlier != ctx.record.get("type"):
        ctx.error(
            "X-SUPERSEDES",
            f"supersedes names {target!r}, a {earlier} record; a revision has the type of the record it replaces",
            "/supersedes",
        )


def check_unsafe_integers(ctx: RecordContext, pointers: list[str]) -> None:
    """ASR-032 (inferred): integers must lie within ±(2^53 - 1).

    In a tool_call's input the governing rule is ASR-254 (such arguments go
    in inputText instead)."""
    for pointer in pointers:
        if ctx.record.get("type") == "tool_call" and (pointer == "/input" or pointer.startswith("/input/")):
            ctx.error(
                "ASR-254",
                "input holds an integer outside ±(2^53-1); such arguments must be kept "
                "losslessly in inputText instead",
                pointer,
            )
        else:
            ctx.error("ASR-032", "an integer outside ±(2^53-1) cannot be represented exactly", pointer)


def check_path_ref(ctx: RecordContext, index: StreamIndex, value: object, pointer: str, what: str) -> None:
    """A PathRef {root, path}: root is null or a root declared at or before this record (ASR-166)."""
    if type(value) is not dict:
        ctx.error("X-SHAPE", f"{what} must be a PathRef object {{root, path}}, not {describe(value)}", pointer)
        return
    if "path" in value and type(value["path"]) is not str:
        ctx.error("X-SHAPE", f"{what}.path must be a string, not {describe(value['path'])}", f"{pointer}/path")
    root = value.get("root")
    if root is None:
        return
    if type(root) is not str:
        ctx.error("X-SHAPE", f"{what}.root must be a root ID or null, not {describe(root)}", f"{pointer}/root")
    elif root not in index.roots and not index.header_lost:
        ctx.error(
            "ASR-166",
            f"{what} refers to root {root!r}, which is not declared by the header or an earlier declaration",
            f"{pointer}/root",
        )


def check_session_ref(ctx: RecordContext, value: object, pointer: str, what: str, rule: str) -> None:
    """A session reference without a # part (ASR-180, ASR-182)."""
    if type(value) is not str:
        ctx.error(rule, f"{what} must be a session reference (a string), not {describe(value)}", pointer)
    elif "#" in value:
        ctx.error(rule, f"{what} {value!r} is a session reference with a # part, which is not allowed here", pointer)
