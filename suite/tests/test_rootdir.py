"""``--report-dir out`` written with a space: pytest reads ``out`` as a path before the plugin loads and
moves its rootdir there, losing the checkout's configuration.  The plugin does not depend on it: the
bare ``pytest`` in the checkout still collects the conformance suite, and result IDs stay case IDs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _pytest(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def test_the_bare_run_in_the_checkout_still_certifies(tmp_path: Path) -> None:
    found = _pytest("--report-dir", str(tmp_path), "-m", "corpus", "-k", "ASR-164", "--co", "-q")
    assert "test_validator_case[validator/ASR-164/" in found.stdout, found.stdout[-2000:] + found.stderr[-2000:]
    assert "suite/tests" not in found.stdout and found.returncode == 0


def test_result_ids_do_not_move_with_the_rootdir(tmp_path: Path) -> None:
    found = _pytest(f"--implementation={ROOT / 'examples' / 'reference-validator'}", "--report-dir", str(tmp_path),
                    "-m", "corpus", "-k", "ASR-164", cwd=tmp_path)
    assert found.returncode == 0, found.stdout[-2000:]
    report = json.loads((tmp_path / "report.json").read_text())
    assert {r["id"] for r in report["results"]} and all(r["id"].startswith("validator/ASR-1") for r in report["results"])
