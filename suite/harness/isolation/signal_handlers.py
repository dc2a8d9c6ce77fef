"""SIGINT and SIGTERM end the live implementations and take the staging away, then do what they did before.

Installed once per process, from the main thread, when the first implementation starts
(``processes``).  A run ended by a signal never runs ``atexit``, so without them an implementation
would outlive the run and its staging would be left on the machine.  Whether they are installed is
the one piece of state here: a fact about this process, never reset.
"""

from __future__ import annotations

import atexit
import os
import signal
import threading
from collections.abc import Callable

from asr_conformance.harness.isolation import boxes
from asr_conformance.harness.isolation.live_processes import kill_all_live, live_pids
from asr_conformance.harness.isolation.sweeping import await_death

#: Whether this process installed its handlers: a per-process fact (handlers are the process's), never reset.
_handlers_installed = False


def install_handlers() -> None:
    """Once, from the main thread: SIGINT and SIGTERM kill live children, then do what they did before."""
    global _handlers_installed
    if _handlers_installed or threading.current_thread() is not threading.main_thread():
        return
    _handlers_installed = True
    atexit.register(kill_all_live)
    for signum in (signal.SIGINT, signal.SIGTERM):
        previous = signal.getsignal(signum)
        signal.signal(signum, _chained(previous))


def _end_for_signal() -> None:
    """Kill every live implementation, wait until each is dead (a dying process may still hold or
    write its box), and take the staging away."""
    pids = set(live_pids())
    kill_all_live()
    await_death(pids, limit=5.0)
    boxes.remove_staging()


def _chained(previous: object) -> Callable[[int, object], None]:
    def handler(signum: int, frame: object) -> None:
        if previous == signal.SIG_DFL:
            _end_for_signal()
        else:
            kill_all_live()
        if callable(previous):
            previous(signum, frame)
        elif previous == signal.SIG_DFL:
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
    return handler
