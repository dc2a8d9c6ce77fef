"""Producer fuzzing discriminates: a faithful converter passes generated transcripts, a converter that
breaks one rule fails naming it, and the failure comes back as a native file that replays.

The session is tested in process on transcripts built from the example samples (so these tests do not
depend on what the generators draw); the plan, the counterexample files and the options are tested
directly; whole runs with the generators go through pytest in a subprocess."""

from __future__ import annotations

import hashlib
import re
import tomllib
from collections.abc import Callable
from pathlib import Path

import producer_runs as runs
import pytest
from certifying import PLUGIN_DEFAULT_REPORT_DIR, Certification, run_certification
from hypothesis import given, settings
from hypothesis import strategies as st

from asr_conformance.generators.native import file_name, formats
from asr_conformance.generators.native.common import NativeTranscript
from asr_conformance.harness.adapters.answers import Conversion, Outcome
from asr_conformance.harness.adapters.targets import (
    CASE_SUFFIX,
    ProducerInput,
    Target,
    TargetError,
    canonical_formats,
    expand_inputs,
)
from asr_conformance.harness.fuzzing import producers
from asr_conformance.harness.fuzzing.producers import (
    GeneratedInput,
    ProducerFuzzSession,
    fuzz_plan,
    not_fuzzed,
    write_producer_counterexample,
)
from asr_conformance.harness.fuzzing.profiles import ShrinkBudget
from asr_conformance.harness.judging.fidelity import producer_sources
from asr_conformance.harness.judging.producer import ProducerRunner
from asr_conformance.packs.registry import installed
from asr_conformance.packs.selection import SourceInput

ROOT = Path(__file__).resolve().parents[2]
CC_SAMPLES = ROOT / "examples" / "claude-code-converter" / "samples"
CODEX_SAMPLES = ROOT / "examples" / "codex-converter" / "samples"
CC_CONVERTER = ROOT / "examples" / "claude-code-converter" / "asr-from-claude-code"
MISBEHAVING = ROOT / "examples" / "misbehaving"
ACME_SAMPLES = Path(__file__).resolve().parent / "producers" / "acme-samples"


def sample(name: str) -> NativeTranscript:
    """A sample file as a 'generated' transcript: the session under test sees no difference."""
    lines = (CC_SAMPLES / name).read_text(encoding="utf-8").rstrip("\n").split("\n")
    return NativeTranscript("claude-code-jsonl", "session", tuple(lines), frozenset({"calls"}))


def converter_target(program: Path) -> Target:
    return Target(key=program.name, name=program.name, version=None, command=(str(program),), protocol="oneshot",
                  timeout=30.0, roles=("producer",))


def session_for(convert: Callable[[Path], Conversion], tmp_path: Path, steps: int = 3) -> ProducerFuzzSession:
    return ProducerFuzzSession(convert, tmp_path / "scratch", tmp_path / "counterexamples", ["--implementation=x"],
                               settings(max_examples=3, derandomize=True, database=None, deadline=None),
                               None, ShrinkBudget(seconds=5.0, steps=steps))


def run_property(session: ProducerFuzzSession, transcripts: st.SearchStrategy[NativeTranscript]) -> None:
    @session.settings
    @given(transcripts, st.data())
    def faithful(transcript: NativeTranscript, data: st.DataObject) -> None:
        session.expect_faithful(transcript, data.draw, "claude-code-jsonl-calls")

    session.run(faithful)


@pytest.fixture
def runner(tmp_path: Path):
    made: list[ProducerRunner] = []

    def make(program: Path) -> Callable[[Path], Conversion]:
        made.append(ProducerRunner(converter_target(program), tmp_path / f"conversions-{len(made)}"))
        return lambda source: made[-1].convert(source, "baseline")

    yield make
    for each in made:
        each.close()


# --- the session, in process ------------------------------------------------------------


def test_a_faithful_converter_passes(runner, tmp_path: Path) -> None:
    session = session_for(runner(CC_CONVERTER), tmp_path)
    run_property(session, st.sampled_from([sample("fix-parser-test.jsonl"), sample("interrupted-edit.jsonl")]))
    assert session.examples >= 2 and session.counterexample is None


