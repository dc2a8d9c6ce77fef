"""What a mutator (or a byte damage) changed, so a fuzz failure explains itself.

A mutator returns bytes; ``mutate`` returns them beside a :class:`MutatedStream`:
the rule, the mode (the way the mutator broke it), and each change as a JSON
pointer into the stream with the value before and after.  The stream is
addressed as a JSON array of records: ``/3/exec/exitCode`` is member
``exec.exitCode`` of line 4.  The changes are found by comparing the valid
stream with the mutated bytes, so every mutator is explained without each
one keeping its own account; a line that is no longer one JSON object (byte
damage) is shown as its text.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from asr_conformance.vocabulary.strict_json import no_constant, unique_keys

#: Marks a member or line that is not there (before an insertion, after a deletion).
ABSENT: Any = type("Absent", (), {"__repr__": lambda self: "(absent)"})()
#: How many changes a MutatedStream keeps, and how long a shown value may be.
MAX_CHANGES = 8
SHOWN = 160


@dataclass(frozen=True, slots=True)
class Change:
    """One changed place: an RFC 6901 pointer into the stream, the value before and after.

    A value is a JSON value, ``ABSENT``, or (for a line that is not one JSON
    object) a ``Raw`` holding the line's text."""

    pointer: str
    before: Any
    after: Any
    #: For a change shown as bytes: the offset in the line where the bytes first differ.
    offset: int | None = None

    @property
    def line(self) -> int:
        """The 1-based line of the mutated stream the change is on."""
        return int(self.pointer.split("/")[1]) + 1

    def to_json(self) -> dict[str, Any]:
        found = {"pointer": self.pointer, "line": self.line, "before": _plain(self.before), "after": _plain(self.after)}
        return found if self.offset is None else {**found, "byte": self.offset}


@dataclass(frozen=True, slots=True)
class Raw:
    """A line's text where it is not one JSON object (invalid UTF-8 shown as \\x escapes)."""

    text: str


@dataclass(frozen=True, slots=True)
class MutatedStream:
    """A mutated stream with what was done to it."""

    data: bytes
    rule: str
    mode: str
    changes: tuple[Change, ...]

    @property
    def pointer(self) -> str | None:
        return self.changes[0].pointer if self.changes else None

    @property
    def before(self) -> Any:
        return self.changes[0].before if self.changes else ABSENT

    @property
    def after(self) -> Any:
        return self.changes[0].after if self.changes else ABSENT

    def describe(self) -> str:
        """Lines for a failure message: the mode, then each change as ``pointer: before -> after``."""
        lines = [f"mutation: {self.rule}, mode {self.mode}"]
        for change in self.changes:
            where = f"line {change.line}, " + (f"byte {change.offset}" if change.offset is not None else change.pointer)
            lines.append(f"  {where}: {show(change.before)} -> {show(change.after)}")
        if not self.changes:
            lines.append("  (the bytes are unchanged)")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "mode": self.mode, "changes": [c.to_json() for c in self.changes]}


def mutate(mutator: Callable[[st.DrawFn, list[dict[str, Any]]], bytes], draw: st.DrawFn, records: list[dict[str, Any]],
           rule: str, mode: str = "all") -> MutatedStream:
    """Run a mutator (or a damage, given the serialized records) and explain its result."""
    from asr_conformance.generators.mutators import copied, forget_drawn

    original = copied(records)
    forget_drawn(rule)
    return explain(original, mutator(draw, records), rule, mode)


def explain(records: list[dict[str, Any]], data: bytes, rule: str, mode: str) -> MutatedStream:
    """Compare a valid stream (as records) with the bytes made from it.

    Lines are matched by record (type and id), so a record inserted in the
    middle shows as one insertion, not as every later line changed."""
    from asr_conformance.generators.mutators import serialize

    before_lines = serialize(records).splitlines(keepends=True)
    after_lines = data.splitlines(keepends=True)
    after = [_parse(line) for line in after_lines]
    matcher = difflib.SequenceMatcher(None, [_key(r) for r in records], [_key(v) for v in after], autojunk=False)
    changes: list[Change] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        paired = (i2 - i1) if tag == "equal" else min(i2 - i1, j2 - j1) if tag == "replace" else 0
        for k in range(paired):
            if before_lines[i1 + k] != after_lines[j1 + k]:
                changes.extend(_line_changes(j1 + k, records[i1 + k], after[j1 + k],
                                             before_lines[i1 + k], after_lines[j1 + k]))
        for k in range(j1 + paired, j2):
            changes.append(Change(f"/{k}", ABSENT, after[k]))
        removed = records[i1 + paired:i2]
        if len(removed) == 1:
            changes.append(Change(f"/{j1 + paired}", removed[0], ABSENT))
        elif removed:
            seqs = [r.get("seq") for r in removed]
            changes.append(Change(f"/{j1 + paired}", Raw(f"{len(removed)} records, seq {seqs[0]} to {seqs[-1]}"),
                                  ABSENT))
    return MutatedStream(data, rule, mode, tuple(changes[:MAX_CHANGES]))


