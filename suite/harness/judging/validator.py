"""Judging an implementation's answer to one case against the case's verdict."""

from __future__ import annotations

from dataclasses import dataclass

from asr_conformance.harness.answers import Outcome, Verdict
from asr_conformance.vocabulary.cases import Case
from asr_conformance.vocabulary.scoring import naming_set, preferred_rule, rule_level, wrong_reason


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
    allowed = naming_set(case.rules)
    level = rule_level(verdict.rules, allowed)
    if level == "unnamed":
        return Judgement("passed", "rejected, as it must (no rule to compare)", "unnamed")
    if level == "right":
        return Judgement("passed", "rejected for the right reason", "right")
    preferred = preferred_rule(case.rules, case.id.split("/")[1] if case.id.count("/") >= 2 else None)
    return Judgement(
        "failed",
        _header(case) + "rejected for the wrong reason: " + wrong_reason(verdict.rules, allowed, preferred)
        + "\n" + verdict.explain(),
        "wrong",
    )


def _header(case: Case) -> str:
    return (
        f"case {case.id} ({case.verdict}; {', '.join(case.rules)}; {case.spec})\n"
        f"  {case.description}\n  stream: {case.stream}\n"
    )
