"""Producer fuzzing alone finds every seeded-bug converter of every generated format, naming its rule.

The generator tests show which feature's transcripts expose each bug; here the fuzz session
(conversion by the script, output checks, fidelity, a drawn source edit, shrinking) runs that
feature's property against the script, as ``pytest --implementation=BUG -m fuzz`` does, and must
fail with the bug's rule and write a counterexample that holds it.  The script runs in this process
as its command line would run it (``in_process``): this module is about what fuzzing finds, and a
process would add only an interpreter's start-up to each of its some two hundred conversions; the
whole runs of ``test_producer_fuzz_harness.py`` fuzz seeded bugs as processes through the plugin."""

from __future__ import annotations

import random
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from in_process import run_in_process, run_seeded_codex
from test_native_claude_code import CATCHES
from test_native_codex import BUGS
from test_native_gemini import BUGS as GEMINI_BUGS

from asr_conformance.harness.adapters.answers import Conversion, Outcome
from asr_conformance.harness.adapters.targets import CASE_SUFFIX
from asr_conformance.harness.fuzzing.producers import (
    LONG_FEATURE,
    GeneratedInput,
    ProducerFuzzSession,
    generated_inputs,
)
from asr_conformance.harness.fuzzing.profiles import DEFAULT_PROFILE, ShrinkBudget, ensure_profiles

MISBEHAVING = Path(__file__).resolve().parents[3] / "examples" / "misbehaving"
#: Every seeded bug: its format, the feature that exposes it and the rule it breaks.
SEEDED = {
    **{name: ("claude-code-jsonl", feature, rule) for name, (feature, rule) in CATCHES.items()},
    **{name: ("codex-rollout-jsonl", feature, rule) for name, (feature, rule) in BUGS.items()},
    **{name: ("gemini-cli-session", feature, rule) for name, (feature, rule) in GEMINI_BUGS.items()},
}


#: Seeded bugs that show only on a session of real size (``generators.native.long_sessions``): the format and
#: the rule.  Each misbehaves only past its 1,000th record (Gemini CLI: message), right on any short session.
LONG_ONLY = {
    "cc-drops-late-calls": ("claude-code-jsonl", "ASR-157"),
    "codex-drops-late-calls": ("codex-rollout-jsonl", "ASR-157"),
    "gemini-drops-late-calls": ("gemini-cli-session", "ASR-157"),
}
#: Fresh seeds per long-only bug in the campaign proof (the default run proves the fixed profile's run).
FRESH_SEEDS = 3


def test_every_seeded_converter_is_fuzzed() -> None:
    assert sorted([*SEEDED, *LONG_ONLY]) == sorted(
        p.name for p in MISBEHAVING.iterdir() if p.name.startswith(("cc-", "codex-", "gemini-")))


class _Runner:
    """The script's one-shot conversion in this process (``in_process``: a ``codex-*`` script's start of the
    example converter made once per distinct input), answered as the one-shot adapter reads an exit status:
    0 a stream, any other a refusal with its stderr."""

    def __init__(self, program: Path) -> None:
        self.program = program
        self.run = run_seeded_codex if program.name.startswith("codex-") else run_in_process

    def convert(self, source: Path) -> Conversion:
        code, stdout, stderr = self.run(self.program, source)
        if code != 0:
            return Conversion(Outcome.REFUSED, refusal=stderr.decode("utf-8", "replace").strip(),
                              message=f"exit status {code}")
        return Conversion(Outcome.CONVERTED, stream=stdout, sent=f"{self.program.name} {source}")

    def close(self) -> None:
        """Nothing stays running between inputs."""


def _session(name: str, tmp_path: Path, examples: int = 8, profile: str | None = None,
             seed: int | None = None, long_shapes: bool = True) -> tuple[ProducerFuzzSession, _Runner]:
    """A fuzz session of the seeded bug: ``examples`` derandomized examples, or a profile's settings (under
    ``seed``, as a certification with ``--hypothesis-seed`` runs, which draws the long sessions' pools from it
    too); ``long_shapes`` false: the baseline's, which draws no long session."""
    program = MISBEHAVING / name
    runner = _Runner(program)
    if profile is not None:
        ensure_profiles()
        chosen = settings.get_profile(profile)
    else:
        chosen = settings(max_examples=examples, derandomize=True, database=None, deadline=None)
    session = ProducerFuzzSession(runner.convert, tmp_path / "scratch",
                                  tmp_path / "counterexamples", [f"--implementation={program}"],
                                  chosen, seed, ShrinkBudget(seconds=0.2, steps=2), long_shapes=long_shapes)
    return session, runner


