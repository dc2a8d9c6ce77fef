"""The end of a certification run: results gathered, gate decided, reports written.

Registered on every process; only the one that receives every report (the
xdist controller, or the single process) gathers results, so the verdicts,
the exit status and the report files are that process's alone.  Excusing a
known failure happens where the test ran (``excuse``), so the report and the
terminal agree on what was expected.
"""

from __future__ import annotations

import datetime as dt
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from asr_conformance.gate.baseline import Baseline, compare, was_failing
from asr_conformance.gate.expectations import Expectation, matching, stale, write_expectations
from asr_conformance.gate.results import FAILING, SCORED, Result, ResultCollector
from asr_conformance.harness.targets import Target
from asr_conformance.plugin.run_config import corpus_of, hypothesis_facts, partial_selection, run_options

VERDICT_WORDS = {
    "conforms": "CONFORMS",
    "conforms-except-known-failures": "CONFORMS EXCEPT KNOWN FAILURES",
    "does-not-conform": "DOES NOT CONFORM",
    "no-verdict": "NO VERDICT: no case was executed",
}


@dataclass
class GateSettings:
    targets: list[Target]
    expectations: dict[str, tuple[Expectation, ...]] = field(default_factory=dict)
    baseline: Baseline | None = None
    report_dir: Path | None = None
    write_expectations: Path | None = None


GATE_KEY = pytest.StashKey[GateSettings]()


def excuse(settings: GateSettings, result_id: str, rules: Sequence[str], implementation: str) -> str | None:
    """Why a failure of this result is expected (an expectations entry, or the baseline), or None."""
    entry = matching(settings.expectations.get(implementation, ()), result_id, rules, implementation)
    if entry is not None:
        return entry.excuse()
    if settings.baseline is not None:
        before = settings.baseline.outcome(implementation, result_id, len(settings.targets) == 1)
        if was_failing(before):
            return f"failing in the baseline {settings.baseline.path.name} too ({before})"
    return None


