"""The end of a certification run: results gathered, completeness checked, gate decided, reports written.

Registered on every process; only the one that receives every report (the
xdist controller, or the single process) gathers results, so the verdicts,
the exit status and the report files are that process's alone.  Excusing a
known failure happens where the test ran (``gate.decision.excuse``), so the report
and the terminal agree on what was expected; why the run fails the gate is
``gate.decision.decide``.

That process also knows which conformance tests were collected (from its own
collection, or from each xdist worker's), hashes the corpus and the package at
the start, and at the end turns every collected test without a result into a
crash and every sign of an unfinished run into an INCOMPLETE verdict.
"""

from __future__ import annotations

import datetime as dt
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from asr_conformance import CORPUS_DIR
from asr_conformance.gate.baseline import Comparison
from asr_conformance.gate.decision import GateSettings, decide, exit_status
from asr_conformance.gate.expectations import Expectation, write_expectations
from asr_conformance.gate.integrity import (
    Snapshot,
    changed,
    package_code,
    package_snapshot,
    prepare_bytecode,
    snapshot,
)
from asr_conformance.gate.results import FAILING, TALLY_ORDER, Result, ResultCollector, missing_result, record_of
from asr_conformance.gate.verdict import (
    EXIT_PARTIAL,
    Completeness,
    RoleVerdict,
    VerdictKind,
    judge_error_reasons,
    judged_suffix,
    overall,
    reasons_line,
    run_verdict,
    verdicts,
    widened_note,
)
from asr_conformance.harness.adapters.targets import Target
from asr_conformance.plugin.classify import classify
from asr_conformance.plugin.progress import Progress
from asr_conformance.plugin.recording import recorder_of
from asr_conformance.plugin.run_config import corpus_of, hypothesis_facts, narrowing, run_options, widened_of, widened_sandbox
from asr_conformance.vocabulary.untrusted import terminal_line

GATE_KEY = pytest.StashKey[GateSettings[Target]]()


def package_roots() -> list[Path]:
    """The folders of the package's code (the package-dir mapping joins three)."""
    import asr_conformance.generators
    import asr_conformance.reports

    return [Path(module.__file__).resolve().parent for module in
            (asr_conformance, asr_conformance.generators, asr_conformance.reports) if module.__file__]


