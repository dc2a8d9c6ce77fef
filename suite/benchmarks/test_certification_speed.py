"""Cases per second through one-shot processes and through the persistent
protocol, against the bundled reference, in one run (README.md, Speed)."""

from __future__ import annotations

from pathlib import Path

from asr_conformance import CORPUS_DIR
from asr_conformance.harness.adapters.oneshot import OneShotValidator
from asr_conformance.harness.adapters.persistent import PersistentImplementation
from asr_conformance.vocabulary.cases import iter_cases

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
STREAMS = [case.stream for case in iter_cases(CORPUS_DIR, role="validator")]


def _run_all(adapter) -> int:
    answered = 0
    for stream in STREAMS:
        answered += adapter.validate(stream).outcome.is_verdict
    return answered


def test_corpus_through_one_shot_processes(benchmark) -> None:
    adapter = OneShotValidator([str(EXAMPLES / "reference-validator")])
    benchmark.extra_info["cases"] = len(STREAMS)
    assert benchmark.pedantic(_run_all, args=(adapter,), rounds=1, iterations=1) == len(STREAMS)


def test_corpus_through_the_persistent_protocol(benchmark) -> None:
    adapter = PersistentImplementation([str(EXAMPLES / "reference-validator-persistent")])
    benchmark.extra_info["cases"] = len(STREAMS)
    try:
        assert benchmark.pedantic(_run_all, args=(adapter,), rounds=3, iterations=1) == len(STREAMS)
    finally:
        adapter.close()
