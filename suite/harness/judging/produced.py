"""A produced stream, parsed once: its lines, the strict reader's records and problems, and the
reference validator's outcome, shared by every producer check of the same bytes.

Without it each check split and parsed the stream itself, under three line-splitting rules and four
parsers. There is one rule here, the one JSON Lines and the strict reader (``reference.stream``) use:
only LF ends a line, so U+2028, U+0085 or a lone CR inside a string never splits a record; a CR
before the LF is whitespace.

The parses kept (``produced``) are kept per process, not per run: they are keyed by the stream's
bytes and a parse is a function of those bytes alone, so what is kept can never differ between runs
or change a judgement; ``forget`` only frees memory.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from asr_conformance.reference.checks import validate_items
from asr_conformance.reference.diagnostics import StreamDiagnostics
from asr_conformance.reference.stream import LineProblem, Record, StreamReader

#: Parsed streams kept per process, at most (a baseline is judged by every producer test of its input),
#: and their total size: a parse takes several times its stream's bytes, and inputs may be large.
KEPT = 8
KEPT_BYTES = 32_000_000
#: The strict reader's problems that do not keep a line from being read as a record for fidelity.
_READABLE = ("X-BLANK",)


@dataclass(frozen=True, eq=False)
class ProducedStream:
    """One stream's bytes, split once (``lines``) and read once by the strict reader (``items``)."""

    data: bytes
    #: Every line without its LF (and without trailing CRs), as the comparison of two streams sees it.
    lines: tuple[bytes, ...]
    #: What the strict reader gave, in order: a ``Record`` per readable line, ``LineProblem``s as data.
    items: tuple[Record | LineProblem, ...]

    @classmethod
    def parse(cls, data: bytes) -> ProducedStream:
        """Split at LF only and read each line strictly; never raises on the stream's content."""
        pieces = data.split(b"\n")
        if pieces and pieces[-1] == b"":
            pieces.pop()
        raw = [piece + b"\n" for piece in pieces]
        if raw and not data.endswith(b"\n"):
            raw[-1] = raw[-1][:-1]
        items = tuple(StreamReader().read_lines(raw))
        return cls(data, tuple(piece.rstrip(b"\r") for piece in pieces), items)

    @cached_property
    def values(self) -> dict[int, object]:
        """Line number -> the JSON value of each line the strict reader could read."""
        fatal = {item.line for item in self.items if isinstance(item, LineProblem) and item.fatal}
        return {item.line: item.value for item in self.items if isinstance(item, Record) and item.line not in fatal}

    def value_at(self, number: int) -> object:
        """The line's JSON value, or its text when it is not JSON (for messages)."""
        if number in self.values:
            return self.values[number]
        return self.lines[number - 1].decode("utf-8", "replace")

    def objects(self) -> Iterator[tuple[int, dict[str, Any]]]:
        """(line number, record) for every line that holds a JSON object."""
        return ((number, value) for number, value in self.values.items() if isinstance(value, dict))

    @cached_property
    def records(self) -> list[dict[str, Any]] | None:
        """The records, or None when the stream is not JSON Lines of objects (blank lines aside)."""
        if any(isinstance(i, LineProblem) and i.fatal and i.rule not in _READABLE for i in self.items):
            return None
        values = list(self.values.values())
        if not values or not all(isinstance(value, dict) for value in values):
            return None
        return values  # type: ignore[return-value]

    @cached_property
    def outcome(self) -> StreamDiagnostics:
        """The reference validator's verdict on the stream (the same as ``asr-validate`` gives)."""
        return validate_items(self.items)

    @property
    def valid(self) -> bool:
        return not self.outcome.errors


class Parses:
    """Parsed streams kept by their bytes, the least recently used dropped first: at most ``kept`` streams of
    ``kept_bytes`` in all; a stream larger than that is parsed and not kept."""

    def __init__(self, kept: int = KEPT, kept_bytes: int = KEPT_BYTES) -> None:
        self.kept, self.kept_bytes = kept, kept_bytes
        self._kept: OrderedDict[bytes, ProducedStream] = OrderedDict()
        #: How many parses this cache made: a check that parsed past it would parse without counting here.
        self.parsed = 0

    def __contains__(self, data: bytes) -> bool:
        return data in self._kept

    def get(self, data: bytes) -> ProducedStream:
        parsed = self._kept.get(data)
        if parsed is not None:
            self._kept.move_to_end(data)
            return parsed
        parsed = ProducedStream.parse(data)
        self.parsed += 1
        if len(data) <= self.kept_bytes:
            self._kept[data] = parsed
            while len(self._kept) > self.kept or sum(map(len, self._kept)) > self.kept_bytes:
                self._kept.popitem(last=False)
        return parsed

    def forget(self) -> None:
        self._kept.clear()


#: This process's parses: a pure cache (see the module docstring), never reset by a test.
PARSES = Parses()


def produced(stream: bytes | ProducedStream) -> ProducedStream:
    """The parsed stream: the same object for the same bytes while it is kept, so no check parses again."""
    if isinstance(stream, ProducedStream):
        return stream
    return PARSES.get(bytes(stream))


def forget() -> None:
    """Drop every kept parse, to free memory (the benchmarks measure a first judgement with none kept)."""
    PARSES.forget()