class CertificationSession:
    def __init__(self, config: pytest.Config, settings: GateSettings[Target], active: bool) -> None:
        self.config = config
        self.settings = settings
        self.active = active
        self.collector = ResultCollector()
        self.started = time.time()
        self.announced: dict[str, str] = {}
        self.reasons: list[str] = []
        self.stale: list[tuple[str, Expectation]] = []
        self.comparison: Comparison | None = None
        self.written: dict[str, Path] = {}
        self.verdicts: list[RoleVerdict] = []
        #: The name and version each persistent implementation gave in its handshake, by key.
        self.handshakes: dict[str, tuple[str, str | None]] = {}
        interval = float(config.getoption("asr_progress", 0) or 0)
        self.progress = Progress(config, interval if active else 0)
        #: Node ID -> (implementation, role, kind) of every collected conformance test.
        self.expected: dict[str, tuple[str, str, str]] = {}
        self.interrupted = False
        self.completeness = Completeness()
        self.partial: list[str] = []
        self.corpus_start: Snapshot | None = None
        self.package_start: dict[str, Snapshot] = {}
        #: Bytecode found at the start that is not what its source compiles to (removed; the run certifies nothing).
        self.forged: list[str] = []
        if active:
            self._hash_at_start()

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        if self.active:
            self._clear_old_reports()
            self.progress.start_ticking()

    # -- integrity -----------------------------------------------------------------

    def _hash_at_start(self) -> None:
        """Hash the corpus and the package before any implementation runs; a --cases corpus that differs
        from the shipped one makes the run partial."""
        corpus = corpus_of(self.config)
        self.corpus_start = snapshot(corpus)
        self.forged = prepare_bytecode(package_roots())
        self.package_start = package_snapshot(package_roots())
        # What the run's end needs is loaded now, before any implementation runs: a module first imported
        # at the end would run whatever bytecode was planted for it during the run (the snapshot would say
        # so, but only after the planted code had its say).
        import asr_conformance.reports  # noqa: F401
        self.partial = narrowing(self.config)
        if corpus != CORPUS_DIR and self.corpus_start.digest != snapshot(CORPUS_DIR).digest:
            self.partial.append(f"--cases {corpus} differs from the shipped corpus")
        if self.corpus_start.flagged:
            self.partial.append("the corpus holds entries that are not plain case files: "
                                + ", ".join(self.corpus_start.flagged[:5]))

    def _clear_old_reports(self) -> None:
        """No earlier report may outlive a run that dies before writing its own."""
        from asr_conformance.reports.writing import clear_owned

        if self.settings.report_dir is not None:
            try:
                clear_owned(self.settings.report_dir)
            except OSError:
                pass  # reported when the reports are written

    def _changed_since_start(self) -> list[str]:
        found = []
        if self.corpus_start is not None:
            after = snapshot(self.corpus_start.root)
            found += [str(self.corpus_start.root / name) for name in changed(self.corpus_start, after)]
        for root, before in self.package_start.items():
            found += [str(Path(root) / name) for name in changed(before, snapshot(Path(root), package_code))]
        return found

    # -- what was collected, what arrived --------------------------------------------

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if not self.active:
            return
        self.progress.planned([item.nodeid for item in session.items])
        for item in session.items:
            recorder = recorder_of(item)
            if recorder is not None:
                record = recorder.record
                self.expected[item.nodeid] = (record.implementation, record.role, record.kind)

    def collected_on_worker(self, ids: Sequence[str]) -> None:
        """An xdist worker's collection: the conformance tests among its node IDs are expected."""
        for nodeid in ids:
            found = classify(nodeid)  # None: not a test of the conformance suite
            if nodeid not in self.expected and found is not None:
                self.expected[nodeid] = (self._implementation_of(nodeid), found.role, found.kind)

    def _implementation_of(self, nodeid: str) -> str:
        """The implementation a test belongs to, read from its node ID (xdist sends no more)."""
        keys = [t.key for t in self.settings.targets]
        if len(keys) == 1:
            return keys[0]
        found = [key for key in keys if f"-{key}]" in nodeid or f"[{key}]" in nodeid or f"[{key}-" in nodeid]
        return max(found, key=len) if found else ""

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if not self.active:
            return
        record = record_of(report)
        if record is not None and record.announced:
            self.announced[record.implementation] = record.announced
            self.handshakes[record.implementation] = (record.announced_name or "", record.announced_version or None)
        self.collector.add(report)
        self.progress.finished(report)

    # -- progress ------------------------------------------------------------------

    @pytest.hookimpl(optionalhook=True)  # an xdist hook: absent with -p no:xdist
    def pytest_xdist_node_collection_finished(self, node: object, ids: list[str]) -> None:
        if self.active:
            self.progress.planned(ids)

    def pytest_runtest_logstart(self, nodeid: str, location: tuple[str, int | None, str]) -> None:
        if self.active:
            self.progress.started(nodeid)

    def pytest_keyboard_interrupt(self, excinfo: Any) -> None:
        self.interrupted = True

    def results(self) -> list[Result]:
        return self.collector.all()

    # -- the gate ----------------------------------------------------------------

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if not self.active:
            return
        self.progress.stop_ticking()
        self._complete(session)
        results = self.results()
        decision = decide(self.settings, results)
        self.reasons.extend(decision.reasons)
        self.stale, self.comparison = decision.stale, decision.comparison
        self.verdicts = verdicts([self._describe(t) for t in self.settings.targets], results,
                                 self.completeness.complete)
        status = exit_status(int(session.exitstatus), self.reasons, self.completeness,
                             run_verdict(self.verdicts, self.reasons, self.completeness, bool(self.partial)))
        if status != int(session.exitstatus):
            session.exitstatus = status if status == EXIT_PARTIAL else pytest.ExitCode(status)
        if self.settings.write_expectations is not None:
            write_expectations(self.settings.write_expectations, results, len(self.settings.targets) > 1)
        self._write_reports(results, int(session.exitstatus))

    def _complete(self, session: pytest.Session) -> None:
        """Count every collected test without a result as a crash, and record what keeps the run from certifying."""
        missing = sorted(set(self.expected) - set(self.collector.results))
        for nodeid in missing:
            implementation, role, kind = self.expected[nodeid]
            said = self.collector.unrecorded.get(nodeid)
            message = (f"no result: {said}" if said else
                       "no result: the test never reported (its worker died, or the run stopped before it)")
            self.collector.results[nodeid] = missing_result(nodeid, implementation, role, kind, message)
        other = [f"a file Python would load in place of the suite's source was not compiled from it (a planted "
                 f"bytecode cache or module; removed, so the next run loads the source): {name}" for name in self.forged]
        if not self.expected and int(session.exitstatus) not in (0, 5):
            other.append("no conformance test was collected")
        other += judge_error_reasons(self.collector.all())
        self.completeness = Completeness(
            exit_status=int(session.exitstatus), interrupted=self.interrupted or bool(session.shouldstop),
            missing=tuple(missing), changed=tuple(self._changed_since_start()), other=tuple(other),
        )

    def _write_reports(self, results: list[Result], status: int) -> None:
        from asr_conformance import __version__
        from asr_conformance.reports import ReportFolderError, write_reports
        from asr_conformance.reports.document import RunFacts, build_report
        from asr_conformance.vocabulary.rules import load_catalog
        from asr_conformance.vocabulary.schemas import check_report

        implementations = [self._describe(t) for t in self.settings.targets]
        if self.settings.report_dir is None:
            return
        facts = RunFacts(
            suite_version=__version__, corpus=corpus_of(self.config),
            started=dt.datetime.fromtimestamp(self.started, dt.UTC).isoformat(timespec="seconds"),
            duration=time.time() - self.started, implementations=implementations,
            options=run_options(self.config, self.partial), hypothesis=hypothesis_facts(self.config),
            catalog=load_catalog(),
            expectations={
                "files": sorted({str(t.expectations) for t in self.settings.targets if t.expectations}),
                "stale": [{"entry": e.label, "reason": e.reason, "file": f} for f, e in self.stale],
            },
            baseline=None if self.comparison is None or self.settings.baseline is None else {
                "file": str(self.settings.baseline.path),
                "regressions": [r.id for r in self.comparison.regressions],
                "fixed": [r.id for r in self.comparison.fixed],
                "new_failures": [r.id for r in self.comparison.new_failures],
            },
            exit={"status": status, "reasons": self.reasons + self.completeness.reasons()},
            corpus_snapshot=self.corpus_start, completeness=self.completeness,
            package={root: found.digest for root, found in self.package_start.items()},
            verdicts=self.verdicts,
        )
        report = build_report(facts, results)
        problem = check_report(report)
        if problem:  # a bug of the suite, not of the implementation: say so loudly, write anyway
            self.reasons.append(f"the report does not match its own schema ({problem}); please report this")
        try:
            self.written = write_reports(report, self.settings.report_dir)
        except ReportFolderError as error:
            self.reasons.append(str(error))

    def _describe(self, target: Target) -> dict[str, Any]:
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
        widened = widened_sandbox(target, self.config)
        if widened:
            described["widened"] = widened
        return described

    # -- the terminal ----------------------------------------------------------

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config) -> None:
        if not self.active:
            return

        def write(line: str, **markup: bool) -> None:
            """Every line of this section is neutralized: names and reasons come from the implementation."""
            terminalreporter.write_line(terminal_line(line), **markup)

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
                tally = ", ".join(f"{counts[o]} {o}" for o in TALLY_ORDER if counts[o])
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
        for nodeid in self.completeness.missing[:20]:
            write(f"no result: {nodeid}", red=True)
        if len(self.completeness.missing) > 20:
            write(f"no result: {len(self.completeness.missing) - 20} more (all in report.json)", red=True)
        for name in self.completeness.changed[:20]:
            write(f"changed during the run: {name}", red=True)
        if self.written:
            write(f"report: {self.written['json']} (summary: {self.written['markdown'].name}, "
                  f"page: {self.written['html'].name})")
        if self.settings.write_expectations is not None:
            write(f"expectations written to {self.settings.write_expectations}")
        self._verdict_lines(write)

    def _verdict_lines(self, write: Callable[..., None]) -> None:
        verdict = overall(self.verdicts, self.reasons, self.completeness, bool(self.partial))
        if len(self.verdicts) > 1:
            for each in self.verdicts:
                write(f"  {each.implementation} {each.role}: {each.verdict.words} ({each.pass_percent:g}% pass)")
        suffix = f" (partial run: {', '.join(self.partial)}; only a full run certifies)" if self.partial else ""

        for each in self.verdicts:
            if each.reasons:
                who = f"{each.implementation} {each.role} " if len(self.verdicts) > 1 else ""
                write(f"{who}{reasons_line(each.reasons)}")
        kind = run_verdict(self.verdicts, self.reasons, self.completeness, bool(self.partial))
        write(f"verdict: {verdict}{judged_suffix(self.verdicts)}{suffix}", bold=True,
              red=kind not in (VerdictKind.CONFORMS, VerdictKind.PARTIAL) or bool(self.partial),
              yellow=kind is VerdictKind.PARTIAL and not self.partial, green=verdict == "CONFORMS" and not self.partial)
        note = widened_note(widened_of(self.config))
        if note:
            # Beside the verdict, not in it: part of the certificate.
            write(note, yellow=True)
        if hypothesis_facts(self.config).get("fixed_examples"):
            # Beside the verdict, not in it: scripts read the verdict line as it always was.
            write(f"fixed fuzz examples ({hypothesis_facts(self.config)['profile']}), the same every run: a regression "
                  "gate that certifies nothing new; no badge", yellow=True)


class WorkerCollections:
    """Tells the session which tests each xdist worker collected (registered only where xdist is)."""

    def __init__(self, session: CertificationSession) -> None:
        self.session = session

    def pytest_xdist_node_collection_finished(self, node: Any, ids: Sequence[str]) -> None:
        self.session.collected_on_worker(ids)
