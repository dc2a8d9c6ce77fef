"""Containment of processes: every case ends within its timeout whatever the implementation
starts, nothing is left running, SIGTERM to pytest kills live implementations, timeouts are
finite and capped, and --run-timeout ends a run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from certifying import PLUGIN_DEFAULT_REPORT_DIR, Certify, run_certification
from sandbox_marks import contained

from asr_conformance.harness.adapters.answers import Outcome
from asr_conformance.harness.adapters.manifest import ManifestError, load_manifest
from asr_conformance.harness.adapters.oneshot import OneShotValidator
from asr_conformance.harness.adapters.persistent import PersistentImplementation
from asr_conformance.harness.isolation import disclosure, limits, policies, sweeping
from asr_conformance.harness.isolation import processes as processes_module
from asr_conformance.harness.isolation import sandbox as sandbox_module

ROOT = Path(__file__).resolve().parents[3]
HOSTILE = ROOT / "examples" / "hostile"
MISBEHAVING = ROOT / "examples" / "misbehaving"
BWRAP_PROBLEM = sandbox_module.problem()
SANDBOXES = [
    pytest.param("bwrap", marks=pytest.mark.skipif(bool(BWRAP_PROBLEM), reason=f"no bubblewrap here: {BWRAP_PROBLEM}")),
    "none",
]


@pytest.fixture(params=SANDBOXES)
def sandbox(request: pytest.FixtureRequest) -> policies.Policy:
    """The containment of a run with ``--sandbox`` set to the parameter (what the plugin's run context gives)."""
    return contained(sandbox=request.param)


@pytest.fixture
def tag(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A variable passed to the implementation, by which its leftovers are found."""
    value = uuid.uuid4().hex
    monkeypatch.setenv("ASR_LEFTOVER_TAG", value)
    yield value


def leftovers(tag: str) -> list[int]:
    """Processes still running (not zombies) that carry the tag in their environment."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if f"ASR_LEFTOVER_TAG={tag}".encode() in environ.split(b"\0") and state != "Z":
            found.append(int(entry))
    return found


def _stream(tmp_path: Path) -> Path:
    stream = tmp_path / "s.jsonl"
    stream.write_text("{}\n")
    return stream


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the leftover check reads /proc")
@pytest.mark.parametrize("name", ["daemonizes-and-holds-stdout", "leaves-quiet-daemon"])
def test_daemons_die_with_the_case(sandbox: policies.Policy, tag: str, tmp_path: Path, name: str) -> None:
    """Each case ends when the validator exits, not when its daemon does: a case that waited for the daemon
    (which sleeps an hour) would end at its timeout, as a TIMEOUT, not an ACCEPT."""
    adapter = OneShotValidator([str(HOSTILE / name)], timeout=10, pass_env=("ASR_LEFTOVER_TAG",), policy=sandbox)
    for _ in range(3):
        verdict = adapter.validate(_stream(tmp_path))
        assert verdict.outcome is Outcome.ACCEPT, verdict.explain()
    assert leftovers(tag) == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the leftover check reads /proc")
def test_ignoring_sigterm_ends_at_the_timeout(sandbox: policies.Policy, tag: str, tmp_path: Path) -> None:
    adapter = OneShotValidator([str(HOSTILE / "ignores-sigterm")], timeout=1, pass_env=("ASR_LEFTOVER_TAG",),
                               policy=sandbox)
    verdict = adapter.validate(_stream(tmp_path))
    assert verdict.outcome is Outcome.TIMEOUT
    assert verdict.message == "no exit within 1 s; process group killed", verdict.explain()
    assert leftovers(tag) == [], "SIGKILL ended what SIGTERM could not"
    persistent = PersistentImplementation([str(HOSTILE / "ignores-sigterm")], timeout=1, pass_env=("ASR_LEFTOVER_TAG",),
                                          policy=sandbox)
    assert persistent.validate(_stream(tmp_path)).outcome is Outcome.TIMEOUT
    persistent.close()
    assert leftovers(tag) == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the leftover check reads /proc")
def test_a_persistent_process_tree_dies_with_close(sandbox: policies.Policy, tag: str, tmp_path: Path) -> None:
    script = tmp_path / "spawns-daemon"
    script.write_text("#!/bin/sh\n(setsid sleep 300 &) \nexec " + str(ROOT / "examples" / "reference-validator-persistent") + "\n")
    script.chmod(0o755)
    # The script runs a program outside its own folder: the sandbox shows that folder only when asked.
    adapter = PersistentImplementation([str(script)], timeout=20, pass_env=("ASR_LEFTOVER_TAG",),
                                  policy=replace(sandbox, read_only=(str(ROOT / "examples"),)))
    assert adapter.validate(_stream(tmp_path)).outcome.is_verdict
    assert leftovers(tag), "the daemon runs while the process does"
    adapter.close()
    assert leftovers(tag) == []


@pytest.mark.skipif(not limits.pids_cgroups(), reason="no pids cgroup can be made here (not root, or read-only cgroups)")
def test_ending_a_pids_cgroup_kills_what_left_the_process_group(tag: str) -> None:
    """The cgroup holds what a new session took out of the process group: killing the group alone leaves the
    daemon running (what the cgroup's end is for), ending the cgroup leaves nothing."""
    group = limits.ProcessGroup(16)
    assert group.folder is not None
    # The daemon says "started" from its own session, so the group is killed only once it has left.
    daemon = "setsid sh -c 'echo started; exec sleep 300 </dev/null >/dev/null 2>&1' &"
    command = limits.launch(["/bin/sh", "-c", daemon],
                            limits.Limits(), group.join_path())
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, start_new_session=True,
                               env={**os.environ, "ASR_LEFTOVER_TAG": tag})
    try:
        assert process.stdout is not None and process.stdout.readline() == b"started\n"
        processes_module.kill_group(process)
        survivors = leftovers(tag)
        assert survivors, "the daemon outlives its process group"
        assert set(survivors) <= set(group.members() or [])
        killed = group.end()
        assert killed is not None and set(survivors) <= killed
        sweeping.settle(killed)
        assert leftovers(tag) == [] and group.members() == []
    finally:
        processes_module.kill_group(process)
        if process.stdout is not None:
            process.stdout.close()
        group.close()


@pytest.mark.skipif(bool(BWRAP_PROBLEM) or not limits.pids_cgroups(),
                    reason=f"needs bubblewrap and pids cgroups: {BWRAP_PROBLEM or 'no pids cgroup here'}")
@pytest.mark.parametrize("name", ["daemonizes-and-holds-stdout", "leaves-quiet-daemon"])
def test_a_sandboxed_case_ends_through_its_cgroup_without_reading_every_process(
        tag: str, tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """In the sandbox the cgroup's member list replaces the ``/proc`` sweep, and the daemon still dies with the
    case; where the cgroup cannot be read the sweep runs as before."""
    swept: list[str] = []
    original = sweeping.sweep
    monkeypatch.setattr(sweeping, "sweep", lambda token: swept.append(token) or original(token))
    adapter = OneShotValidator([str(HOSTILE / name)], timeout=10, pass_env=("ASR_LEFTOVER_TAG",),
                               policy=contained(sandbox="bwrap"))
    assert adapter.validate(_stream(tmp_path)).outcome is Outcome.ACCEPT
    assert leftovers(tag) == [] and swept == []
    monkeypatch.setattr(limits.ProcessGroup, "members", lambda self: None)
    assert adapter.validate(_stream(tmp_path)).outcome is Outcome.ACCEPT
    assert leftovers(tag) == [] and len(swept) == 1


def test_reading_uses_no_threads(tmp_path: Path) -> None:
    """One deadline loop on raw descriptors: no reader thread (the staging cleanup thread aside)."""
    def readers() -> set[str]:
        return {t.name for t in threading.enumerate() if t.name != "asr-staging-cleanup"}

    before = readers()
    OneShotValidator([str(MISBEHAVING / "floods-stdout")], timeout=5).validate(_stream(tmp_path))
    PersistentImplementation([str(MISBEHAVING / "speaks-garbage")], timeout=5).validate(_stream(tmp_path))
    assert readers() == before


@pytest.mark.parametrize("value", ["inf", "nan", "-1", "0", "1e9"])
def test_a_manifest_timeout_is_finite_and_capped(tmp_path: Path, value: str) -> None:
    manifest = tmp_path / "m.toml"
    manifest.write_text(f'name = "x"\ncommand = "x"\ntimeout = {value}\n')
    with pytest.raises(ManifestError, match=r"m\.toml.*timeout"):
        load_manifest(manifest)


@pytest.mark.parametrize("value", ["inf", "nan", "-1", "1e9"])
def test_asr_timeout_is_finite_and_capped(value: str) -> None:
    """What the option's type checks, called in process on each value; the run below shows a refused value ending
    the run as a usage error."""
    with pytest.raises(policies.UsageError, match="--asr-timeout"):
        policies.check_timeout(float(value), "--asr-timeout")


def test_a_refused_asr_timeout_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = run_certification(f"--implementation={MISBEHAVING / 'hangs'}", "--asr-timeout=nan",
                               "-p", "no:cacheprovider", cwd=pytester.path, report_dir=PLUGIN_DEFAULT_REPORT_DIR)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--asr-timeout" in result.stderr.str()


def test_run_timeout_fails_the_remaining_cases_as_timeouts(certify: Certify) -> None:
    """Every selected case is reported, as a timeout of the spent run limit, and the run ends with its report
    (counted, not timed: a run that waited out each case's 120 s would not report them so)."""
    run = certify(f"--implementation={MISBEHAVING / 'hangs'}", "--asr-timeout=120", "--run-timeout=3",
                  "-m", "corpus", "-k", "ASR-164")
    text = run.text
    assert "--run-timeout" in text and "verdict: CONFORMS" not in text
    run.stdout.fnmatch_lines(["*asr-conformance: sandbox: *"])
    report = run.report
    assert report["options"]["run_timeout"] == 3 and report["options"]["run_limit_reached"] is True
    results = report["results"]
    assert results and len(results) == run.outcomes["failed"]
    assert all(r["outcome"] == "timeout" for r in results), [r["outcome"] for r in results]
    assert all("(--run-timeout) is spent" in r["message"] for r in results)
    assert report["completeness"]["complete"] is True and run.ret == 1


def test_the_header_names_the_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox_module, "problem", lambda: "bwrap is not installed")
    line = disclosure.describe_sandbox(contained(sandbox="auto"))
    assert line.startswith("sandbox: none (bwrap is not installed), process-group")
    assert "WARNING: the implementation can read and write whatever you can" in line
    assert "WARNING" not in disclosure.describe_sandbox(contained(sandbox="none")), \
        "a chosen --sandbox=none is no surprise"
    for strict in ("strict", "bwrap"):
        with pytest.raises(policies.UsageError,
                           match=f"--sandbox={strict}: the sandbox cannot run here: bwrap is not installed"):
            policies.sandbox_mode(strict)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the leftover check reads /proc")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_signals_to_pytest_kill_the_live_implementation(tmp_path: Path, tag: str, signum: int) -> None:
    """...and take the run's staging away: a run that ends on a signal leaves nothing on the machine."""
    scratch = tmp_path / "machine-tmp"
    scratch.mkdir()
    run = subprocess.Popen(
        [sys.executable, "-m", "pytest", f"--implementation={HOSTILE / 'ignores-sigterm'}", "--asr-timeout=120",
         "--pass-env=ASR_LEFTOVER_TAG", "-p", "no:cacheprovider", "-p", "no:xdist", "-m", "corpus",
         "--report-dir=none", "-x"],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, "TMPDIR": str(scratch)})
    try:
        def implementation() -> list[int]:
            """Tagged processes in a box (pytest itself, and what it runs to probe bwrap, carry the tag too)."""
            return [pid for pid in leftovers(tag) if sweeping._marker(pid) is not None]

        deadline = time.monotonic() + 60
        while not implementation() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert implementation(), "the implementation never started"
        run.send_signal(signum)
        run.wait(timeout=30)
        # A wait, not a speed limit: it ends as soon as nothing is left; the bound only keeps a busy machine from failing it.
        deadline = time.monotonic() + 60
        while leftovers(tag) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert leftovers(tag) == []
        assert [p.name for p in scratch.iterdir() if p.name.startswith("asr-")] == [], "no staging left behind"
    finally:
        run.kill()
        run.wait()


