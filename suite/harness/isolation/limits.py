"""Resource limits for one implementation process, enforced by the kernel.

Every process an implementation starts inherits them: rlimits set by the shell that starts it
(address space, CPU time, open files, file size; ``launch``), and, where the machine lets this
process make cgroups, a pids cgroup of its own per process (a fork bomb stops at the limit;
``RLIMIT_NPROC`` is no substitute: it counts every process of the user on the machine, and
the kernel never applies it to root's).  Disk is bounded by the sandbox, whose scratch
folders are tmpfs mounts of a fixed size (``sandbox.py``).

A case that hits a limit fails as a crash whose message names the limit (``explain``).
"""

from __future__ import annotations

import os
import resource
import secrets
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from functools import cache
from pathlib import Path

from asr_conformance.vocabulary.errors import UserError
from asr_conformance.vocabulary.option_defaults import LIMIT_DEFAULTS
from asr_conformance.vocabulary.option_defaults import LIMIT_NAMES as NAMES
from asr_conformance.vocabulary.option_defaults import LIMIT_SIZES as SIZES
from asr_conformance.vocabulary.option_defaults import MIB as MIB  # re-exported: limits are written in MiB


@dataclass(frozen=True, slots=True)
class Limits:
    """The limits of one implementation process and everything it starts (0: no limit)."""

    #: Address space (RLIMIT_AS), bytes.
    memory: int = LIMIT_DEFAULTS["memory"]
    #: CPU time (RLIMIT_CPU), seconds, over the process's whole life (a persistent one lives for the run).
    cpu: int = LIMIT_DEFAULTS["cpu"]
    #: Processes and threads alive at once (a pids cgroup, where one can be made).
    processes: int = LIMIT_DEFAULTS["processes"]
    #: Open file descriptors (RLIMIT_NOFILE).
    open_files: int = LIMIT_DEFAULTS["open_files"]
    #: Largest file it may write (RLIMIT_FSIZE), bytes.
    file_size: int = LIMIT_DEFAULTS["file_size"]
    #: Size of each scratch folder in the sandbox (/tmp, /dev/shm, HOME, TMPDIR), bytes.
    disk: int = LIMIT_DEFAULTS["disk"]

    def with_changes(self, changes: Mapping[str, int]) -> Limits:
        return replace(self, **dict(changes))

    def describe(self) -> str:
        """One phrase for the run header."""
        return (f"address space {_size(self.memory)}, CPU {self.cpu} s, {self.processes} processes"
                f"{'' if pids_cgroups() else ' (not enforced: no pids cgroup can be made here)'}, "
                f"{self.open_files} open files, file size {_size(self.file_size)}, scratch disk {_size(self.disk)}")


DEFAULTS = Limits()
assert set(NAMES) == set(LIMIT_DEFAULTS) == {f.name for f in fields(Limits)}


class LimitError(UserError, ValueError):
    """A limit value the harness refuses; the message names where it came from."""


def parse_limit(name: str, value: object, where: str) -> int:
    """A whole number (sizes may carry a K, M or G suffix), at least 1; LimitError naming ``where``."""
    if isinstance(value, bool):
        raise LimitError(f"{where}: a whole number, not {value!r}")
    if isinstance(value, str) and name in SIZES:
        units = {"K": 2**10, "M": 2**20, "G": 2**30}
        text = value.strip().removesuffix("iB").removesuffix("B")
        factor = units.get(text[-1:].upper(), 1)
        try:
            number = float(text[:-1] if factor > 1 else text) * factor
        except ValueError:
            raise LimitError(f"{where}: a size in bytes (suffix K, M or G), not {value!r}") from None
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        number = value
    else:
        raise LimitError(f"{where}: a whole number, not {value!r}")
    if number != number or number < 1 or number > 2**62:
        raise LimitError(f"{where}: must be at least 1, not {value!r}")
    return int(number)


def size_label(value: int) -> str:
    """``256 MiB``, ``4 KiB`` or ``1000 bytes``, as messages and the header write sizes."""
    return _size(value)


def _size(value: int) -> str:
    for unit, factor in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if value >= factor and value % factor == 0:
            return f"{value // factor} {unit}"
    return f"{value} bytes"


# --- the pids cgroup ---------------------------------------------------------------------


