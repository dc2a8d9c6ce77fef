"""The progress line: per role, cases done, failures so far and the phase running now.

It shows every ``--asr-progress`` seconds, also in the middle of a long case (a fuzz property
shrinking, a slow implementation), with and without xdist: a timer thread writes it to a
duplicate of the terminal's file descriptor taken at start-up, so pytest's output capture of the
running test does not swallow it.  It runs on the process that receives every report (the xdist
controller too), and shows with ``-q``.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections import Counter

import pytest

from asr_conformance.plugin.classify import OTHER, classify


def role_and_phase(nodeid: str) -> tuple[str, str]:
    found = classify(nodeid) or OTHER
    return found.role, found.phase


class Progress:
    """A progress line per role (cases done, failures so far, current phase), every ``interval`` seconds."""

    def __init__(self, config: pytest.Config, interval: float) -> None:
        self.config = config
        self.interval = interval
        self.started_at = time.monotonic()
        self.last = self.started_at
        self.total: Counter[str] = Counter()
        self.done: Counter[str] = Counter()
        self.failed: Counter[str] = Counter()
        self.running: dict[str, tuple[str, str]] = {}
        #: The phase each role was in last (shown between two of its tests).
        self.last_phase: dict[str, str] = {}
        self.shown: set[str] = set()
        self._planned = False
        self._lock = threading.Lock()
        #: Held while a line is both computed and written, so that the timer thread never writes a line
        #: older than one the main thread has already written (a stale "8/9" after the final "9/9").
        self._output = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        self._fd: int | None = None

    def planned(self, nodeids: list[str]) -> None:
        with self._lock:
            if self._planned:  # every xdist worker collects the same items
                return
            self._planned = True
            self.total.update(role_and_phase(n)[0] for n in nodeids)

    def started(self, nodeid: str) -> None:
        with self._lock:
            self.running[nodeid] = role_and_phase(nodeid)
            role, phase = self.running[nodeid]
            self.last_phase[role] = phase

    def finished(self, report: pytest.TestReport) -> None:
        if not self.interval:
            return
        role, _ = role_and_phase(report.nodeid)
        with self._lock:
            if report.when == "call" or (report.when == "setup" and not report.passed):
                self.done[role] += 1
                self.running.pop(report.nodeid, None)
            if report.failed and report.when == "call":
                self.failed[role] += 1
            now = time.monotonic()
            complete = role in self.total and self.done[role] >= self.total[role] and role not in self.shown
            due = now - self.last >= self.interval or complete
            if due:
                self.last = now
                if complete:
                    self.shown.add(role)
        if due:
            self.write(now)

    def lines(self, now: float) -> list[str]:
        with self._lock:
            found = []
            for role in sorted(set(self.total) | set(self.done)):
                phases = sorted({phase for r, phase in self.running.values() if r == role})
                total = f"/{self.total[role]}" if self.total[role] else ""
                finished = bool(self.total[role]) and self.done[role] >= self.total[role]
                phase = ", ".join(phases) if phases else ("done" if finished else self.last_phase.get(role, "waiting"))
                found.append(f"asr-conformance progress [{now - self.started_at:.0f} s]: {role} {self.done[role]}"
                             f"{total} done, {self.failed[role]} failing, phase: {phase}")
            return found

    def write(self, now: float) -> None:
        reporter = self.config.pluginmanager.getplugin("terminalreporter")
        if reporter is None:
            return
        writer = getattr(reporter, "_tw", None)
        if writer is not None and writer.width_of_current_line:
            reporter.write("\n")  # after the progress dots (under xdist nothing else ends their line)
        with self._output:
            for line in self.lines(now):
                reporter.write_line(line)

    # -- the timer, for lines in the middle of a long case --------------------------------

    def start_ticking(self) -> None:
        """Start the timer thread (once; nothing without an interval or a terminal)."""
        if not self.interval or self._ticker is not None or self.config.pluginmanager.getplugin("terminalreporter") is None:
            return
        try:
            sys.stdout.flush()
            self._fd = os.dup(sys.stdout.fileno())  # the terminal as it is now, before a test's capture
        except (OSError, ValueError, AttributeError):
            return
        self._ticker = threading.Thread(target=self._tick, name="asr-conformance-progress", daemon=True)
        self._ticker.start()

    def stop_ticking(self) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(timeout=5)
            self._ticker = None
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def _tick(self) -> None:
        while not self._stop.wait(min(self.interval, 1.0) / 2):
            now = time.monotonic()
            with self._lock:
                due = bool(self.running) and now - self.last >= self.interval
                if due:
                    self.last = now
            if due and self._fd is not None:
                with self._output:
                    text = "\n" + "\n".join(self.lines(now)) + "\n"
                    try:
                        os.write(self._fd, text.encode("utf-8", "replace"))
                    except OSError:
                        return
