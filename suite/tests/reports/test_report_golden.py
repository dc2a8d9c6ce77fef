"""The written reports of one in-process run, byte for byte against files kept beside this test.

The run is made the way the plugin makes one: each test's record rides on pytest reports
(setup, call, teardown), the collector turns them into results, the gate decides the verdicts
and ``write_reports`` writes report.json, summary.md, report.html and the badges (and the terminal's summary
of the saved report).  Every
outcome, verdict word and unchecked gap appears once, so a change to how outcomes, verdicts or
"not checked"/"not fuzzed" are carried that changes a byte of any report fails here.

Regenerate the kept files only for a change meant to alter reports:
``ASR_WRITE_GOLDEN=1 pytest suite/tests/reports/test_report_golden.py``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from asr_conformance.gate.integrity import Snapshot
from asr_conformance.gate.results import RECORD_PROPERTY, ResultCollector, TestRecord
from asr_conformance.gate.verdict import Completeness, verdicts
from asr_conformance.reports import write_reports
from asr_conformance.reports.document import RunFacts, build_report
from asr_conformance.reports.terminal import render_terminal
from asr_conformance.vocabulary.rules import load_catalog
from asr_conformance.vocabulary.schemas import check_report

GOLDEN = Path(__file__).parent / "golden"
NOT_FUZZED = "not fuzzed: no generator for acme-log (install a pack for that format that has one)"
NOT_CHECKED = "no witness for format 'acme-log'"
IMPLEMENTATIONS: list[dict[str, Any]] = [
    {"key": "acme", "name": "acme", "version": "1.0", "roles": ["validator", "reader"], "protocol": "oneshot",
     "command": ["acme"], "source": "acme", "inputs": [], "expectations": None},
    {"key": "conv", "name": "conv", "version": None, "roles": ["producer"], "protocol": "oneshot",
     "command": ["conv"], "source": "conv", "inputs": ["in/a.jsonl"], "expectations": None,
     "widened": ["environment passed through: CONV_KEY"]},
]


def _report(record: TestRecord, when: str, outcome: str, longrepr: Any = None,
            wasxfail: str | None = None) -> pytest.TestReport:
    report = pytest.TestReport(f"suite/t.py::{record.id}", ("suite/t.py", 1, record.id), {}, outcome, longrepr, when,
                               duration=0.5, user_properties=[(RECORD_PROPERTY, record.to_json())])
    if wasxfail is not None:
        report.wasxfail = wasxfail
    return report


def _skipped(record: TestRecord, reason: str) -> pytest.TestReport:
    return _report(record, "setup", "skipped", ("suite/t.py", 1, f"Skipped: {reason}"))


def _reports() -> list[pytest.TestReport]:
    def record(id: str, role: str = "validator", kind: str = "corpus", key: str = "acme",
               **fields: Any) -> TestRecord:
        return TestRecord(id, key, role, kind, ("ASR-260",)).with_(**fields)

    reasons = {"rejections": 2, "naming_a_broken_rule": 1, "naming_only_broken_rules": 1, "naming_no_rule": 1}
    passed = record("validator/ASR-260/valid-a", answer="accept", status="passed", reasons=reasons)
    failed = record("validator/ASR-260/invalid-b", answer="accept", status="failed", input="{}\n",
                    input_encoding="utf-8", input_size=3, input_clipped=False, expected="reject")
    crashed = record("validator/ASR-260/invalid-c", answer="crash")
    timed_out = record("validator/ASR-260/invalid-d", answer="timeout")
    excused = record("reader/ASR-260/case-e", role="reader", status="failed")
    reported = record("reader/ASR-260/case-f", role="reader", status="reported")
    fuzzed = record("validator/fuzz", kind="fuzz", fuzz_examples=40, seed=7,
                    counterexample=("cx/a.jsonl", "pytest --replay cx/a.jsonl"))
    produced = record("producer/test_output_conforms[a]", role="producer", kind="producer", key="conv",
                      status="passed", judge={"name": "acme-log", "version": "0.1", "distribution": "acme-log-pack",
                                                      "builtin": False, "sha256": "0" * 64})
    unchecked = record("producer/test_fidelity[a]", role="producer", kind="producer", key="conv",
                       fidelity_not_checked=NOT_CHECKED)
    not_fuzzed = record("producer/test_converts_generated_transcripts[not-fuzzed]", role="producer", kind="fuzz",
                        key="conv", not_fuzzed=NOT_FUZZED)
    return [
        _report(passed, "call", "passed"),
        _report(failed, "call", "failed", "AssertionError: accepted an invalid stream"),
        _report(crashed, "call", "failed", "the validator crashed"),
        _report(timed_out, "call", "failed", "no answer in 10 s"),
        _report(excused, "call", "skipped", "a known failure", wasxfail="expectations: rule ASR-260"),
        _skipped(reported, "implementation-defined: shown, not scored"),
        _report(fuzzed, "call", "failed", "Falsifying example"),
        _report(produced, "call", "passed"),
        _skipped(unchecked, f"fidelity not checked: {NOT_CHECKED}"),
        _skipped(not_fuzzed, NOT_FUZZED),
    ]


def written_reports(folder: Path) -> dict[str, bytes]:
    collector = ResultCollector()
    for report in _reports():
        collector.add(report)
    results = collector.all()
    completeness = Completeness(exit_status=1)
    facts = RunFacts(
        suite_version="0.0.0", corpus=Path("corpus"), started="2026-01-01T00:00:00+00:00", duration=1.0,
        implementations=IMPLEMENTATIONS, options={"partial": False}, hypothesis={"profile": "asr-fast", "seed": 7},
        catalog=load_catalog(), exit={"status": 1, "reasons": ["4 failing result(s)"]}, completeness=completeness,
        verdicts=verdicts(IMPLEMENTATIONS, results, completeness.complete), corpus_snapshot=Snapshot(Path("corpus")),
    )
    report = build_report(facts, results)
    write_reports(report, folder)
    found = {path.name: path.read_bytes() for path in sorted(folder.iterdir())}
    # What ``asr-conformance summary`` prints from the saved report.
    found["terminal.txt"] = "".join(f"{line}\n" for line in render_terminal(report)).encode()
    return found


def test_reports_are_byte_for_byte_the_kept_ones(tmp_path: Path) -> None:
    found = written_reports(tmp_path / "out")
    if os.environ.get("ASR_WRITE_GOLDEN"):
        GOLDEN.mkdir(exist_ok=True)
        for old in GOLDEN.iterdir():
            old.unlink()
        for name, data in found.items():
            (GOLDEN / name).write_bytes(data)
    kept = {path.name: path.read_bytes() for path in sorted(GOLDEN.iterdir())}
    assert sorted(found) == sorted(kept)
    for name, data in found.items():
        assert data == kept[name], name
    # The run shows every outcome and every kind of role verdict the reports lay out.
    text = found["report.json"].decode()
    assert check_report(json.loads(text)) is None, "the kept report is one the published schema accepts"
    for word in ('"fail"', '"crash"', '"timeout"', '"expected-fail"', '"not-scored"', '"skipped"', '"pass"',
                 '"does-not-conform"', '"partial"', NOT_CHECKED, NOT_FUZZED):
        assert word in text, word