@pytest.mark.skipif(bool(BWRAP_PROBLEM), reason=f"no bubblewrap here: {BWRAP_PROBLEM}")
def test_a_sandbox_that_cannot_start_is_a_crash_not_a_reject(tmp_path: Path) -> None:
    """bwrap exits 1 when it cannot set up; here a folder to show read-only does not exist."""
    verdict = OneShotValidator([str(ROOT / "examples" / "reference-validator")],
                               policy=replace(contained(sandbox="bwrap"), read_only=(str(tmp_path / "missing"),)),
                               ).validate(_stream(tmp_path))
    assert verdict.outcome is Outcome.CRASH and "sandbox (bwrap) could not run" in verdict.message, verdict.explain()


@pytest.mark.skipif(bool(BWRAP_PROBLEM), reason=f"no bubblewrap here: {BWRAP_PROBLEM}")
def test_under_xdist_no_worker_sees_another_workers_staging(pytester: pytest.Pytester) -> None:
    """The staged file is run/worker/box/in/case/file: in the run's folder, only its own worker shows."""
    probe = pytester.path / "probe"
    probe.write_text("#!/usr/bin/env python3\nimport os, sys\nfrom pathlib import Path\n"
                     "run = Path(sys.argv[1]).parents[4]\n"
                     "sys.exit(0 if len(os.listdir(run)) == 1 else 3)\n")
    probe.chmod(0o755)
    result = run_certification(f"--implementation={probe}", "-n", "2", "--sandbox=bwrap",
                               "-p", "no:cacheprovider", "-m", "corpus", "-k", "ASR-164 and valid-",
                               "--report-dir=none", cwd=pytester.path)
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) >= 3 and "exit status 3" not in result.stdout.str()