@pytest.mark.parametrize(("bug", "rule"), [("cc-drops-every-second-call", "ASR-157"), ("cc-renumbers-call-ids", "ASR-262")])
def test_a_converter_that_breaks_one_rule_fails_naming_it(runner, tmp_path: Path, bug: str, rule: str) -> None:
    session = session_for(runner(MISBEHAVING / bug), tmp_path)
    with pytest.raises(pytest.fail.Exception) as failure:
        run_property(session, st.just(sample("parallel-calls-and-upgrade.jsonl")))
    assert rule in session.broken and rule in str(failure.value)
    assert session.counterexample is not None
    written, replay = session.counterexample
    original = sample("parallel-calls-and-upgrade.jsonl").data()
    assert written.read_bytes() == session.disguised(original) != original, "the copy sent, disguised, is kept"
    case = tomllib.loads(written.with_name(written.name + CASE_SUFFIX).read_text(encoding="utf-8"))
    assert rule in case["rules"] and case["format"] == "claude-code-jsonl" and case["findings"]
    assert f"--inputs={written}" in replay and "'not fuzz'" in replay


def test_a_refusal_of_a_valid_transcript_fails(tmp_path: Path) -> None:
    def refuse(source: Path) -> Conversion:
        return Conversion(Outcome.REFUSED, refusal="unsupported input")

    session = session_for(refuse, tmp_path)
    with pytest.raises(pytest.fail.Exception, match="refused on a generated claude-code-jsonl transcript"):
        run_property(session, st.just(sample("plain-chat.jsonl")))


def test_an_invalid_stream_fails_with_the_output_rule(tmp_path: Path) -> None:
    def garbage(source: Path) -> Conversion:
        return Conversion(Outcome.CONVERTED, stream=b'{"type":"message"}\n')

    session = session_for(garbage, tmp_path)
    with pytest.raises(pytest.fail.Exception, match="breaks"):
        run_property(session, st.just(sample("plain-chat.jsonl")))
    assert "ASR-003" in session.broken


def test_each_run_disguises_the_same_transcript_differently_and_a_seed_replays_it(tmp_path: Path) -> None:
    data = sample("plain-chat.jsonl").data()

    def disguised(seed: int | None) -> bytes:
        return ProducerFuzzSession(lambda _: Conversion(Outcome.REFUSED), tmp_path, tmp_path, [], settings(), seed,
                                   None).disguised(data)

    assert disguised(1) == disguised(1) != disguised(2)
    assert data not in (disguised(1), disguised(2), disguised(None))


def test_a_transcript_run_again_is_disguised_once_and_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hypothesis runs a transcript more than once (a failure replayed, shrinking): the session draws its copy
    once, the copy a fresh session draws; a kept copy never stands for other bytes."""
    data, other = sample("plain-chat.jsonl").data(), sample("fix-parser-test.jsonl").data()
    fresh = ProducerFuzzSession(lambda _: Conversion(Outcome.REFUSED), tmp_path, tmp_path, [], settings(), 7, None)
    expected = {data: fresh.disguised(data), other: fresh.disguised(other)}
    drawn: list[bytes] = []
    real = producers.disguise

    def counted(source: bytes, seed: int, texts: bool = True) -> bytes:
        drawn.append(source)
        return real(source, seed, texts)

    monkeypatch.setattr(producers, "disguise", counted)
    session = ProducerFuzzSession(lambda _: Conversion(Outcome.REFUSED), tmp_path, tmp_path, [], settings(), 7, None)
    copies = [session.disguised(data), session.disguised(other), session.disguised(data), session.disguised(other)]
    assert copies == [expected[data], expected[other]] * 2
    assert drawn == [data, other]


def test_the_converter_sees_only_a_name_the_agent_would_write(tmp_path: Path) -> None:
    seen: list[str] = []

    def record(source: Path) -> Conversion:
        seen.append(source.name)
        return Conversion(Outcome.REFUSED, refusal="no")

    session = session_for(record, tmp_path, steps=0)
    transcript = sample("plain-chat.jsonl")
    with pytest.raises(pytest.fail.Exception):
        run_property(session, st.just(transcript))
    digest = hashlib.sha256(session.disguised(transcript.data())).hexdigest()
    assert seen[0] == file_name("claude-code-jsonl", digest)
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-8[0-9a-f]{3}-[0-9a-f]{12}\.jsonl", seen[0])
    assert re.fullmatch(r"rollout-2026-03-01T09-00-00-[0-9a-f-]{36}\.jsonl", file_name("codex-rollout-jsonl", digest))
    assert re.fullmatch(r"session-2026-03-01T09-00-[0-9a-f]{8}\.jsonl", file_name("gemini-cli-session", digest))


# --- the plan, the options, the files -------------------------------------------------------


def test_the_not_fuzzed_reason_is_the_plans_own_sentence() -> None:
    """One sentence for the skip and the record: every plan's reason once, the fallback only with no property."""
    bare = fuzz_plan((), _sources(expand_inputs([str(ACME_SAMPLES)])))
    fuzzed = fuzz_plan((formats()[0],), _sources(expand_inputs([str(ACME_SAMPLES)])))
    assert not_fuzzed([bare, bare, fuzzed]) == bare.reason
    assert not_fuzzed([fuzzed]) is None
    assert not_fuzzed([]) == "not fuzzed: no implementation plays the producer role"


