"""Strict reader for ASR streams: one record per line, never raises on bad bytes.

Common JSON parsers are lenient in ways that matter for conformance: none of
them rejects duplicate object keys, orjson turns integers of 2^64 and more into
floats, and the standard library accepts NaN, Infinity and lone surrogates.
This reader therefore parses each line with orjson (fast) and proves, for the
lines that pass, that nothing was lost:

* duplicate keys: the number of ``"<ws>:`` sequences in the raw line is at
  least the number of object members written there (every member's key ends
  with one); if it equals the number of keys in the parsed value, no key was
  written twice.  Otherwise the line is
  re-parsed with the strict decoder, which sees every member.
* integers: every parsed int is range-checked; a parsed float of magnitude
  2^53 or more may have been an integer literal, so the line is re-parsed
  strictly, where integer literals are seen as written.
* depth: measured while counting keys.

Most lines need no proof at all: a line that is exactly what orjson writes
for the value it parsed (compact, keys once each, integers checked against the
safe range while writing, ``OPT_STRICT_INTEGER``) cannot hold a duplicate key,
an unsafe integer or a lone surrogate, and orjson refuses to write a value
nested deeper than the reader's limit (probed once, not assumed).  Comparing
the bytes costs a fraction of the proof's walk over the tree and count over the
line; a line in any other form (spaces, escapes, a CR) takes the proof.

Lines orjson rejects are re-parsed strictly too, to say precisely what is
wrong.  Problems are returned as data (``LineProblem``) with the line number.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import BinaryIO

import orjson

from asr_conformance.vocabulary.strict_json import MAX_DEPTH
from asr_conformance.vocabulary.strict_json import SAFE_INTEGER as MAX_SAFE_INTEGER

_BOM = b"\xef\xbb\xbf"
_KEY_END = re.compile(rb'"[ \t\r\n]*:')
#: Consecutive lines not in orjson's own form after which a pass stops comparing (a stream written
#: with spaces or escapes would only pay for the comparison).
_CANONICAL_GIVE_UP = 64


@dataclass(frozen=True, slots=True)
class LineProblem:
    """Something wrong with the bytes or JSON of one line."""

    line: int
    rule: str
    message: str
    #: True when the line could not be read as a record at all.
    fatal: bool = True


@dataclass(slots=True)
class Record:
    """One parsed line: a JSON value (a record when it is an object)."""

    line: int
    value: object
    #: JSON pointers to integer literals outside the safe range.
    unsafe_integers: list[str] = field(default_factory=list)


class _UnsafeInteger(int):
    """An integer literal outside ±(2^53 - 1), marked by the strict decoder."""


class _StrictDecodeError(ValueError):
    pass


def _reject_constant(name: str) -> object:
    raise _StrictDecodeError(f"{name} is not a JSON value")


def _parse_int(text: str) -> int:
    if len(text) > 4000:
        # Python refuses int() on more than 4300 digits by default; such a literal is far outside the
        # safe range whatever its value, so keep only its sign (any check of the range sees it outside).
        return _UnsafeInteger(-(MAX_SAFE_INTEGER + 1) if text.startswith("-") else MAX_SAFE_INTEGER + 1)
    value = int(text)
    if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
        return value
    return _UnsafeInteger(value)


def _parse_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise _StrictDecodeError(f"the number {text} is too large for any IEEE 754 double")
    return value


class _PairsCollector:
    """object_pairs_hook that remembers the first duplicated key of a line."""

    __slots__ = ("duplicate",)

    def __init__(self) -> None:
        self.duplicate: str | None = None

    def __call__(self, pairs: list[tuple[str, object]]) -> dict[str, object]:
        result = dict(pairs)
        if len(result) != len(pairs) and self.duplicate is None:
            seen: set[str] = set()
            for key, _ in pairs:
                if key in seen:
                    self.duplicate = key
                    break
                seen.add(key)
        return result


def _shape(value: object) -> tuple[int, int, bool]:
    """Count object keys and nesting depth; flag numbers needing a strict look.

    Breadth-first so that no per-node tuples are allocated: this runs on every
    line of every stream and dominates the reader's own cost.
    """
    keys = 0
    depth = 0
    suspicious = False
    kind = type(value)
    if kind is not dict and kind is not list:
        if kind is int:
            suspicious = not -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER  # type: ignore[operator]
        elif kind is float:
            suspicious = not -9.007199254740992e15 < value < 9.007199254740992e15  # type: ignore[operator]
        return 0, 0, suspicious
    level = [value]
    while level:
        depth += 1
        following: list[object] = []
        for node in level:
            if type(node) is dict:
                keys += len(node)
                children: Iterable[object] = node.values()
            else:
                children = node  # type: ignore[assignment]
            for child in children:
                kind = type(child)
                if kind is str:
                    continue
                if kind is dict or kind is list:
                    following.append(child)
                elif kind is int:
                    if not -MAX_SAFE_INTEGER <= child <= MAX_SAFE_INTEGER:  # type: ignore[operator]
                        suspicious = True
                elif kind is float and not -9.007199254740992e15 < child < 9.007199254740992e15:  # type: ignore[operator]
                    suspicious = True
        level = following
    return keys, depth, suspicious


def _unsafe_integer_paths(value: object, path: str = "") -> list[str]:
    """JSON pointers to the integers outside the safe range (rare, so recursive)."""
    found: list[str] = []
    stack: list[tuple[str, object]] = [(path, value)]
    while stack:
        where, node = stack.pop()
        if type(node) is dict:
            for key, child in node.items():
                escaped = key.replace("~", "~0").replace("/", "~1")
                stack.append((f"{where}/{escaped}", child))
        elif type(node) is list:
            for index, child in enumerate(node):
                stack.append((f"{where}/{index}", child))
        elif isinstance(node, int) and not isinstance(node, bool):
            if isinstance(node, _UnsafeInteger) or not -MAX_SAFE_INTEGER <= node <= MAX_SAFE_INTEGER:
                found.append(where)
    return sorted(found)


def _has_lone_surrogate(value: object) -> bool:
    stack = [value]
    while stack:
        node = stack.pop()
        if type(node) is dict:
            for key, child in node.items():
                if not _encodable(key):
                    return True
                stack.append(child)
        elif type(node) is list:
            stack.extend(node)
        elif type(node) is str and not _encodable(node):
            return True
    return False


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@cache
def _writer_refuses_depth(depth: int) -> bool:
    """Whether orjson refuses to write arrays, and objects, nested ``depth`` levels deep: only then does a
    line it wrote back prove that its nesting is within a limit of ``depth - 1``."""
    array: list[object] = []
    obj: dict[str, object] = {}
    for _ in range(depth - 1):
        array, obj = [array], {"a": obj}
    for value in (array, obj):
        try:
            orjson.dumps(value)
        except (orjson.JSONEncodeError, RecursionError):
            continue
        return False
    return True


def _column_of(error: json.JSONDecodeError) -> str:
    return f"column {error.colno}"


class StreamReader:
    """Reads a stream's lines as ``Record`` or ``LineProblem`` items, in order."""

    def __init__(self, max_depth: int = MAX_DEPTH) -> None:
        self.max_depth = max_depth
        #: Whether a line that is exactly orjson's own writing of its value is taken without the proof.
        self.canonical_path = _writer_refuses_depth(max_depth + 1)
        #: Lines in a row, in the current pass, that were not in orjson's own form.
        self._misses = 0

    def read_path(self, path: str | Path) -> Iterator[Record | LineProblem]:
        with open(path, "rb") as handle:
            yield from self.read_lines(handle)

    def read_bytes(self, data: bytes) -> Iterator[Record | LineProblem]:
        import io

        yield from self.read_lines(io.BytesIO(data))

    def read(self, handle: BinaryIO) -> Iterator[Record | LineProblem]:
        yield from self.read_lines(handle)

    def read_lines(self, lines: Iterable[bytes]) -> Iterator[Record | LineProblem]:
        """Read lines already split at LF (each with its LF, the last one may lack it)."""
        number = 0
        read_line = self._read_line
        self._misses = 0
        for number, raw in enumerate(lines, start=1):
            if number == 1 and raw.startswith(_BOM):
                yield _bom_problem()
                raw = raw[len(_BOM) :]
            items = read_line(number, raw)
            if len(items) == 1:
                yield items[0]
            else:
                yield from items
        if number == 0:
            yield _empty_problem()

    def push_lines(self, lines: Iterable[bytes], take: Callable[[Record | LineProblem], None]) -> None:
        """The items ``read_lines`` yields, handed to ``take`` in the same order: with no generator
        between reader and consumer, a whole-stream pass saves a frame switch per line."""
        self.push_values(lines, lambda number, value: take(Record(number, value)), take)

    def push_values(self, lines: Iterable[bytes], take_value: Callable[[int, object], None],
                    take: Callable[[Record | LineProblem], None]) -> None:
        """``push_lines``, with each line that needs nothing but its value (one in orjson's own form) handed
        to ``take_value`` as its number and value, where ``push_lines`` makes it a ``Record``: a whole-stream
        pass then makes no object and no list per line of its own."""
        number = 0
        self._misses = 0
        for number, raw in enumerate(lines, start=1):
            if number == 1 and raw.startswith(_BOM):
                take(_bom_problem())
                raw = raw[len(_BOM) :]
            try:
                value = orjson.loads(raw)
            except orjson.JSONDecodeError:
                items = self._refused(number, raw)
            else:
                if self._written_back(raw, value):
                    take_value(number, value)
                    continue
                items = self._proved(number, raw, value)
            for item in items:
                take(item)
        if number == 0:
            take(_empty_problem())

    def _read_line(self, number: int, raw: bytes) -> list[Record | LineProblem]:
        """A list, not a generator: this runs once per line and generators cost more.

        The fast path takes the line with its LF (JSON whitespace to orjson, and no ``"<ws>:`` can end
        at it), so no copy of the line is made; the line without it is cut only for a blank line or
        the strict reader, which orjson refuses or whose proof fails anyway."""
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return self._refused(number, raw)
        if self._written_back(raw, value):
            return [Record(number, value)]
        return self._proved(number, raw, value)

    def _written_back(self, raw: bytes, value: object) -> bool:
        """Whether the line is exactly orjson's own writing of its value (with or without its LF), unsafe
        integers and too deep a nesting refused while writing: then nothing was lost and nothing needs a look."""
        if not self.canonical_path or self._misses >= _CANONICAL_GIVE_UP:
            return False
        try:
            written = orjson.dumps(value, option=orjson.OPT_STRICT_INTEGER)
        except orjson.JSONEncodeError:
            self._misses += 1
            return False
        size = len(written)
        if (len(raw) == size + 1 and raw[size] == 10 or len(raw) == size) and raw.startswith(written):
            self._misses = 0
            return True
        self._misses += 1
        return False

    def _refused(self, number: int, raw: bytes) -> list[Record | LineProblem]:
        """A line orjson refuses: blank, or read by the strict decoder to say what is wrong."""
        body = raw[:-1] if raw.endswith(b"\n") else raw
        if not body.strip(b" \t\r"):
            return [LineProblem(number, "X-BLANK", "blank line: every line of a stream must hold one JSON record")]
        return self._read_strictly(number, body)

    def _proved(self, number: int, raw: bytes, value: object) -> list[Record | LineProblem]:
        """A line orjson read but did not write back as it stands: the key-count proof, or the strict decoder."""
        keys, depth, suspicious = _shape(value)
        if suspicious or len(_KEY_END.findall(raw)) != keys:
            return self._read_strictly(number, raw[:-1] if raw.endswith(b"\n") else raw)
        if depth > self.max_depth:
            return [self._too_deep(number, depth), Record(number, value)]
        return [Record(number, value)]

    def _too_deep(self, number: int, depth: int | None) -> LineProblem:
        measured = f"{depth} levels" if depth else "too deep to measure"
        return LineProblem(
            number,
            "X-DEPTH",
            f"arrays and objects nest {measured}; the suite allows at most {self.max_depth}",
            fatal=depth is None,
        )

    def _read_strictly(self, number: int, body: bytes) -> list[Record | LineProblem]:
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError as error:
            return [LineProblem(number, "X-UTF8", f"invalid UTF-8 at byte {error.start + 1} of the line ({error.reason})")]
        pairs = _PairsCollector()
        decoder = json.JSONDecoder(
            object_pairs_hook=pairs,
            parse_constant=_reject_constant,
            parse_int=_parse_int,
            parse_float=_parse_float,
        )
        try:
            value, end = decoder.raw_decode(text, _skip_whitespace(text, 0))
        except _StrictDecodeError as error:
            return [LineProblem(number, "X-JSON", f"not JSON: {error}")]
        except json.JSONDecodeError as error:
            return [LineProblem(number, "X-JSON", f"not JSON: {error.msg} at {_column_of(error)}")]
        except RecursionError:
            return [self._too_deep(number, None)]
        if text[end:].strip(" \t\r\n"):
            message = f"extra text after the JSON value at column {end + 1}; a line holds exactly one record"
            return [LineProblem(number, "X-JSON", message)]
        found: list[Record | LineProblem] = []
        if pairs.duplicate is not None:
            found.append(LineProblem(
                number,
                "X-DUPKEY",
                f"the key {pairs.duplicate!r} appears twice in one object; which value counts is undefined",
                fatal=False,
            ))
        if _has_lone_surrogate(value):
            found.append(LineProblem(
                number,
                "X-SURROGATE",
                "a string holds an unpaired UTF-16 surrogate escape (such as \\ud800), "
                "which is not a Unicode character",
                fatal=False,
            ))
        _, depth, _ = _shape(value)
        if depth > self.max_depth:
            found.append(self._too_deep(number, depth))
        found.append(Record(number, value, _unsafe_integer_paths(value)))
        return found


def _bom_problem() -> LineProblem:
    return LineProblem(
        1,
        "X-BOM",
        "the stream starts with a UTF-8 byte order mark; JSON text exchanged "
        "between systems must not begin with one (RFC 8259 §8.1)",
        fatal=False,
    )


def _empty_problem() -> LineProblem:
    return LineProblem(1, "ASR-003", "the stream is empty: its first line must be the session header")


def _skip_whitespace(text: str, index: int) -> int:
    while index < len(text) and text[index] in " \t\r\n":
        index += 1
    return index
