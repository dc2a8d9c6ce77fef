"""The gate's decisions: which failures are excused, and why a run does not pass the gate.

Pure functions of the settings and the results, so the plugin only hands them over: the test's
process asks ``excuse`` (the report and the terminal then agree on what was expected), and the
process that gathers every result asks ``decide`` and ``exit_status`` at the end.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from asr_conformance.gate.baseline import Baseline, Comparison, compare, was_failing
from asr_conformance.gate.expectations import Expectation, matching, stale
from asr_conformance.gate.results import FAILING, SCORED, Result
from asr_conformance.gate.verdict import EXIT_PARTIAL, Completeness, VerdictKind

#: pytest's exit statuses the gate reads and sets (``pytest.ExitCode.OK`` and ``TESTS_FAILED``).
EXIT_OK, EXIT_TESTS_FAILED = 0, 1


class GateTarget(Protocol):
    """What the gate needs of an implementation under test (``harness.adapters.targets.Target`` is one)."""

    @property
    def key(self) -> str: ...

    @property
    def expectations(self) -> Path | None: ...


T = TypeVar("T", bound=GateTarget)


@dataclass
class GateSettings(Generic[T]):
    """What the gate holds the run to: the implementations, their expectations, the baseline, where reports go."""

    targets: Sequence[T]
    expectations: dict[str, tuple[Expectation, ...]] = field(default_factory=dict)
    baseline: Baseline | None = None
    report_dir: Path | None = None
    write_expectations: Path | None = None


def excuse(settings: GateSettings[Any], result_id: str, rules: Sequence[str], implementation: str) -> str | None:
    """Why a failure of this result is expected (an expectations entry, or the baseline), or None."""
    entry = matching(settings.expectations.get(implementation, ()), result_id, rules, implementation)
    if entry is not None:
        return entry.excuse()
    if settings.baseline is not None:
        before = settings.baseline.outcome(implementation, result_id, len(settings.targets) == 1)
        if was_failing(before):
            return f"failing in the baseline {settings.baseline.path.name} too ({before})"
    return None


@dataclass
class GateDecision:
    """Why the run does not pass the gate (empty: it does), with the stale entries and the baseline comparison."""

    reasons: list[str] = field(default_factory=list)
    #: (expectations file, entry) of every entry whose failure now passes.
    stale: list[tuple[str, Expectation]] = field(default_factory=list)
    comparison: Comparison | None = None


def decide(settings: GateSettings[Any], results: Sequence[Result]) -> GateDecision:
    """The exit reasons of a run: nothing executed, stale expectations, regressions, failing results."""
    decision = GateDecision()
    if not any(r.outcome in SCORED for r in results):
        decision.reasons.append("no case was executed (zero executed cases is never a pass)")
    for target in settings.targets:
        mine = [r for r in results if r.implementation == target.key]
        for entry in stale(settings.expectations.get(target.key, ()), mine):
            decision.stale.append((str(target.expectations), entry))
            decision.reasons.append(f"stale expectation in {target.expectations}: {entry.label} now passes "
                                    f"(remove the entry)")
    if settings.baseline is not None:
        decision.comparison = compare(settings.baseline, results, len(settings.targets) == 1)
        if decision.comparison.regressions:
            decision.reasons.append(f"{len(decision.comparison.regressions)} regression(s) against the baseline "
                                    f"{settings.baseline.path}")
    failing = sum(1 for r in results if r.outcome in FAILING)
    if failing:
        decision.reasons.append(f"{failing} failing result(s)")
    return decision


def exit_status(status: int, reasons: Sequence[str], completeness: Completeness,
                verdict: VerdictKind | None = None) -> int:
    """pytest's exit status after the gate: a run that passed its tests but not the gate, or did not finish, fails;
    one whose verdict (``gate.verdict.run_verdict``) did not check everything exits ``EXIT_PARTIAL``, never 0."""
    if (reasons or not completeness.complete) and status == EXIT_OK:
        return EXIT_TESTS_FAILED
    if verdict == VerdictKind.PARTIAL and status == EXIT_OK:
        return EXIT_PARTIAL
    return status
