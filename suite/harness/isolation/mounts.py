"""Size-limited tmpfs mounts over the output folders an implementation writes, where the harness may mount.

In the sandbox every folder an implementation can write is a private, size-limited tmpfs of
bubblewrap's (``/tmp``, ``/dev/shm``, its HOME and TMPDIR), except the folders of the machine
bound in for it to write: its box's ``out/`` (a producer's ``output_dir``s).  ``RLIMIT_FSIZE``
bounds each file it writes there, not how many, so where the harness may mount file systems
(root with ``CAP_SYS_ADMIN``, on Linux) each box's ``out/`` gets a tmpfs of its own, of the disk
limit's size and a bounded number of files, taken away with the box.  Elsewhere the run header
says that output folders are bounded per file only.

A mount is always released before its folder is moved or removed (``release_under``), and a
later run releases the mounts left under the staging of a run that was killed.
"""

from __future__ import annotations

import ctypes
import os
import re
import sys
import tempfile
import threading
from functools import cache

#: Files (inodes) one output folder may hold: far more than a stream needs, far fewer than a bomb makes.
MAX_FILES = 4096
_MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 2, 4, 8
_MNT_DETACH = 2

_MS_REMOUNT = 32

#: Guards ``_mounted``.  Per-process, as what it guards.
_lock = threading.Lock()
#: The mounts this process made, with their sizes: a per-process registry of OS resources (mounts on the
#: machine, released as their folders are removed), never a run's choice.
_mounted: dict[str, int] = {}


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _mount(folder: str, size: int, again: bool = False) -> bool:
    options = f"size={max(size, 4096)},nr_inodes={MAX_FILES},mode=0700".encode()
    flags = _MS_NOSUID | _MS_NODEV | _MS_NOEXEC | (_MS_REMOUNT if again else 0)
    try:
        done: int = _libc().mount(b"tmpfs", folder.encode(), b"tmpfs", flags, options)
    except (OSError, AttributeError):
        return False
    return done == 0


def _unmount(folder: str) -> None:
    try:
        _libc().umount2(folder.encode(), _MNT_DETACH)
    except (OSError, AttributeError):
        pass


@cache
def may_mount() -> bool:
    """Whether this process can mount a tmpfs (tried once on a folder of its own)."""
    if not sys.platform.startswith("linux") or os.geteuid() != 0:
        return False
    probe = tempfile.mkdtemp(prefix="asr-mount-probe-")
    try:
        if not _mount(probe, 4096):
            return False
        _unmount(probe)
        return True
    finally:
        try:
            os.rmdir(probe)
        except OSError:
            pass


def limit_folder(folder: str | os.PathLike[str], size: int) -> bool:
    """Put a tmpfs of ``size`` bytes over the empty ``folder``, or give the one there that size (a tmpfs
    is resized in place, its files kept); whether the folder is limited now."""
    real = os.path.realpath(folder)
    with _lock:
        if real in _mounted:
            if _mounted[real] != size and _mount(real, size, again=True):
                _mounted[real] = size
            return True
        if not may_mount() or os.listdir(real) or not _mount(real, size):
            return False
        _mounted[real] = size
        return True


def is_limited(folder: str | os.PathLike[str]) -> bool:
    return os.path.realpath(folder) in _mounted


def filled(folder: str | os.PathLike[str]) -> bool:
    """Whether ``folder`` is a limited tmpfs with no room or no file left (a write there met ENOSPC)."""
    if not is_limited(folder):
        return False
    try:
        room = os.statvfs(folder)
    except OSError:
        return False
    return room.f_bavail == 0 or room.f_favail == 0


def describe() -> str:
    """The run header's phrase for the output folders."""
    if may_mount():
        return f"output folders: a tmpfs each, of the scratch disk size and at most {MAX_FILES} files"
    return "output folders: bounded per file only (the harness cannot mount a tmpfs here: not root, or no CAP_SYS_ADMIN)"


def release_under(path: str | os.PathLike[str], scan: bool = False) -> None:
    """Detach every mount this process made at or under ``path`` and, with ``scan``, any other mount
    there (one a killed run left, read from ``/proc/self/mountinfo``), deepest first."""
    base = os.path.realpath(path)
    inside = base.rstrip("/") + "/"
    with _lock:
        found = {m for m in _mounted if m == base or m.startswith(inside)}
        for point in found:
            del _mounted[point]
    if scan and may_mount():
        found.update(m for m in _mount_points() if m == base or m.startswith(inside))
    for point in sorted(found, key=len, reverse=True):
        _unmount(point)


def _mount_points() -> list[str]:
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return []
    # The kernel writes a space in a path as \040 (and a tab, newline and backslash likewise).
    return [re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), parts[4])
            for parts in (line.split() for line in lines) if len(parts) > 4]
