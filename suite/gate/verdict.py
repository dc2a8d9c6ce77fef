"""Verdicts: one per implementation and role, and one for the run, honest about what did not happen.

A run certifies only when it is complete: every collected conformance test sent a result,
pytest ended on its own with a status that means "tests ran" (0, or 1 for failing tests), and
neither the corpus nor the package changed under it.  Anything else is INCOMPLETE, whatever the
results that did arrive say: a test that never reported cannot have passed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from asr_conformance.gate.results import FAILING, OUTCOMES, SCORED, Result, ResultOutcome
from asr_conformance.vocabulary.scoring import add_reasons


class VerdictKind(StrEnum):
    """A verdict, by the key reports use for it (a ``str``: it serializes as its value)."""

    CONFORMS = "conforms"
    CONFORMS_EXCEPT_KNOWN_FAILURES = "conforms-except-known-failures"
    PARTIAL = "partial"
    DOES_NOT_CONFORM = "does-not-conform"
    NO_VERDICT = "no-verdict"
    INCOMPLETE = "incomplete"

    @property
    def words(self) -> str:
        """What the verdict is called on the terminal."""
        return VERDICT_WORDS[self]


#: What each verdict is called on the terminal.
VERDICT_WORDS = {
    VerdictKind.CONFORMS: "CONFORMS",
    VerdictKind.CONFORMS_EXCEPT_KNOWN_FAILURES: "CONFORMS EXCEPT KNOWN FAILURES",
    VerdictKind.PARTIAL: "PARTIAL: conforms on what was checked, not everything was checked",
    VerdictKind.DOES_NOT_CONFORM: "DOES NOT CONFORM",
    VerdictKind.NO_VERDICT: "NO VERDICT: no case was executed",
    VerdictKind.INCOMPLETE: "INCOMPLETE",
}
#: The run's exit status for each verdict (docs/certification.md §4): only a verdict that checked everything
#: and found it conforming exits 0; a partial one has a status of its own, beside pytest's 0 to 5.
EXIT_PARTIAL = 10
EXIT_STATUSES = {
    VerdictKind.CONFORMS: 0, VerdictKind.CONFORMS_EXCEPT_KNOWN_FAILURES: 0, VerdictKind.PARTIAL: EXIT_PARTIAL,
    VerdictKind.DOES_NOT_CONFORM: 1, VerdictKind.NO_VERDICT: 1, VerdictKind.INCOMPLETE: 1,
}
#: Exit statuses after which the results can be complete: all passed, some failed, none collected (pytest), partial.
FINISHED_STATUSES = frozenset({0, 1, 5, EXIT_PARTIAL})
#: Most missing tests named in a reason (the report lists them all).
NAMED_MISSING = 5


@dataclass(frozen=True, slots=True)
class Completeness:
    """What keeps a run from certifying, whatever its results say."""

    exit_status: int = 0
    interrupted: bool = False
    #: Node IDs of collected conformance tests that sent no result.
    missing: tuple[str, ...] = ()
    #: Corpus or package files that changed during the run.
    changed: tuple[str, ...] = ()
    #: Why the results cannot be trusted otherwise (a worker lost, an unreadable collection).
    other: tuple[str, ...] = ()

    @property
    def complete(self) -> bool:
        return not self.reasons()

    def reasons(self) -> list[str]:
        found = []
        if self.interrupted:
            found.append("the run was interrupted")
        if self.exit_status not in FINISHED_STATUSES:
            found.append(f"pytest ended with exit status {self.exit_status}, not one of a finished run")
        if self.missing:
            named = ", ".join(self.missing[:NAMED_MISSING])
            more = f" and {len(self.missing) - NAMED_MISSING} more" if len(self.missing) > NAMED_MISSING else ""
            found.append(f"{len(self.missing)} collected test(s) sent no result (counted as crashes): {named}{more}")
        if self.changed:
            found.append(f"files changed during the run: {', '.join(self.changed[:NAMED_MISSING])}"
                         + (f" and {len(self.changed) - NAMED_MISSING} more" if len(self.changed) > NAMED_MISSING else ""))
        return found + list(self.other)

    def to_json(self) -> dict[str, Any]:
        return {"complete": self.complete, "reasons": self.reasons(), "missing": list(self.missing),
                "changed": list(self.changed), "exit_status": self.exit_status}


@dataclass(frozen=True, slots=True)
class RoleVerdict:
    """The verdict of one implementation in one role, with the figures and gaps reports show beside it."""

    implementation: str
    role: str
    #: Results by outcome, every outcome listed (in ``OUTCOMES`` order).
    counts: dict[str, int]
    pass_percent: float
    verdict: VerdictKind
    #: Producers: why fidelity was not checked for some inputs (each reason once).
    fidelity_not_checked: tuple[str, ...] = ()
    #: Producers: the format packs that judged fidelity, each once.
    judged_by: tuple[dict[str, Any], ...] = ()
    #: Producers: the format packs' own failures (the suite's, not the implementation's).
    judge_errors: tuple[str, ...] = ()
    #: Producers: why some or all of the formats were not fuzzed.
    not_fuzzed: tuple[str, ...] = ()
    #: Validators: the reasons figure (``reasons_of``), when any rejection was scored.
    reasons: dict[str, int] | None = None
    #: Everything the role did not check (fidelity, fuzzing, a widened sandbox): such a role is never CONFORMS.
    unchecked: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The verdict as reports have always written it: empty parts left out, ``verdict`` last."""
        found: dict[str, Any] = {"implementation": self.implementation, "role": self.role,
                                 "counts": {str(k): v for k, v in self.counts.items()},
                                 "pass_percent": self.pass_percent}
        for name in ("fidelity_not_checked", "judged_by", "judge_errors", "not_fuzzed"):
            if getattr(self, name):
                found[name] = list(getattr(self, name))
        if self.reasons:
            found["reasons"] = self.reasons
        if self.unchecked:
            found["unchecked"] = list(self.unchecked)
        found["verdict"] = self.verdict.value
        return found

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RoleVerdict:
        """A verdict read back from a saved report (``to_json``'s shape)."""
        return cls(implementation=str(data["implementation"]), role=str(data["role"]),
                   counts={str(k): int(v) for k, v in dict(data.get("counts") or {}).items()},
                   pass_percent=float(data.get("pass_percent") or 0.0), verdict=VerdictKind(data["verdict"]),
                   fidelity_not_checked=tuple(map(str, data.get("fidelity_not_checked") or ())),
                   judged_by=tuple(data.get("judged_by") or ()),
                   judge_errors=tuple(map(str, data.get("judge_errors") or ())),
                   not_fuzzed=tuple(map(str, data.get("not_fuzzed") or ())),
                   reasons=dict(data["reasons"]) if data.get("reasons") else None,
                   unchecked=tuple(map(str, data.get("unchecked") or ())))


