"""Reports reach their folder through fresh files renamed into place: planted files and links are
replaced or removed, never written through, and other files are left alone."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from asr_conformance.gate.verdict import Completeness
from asr_conformance.reports import ReportFolderError, write_reports
from asr_conformance.reports.badges import badge_files
from asr_conformance.reports.writing import clear_owned, install
from asr_conformance.vocabulary.schemas import check_report


def test_planted_badges_and_links_are_replaced_not_written_through(tmp_path: Path, folder: Path, report_of) -> None:
    folder.mkdir()
    elsewhere = tmp_path / "elsewhere.md"
    elsewhere.write_text("not yours")
    (folder / "summary.md").symlink_to(elsewhere)
    (folder / "report.json").symlink_to(tmp_path / "dangling")
    (folder / "badge-validator.json").write_text('{"message": "100%", "color": "brightgreen"}')
    (folder / "badge-reader.json").write_text('{"message": "100%", "color": "brightgreen"}')
    (folder / "notes.txt").write_text("kept")
    written = write_reports(report_of(), folder)
    assert elsewhere.read_text() == "not yours"
    assert not (tmp_path / "dangling").exists()
    assert written, "write_reports wrote nothing"
    for path in written.values():
        assert path.parent == folder and not path.is_symlink() and path.is_file()
    assert not (folder / "badge-reader.json").exists()  # a role this run did not play: not its badge
    assert json.loads((folder / "badge-validator.json").read_text())["color"] == "red"
    assert (folder / "notes.txt").read_text() == "kept"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".out.")] == []  # no staging folder left


def test_a_link_in_place_of_the_folder_is_replaced_by_a_folder(tmp_path: Path, report_of) -> None:
    target = tmp_path / "target"
    target.mkdir()
    link = tmp_path / "out"
    link.symlink_to(target)
    write_reports(report_of(), link)
    assert link.is_dir() and not link.is_symlink() and list(target.iterdir()) == []


def test_a_file_in_place_of_the_folder_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "out").write_text("x")
    with pytest.raises(ReportFolderError, match="not a folder"):
        install({"report.json": "{}"}, tmp_path / "out")


def test_lone_surrogates_do_not_empty_the_report(folder: Path, report_of) -> None:
    report = report_of(name="lone \ud800", rule="\udfff")
    write_reports(report, folder)
    data = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    assert check_report(data) is None
    assert data["implementations"][0]["name"] == "lone \ufffd"
    assert os.path.getsize(folder / "summary.md") > 0 and os.path.getsize(folder / "report.html") > 0


def test_an_incomplete_run_gets_no_passing_badge(folder: Path, report_of) -> None:
    report = report_of(completeness=Completeness(missing=("t::lost",)))
    report["results"] = [r for r in report["results"] if r["outcome"] == "pass"]
    report["verdicts"][0].update(verdict="incomplete")
    write_reports(report, folder)
    badge = json.loads((folder / "badge-validator.json").read_text())
    assert badge == {"schemaVersion": 1, "label": "ASR validator", "message": "incomplete run", "color": "lightgrey"}


def test_a_badge_name_cannot_leave_the_folder(report_of) -> None:
    report = report_of(key="../../escaped")
    report["implementations"].append(dict(report["implementations"][0], key="other"))
    report["verdicts"].append(dict(report["verdicts"][0], implementation="other"))
    assert set(badge_files(report)) == {"badge-_.._escaped-validator.json", "badge-other-validator.json"}


def test_a_run_starts_by_removing_the_last_runs_reports(tmp_path: Path, folder: Path, report_of) -> None:
    """A run killed before its end then leaves no earlier verdict to be read as its own."""
    write_reports(report_of(), folder)
    (folder / "notes.txt").write_text("kept")
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text("{}")
    (folder / "badge-other.json").symlink_to(elsewhere)
    assert sorted(clear_owned(folder)) == ["badge-other.json", "badge-validator.json", "report.html",
                                            "report.json", "summary.md"]
    assert [p.name for p in folder.iterdir()] == ["notes.txt"] and elsewhere.exists()


def test_the_report_carries_the_verdicts_the_run_decided() -> None:
    """The verdicts are computed once per run: the report takes the run's own, as decided."""
    from dataclasses import replace

    from asr_conformance.gate.results import Result
    from asr_conformance.reports.document import RunFacts, build_report

    facts = RunFacts(suite_version="0", corpus=Path("."), started="", duration=0.0,
                     implementations=[{"key": "acme", "roles": ["validator"]}], options={}, hypothesis={}, catalog={})
    results = [Result(id="v", implementation="acme", role="validator", kind="corpus", test="t", rules=[],
                      outcome="pass")]
    from asr_conformance.gate.verdict import RoleVerdict, VerdictKind

    # A verdict the results alone would not give (no counts): the report must show this one, as decided.
    decided = [RoleVerdict("acme", "validator", {}, 100, VerdictKind.CONFORMS)]
    assert build_report(replace(facts, verdicts=decided), results)["verdicts"] == [decided[0].to_json()]
    assert build_report(facts, results)["verdicts"][0]["verdict"] == "conforms"  # computed when not given