#: The two validators that leave a daemon behind, certified side by side (they take the same arguments).
DAEMONS = ("daemonizes-and-holds-stdout", "leaves-quiet-daemon")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the leftover check reads /proc")
@pytest.mark.parametrize("sandbox_option", ["auto", "none"])
def test_a_certification_run_leaves_nothing_running(pytester: pytest.Pytester, tag: str, sandbox_option: str) -> None:
    """No case waits for the daemon: one that did would time out ("no exit within 60 s"), not pass; the limit is
    generous so that a busy machine's slow start is no timeout (the daemon sleeps an hour).  The run is forked
    from the preloaded server (``run_certification``), as the project's runs are; both daemon-leaving validators
    are certified in it side by side, each passing cases of its own."""
    result = run_certification(
        *(f"--implementation={HOSTILE / name}" for name in DAEMONS), "--timeout=60", "--pass-env=ASR_LEFTOVER_TAG",
        "-n", "2", f"--sandbox={sandbox_option}", "-p", "no:cacheprovider", "-m", "corpus", "-k", "ASR-164",
        cwd=pytester.path)
    assert "passed" in result.parseoutcomes()
    assert "no exit within" not in result.stdout.str()
    passing = {r["implementation"] for r in result.report["results"] if r["outcome"] == "pass"}
    assert passing == set(DAEMONS), passing
    assert leftovers(tag) == []