def _sources(inputs: list[ProducerInput]) -> list[SourceInput]:
    """The inputs as collection makes them (each sniffed once, its pack chosen)."""
    return list(producer_sources(inputs, installed()).values())


def test_formats_come_from_the_inputs_or_the_option() -> None:
    assert fuzz_plan((), _sources(expand_inputs([str(ACME_SAMPLES)]))).reason.startswith("not fuzzed: none of the inputs")
    for fmt in formats():
        plan = fuzz_plan((fmt,), _sources(expand_inputs([str(ACME_SAMPLES)])))
        assert plan.inputs and not plan.reason and {p.format for p in plan.inputs} == {fmt}
    assert set(formats()) == {"claude-code-jsonl", "codex-rollout-jsonl", "gemini-cli-session"}
    plan = fuzz_plan((), _sources(expand_inputs([str(CC_SAMPLES)])))
    assert {p.format for p in plan.inputs} == {"claude-code-jsonl"} and len({p.id for p in plan.inputs}) == len(plan.inputs)


def test_a_rare_variant_is_fuzzed_only_for_inputs_that_follow_it() -> None:
    """Codex's legacy rollouts: only a producer whose own inputs are legacy is asked to read them."""
    current = [i for i in expand_inputs([str(CODEX_SAMPLES)]) if not i.path.name.startswith("legacy")]
    plan = fuzz_plan((), _sources(current))
    assert plan.inputs and all(p.variant is None for p in plan.inputs)
    legacy = fuzz_plan((), _sources(expand_inputs([str(CODEX_SAMPLES)])))
    rare = [p for p in legacy.inputs if p.variant == "legacy"]
    assert rare and {p.feature for p in rare} < {p.feature for p in plan.inputs}


def test_format_names_are_those_the_witnesses_accept() -> None:
    assert canonical_formats(["codex", "Claude Code"], "--source-format") == ("codex-rollout-jsonl", "claude-code-jsonl")
    assert canonical_formats(["gemini", "Gemini_CLI.jsonl"], "--source-format") == ("gemini-cli-session",)
    with pytest.raises(TargetError, match="--source-format=acme-log: no installed format pack reads this format; available: claude-code-jsonl"):
        canonical_formats(["acme-log"], "--source-format")


def test_a_case_description_is_never_an_input(tmp_path: Path) -> None:
    source, _ = write_producer_counterexample(tmp_path, "claude-code-jsonl-calls", b'{"type":"user"}\n',
                                              "claude-code-jsonl", "session", ["calls"], ["ASR-157"], "a transcript",
                                              ["ASR-157 (completeness): missing"], ["--implementation=x"])
    found = expand_inputs([str(tmp_path)])
    assert [item.path for item in found] == [source]
    assert [item.path for item in expand_inputs([f"{tmp_path}/**/*"])] == [source]


def test_generated_input_ids_name_format_variant_and_feature() -> None:
    assert GeneratedInput("codex-rollout-jsonl", "calls").id == "codex-rollout-jsonl-calls"
    assert GeneratedInput("codex-rollout-jsonl", "calls", "legacy").id == "codex-rollout-jsonl-legacy-calls"


def test_a_producer_needs_inputs_or_a_format(tmp_path: Path) -> None:
    from asr_conformance.harness.adapters.targets import resolve_targets

    with pytest.raises(TargetError, match="needs --inputs \\(or --source-format"):
        resolve_targets([str(CC_CONVERTER)], "producer", [], False, None, None)
    target, = resolve_targets([str(CC_CONVERTER)], "producer", [], False, None, None, ["claude-code"])
    assert target.source_formats == ("claude-code-jsonl",) and target.inputs == ()