def _key(value: Any) -> str:
    """What identifies a line across the two streams: its record's type and id, or its text."""
    if isinstance(value, dict):
        return json.dumps([value.get("type"), value.get("id")], ensure_ascii=False, default=str)
    return json.dumps(["line", value.text if isinstance(value, Raw) else value], ensure_ascii=False, default=str)


def _line_changes(index: int, before: dict[str, Any], after: Any, before_line: bytes, line: bytes) -> list[Change]:
    if isinstance(after, Raw) or not isinstance(after, dict):
        return [_bytes_change(index, before_line, line)]
    if after.get("type") != before.get("type"):  # another record in its place
        return [Change(f"/{index}", before, after)]
    found = list(_diff(f"/{index}", before, after))
    return found or [_bytes_change(index, before_line, line)]  # the same record written differently


def _bytes_change(index: int, before: bytes, after: bytes, context: int = 24) -> Change:
    """Where a line's bytes first differ, with a little context either side."""
    start = 0
    while start < min(len(before), len(after)) and before[start] == after[start]:
        start += 1
    end = 0  # common suffix, not overlapping the prefix
    while end < min(len(before), len(after)) - start and before[-1 - end] == after[-1 - end]:
        end += 1
    lead = max(0, start - context)

    def window(line: bytes) -> Raw:
        stop = min(len(line) - end + min(end, context), start + 4 * context)
        text = _text(line[lead:stop])
        return Raw(("..." if lead else "") + text + ("..." if stop < len(line) else ""))

    return Change(f"/{index}", window(before), window(after), offset=start)


def _diff(pointer: str, before: Any, after: Any) -> Iterator[Change]:
    if isinstance(before, dict) and isinstance(after, dict):
        for key in list(before) + [k for k in after if k not in before]:
            yield from _diff(f"{pointer}/{_escape(key)}", before.get(key, ABSENT), after.get(key, ABSENT))
    elif isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        for index, (old, new) in enumerate(zip(before, after, strict=True)):
            yield from _diff(f"{pointer}/{index}", old, new)
    elif type(before) is not type(after) or before != after:
        yield Change(pointer, before, after)


def _parse(line: bytes) -> Any:
    """A line as a JSON value, or Raw when it is not plain JSON (bad UTF-8, NaN, a duplicate key...)."""
    try:
        value = json.loads(line.decode("utf-8"), object_pairs_hook=unique_keys, parse_constant=no_constant)
        json.dumps(value, ensure_ascii=False).encode("utf-8")  # a lone surrogate cannot be shown as text
    except (ValueError, UnicodeError, RecursionError):  # RecursionError: nesting deeper than json can read
        return Raw(_text(line).rstrip("\n"))
    return value


def _text(line: bytes) -> str:
    return line.decode("utf-8", "backslashreplace")


def _visible(text: str) -> str:
    """Control characters, a BOM and line ends as escapes, so damage that cannot be seen is shown."""
    return "".join(c if c.isprintable() or c == " " else c.encode("unicode_escape").decode("ascii") for c in text)


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def show(value: Any, limit: int = SHOWN) -> str:
    """A value as it reads in a message: JSON, clipped; a raw line's text in backquotes."""
    if value is ABSENT:
        return "(absent)"
    text = f"`{_visible(value.text)}`" if isinstance(value, Raw) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text) - limit} more characters)"


def _plain(value: Any, limit: int = 2000) -> Any:
    """A value for a JSON report: the value itself (clipped when long), ``{"absent": true}`` or ``{"text": ...}``."""
    if value is ABSENT:
        return {"absent": True}
    if isinstance(value, Raw):
        return {"text": value.text[:limit]}
    text = json.dumps(value, ensure_ascii=False)
    return value if len(text) <= limit else {"clipped": text[:limit]}