class CertificationSession:
    def __init__(self, config: pytest.Config, settings: GateSettings, active: bool) -> None:
        self.config = config
        self.settings = settings
        self.active = active
        self.collector = ResultCollector()
        self.started = time.time()
        self.announced: dict[str, str] = {}
        self.reasons: list[str] = []
        self.stale: list[tuple[str, Expectation]] = []
        self.comparison = None
        self.written: dict[str, Path] = {}
        self.verdicts: list[dict] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if not self.active:
            return
        properties = dict(report.user_properties)
        if "asr_announced" in properties and "asr_implementation" in properties:
            self.announced[str(properties["asr_implementation"])] = str(properties["asr_announced"])
        self.collector.add(report)

    # -- the gate ----------------------------------------------------------------

    def results(self) -> list[Result]:
        return self.collector.all()

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if not self.active:
            return
        results = self.results()
        executed = sum(1 for r in results if r.outcome in SCORED)
        if executed == 0:
            self.reasons.append("no case was executed (zero executed cases is never a pass)")
        for target in self.settings.targets:
            mine = [r for r in results if r.implementation == target.key]
            for entry in stale(self.settings.expectations.get(target.key, ()), mine):
                self.stale.append((str(target.expectations), entry))
                self.reasons.append(f"stale expectation in {target.expectations}: {entry.label} now passes "
                                    f"(remove the entry)")
        if self.settings.baseline is not None:
            self.comparison = compare(self.settings.baseline, results, len(self.settings.targets) == 1)
            if self.comparison.regressions:
                self.reasons.append(f"{len(self.comparison.regressions)} regression(s) against the baseline "
                                    f"{self.settings.baseline.path}")
        failing = sum(1 for r in results if r.outcome in FAILING)
        if failing:
            self.reasons.append(f"{failing} failing result(s)")
        if self.reasons and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        if self.settings.write_expectations is not None:
            write_expectations(self.settings.write_expectations, results, len(self.settings.targets) > 1)
        self._write_reports(results, int(session.exitstatus))

    def _write_reports(self, results: list[Result], status: int) -> None:
        from asr_conformance import __version__
        from asr_conformance.reports import write_reports
        from asr_conformance.reports.document import RunFacts, build_report, verdicts
        from asr_conformance.vocabulary.rules import load_catalog
        from asr_conformance.vocabulary.schemas import check_report

        implementations = [self._describe(t) for t in self.settings.targets]
        self.verdicts = verdicts(implementations, results)
        if self.settings.report_dir is None:
            return
        facts = RunFacts(
            suite_version=__version__, corpus=corpus_of(self.config),
            started=dt.datetime.fromtimestamp(self.started, dt.UTC).isoformat(timespec="seconds"),
            duration=time.time() - self.started, implementations=implementations,
            options=run_options(self.config), hypothesis=hypothesis_facts(self.config), catalog=load_catalog(),
            expectations={
                "files": sorted({str(t.expectations) for t in self.settings.targets if t.expectations}),
                "stale": [{"entry": e.label, "reason": e.reason, "file": f} for f, e in self.stale],
            },
            baseline=None if self.comparison is None else {
                "file": str(self.settings.baseline.path),
                "regressions": [r.id for r in self.comparison.regressions],
                "fixed": [r.id for r in self.comparison.fixed],
                "new_failures": [r.id for r in self.comparison.new_failures],
            },
            exit={"status": status, "reasons": self.reasons},
        )
        report = build_report(facts, results)
        problem = check_report(report)
        if problem:  # a bug of the suite, not of the implementation: say so loudly, write anyway
            self.reasons.append(f"the report does not match its own schema ({problem}); please report this")
        self.written = write_reports(report, self.settings.report_dir)

    def _describe(self, target: Target) -> dict:
        described = {
            "key": target.key, "name": target.name, "version": target.version, "roles": list(target.roles),
            "protocol": target.protocol, "command": list(target.command), "source": target.source,
            "inputs": [str(i.path) for i in target.inputs],
            "expectations": str(target.expectations) if target.expectations else None,
        }
        if target.key in self.announced:
            described["announced"] = self.announced[target.key]
        return described

    # -- the terminal ----------------------------------------------------------

    def pytest_terminal_summary(self, terminalreporter, exitstatus: int, config: pytest.Config) -> None:
        if not self.active:
            return
        write = terminalreporter.write_line
        terminalreporter.section("asr-conformance")
        results = self.results()
        for target in self.settings.targets:
            name = self.announced.get(target.key) or target.label
            write(f"implementation: {name} ({target.protocol})" + (f" [{target.key}]" if len(self.settings.targets) > 1 else ""))
            for role in target.roles:
                mine = [r for r in results if r.implementation == target.key and r.role == role]
                counts = Counter(r.outcome for r in mine)
                tally = ", ".join(f"{counts[o]} {o}" for o in ("pass", "fail", "crash", "timeout", "expected-fail",
                                                              "not-scored", "skipped") if counts[o])
                write(f"  {role}: {tally or 'nothing ran'}")
            failing_rules = sorted({rule for r in results if r.implementation == target.key and r.outcome in FAILING
                                    for rule in r.rules})
            if failing_rules:
                write("  rules with failing cases: " + ", ".join(failing_rules))
        for _, entry in self.stale:
            write(f"stale expectation: {entry.label} now passes ({entry.reason})", red=True)
        if self.comparison is not None:
            for title, found in (("regression", self.comparison.regressions), ("fixed", self.comparison.fixed),
                                 ("new failure", self.comparison.new_failures)):
                for result in found[:50]:
                    write(f"{title}: {result.id} [{result.implementation}]", red=title != "fixed",
                          green=title == "fixed")
        if self.written:
            write(f"report: {self.written['json']} (summary: {self.written['markdown'].name}, "
                  f"page: {self.written['html'].name})")
        if self.settings.write_expectations is not None:
            write(f"expectations written to {self.settings.write_expectations}")
        self._verdict_lines(write)

    def _verdict_lines(self, write) -> None:
        overall = _overall(self.verdicts, self.reasons)
        if len(self.verdicts) > 1:
            for verdict in self.verdicts:
                write(f"  {verdict['implementation']} {verdict['role']}: {VERDICT_WORDS[verdict['verdict']]} "
                      f"({verdict['pass_percent']:g}% pass)")
        narrowed = partial_selection(self.config)
        suffix = f" (partial run: {narrowed}; only a full run certifies)" if narrowed else ""
        write(f"verdict: {overall}{suffix}", bold=True, red=overall != "CONFORMS", green=overall == "CONFORMS")


def _overall(verdicts: list[dict], reasons: list[str]) -> str:
    kinds = {v["verdict"] for v in verdicts}
    if not verdicts or kinds == {"no-verdict"}:
        return VERDICT_WORDS["no-verdict"]
    if "does-not-conform" in kinds:
        return VERDICT_WORDS["does-not-conform"]
    if reasons:
        return "DOES NOT PASS THE GATE: " + "; ".join(reasons)
    if "conforms-except-known-failures" in kinds:
        return VERDICT_WORDS["conforms-except-known-failures"]
    if "no-verdict" in kinds:
        return "CONFORMS IN PART: some roles ran no case"
    return VERDICT_WORDS["conforms"]
