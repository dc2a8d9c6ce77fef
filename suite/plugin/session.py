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
        #: The name and version each persistent implementation gave in its handshake, by key.
        self.handshakes: dict[str, tuple[str, str | None]] = {}
        interval = float(config.getoption("asr_progress", 0) or 0)
        self.progress = Progress(config, interval if active else 0)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if not self.active:
            return
        properties = dict(report.user_properties)
        if "asr_announced" in properties and "asr_implementation" in properties:
            key = str(properties["asr_implementation"])
            self.announced[key] = str(properties["asr_announced"])
            self.handshakes[key] = (str(properties.get("asr_announced_name", "")),
                                    properties.get("asr_announced_version") or None)
        self.collector.add(report)
        self.progress.finished(report)

    # -- progress ------------------------------------------------------------------

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if self.active:
            self.progress.planned([item.nodeid for item in session.items])

    @pytest.hookimpl(optionalhook=True)  # an xdist hook: absent with -p no:xdist
    def pytest_xdist_node_collection_finished(self, node, ids: list[str]) -> None:
        if self.active:
            self.progress.planned(ids)

    def pytest_runtest_logstart(self, nodeid: str, location) -> None:
        if self.active:
            self.progress.started(nodeid)

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
        name, version = target.name, target.version
        handshake = self.handshakes.get(target.key)
        if handshake and handshake[0] and not target.source.endswith(".toml"):
            name, version = handshake  # no manifest: the implementation's own name beats its file name
        described = {
            "key": target.key, "name": name, "version": version, "roles": list(target.roles),
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
        facts = hypothesis_facts(self.config)
        seed = f", seed {facts['seed']} (replay with --hypothesis-seed={facts['seed']})" \
            if facts["seed"] is not None else ""
        write(f"hypothesis: profile {facts['profile']}{seed}")
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


_KIND_BY_MODULE = {"test_validator_corpus": ("validator", "corpus"), "test_validator_fuzz": ("validator", "fuzz"),
                   "test_reader_corpus": ("reader", "cases"), "test_producer": ("producer", "conversions")}


def _role_and_phase(nodeid: str) -> tuple[str, str]:
    module = nodeid.split("::")[0].rsplit("/", 1)[-1].removesuffix(".py")
    return _KIND_BY_MODULE.get(module, ("other", "tests"))


class Progress:
    """A progress line per role (cases done, failures so far, current phase), at most every ``interval`` s.

    Runs on the process that receives every report (the xdist controller too), and writes with the
    terminal reporter's ``write_line``, so the line shows with ``-q`` and under ``-n``."""

    def __init__(self, config: pytest.Config, interval: float) -> None:
        self.config = config
        self.interval = interval
        self.started_at = time.monotonic()
        self.last = self.started_at
        self.total: Counter[str] = Counter()
        self.done: Counter[str] = Counter()
        self.failed: Counter[str] = Counter()
        self.running: dict[str, tuple[str, str]] = {}
        self.shown: set[str] = set()
        self._planned = False

    def planned(self, nodeids: list[str]) -> None:
        if self._planned:  # every xdist worker collects the same items
            return
        self._planned = True
        self.total.update(_role_and_phase(n)[0] for n in nodeids)

    def started(self, nodeid: str) -> None:
        self.running[nodeid] = _role_and_phase(nodeid)

    def finished(self, report: pytest.TestReport) -> None:
        if not self.interval:
            return
        role, _ = _role_and_phase(report.nodeid)
        if report.when == "call" or (report.when == "setup" and not report.passed):
            self.done[role] += 1
            self.running.pop(report.nodeid, None)
        if report.failed and report.when == "call":
            self.failed[role] += 1
        now = time.monotonic()
        complete = role in self.total and self.done[role] >= self.total[role] and role not in self.shown
        if now - self.last >= self.interval or complete:
            self.last = now
            self.write(now)
            if complete:
                self.shown.add(role)

    def lines(self, now: float) -> list[str]:
        found = []
        for role in sorted(set(self.total) | set(self.done)):
            phases = sorted({phase for r, phase in self.running.values() if r == role})
            total = f"/{self.total[role]}" if self.total[role] else ""
            phase = ", ".join(phases) if phases else ("done" if self.total[role] and
                                                      self.done[role] >= self.total[role] else "waiting")
            found.append(f"asr-conformance progress [{now - self.started_at:.0f} s]: {role} {self.done[role]}{total} "
                         f"done, {self.failed[role]} failing, phase: {phase}")
        return found

    def write(self, now: float) -> None:
        reporter = self.config.pluginmanager.getplugin("terminalreporter")
        if reporter is None:
            return
        writer = getattr(reporter, "_tw", None)
        if writer is not None and writer.width_of_current_line:
            reporter.write("\n")  # after the progress dots (under xdist nothing else ends their line)
        for line in self.lines(now):
            reporter.write_line(line)


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