@cache
def _pids_parent() -> Path | None:
    """A pids cgroup folder this process may make children in (cgroup v1 or v2), or None."""
    try:
        mounts = Path("/proc/self/mountinfo").read_text().splitlines()
        membership = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in mounts:
        left, _, right = line.partition(" - ")
        parts, kind = left.split(), right.split()
        if len(parts) < 5 or not kind:
            continue
        point = Path(parts[4])
        if kind[0] == "cgroup" and "pids" in kind[-1].split(","):
            relative = next((m.split(":", 2)[2] for m in membership if m.split(":")[1:2] == ["pids"]), "/")
        elif kind[0] == "cgroup2":
            relative = next((m.split(":", 2)[2] for m in membership if m.startswith("0::")), "/")
            folder = point / relative.lstrip("/")
            try:
                if "pids" not in (folder / "cgroup.subtree_control").read_text().split():
                    continue
            except OSError:
                continue
        else:
            continue
        folder = point / relative.lstrip("/")
        if os.access(folder, os.W_OK) and (folder / "cgroup.procs").exists():
            return folder
    return None


GROUP_PREFIX = "asr-"


def remove_stale_groups() -> list[Path]:
    """Remove the pids cgroups that runs whose process is gone left behind (a run killed with SIGKILL)."""
    parent = _pids_parent()
    removed: list[Path] = []
    if parent is None:
        return removed
    for folder in parent.glob(f"{GROUP_PREFIX}*-*"):
        owner = folder.name[len(GROUP_PREFIX):].split("-", 1)[0]
        if owner.isdigit() and not alive(int(owner)):
            ProcessGroup.remove(folder)
            removed.append(folder)
    return removed


