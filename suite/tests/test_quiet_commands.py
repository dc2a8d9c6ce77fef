"""Commands that run no test leave the report folder as it was: pytest's --markers, --fixtures,
--setup-plan, --collect-only, --help and --version neither remove an earlier report nor write a
"does not conform" one in its place.  A run that does execute tests still replaces it."""

from __future__ import annotations

from pathlib import Path

import pytest
from certifying import run_certification

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "examples" / "reference-validator"
EARLIER = {"report.json": '{"earlier": true}\n', "summary.md": "earlier\n", "report.html": "earlier\n",
           "badge-validator.json": '{"message": "earlier"}\n'}


def _earlier_report(folder: Path) -> None:
    folder.mkdir(parents=True)
    for name, text in EARLIER.items():
        (folder / name).write_text(text)


def _unchanged(folder: Path) -> bool:
    return {p.name: p.read_text() for p in folder.iterdir()} == EARLIER


@pytest.mark.parametrize("option", ["--markers", "--fixtures", "--setup-plan", "--setup-only", "--collect-only",
                                    "--help", "--version"])
def test_a_command_that_runs_no_test_leaves_the_report_folder_alone(pytester: pytest.Pytester, option: str) -> None:
    folder = pytester.path / "out"
    _earlier_report(folder)
    result = run_certification(f"--implementation={REFERENCE}", f"--report-dir={folder}", "-m", "ASR-164", option,
                               cwd=pytester.path, all_plugins=True)
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED), result.stdout.str()[-2000:]
    assert _unchanged(folder)


def test_a_run_that_executes_tests_replaces_the_earlier_report(pytester: pytest.Pytester) -> None:
    """The other side: the same command without the option runs cases and writes its own report."""
    folder = pytester.path / "out"
    _earlier_report(folder)
    result = run_certification(f"--implementation={REFERENCE}", f"--report-dir={folder}", "--hypothesis-profile=asr-fast",
                               "-m", "corpus", "-k", "ASR-164", cwd=pytester.path)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-2000:]
    assert not _unchanged(folder)
    assert '"earlier"' not in (folder / "report.json").read_text()
    assert "earlier" not in (folder / "badge-validator.json").read_text()
