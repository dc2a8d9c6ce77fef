"""The typed record of a test survives the trip through a report (as xdist sends it), and the
collector builds results, counterexamples included, from it and nothing else."""

from __future__ import annotations

import json

import pytest

from asr_conformance.gate.results import (
    RECORD_PROPERTY,
    Counterexample,
    ResultCollector,
    TestRecord,
    missing_result,
    record_of,
)

STAMP = TestRecord("validator/fuzz[x]", "acme", "validator", "fuzz", ("ASR-260",))


def report(nodeid: str, outcome: str, when: str = "call", record: TestRecord | None = STAMP,
           longrepr: object = None) -> pytest.TestReport:
    properties = [(RECORD_PROPERTY, record.to_json())] if record is not None else []
    return pytest.TestReport(nodeid, ("f.py", 1, nodeid), {}, outcome, longrepr, when, user_properties=properties)


def test_a_record_round_trips_through_json_with_its_counterexample() -> None:
    record = STAMP.with_(answer="accept", status="failed", rules_named=["ASR-002", "ASR-001"], input="{}",
                         counterexample=("reports/counterexamples/x.jsonl", "pytest -k x"), fuzz_examples=8,
                         seed=42, announced="acme 1.0")
    again = TestRecord.from_json(record.to_json())
    assert again == record
    assert again.counterexample == Counterexample("reports/counterexamples/x.jsonl", "pytest -k x")
    assert again.rules_named == ("ASR-001", "ASR-002")


def test_lone_surrogates_and_long_text_are_cleaned_on_the_way_in() -> None:
    record = STAMP.with_(rules_named=["\ud800", "ASR-001"], output="x\udfff" + "y" * 30_000)
    assert record.rules_named == ("ASR-001",), "a name that is no rule ID is no rule"
    assert record.output is not None and "\udfff" not in record.output and len(record.output) < 21_000
    text = record.to_json()
    text.encode("utf-8")  # would raise on a lone surrogate
    assert text.isascii()


def test_an_unknown_field_is_refused_when_recorded_and_ignored_when_read() -> None:
    with pytest.raises(TypeError):
        STAMP.with_(no_such_field=1)
    data = json.loads(STAMP.to_json())
    data["added_by_a_newer_worker"] = 1
    assert TestRecord.from_json(json.dumps(data)) == STAMP


def test_the_collector_takes_the_counterexample_from_the_record_not_the_message() -> None:
    collector = ResultCollector()
    record = STAMP.with_(counterexample=("cx/a.jsonl", "pytest --cases=cx -k a"), status="failed")
    collector.add(report("t::a", "failed", record=record, longrepr="counterexample (shrunk): forged\nreplay: rm -rf /"))
    (result,) = collector.all()
    assert result.outcome == "fail"
    assert result.counterexample == Counterexample("cx/a.jsonl", "pytest --cases=cx -k a")
    assert result.to_json()["counterexample"] == {"path": "cx/a.jsonl", "replay": "pytest --cases=cx -k a"}


def test_crash_answers_count_as_crashes_and_reported_skips_as_not_scored() -> None:
    collector = ResultCollector()
    collector.add(report("t::crash", "failed", record=STAMP.with_(answer="crash"), longrepr="boom"))
    collector.add(report("t::defined", "skipped", record=STAMP.with_(status="reported"),
                         longrepr=("f.py", 1, "Skipped: implementation-defined")))
    outcomes = {r.test: r.outcome for r in collector.all()}
    assert outcomes == {"t::crash": "crash", "t::defined": "not-scored"}


def test_a_clean_teardown_does_not_hide_a_failed_call() -> None:
    collector = ResultCollector()
    collector.add(report("t::a", "failed", longrepr="wrong"))
    collector.add(report("t::a", "passed", when="teardown"))
    assert collector.all()[0].outcome == "fail"


def test_a_report_without_a_record_is_kept_aside_when_it_failed() -> None:
    """xdist's report of a crashed worker carries no record: its message is kept for the missing result."""
    collector = ResultCollector()
    collector.add(report("t::lost", "failed", record=None, longrepr="worker 'gw0' crashed while running 't::lost'"))
    collector.add(report("t::other", "passed", record=None))
    assert collector.all() == []
    assert collector.unrecorded == {"t::lost": "worker 'gw0' crashed while running 't::lost'"}
    assert record_of(report("t::lost", "failed", record=None)) is None


def test_a_missing_result_is_a_crash() -> None:
    result = missing_result("t::lost", "acme", "validator", "corpus", "no result: \ud800")
    assert result.outcome == "crash" and "\ud800" not in result.message
