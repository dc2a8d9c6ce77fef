"""Producer fuzzing alone finds every seeded-bug converter of every generated format, naming its rule.

The generator tests show which feature's transcripts expose each bug; here the fuzz session
(conversion by the one-shot script, output checks, fidelity, a drawn source edit, shrinking) runs
that feature's property against the script, as ``pytest --implementation=BUG -m fuzz`` does, and
must fail with the bug's rule and write a counterexample that holds it."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_native_claude_code import CATCHES
from test_native_codex import BUGS
from test_native_gemini import BUGS as GEMINI_BUGS

from asr_conformance.generators.native import long_sessions
from asr_conformance.harness.fuzzing import ShrinkBudget
from asr_conformance.harness.judging.producer import ProducerRunner
from asr_conformance.harness.producer_fuzzing import GeneratedInput, ProducerFuzzSession
from asr_conformance.harness.targets import CASE_SUFFIX, Target

MISBEHAVING = Path(__file__).resolve().parents[3] / "examples" / "misbehaving"
#: Every seeded bug: its format, the feature that exposes it and the rule it breaks.
SEEDED = {
    **{name: ("claude-code-jsonl", feature, rule) for name, (feature, rule) in CATCHES.items()},
    **{name: ("codex-rollout-jsonl", feature, rule) for name, (feature, rule) in BUGS.items()},
    **{name: ("gemini-cli-session", feature, rule) for name, (feature, rule) in GEMINI_BUGS.items()},
}


#: Seeded bugs that show only on a session of real size (``generators.native.long_sessions``): the format,
#: the feature whose property runs, the rule.
LONG_ONLY = {"cc-drops-late-calls": ("claude-code-jsonl", "plain", "ASR-157")}


def test_every_seeded_converter_is_fuzzed() -> None:
    assert sorted([*SEEDED, *LONG_ONLY]) == sorted(
        p.name for p in MISBEHAVING.iterdir() if p.name.startswith(("cc-", "codex-", "gemini-")))


def _session(name: str, tmp_path: Path, examples: int = 8) -> tuple[ProducerFuzzSession, ProducerRunner]:
    program = MISBEHAVING / name
    target = Target(key=name, name=name, version=None, command=(str(program),), protocol="oneshot", timeout=60.0,
                    roles=("producer",))
    runner = ProducerRunner(target, tmp_path / "conversions")
    session = ProducerFuzzSession(lambda source: runner.convert(source, "baseline"), tmp_path / "scratch",
                                  tmp_path / "counterexamples", [f"--implementation={program}"],
                                  settings(max_examples=examples, derandomize=True, database=None, deadline=None),
                                  None, ShrinkBudget(seconds=0.2, steps=2))
    return session, runner


def _property(session: ProducerFuzzSession, generated: GeneratedInput):
    @session.settings
    @given(generated.strategy(), st.data())
    def faithful(transcript, data: st.DataObject) -> None:
        session.expect_faithful(transcript, data.draw, generated.id)

    return faithful


def _failing_run(name: str, folder: Path, format: str, feature: str, rule: str, **options: int) -> Path:
    """Fuzz the seeded bug's feature; the run must fail with ``rule`` and write a counterexample (returned)."""
    session, runner = _session(name, folder, **options)
    try:
        with pytest.raises(pytest.fail.Exception) as failure:
            session.run(_property(session, GeneratedInput(format, feature)))
    finally:
        runner.close()
    assert rule in session.broken, str(failure.value)[:3000]
    assert session.counterexample is not None
    return session.counterexample[0]


@pytest.mark.parametrize("name", sorted(SEEDED))
def test_fuzzing_alone_finds_the_seeded_bug(name: str, tmp_path: Path) -> None:
    format, feature, rule = SEEDED[name]
    written = _failing_run(name, tmp_path, format, feature, rule)
    case = tomllib.loads(written.with_name(written.name + CASE_SUFFIX).read_text(encoding="utf-8"))
    assert rule in case["rules"] and case["format"] == format


@pytest.mark.parametrize("name", sorted(LONG_ONLY))
def test_a_bug_past_the_thousandth_record_is_found_only_with_long_sessions(
        name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without long sessions the fuzz passes the bug (every drawn session is short); with them (here
    in every example, as one example in ``TIERS`` draws one in a certification) it fails with its rule."""
    format, feature, rule = LONG_ONLY[name]
    long_sessions.enable(False)
    try:
        session, runner = _session(name, tmp_path / "short", examples=4)
        try:
            session.run(_property(session, GeneratedInput(format, feature)))
        finally:
            runner.close()
    finally:
        long_sessions.enable(True)
    assert not session.broken and session.counterexample is None
    monkeypatch.setattr(long_sessions, "TIERS", 1)
    written = _failing_run(name, tmp_path / "long", format, feature, rule, examples=2)
    assert written.read_bytes().count(b"\n") > 1_000  # the shrunk input keeps the long stretch the bug needs
