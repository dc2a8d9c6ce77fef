"""Nothing left running after a case without the sandbox: the subreaper and the sweep.

Without bubblewrap's PID namespace, the harness makes itself a child subreaper (Linux), so that an
implementation's orphaned descendants are adopted by it, and after each case sweeps every leftover:
processes carrying the box's token in their environment, and adopted descendants that are no live
implementation's.  It also makes itself non-dumpable, so that an implementation of the same user
cannot read its environment or memory through ``/proc``.  Whether this process is a subreaper is a
per-process fact (cleared in a forked child, so checked against the pid), never reset by a test.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Iterable
from functools import cache

from asr_conformance.harness.isolation.allowlist import MARKER
from asr_conformance.harness.isolation.live_processes import live_pids, live_tokens

_PR_SET_CHILD_SUBREAPER = 36


#: prctl option: whether the process may be dumped and its /proc files read by processes of its user.
_PR_SET_DUMPABLE = 4


@cache
def subreaper_possible() -> bool:
    return sys.platform.startswith("linux") and os.path.isdir("/proc")


#: The process (pid) that made itself a subreaper, and whether it could: a per-process fact (cleared in a
#: forked child, hence the pid), never reset.
_subreaper: tuple[int, bool] | None = None


def become_subreaper() -> bool:
    """Make this process adopt orphaned descendants (Linux), so the sweep can find them.

    Done once per process: the setting is cleared in a forked child, so a run forked from a process that
    had made itself one (a server that forks runs) makes itself one again."""
    global _subreaper
    if _subreaper is not None and _subreaper[0] == os.getpid():
        return _subreaper[1]
    value = False
    if subreaper_possible():
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            value = libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
        except (OSError, AttributeError):
            value = False
    _subreaper = (os.getpid(), value)
    return value


@cache
def refuse_inspection() -> bool:
    """Make this process non-dumpable (Linux), so a process of the same user cannot read its environment or
    memory through ``/proc/<pid>/environ`` and ``/proc/<pid>/mem`` (a root process still can: only the
    sandbox stops that). Used when implementations run without the sandbox."""
    if not subreaper_possible():
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        status: int = libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
        return status == 0
    except (OSError, AttributeError):
        return False


def _processes() -> dict[int, tuple[int, int]]:
    """Every visible process: pid -> (ppid, pgid)."""
    found: dict[int, tuple[int, int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                text = handle.read().decode("ascii", "replace")
        except OSError:
            continue
        fields = text[text.rfind(")") + 2:].split()
        if len(fields) > 2:
            found[int(entry)] = (int(fields[1]), int(fields[2]))
    return found


def _marker(pid: int) -> str | None:
    """The box token in a process's environment (None when it has none or cannot be read)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            entries = handle.read().split(b"\0")
    except OSError:
        return None
    prefix = f"{MARKER}=".encode()
    return next((e[len(prefix):].decode("ascii", "replace") for e in entries if e.startswith(prefix)), None)


def sweep(token: str) -> int:
    """Kill what a finished box left running: its marked processes, and descendants adopted by
    this process (another process group, not a live implementation nor one of its helpers),
    each with its own descendants.  Returns how many were killed.  Needs /proc."""
    if not subreaper_possible():
        return 0
    me, group = os.getpid(), os.getpgrp()
    table = _processes()
    keep, alive = set(live_pids()), live_tokens() - {token}
    strays = set()
    for pid, (ppid, pgid) in table.items():
        if pid == me or pid in keep:
            continue
        marker = _marker(pid)
        if marker == token or (ppid == me and pgid != group and marker not in alive):
            strays.add(pid)
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    doomed: set[int] = set()
    pending = list(strays)
    while pending:
        pid = pending.pop()
        if pid not in doomed and pid != me:
            doomed.add(pid)
            pending.extend(children.get(pid, []))
    for pid in doomed:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    _reap(pid for pid in doomed if table.get(pid, (0, 0))[0] == me)
    await_death(doomed)
    return len(doomed)


def settle(pids: set[int]) -> None:
    """Wait until the killed ``pids`` are dead or zombies, and reap those that are this process's children
    (orphans it adopted as a subreaper): the end of a sweep, for processes found another way."""
    await_death(pids)
    _reap(pid for pid in pids if _parent(pid) == os.getpid())


def _parent(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return int(handle.read().rsplit(b")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def await_death(pids: set[int], limit: float = 2.0) -> None:
    """Wait (briefly) until the killed processes are gone or zombies."""
    deadline = time.monotonic() + limit
    for pid in pids:
        while time.monotonic() < deadline:
            try:
                with open(f"/proc/{pid}/stat", "rb") as handle:
                    state = handle.read().rsplit(b")", 1)[1].split()[0]
            except (OSError, IndexError):
                break
            if state in (b"Z", b"X"):
                break
            time.sleep(0.005)


def _reap(pids: Iterable[int]) -> None:
    for pid in pids:
        for _ in range(100):
            try:
                done, _status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                break
            if done:
                break
            time.sleep(0.01)
