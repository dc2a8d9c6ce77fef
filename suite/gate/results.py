"""One typed record of what each test saw, and one result per conformance test, gathered from pytest's reports.

A test's record (``TestRecord``) starts at collection (result ID, implementation, role, kind,
rules), the test adds what it saw (the answer, the judgement, the input and output of a
failure, a fuzz counterexample), and the plugin serializes it once into each report's
``user_properties`` under ``RECORD_PROPERTY``.  pytest-xdist sends the reports to the controller,
which reads the record back (``TestRecord.from_json``): nothing travels as loose keys, and the
counterexample path, why fidelity was not checked and why a producer was not fuzzed are data, set by
the code that decides them, never parsed back from a message.

Every process runs the tests, but only the one that receives every report (the xdist
controller, or the single process) gathers them into ``Result``\\ s.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import pytest

from asr_conformance.vocabulary.redaction import redact_value
from asr_conformance.vocabulary.scoring import rule_names
from asr_conformance.vocabulary.untrusted import clean_value, no_surrogates


class ResultOutcome(StrEnum):
    """How one conformance test ended, as reports name it (a ``str``: it serializes as its value)."""

    FAIL = "fail"
    CRASH = "crash"
    TIMEOUT = "timeout"
    PASS = "pass"
    EXPECTED_FAIL = "expected-fail"
    NOT_SCORED = "not-scored"
    SKIPPED = "skipped"


#: Every outcome a result can have, in the order reports list them.
OUTCOMES: tuple[ResultOutcome, ...] = tuple(ResultOutcome)
#: The order a run's summary counts outcomes in, passes first.
TALLY_ORDER = (ResultOutcome.PASS, ResultOutcome.FAIL, ResultOutcome.CRASH, ResultOutcome.TIMEOUT,
               ResultOutcome.EXPECTED_FAIL, ResultOutcome.NOT_SCORED, ResultOutcome.SKIPPED)
#: Outcomes that count against an implementation.
FAILING = frozenset({ResultOutcome.FAIL, ResultOutcome.CRASH, ResultOutcome.TIMEOUT})
#: Outcomes that were executed and scored.
SCORED = FAILING | {ResultOutcome.PASS, ResultOutcome.EXPECTED_FAIL}
#: How much of an input or output a result keeps.
CLIP = 20_000
#: The one user property that carries a test's record.
RECORD_PROPERTY = "asr_result"


@dataclass(frozen=True, slots=True)
class Counterexample:
    """A shrunk fuzz failure written as a case file, and the command that replays it."""

    path: str
    replay: str


@dataclass(frozen=True, slots=True)
class TestRecord:
    """What one conformance test is and what it saw; built up with ``replace`` and sent once."""

    __test__ = False  # not a pytest test class, whatever its name

    id: str
    implementation: str
    role: str
    kind: str
    rules: tuple[str, ...] = ()
    #: The implementation's answer: accept, reject, crash, timeout, viewed, converted, ...
    answer: str | None = None
    #: The judgement: passed, failed or reported (implementation-defined, not scored).
    status: str | None = None
    rules_named: tuple[str, ...] | None = None
    #: For invalid cases: right, wrong or unnamed.
    rule_level: str | None = None
    #: Scored rejections and the rules they name (``vocabulary.scoring.reasons_figure``, summed over a
    #: property's examples): the second figure beside the verdict.
    reasons: dict[str, int] | None = None
    #: For a failure: the stream or input given, inline (``vocabulary.inline``: text or base64, clipped).
    input: str | None = None
    input_encoding: str | None = None
    input_size: int | None = None
    input_clipped: bool | None = None
    output: str | None = None
    expected: str | None = None
    #: Name and version from the persistent handshake.
    announced: str | None = None
    announced_name: str | None = None
    announced_version: str | None = None
    counterexample: Counterexample | None = None
    fuzz_examples: int | None = None
    seed: int | None = None
    #: A failing property's shrink figures: steps, seconds, what stopped it, the first failing call.
    shrink: dict[str, Any] | None = None
    #: Why a producer's fidelity was not checked ("no witness for format 'x'"): set by the test that skips.
    fidelity_not_checked: str | None = None
    #: Why a producer is not fuzzed in some or all of its formats ("not fuzzed: no generator for x"): set at
    #: collection on the fuzz test that skips for it, and read by the verdict (the skip message is for people).
    not_fuzzed: str | None = None
    #: Producer fidelity: the format pack that judged (name, version, distribution, sha256, builtin, format).
    judge: dict[str, Any] | None = None
    #: The suite's own error (a format pack raised, hung or gave malformed facts): the result is no verdict
    #: on the implementation, and the run is INCOMPLETE.
    suite_error: str | None = None
    #: Producer fidelity: disagreements with the source that no numbered rule settles, one line each; shown,
    #: never scored.
    fidelity_reported: tuple[str, ...] | None = None

    def with_(self, **changes: Any) -> TestRecord:
        """A copy with ``changes``; text is cleaned of lone surrogates and clipped on the way in."""
        if isinstance(changes.get("input"), str) and "input_encoding" not in changes:
            changes["input"] = clip(no_surrogates(changes["input"]))  # inline_input clips on its own
        for name in ("output", "expected", "announced", "announced_name", "announced_version", "answer", "status",
                     "rule_level", "fidelity_not_checked", "not_fuzzed", "suite_error"):
            if isinstance(changes.get(name), str):
                changes[name] = clip(no_surrogates(changes[name]))
        changes = redact_value(changes)  # nothing of the caller's passed-through variables
        if changes.get("rules_named") is not None:
            changes["rules_named"] = rule_names(changes["rules_named"])
        for name in ("rules", "rules_named"):
            if changes.get(name) is not None:
                changes[name] = tuple(sorted({no_surrogates(str(rule))[:200] for rule in changes[name]}))
        if isinstance(changes.get("counterexample"), tuple):
            changes["counterexample"] = Counterexample(*map(str, changes["counterexample"]))
        return dataclasses.replace(self, **changes)

    def to_json(self) -> str:
        """The record as JSON text (ASCII only, so it crosses any wire)."""
        return json.dumps(clean_value(dataclasses.asdict(self)), ensure_ascii=True, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> TestRecord:
        data = json.loads(text)
        known = {f.name for f in dataclasses.fields(cls)}
        data = {k: v for k, v in data.items() if k in known}
        for name in ("rules", "rules_named", "fidelity_reported"):
            if data.get(name) is not None:
                data[name] = tuple(data[name])
        if data.get("counterexample") is not None:
            data["counterexample"] = Counterexample(**data["counterexample"])
        return cls(**data)

    def details(self) -> dict[str, Any]:
        """The facts a report lists under ``details`` (the names reports have always used)."""
        found: dict[str, Any] = {
            "rules_named": list(self.rules_named) if self.rules_named is not None else None,
            "rule_level": self.rule_level, "reasons": self.reasons, "announced": self.announced,
            "fuzz_examples": self.fuzz_examples, "hypothesis_seed": self.seed, **(self.shrink or {}),
            "fidelity_not_checked": self.fidelity_not_checked,
            "judge": self.judge, "suite_error": self.suite_error,
            "fidelity_reported": list(self.fidelity_reported) if self.fidelity_reported is not None else None,
        }
        return {k: v for k, v in found.items() if v is not None}


def record_of(report: pytest.TestReport) -> TestRecord | None:
    """The record a report carries, or None (not a conformance test, or a report xdist made for a crash)."""
    for name, value in report.user_properties:
        if name == RECORD_PROPERTY:
            return TestRecord.from_json(str(value))
    return None


@dataclass(frozen=True, slots=True)
class Result:
    """The outcome of one conformance test, as reports show it."""

    id: str
    implementation: str
    role: str
    kind: str
    test: str
    rules: list[str]
    outcome: ResultOutcome
    message: str = ""
    input: str | None = None
    #: ``utf-8`` (``input`` is the text) or ``base64`` (the bytes were not UTF-8); the whole input's size in
    #: bytes, and whether ``input`` holds only its start.
    input_encoding: str | None = None
    input_size: int | None = None
    input_clipped: bool | None = None
    output: str | None = None
    expected: str | None = None
    duration: float = 0.0
    #: For an expected failure: which entry (expectations file or baseline) excused it.
    excused_by: str | None = None
    counterexample: Counterexample | None = None
    details: dict[str, Any] = field(default_factory=dict)
    #: Why the producer was not fuzzed (the record's ``not_fuzzed``): read by the verdict, which lists it;
    #: not written with the result.
    not_fuzzed: str | None = None

    def __post_init__(self) -> None:
        # An outcome given by its word ("fail") becomes the enum member; an unknown word is an error here.
        object.__setattr__(self, "outcome", ResultOutcome(self.outcome))

    def to_json(self) -> dict[str, Any]:
        found = {key: value for key, value in dataclasses.asdict(self).items() if value not in (None, {}, "")}
        found["outcome"] = self.outcome.value
        found.pop("not_fuzzed", None)  # the role's verdict lists it, as it always has
        return found


def clip(text: str | None, limit: int = CLIP) -> str | None:
    if text is None or len(text) <= limit:
        return text
    return text[:limit] + f"\n... ({len(text) - limit} more characters)"


#: The line xdist puts before a worker's failure text ("[gw1] linux -- Python 3.11.7 /usr/bin/python").
_WORKER_LINE = re.compile(r"^\[gw\d+\] \S+ -- Python \S+.*(?:\n|$)", re.MULTILINE)


def without_worker_noise(text: str) -> str:
    """A failure message without the line that names the xdist worker and its interpreter."""
    return _WORKER_LINE.sub("", text)


def missing_result(test: str, implementation: str, role: str, kind: str, message: str) -> Result:
    """A crash for a collected test that sent no result (its worker died, or the run stopped)."""
    return Result(id=test, implementation=implementation, role=role, kind=kind, test=test, rules=[],
                  outcome=ResultOutcome.CRASH, message=clip(no_surrogates(message)) or "")


class ResultCollector:
    """Turns the setup/call/teardown reports of each test into one Result."""

    def __init__(self) -> None:
        self.results: dict[str, Result] = {}
        #: Failed reports without a record (xdist's report of a crashed worker), by node ID.
        self.unrecorded: dict[str, str] = {}

    def add(self, report: pytest.TestReport) -> None:
        record = record_of(report)
        if record is None:
            if report.failed:
                self.unrecorded.setdefault(report.nodeid, no_surrogates(report.longreprtext))
            return
        if report.when == "teardown" and not report.failed:
            return
        if report.when == "setup" and report.passed:
            return
        result = self._result(report, record)
        earlier = self.results.get(report.nodeid)
        if earlier is not None and earlier.outcome in FAILING and result.outcome not in FAILING:
            return  # a clean teardown does not hide a failed call
        self.results[report.nodeid] = result

    def _result(self, report: pytest.TestReport, record: TestRecord) -> Result:
        outcome, message, excused = _outcome(report, record)
        return Result(
            id=record.id, implementation=record.implementation, role=record.role, kind=record.kind,
            test=report.nodeid, rules=list(record.rules), outcome=outcome,
            message=clip(no_surrogates(without_worker_noise(message))) or "",
            input=record.input, input_encoding=record.input_encoding, input_size=record.input_size,
            input_clipped=record.input_clipped, output=record.output, expected=record.expected,
            duration=round(float(getattr(report, "duration", 0.0)), 4),
            excused_by=excused, counterexample=record.counterexample, details=record.details(),
            not_fuzzed=record.not_fuzzed,
        )

    def all(self) -> list[Result]:
        return list(self.results.values())


def _outcome(report: pytest.TestReport, record: TestRecord) -> tuple[ResultOutcome, str, str | None]:
    if report.passed:
        return ResultOutcome.PASS, "", None
    if report.failed:
        kind = {"crash": ResultOutcome.CRASH, "timeout": ResultOutcome.TIMEOUT}.get(record.answer or "",
                                                                                  ResultOutcome.FAIL)
        return kind, report.longreprtext, None
    if hasattr(report, "wasxfail"):
        return ResultOutcome.EXPECTED_FAIL, report.longreprtext, str(report.wasxfail)
    reason = _skip_reason(report)
    if record.status == "reported":
        return ResultOutcome.NOT_SCORED, reason, None
    return ResultOutcome.SKIPPED, reason, None


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return report.longreprtext