def alive(pid: int) -> bool:
    """Whether a process with this pid exists (one of another user's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def pids_cgroups() -> bool:
    """Whether each implementation process gets a pids cgroup of its own."""
    return _pids_parent() is not None


class ProcessGroup:
    """One implementation process's pids cgroup: made before it starts, removed after it ends."""

    def __init__(self, limit: int) -> None:
        self.folder: Path | None = None
        parent = _pids_parent()
        if parent is None or not limit:
            return
        folder = parent / f"{GROUP_PREFIX}{os.getpid()}-{secrets.token_hex(6)}"
        try:
            folder.mkdir()
            (folder / "pids.max").write_text(str(limit))
        except OSError:
            self.remove(folder)
            return
        self.folder = folder

    def join_path(self) -> str | None:
        return str(self.folder / "cgroup.procs") if self.folder else None

    def hit(self) -> bool:
        """Whether a fork was refused at the limit."""
        if self.folder is None:
            return False
        try:
            for line in (self.folder / "pids.events").read_text().splitlines():
                name, _, count = line.partition(" ")
                if name == "max" and int(count or 0) > 0:
                    return True
        except (OSError, ValueError):
            pass
        return False

    def members(self) -> list[int] | None:
        """The processes in the group, not yet exited (None when it cannot be read).  The kernel lists no
        zombie and no process past the point of its exit where it leaves its cgroup."""
        if self.folder is None:
            return None
        try:
            return [int(pid) for pid in (self.folder / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return None

    def signal_all(self) -> bool:
        """SIGKILL every process now in the group, once, without waiting for any to be gone (False when the group
        cannot be read).  A process killed so runs no code of its own again; one that forked while this read the
        list is left to ``end``, which a caller that signals first must still call (``Child.stop``)."""
        found = self.members()
        if found is None:
            return False
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        return True

    def end(self, limit: float = 2.0) -> set[int] | None:
        """SIGKILL every process in the group, and again until none is left (a fork that raced a kill lands in
        the group too: nothing leaves a pids cgroup but by a write to another cgroup's files, which the sandbox
        never shows).  Returns every pid it killed, or None when the group could not be read or did not empty
        within ``limit`` seconds (the caller then sweeps ``/proc``).

        Reading one small file per round replaces reading every process's ``/proc`` entry."""
        import time

        killed: set[int] = set()
        deadline = time.monotonic() + limit
        while True:
            found = self.members()
            if found is None:
                return None
            if not found:
                return killed
            if time.monotonic() > deadline:
                return None
            for pid in found:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            if killed.issuperset(found):
                time.sleep(0.001)
            killed.update(found)

    def close(self) -> None:
        if self.folder is not None:
            self.remove(self.folder)
            self.folder = None

    @staticmethod
    def remove(folder: Path) -> None:
        """Kill what is left in it, then remove it (a cgroup folder goes with rmdir once empty)."""
        try:
            for pid in (folder / "cgroup.procs").read_text().split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (OSError, ValueError):
                    pass
        except OSError:
            pass
        for _ in range(200):
            try:
                folder.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                import time

                time.sleep(0.005)


# --- applying them to the child ---------------------------------------------------------


#: The shell that applies the limits and then becomes the command (POSIX, always present).
SHELL = "/bin/sh"
#: What the shell does: join the pids cgroup (when given), set each rlimit soft and hard, exec.
_JOIN = 'echo 0 > "$1" || { echo "asr-conformance: cannot join the pids cgroup $1" >&2; exit 126; }; shift; '
#: Each rlimit, its ``ulimit`` flag and the unit that flag counts in (bytes per unit).
_ULIMIT = (("memory", resource.RLIMIT_AS, "-v", 1024), ("cpu", resource.RLIMIT_CPU, "-t", 1),
           ("open_files", resource.RLIMIT_NOFILE, "-n", 1), ("file_size", resource.RLIMIT_FSIZE, "-f", 512))


def launch(command: Sequence[str], limits: Limits, cgroup_procs: str | None) -> list[str]:
    """``command`` started under the limits: a ``/bin/sh`` that joins the cgroup, sets the rlimits
    (never above this process's hard limits, which the child inherits) and execs the command.

    A shell rather than a ``preexec_fn``: without one, subprocess starts the child with vfork, about
    ten times faster than forking this process (the harness starts one process per case).  Sizes
    are rounded down to the shell's units (KiB for the address space, 512 bytes for a file)."""
    words = []
    for name, kind, flag, unit in _ULIMIT:
        value = getattr(limits, name)
        if not value:
            continue
        _soft, hard = resource.getrlimit(kind)
        ceiling = value if hard == resource.RLIM_INFINITY else min(value, hard)
        words.append(f"ulimit {flag} {max(1, ceiling // unit)}")
    script = (_JOIN if cgroup_procs else "") + "".join(
        f"{word} || {{ echo 'asr-conformance: cannot set {word}' >&2; exit 126; }}; " for word in words)
    return [SHELL, "-c", script + 'exec "$@"', "asr-limits", *([cgroup_procs] if cgroup_procs else []), *command]


# --- naming the limit a crash hit ----------------------------------------------------------


_MEMORY_WORDS = ("MemoryError", "Cannot allocate memory", "std::bad_alloc", "out of memory",
                 "JavaScript heap out of memory", "OutOfMemoryError", "memory allocation of")
_FILES_WORDS = ("Too many open files", "EMFILE")
_FORK_WORDS = ("Resource temporarily unavailable", "BlockingIOError: [Errno 11]", "fork: retry", "EAGAIN")


def explain(returncode: int | None, stderr: str, limits: Limits, forks_refused: bool) -> str:
    """Which limit a crashed process most likely hit ("" when none shows), for the crash message."""
    if returncode == -signal.SIGXCPU:
        return f"it used up its CPU time limit of {limits.cpu} s (--limit-cpu, manifest limits.cpu)"
    if returncode == -signal.SIGXFSZ:
        return (f"it wrote a file past the file size limit of {_size(limits.file_size)} "
                "(--limit-file-size, manifest limits.file_size)")
    if forks_refused:
        return (f"it reached the limit of {limits.processes} processes (--limit-processes, "
                "manifest limits.processes)")
    if any(word in stderr for word in _MEMORY_WORDS):
        return (f"it ran out of memory under the address-space limit of {_size(limits.memory)} "
                "(--limit-memory, manifest limits.memory)")
    if any(word in stderr for word in _FILES_WORDS):
        return f"it reached the limit of {limits.open_files} open files (--limit-open-files, manifest limits.open_files)"
    if "No space left on device" in stderr:
        return f"it filled a scratch folder of {_size(limits.disk)} (--limit-disk, manifest limits.disk)"
    if any(word in stderr for word in _FORK_WORDS) and pids_cgroups():
        return f"it may have reached the limit of {limits.processes} processes (--limit-processes)"
    return ""
