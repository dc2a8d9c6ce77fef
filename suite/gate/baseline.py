"""The regression gate: compare a run with an earlier report of the same implementation.

A result that passed in the baseline and fails now is a regression and fails
the run.  A result that failed in the baseline and still fails is reported as
an expected failure (the gate is about change, not about the debt the
baseline already shows), and one that failed then and passes now is listed as
fixed.  A result the baseline does not have is judged on its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from asr_conformance.gate.results import FAILING, Result
from asr_conformance.vocabulary.bounded_files import InputFileError, load_json_file
from asr_conformance.vocabulary.errors import UserError
from asr_conformance.vocabulary.schemas import check_report


class BaselineError(UserError):
    """A baseline report the harness cannot use; the message names the file."""


@dataclass
class Baseline:
    path: Path
    #: implementation key -> result ID -> outcome.
    outcomes: dict[str, dict[str, str]] = field(default_factory=dict)

    def outcome(self, implementation: str, result_id: str, single_run: bool) -> str | None:
        """The baseline's outcome for a result; with one implementation on each side, names need not match
        (a renamed or re-versioned implementation is still compared)."""
        if implementation in self.outcomes:
            return self.outcomes[implementation].get(result_id)
        if single_run and len(self.outcomes) == 1:
            return next(iter(self.outcomes.values())).get(result_id)
        return None


def load_baseline(path: Path) -> Baseline:
    """Read an earlier report: a regular JSON file under the size limit, nested no deeper than reports are."""
    try:
        data = load_json_file(path, "baseline report")
    except InputFileError as error:
        raise BaselineError(str(error)) from None
    try:
        problem = check_report(data)
    except RecursionError:
        problem = "nested too deeply"
    if problem is None and not isinstance(data, dict):
        problem = "not an object"
    if problem:
        raise BaselineError(f"{path}: not an asr-conformance report: {problem}")
    baseline = Baseline(path)
    for result in data["results"]:
        baseline.outcomes.setdefault(result["implementation"], {})[result["id"]] = result["outcome"]
    return baseline


def was_failing(outcome: str | None) -> bool:
    return outcome in FAILING or outcome == "expected-fail"


@dataclass
class Comparison:
    regressions: list[Result]
    fixed: list[Result]
    new_failures: list[Result]


def compare(baseline: Baseline, results: Sequence[Result], single_run: bool) -> Comparison:
    regressions: list[Result] = []
    fixed: list[Result] = []
    new: list[Result] = []
    for result in results:
        before = baseline.outcome(result.implementation, result.id, single_run)
        if result.outcome in FAILING:
            (regressions if before == "pass" else new).append(result)
        elif result.outcome == "pass" and was_failing(before):
            fixed.append(result)
    return Comparison(regressions, fixed, new)
