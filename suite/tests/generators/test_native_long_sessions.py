"""Claude Code sessions of real size (``generators.native.long_sessions``): past a thousand lines and a
MiB, still a valid transcript (unique IDs, an unbroken parentUuid chain, time only moving forward) that
the witness reads with the drawn session's feature intact and the example converter keeps; and the
long shape shrinks away."""

from __future__ import annotations

import json
import random
from functools import cache

import pytest
from hypothesis import find
from test_native_claude_code import facts_hold

from asr_conformance.fidelity.claude_code import WITNESS
from asr_conformance.fidelity.facts import SourceFacts
from asr_conformance.generators.native import claude_code as cc
from asr_conformance.generators.native import long_sessions as ls
from asr_conformance.generators.native.common import NativeTranscript
from asr_conformance.generators.seeded import drawing
from asr_conformance.harness.judging.fidelity import judge_fidelity
from asr_conformance.reference import claude_code_converter as example
from asr_conformance.reference.checks import validate_bytes

#: Drawn sessions that hold what a splice could break: a chain that restarts (compaction), results
#: with no call (orphans), a call left open at the end (dangling), sidechains (subagent), several.
FEATURES = ("plain", "orphans", "dangling", "compaction", "subagent", "mixed")


@cache
def drawn(feature: str, seed: int) -> tuple[NativeTranscript, NativeTranscript]:
    with drawing(random.Random(seed)) as draw:
        short = draw(cc.transcripts(feature))
    return short, ls.lengthened(short, ls.LongSession(ls.LONGEST, seed))


def _ids(lines: tuple[str, ...]) -> tuple[list[str], list[str | None], list[str], list[str]]:
    parsed = [json.loads(line) for line in lines]
    uuids = [p["uuid"] for p in parsed if "uuid" in p]
    parents = [p["parentUuid"] for p in parsed if "parentUuid" in p]
    calls = [b["id"] for p in parsed if p.get("type") == "assistant" for b in p["message"]["content"]
             if b.get("type") == "tool_use"]
    stamps = [p["timestamp"] for p in parsed if isinstance(p.get("timestamp"), str)]
    return uuids, parents, calls, stamps


@pytest.mark.parametrize("feature", FEATURES)
def test_a_long_session_is_a_valid_transcript_of_real_size(feature: str) -> None:
    short, long = drawn(feature, 7)
    data = long.data()
    assert len(long.lines) >= len(short.lines) + ls.LONGEST and len(data) > 2**20 and ls.SHORTEST >= 1_000
    assert long.lines[:1] == short.lines[:1] and long.features == (short.features - {"plain"}) | {"calls"}
    uuids, parents, calls, stamps = _ids(long.lines)
    short_uuids, short_parents, short_calls, short_stamps = _ids(short.lines)
    assert len(set(uuids)) == len(uuids)
    assert len(set(calls)) - len(set(short_calls)) == len(calls) - len(short_calls) > 0  # every new call ID is new
    # Every line hangs on a line before it, or on what it hung on in the drawn session (null, another file).
    seen: set[str] = set()
    for line in map(json.loads, long.lines):
        parent = line.get("parentUuid")
        assert parent is None or parent in seen or parent in short_parents, line
        if "uuid" in line:
            seen.add(line["uuid"])
    assert stamps == sorted(stamps) or short_stamps != sorted(short_stamps)
    facts = WITNESS.read(data)
    assert isinstance(facts, SourceFacts), facts
    for held in long.features:
        facts_hold(held, facts)
    assert len(facts.calls) > len(WITNESS.read(short.data()).calls)


def test_the_example_converter_keeps_a_long_session() -> None:
    _, long = drawn("mixed", 7)
    data = long.data()
    stream = example.convert(data)
    outcome = validate_bytes(stream)
    assert outcome.valid, [(d.rule, d.message) for d in outcome.errors][:5]
    fidelity = judge_fidelity(data, stream)
    assert fidelity.not_checked is None and fidelity.findings == [], fidelity


def test_the_long_shape_shrinks_to_the_drawn_session() -> None:
    short, _ = drawn("plain", 7)
    assert ls.lengthened(short, ls.NONE) is short
    assert find(ls.long_sessions(), lambda shape: True) == ls.NONE
    assert find(ls.long_sessions(), lambda shape: shape.lines > 0).lines == ls.SHORTEST


def test_the_same_seed_gives_the_same_long_session() -> None:
    short, long = drawn("orphans", 7)
    assert ls.lengthened(short, ls.LongSession(ls.LONGEST, 7)) == long
    assert ls.lengthened(short, ls.LongSession(ls.LONGEST, 8)) != long


def test_only_claude_code_sessions_are_lengthened_and_the_baseline_draws_none() -> None:
    strategy = cc.transcripts("plain")
    assert ls.with_long_sessions("codex-rollout-jsonl", strategy) is strategy
    ls.enable(False)
    try:
        assert ls.with_long_sessions(cc.FORMAT, strategy) is strategy
        assert find(ls.long_sessions(), lambda shape: True) == ls.NONE
    finally:
        ls.enable(True)
