"""Running untrusted implementations: contained, bounded, on a deadline, and
nothing left behind.

Every child starts in a new session inside its box (``boxes``), so a
hang is ended by killing the whole group; whatever left the group is ended
through the child's pids cgroup in the sandbox (nothing there can leave it),
else by the subreaper sweep of ``/proc``.  Output is read by one deadline loop on
the pipes' raw file descriptors (non-blocking ``os.read`` under a selector),
never by threads: nothing blocks past the deadline, and once the main child
has exited the case ends at once, whoever still holds its stdout.
"""

from __future__ import annotations

import os
import re
import selectors
import signal
import subprocess
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from asr_conformance.harness.isolation import (
    limits,
    live_processes,
    mounts,
    policies,
    sandbox,
    signal_handlers,
    sweeping,
    wrapping,
)
from asr_conformance.harness.isolation.boxes import Box
from asr_conformance.harness.isolation.limits import Limits, ProcessGroup
from asr_conformance.harness.isolation.policies import Policy

#: Largest stdout a one-shot validator or reader answer may have; past it the case is a flood.
STDOUT_LIMIT = 4 * 1024 * 1024
#: How much of stderr is kept (the tail), for failure messages.
STDERR_TAIL = 4096
_CHUNK = 65536
#: How often the exit of a child is checked where no pidfd tells it.
_POLL = 0.02


class TailBuffer:
    """Keeps the last ``limit`` bytes written to it (for stderr)."""

    def __init__(self, limit: int = STDERR_TAIL) -> None:
        self._chunks: deque[bytes] = deque()
        self._size = 0
        self._limit = limit

    def add(self, data: bytes) -> None:
        self._chunks.append(data)
        self._size += len(data)
        while self._size - len(self._chunks[0]) >= self._limit:
            self._size -= len(self._chunks.popleft())

    def text(self) -> str:
        data = b"".join(self._chunks)[-self._limit :]
        return data.decode("utf-8", "replace")


