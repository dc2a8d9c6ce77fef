"""The reference validator: every check decidable from the stream alone.

``validate_path`` reads a stream with the strict reader, runs the envelope
checks and the checks of the record's type against the declarations in force
at that record (ASR-167), then resolves the references the whole stream may
satisfy.  It never raises on a stream's content.
"""

from __future__ import annotations

import gc
import io
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from asr_conformance.reference.checks import session_records, tool_records
from asr_conformance.reference.checks.context import Pending, RecordContext, StreamIndex
from asr_conformance.reference.checks.envelope import check_envelope, check_unsafe_integers
from asr_conformance.reference.checks.tool_records import RANGED_MEMBERS
from asr_conformance.reference.diagnostics import Diagnostic, Level, StreamDiagnostics
from asr_conformance.reference.stream import LineProblem, Record, StreamReader

RecordCheck = Callable[[RecordContext, StreamIndex], None]

#: The checks of each record type the pages define.
CHECKS_BY_TYPE: dict[str, RecordCheck] = {
    "session": session_records.check_session,
    "session_info": session_records.check_session_info,
    "declaration": session_records.check_declaration,
    "state": session_records.check_state,
    "config_change": session_records.check_config_change,
    "instructions": session_records.check_instructions,
    "memory_change": session_records.check_memory_change,
    "tool_call": tool_records.check_tool_call,
    "tool_result": tool_records.check_tool_result,
    "permission": tool_records.check_permission,
    "input_request": tool_records.check_input_request,
    "terminal": tool_records.check_terminal,
    "hook": tool_records.check_hook,
}


class Validation:
    """One pass over one stream; feed it lines in order, then ``finish``."""

    def __init__(self) -> None:
        self.index = StreamIndex()
        self.outcome = StreamDiagnostics()
        #: One context, pointed at each record in turn: no check keeps it past its record (what must outlive
        #: a record is copied into the index), and making one per record cost a tenth of the checks.
        self._context = RecordContext({}, 0, None, self.outcome.diagnostics)

    def add(self, item: Record | LineProblem) -> None:
        sink = self.outcome.diagnostics
        if type(item) is not Record:
            assert isinstance(item, LineProblem)
            sink.append(Diagnostic(item.rule, item.message, item.line))
            if item.fatal and item.line == 1:
                self.index.header_lost = True
            if item.fatal and item.line == 1 and item.rule != "ASR-003":
                sink.append(Diagnostic("ASR-003", "line 1 is not a readable session header", 1))
            return
        self.add_value(item.line, item.value, item.unsafe_integers)

    def add_value(self, line: int, value: object, unsafe_integers: Sequence[str] = ()) -> None:
        """A line read as ``value`` (with its integers outside the safe range, if any): ``add`` for a
        ``Record``, called directly for the lines the reader takes on sight."""
        sink = self.outcome.diagnostics
        self.outcome.records += 1
        if type(value) is not dict:
            sink.append(Diagnostic("X-RECORD", "a line must hold a JSON object (a record)", line))
            if line == 1:
                self.index.header_lost = True
                sink.append(Diagnostic("ASR-003", "line 1 is not a session header", 1))
            return
        seq = value.get("seq")
        ctx = self._context
        ctx.record = value
        ctx.line = line
        ctx.seq = seq if type(seq) is int else None
        if line == 1 and value.get("type") != "session":
            self.index.header_lost = True
            ctx.error("ASR-003", f"line 1 must be the session header, not a {value.get('type')!r} record", "/type")
        check_envelope(ctx, self.index)
        if unsafe_integers:
            kind = value.get("type")
            ranged = kind in ("tool_result", "terminal", "hook")
            check_unsafe_integers(ctx, [p for p in unsafe_integers if not (ranged and p in RANGED_MEMBERS)])
        session_records.check_turn_placement(ctx, self.index)
        kind = value.get("type")
        check = CHECKS_BY_TYPE.get(kind) if type(kind) is str else None
        if check is not None:
            check(ctx, self.index)

    def finish(self) -> StreamDiagnostics:
        sink = self.outcome.diagnostics

        def report(pending: Pending, rule: str, message: str, warning: bool = False) -> None:
            level = Level.WARNING if warning else Level.ERROR
            sink.append(Diagnostic(rule, message, pending.line, pending.seq, level, pending.pointer))

        session_records.finish(self.index, report)
        tool_records.finish(self.index, report)
        sink.sort(key=lambda d: d.line)
        return self.outcome


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Records and the index form no reference cycles, so the cyclic garbage collector is paused
    during a pass: it would only rescan the index."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def validate_items(items: Iterable[Record | LineProblem]) -> StreamDiagnostics:
    """Validate one stream, given as the reader's items."""
    with _collector_paused():
        validation = Validation()
        add = validation.add
        for item in items:
            add(item)
        return validation.finish()


def _validate_lines(lines: Iterable[bytes], reader: StreamReader | None) -> StreamDiagnostics:
    """``validate_items`` over ``read_lines``, with the reader pushing each item straight into the check."""
    with _collector_paused():
        validation = Validation()
        (reader or StreamReader()).push_values(lines, validation.add_value, validation.add)
        return validation.finish()


def validate_path(path: str | Path, reader: StreamReader | None = None) -> StreamDiagnostics:
    with open(path, "rb") as handle:
        return _validate_lines(handle, reader)


def validate_stream(handle: BinaryIO, reader: StreamReader | None = None) -> StreamDiagnostics:
    """An open binary stream (standard input), read a line at a time: memory holds one record."""
    return _validate_lines(handle, reader)


def validate_bytes(data: bytes, reader: StreamReader | None = None) -> StreamDiagnostics:
    return _validate_lines(io.BytesIO(data), reader)