def test_an_implementation_that_answers_differently_fails_cleanly(tmp_path: Path) -> None:
    """A converter that fails an example, then converts it when asked again, still fails (not a Hypothesis error)."""
    calls = {"n": 0}
    faithful = ProducerRunner(converter_target(CC_CONVERTER), tmp_path / "conversions")

    def sometimes(source: Path) -> Conversion:
        calls["n"] += 1
        if calls["n"] == 1:
            return Conversion(Outcome.REFUSED, refusal="not today")
        return faithful.convert(source, "baseline")

    session = session_for(sometimes, tmp_path, steps=20)
    try:
        with pytest.raises(pytest.fail.Exception, match="refused on a generated"):
            run_property(session, st.sampled_from([sample("plain-chat.jsonl"), sample("fix-parser-test.jsonl")]))
    finally:
        faithful.close()
    assert session.counterexample is not None


# --- whole runs, as a vendor starts them ------------------------------------------------------


def fuzz_run(pytester: pytest.Pytester, implementation: Path, *args: str) -> Certification:
    return run_certification(
        f"--implementation={implementation}", "-m", "fuzz", "-p", "no:xdist",
        "--asr-shrink-time=1", f"--report-dir={pytester.path / 'reports'}", *args, cwd=pytester.path)


def test_a_seeded_codex_bug_is_found_by_fuzzing_alone_and_replays(pytester: pytest.Pytester) -> None:
    import json
    import shlex

    from asr_conformance.vocabulary.schemas import check_report

    # The property catches this bug on some of its examples only (an old rollout always, a cli or desktop one
    # now and then), so a seeded run of up to sixty examples, not the eight fixed ones (which any new draw
    # in the generators reshuffles); it stops at the first failure.
    result = fuzz_run(pytester, MISBEHAVING / "codex-parses-exit-code-from-text", "--source-format=codex",
                      "-k", "exit-code-in-text and not legacy", "--hypothesis-profile=asr-certify",
                      "--hypothesis-seed=0", "--asr-shrink-time=0.2")  # any failing example replays: shrunk briefly
    text = result.stdout.str()
    assert result.ret == 1 and "FAILED" in text and "ASR-260" in text
    report = json.loads((pytester.path / "reports" / "report.json").read_text())
    check_report(report)
    row, = report["fuzz"]
    assert row["role"] == "producer" and row["counterexamples"] == 1 and row["examples"] > 0
    found, = report["counterexamples"]
    source = Path(found["path"])
    case = tomllib.loads(source.with_name(source.name + CASE_SUFFIX).read_text(encoding="utf-8"))
    assert "ASR-260" in case["rules"] and case["format"] == "codex-rollout-jsonl"
    assert source.parent == pytester.path / "reports" / "counterexamples" / "producer" / "codex-rollout-jsonl"
    command = shlex.split(found["replay"])
    assert command[0] == "pytest" and f"--inputs={source}" in command
    # The printed command's words, run as every certification of these tests is (a fork of the preloaded pytest):
    # the same arguments, without a second interpreter's start-up.
    replay = run_certification(*command[1:], "-p", "no:xdist", cwd=pytester.path, report_dir=PLUGIN_DEFAULT_REPORT_DIR)
    assert replay.ret == 1 and "ASR-260" in replay.text, replay.text[-3000:]


#: The codex properties a whole run certifies: tool calls in the current and the legacy variant (the rare variant its
#: inputs bring in) and the long sessions. Every feature of every variant is converted and judged in process with
#: every source edit (generators/test_native_codex.py, long sessions in generators/test_native_long_sessions.py);
#: this run proves the plugin runs a property of each kind over the persistent protocol and the faithful one passes.
CODEX_PROPERTIES = ("-k", "calls or mixed-long")


def test_a_faithful_codex_converter_passes_every_property(pytester: pytest.Pytester) -> None:
    plan = fuzz_plan((), _sources(expand_inputs([str(CODEX_SAMPLES)])))
    assert len(plan.inputs) >= 20  # one property each, as collected
    chosen = [p.id for p in plan.inputs if p.feature == "calls" or p.long]
    assert {p.variant for p in plan.inputs} == {None, "legacy"} and len(chosen) == 3, chosen
    result = fuzz_run(pytester, ROOT / "examples" / "codex-converter" / "asr-from-codex", f"--inputs={CODEX_SAMPLES}",
                      "--persistent", *CODEX_PROPERTIES)
    outcomes = result.parseoutcomes()
    assert "failed" not in outcomes and outcomes.get("passed", 0) == len(chosen), result.stdout.str()[-3000:]
    assert result.ret == 0


