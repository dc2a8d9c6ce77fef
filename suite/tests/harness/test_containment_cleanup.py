"""Taking staging away: never touching what holds it, and finishing while other threads still write in it."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from sandbox_marks import needs_sandbox

from asr_conformance.harness.isolation import boxes, processes, sandbox, sweeping


def test_removing_a_folder_that_is_gone_leaves_its_parent_alone(tmp_path: Path) -> None:
    """A vanished staging folder once made the remover "fix" its parent's mode: the machine's /tmp became 0700."""
    tmp_path.chmod(0o1777)
    boxes._remove_tree(tmp_path / "gone")
    assert stat.S_IMODE(os.stat(tmp_path).st_mode) == 0o1777


def test_removing_an_unwritable_tree_keeps_the_parents_mode(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    tree = tmp_path / "box"
    (tree / "out" / "deep").mkdir(parents=True)
    (tree / "out" / "deep" / "file").write_text("x")
    (tree / "out" / "deep").chmod(0o500)
    (tree / "out").chmod(0o500)
    boxes._remove_tree(tree)
    assert not tree.exists()
    assert stat.S_IMODE(os.stat(tmp_path).st_mode) == 0o755


def test_staging_is_removed_even_while_another_thread_still_writes_in_it(tmp_path: Path) -> None:
    """On a signal, a step of the run's own may still be writing files for a while: the folder must go anyway."""
    staging = tmp_path / "asr-run-1-x"
    staging.mkdir()
    stop = time.monotonic() + 0.3

    def writer() -> None:
        count = 0
        while time.monotonic() < stop:
            try:
                (staging / f"f{count}").write_text("x")
            except OSError:
                return
            count += 1

    thread = threading.Thread(target=writer)
    thread.start()
    time.sleep(0.05)
    boxes.remove_staging(patience=5.0, folders=[staging])
    thread.join()
    assert not staging.exists()


# --- the machine changing under a start ----------------------------------------------------------


def test_a_mount_point_that_vanished_is_told_apart_from_other_sandbox_failures(tmp_path: Path) -> None:
    gone, there = tmp_path / "gone", tmp_path / "there"
    there.write_text("x")
    prefix = "the sandbox (bwrap) could not run the implementation: "
    assert processes.vanished_mount_point(f"{prefix}bwrap: Can't create file at {gone}: Read-only file system")
    assert processes.vanished_mount_point(f"{prefix}bwrap: Can't mkdir {gone}: Read-only file system")
    assert not processes.vanished_mount_point(f"{prefix}bwrap: Can't create file at {there}: Read-only file system")
    assert not processes.vanished_mount_point(f"{prefix}bwrap: execvp ./x: No such file or directory")


@needs_sandbox
def test_bubblewrap_names_the_mount_point_it_could_not_make() -> None:
    """The wording the retry reads is bubblewrap's own: a covered entry missing from a read-only folder."""
    missing = "/etc/asr-conformance-no-such-entry"
    assert not os.path.lexists(missing)
    said = subprocess.run([sandbox.executable() or "bwrap", "--ro-bind", "/", "/", "--ro-bind", "/dev/null", missing,
                           "true"], capture_output=True, text=True, timeout=30)
    assert said.returncode == 1 and processes.vanished_mount_point(said.stderr), said.stderr


SPOILED = "bwrap: Can't create file at {gone}: Read-only file system"
OTHER = "bwrap: execvp x: No such file or directory"


@pytest.mark.parametrize(("first", "starts"), [(SPOILED, 2), (OTHER, 1), ("", 1)], ids=["vanished-entry", "other", "ran"])
def test_a_start_spoiled_by_a_vanished_entry_is_made_once_more(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                               first: str, starts: int) -> None:
    """A root-only file of the machine removed between the listing and bwrap's start failed the case as the
    implementation's crash; now the listing is made anew and the start tried again, once, and only then."""
    answered = processes.Finished(0, b"ok", "")
    said = first.format(gone=tmp_path / "gone")
    script = iter((processes.Finished(None, b"", "", failure=f"the sandbox (bwrap) could not run the implementation: {said}")
                   if said else answered, answered))
    timeouts: list[float] = []
    forgotten: list[bool] = []

    def fake(command: object, timeout: float, *rest: object) -> processes.Finished:
        timeouts.append(timeout)
        return next(script)

    monkeypatch.setattr(processes, "_run_bounded", fake)
    monkeypatch.setattr(sandbox, "forget_root_only", lambda: forgotten.append(True))
    finished = processes.run_bounded(["x"], 5.0)
    assert len(timeouts) == starts and forgotten == [True] * (starts - 1) and all(t <= 5.0 for t in timeouts)
    assert (finished is answered) == (first != OTHER)


PERSISTENT_REFERENCE = Path(__file__).resolve().parents[3] / "examples" / "reference-validator-persistent"


@needs_sandbox
@pytest.mark.parametrize(("said", "retried"), [(SPOILED, True), (OTHER, False)], ids=["vanished-entry", "other"])
def test_a_persistent_start_spoiled_by_a_vanished_entry_is_made_once_more(monkeypatch: pytest.MonkeyPatch,
                                                                          tmp_path: Path, said: str,
                                                                          retried: bool) -> None:
    """The same churn spoils a persistent process's start (bwrap exits before the handshake): the start is made
    again on a fresh listing, once, and is not counted as the implementation's failed start; another failure of
    the sandbox is the implementation's, as before. The first start runs, in the sandbox, a script that says what
    bubblewrap says."""
    from asr_conformance.harness.adapters import persistent

    words = said.format(gone=f"/etc/asr-conformance-gone-{os.getpid()}")
    real_spawn, commands, forgotten = persistent.spawn, [], []

    def spawning(command: list[str], *rest: object, **options: object) -> processes.Child:
        first = not commands
        commands.append(command)
        if first:
            command = ["/bin/sh", "-c", f"echo \"{words}\" >&2; exit 1"]
        return real_spawn(command, *rest, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(persistent, "spawn", spawning)
    monkeypatch.setattr(sandbox, "forget_root_only", lambda: forgotten.append(True))
    adapter = persistent.PersistentImplementation([str(PERSISTENT_REFERENCE)], timeout=30)
    try:
        if retried:
            assert "validator" in adapter.handshake().roles
            assert len(commands) == 2 and forgotten == [True] and adapter._failed_starts == 0
        else:
            with pytest.raises(persistent.HandshakeFailed, match="execvp"):
                adapter.handshake()
            assert len(commands) == 1 and forgotten == []
    finally:
        adapter.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the subreaper is a Linux process attribute")
def test_a_forked_run_makes_itself_a_subreaper_again() -> None:
    """The setting is cleared in a forked child: a run forked from a process that had made itself a subreaper must
    ask again, or its implementations' orphans go to the parent and escape the sweep."""
    import ctypes

    assert sweeping.become_subreaper()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child's verdict is its exit status
        status = ctypes.c_int(0)
        libc = ctypes.CDLL(None, use_errno=True)
        sweeping.become_subreaper()
        libc.prctl(37, ctypes.byref(status), 0, 0, 0)  # PR_GET_CHILD_SUBREAPER
        os._exit(0 if status.value == 1 else 3)
    _, code = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(code) == 0, "the forked child is no subreaper"