def test_a_persistent_process_that_dies_leaving_a_daemon_on_stdout_ends_the_case(
        sandbox: policies.Policy, tag: str, tmp_path: Path) -> None:
    script = tmp_path / "dies-leaving-daemon"
    script.write_text("#!/bin/sh\nread line\n"
                      "echo '{\"version\": 1, \"implementation\": {\"name\": \"x\"}, \"roles\": [\"validator\"]}'\n"
                      "(setsid sleep 300 &)\nread line\nexit 0\n")
    script.chmod(0o755)
    adapter = PersistentImplementation([str(script)], timeout=20, pass_env=("ASR_LEFTOVER_TAG",), policy=sandbox)
    answer = adapter.validate(_stream(tmp_path))
    # A case that waited for the daemon holding stdout would end at its timeout, as a TIMEOUT.
    assert answer.outcome is Outcome.CRASH and "the process exited" in answer.message, answer.explain()
    adapter.close()
    assert leftovers(tag) == []



def _peek_at_parent(hide: bool) -> int:
    """In a forked process dropped to an unprivileged user: make itself non-dumpable (or, as the control,
    dumpable), fork a process of the same user and let it read the first one's /proc environ. Returns 0
    when the read was refused, 1 when it succeeded, 2 on any other outcome."""
    import ctypes

    os.setgid(65534)
    os.setuid(65534)
    if hide:
        refused = sweeping.refuse_inspection.__wrapped__()  # not the cached answer of the parent
    else:
        refused = ctypes.CDLL(None, use_errno=True).prctl(4, 1, 0, 0, 0) == 0  # PR_SET_DUMPABLE 1
    if not refused:
        return 2
    reader = os.fork()
    if reader == 0:
        try:
            with open(f"/proc/{os.getppid()}/environ", "rb") as handle:
                handle.read()
            os._exit(1)
        except PermissionError:
            os._exit(0)
        except BaseException:
            os._exit(2)
    return os.waitstatus_to_exitcode(os.waitpid(reader, 0)[1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.skipif(os.geteuid() != 0, reason="drops to an unprivileged user, which needs root")
@pytest.mark.parametrize(("hide", "expected"), [(True, 0), (False, 1)], ids=["not-dumpable", "control"])
def test_without_the_sandbox_an_implementation_cannot_read_the_controllers_environment(hide: bool, expected: int) -> None:
    """Unsandboxed, the controller is not dumpable: a process of its (unprivileged) user cannot read its
    /proc environ, where tokens live; a dumpable one can (the control)."""
    child = os.fork()
    if child == 0:
        code = 2
        try:
            code = _peek_at_parent(hide)
        finally:
            os._exit(code)
    assert os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]) == expected


def test_the_fallback_header_says_the_controller_is_not_dumpable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox_module, "problem", lambda: "bwrap is not installed")
    assert "this process not dumpable" in disclosure.describe_sandbox(contained(sandbox="none"))
