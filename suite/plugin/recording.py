"""Each conformance test's record, held on its item and sent once with each of its reports.

Collection stamps the item (``stamp``); the test adds what it saw through the ``asr_record``
fixture (``Recorder``); ``attach`` puts the record into the report as one user property (and
the teardown report gets plain ones for JUnit XML: result ID, implementation, role, kind, rules), and
neutralizes the report's text on the way out: what an implementation wrote reaches the
terminal, the CI log and xdist's wire only without lone surrogates, escapes, controls or
workflow commands.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from asr_conformance.gate.results import RECORD_PROPERTY, TestRecord
from asr_conformance.vocabulary.redaction import redact
from asr_conformance.vocabulary.untrusted import needs_terminal_cleaning, terminal_block


class Recorder:
    """The record of one test so far; call it with field names of ``TestRecord`` to add what the test saw."""

    def __init__(self, record: TestRecord) -> None:
        self.record = record
        self._late: list[Callable[[], dict[str, Any]]] = []

    def __call__(self, **fields: Any) -> None:
        self.record = self.record.with_(**fields)

    def later(self, fields: Callable[[], dict[str, Any]]) -> None:
        """Fields read when a report is made (a fuzz session's example count and counterexample)."""
        self._late.append(fields)

    def current(self) -> TestRecord:
        for fields in self._late:
            self(**fields())
        return self.record


RECORDER_KEY = pytest.StashKey[Recorder]()


def stamp(item: pytest.Item, record: TestRecord) -> None:
    item.stash[RECORDER_KEY] = Recorder(record)


def recorder_of(item: pytest.Item) -> Recorder | None:
    return item.stash.get(RECORDER_KEY, None)


def attach(item: pytest.Item, report: pytest.TestReport) -> None:
    """Put the item's record into the report and make the report's text safe to print and send."""
    recorder = recorder_of(item)
    if recorder is None:
        return
    if report.when == "call" or not report.passed:  # a passing setup or teardown says nothing of the result
        report.user_properties.append((RECORD_PROPERTY, recorder.current().to_json()))
    if report.when == "teardown":  # JUnit XML takes a test's <property> elements from its teardown report
        report.user_properties.extend(junit_properties(recorder.record))
    neutralize(report)


def junit_properties(record: TestRecord) -> list[tuple[str, str]]:
    """What a CI reading JUnit XML needs to group results: the result ID, the implementation, the role, the
    kind and one ``asr_rule`` per rule ID."""
    return [("asr_result_id", record.id), ("asr_implementation", record.implementation), ("asr_role", record.role),
            ("asr_kind", record.kind), *(("asr_rule", rule) for rule in record.rules)]


def neutralize(report: pytest.TestReport) -> None:
    """Replace a report's failure text and captured sections when they hold what a terminal would obey."""
    if report.longrepr is not None and not isinstance(report.longrepr, tuple):
        given = report.longreprtext
        text = redact(given)
        if needs_terminal_cleaning(text):
            report.longrepr = terminal_block(text)
        elif text != given:
            report.longrepr = text
    elif isinstance(report.longrepr, tuple) and len(report.longrepr) == 3:
        path, line, reason = report.longrepr
        if needs_terminal_cleaning(str(reason)) or redact(str(reason)) != str(reason):
            report.longrepr = (path, line, terminal_block(redact(str(reason))))
    report.sections = [(title, terminal_block(redact(content))) for title, content in report.sections]
