"""The ``asr-conformance`` command: ``summary`` re-reads a saved report alone and exits by its verdict,
``smoke`` is the start-up check with its exchange shown, ``--version`` names the suite."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from validator_runs import accept_all_with_junit

from asr_conformance import CORPUS_DIR, __version__
from asr_conformance.gate.results import Result
from asr_conformance.gate.verdict import Completeness
from asr_conformance.plugin.console import main
from asr_conformance.reports.document import RunFacts, build_report
from asr_conformance.vocabulary.rules import load_catalog

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def _report(outcomes: list[str], status: int, complete: bool = True) -> dict:
    results = [Result(id=f"validator/ASR-260/case-{i}", implementation="acme", role="validator", kind="corpus",
                      test=f"t::{i}", rules=["ASR-260"], outcome=outcome) for i, outcome in enumerate(outcomes)]
    facts = RunFacts(
        suite_version=__version__, corpus=CORPUS_DIR, started="2026-01-01T00:00:00+00:00", duration=1.0,
        implementations=[{"key": "acme", "name": "acme", "version": "2.0", "roles": ["validator"],
                          "protocol": "oneshot", "command": ["acme"]}],
        options={"partial": False}, hypothesis={"profile": "asr-fast", "seed": None}, catalog=load_catalog(),
        exit={"status": status, "reasons": [] if status == 0 else ["1 failing result(s)"]},
        completeness=Completeness(exit_status=status) if complete else Completeness(exit_status=2, interrupted=True),
    )
    return build_report(facts, results)


def _saved(tmp_path: Path, report: dict) -> Path:
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report))
    return path


def _run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(list(argv), out), out.getvalue()


def test_summary_of_a_conforming_report_exits_0(tmp_path: Path) -> None:
    code, text = _run("summary", str(_saved(tmp_path, _report(["pass", "pass", "not-scored"], 0))))
    assert code == 0
    assert "  validator: 2 pass, 1 not-scored" in text and text.rstrip().endswith("verdict: CONFORMS")


def test_summary_of_a_failing_report_exits_1_naming_the_rules(tmp_path: Path) -> None:
    code, text = _run("summary", str(_saved(tmp_path, _report(["pass", "fail"], 1))))
    assert code == 1
    assert "rules with failing cases: ASR-260" in text and "verdict: DOES NOT CONFORM" in text


@pytest.mark.parametrize(("outcomes", "status", "complete"), [(["pass", "fail"], 0, True), (["pass"], 0, False)],
                         ids=["exit-0-but-a-failure", "incomplete"])
def test_summary_goes_by_the_results_not_the_exit_status_alone(tmp_path: Path, outcomes, status, complete) -> None:
    code, text = _run("summary", str(_saved(tmp_path, _report(outcomes, status, complete))))
    assert code == 1 and "verdict: CONFORMS" not in text


def test_summary_renders_markdown_and_html_and_writes_them(tmp_path: Path) -> None:
    saved = _saved(tmp_path, _report(["pass"], 0))
    assert _run("summary", str(saved), "--format=markdown")[1].startswith("# ASR conformance: acme")
    assert _run("summary", str(saved), "--format=html")[1].startswith("<!DOCTYPE html>")
    code, _ = _run("summary", str(saved), "--out", str(tmp_path / "again"))
    assert code == 0
    assert {p.name for p in (tmp_path / "again").iterdir()} >= {"report.json", "summary.md", "report.html"}


@pytest.mark.parametrize("content", [None, "not json", '{"report_version": 1}'], ids=["missing", "not-json", "not-a-report"])
def test_summary_of_something_that_is_no_report_is_a_usage_error_naming_it(tmp_path: Path, content: str | None,
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "report.json"
    if content is not None:
        path.write_text(content)
    code, _ = _run("summary", str(path))
    assert code == 2 and str(path) in capsys.readouterr().err


def test_summary_repeats_what_the_run_printed(tmp_path_factory: pytest.TempPathFactory) -> None:
    """End to end: the terminal section of a real run (accept-all on ASR-164's cases, its report where the plugin
    puts it by default; test_junit_properties.py reads the run's JUnit XML) and ``summary`` of its report.json
    agree line for line."""
    result = accept_all_with_junit(tmp_path_factory)
    assert result.ret == 1
    section = result.stdout.str().split("= asr-conformance =", 1)[1].splitlines()[1:]
    printed = [line for line in section if not line.startswith(("report:", "="))]
    code, text = _run("summary", str(result.folder / "reports" / "out" / "report.json"))
    assert code == 1
    assert text.splitlines() == printed[:len(text.splitlines())]


def test_smoke_shows_the_exchange_of_a_persistent_start() -> None:
    code, text = _run("smoke", str(EXAMPLES / "reference.toml"))
    assert code == 0
    lines = text.splitlines()
    assert lines[1] == 'sent: {"cmd":"start","version":1}' and lines[2].startswith('received: {"version":1')
    assert "smoke: it starts and answers" in text


def test_smoke_of_a_command_that_does_not_start_exits_1(tmp_path: Path) -> None:
    manifest = tmp_path / "acme.toml"
    manifest.write_text('name = "acme"\ncommand = ["bin/acme"]\n')
    code, text = _run("smoke", str(manifest))
    assert code == 1 and "smoke: it does not start: the command" in text and "does not exist" in text


def test_smoke_of_a_missing_implementation_is_a_usage_error() -> None:
    assert _run("smoke", "no/such/implementation")[0] == 2


def test_the_installed_command_has_a_version() -> None:
    found = subprocess.run([sys.executable, "-m", "asr_conformance.plugin.console", "--version"],
                           capture_output=True, text=True, timeout=60)
    assert found.returncode == 0 and found.stdout.strip() == f"asr-conformance {__version__}"


def test_summary_of_a_partial_report_exits_10_with_its_own_word(tmp_path: Path) -> None:
    """A widened sandbox (any unchecked part) is partial: never exit 0, never the word CONFORMS."""
    report = _report(["pass", "pass"], 10)
    report["exit"]["reasons"] = []
    report["implementations"][0]["widened"] = ["environment passed through: ACME_KEY"]
    from asr_conformance.gate.verdict import verdicts

    report["verdicts"] = [v.to_json() for v in verdicts(report["implementations"], [
        Result(id=f"validator/ASR-260/case-{i}", implementation="acme", role="validator", kind="corpus",
               test=f"t::{i}", rules=["ASR-260"], outcome="pass") for i in range(2)])]
    code, text = _run("summary", str(_saved(tmp_path, report)))
    assert code == 10
    assert "verdict: PARTIAL: conforms on what was checked; not checked: widened sandbox: environment passed " \
        "through: ACME_KEY" in text
    # The same report without the widening conforms: the test can tell them apart.
    del report["implementations"][0]["widened"]
    report["verdicts"] = [v.to_json() for v in verdicts(report["implementations"], [
        Result(id="validator/ASR-260/case-0", implementation="acme", role="validator", kind="corpus", test="t::0",
               rules=["ASR-260"], outcome="pass")])]
    report["exit"]["status"] = 0
    code, _ = _run("summary", str(_saved(tmp_path, report)))
    assert code == 0
