"""Judging an implementation's answer to one case against the case's verdict."""

from __future__ import annotations

from dataclasses import dataclass

from asr_conformance.harness.answers import Outcome, Verdict
from asr_conformance.vocabulary.cases import Case


@dataclass(frozen=True, slots=True)
class Judgement:
    """passed / failed / reported (implementation-defined) with a message."""

    status: str
    message: str
    #: For invalid cases: "right", "wrong" or "unnamed" (the implementation names no rules).
    rule_level: str | None = None


def judge(case: Case, verdict: Verdict) -> Judgement:
    if verdict.outcome is Outcome.SKIPPED:
        return Judgement("failed", _header(case) + f"the implementation declined the case: {verdict.message}\n"
                         + verdict.explain())
    if not verdict.outcome.is_verdict:
        return Judgement("failed", _header(case) + "no verdict:\n" + verdict.explain())
    accepted = verdict.outcome is Outcome.ACCEPT
    if case.verdict == "implementation-defined":
        said = "accepts" if accepted else "rejects"
        return Judgement("reported", f"implementation-defined: the implementation {said} it "
                         f"(the reference {case.reference}s); not scored")
    if case.verdict == "valid":
        if accepted:
            return Judgement("passed", "accepted, as it must")
        named = f" naming {', '.join(sorted(verdict.rules))}" if verdict.rules else ""
        return Judgement("failed", _header(case) + f"rejected a valid stream{named}\n" + verdict.explain())
    expected = ", ".join(case.rules)
    if accepted:
        return Judgement("failed", _header(case) + f"accepted an invalid stream; it breaks {expected}\n"
                         + verdict.explain())
    scored = set(case.scored_rules)
    if not verdict.rules or not scored:
        return Judgement("passed", "rejected, as it must (no rule to compare)", "unnamed")
    if verdict.rules & scored:
        return Judgement("passed", "rejected for the right reason", "right")
    return Judgement(
        "failed",
        _header(case) + f"rejected for the wrong reason: named {', '.join(sorted(verdict.rules))}; "
        f"the stream breaks {expected}\n" + verdict.explain(),
        "wrong",
    )


def _header(case: Case) -> str:
    return (
        f"case {case.id} ({case.verdict}; {', '.join(case.rules)}; {case.spec})\n"
        f"  {case.description}\n  stream: {case.stream}\n"
    )