def role_verdict(counts: Counter[ResultOutcome], complete: bool = True, unchecked: Sequence[str] = ()) -> VerdictKind:
    """The verdict of one implementation in one role, from the counts of its outcomes.

    ``unchecked`` says what the run did not check (fidelity, fuzzing, a widened sandbox): a role that
    passed everything else is then ``partial``, never ``conforms``."""
    scored = sum(counts[o] for o in SCORED)
    failing = sum(counts[o] for o in FAILING)
    if failing:
        return VerdictKind.DOES_NOT_CONFORM  # a failure seen is a failure, complete run or not
    if not complete:
        return VerdictKind.INCOMPLETE
    if scored == 0:
        return VerdictKind.NO_VERDICT
    if unchecked:
        return VerdictKind.PARTIAL
    if counts[ResultOutcome.EXPECTED_FAIL]:
        return VerdictKind.CONFORMS_EXCEPT_KNOWN_FAILURES
    return VerdictKind.CONFORMS


def verdicts(implementations: list[dict[str, Any]], results: Sequence[Result],
             complete: bool = True) -> list[RoleVerdict]:
    """One certification verdict per implementation and role it was run in.

    An implementation's ``widened`` (why its sandbox was wider than the default) makes each of its roles
    unchecked, like fidelity not checked or a format not fuzzed."""
    found = []
    for implementation in implementations:
        for role in implementation["roles"]:
            mine = [r for r in results if r.implementation == implementation["key"] and r.role == role]
            counts = Counter(r.outcome for r in mine)
            scored = sum(counts[o] for o in SCORED)
            unchecked = fidelity_not_checked(mine) if role == "producer" else []
            judged = judging(mine) if role == "producer" else Judging()
            figure = reasons_of(mine) if role == "validator" else {}
            why = [*(f"fidelity not checked: {w}" for w in unchecked), *judged.not_fuzzed,
                   *(f"widened sandbox: {w}" for w in implementation.get("widened", ()))]
            found.append(RoleVerdict(
                implementation=implementation["key"], role=role, counts={o.value: counts[o] for o in OUTCOMES},
                pass_percent=round(100.0 * counts[ResultOutcome.PASS] / scored, 2) if scored else 0.0,
                verdict=role_verdict(counts, complete, why), fidelity_not_checked=tuple(unchecked),
                judged_by=judged.judged_by, judge_errors=judged.judge_errors, not_fuzzed=judged.not_fuzzed,
                reasons=figure or None, unchecked=tuple(why)))
    return found


