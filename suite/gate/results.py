"""One result per conformance test, gathered from pytest's reports.

Every process runs the tests, but only the one that receives every report
(the xdist controller, or the single process) gathers them: pytest-xdist
sends each worker's ``TestReport`` to the controller with its
``user_properties``.  The plugin stamps each item with its result ID, role,
implementation and rules at collection; the test adds what it saw (the
answer, the input, the output, what was expected).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import pytest

#: Every outcome a result can have, in the order reports list them.
OUTCOMES = ("fail", "crash", "timeout", "pass", "expected-fail", "not-scored", "skipped")
#: Outcomes that count against an implementation.
FAILING = frozenset({"fail", "crash", "timeout"})
#: Outcomes that were executed and scored.
SCORED = FAILING | {"pass", "expected-fail"}
#: How much of an input or output a result keeps.
CLIP = 20_000


@dataclass
class Result:
    id: str
    implementation: str
    role: str
    kind: str
    test: str
    rules: list[str]
    outcome: str
    message: str = ""
    input: str | None = None
    output: str | None = None
    expected: str | None = None
    duration: float = 0.0
    #: For an expected failure: which entry (expectations file or baseline) excused it.
    excused_by: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {key: value for key, value in asdict(self).items() if value not in (None, {}, "")}


def clip(text: str | None, limit: int = CLIP) -> str | None:
    if text is None or len(text) <= limit:
        return text
    return text[:limit] + f"\n... ({len(text) - limit} more characters)"


class ResultCollector:
    """Turns the setup/call/teardown reports of each test into one Result."""

    def __init__(self) -> None:
        self.results: dict[str, Result] = {}

    def add(self, report: pytest.TestReport) -> None:
        properties = dict(report.user_properties)
        if "asr_id" not in properties:
            return
        if report.when == "teardown" and not report.failed:
            return
        if report.when == "setup" and report.passed:
            return
        result = self._result(report, properties)
        earlier = self.results.get(report.nodeid)
        if earlier is not None and earlier.outcome in FAILING and result.outcome not in FAILING:
            return  # a clean teardown does not hide a failed call
        self.results[report.nodeid] = result

    def _result(self, report: pytest.TestReport, properties: dict[str, Any]) -> Result:
        outcome, message, excused = _outcome(report, properties)
        known = {"asr_id", "asr_implementation", "asr_role", "asr_kind", "asr_rules", "asr_input",
                 "asr_output", "asr_expected", "asr_answer", "asr_outcome", "asr_status"}
        return Result(
            id=str(properties["asr_id"]),
            implementation=str(properties.get("asr_implementation", "")),
            role=str(properties.get("asr_role", "")),
            kind=str(properties.get("asr_kind", "")),
            test=report.nodeid,
            rules=list(properties.get("asr_rules", [])),
            outcome=outcome,
            message=clip(message) or "",
            input=clip(_text(properties.get("asr_input"))),
            output=clip(_text(properties.get("asr_output"))),
            expected=clip(_text(properties.get("asr_expected"))),
            duration=round(float(getattr(report, "duration", 0.0)), 4),
            excused_by=excused,
            details={k.removeprefix("asr_"): v for k, v in properties.items()
                     if k.startswith("asr_") and k not in known and _plain(v)},
        )

    def all(self) -> list[Result]:
        return list(self.results.values())


def _outcome(report: pytest.TestReport, properties: dict[str, Any]) -> tuple[str, str, str | None]:
    answer = str(properties.get("asr_answer", properties.get("asr_outcome", "")))
    if report.passed:
        return "pass", "", None
    if report.failed:
        kind = answer if answer in ("crash", "timeout") else "fail"
        return kind, report.longreprtext, None
    if hasattr(report, "wasxfail"):
        return "expected-fail", report.longreprtext, str(report.wasxfail)
    reason = _skip_reason(report)
    if properties.get("asr_status") == "reported":
        return "not-scored", reason, None
    return "skipped", reason, None


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return report.longreprtext


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _plain(value: Any) -> bool:
    return isinstance(value, (str, int, float, bool)) or (
        isinstance(value, list) and all(isinstance(v, (str, int, float, bool)) for v in value))
