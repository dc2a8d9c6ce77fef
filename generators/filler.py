"""Filler for the long shapes: records the stream generator drew, re-keyed with fresh IDs per stream.

A validator that can tell filler from the rest of a stream can skip it and check only the first
records that remain, which are few; so the filler is the generator's own material.  Once per
process, ``pool`` draws chunks with the builders of ``streams`` (every record type whose effect
stays within the chunk: messages, states, calls and results, permissions and their revisions,
input requests, terminals, hooks, memory changes, compactions, the mentioned types;
texts from the same strategies as the generated streams, plain words or any Unicode), and
renders each record as JSON text with holes where a name the chunk made (``StreamState.fresh``:
record, call, turn, request and terminal IDs) stands.  ``generated_filler`` fills the holes with
names of the same shape (``r12``, ``call_13``, ``turn-14``), numbered past every such name the
stream already holds, so that no filler name occurs in it and none repeats.

A chunk declares nothing (no declaration, session_info, config_change or instructions: what is in
force at the records around the filler, and their view, do not change), and names only what it made itself, so it is valid between any
two records.  The pool's seed travels with the long shape (``LongShape.pool``): a certification's
fuzz sessions draw it from the run's seed (``PropertyRunner.pool_seed``), so another run draws other
texts and ``--hypothesis-seed`` draws the same ones again; nothing of it is kept on this module.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cache
from typing import Any

from hypothesis import strategies as st

from asr_conformance.generators import streams
from asr_conformance.generators.seeded import Overrun, drawing

#: A block of filler: its lines, one per record (``(first_seq, count)``, the seed of the draws and the seed of
#: the pool in, lines out), and the names it made (every ID the block holds that the stream did not), for
#: tests that leave it out of a view.
Filler = Callable[[bytes, list[tuple[int, int]], int, int], tuple[list[list[str]], frozenset[str]]]

#: Builders whose records name only what their chunk made and change nothing a later record depends on.
BUILDERS = tuple(sorted(set(streams.BUILDERS) - {"declaration", "session_info", "config_change", "instructions"}))
#: Chunks drawn per process (about eight records each), half of plain words and half of any Unicode.
CHUNKS = 40
#: The prefixes ``StreamState.fresh`` gives the names a chunk makes.
PREFIXES = ("r", "call_", "turn-", "perm_", "req_", "term_", "term_later_", "unknown_call_")
_NUMBERED = re.compile(rb"(?:" + b"|".join(re.escape(p.encode()) for p in sorted(PREFIXES, key=len, reverse=True))
                       + rb")(\d{1,15})")
#: Times the builders write (others, if any, stay as they are); a chunk's times move by up to a year at each use.
_STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
MOST_MOVE_MS = 365 * 86_400_000
#: Marks a hole: a lone surrogate, which no drawn text holds (the text strategies leave them out).
_HOLE = "\ud800"

class _Naming(streams.StreamState):
    """A stream state that remembers every name it made, in order."""

    def __init__(self, text: st.SearchStrategy[str]) -> None:
        super().__init__(text=text)
        self.made: list[str] = []

    def fresh(self, prefix: str) -> str:
        name = super().fresh(prefix)
        self.made.append(name)
        return name


@st.composite
def _chunk(draw: st.DrawFn, text: st.SearchStrategy[str]) -> tuple[list[dict[str, Any]], list[str]]:
    state = _Naming(text)
    for step in draw(st.lists(st.sampled_from(BUILDERS), min_size=3, max_size=14)):
        streams.BUILDERS[step](draw, state)
    streams.record_later_terminals(draw, state)
    return state.records, state.made


@dataclass(frozen=True, slots=True)
class Chunk:
    """Records of one chunk, each as its JSON text split at its holes (``-1``: the seq; ``i``: the
    ``i``-th name the chunk made; ``-2 - k``: the ``k``-th of its free texts, then of its times)."""

    records: tuple[tuple[str | int, ...], ...]
    #: The texts the builders drew (messages, titles, notes, outputs...), re-lettered at each use.
    texts: tuple[str, ...]
    #: Its times (``-2 - len(texts) - k``: the ``k``-th), all moved by one drawn span at each use.
    stamps: tuple[datetime, ...]
    #: The prefix of each name the chunk made (``call_`` of ``call_7``).
    prefixes: tuple[str, ...]
    unicode: bool
    #: How many of its first records may stand alone (a result may name a terminal that only a
    #: later record of the chunk records: no cut between the two), the whole chunk included.
    cuts: tuple[int, ...]

    def cut(self, most: int) -> int:
        """The most records, at most ``most``, that may stand alone."""
        return max((cut for cut in self.cuts if cut <= most), default=0)


def _template(record: dict[str, Any], index: dict[str, int], drawn: set[str], texts: list[str],
              stamps: list[str]) -> tuple[str | int, ...]:
    """The record without type and seq, as JSON text split at every string that is a made name, a drawn
    text (``drawn``; each one's original appended to ``texts``) or a time (appended to ``stamps``)."""
    body = {key: value for key, value in record.items() if key not in ("type", "seq")}

    def hole(value: Any) -> Any:
        if isinstance(value, str) and value in index:
            return f"{_HOLE}{index[value]}{_HOLE}"
        if isinstance(value, str) and value in drawn:
            texts.append(value)
            return f"{_HOLE}t{len(texts) - 1}{_HOLE}"
        if isinstance(value, str) and _STAMP.fullmatch(value):
            stamps.append(value)
            return f"{_HOLE}s{len(stamps) - 1}{_HOLE}"
        if isinstance(value, dict):
            return {key: hole(inner) for key, inner in value.items()}
        if isinstance(value, list):
            return [hole(inner) for inner in value]
        return value

    text = f'"type":{json.dumps(record["type"])},"seq":' + _HOLE + "seq" + _HOLE + "," + \
        json.dumps(hole(body), ensure_ascii=False, separators=(",", ":"))[1:] + "\n"
    parts = text.split(_HOLE)
    return tuple(part if not i % 2 else -1 if part == "seq" else f"{part[0]}{part[1:]}" if part[0] in "ts" else int(part)
                 for i, part in enumerate(parts))


@cache
def pool(seed: int) -> tuple[Chunk, ...]:
    """``CHUNKS`` chunks drawn from ``seed`` by the stream generator's own builders."""
    rng = random.Random(seed)
    chunks: list[Chunk] = []
    while len(chunks) < CHUNKS:
        unicode = len(chunks) % 2 == 1
        strings: list[str] = []
        try:
            with drawing(rng, strings) as draw:
                records, made = draw(_chunk(streams.unicode_text if unicode else streams.words))
        except Overrun:  # the draw ran past Hypothesis's size limit: draw another
            continue
        cuts = _cuts(records)
        if 1 not in cuts:  # every chunk's first record stands alone, so that any count can be filled
            continue
        index = {name: i for i, name in enumerate(made)}
        prefixes = tuple(name.rstrip("0123456789") for name in made)
        texts: list[str] = []
        stamps: list[str] = []
        # A drawn string that is also a word of the vocabulary (a kind, a state) stays as it is.
        drawn = {text for text in strings if any(c in _LETTERS for c in text)} - _fixed_words(records, set(strings))
        marked = [_template(r, index, drawn, texts, stamps) for r in records]
        # Text and time holes numbered past the texts: -2 - k for the k-th text, -2 - len(texts) - k for a time.
        templates = tuple(tuple(-2 - int(part[1:]) - (len(texts) if part[0] == "s" else 0)
                                if isinstance(part, str) and i % 2 else part for i, part in enumerate(parts))
                          for parts in marked)
        moments = tuple(datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ") for stamp in stamps)
        chunks.append(Chunk(templates, tuple(texts), moments, prefixes, unicode, cuts))
    return tuple(chunks)


_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _fixed_words(records: list[dict[str, Any]], drawn: set[str]) -> set[str]:
    """Strings of the records under a key whose other values were not drawn as text (a vocabulary)."""
    by_key: dict[str, set[str]] = {}

    def walk(value: Any, key: str) -> None:
        if isinstance(value, str):
            by_key.setdefault(key, set()).add(value)
        elif isinstance(value, dict):
            for inner_key, inner in value.items():
                walk(inner, inner_key)
        elif isinstance(value, list):
            for inner in value:
                walk(inner, key)

    for record in records:
        walk(record, "")
    return {value for values in by_key.values() if not values <= drawn for value in values}


def relettered(text: str, letters: dict[int, int]) -> str:
    """A text with its lowercase ASCII letters swapped by ``letters`` (a table for ``str.translate``): the
    same length, spacing and characters of every other kind, other words."""
    return text.translate(letters)


def moved(stamps: tuple[datetime, ...], span: timedelta) -> list[str]:
    """A chunk's times moved on by ``span`` (every relation between them kept), written as they were."""
    return [(stamp + span).strftime("%Y-%m-%dT%H:%M:%S.") + f"{(stamp + span).microsecond // 1000:03d}Z"
            for stamp in stamps]


def _cuts(records: list[dict[str, Any]]) -> tuple[int, ...]:
    """Where a chunk may be cut: not after a record naming a terminal the chunk records later."""
    recorded_at = {r["terminalId"]: i for i, r in enumerate(records) if r["type"] == "terminal"}
    waits_until = 0
    cuts = []
    for i, record in enumerate(records):
        if i >= waits_until:
            cuts.append(i)
        named = record.get("exec", {}).get("terminalId") if record["type"] == "tool_result" else None
        if isinstance(named, str) and recorded_at.get(named, -1) > i:
            waits_until = max(waits_until, recorded_at[named] + 1)
    return (*cuts, len(records))


def first_free_number(data: bytes) -> int:
    """A number past every name of the filler's shapes in ``data`` (``r12``, ``call_40`` anywhere)."""
    return max((int(found) for found in _NUMBERED.findall(data)), default=0) + 1


def generated_filler(data: bytes, blocks: list[tuple[int, int]], seed: int,
                     pool_seed: int = 0) -> tuple[list[list[str]], frozenset[str]]:
    """Each block ``(first_seq, count)`` as lines: chunks of the pool drawn from ``pool_seed`` (the run's
    seed), picked by ``seed`` (plain-word chunks
    only when ``data`` is ASCII, as a generated valid stream is), their names numbered from past every
    name of the same shapes in ``data``; the last chunk of a block may be cut short (still valid: a call
    left without its result is a dangling call, a permission without its revision stays pending)."""
    rng = random.Random(seed)
    chunks = pool(pool_seed)
    usable = [c for c in chunks if not c.unicode] if data.isascii() else list(chunks)
    number = first_free_number(data) + rng.randrange(4)
    made: list[str] = []
    found: list[list[str]] = []
    for first_seq, count in blocks:
        lines: list[str] = []
        seq = first_seq
        while len(lines) < count:
            chunk = usable[rng.randrange(len(usable))]
            size = chunk.cut(count - len(lines))  # at least 1: every chunk's first record stands alone
            names = [f"{prefix}{number + i}" for i, prefix in enumerate(chunk.prefixes)]
            number += len(names)
            made.extend(names)
            table = str.maketrans(_LETTERS, "".join(rng.sample(_LETTERS, len(_LETTERS))))
            texts = [json.dumps(relettered(text, table), ensure_ascii=False)[1:-1] for text in chunk.texts]
            texts += moved(chunk.stamps, timedelta(milliseconds=rng.randrange(MOST_MOVE_MS)))
            for parts in chunk.records[:size]:
                lines.append("{" + "".join(part if isinstance(part, str) else names[part] if part >= 0
                                            else str(seq) if part == -1 else texts[-2 - part] for part in parts))
                seq += 1
        found.append(lines)
    return found, frozenset(made)
