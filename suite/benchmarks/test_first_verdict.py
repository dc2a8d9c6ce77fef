"""Time to a verdict for a broken implementation against the reference, one-shot, in one run.

A whole certification (corpus and fuzz harness, two xdist workers) of the one-shot reference,
then of an accept-everything and a reject-everything validator.  The shrink budget should keep
each broken one within twice the reference's time; ``extra_info`` records each ratio to the
reference (no timed assertion: the numbers are for the report, the verdicts are asserted)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
IMPLEMENTATIONS = {
    "reference": EXAMPLES / "reference-oneshot.toml",
    "accept-all": EXAMPLES / "misbehaving" / "accept-all",
    "reject-all": EXAMPLES / "misbehaving" / "reject-all",
}
#: Seconds each certification took in this run, so the later ones can be compared with the reference.
TAKEN: dict[str, float] = {}


def _certify(implementation: Path, folder: Path) -> int:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", f"--implementation={implementation}", "-q", "-n", "2",
         "-p", "no:cacheprovider", f"--report-dir={folder}"],
        cwd=folder.parent, capture_output=True, text=True,
    )
    TAKEN[implementation.name] = time.monotonic() - started
    return done.returncode


@pytest.mark.parametrize("name", list(IMPLEMENTATIONS))
def test_time_to_a_verdict(benchmark, name: str, tmp_path: Path) -> None:
    implementation = IMPLEMENTATIONS[name]
    status = benchmark.pedantic(_certify, args=(implementation, tmp_path / "report"), rounds=1, iterations=1)
    assert status == (0 if name == "reference" else 1)  # the verdict: conforms, or does not
    seconds = TAKEN[implementation.name]
    benchmark.extra_info["seconds"] = round(seconds, 2)
    reference = TAKEN.get(IMPLEMENTATIONS["reference"].name)
    if reference and name != "reference":
        benchmark.extra_info["ratio_to_reference"] = round(seconds / reference, 3)
        print(f"\n{name}: {seconds:.1f} s, {seconds / reference:.2f}x the reference's {reference:.1f} s")
