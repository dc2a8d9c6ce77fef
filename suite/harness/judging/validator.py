"""Judging a validator's answer against the verdict expected of it: one judge for corpus cases and fuzzing.

``judge_answer`` is the one decision (what an answer means against an expected verdict and
the rules a validator may name); ``judge`` phrases it for a corpus case, the fuzz harness
(``harness.fuzzing.profiles``) for a generated stream, and ``run_validator_case`` is the body of a
corpus test.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

from asr_conformance.harness.adapters.answers import Outcome, Status, Verdict
from asr_conformance.harness.adapters.roles import RoleAdapter, ValidatorAdapter, announced
from asr_conformance.vocabulary.cases import Case
from asr_conformance.vocabulary.inline import inline_input
from asr_conformance.vocabulary.scoring import naming_set, preferred_rule, reasons_figure, rule_level, wrong_reason


@dataclass(frozen=True, slots=True)
class Judgement:
    """passed / failed / reported (implementation-defined) with a message."""

    status: Status
    message: str
    #: For invalid cases: "right", "wrong" or "unnamed" (the implementation names no rules).
    rule_level: str | None = None
    #: What went wrong, for a caller that words its own message: declined, no-verdict, rejected-valid,
    #: accepted-invalid or wrong-rule (None when nothing did).
    problem: str | None = None
    #: For a rejection naming a rule outside the naming set: what was named against what the stream breaks.
    reason: str = ""
    #: A scored rejection's share of the reasons figure (``scoring.reasons_figure``); empty otherwise.
    reasons: dict[str, int] = field(default_factory=dict)


def judge_answer(expected: str, verdict: Verdict, allowed: frozenset[str], preferred: str | None,
                 strict: bool = False) -> Judgement:
    """What a validator's answer means when ``expected`` (valid, invalid or implementation-defined) is due.

    ``allowed`` is the set of page rules a rejection may name, ``preferred`` the one the suite files the
    defect under.  Conformance is the verdict: a rejection naming a rule outside the set passes, its
    reasons counted in the reasons figure, unless ``strict`` (``--strict-reasons``, a manifest's
    ``strict_reasons``) certifies reasons too.  The message is the bare reason; callers add the case or
    the generated stream."""
    if verdict.outcome is Outcome.SKIPPED:
        return Judgement(Status.FAILED, f"the implementation declined the case: {verdict.message}", problem="declined")
    if not verdict.outcome.is_verdict:
        return Judgement(Status.FAILED, "no verdict", problem="no-verdict")
    accepted = verdict.outcome is Outcome.ACCEPT
    if expected == "implementation-defined":
        return Judgement(Status.REPORTED, f"the implementation {'accepts' if accepted else 'rejects'} it")
    if expected == "valid":
        if accepted:
            return Judgement(Status.PASSED, "accepted, as it must")
        named = f" naming {', '.join(sorted(verdict.rules))}" if verdict.rules else ""
        return Judgement(Status.FAILED, f"rejected a valid stream{named}", problem="rejected-valid")
    if accepted:
        return Judgement(Status.FAILED, "accepted an invalid stream", problem="accepted-invalid")
    level = rule_level(verdict.rules, allowed)
    figure = reasons_figure(verdict.rules, allowed)
    if level == "unnamed":
        return Judgement(Status.PASSED, "rejected, as it must (no rule to compare)", "unnamed", reasons=figure)
    if level == "right":
        return Judgement(Status.PASSED, "rejected for the right reason", "right", reasons=figure)
    reason = wrong_reason(verdict.rules, allowed, preferred)
    if not strict:
        return Judgement(Status.PASSED, "rejected, as it must; its reasons are counted, not scored: " + reason, "wrong",
                         reason=reason, reasons=figure)
    return Judgement(Status.FAILED, "rejected for the wrong reason: " + reason, "wrong", "wrong-rule", reason, figure)


def judge(case: Case, verdict: Verdict, strict: bool = False) -> Judgement:
    """The judgement of a corpus case, its message naming the case."""
    preferred = preferred_rule(case.rules, case.id.split("/")[1] if case.id.count("/") >= 2 else None)
    found = judge_answer(case.verdict, verdict, naming_set(case.rules), preferred, strict)
    if found.status is Status.REPORTED:
        return Judgement(Status.REPORTED, f"implementation-defined: {found.message} (the reference {case.reference}s); "
                         "not scored")
    if found.status is Status.PASSED:
        return found
    if found.problem == "no-verdict":
        return Judgement(Status.FAILED, _header(case) + "no verdict:\n" + verdict.explain(), problem=found.problem)
    if found.problem == "accepted-invalid":
        return Judgement(Status.FAILED, _header(case) + f"accepted an invalid stream; it breaks {', '.join(case.rules)}\n"
                         + verdict.explain(), problem=found.problem)
    return Judgement(Status.FAILED, _header(case) + found.message + "\n" + verdict.explain(), found.rule_level,
                     found.problem, found.reason, found.reasons)


def announce(adapter: RoleAdapter, record: Callable[..., None]) -> None:
    """Record the name and version the implementation gave in its handshake (persistent protocol)."""
    started = announced(adapter)
    if started is not None:
        record(announced=f"{started.name} {started.implementation_version or ''}".strip(),
               announced_name=started.name, announced_version=started.implementation_version or "")


def run_validator_case(case: Case, adapter: ValidatorAdapter, record: Callable[..., None], strict: bool = False) -> None:
    """The body of a corpus test: ask, judge, and fail/skip/pass with a readable message.

    ``record`` takes the field names of the test's record (the plugin's ``asr_record``); ``strict``
    fails a rejection for the wrong reason (``--strict-reasons``)."""
    verdict = adapter.validate(case.stream)
    judgement = judge(case, verdict, strict)
    record(answer=verdict.outcome.value, rules_named=verdict.rules, status=judgement.status.value,
           rule_level=judgement.rule_level, **({"reasons": judgement.reasons} if judgement.reasons else {}))
    announce(adapter, record)
    if judgement.status is Status.FAILED:
        record(**inline_input(case.stream.read_bytes()), output=verdict.explain(), expected=_expected_verdict(case))
        pytest.fail(judgement.message, pytrace=False)
    if judgement.status is Status.REPORTED:
        pytest.skip(judgement.message)


def _expected_verdict(case: Case) -> str:
    if case.verdict == "valid":
        return "accept (exit 0)"
    return f"reject (exit 1), naming one of {', '.join(case.scored_rules)} if it names rules" if case.scored_rules \
        else "reject (exit 1)"


def _header(case: Case) -> str:
    return (
        f"case {case.id} ({case.verdict}; {', '.join(case.rules)}; {case.spec})\n"
        f"  {case.description}\n  stream: {case.stream}\n"
    )