@pytest.fixture(scope="module")
def no_witness(tmp_path_factory: pytest.TempPathFactory) -> Certification:
    """``producer_runs.no_witness`` (test_fidelity_verdict.py reads it too): the fuzz test among every test."""
    return runs.no_witness(tmp_path_factory)


def test_a_producer_in_no_generated_format_is_told_why_it_is_not_fuzzed(no_witness: Certification) -> None:
    assert "-rs" in no_witness.args  # skip reasons shown
    assert "not fuzzed: none of the inputs is in a format an installed pack reads" in no_witness.stdout.str()
    report = no_witness.report
    assert report["fuzz"][0]["properties"] == 0 and report["fuzz"][0]["not_fuzzed"]


def test_a_format_alone_fuzzes_a_producer_and_says_its_own_input_tests_did_not_run(pytester: pytest.Pytester) -> None:
    result = run_certification(
        f"--implementation={ROOT / 'examples' / 'codex-converter' / 'asr-from-codex'}", "--persistent",
        "--source-format=codex", "-k", "plain or no-inputs", "-rs", "-p", "no:cacheprovider", "-p", "no:xdist",
        "--report-dir=none", cwd=pytester.path)
    text = result.stdout.str()
    assert result.ret == 0 and result.parseoutcomes().get("passed") == 1, text[-3000:]  # the plain property
    assert "no producer inputs of its own (--inputs, or inputs in the manifest)" in text
    assert "got empty parameter set" not in text


def test_findings_that_quote_hostile_text_still_make_a_readable_case(tmp_path: Path) -> None:
    hostile = ["ASR-157: the stream says 'a\x7fb\ud800c\x00\u2028🦀'"]
    source, _ = write_producer_counterexample(tmp_path, "p", b"{}\n", "claude-code-jsonl", "session", [], ["ASR-157"],
                                              "d", hostile, ["--implementation=x"])
    case = tomllib.loads(source.with_name(source.name + CASE_SUFFIX).read_text(encoding="utf-8"))
    assert case["findings"][0].startswith("ASR-157: the stream says 'a\x7fb") and "\x00" in case["findings"][0]
    assert case["findings"][0].endswith("\u2028🦀'")


def test_the_producer_fuzz_draws_its_long_sessions_from_the_runs_pool(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The conformance test hands its session's pool seed (the run's seed) and switch to the property it draws
    (``ProducerFuzzSession.for_run``): the long property's stretches and the others' occasional ones come from
    the pool of the run's seed, and a baseline session (``long_shapes`` false) lengthens nothing."""
    import dataclasses

    from asr_conformance.conformance import test_producer_fuzz as producer_fuzz
    from asr_conformance.generators.native import long_sessions
    from asr_conformance.reference.claude_code_converter import convert

    asked: list[long_sessions.LongSession] = []

    def lengthened(transcript: NativeTranscript, shape: long_sessions.LongSession) -> NativeTranscript:
        asked.append(shape)
        return dataclasses.replace(transcript)  # a copy, as a lengthened session is, without a MiB to convert

    monkeypatch.setattr(long_sessions, "lengthened", lengthened)
    drawn = {}
    for feature, long, long_shapes in (("mixed", True, True), ("calls", False, True), ("calls", False, False)):
        asked.clear()
        session = ProducerFuzzSession(lambda source: Conversion(Outcome.CONVERTED, stream=convert(source.read_bytes())),
                                      tmp_path / "scratch", tmp_path / "counterexamples", ["--implementation=x"],
                                      settings(max_examples=8, database=None, deadline=None), 4242,
                                      ShrinkBudget(seconds=1.0, steps=1), long_shapes=long_shapes)
        producer_fuzz.test_converts_generated_transcripts(GeneratedInput("claude-code-jsonl", feature, long=long),
                                                          session, lambda **facts: None)
        drawn[feature, long_shapes] = ({shape.pool for shape in asked if shape.lines}, len(asked))
    assert drawn[("mixed", True)][0] == {4242}
    assert drawn[("calls", True)][1] >= 8 and drawn[("calls", True)][0] <= {4242}
    assert drawn[("calls", False)] == (set(), 0)
