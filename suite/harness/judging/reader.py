"""Judging a reader's answer to one reader case against the case's expected view.

The answer must be a view, the view must match the published view schema,
and every member the expected view lists must be present and equal, compared
as the view schema says (``harness/judging/views.py``: whole, by keys, or member by member).
A failure message names the case's rules and every difference, each with its
JSON pointer into the view.  A case whose expected view rests on an open
assumption (cases/ASSUMPTIONS.md) is implementation-defined: its view must
still be a schema-valid view, and how it compares is reported, never scored.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from asr_conformance.harness.adapters.answers import Outcome, ReadAnswer, Status
from asr_conformance.harness.adapters.roles import ReaderAdapter, announced
from asr_conformance.harness.judging.views import (
    ViewDifference,
    at_version,
    check_view,
    compare_views,
    declared_version,
    not_checked_at,
)
from asr_conformance.vocabulary.cases import Case
from asr_conformance.vocabulary.inline import inline_input
from asr_conformance.vocabulary.scoring import open_assumptions

#: Longest JSON text recorded as a test property (the report keeps input and output of failures).
PROPERTY_LIMIT = 20_000


@dataclass(frozen=True, slots=True)
class ReadJudgement:
    """passed, failed, reported (implementation-defined) or not applicable, with a message and the differences
    found."""

    status: Status
    message: str
    differences: tuple[ViewDifference, ...] = ()


def judge_read(case: Case, answer: ReadAnswer) -> ReadJudgement:
    """Compare a reader's answer with the case: a view, schema-valid, equal where the case says."""
    rules = ", ".join(case.rules)
    if answer.outcome is not Outcome.VIEWED or not isinstance(answer.view, dict):
        return ReadJudgement(Status.FAILED, _header(case) + f"{rules}: no view:\n" + answer.explain())
    problem = check_view(answer.view)
    if problem:
        return ReadJudgement(Status.FAILED, _header(case) + f"{rules}: the view breaks the view schema: {problem}")
    version = declared_version(answer.view)
    expected, left = at_version(case.view(), version)
    if left and not set(expected) - {"view_version"}:
        # The case is about members of a later view version than the reader declares: not its contract.
        return ReadJudgement(Status.NOT_APPLICABLE, f"not applicable: {not_checked_at(version, left)}")
    differences = tuple(compare_views(expected, answer.view, case.partial))
    opened = open_assumptions(case.assumptions)
    if opened or case.verdict == "implementation-defined":
        # An impl- case is never scored, in any role: its stream's validity is the implementations' choice.
        basis = f"rests on {', '.join(opened)}" if opened else "an implementation-defined stream"
        said = ("agrees with the reference reader's" if not differences else
                f"differs from the reference reader's at {', '.join(d.path for d in differences)}")
        return ReadJudgement(Status.REPORTED, f"implementation-defined ({basis}): the view {said}; not scored", differences)
    if not differences:
        return ReadJudgement(Status.PASSED, "the view agrees with the expected view")
    count = f"{len(differences)} difference{'s' if len(differences) != 1 else ''}"
    lines = [f"{rules}: {differences[0].message}", f"{count} from the expected view ({case.expected_view}):"]
    lines += [f"  {d.path}: {d.message}" for d in differences]
    return ReadJudgement(Status.FAILED, _header(case) + "\n".join(lines), differences)


def run_reader_case(case: Case, adapter: ReaderAdapter, record: Callable[..., None]) -> None:
    """The body of a reader corpus test: ask, judge, record, and fail with a readable message.

    ``record`` takes the field names of the test's record (the plugin's ``asr_record``)."""
    answer = adapter.read(case.stream)
    judgement = judge_read(case, answer)
    record(answer=answer.outcome.value, status=judgement.status.value, rules=case.rules)
    started = announced(adapter)
    if started is not None:
        record(announced=f"{started.name} {started.implementation_version or ''}".strip())
    if judgement.status is Status.FAILED:
        # Only failures carry their views: a report of a passing run stays small.
        actual = clip_json(answer.view) if answer.view is not None else None
        record(expected=clip_json(case.view()),
               **inline_input(case.data()),
               output=actual if actual is not None else answer.explain())
        pytest.fail(judgement.message, pytrace=False)
    if judgement.status in (Status.REPORTED, Status.NOT_APPLICABLE):
        pytest.skip(judgement.message)


def clip_json(value: Any, limit: int = PROPERTY_LIMIT) -> str:
    """``value`` as JSON text, cut to ``limit`` characters (with a marker) for reports."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    if len(text) <= limit:
        return text
    marker = f"... [{len(text) - limit} more characters]"
    return text[: limit - len(marker)] + marker


def _header(case: Case) -> str:
    return (
        f"case {case.id} ({', '.join(case.rules)}; {case.spec})\n"
        f"  {case.description}\n  stream: {case.stream}\n"
    )
