"""Commands that run no test leave the report folder as it was: pytest's --markers, --fixtures,
--setup-plan, --collect-only, --help and --version neither remove an earlier report nor write a
"does not conform" one in its place.  A run that does execute tests still replaces it."""

from __future__ import annotations

from pathlib import Path

import pytest
from certifying import run_certification

from asr_conformance.plugin.hooks import runs_tests

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


#: Every option with which pytest runs no test, as the plugin must see it (``hooks.runs_tests``).
QUIET = ["--markers", "--fixtures", "--setup-plan", "--setup-only", "--collect-only", "--help", "--version"]
#: A whole run for each way pytest ends such a command: before configuring any plugin (--version), after
#: configuring them without a session (--help), in a session without collection (--markers; --fixtures ends the
#: same way), with collection only (--collect-only), and through each test's setup (--setup-only; --setup-plan
#: turns it on too, and sets up nothing).
WHOLE = ["--version", "--help", "--markers", "--collect-only", "--setup-only"]


@pytest.mark.parametrize("option", WHOLE)
def test_a_command_that_runs_no_test_leaves_the_report_folder_alone(pytester: pytest.Pytester, option: str) -> None:
    folder = pytester.path / "out"
    _earlier_report(folder)
    result = run_certification(f"--implementation={REFERENCE}", f"--report-dir={folder}", "-m", "ASR-164", option,
                               cwd=pytester.path, all_plugins=True)
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED), result.stdout.str()[-2000:]
    assert _unchanged(folder)


@pytest.mark.parametrize("option", QUIET)
def test_the_plugin_knows_each_command_that_runs_no_test(pytester: pytest.Pytester, option: str) -> None:
    """Each option, parsed in process by pytest as the run parses it, is one the plugin stays out of; the whole
    runs above show that staying out leaves the report folder alone on each way such a command ends."""
    assert not runs_tests(pytester.parseconfig(f"--implementation={REFERENCE}", "-m", "ASR-164", option))
    assert runs_tests(pytester.parseconfig(f"--implementation={REFERENCE}", "-m", "ASR-164"))


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
