"""Fuzz campaign throughput under HypoFuzz: examples per second per process against the reference validator,
one-shot and persistent, one process against four, in one run (``asr-conformance campaign``).

Each campaign fuzzes the validator's ``accepts_valid_streams`` property (the reference accepts every example,
so nothing is shrunk) for ``ASR_BENCH_CAMPAIGN_SECONDS`` (default 45) and is then stopped; a process's rate is
the examples its record counts over the time from its first example to its last record (collection and
fixtures left out, the one-shot processes' and the persistent process's start-ups in).  The benchmark's extra_info holds the
rates and the ratio of four processes to one: on a machine with fewer than four free cores, four processes
share them, and the ratio says how much each loses.

    pytest -p no:xdist --benchmark-only suite/benchmarks/test_campaign_speed.py
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from asr_conformance.plugin.campaign_record import load_records

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SECONDS = float(os.environ.get("ASR_BENCH_CAMPAIGN_SECONDS", 45))
#: The reference validator as each protocol starts it.
COMMANDS = {"oneshot": [f"--implementation={EXAMPLES / 'reference-validator'}"],
            "persistent": [f"--implementation={EXAMPLES / 'reference-validator-persistent'}"]}


def _per_process_rate(folder: Path, protocol: str, workers: int) -> tuple[float, int]:
    """Examples per second per process of one campaign, and the examples it ran in all."""
    persistent = ["--persistent"] if protocol == "persistent" else []
    done = subprocess.run(
        [sys.executable, "-m", "asr_conformance.plugin.console", "campaign",
         *COMMANDS[protocol], "-n", str(workers), "--time", str(SECONDS),
         "--report-dir", str(folder), "--", *persistent, "-k", "accepts_valid_streams"],
        cwd=folder.parent, env={**os.environ, "ASR_HYPOTHESIS_DB": str(folder / "db")}, capture_output=True, text=True,
        timeout=SECONDS + 120)
    assert done.returncode == 0, done.stdout[-3000:]
    records = load_records(folder)
    rates = []
    for record in records:
        examples = sum(int(p["examples"]) for p in record["properties"].values())
        if record.get("first_example") is None:
            continue
        rates.append(examples / max(float(record["updated"]) - float(record["first_example"]), 1e-9))
    assert rates
    return sum(rates) / len(rates), sum(sum(int(p["examples"]) for p in r["properties"].values()) for r in records)


@pytest.mark.parametrize("protocol", ["oneshot", "persistent"])
def test_campaign_examples_per_second_per_process(benchmark: Any, tmp_path: Path, protocol: str) -> None:
    pytest.importorskip("hypofuzz", reason="HypoFuzz is not installed: pip install -e '.[campaign]'")
    measured: dict[int, tuple[float, int]] = {}

    def one_and_four() -> None:
        for workers in (1, 4):
            measured[workers] = _per_process_rate(tmp_path / f"{protocol}-{workers}", protocol, workers)

    benchmark.pedantic(one_and_four, rounds=1, iterations=1)
    benchmark.extra_info.update({
        "per_process_1": round(measured[1][0], 1), "per_process_4": round(measured[4][0], 1),
        "examples_1": measured[1][1], "examples_4": measured[4][1],
        "ratio_4_to_1": round(measured[4][0] / measured[1][0], 2),
        "load_average": os.getloadavg()[0],
    })
