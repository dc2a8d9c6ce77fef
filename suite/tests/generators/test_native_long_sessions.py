"""Sessions of real size (``generators.native.long_sessions``), Claude Code and Codex: thousands of lines
more, still a valid transcript (unique IDs, an unbroken parentUuid chain, time only moving forward) that
the witness reads with the drawn session's features intact and the example converter keeps; and the
long shape shrinks away."""

from __future__ import annotations

import json
import random
from functools import cache

import pytest
from hypothesis import find
from test_native_claude_code import facts_hold
from test_native_codex import convert as convert_rollout

from asr_conformance.fidelity import claude_code as cc_witness
from asr_conformance.fidelity import codex as codex_witness
from asr_conformance.fidelity.facts import SourceFacts
from asr_conformance.generators.native import claude_code as cc
from asr_conformance.generators.native import codex
from asr_conformance.generators.native import long_sessions as ls
from asr_conformance.generators.native.common import NativeTranscript
from asr_conformance.generators.seeded import drawing
from asr_conformance.harness.judging.fidelity import judge_fidelity
from asr_conformance.reference import claude_code_converter as example
from asr_conformance.reference.checks import validate_bytes

#: Drawn sessions that hold what a splice could break: a chain that restarts (compaction), results
#: with no call (orphans), a call left open at the end (dangling), turns, several features at once.
CLAUDE = ("orphans", "dangling", "compaction", "mixed")
CODEX = (("cli", "interrupted"), ("desktop", "dangling"), ("old", "compaction"))
CASES = [(cc.FORMAT, None, f) for f in CLAUDE] + [(codex.FORMAT, v, f) for v, f in CODEX]


@cache
def drawn(format: str, variant: str | None, feature: str, seed: int = 7) -> tuple[NativeTranscript, NativeTranscript]:
    module = cc if format == cc.FORMAT else codex
    with drawing(random.Random(seed)) as draw:
        short = draw(module.transcripts(feature, variant))
    return short, ls.lengthened(short, ls.LongSession(ls.LONGEST, seed))


def _ids(lines: tuple[str, ...]) -> tuple[list[str], list[str], list[str]]:
    """Line uuids, call IDs (tool_use ids, function and custom tool calls) and timestamps."""
    parsed = [json.loads(line) for line in lines]
    uuids = [p["uuid"] for p in parsed if "uuid" in p]
    calls = [b["id"] for p in parsed if p.get("type") == "assistant" for b in p["message"]["content"]
             if b.get("type") == "tool_use"]
    calls += [p["payload"]["call_id"] for p in parsed if p.get("type") == "response_item"
              and p["payload"].get("type") in ("function_call", "custom_tool_call")]
    stamps = [p["timestamp"] for p in parsed if isinstance(p.get("timestamp"), str)]
    return uuids, calls, stamps


@pytest.mark.parametrize(("format", "variant", "feature"), CASES)
def test_a_long_session_is_a_valid_transcript_of_real_size(format: str, variant: str | None, feature: str) -> None:
    short, long = drawn(format, variant, feature)
    data = long.data()
    assert len(long.lines) >= len(short.lines) + ls.LONGEST and ls.SHORTEST >= 1_000
    assert len(data) > (2**20 if format == cc.FORMAT else 400_000)
    assert long.lines[:1] == short.lines[:1] and long.variant == short.variant
    assert long.features == (short.features - {"plain"}) | {"calls"}
    uuids, calls, stamps = _ids(long.lines)
    _, short_calls, short_stamps = _ids(short.lines)
    assert len(set(uuids)) == len(uuids)
    assert len(set(calls)) - len(set(short_calls)) == len(calls) - len(short_calls) > 0  # every new call ID is new
    assert stamps == sorted(stamps) or short_stamps != sorted(short_stamps)
    if format == cc.FORMAT:
        # Every line hangs on a line before it, or on what it hung on in the drawn session (null, another file).
        short_parents = {json.loads(line).get("parentUuid") for line in short.lines}
        seen: set[str] = set()
        for line in map(json.loads, long.lines):
            assert line.get("parentUuid") is None or line["parentUuid"] in seen | short_parents, line
            seen.update([line["uuid"]] if "uuid" in line else [])
        assert cc.variant_of(data) == "session"
    else:
        assert codex.variant_of(data) == variant
    witness = cc_witness.WITNESS if format == cc.FORMAT else codex_witness.WITNESS
    facts = witness.read(data)
    assert isinstance(facts, SourceFacts), facts
    if format == cc.FORMAT:
        for held in long.features:
            facts_hold(held, facts)
    assert len(facts.calls) > len(witness.read(short.data()).calls)


@pytest.mark.parametrize(("format", "variant", "feature"), [CASES[-1], (cc.FORMAT, None, "mixed")])
def test_the_example_converter_keeps_a_long_session(format: str, variant: str | None, feature: str) -> None:
    _, long = drawn(format, variant, feature)
    data = long.data()
    stream = example.convert(data) if format == cc.FORMAT else convert_rollout(data)
    assert isinstance(stream, bytes), stream
    outcome = validate_bytes(stream)
    assert outcome.valid, [(d.rule, d.message) for d in outcome.errors][:5]
    fidelity = judge_fidelity(data, stream)
    assert fidelity.not_checked is None and fidelity.findings == [], fidelity


def test_the_long_shape_shrinks_to_the_drawn_session() -> None:
    short, _ = drawn(cc.FORMAT, None, "orphans")
    assert ls.lengthened(short, ls.NONE) is short
    assert find(ls.long_sessions(), lambda shape: True) == ls.NONE
    assert find(ls.long_sessions(), lambda shape: shape.lines > 0).lines == ls.SHORTEST


def test_the_same_seed_gives_the_same_long_session() -> None:
    short, long = drawn(cc.FORMAT, None, "orphans")
    assert ls.lengthened(short, ls.LongSession(ls.LONGEST, 7)) == long
    assert ls.lengthened(short, ls.LongSession(ls.LONGEST, 8)) != long


def test_gemini_and_legacy_rollouts_are_not_lengthened_and_the_baseline_draws_none() -> None:
    strategy = cc.transcripts("plain")
    assert ls.with_long_sessions("gemini-cli-session", strategy) is strategy
    with drawing(random.Random(1)) as draw:
        legacy = draw(codex.transcripts("calls", "legacy"))
    assert ls.lengthened(legacy, ls.LongSession(ls.LONGEST, 1)) is legacy
    ls.enable(False)
    try:
        assert ls.with_long_sessions(cc.FORMAT, strategy) is strategy
        assert find(ls.long_sessions(), lambda shape: True) == ls.NONE
    finally:
        ls.enable(True)
