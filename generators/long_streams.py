"""Streams of real size, made cheaply: long valid stretches spliced into a generated stream.

Real sessions run to thousands of records and megabytes; the strategies of ``streams`` draw a few
dozen.  Drawing thousands of records through Hypothesis would be slow and would shrink badly, so
the fuzz properties draw a *long shape* instead (``long_shapes``): how many filler records to
splice in (a drawn number that shrinks to zero, and zero in most examples), and a seed for them.

The filler is the stream generator's own material (``generators.filler``): records its builders
drew from the shape's pool seed (``LongShape.pool``: the run's seed, handed to ``long_shapes`` by the
fuzz session that draws the shapes), re-keyed per stream with fresh names of the shapes the stream's own have,
so that nothing tells it from the records around it (no tag, no fixed template).  It is valid
wherever it goes, because it is self-contained: it names only what it made, declares nothing,
and its seqs lie strictly between those of the records around it.

``LongShape.spread`` multiplies every seq of a valid stream by ``count + 1`` *before* a mutator
runs (gaps in seq are allowed; every relation between seqs is kept), so that a block of filler
fits between any two records; ``LongShape.splice`` then inserts up to two blocks, at drawn line
boundaries of the mutated bytes, between two intact records (or after the last one), so that the
mutator's defect ends up anywhere: on the last line after thousands of records, or in the
middle.  Given the lines a defect is on (``before``), the larger block goes before the last of
them in most long examples, so that a defect thousands of lines from the start is common, not a
rare draw.  With ``count == 0`` both are the identity: a shrunk counterexample is the short stream.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

from hypothesis import strategies as st

from asr_conformance.generators import filler as filler_module
from asr_conformance.generators.changes import MutatedStream

#: The chance that an example is padded at all, and the sizes drawn (records of filler): nominally one
#: example in six draws up to ``SOME_RECORDS`` and one in twenty-four draws thousands (``THOUSANDS`` to
#: ``MIB_RECORDS``, or a MiB or more, ``MIB_RECORDS`` to ``LONG_RECORDS``, in one of four of those).
#: Hypothesis favours the ends of an integer range, so the measured rates differ: about one in five,
#: one in sixteen, and one in six of those past a MiB (3,000 draws).  A default run draws about nine
#: hundred examples.
TIERS, SOME_TIERS = 24, 4
SOME_RECORDS = 300
THOUSANDS, LONG_RECORDS = 1_500, 5_600
#: How many filler records make at least a MiB (the generated records average 210 to 250 bytes).
MIB_RECORDS = 5_200

# --- splicing ------------------------------------------------------------------------

_SEQ = re.compile(rb'"seq"\s*:\s*(-?\d+)')


def _intact(line: bytes) -> bool:
    """Whether a line (without its newline) is one plain JSON object, as filler may stand beside."""
    if not line.startswith(b"{") or line.endswith(b"\r"):
        return False
    try:
        return type(json.loads(line)) is dict
    except (ValueError, RecursionError):
        return False


@dataclass(frozen=True, slots=True)
class Boundary:
    """A place filler may go: before line ``index`` (0-based; the line count for the end), with
    the seq of the record before it and how many seqs are free after that one."""

    index: int
    after_seq: int
    room: int


def boundaries(data: bytes) -> tuple[list[bytes], list[Boundary]]:
    """The lines of ``data`` (each with its newline) and the boundaries where filler may go: after
    line 1, between two intact records (or after the last, when the stream ends with a newline),
    with room for seqs above every seq before and below every seq after (any ``"seq": N`` in a
    line counts, so that a damaged line's seq is respected too)."""
    pieces = data.split(b"\n")
    lines = [piece + b"\n" for piece in pieces[:-1]] + ([pieces[-1]] if pieces[-1] else [])
    if not lines:
        return lines, []
    seqs = [[int(found) for found in _SEQ.findall(line)] for line in lines]
    after = [0] * (len(lines) + 1)
    best: int | None = None
    for i, found in enumerate(seqs):
        if found:
            best = max(found) if best is None else max(best, *found)
        after[i + 1] = best if best is not None else 0
    below: list[int | None] = [None] * (len(lines) + 1)
    low: int | None = None
    for i in range(len(lines) - 1, -1, -1):
        if seqs[i]:
            low = min(seqs[i]) if low is None else min(low, *seqs[i])
        below[i] = low
    intact = [line.endswith(b"\n") and _intact(line[:-1]) for line in lines]
    found_boundaries = []
    for index in range(1, len(lines) + 1):
        if not intact[index - 1] or (index < len(lines) and not intact[index]):
            continue
        ceiling = below[index]
        room = LONG_RECORDS * 4 if ceiling is None else ceiling - after[index] - 1
        if room > 0:
            found_boundaries.append(Boundary(index, after[index], room))
    return lines, found_boundaries


@dataclass(frozen=True, slots=True)
class Splice:
    """What ``LongShape.splice`` did: the new bytes, and where each line of the old ones went."""

    data: bytes
    #: old line index -> new line index (None: nothing was inserted)
    moved: tuple[int, ...] | None
    #: (first new line index, count) of each block of filler
    blocks: tuple[tuple[int, int], ...]
    #: Every name the filler made (its IDs, call, turn, request and terminal IDs): what a view of the
    #: records around it leaves out.
    names: frozenset[str] = frozenset()

    @property
    def filler(self) -> int:
        return sum(count for _, count in self.blocks)


@dataclass(frozen=True, slots=True)
class LongShape:
    """How many filler records to splice into one example, the seed that picks and re-keys them, and the
    seed of the pool they are picked from (the run's seed: ``generators.filler.pool``)."""

    count: int = 0
    seed: int = 0
    pool: int = 0

    def spread(self, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The records with every seq times ``count + 1`` (a copy; the same list when count is 0),
        so that a block of ``count`` records fits between any two."""
        if not self.count:
            return records
        factor = self.count + 1
        return [{**r, "seq": r["seq"] * factor} if type(r.get("seq")) is int else dict(r) for r in records]

    def splice(self, draw: st.DrawFn, data: bytes, before: Sequence[int] = ()) -> Splice:
        """Insert the filler at up to two drawn boundaries of ``data`` (see the module docstring); with
        ``before`` (0-based lines a defect is on), the larger block goes before the last of them in
        three examples of four (where a boundary before it has room)."""
        lines, places = boundaries(data) if self.count else ([], [])
        if not places:
            return Splice(data, None, ())
        first = self.count * (4 - draw(st.integers(0, 4))) // 4  # a share, so that both blocks are often long
        wanted = [size for size in (first, self.count - first) if size]
        chosen: dict[int, int] = {}
        last_defect = max(before, default=None)
        for size in wanted:
            fitting = [b for b in places if b.room >= chosen.get(b.index, 0) + size]
            if size == max(wanted) and last_defect is not None and draw(st.integers(0, 3)) > 0:
                fitting = [b for b in fitting if b.index <= last_defect] or fitting
            if not fitting:
                continue
            place = fitting[draw(st.integers(0, len(fitting) - 1))]
            chosen[place.index] = chosen.get(place.index, 0) + size
        by_index = {b.index: b for b in places}
        order = sorted(chosen)
        made, names = FILLER(data, [(by_index[index].after_seq + 1, chosen[index]) for index in order], self.seed,
                             self.pool)
        filler = dict(zip(order, made, strict=True))
        out: list[str | bytes] = []
        moved: list[int] = []
        blocks: list[tuple[int, int]] = []
        written = 0
        for index in range(len(lines) + 1):
            block = filler.get(index)
            if block:
                blocks.append((written, len(block)))
                out.extend(block)
                written += len(block)
            if index < len(lines):
                moved.append(written)
                out.append(lines[index])
                written += 1
        joined = b"".join(part if isinstance(part, bytes) else part.encode() for part in out)
        return Splice(joined, tuple(moved), tuple(blocks), names)


#: The filler spliced in: the generator's own records (``generators.filler``); a test may put another
#: in its place (the tagged filler of ``coding_turns``, to show what a validator that skips it gets away with).
FILLER: filler_module.Filler = filler_module.generated_filler


def defect_lines(mutation: MutatedStream) -> tuple[int, ...]:
    """The 0-based lines of ``mutation.data`` its changes are on."""
    return tuple(change.line - 1 for change in mutation.changes)


NO_SHAPE = LongShape()


@cache
def long_shapes(enabled: bool = True, pool: int = 0) -> st.SearchStrategy[LongShape]:
    """A long shape per example: none in most, up to ``SOME_RECORDS`` filler records in some, and
    thousands (a MiB or more past ``MIB_RECORDS``) in one in ``TIERS``, its filler from the pool of
    ``pool`` (the run's seed).  Every choice shrinks toward no filler.  ``enabled=False``: never any
    (the cost benchmark's baseline).  The pool seed draws nothing: the same examples under any."""
    if not enabled:
        return st.just(NO_SHAPE)

    def sized(tier: int) -> st.SearchStrategy[int]:
        if tier < TIERS - 1 - SOME_TIERS:
            return st.just(0)
        if tier < TIERS - 1:
            return st.integers(1, SOME_RECORDS)
        # A MiB or more in one long draw of four (one integer range would draw its lower end too often).
        return st.integers(0, 3).flatmap(lambda part: st.integers(MIB_RECORDS, LONG_RECORDS) if part == 3
                                         else st.integers(THOUSANDS, MIB_RECORDS - 1))

    counts = st.integers(0, TIERS - 1).flatmap(sized)
    return st.builds(lambda count, seed: LongShape(count, seed if count else 0, pool if count else 0), counts,
                     st.integers(0, 2**16))


def spliced(mutation: MutatedStream, splice: Splice) -> MutatedStream:
    """A mutated stream after splicing, its changes pointing at the lines where they now are."""
    moved = splice.moved
    if moved is None:
        return mutation

    def where(pointer: str) -> str:
        _, line, *rest = pointer.split("/", 2)
        old = int(line)
        new = moved[old] if old < len(moved) else moved[-1] + 1 + (old - len(moved)) if moved else old
        return "/".join([f"/{new}", *rest])

    changes = tuple(replace(change, pointer=where(change.pointer)) for change in mutation.changes)
    return replace(mutation, data=splice.data, changes=changes)
