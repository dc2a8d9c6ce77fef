"""Fuzz throughput (examples per second) against the reference through one-shot
processes and through the persistent protocol, in one run (issue: fuzz harness)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings

from asr_conformance.generators.mutators import serialize
from asr_conformance.generators.streams import valid_streams
from asr_conformance.harness.adapters.oneshot import OneShotValidator
from asr_conformance.harness.adapters.persistent import PersistentImplementation

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
COUNT = 60


def _fuzz(adapter, scratch: Path) -> int:
    answered = []

    @settings(max_examples=COUNT, derandomize=True, database=None, deadline=None)
    @given(valid_streams())
    def run(records: list[dict]) -> None:
        stream = scratch / "fuzz.jsonl"
        stream.write_bytes(serialize(records))
        answered.append(adapter.validate(stream).outcome.value)

    run()
    assert set(answered) == {"accept"}, "the reference must accept every valid stream"
    return len(answered)


def test_fuzz_through_one_shot_processes(benchmark, tmp_path: Path) -> None:
    adapter = OneShotValidator([str(EXAMPLES / "reference-validator")])
    benchmark.extra_info["examples"] = benchmark.pedantic(_fuzz, args=(adapter, tmp_path), rounds=1, iterations=1)


def test_fuzz_through_the_persistent_protocol(benchmark, tmp_path: Path) -> None:
    adapter = PersistentImplementation([str(EXAMPLES / "reference-validator-persistent")])
    try:
        benchmark.extra_info["examples"] = benchmark.pedantic(_fuzz, args=(adapter, tmp_path), rounds=1, iterations=1)
    finally:
        adapter.close()