def _property(session: ProducerFuzzSession, generated: GeneratedInput):
    generated = session.for_run(generated)  # as the conformance test does: the session's pool seed and switch

    @session.settings_for(generated)
    @given(generated.strategy(), st.data())
    def faithful(transcript, data: st.DataObject) -> None:
        session.expect_faithful(transcript, data.draw, generated.id, edit=not generated.long)

    return faithful


def _failing_run(name: str, folder: Path, format: str, feature: str, rule: str, long: bool = False,
                 **options: Any) -> Path:
    """Fuzz the seeded bug's feature (or the long property); the run must fail with ``rule`` and write a
    counterexample (returned)."""
    session, runner = _session(name, folder, **options)
    try:
        with pytest.raises(pytest.fail.Exception) as failure:
            session.run(_property(session, GeneratedInput(format, feature, long=long)))
    finally:
        runner.close()
    assert rule in session.broken, str(failure.value)[:3000]
    assert session.counterexample is not None
    return session.counterexample[0]




@pytest.mark.parametrize("name", sorted(SEEDED))
def test_fuzzing_alone_finds_the_seeded_bug(name: str, tmp_path: Path) -> None:
    format, feature, rule = SEEDED[name]
    written = _failing_run(name, tmp_path, format, feature, rule, examples=8)
    case = tomllib.loads(written.with_name(written.name + CASE_SUFFIX).read_text(encoding="utf-8"))
    assert rule in case["rules"] and case["format"] == format


def _long_property(format: str) -> GeneratedInput:
    """The one long property of the format in a default run's plan (a producer that converts that format)."""
    long = [generated for generated in generated_inputs(format) if generated.long]
    assert long == [GeneratedInput(format, LONG_FEATURE, long=True)]
    return long[0]


@pytest.mark.parametrize("name", sorted(LONG_ONLY))
def test_a_bug_past_the_thousandth_record_is_found_by_the_default_run_only_with_long_sessions(
        name: str, tmp_path: Path, recwarn: pytest.WarningsRecorder) -> None:
    """Every default run holds the format's long property, whose one example (the default profile's eight
    over ``LONG_SHARE``) is a session of real size: under the fixed profile it fails the bug with its rule.
    Without long sessions the plan has no long property and the fuzz passes the bug (every drawn session
    is short), so this test fails if the long shapes stop reaching the bug. The failure of a session of real
    size leaves no warning behind (Hypothesis warns of the large text it writes of the failing arguments,
    which the harness never shows)."""
    format, rule = LONG_ONLY[name]
    assert not any(generated.long for generated in generated_inputs(format, long_shapes=False))
    session, runner = _session(name, tmp_path / "short", examples=4, long_shapes=False)
    try:
        session.run(_property(session, GeneratedInput(format, "calls")))
    finally:
        runner.close()
    assert not session.broken and session.counterexample is None
    long = _long_property(format)
    assert long.examples(settings.get_profile("asr-fixed").max_examples) == 1
    written = _failing_run(name, tmp_path / "long", format, long.feature, rule, long=True, profile="asr-fixed")
    assert written.read_bytes().count(b"\n") > 1_000  # the shrunk input keeps the long stretch the bug needs
    assert [str(w.message) for w in recwarn] == []


@pytest.mark.campaign
@pytest.mark.parametrize("name", sorted(LONG_ONLY))
def test_a_bug_past_the_thousandth_record_is_found_under_fresh_seeds(name: str, tmp_path: Path) -> None:
    """The default profile under ``FRESH_SEEDS`` fresh seeds (each a run's ``--hypothesis-seed``, the long
    stretch's pool drawn from it as a certification draws it): the long property fails the bug every time."""
    format, rule = LONG_ONLY[name]
    long = _long_property(format)
    for number in [random.getrandbits(32) for _ in range(FRESH_SEEDS)]:
        _failing_run(name, tmp_path / str(number), format, long.feature, rule, long=True, profile=DEFAULT_PROFILE,
                     seed=number)
