"""The registry of this process's live implementation processes, and killing them all at once.

Process-wide by necessity: a signal handler (``signal_handlers``) and ``atexit`` reach nothing but a
module, and what they must kill is every implementation this process started, whichever run started
it.  Each process is registered when it starts and unregistered when it is done (``processes``), so
the registry is a per-process registry of OS resources, empty between cases: no test resets it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading

#: Every live implementation process of this process, by pid: the per-process registry of the module docstring.
_live: dict[int, subprocess.Popen[bytes]] = {}


#: The box token of each live implementation process, by pid (per-process, as ``_live``).
_live_tokens: dict[int, str] = {}


#: Guards ``_live`` and ``_live_tokens``.  Per-process, as what it guards.
_live_lock = threading.Lock()


def register(process: subprocess.Popen[bytes], token: str = "") -> None:
    with _live_lock:
        _live[process.pid] = process
        _live_tokens[process.pid] = token


def unregister(process: subprocess.Popen[bytes]) -> None:
    with _live_lock:
        _live.pop(process.pid, None)
        _live_tokens.pop(process.pid, None)


def live_pids() -> list[int]:
    with _live_lock:
        return list(_live)


def live_tokens() -> set[str]:
    with _live_lock:
        return set(_live_tokens.values()) - {""}


def kill_all_live() -> None:
    """SIGKILL every live implementation's group (on SIGINT, SIGTERM and at exit)."""
    with _live_lock:
        processes = list(_live.values())
    for process in processes:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            process.kill()
        except OSError:
            pass
