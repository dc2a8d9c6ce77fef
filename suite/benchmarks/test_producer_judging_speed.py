"""How long the producer judging of one input takes, with all its source edits, against a plain parse
of its stream: the output check, the fidelity check and every edit's check, conversions excluded.

The input is the generated Claude Code transcript of ``test_witness_speed``; the baseline and each
edited copy are converted once, before timing. Each round starts with no stream parsed and no facts
read, as the first test of an input does. No timed assertions; ``extra_info`` holds the judging time
as a ratio of one strict parse of the stream (``judging_per_parse``), with the edit count.

    pytest -p no:xdist --benchmark-only suite/benchmarks/test_producer_judging_speed.py

ASR_PRODUCER_BENCH_BYTES sets the transcript's size (default 2 MB).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_witness_speed import SESSION, generate

from asr_conformance.harness.judging import produced
from asr_conformance.harness.judging.fidelity import judge_fidelity, judge_mutation, mutations_of
from asr_conformance.harness.judging.produced import ProducedStream
from asr_conformance.harness.judging.producer import output_problems
from asr_conformance.harness.judging.readings import Readings
from asr_conformance.packs.registry import installed
from asr_conformance.packs.selection import sniffed

TRANSCRIPT_BYTES = int(os.environ.get("ASR_PRODUCER_BENCH_BYTES", 2_000_000))
CONVERTER = Path(__file__).resolve().parents[1] / "reference" / "claude_code_converter.py"
ROUNDS = 3


def _convert(data: bytes, folder: Path) -> bytes:
    source = folder / f"{SESSION}.jsonl"
    source.write_bytes(data)
    return subprocess.run([sys.executable, str(CONVERTER), str(source)], capture_output=True, check=True).stdout


def test_judging_one_input_with_its_edits(benchmark, tmp_path: Path) -> None:
    data = generate(TRANSCRIPT_BYTES)
    pack = sniffed(data, installed()).pack
    assert pack is not None
    edits = [m for m in mutations_of(pack) if m.apply(data) is not None]
    stream = _convert(data, tmp_path)
    converted = {edited: _convert(edited, tmp_path) for edited in (m.apply(data) for m in edits)}

    def judge() -> int:
        produced.forget()
        readings = Readings()  # a fresh runner's: the input is read once, for its fidelity and every edit
        findings = len(output_problems(stream)) + len(judge_fidelity(data, stream, readings=readings).findings)
        for mutation in edits:
            findings += len(judge_mutation(mutation, pack, data, stream, converted.__getitem__,
                                           readings=readings).findings)
        return findings

    assert benchmark.pedantic(judge, rounds=ROUNDS, iterations=1) == 0
    parse = min(_timed(lambda: ProducedStream.parse(stream)) for _ in range(ROUNDS))
    benchmark.extra_info.update({"input_bytes": len(data), "stream_bytes": len(stream), "edits": len(edits),
                                 "parse_seconds": parse,
                                 "judging_per_parse": benchmark.stats.stats.mean / parse})


def _timed(work) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


@pytest.fixture(autouse=True)
def _fresh_caches():
    """Leave no parsed stream behind for other benchmarks."""
    yield
    produced.forget()