@dataclass
class Child:
    """One running implementation: its process, its box, raw pipe descriptors."""

    process: subprocess.Popen[bytes]
    box: Box
    owns_box: bool
    stderr: TailBuffer = field(default_factory=TailBuffer)
    #: Run inside bubblewrap (whose own failures and signal statuses read differently).
    sandboxed: bool = False
    pidfd: int | None = None
    #: Its limits and its pids cgroup (when one could be made).
    limits: Limits = field(default_factory=Limits)
    group: ProcessGroup | None = None
    #: The write end of the pipe a held sandbox waits on before it runs the command (``spawn(hold=True)``).
    release_fd: int | None = None
    _killed: bool = False
    #: ``stop`` has signalled it; what is left of it is ended by ``kill``.
    _stopped: bool = False

    def release(self) -> None:
        """Let a held sandbox run its command (one byte on the pipe it waits on)."""
        if self.release_fd is not None:
            try:
                os.write(self.release_fd, b"\0")
            except OSError:
                pass  # it is gone already: its end reads as the case's
            self._close_release()

    def _close_release(self) -> None:
        if self.release_fd is not None:
            try:
                os.close(self.release_fd)
            except OSError:
                pass
            self.release_fd = None

    def limit_hit(self) -> str:
        """Which limit the process most likely died of ("" when none shows)."""
        if mounts.filled(self.box.path / "out"):
            return (f"it filled its output folder of {limits.size_label(self.limits.disk)} "
                    "(--limit-disk, manifest limits.disk)")
        return limits.explain(self.returncode(), self.stderr.text(), self.limits,
                              self.group is not None and self.group.hit())

    @property
    def stdout_fd(self) -> int | None:
        return self.process.stdout.fileno() if self.process.stdout and not self.process.stdout.closed else None

    @property
    def stderr_fd(self) -> int | None:
        return self.process.stderr.fileno() if self.process.stderr and not self.process.stderr.closed else None

    def returncode(self) -> int | None:
        """The exit status (negative for a signal), the sandbox's 128+N read back as -N."""
        code = self.process.poll()
        if code is not None and self.sandboxed and code > 128 and (code - 128) in _SIGNALS:
            return -(code - 128)
        return code

    def sandbox_failed(self) -> str:
        """Why the sandbox never ran the command ("" when it did, or without a sandbox).

        bwrap says so on stderr ("bwrap: ...") and exits 1, which must not read as a
        validator's reject; an implementation that imitates it only turns its answer into a crash."""
        said = self.stderr.text().strip()
        if self.sandboxed and self.process.poll() == 1 and said.startswith("bwrap: "):
            return f"the sandbox (bwrap) could not run the implementation: {said[:500]}"
        return ""

    def read_stderr(self) -> None:
        fd = self.stderr_fd
        if fd is not None:
            data = _read(fd)
            if data:
                self.stderr.add(data)

    def kill(self) -> None:
        """SIGKILL the whole group, reap the process, end what escaped; the box stays until close().

        In the sandbox nothing the case started can leave its PID namespace nor its pids cgroup, so the
        cgroup's member list is the whole of what may still run: each is killed and waited for (the
        namespace dies with its first process too, but asynchronously).  Without the sandbox, or without
        a cgroup, the subreaper sweep reads ``/proc`` for the box's processes and adopted strays."""
        if self._killed:
            return
        self._killed = True
        if not self._stopped:
            kill_group(self.process)
        self._end_the_rest()

    def _end_the_rest(self) -> None:
        if self.sandboxed and self.group is not None:
            killed = self.group.end()
            if killed is not None:
                sweeping.settle(killed - {self.process.pid})
                return
        sweeping.sweep(self.box.token)

    def stop(self) -> bool:
        """SIGKILL the process's group and, in the sandbox, every member of its pids cgroup once, without
        waiting for them to be gone: enough to read the case's output once it is at its end, while its
        sandbox's own first process still exits (a millisecond or more per case).  ``close(later=...)`` then
        hands the waiting (``kill``'s) to be done while the next case runs.  False, having done ``kill`` itself,
        where there is no cgroup to end the rest through."""
        if self._killed or self._stopped:
            return self._stopped
        if not (self.sandboxed and self.group is not None):
            self.kill()
            return False
        kill_group(self.process)
        self._stopped = True
        if not self.group.signal_all():
            self.kill()
            return False
        return True

    def close(self, later: Callable[[Callable[[], None]], None] | None = None) -> None:
        """Kill, close every descriptor, and remove the box when it is the child's own.  A held sandbox is
        killed before its pipe is closed: an end of file would release it too.  ``later`` receives what is left
        to do instead (``_finish``), to be done while the next case runs."""
        if later is None or not self._stopped:
            self.kill()
        self._close_release()
        live_processes.unregister(self.process)
        for pipe in (self.process.stdin, self.process.stdout, self.process.stderr):
            if pipe is not None:
                try:
                    pipe.close()
                except OSError:
                    pass
        if self.pidfd is not None:
            try:
                os.close(self.pidfd)
            except OSError:
                pass
            self.pidfd = None
        if later is None:
            self._finish()
        else:
            later(self._finish)

    def _finish(self) -> None:
        """What ``close`` may leave for later: the wait until nothing of the case is left (``kill``; done already
        unless ``stop`` ended it), then the removal of its cgroup and, when it is the child's own, its box."""
        self.kill()
        if self.group is not None:
            self.group.close()
        if self.owns_box:
            self.box.close()


_SIGNALS = {int(s) for s in signal.Signals}


