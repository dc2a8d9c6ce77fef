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
from typing import Any

from asr_conformance.gate.results import FAILING, OUTCOMES, SCORED, Result
from asr_conformance.vocabulary.scoring import add_reasons

#: What each verdict is called on the terminal.
VERDICT_WORDS = {
    "conforms": "CONFORMS",
    "conforms-except-known-failures": "CONFORMS EXCEPT KNOWN FAILURES",
    "partial": "PARTIAL: conforms on what was checked, not everything was checked",
    "does-not-conform": "DOES NOT CONFORM",
    "no-verdict": "NO VERDICT: no case was executed",
    "incomplete": "INCOMPLETE",
}
#: The run's exit status for each verdict (docs/certification.md §4): only a verdict that checked everything
#: and found it conforming exits 0; a partial one has a status of its own, beside pytest's 0 to 5.
EXIT_PARTIAL = 10
EXIT_STATUSES = {
    "conforms": 0, "conforms-except-known-failures": 0, "partial": EXIT_PARTIAL, "does-not-conform": 1,
    "no-verdict": 1, "incomplete": 1,
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


def role_verdict(counts: Counter[str], complete: bool = True, unchecked: Sequence[str] = ()) -> str:
    """The verdict of one implementation in one role, from the counts of its outcomes.

    ``unchecked`` says what the run did not check (fidelity, fuzzing, a widened sandbox): a role that
    passed everything else is then ``partial``, never ``conforms``."""
    scored = sum(counts[o] for o in SCORED)
    failing = sum(counts[o] for o in FAILING)
    if failing:
        return "does-not-conform"  # a failure seen is a failure, complete run or not
    if not complete:
        return "incomplete"
    if scored == 0:
        return "no-verdict"
    if unchecked:
        return "partial"
    if counts["expected-fail"]:
        return "conforms-except-known-failures"
    return "conforms"


def verdicts(implementations: list[dict[str, Any]], results: Sequence[Result],
             complete: bool = True) -> list[dict[str, Any]]:
    """One certification verdict per implementation and role it was run in.

    An implementation's ``widened`` (why its sandbox was wider than the default) makes each of its roles
    unchecked, like fidelity not checked or a format not fuzzed."""
    found = []
    for implementation in implementations:
        for role in implementation["roles"]:
            mine = [r for r in results if r.implementation == implementation["key"] and r.role == role]
            counts = Counter(r.outcome for r in mine)
            scored = sum(counts[o] for o in SCORED)
            verdict: dict[str, Any] = {
                "implementation": implementation["key"], "role": role,
                "counts": {o: counts[o] for o in OUTCOMES},
                "pass_percent": round(100.0 * counts["pass"] / scored, 2) if scored else 0.0,
            }
            unchecked = fidelity_not_checked(mine) if role == "producer" else []
            if unchecked:
                verdict["fidelity_not_checked"] = unchecked
            if role == "producer":
                verdict.update(judging(mine))
            if role == "validator":
                figure = reasons_of(mine)
                if figure:
                    verdict["reasons"] = figure
            why = [*(f"fidelity not checked: {w.removeprefix('fidelity not checked: ')}" for w in unchecked),
                   *verdict.get("not_fuzzed", ()),
                   *(f"widened sandbox: {w}" for w in implementation.get("widened", ()))]
            if why:
                verdict["unchecked"] = why
            verdict["verdict"] = role_verdict(counts, complete, why)
            found.append(verdict)
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
                   if r.outcome == "skipped" and r.details.get("fidelity_not_checked")})


#: The start of the reason a producer fuzz test gives when a format has no generator (or none is chosen).
NOT_FUZZED = "not fuzzed: "


def judging(results: Sequence[Result]) -> dict[str, Any]:
    """Who judged a producer's fidelity (each pack once), the packs' own errors, and why it was not fuzzed."""
    judges: dict[tuple[object, ...], dict[str, Any]] = {}
    for result in results:
        judge = result.details.get("judge")
        if isinstance(judge, dict):
            judges.setdefault((judge.get("name"), judge.get("version"), judge.get("sha256")), judge)
    found: dict[str, Any] = {}
    if judges:
        found["judged_by"] = sorted(judges.values(), key=lambda j: (str(j.get("name")), str(j.get("version"))))
    errors = sorted({str(r.details["suite_error"]) for r in results if r.details.get("suite_error")})
    if errors:
        found["judge_errors"] = errors
    not_fuzzed = sorted({r.message.strip() for r in results if r.outcome == "skipped" and r.kind == "fuzz"
                         and r.message.startswith(NOT_FUZZED)})
    if not_fuzzed:
        found["not_fuzzed"] = not_fuzzed
    return found


def judge_label(judge: dict[str, Any]) -> str:
    """``claude-code 0.1.0`` or ``toy-pack 0.3.0 (third-party)``."""
    third = "" if judge.get("builtin") else " (third-party)"
    return f"{judge.get('name')} {judge.get('version')}{third}"


def judged_suffix(role_verdicts: Sequence[dict[str, Any]]) -> str:
    """What the verdict line says after the verdict about producers: their judges, and what was not fuzzed."""
    judges = {judge_label(j): None for v in role_verdicts for j in v.get("judged_by", ())}
    parts = [f"fidelity judged by {', '.join(judges)}"] if judges else []
    parts += sorted({why for v in role_verdicts for why in v.get("not_fuzzed", ())})
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


def run_verdict(role_verdicts: list[dict[str, Any]], reasons: Sequence[str], completeness: Completeness,
                narrowed: bool = False) -> str:
    """The run's verdict as a key of ``VERDICT_WORDS`` (``does-not-conform`` also for a gate that failed).

    A role that ran no case makes a full run partial; in a run narrowed with ``-m``, ``-k`` and the like
    (which certifies nothing, and says so) its cases were deselected, and the other roles decide."""
    if not completeness.complete:
        return "incomplete"
    kinds = {v["verdict"] for v in role_verdicts}
    if not role_verdicts or kinds == {"no-verdict"}:
        return "no-verdict"
    if "does-not-conform" in kinds or reasons:
        return "does-not-conform"
    if "partial" in kinds or ("no-verdict" in kinds and not narrowed):
        return "partial"
    if "conforms-except-known-failures" in kinds:
        return "conforms-except-known-failures"
    return "conforms"


def overall(role_verdicts: list[dict[str, Any]], reasons: Sequence[str], completeness: Completeness,
            narrowed: bool = False) -> str:
    """The run's verdict in words: INCOMPLETE before anything else, then the worst role verdict."""
    found = run_verdict(role_verdicts, reasons, completeness, narrowed)
    if found == "incomplete":
        return "INCOMPLETE: " + "; ".join(completeness.reasons())
    kinds = {v["verdict"] for v in role_verdicts}
    if found == "does-not-conform" and "does-not-conform" not in kinds:
        return "DOES NOT PASS THE GATE: " + "; ".join(reasons)
    if found == "partial":
        why = [f"no case ran for {v['implementation']} {v['role']}" for v in role_verdicts
               if v["verdict"] == "no-verdict"]
        why += list(dict.fromkeys(w for v in role_verdicts for w in v.get("unchecked", ())))
        return "PARTIAL: conforms on what was checked; not checked: " + "; ".join(why)
    if found == "conforms" and "no-verdict" in kinds:
        return "CONFORMS IN PART: some roles ran no case"
    return VERDICT_WORDS[found]
