"""Sessions of real size (``generators.native.long_sessions``), Claude Code, Codex and Gemini CLI: thousands
of lines (Gemini: messages) and a MiB more, still a valid transcript (unique IDs, an unbroken parentUuid chain,
time only moving forward) that the witness reads with the drawn session's features intact and the example
converter keeps; the long shape shrinks away, and the long property lengthens every session it draws."""

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
from asr_conformance.fidelity import gemini as gemini_witness
from asr_conformance.fidelity.facts import SourceFacts
from asr_conformance.generators.native import claude_code as cc
from asr_conformance.generators.native import codex, gemini
from asr_conformance.generators.native import long_sessions as ls
from asr_conformance.generators.native.common import NativeTranscript
from asr_conformance.generators.seeded import drawing
from asr_conformance.harness.fuzzing.producers import generated_inputs
from asr_conformance.harness.judging.fidelity import judge_fidelity
from asr_conformance.reference import claude_code_converter as example
from asr_conformance.reference import gemini_converter
from asr_conformance.reference.checks import validate_bytes

#: Drawn sessions that hold what a splice could break: a chain that restarts (compaction), results
#: with no call (orphans), a call left open at the end (dangling), turns, several features at once.
CLAUDE = ("orphans", "dangling", "compaction", "mixed")
CODEX = (("cli", "interrupted"), ("desktop", "dangling"), ("old", "compaction"))
#: Gemini: re-recorded messages, a rewind and a checkpoint before the place (which would drop the stretch
#: after them), pending calls at the end, the one-object layout.
GEMINI = (("jsonl", "mixed"), ("jsonl", "rewinds"), ("jsonl", "checkpoint"), ("json", "mixed"))
CASES = ([(cc.FORMAT, None, f) for f in CLAUDE] + [(codex.FORMAT, v, f) for v, f in CODEX]
         + [(gemini.FORMAT, v, f) for v, f in GEMINI])
MODULES = {cc.FORMAT: cc, codex.FORMAT: codex, gemini.FORMAT: gemini}
WITNESSES = {cc.FORMAT: cc_witness.WITNESS, codex.FORMAT: codex_witness.WITNESS, gemini.FORMAT: gemini_witness.WITNESS}


@cache
def drawn(format: str, variant: str | None, feature: str, seed: int = 7) -> tuple[NativeTranscript, NativeTranscript]:
    module = MODULES[format]
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


def _gemini_messages(lines: tuple[str, ...], variant: str) -> list[dict]:
    """A Gemini session's messages in order: each id's copies in the order they are written (JSON Lines)."""
    if variant == "json":
        return list(json.loads("\n".join(lines))["messages"])
    return [value for value in map(json.loads, lines[1:]) if isinstance(value.get("id"), str)]


def _gemini_valid(short: NativeTranscript, long: NativeTranscript) -> None:
    """Fresh message and call IDs; every copy of a message keeps its time; the stretch's times lie between
    those of the messages around it; the header stays the session's own."""
    messages, before = _gemini_messages(long.lines, long.variant), _gemini_messages(short.lines, short.variant)
    first = {m["id"]: m["timestamp"] for m in messages}
    assert all(m["timestamp"] == first[m["id"]] for m in messages)  # copies keep their time
    assert len(first) >= len({m["id"] for m in before}) + ls.SHORTEST
    calls = [c["id"] for m in messages for c in m.get("toolCalls") or ()]
    short_calls = [c["id"] for m in before for c in m.get("toolCalls") or ()]
    # A call ID may repeat only in copies of its own message.
    owners = {(c["id"], m["id"]) for m in messages for c in m.get("toolCalls") or ()}
    assert len({call for call, _ in owners}) == len(owners) and len(set(calls)) > len(set(short_calls))
    header = json.loads("\n".join(long.lines)) if long.variant == "json" else json.loads(long.lines[0])
    short_header = json.loads("\n".join(short.lines)) if short.variant == "json" else json.loads(short.lines[0])
    assert (header["sessionId"], header["projectHash"]) == (short_header["sessionId"], short_header["projectHash"])
    order = list(first.values())
    short_order = [m["timestamp"] for m in before]
    assert order == sorted(order) or short_order != sorted(short_order)
    if long.variant == "json":
        assert header["lastUpdated"] >= max(first.values())


@pytest.mark.parametrize(("format", "variant", "feature"), CASES)
def test_a_long_session_is_a_valid_transcript_of_real_size(format: str, variant: str | None, feature: str) -> None:
    short, long = drawn(format, variant, feature)
    data = long.data()
    assert len(long.lines) >= len(short.lines) + ls.LONGEST and ls.SHORTEST >= 1_000
    assert len(data) - len(short.data()) >= ls.LEAST_BYTES == 2**20
    assert long.lines[:1] == short.lines[:1] and long.variant == short.variant
    assert long.features == (short.features - {"plain"}) | {"calls"}
    if format == gemini.FORMAT:
        _gemini_valid(short, long)
        assert gemini.variant_of(data) == variant
    else:
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
    elif format == codex.FORMAT:
        assert codex.variant_of(data) == variant
    witness = WITNESSES[format]
    facts = witness.read(data)
    assert isinstance(facts, SourceFacts), facts
    if format == cc.FORMAT:
        for held in long.features:
            facts_hold(held, facts)
    short_facts = witness.read(short.data())
    assert isinstance(short_facts, SourceFacts)
    assert len(facts.calls) > len(short_facts.calls)
    assert len(facts.messages) >= len(short_facts.messages) + (ls.SHORTEST if format == gemini.FORMAT else 0) * 9 // 10