def reasons_of(results: Sequence[Result]) -> dict[str, int]:
    """The reasons figure of a validator's results: scored rejections, and which rules they name."""
    total: dict[str, int] = {}
    for result in results:
        figure = result.details.get("reasons")
        if isinstance(figure, dict):
            total = add_reasons(total, {k: v for k, v in figure.items() if isinstance(v, int)})
    return total


def reasons_line(figure: dict[str, int]) -> str:
    """The reasons figure in words: ``reasons: 120 rejections, 118 name a rule the stream breaks, ...``."""
    return (f"reasons: of {figure.get('rejections', 0)} scored rejections, {figure.get('naming_a_broken_rule', 0)} "
            f"name a rule the stream breaks, {figure.get('naming_only_broken_rules', 0)} name only such rules, "
            f"{figure.get('naming_no_rule', 0)} name none (not scored; --strict-reasons scores them)")


def fidelity_not_checked(results: Sequence[Result]) -> list[str]:
    """Why fidelity was not checked for some of a producer's inputs: such inputs never count as passed.

    The test that skips records why (``details["fidelity_not_checked"]``); its message is for people."""
    return sorted({str(r.details["fidelity_not_checked"]) for r in results
                   if r.outcome is ResultOutcome.SKIPPED and r.details.get("fidelity_not_checked")})


@dataclass(frozen=True, slots=True)
class Judging:
    """Who judged a producer's fidelity, the packs' own errors, and why it was not fuzzed."""

    judged_by: tuple[dict[str, Any], ...] = ()
    judge_errors: tuple[str, ...] = ()
    not_fuzzed: tuple[str, ...] = ()


def judging(results: Sequence[Result]) -> Judging:
    """Who judged a producer's fidelity (each pack once), the packs' own errors, and why it was not fuzzed.

    Why a format was not fuzzed is the skipped fuzz test's record (``Result.not_fuzzed``), never its message."""
    judges: dict[tuple[object, ...], dict[str, Any]] = {}
    for result in results:
        judge = result.details.get("judge")
        if isinstance(judge, dict):
            judges.setdefault((judge.get("name"), judge.get("version"), judge.get("sha256")), judge)
    errors = sorted({str(r.details["suite_error"]) for r in results if r.details.get("suite_error")})
    not_fuzzed = sorted({r.not_fuzzed for r in results if r.outcome is ResultOutcome.SKIPPED and r.kind == "fuzz"
                         and r.not_fuzzed})
    return Judging(tuple(sorted(judges.values(), key=lambda j: (str(j.get("name")), str(j.get("version"))))),
                   tuple(errors), tuple(not_fuzzed))


