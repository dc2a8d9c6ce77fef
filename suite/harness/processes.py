"""Running untrusted implementations: own process group, bounded reads,
deadlines, and nothing left behind.

Every child starts in a new session, so a hang is ended by killing the whole
group (the implementation's own children included).  Output is read by
threads into bounded buffers; more than the bound is a flood and ends the
process at once.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

#: Largest stdout a one-shot answer may have; past it the case is a flood.
STDOUT_LIMIT = 4 * 1024 * 1024
#: How much of stderr is kept (the tail), for failure messages.
STDERR_TAIL = 4096
_CHUNK = 65536


def child_environment(overrides: Mapping[str, str] | None = None) -> dict[str, str]:
    """The caller's environment, with this Python's scripts folder first on PATH.

    Examples and adapters written in Python (``#!/usr/bin/env python3``) then
    run with the interpreter the suite is installed in, activated or not.
    ``overrides`` (a producer's conversion environment, say) are applied last."""
    env = dict(os.environ)
    scripts = str(Path(sys.executable).parent)
    env["PATH"] = scripts + os.pathsep + env.get("PATH", "")
    env.setdefault("PYTHONUNBUFFERED", "1")
    env.update(overrides or {})
    return env


def spawn(command: Sequence[str], cwd: str | None, stdin: int | IO[bytes] | None,
          env: Mapping[str, str] | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        list(command),
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env=child_environment(env),
        start_new_session=True,
    )


def kill_group(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL the process's whole group and reap the process."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        process.kill()
    except ProcessLookupError:
        pass
    process.wait()


class TailBuffer:
    """Keeps the last ``limit`` bytes written to it (for stderr)."""

    def __init__(self, limit: int = STDERR_TAIL) -> None:
        self._chunks: deque[bytes] = deque()
        self._size = 0
        self._limit = limit
        self._lock = threading.Lock()

    def add(self, data: bytes) -> None:
        with self._lock:
            self._chunks.append(data)
            self._size += len(data)
            while self._size - len(self._chunks[0]) >= self._limit:
                self._size -= len(self._chunks.popleft())

    def text(self) -> str:
        with self._lock:
            data = b"".join(self._chunks)[-self._limit :]
        return data.decode("utf-8", "replace")


def drain_into(stream: IO[bytes], tail: TailBuffer) -> threading.Thread:
    """Read a pipe to its end in a daemon thread, keeping only its tail."""

    def run() -> None:
        try:
            while chunk := stream.read1(_CHUNK) if hasattr(stream, "read1") else stream.read(_CHUNK):
                tail.add(chunk)
        except (OSError, ValueError):
            pass

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


@dataclass(slots=True)
class Finished:
    """A one-shot run: exit status (negative for a signal) or why it has none."""

    returncode: int | None
    stdout: bytes
    stderr: str
    timed_out: bool = False
    flooded: bool = False


def run_bounded(command: Sequence[str], timeout: float, cwd: str | None = None,
                env: Mapping[str, str] | None = None, stdout_limit: int = STDOUT_LIMIT) -> Finished:
    """Run one process to completion within ``timeout`` seconds, bounded output."""
    process = spawn(command, cwd, subprocess.DEVNULL, env)
    stderr = TailBuffer()
    stderr_thread = drain_into(process.stderr, stderr)  # type: ignore[arg-type]
    collected = bytearray()
    flooded = threading.Event()

    def read_stdout() -> None:
        stream = process.stdout
        assert stream is not None
        try:
            while chunk := stream.read1(_CHUNK):
                if len(collected) + len(chunk) > stdout_limit:
                    collected.extend(chunk[: stdout_limit - len(collected)])
                    flooded.set()
                    kill_group(process)
                    return
                collected.extend(chunk)
        except (OSError, ValueError):
            pass

    stdout_thread = threading.Thread(target=read_stdout, daemon=True)
    stdout_thread.start()
    timed_out = False
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
    # Whatever the outcome, nothing of the group may outlive the case.
    kill_group(process)
    stdout_thread.join(timeout=5)
    stderr_thread.join(timeout=5)
    for pipe in (process.stdout, process.stderr):
        if pipe is not None:
            pipe.close()
    returncode = None if timed_out or flooded.is_set() else process.returncode
    return Finished(returncode, bytes(collected), stderr.text(), timed_out, flooded.is_set())
