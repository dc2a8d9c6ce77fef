"""The Claude Code transcript generator: its transcripts are real transcripts to the witness, a
faithful converter passes every one of them (with every source edit), and each seeded bug fails
on some feature within a small budget."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from in_process import run_in_process

from asr_conformance.fidelity.claude_code import WITNESS
from asr_conformance.fidelity.compare import check_fidelity
from asr_conformance.fidelity.facts import SourceFacts
from asr_conformance.generators.native import claude_code as cc
from asr_conformance.generators.native.common import NativeTranscript, feature_names
from asr_conformance.harness.judging.fidelity import judge_fidelity, judge_mutation, mutations_of
from asr_conformance.packs.registry import installed
from asr_conformance.reference import claude_code_converter as example
from asr_conformance.reference.checks import validate_bytes

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "claude-code-converter" / "asr-from-claude-code"
MISBEHAVING = ROOT / "examples" / "misbehaving"
FEATURES = feature_names(cc.FEATURES)
FAST = settings(max_examples=25, derandomize=True, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
#: Which feature's transcripts catch each seeded bug (the rule each is listed with in
#: test_fidelity_seeded_bugs), within BUG_BUDGET derandomized examples.
CATCHES = {
    "cc-collapses-whitespace": ("plain", "ASR-157"),
    "cc-constant-session-id": ("plain", "ASR-051"),
    "cc-drops-every-second-call": ("parallel", "ASR-157"),
    "cc-drops-orphans": ("orphans", "ASR-266"),
    "cc-drops-refusal-permissions": ("interrupted", "ASR-157"),
    "cc-drops-user-messages": ("plain", "ASR-157"),
    "cc-duration-from-neighbours": ("durations", "ASR-261"),
    "cc-failed-as-completed": ("errors", "ASR-258"),
    "cc-fixed-output": ("calls", "ASR-051"),
    "cc-invents-answers": ("questions", "ASR-285"),
    "cc-invents-decisions": ("permission-modes", "ASR-270"),
    "cc-invents-exit-codes": ("calls", "ASR-260"),
    "cc-invents-parent-call-id": ("parallel", "ASR-275"),
    "cc-invents-permission-mode": ("calls", "ASR-187"),
    "cc-invents-turn-states": ("plain", "ASR-169"),
    "cc-flattens-nested-calls": ("code-caller", "ASR-157"),
    "cc-invents-hook-exit-codes": ("plain", "ASR-287"),
    "cc-invents-terminals": ("calls", "ASR-291"),
    "cc-invents-trigger": ("plain", "ASR-186"),
    "cc-invents-model-changes": ("plain", "ASR-172"),
    "cc-kind-from-input": ("calls", "ASR-253"),
    "cc-lowercases-tool-names": ("calls", "ASR-252"),
    "cc-refusal-as-compact-permission": ("interrupted", "ASR-279"),
    "cc-renumbers-call-ids": ("calls", "ASR-262"),
    "cc-requested-by-user": ("calls", "ASR-274"),
    "cc-shifts-timestamps": ("calls", "ASR-103"),
    "cc-synthesizes-dangling-results": ("dangling", "ASR-265"),
    "cc-truncates-output": ("calls", "ASR-259"),
}
BUG_BUDGET = 8
#: Transcripts per feature that the example converter converts, each with every source edit.
FAITHFUL_BUDGET = 8


@functools.cache
def examples(feature: str, count: int) -> tuple[NativeTranscript, ...]:
    """The first ``count`` derandomized transcripts of a feature (shared by the tests that convert them)."""
    found: list[NativeTranscript] = []

    @settings(FAST, max_examples=count, phases=[Phase.generate])
    @given(cc.transcripts(feature))
    def collect(transcript: NativeTranscript) -> None:
        found.append(transcript)

    collect()
    return tuple(found)


def shown(transcript: NativeTranscript) -> str:
    return transcript.summary() + "\n" + transcript.data().decode()[:4000]


@functools.cache
def run(converter: Path, data: bytes) -> bytes | str:
    """The stream a one-shot converter writes for these bytes, or why it wrote none.  A seeded-bug one (the
    example's conversion imported through ``_claude_code_wrapper`` and a change to its records) runs in this
    process, as its command line would run it (``in_process.run_in_process``); the example's script runs as
    a process of its own."""
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "session.jsonl"
        source.write_bytes(data)
        if converter.parent == MISBEHAVING:
            returncode, stdout, stderr = run_in_process(converter, source)
        else:
            done = subprocess.run([sys.executable, str(converter), str(source)], capture_output=True, timeout=60)
            returncode, stdout, stderr = done.returncode, done.stdout, done.stderr
    if returncode != 0:
        return f"{converter.name} exited {returncode}: {stderr.decode(errors='replace')}"
    return stdout


@functools.cache
def run_example(data: bytes) -> bytes | str:
    """The example converter's stream, run in this process (it is the reference's producer module)."""
    try:
        return example.convert(data)
    except example.Refused as why:
        return f"refused: {why}"


def stream_of(converter: Path, data: bytes) -> bytes:
    stream = run(converter, data)
    assert isinstance(stream, bytes), stream
    return stream


def records(stream: bytes) -> list[dict]:
    return [json.loads(line) for line in stream.decode("utf-8").split("\n") if line.strip()]


def facts_hold(feature: str, facts: SourceFacts) -> None:
    """What the witness itself sees of each feature."""
    names = [c.name for c in facts.calls]
    if feature == "plain":
        assert not facts.calls and facts.messages
    elif feature in ("calls", "parallel", "errors", "empty-output", "durations", "arguments"):
        assert facts.calls and facts.results
    if feature == "duplicate-ids":
        assert facts.duplicate_ids()
    elif feature == "dangling":
        assert facts.dangling()
    elif feature == "orphans":
        assert facts.orphans()
    elif feature in ("errors", "interrupted"):
        assert any("completed" not in r.statuses for r in facts.results)
    elif feature == "empty-output":
        assert any(not any(r.model_texts or ()) for r in facts.results)
    elif feature == "arguments":
        assert any(_huge(c.arguments) for c in facts.calls)
    elif feature == "compaction":
        assert facts.skipped.get("system:compact_boundary") and facts.skipped.get("user:isCompactSummary")
    elif feature == "questions":
        assert facts.questions
    elif feature == "subagent":
        assert "Task" in names and facts.parent_links
    elif feature == "permission-modes":
        assert len(facts.permission_modes) >= 2
    elif feature == "meta":
        assert facts.skipped.get("user:isMeta") and facts.skipped.get("user:harness-text")
    elif feature == "version-upgrade":
        assert len(facts.agent_versions) >= 2
    elif feature == "durations":
        assert any(r.timing.duration_ms is not None for r in facts.results)
    elif feature == "code-caller":
        assert any(c.requested_by == "code" and c.parent_call_id for c in facts.calls)
    elif feature == "parallel":
        assert len(facts.calls) >= 2


def _huge(value: object) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return abs(value) >= 2**64
    if isinstance(value, dict):
        return any(_huge(v) for v in value.values())
    if isinstance(value, list):
        return any(_huge(v) for v in value)
    return False


@pytest.mark.parametrize("feature", [*FEATURES, cc.MIXED])
def test_the_witness_reads_every_transcript_and_sees_its_feature(feature: str) -> None:
    @FAST
    @given(cc.transcripts(feature))
    def check(transcript: NativeTranscript) -> None:
        data = transcript.data()
        assert WITNESS.sniff(data) and cc.variant_of(data) == "session"
        facts = WITNESS.read(data)
        assert transcript.features <= set(cc.FEATURES), transcript.summary()
        if feature != cc.MIXED:
            assert feature in transcript.features, transcript.summary()
        for held in transcript.features:
            facts_hold(held, facts)
        assert 2 <= len(transcript.lines) <= 60, transcript.summary()  # small: about 17 lines on average

    check()


@pytest.mark.parametrize("feature", [*FEATURES, cc.MIXED])
def test_a_faithful_converter_passes_every_transcript_and_every_source_edit(feature: str) -> None:
    pack = installed().for_format(WITNESS.format)
    mutations = mutations_of(pack)
    transcripts = list(examples(feature, FAITHFUL_BUDGET))
    assert mutations and transcripts
    for transcript in transcripts:
        data = transcript.data()
        stream = run_example(data)
        assert isinstance(stream, bytes), (stream, shown(transcript))
        outcome = validate_bytes(stream)
        assert outcome.valid, ([(d.rule, d.message) for d in outcome.errors][:5], shown(transcript))
        fidelity = judge_fidelity(data, stream)
        assert fidelity.not_checked is None and fidelity.findings == [], (fidelity, shown(transcript))
        for mutation in mutations:
            judged = judge_mutation(mutation, pack, data, stream, run_example)
            assert judged.findings == [], (mutation.name, judged.findings, shown(transcript))


@pytest.mark.parametrize("name", sorted(CATCHES))
def test_each_seeded_bug_is_caught_by_its_feature(name: str) -> None:
    feature, rule = CATCHES[name]
    caught: set[str] = set()
    for transcript in examples(feature, BUG_BUDGET):
        data = transcript.data()
        stream = stream_of(MISBEHAVING / name, data)
        assert validate_bytes(stream).valid, shown(transcript)
        caught.update(f.rule for f in check_fidelity(WITNESS.read(data), records(stream)))
        if rule in caught:
            return
    pytest.fail(f"{name} is not caught with {rule} by {BUG_BUDGET} transcripts of {feature}: {sorted(caught)}")


def test_the_example_converter_in_process_is_the_one_shot_script() -> None:
    """The faithful-converter test runs the example in process; the script gives the same bytes."""
    transcripts = list(examples(cc.MIXED, 2))
    assert transcripts
    for transcript in transcripts:
        assert stream_of(EXAMPLE, transcript.data()) == run_example(transcript.data())


def test_every_seeded_bug_has_a_catching_feature() -> None:
    long_only = ("cc-drops-late-calls",)  # only past the 1,000th record: test_fuzzing_finds_seeded_bugs.py
    assert sorted([*CATCHES, *long_only]) == sorted(p.name for p in MISBEHAVING.glob("cc-*"))
    assert {feature for feature, _ in CATCHES.values()} <= set(cc.FEATURES)


def test_the_same_draws_give_the_same_transcripts() -> None:
    def first(feature: str) -> list[bytes]:
        found: list[bytes] = []

        @settings(FAST, max_examples=5)
        @given(cc.transcripts(feature))
        def collect(transcript: NativeTranscript) -> None:
            found.append(transcript.data())

        collect()
        return found

    assert first(cc.MIXED) == first(cc.MIXED)


def test_unknown_features_and_variants_are_refused_with_the_known_ones() -> None:
    with pytest.raises(ValueError, match="duplicate-ids") as refused:
        cc.transcripts("no-such-feature")
    assert "mixed" in str(refused.value) and "no-such-feature" in str(refused.value)
    with pytest.raises(ValueError, match="session"):
        cc.transcripts("calls", variant="desktop")
    assert cc.transcripts("calls", variant="session") is not None


def test_the_catalogue_is_complete() -> None:
    assert set(cc.FEATURES) == set(cc.EPISODES)
    assert len(cc.FEATURES) == 18 and all(cc.FEATURES.values()) and set(cc.VARIANTS) == {"session"}


@pytest.mark.parametrize("data, variant", [
    (b'{"type":"summary","summary":"x","leafUuid":"u"}\n', "session"),
    (b'{"type":"session_meta","payload":{"id":"x"}}\n', None),
    (b"not json\n", None),
    (b"", None),
    (b'{"type":"user","message":{"role":"user","content":"hi"}}\n', None),
])
def test_variant_of(data: bytes, variant: str | None) -> None:
    assert cc.variant_of(data) == variant


@given(st.data())
@settings(FAST, max_examples=5)
def test_every_sample_variant_is_session(data: st.DataObject) -> None:
    transcript = data.draw(cc.transcripts())
    assert cc.variant_of(transcript.data()) == transcript.variant == "session"