def judge_label(judge: dict[str, Any]) -> str:
    """``claude-code 0.1.0`` or ``toy-pack 0.3.0 (third-party)``."""
    third = "" if judge.get("builtin") else " (third-party)"
    return f"{judge.get('name')} {judge.get('version')}{third}"


def judged_suffix(role_verdicts: Sequence[RoleVerdict]) -> str:
    """What the verdict line says after the verdict about producers: their judges, and what was not fuzzed."""
    judges = {judge_label(j): None for v in role_verdicts for j in v.judged_by}
    parts = [f"fidelity judged by {', '.join(judges)}"] if judges else []
    parts += sorted({why for v in role_verdicts for why in v.not_fuzzed})
    return f" ({'; '.join(parts)})" if parts else ""


def widened_note(widened: Sequence[str]) -> str:
    """The line beside the verdict that names every widening of the closed box ("" for a closed box)."""
    return f"certified with a widened sandbox: {'; '.join(widened)}" if widened else ""


def judge_error_reasons(results: Sequence[Result]) -> list[str]:
    """Why a run whose format pack failed is INCOMPLETE: the judge failed, so those inputs have no verdict."""
    errors = sorted({str(r.details["suite_error"]) for r in results if r.details.get("suite_error")})
    if not errors:
        return []
    shown = "; ".join(errors[:NAMED_MISSING]) + (f" and {len(errors) - NAMED_MISSING} more" if len(errors) > NAMED_MISSING
                                                else "")
    return [f"{len(errors)} fidelity judgement(s) failed in the format pack, not in the implementation: {shown}"]


def run_verdict(role_verdicts: Sequence[RoleVerdict], reasons: Sequence[str], completeness: Completeness,
                narrowed: bool = False) -> VerdictKind:
    """The run's verdict (``does-not-conform`` also for a gate that failed).

    A role that ran no case makes a full run partial; in a run narrowed with ``-m``, ``-k`` and the like
    (which certifies nothing, and says so) its cases were deselected, and the other roles decide."""
    if not completeness.complete:
        return VerdictKind.INCOMPLETE
    kinds = {v.verdict for v in role_verdicts}
    if not role_verdicts or kinds == {VerdictKind.NO_VERDICT}:
        return VerdictKind.NO_VERDICT
    if VerdictKind.DOES_NOT_CONFORM in kinds or reasons:
        return VerdictKind.DOES_NOT_CONFORM
    if VerdictKind.PARTIAL in kinds or (VerdictKind.NO_VERDICT in kinds and not narrowed):
        return VerdictKind.PARTIAL
    if VerdictKind.CONFORMS_EXCEPT_KNOWN_FAILURES in kinds:
        return VerdictKind.CONFORMS_EXCEPT_KNOWN_FAILURES
    return VerdictKind.CONFORMS


def overall(role_verdicts: Sequence[RoleVerdict], reasons: Sequence[str], completeness: Completeness,
            narrowed: bool = False) -> str:
    """The run's verdict in words: INCOMPLETE before anything else, then the worst role verdict."""
    found = run_verdict(role_verdicts, reasons, completeness, narrowed)
    if found is VerdictKind.INCOMPLETE:
        return "INCOMPLETE: " + "; ".join(completeness.reasons())
    kinds = {v.verdict for v in role_verdicts}
    if found is VerdictKind.DOES_NOT_CONFORM and VerdictKind.DOES_NOT_CONFORM not in kinds:
        return "DOES NOT PASS THE GATE: " + "; ".join(reasons)
    if found is VerdictKind.PARTIAL:
        why = [f"no case ran for {v.implementation} {v.role}" for v in role_verdicts
               if v.verdict is VerdictKind.NO_VERDICT]
        why += list(dict.fromkeys(w for v in role_verdicts for w in v.unchecked))
        return "PARTIAL: conforms on what was checked; not checked: " + "; ".join(why)
    if found is VerdictKind.CONFORMS and VerdictKind.NO_VERDICT in kinds:
        return "CONFORMS IN PART: some roles ran no case"
    return found.words
