"""Streams of real size, made cheaply: long valid stretches spliced into a generated stream.

Real sessions run to thousands of records and megabytes; the strategies of ``streams`` draw a few
dozen.  Drawing thousands of records through Hypothesis would be slow and would shrink badly, so
the fuzz properties draw a *long shape* instead (``long_shapes``): how many filler records to
splice in (a drawn number that shrinks to zero, and zero in most examples), and a seed for them.

The filler is generated material: whole turns of a coding session (prompts, replies, tool calls
with their results and outputs, hooks, permissions, state changes), pre-rendered once per process
as JSON text with holes for seq, IDs, turn IDs and call IDs, and repeated with fresh values.  It
is valid wherever it goes, because it is self-contained: its IDs, turn IDs and call IDs all carry
a tag that occurs nowhere else in the stream (so nothing of the stream can name them, and they
can name nothing of the stream), it declares nothing, names no root, participant, conversation
or terminal, and its seqs lie strictly between those of the records around it.

``LongShape.spread`` multiplies every seq of a valid stream by ``count + 1`` *before* a mutator
runs (gaps in seq are allowed; every relation between seqs is kept), so that a block of filler
fits between any two records; ``LongShape.splice`` then inserts up to two blocks, at drawn line
boundaries of the mutated bytes, between two intact records (or after the last one), so that the
mutator's defect ends up anywhere: on the last line after thousands of records, or in the
middle.  With ``count == 0`` both are the identity: a shrunk counterexample is the short stream.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

from hypothesis import strategies as st

from asr_conformance.generators.changes import MutatedStream

#: The chance that an example is padded at all, and the sizes drawn (records of filler): one example
#: in six draws up to ``SOME_RECORDS``, one in twenty-four draws thousands (``THOUSANDS`` to
#: ``LONG_RECORDS``: over a MiB past ``MIB_RECORDS``).  A default run draws about nine hundred.
TIERS, SOME_TIERS = 24, 4
SOME_RECORDS = 300
THOUSANDS, LONG_RECORDS = 1_000, 4_000
#: How many filler records make at least a MiB (``filler_lines`` averages over 440 bytes a record).
MIB_RECORDS = 2_400

WORDS = (
    "the parser fails on empty input because the index is never checked before we read the first "
    "token so I added a guard and a test that covers it then ran the whole suite again and two "
    "tests in the config module still fail with a missing key error which looks unrelated but the "
    "stack trace points at the loader we changed yesterday could you look at the schema and tell "
    "me whether the default should be an empty list or null I think null is safer since callers "
    "already handle it let me check the call sites first there are four of them in the server and "
    "one in the command line tool all of them treat null as absent so the change is safe I will "
    "update the docs and the changelog as well"
).split()
NAMES = ("parser", "loader", "config", "server", "schema", "tokens", "cache", "router", "index", "report")
#: A few words outside ASCII, as real prompts carry them.
UNICODE = ("café", "naïve", "Zürich", "日本語", "résumé", "→", "✓", "Ωmega", "straße", "naïveté")
COMMANDS = ("cargo test -p {n}", "pytest tests/test_{n}.py -q", "npm run build", "git diff --stat",
            "rg -n 'fn {n}' src", "ls -la src/{n}", "go test ./{n}/...", "make lint")
ERRORS = ("error[E0308]: mismatched types", "AssertionError: expected 3, got 2", "KeyError: '{n}'",
          "FAILED tests/test_{n}.py::test_empty - IndexError", "warning: unused variable `{n}`")
#: The holes in a pre-rendered record, filled by ``filler_lines``.
TURN, CALL = "@@turn@@", "@@call@@"


def _prose(rng: random.Random, low: int, high: int) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(low, high))]
    if rng.random() < 0.3:
        words[rng.randrange(len(words))] = rng.choice(UNICODE)
    return " ".join(words).capitalize() + "."


def _code(rng: random.Random) -> str:
    name = rng.choice(NAMES)
    body = "\n".join(f"    let {rng.choice(NAMES)}_{i} = {name}.get({i}).unwrap_or_default();" for i in range(rng.randint(2, 9)))
    return f"```rust\nfn {name}(input: &str) -> Result<(), Error> {{\n{body}\n    Ok(())\n}}\n```"


def _output(rng: random.Random, lines: int) -> str:
    name = rng.choice(NAMES)
    found = []
    for i in range(lines):
        roll = rng.random()
        if roll < 0.15:
            found.append(rng.choice(ERRORS).format(n=name))
        elif roll < 0.5:
            found.append(f"src/{rng.choice(NAMES)}/{rng.choice(NAMES)}.rs:{rng.randint(1, 900)}:{rng.randint(1, 80)}")
        else:
            found.append(f"test {name}::{rng.choice(NAMES)}_{i} ... {rng.choice(('ok', 'ok', 'ok', 'FAILED'))}")
    return "\n".join(found)


def _turn(rng: random.Random) -> list[tuple[str, dict[str, Any]]]:
    """One turn of a coding session as (type, members) pairs, with the turn and call IDs as holes."""
    prompt = _prose(rng, 8, 60) + (("\n\n" + _code(rng)) if rng.random() < 0.3 else "")
    records: list[tuple[str, dict[str, Any]]] = [
        ("message", {"turnId": TURN, "role": "user", "content": [{"type": "text", "text": prompt}]}),
        ("state", {"turnId": TURN, "state": "running"}),
    ]
    for call in range(rng.randint(1, 4)):
        call_id = f"{CALL}{call}"
        command = rng.choice(COMMANDS).format(n=rng.choice(NAMES))
        records.append(("tool_call", {"turnId": TURN, "callId": call_id, "callIdSource": "native", "name": "Bash",
                                      "kind": "execute", "requestedBy": "model",
                                      "input": {"command": command, "timeout": 120000}}))
        compact: dict[str, Any] = {}
        if rng.random() < 0.2:
            records.append(("permission", {"turnId": TURN, "requestId": f"{CALL}{call}p", "subject": {"callId": call_id},
                                           "status": "resolved", "decision": "allow_once", "decidedBy": "user"}))
        else:
            compact = {"permission": {"decision": "allow_once", "decidedBy": "policy"}}
        output = _output(rng, rng.randint(1, 12) if rng.random() < 0.97 else rng.randint(200, 600))
        code = rng.choice((0, 0, 1, 101))
        records.append(("tool_result", {
            "turnId": TURN, "callId": call_id, "linkage": "exact", "status": "completed" if code == 0 else "failed",
            "content": [{"type": "text", "text": output}],
            "exec": {"command": command, "cwd": {"root": None, "path": "/work/acme-app"}, "exitCode": code,
                     "stdout": output, "stderr": ""},
            "durationMs": rng.randint(5, 90000), **compact}))
        if rng.random() < 0.3:
            records.append(("hook", {"turnId": TURN, "event": "post_tool_use", "handlerKind": "command",
                                     "command": "cargo fmt --check", "callId": call_id, "status": "completed",
                                     "exitCode": 0, "durationMs": rng.randint(50, 900)}))
    if rng.random() < 0.2:
        records.append(("reasoning", {"turnId": TURN, "content": [{"type": "text", "text": _prose(rng, 10, 40)}]}))
    reply = _prose(rng, 15, 120) + (("\n\n" + _code(rng)) if rng.random() < 0.4 else "")
    records.append(("message", {"turnId": TURN, "role": "assistant", "content": [{"type": "text", "text": reply}]}))
    records.append(("state", {"turnId": TURN, "state": "idle", "stopReason": "end_turn"}))
    return records


@cache
def _turns() -> tuple[tuple[tuple[str, str], ...], ...]:
    """Turns pre-rendered once per process: each record as (type, the JSON text after its id)."""
    rng = random.Random(20261026)
    rendered = []
    for _ in range(48):
        turn = []
        for kind, members in _turn(rng):
            tail = json.dumps(members, ensure_ascii=False, separators=(",", ":"))
            turn.append((kind, tail[1:]))  # without the opening brace
        rendered.append(tuple(turn))
    return tuple(rendered)


def filler_lines(tag: str, first_seq: int, count: int, seed: int, first_turn: int = 0) -> list[str]:
    """``count`` valid records, as lines, with seqs from ``first_seq`` and IDs carrying ``tag``.

    Whole turns drawn (by ``seed``) from the pre-rendered ones; the last may be cut short (a call
    left without its result is a dangling call, which is valid).  Turns are numbered from
    ``first_turn``, so two blocks of one stream share no turn or call ID."""
    rng = random.Random(seed)
    turns = _turns()
    lines: list[str] = []
    seq = first_seq
    turn_number = first_turn
    while len(lines) < count:
        turn_number += 1
        turn_id, call_prefix = f"{tag}-t{turn_number}", f"{tag}-c{turn_number}-"
        for kind, tail in turns[rng.randrange(len(turns))]:
            if len(lines) == count:
                break
            body = tail.replace(TURN, turn_id).replace(CALL, call_prefix)
            lines.append(f'{{"type":"{kind}","seq":{seq},"id":"{tag}-{seq}",{body}\n')
            seq += 1
    return lines


# --- splicing ------------------------------------------------------------------------

_SEQ = re.compile(rb'"seq"\s*:\s*(-?\d+)')


def _tag(data: bytes, seed: int) -> str:
    """A short tag that occurs nowhere in ``data``: every filler ID holds it, so none can clash."""
    rng = random.Random(seed)
    while True:
        tag = "".join(rng.choice("bcdfghjkmnpqrstvwxz") for _ in range(3)) + str(rng.randrange(10, 100))
        if tag.encode() not in data:
            return tag


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
    #: The tag every filler ID holds ("" when nothing was inserted).
    tag: str = ""

    @property
    def filler(self) -> int:
        return sum(count for _, count in self.blocks)


@dataclass(frozen=True, slots=True)
class LongShape:
    """How many filler records to splice into one example, and the seed of their content."""

    count: int = 0
    seed: int = 0

    def spread(self, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The records with every seq times ``count + 1`` (a copy; the same list when count is 0),
        so that a block of ``count`` records fits between any two."""
        if not self.count:
            return records
        factor = self.count + 1
        return [{**r, "seq": r["seq"] * factor} if type(r.get("seq")) is int else dict(r) for r in records]

    def splice(self, draw: st.DrawFn, data: bytes) -> Splice:
        """Insert the filler at up to two drawn boundaries of ``data`` (see the module docstring)."""
        lines, places = boundaries(data) if self.count else ([], [])
        if not places:
            return Splice(data, None, ())
        first = self.count * draw(st.integers(0, 4)) // 4  # a share, so that both blocks are often long
        wanted = [size for size in (first, self.count - first) if size]
        chosen: dict[int, int] = {}
        for size in wanted:
            fitting = [b for b in places if b.room >= chosen.get(b.index, 0) + size]
            if not fitting:
                continue
            place = fitting[draw(st.integers(0, len(fitting) - 1))]
            chosen[place.index] = chosen.get(place.index, 0) + size
        by_index = {b.index: b for b in places}
        tag = _tag(data, self.seed)
        out: list[str | bytes] = []
        moved: list[int] = []
        blocks: list[tuple[int, int]] = []
        written = 0
        turns = 0
        for index in range(len(lines) + 1):
            size = chosen.get(index, 0)
            if size:
                block = filler_lines(tag, by_index[index].after_seq + 1, size, self.seed + index, turns)
                turns += size  # more than the turns used: the next block's turn numbers are all new
                blocks.append((written, size))
                out.extend(block)
                written += size
            if index < len(lines):
                moved.append(written)
                out.append(lines[index])
                written += 1
        joined = b"".join(part if isinstance(part, bytes) else part.encode() for part in out)
        return Splice(joined, tuple(moved), tuple(blocks), tag)


NO_SHAPE = LongShape()


@cache
def long_shapes(enabled: bool = True) -> st.SearchStrategy[LongShape]:
    """A long shape per example: none in most, up to ``SOME_RECORDS`` filler records in some, and
    thousands (a MiB or more past ``MIB_RECORDS``) in one in ``TIERS``.  Every choice
    shrinks toward no filler.  ``enabled=False``: never any (the cost benchmark's baseline)."""
    if not enabled:
        return st.just(NO_SHAPE)

    def sized(tier: int) -> st.SearchStrategy[int]:
        if tier < TIERS - 1 - SOME_TIERS:
            return st.just(0)
        return st.integers(1, SOME_RECORDS) if tier < TIERS - 1 else st.integers(THOUSANDS, LONG_RECORDS)

    counts = st.integers(0, TIERS - 1).flatmap(sized)
    return st.builds(lambda count, seed: LongShape(count, seed if count else 0), counts, st.integers(0, 2**16))


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
