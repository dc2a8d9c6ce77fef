"""The producer certifications that tests of more than one module read, each run once per test session
(``shared_certification``): the example converter one-shot on a sample, the two seeded producers
of the stream and its environment side by side on a slice, and a converter of a format no pack reads."""

from __future__ import annotations

from pathlib import Path

import pytest
from certifying import Certification, shared_certification

ROOT = Path(__file__).resolve().parents[2]
CONVERTER = ROOT / "examples" / "claude-code-converter" / "asr-from-claude-code"
SAMPLES = ROOT / "examples" / "claude-code-converter" / "samples"
MISBEHAVING = ROOT / "examples" / "misbehaving"
ACME = ROOT / "suite" / "tests" / "producers" / "acme-converter"
ACME_SAMPLES = ROOT / "suite" / "tests" / "producers" / "acme-samples"
#: The samples a seeded bug is judged on: a plain chat (no tool results), tool calls with exit codes,
#: parallel calls. Each bug shows on every input; three show it as well as nine, at a third of the cost.
SEEDED_SAMPLES = [SAMPLES / name for name in ("plain-chat.jsonl", "fix-parser-test.jsonl", "parallel-calls-and-upgrade.jsonl")]
#: The producer part of the conformance suite without the generated-transcript properties (``-m "not fuzz"``).
NOT_FUZZ = ("-p", "no:xdist", "-m", "not fuzz")
#: Two seeded producers judged on the stream and its environment (not fidelity), certified side by side.
STREAM_AND_ENVIRONMENT = ("emits-invalid-stream", "reads-working-directory")
#: Their run's slice: the test each bug fails and, for the other, one it passes (the conversion's working
#: directory), and the fidelity tests (not checked on an invalid stream); every test of the stream and its
#: environment is judged in process (``miniatures.judge_producer``).
WIRING_SLICE = ("-k", "test_output_conforms or test_independent_of and cwd or test_fidelity", "-rfs")


#: The sample of the one-shot run: tool calls with exit codes, every test of an input has something to check.
ONE_SHOT_SAMPLE = SAMPLES / "fix-parser-test.jsonl"


def example_converter_one_shot(factory: pytest.TempPathFactory) -> Certification:
    """The example converter, one-shot (a process per conversion), on ONE_SHOT_SAMPLE: every test of an input but
    the properties, skip reasons shown. The persistent run has every sample; the protocol, not the input, is what
    this run adds."""
    return shared_certification(factory, "example-converter-one-shot", f"--implementation={CONVERTER}",
                                f"--inputs={ONE_SHOT_SAMPLE}", *NOT_FUZZ, "-rs")


def stream_and_environment(factory: pytest.TempPathFactory) -> Certification:
    """Both seeded producers on SEEDED_SAMPLES in one run, one report column each: one pytest start-up, collection
    and report for both, on the slice that proves the programs are the bugs their miniatures are (each script
    starts the example converter: two interpreters a conversion)."""
    return shared_certification(factory, "producers-stream-and-environment",
                                *(f"--implementation={MISBEHAVING / name}" for name in STREAM_AND_ENVIRONMENT),
                                *(f"--inputs={sample}" for sample in SEEDED_SAMPLES), *NOT_FUZZ, *WIRING_SLICE)


def no_witness(factory: pytest.TempPathFactory) -> Certification:
    """The converter of a format no witness reads and no generator makes (``producers/acme-converter``) on its
    samples: every test, fuzz included, under a randomized profile (a randomized run earns badges), skip reasons
    shown, the report in ``out``."""
    return shared_certification(factory, "producer-no-witness", f"--implementation={ACME}",
                                f"--inputs={ACME_SAMPLES}", "-p", "no:xdist", "--hypothesis-profile=asr-fast", "-rs")