def spawn(command: Sequence[str], cwd: str | None, stdin: int, env: Mapping[str, str] | None = None,
          box: Box | None = None, writable: Iterable[str] = (), pass_env: Iterable[str] = (),
          policy: Policy | None = None, hold: bool = False) -> Child:
    """Start one implementation process, contained and limited, with non-blocking pipes.

    ``hold`` (in the sandbox only): bubblewrap makes the whole sandbox (namespaces, mounts, limits, cgroup)
    and then waits, before it runs the command, until ``Child.release``; a case's sandbox is so started
    while the case before it is judged (``oneshot.Ahead``)."""
    owns_box = box is None
    box = box or Box(policies.settings_of(policy))
    bounds = policies.effective_limits(policy)
    group = ProcessGroup(bounds.processes)
    waits_on: int | None = None
    release_fd: int | None = None
    try:
        environment = box.environment(env, pass_env)
        argv = wrapping.resolve_program(command, cwd, environment["PATH"])
        sandboxed = policies.sandbox_mode(policies.settings_of(policy).sandbox)[0] == "bwrap"
        if not sandboxed:
            sweeping.become_subreaper()
            sweeping.refuse_inspection()
        line = wrapping.wrap(argv, box, cwd, writable, policy)
        if hold and sandboxed:
            waits_on, release_fd = os.pipe()
            line[1:1] = ["--block-fd", str(waits_on)]
        process = subprocess.Popen(
            limits.launch(line, bounds, group.join_path()),
            stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env=environment,
            start_new_session=True, bufsize=0, pass_fds=() if waits_on is None else (waits_on,),
        )
    except BaseException:
        group.close()
        for fd in (waits_on, release_fd):
            if fd is not None:
                os.close(fd)
        if owns_box:
            box.close()
        raise
    if waits_on is not None:
        os.close(waits_on)
    live_processes.register(process, box.token)
    signal_handlers.install_handlers()  # a run ended by a signal must not leave it running
    child = Child(process, box, owns_box, sandboxed=sandboxed, limits=bounds, group=group, release_fd=release_fd)
    for fd in (child.stdout_fd, child.stderr_fd):
        if fd is not None:
            os.set_blocking(fd, False)
    if process.stdin is not None:
        os.set_blocking(process.stdin.fileno(), False)
    child.pidfd = _pidfd(process.pid)
    return child


def _pidfd(pid: int) -> int | None:
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return None
    try:
        value: int | None = opener(pid)
        return value
    except OSError:
        return None


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


def _read(fd: int) -> bytes | None:
    """One non-blocking read: bytes, b"" at end of file, None when nothing is there yet."""
    try:
        return os.read(fd, _CHUNK)
    except BlockingIOError:
        return None
    except OSError:
        return b""


def _drain(fd: int, into: bytearray, limit: int) -> bool:
    """Read what is already there, without waiting, up to ``limit`` bytes; True past the limit."""
    return _drain_to(fd, into, limit)[0]


def _drain_to(fd: int, into: bytearray, limit: int) -> tuple[bool, bool]:
    """``_drain``, and whether the pipe's end of file was read (no process holds it any more)."""
    while len(into) <= limit:
        data = _read(fd)
        if not data:
            return False, data == b""
        into.extend(data)
    return True, False


def wait_readable(child: Child, fds: Sequence[int], deadline: float) -> list[int]:
    """Wait until one of ``fds`` has data, the child exits, or the deadline passes; stderr is
    read on the way.  Returns the readable descriptors among ``fds`` ([] at exit or deadline)."""
    with selectors.DefaultSelector() as selector:
        for fd in fds:
            selector.register(fd, selectors.EVENT_READ)
        stderr_fd = child.stderr_fd
        if stderr_fd is not None and stderr_fd not in fds:
            selector.register(stderr_fd, selectors.EVENT_READ)
        if child.pidfd is not None:
            selector.register(child.pidfd, selectors.EVENT_READ)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or child.process.poll() is not None:
                return []
            wait = remaining if child.pidfd is not None else min(remaining, _POLL)
            ready = [key.fd for key, _ in selector.select(wait)]
            if stderr_fd in ready:
                data = _read(stderr_fd)
                if data == b"":
                    selector.unregister(stderr_fd)
                    stderr_fd = None
                elif data:
                    child.stderr.add(data)
            wanted = [fd for fd in ready if fd in fds]
            if wanted:
                return wanted
            if not selector.get_map():
                time.sleep(min(remaining, _POLL))


@dataclass(slots=True)
class Finished:
    """A one-shot run: exit status (negative for a signal) or why it has none."""

    returncode: int | None
    stdout: bytes
    stderr: str
    timed_out: bool = False
    flooded: bool = False
    #: Why there is no answer at all besides a timeout or a flood (the sandbox failed to start).
    failure: str = ""
    #: The resource limit the process most likely hit ("" when none shows; limits.explain).
    limit: str = ""