@pytest.mark.parametrize(("format", "variant", "feature"), [CASES[len(CLAUDE) + len(CODEX) - 1],
                                                            (cc.FORMAT, None, "mixed"), CASES[-1], CASES[-3]])
def test_the_example_converter_keeps_a_long_session(format: str, variant: str | None, feature: str) -> None:
    _, long = drawn(format, variant, feature)
    data = long.data()
    converters = {cc.FORMAT: example.convert, codex.FORMAT: convert_rollout, gemini.FORMAT: gemini_converter.convert}
    stream = converters[format](data)
    assert isinstance(stream, bytes), stream
    outcome = validate_bytes(stream)
    assert outcome.valid, [(d.rule, d.message) for d in outcome.errors][:5]
    fidelity = judge_fidelity(data, stream)
    assert fidelity.not_checked is None and fidelity.findings == [], fidelity


def test_the_long_shape_shrinks_to_the_drawn_session() -> None:
    short, _ = drawn(cc.FORMAT, None, "orphans")
    assert ls.lengthened(short, ls.NONE) is short
    assert find(ls.long_sessions(pool=9), lambda shape: True) == ls.NONE
    # The pool seed given (the run's) is on every long shape drawn, and draws nothing itself.
    assert find(ls.long_sessions(pool=9), lambda shape: shape.lines > 0) == ls.LongSession(ls.SHORTEST, 0, 9)
    assert find(ls.always_long(pool=9), lambda shape: True) == ls.LongSession(ls.SHORTEST, 0, 9)


def test_the_same_seed_gives_the_same_long_session() -> None:
    short, long = drawn(cc.FORMAT, None, "orphans")
    assert ls.lengthened(short, ls.LongSession(ls.LONGEST, 7)) == long
    assert ls.lengthened(short, ls.LongSession(ls.LONGEST, 8)) != long


#: Each format's pool, by the name ``lengthened`` finds it under.
POOLS = {cc.FORMAT: "pool", codex.FORMAT: "codex_pool", gemini.FORMAT: "gemini_pool"}


@pytest.mark.parametrize(("format", "variant", "feature"), [(cc.FORMAT, None, "orphans"), (codex.FORMAT, "cli", "interrupted"),
                                                          (gemini.FORMAT, "jsonl", "mixed")])
def test_the_shapes_pool_seed_picks_the_pool(monkeypatch: pytest.MonkeyPatch, format: str, variant: str | None,
                                             feature: str) -> None:
    """The run's seed reaches the pool as a value: ``lengthened`` takes its pieces from the pool of the shape's
    ``pool`` (here answered with pool 0's, so the session is the one pool 0 gives).  The strategies put it on
    the shapes they draw: ``test_the_long_shape_shrinks_to_the_drawn_session``."""
    short, long = drawn(format, variant, feature)
    original = getattr(ls, POOLS[format])
    asked: list[int] = []

    def recorded(seed: int, *rest: str) -> object:
        asked.append(seed)
        return original(0, *rest)

    monkeypatch.setattr(ls, POOLS[format], recorded)
    assert ls.lengthened(short, ls.LongSession(ls.LONGEST, 7, pool=4242)) == long and set(asked) == {4242}


def test_the_long_property_lengthens_every_session_it_draws() -> None:
    for format in sorted(ls.FORMATS):
        pending = "awaiting-approval" if format == gemini.FORMAT else "dangling"
        strategy = ls.long_transcripts(format, MODULES[format].transcripts(pending))
        for seed in range(2):  # a session ending on pending calls may have no place: it is drawn again
            with drawing(random.Random(seed)) as draw:
                assert len(draw(strategy).data()) > ls.LEAST_BYTES
    with pytest.raises(ValueError, match="not lengthened"):
        ls.long_transcripts("other-format", cc.transcripts("plain"))


def test_legacy_rollouts_and_other_formats_are_not_lengthened_and_the_baseline_draws_none() -> None:
    strategy = cc.transcripts("plain")
    assert ls.with_long_sessions("other-format", strategy) is strategy and not ls.lengthenable("other-format")
    with drawing(random.Random(1)) as draw:
        legacy = draw(codex.transcripts("calls", "legacy"))
    assert ls.lengthened(legacy, ls.LongSession(ls.LONGEST, 1)) is legacy
    # The baseline (a run context's long_shapes false) asks for none: no long session, no long property.
    assert ls.with_long_sessions(cc.FORMAT, strategy, enabled=False) is strategy and ls.lengthenable(cc.FORMAT)
    assert not any(generated.long for generated in generated_inputs(cc.FORMAT, long_shapes=False))
    assert any(generated.long for generated in generated_inputs(cc.FORMAT))
    assert find(ls.long_sessions(enabled=False), lambda shape: True) == ls.NONE
