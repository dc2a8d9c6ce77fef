"""``asr-conformance campaign``: the suite's fuzz properties as a HypoFuzz campaign, stopped on time.

HypoFuzz (``hypothesis fuzz``) runs until it is stopped.  The campaign runs it as a child
process in a session of its own (``python -m asr_conformance.plugin.campaign_run``, which is
``hypothesis fuzz`` with HypoFuzz's own options), hands it the pytest arguments of a
certification (the implementation, ``-m fuzz``, the ``asr-deep`` profile and its example
database, the report folder, ``-p asr_conformance.plugin.campaign``), and at the deadline (or
on Ctrl-C) ends the whole process group: SIGTERM first, which each worker's harness answers by
killing its implementation processes and removing its staging, then SIGKILL for anything still
there after a grace period.  HypoFuzz's output goes to ``campaign.log`` in the report folder.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from asr_conformance.plugin.entry import CONFORMANCE_DIR
from asr_conformance.vocabulary.errors import UserError

#: How long the workers have to end after SIGTERM before the group is killed.
STOP_GRACE = 10.0


class CampaignError(UserError):
    """A campaign that cannot start; the message says what to do."""


@dataclass(frozen=True, slots=True)
class CampaignPlan:
    """What one ``asr-conformance campaign`` command runs."""

    implementation: Sequence[str]
    workers: int
    seconds: float | None
    report_dir: Path
    dashboard_port: int | None = None
    pytest_args: Sequence[str] = ()

    def pytest_arguments(self) -> list[str]:
        """The arguments of the pytest session each HypoFuzz process is to the harness."""
        given = list(self.pytest_args)
        profile = [] if any(a.startswith("--hypothesis-profile") for a in given) else ["--hypothesis-profile=asr-deep"]
        return [*(f"--implementation={i}" for i in self.implementation), "-m", "fuzz", *profile,
                f"--report-dir={self.report_dir}", "-p", "asr_conformance.plugin.campaign", "-p", "no:cacheprovider",
                # The same node IDs wherever the suite is installed, so that processes share HypoFuzz's keys.
                f"--rootdir={CONFORMANCE_DIR}", *given]

    def command(self) -> list[str]:
        dashboard = ["--no-dashboard"] if self.dashboard_port is None else [
            "--dashboard", "--host", "127.0.0.1", "--port", str(self.dashboard_port)]
        return [sys.executable, "-m", "asr_conformance.plugin.campaign_run", "-n", str(self.workers), *dashboard,
                "--", *self.pytest_arguments()]


def check_installed() -> None:
    try:
        import hypofuzz  # noqa: F401
    except ImportError:
        raise CampaignError("HypoFuzz is not installed: pip install 'asr-conformance[campaign]'") from None


@dataclass(frozen=True, slots=True)
class CampaignEnd:
    """How a campaign ended: ``by`` is "time", "interrupt" or "itself" (HypoFuzz stopped: every property failed,
    or it could not start), with HypoFuzz's exit status in the last case."""

    by: str
    status: int | None
    seconds: float


def run_campaign(plan: CampaignPlan, log: Path) -> CampaignEnd:
    """Run the campaign until its time is up, it ends by itself, or Ctrl-C; nothing it started is left running."""
    log.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with open(log, "ab") as output:
        process = subprocess.Popen(plan.command(), stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    if threading.current_thread() is threading.main_thread():
        # SIGTERM (a job scheduler's stop) ends the campaign as Ctrl-C does: the HypoFuzz group runs in a session
        # of its own, so nothing but this process can end it cleanly.
        signal.signal(signal.SIGTERM, _interrupt)
    try:
        status = process.wait(timeout=plan.seconds)
        return CampaignEnd("itself", status, time.monotonic() - started)
    except subprocess.TimeoutExpired:
        return CampaignEnd("time", None, time.monotonic() - started)
    except KeyboardInterrupt:
        return CampaignEnd("interrupt", None, time.monotonic() - started)
    finally:
        stop_group(process)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def stop_group(process: subprocess.Popen[bytes], grace: float = STOP_GRACE) -> None:
    """End the campaign's process group (its own session): SIGTERM, then SIGKILL after ``grace`` seconds."""
    from asr_conformance.harness.isolation.boxes import remove_stale_staging

    group = process.pid
    _signal_group(group, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and _group_alive(group):
        if process.poll() is None:
            try:
                process.wait(timeout=0.1)
            except subprocess.TimeoutExpired:
                pass
        else:
            time.sleep(0.1)
    _signal_group(group, signal.SIGKILL)
    if process.poll() is None:
        process.wait()
    remove_stale_staging()


def _signal_group(group: int, signum: int) -> None:
    try:
        os.killpg(group, signum)
    except (ProcessLookupError, PermissionError):
        pass


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def main(argv: Sequence[str] | None = None) -> None:
    """``hypothesis fuzz`` itself, with its own options (the child process ``run_campaign`` starts)."""
    from hypofuzz.entrypoint import fuzz

    keep_slow_workers()
    fuzz.main(args=list(sys.argv[1:] if argv is None else argv), prog_name="hypothesis fuzz")


def keep_slow_workers() -> None:
    """HypoFuzz 25.11.1's hub ends the campaign, a minute in, when no worker has reported a property it is still
    fuzzing; a worker first reports after a hundred examples of one property, which a one-shot implementation or
    a producer (a conversion or two per example) takes longer than a minute to run.  So until a worker has
    reported, the hub counts the properties it assigned to it as still being fuzzed (the worker's own report
    replaces that, and one with nothing left to fuzz still ends the campaign)."""
    from hypofuzz import hypofuzz as engine

    assign = engine.FuzzWorkerHub._rebalance

    def rebalance(hub: Any) -> None:
        assign(hub)
        for state in hub.shared_states:
            worker = state["worker_state"]
            if not worker["current_lifetime"] and not list(worker["valid_nodeids"]):
                worker["valid_nodeids"] = list(state["hub_state"]["nodeids"])

    setattr(engine.FuzzWorkerHub, "_rebalance", rebalance)  # noqa: B010 (a patch mypy would refuse as assignment)


if __name__ == "__main__":  # pragma: no cover
    main()