#: What bwrap says when it cannot make a mount point (for a file or folder it was told to cover).
_MOUNT_POINT_FAILED = re.compile(r"^bwrap: Can't (?:create file at|mkdir) (/[^:\n]*):", re.MULTILINE)


def vanished_mount_point(failure: str) -> bool:
    """Whether the sandbox failed only because an entry it was told to cover is gone since it was listed (a
    root-only file of the machine removed between the listing and the start): the machine changed, the
    implementation did nothing, so the start is tried again on a fresh listing."""
    found = _MOUNT_POINT_FAILED.search(failure.removeprefix("the sandbox (bwrap) could not run the implementation: "))
    return found is not None and not os.path.lexists(found.group(1))


def run_bounded(command: Sequence[str], timeout: float, cwd: str | None = None,
                env: Mapping[str, str] | None = None, stdout_limit: int = STDOUT_LIMIT,
                box: Box | None = None, writable: Iterable[str] = (), pass_env: Iterable[str] = (),
                policy: Policy | None = None, held: Child | None = None,
                then: Callable[[], None] | None = None,
                later: Callable[[Callable[[], None]], None] | None = None) -> Finished:
    """Run one process to completion within ``timeout`` seconds, bounded output; a start the machine's own
    churn spoiled (``vanished_mount_point``) is made once more, within what is left of the time.

    ``held``: the case's sandbox, started ahead and held (``spawn(hold=True)``), released here rather than a
    process started; ``then``: called once the process runs (the next case's sandbox is started meanwhile);
    ``later``: takes what is left of ending the case once its output is read (``Child.close``)."""
    deadline = time.monotonic() + timeout
    finished = _run_bounded(command, timeout, cwd, env, stdout_limit, box, writable, pass_env, policy, held, then,
                            later)
    left = deadline - time.monotonic()
    if finished.failure and left > 0 and vanished_mount_point(finished.failure):
        sandbox.forget_root_only()
        finished = _run_bounded(command, left, cwd, env, stdout_limit, box, writable, pass_env, policy)
    return finished


def _run_bounded(command: Sequence[str], timeout: float, cwd: str | None, env: Mapping[str, str] | None,
                 stdout_limit: int, box: Box | None, writable: Iterable[str], pass_env: Iterable[str],
                 policy: Policy | None, held: Child | None = None, then: Callable[[], None] | None = None,
                 later: Callable[[Callable[[], None]], None] | None = None) -> Finished:
    child = held or spawn(command, cwd, subprocess.DEVNULL, env, box, writable, pass_env, policy)
    child.release()
    collected = bytearray()
    flooded = timed_out = stopped = False
    deadline = time.monotonic() + timeout
    try:
        if then is not None:
            then()
        stdout_fd = child.stdout_fd
        assert stdout_fd is not None
        open_fds = [stdout_fd]
        while True:
            if child.process.poll() is not None:
                break
            if time.monotonic() >= deadline:
                timed_out = True
                break
            if not open_fds:
                wait_readable(child, [], deadline)
                continue
            if not wait_readable(child, open_fds, deadline):
                continue
            data = _read(stdout_fd)
            if data == b"":
                open_fds = []
            elif data:
                collected.extend(data)
                if len(collected) > stdout_limit:
                    flooded = True
                    break
        # Whatever the outcome, nothing of the case may outlive it; then take what is already written.  With
        # ``later``, every process of the case is signalled but not waited for, when its stdout is at its end (no
        # process holds it, so nothing more can be written): the wait is ``later``'s, while the next case runs, as
        # is the removal of its cgroup either way.
        stopped = later is not None and child.stop()
        if not flooded:
            flooded, at_end = _drain_to(stdout_fd, collected, stdout_limit) if open_fds else (False, True)
            if stopped and not (flooded or at_end):
                child.kill()
                flooded = _drain(stdout_fd, collected, stdout_limit)
        child.read_stderr()
        failure = child.sandbox_failed()
        code = child.returncode()
        hit = "" if timed_out or flooded or failure else child.limit_hit()
    finally:
        child.close(later if stopped else None)
    del collected[stdout_limit:]
    returncode = None if timed_out or flooded or failure else code
    return Finished(returncode, bytes(collected), child.stderr.text(), timed_out, flooded, failure, hit)
