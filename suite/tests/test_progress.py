"""Progress lines every --asr-progress seconds in the middle of a long case, naming the phase that runs,
without xdist as with it; between tests a role keeps the phase it was in, never "waiting"."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from certifying import run_certification

ROOT = Path(__file__).resolve().parents[2]
CASE = "ASR-075/valid-continuation-turn-ref"


def _slow_validator(folder: Path) -> Path:
    """Accepts every stream after a second (the tiny stream of the start-up check at once)."""
    path = folder / "slow-validator"
    path.write_text("#!/bin/sh\n[ $(wc -c < \"$1\") -lt 300 ] || sleep 1\nexit 0\n")
    path.chmod(0o755)
    return path


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["without-xdist", "with-xdist"])
def test_progress_shows_during_a_long_case_with_its_phase(pytester: pytest.Pytester, workers: tuple[str, ...]) -> None:
    validator = _slow_validator(pytester.path)
    result = run_certification(f"--implementation={validator}", "-p", "no:cacheprovider", "-q",
                               "--asr-progress=0.2", "--report-dir=none", "-m", "corpus", "-k", CASE,
                               *workers, cwd=pytester.path)
    assert result.ret == 0, result.stdout.str()[-2000:]
    lines = [line for line in result.stdout.lines if line.startswith("asr-conformance progress")]
    during = [line for line in lines if re.search(r"validator 0/1 done, 0 failing, phase: corpus$", line)]
    assert len(during) >= 2, lines  # the case takes a second: several lines while it runs
    assert lines[-1].endswith("validator 1/1 done, 0 failing, phase: done")
    assert not any(line.endswith("phase: waiting") for line in lines)
