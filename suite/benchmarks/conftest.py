"""Shared inputs for the benchmarks: one large realistic stream per run.

Run them on their own, without xdist (pytest-benchmark disables itself under it):

    pytest -p no:xdist --benchmark-only suite/benchmarks

ASR_BENCH_BYTES sets the stream size (default 100 MB).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from asr_conformance.generators.realistic import write_realistic_stream

STREAM_BYTES = int(os.environ.get("ASR_BENCH_BYTES", 100_000_000))


@pytest.fixture(scope="session")
def big_stream(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, int]:
    """(path, records, bytes) of a generated stream of at least STREAM_BYTES."""
    path = tmp_path_factory.mktemp("bench") / "big.jsonl"
    records, written = write_realistic_stream(path, STREAM_BYTES)
    return path, records, written
