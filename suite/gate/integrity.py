"""Digests of the ground truth (the case corpus) and the judge (the package's code), taken at the start
of a run and checked at its end.

An implementation under test may try to rewrite the corpus or patch the installed harness; a run
whose files changed under it certifies nothing.  Hashing is bounded, because the corpus folder
may hold anything: each file is read up to a size limit (a larger one is recorded by its size,
not read), links and other non-regular entries (FIFOs, devices, sockets) are recorded by kind
and never opened, links to folders are not followed, and the number of entries is capped.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

#: Largest file hashed; a larger one is recorded as "oversized" with its size.
MAX_FILE_BYTES = 16 * 1024 * 1024
#: Most entries recorded in one folder tree; past it the snapshot says it stopped.
MAX_ENTRIES = 50_000


@dataclass(frozen=True)
class Snapshot:
    """Each entry of a folder tree by relative path: ``sha256:…`` for a file, or what else it is."""

    root: Path
    entries: dict[str, str] = field(default_factory=dict)
    #: Entries that are not plain, hashable files (links, FIFOs, oversized files, a cut-off listing).
    flagged: tuple[str, ...] = ()

    @property
    def digest(self) -> str:
        """One sha256 over every entry, in path order: two snapshots of the same tree agree."""
        total = hashlib.sha256()
        for name in sorted(self.entries):
            total.update(name.encode("utf-8", "surrogateescape") + b"\0" + self.entries[name].encode() + b"\n")
        return "sha256:" + total.hexdigest()

    def count(self, suffix: str) -> int:
        return sum(1 for name in self.entries if name.endswith(suffix))


def file_digest(path: Path, limit: int = MAX_FILE_BYTES) -> str:
    """``sha256:…`` of a regular file, or a label saying why it was not read (never follows a link, never blocks)."""
    try:
        info = os.lstat(path)
    except OSError as error:
        return f"unreadable:{error.errno}"
    if stat.S_ISLNK(info.st_mode):
        try:
            return "link:" + os.readlink(path)
        except OSError:
            return "link"
    if not stat.S_ISREG(info.st_mode):
        return "special:" + stat.filemode(info.st_mode)[0]
    if info.st_size > limit:
        return f"oversized:{info.st_size}"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as error:
        return f"unreadable:{error.errno}"
    digest = hashlib.sha256()
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return "special"
        read = 0
        while read <= limit:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            read += len(chunk)
            digest.update(chunk)
        if read > limit:
            return f"oversized:{read}"
    except OSError as error:
        return f"unreadable:{error.errno}"
    finally:
        os.close(fd)
    return "sha256:" + digest.hexdigest()


def snapshot(root: Path, keep: Callable[[str], bool] = lambda name: True, limit: int = MAX_FILE_BYTES,
             max_entries: int = MAX_ENTRIES) -> Snapshot:
    """Every entry under ``root`` that ``keep`` accepts (by relative POSIX path), bounded as the module says."""
    entries: dict[str, str] = {}
    flagged: list[str] = []
    if not root.is_dir():
        return Snapshot(root, {}, ("(no folder)",))
    for folder, dirs, files in os.walk(root, followlinks=False):
        dirs.sort()
        here = Path(folder)
        for name in sorted(files) + [d for d in dirs if (here / d).is_symlink()]:
            relative = (here / name).relative_to(root).as_posix()
            if not keep(relative):
                continue
            if len(entries) >= max_entries:
                flagged.append(f"(more than {max_entries} entries; the rest not hashed)")
                return Snapshot(root, entries, tuple(flagged))
            entries[relative] = file_digest(here / name, limit)
            if not entries[relative].startswith("sha256:"):
                flagged.append(relative)
    return Snapshot(root, entries, tuple(flagged))


def changed(before: Snapshot, after: Snapshot) -> list[str]:
    """The entries added, removed or altered between two snapshots of one tree, in path order."""
    names = set(before.entries) | set(after.entries)
    return sorted(n for n in names if before.entries.get(n) != after.entries.get(n))


def package_code(name: str) -> bool:
    """The files that make up the judge: Python modules and published schemas (not caches, not tests)."""
    parts = name.split("/")
    if "__pycache__" in parts or parts[0] in ("tests", "benchmarks"):
        return False
    return name.endswith(".py") or "schemas" in parts[:-1]


def package_snapshot(roots: Iterable[Path]) -> dict[str, Snapshot]:
    """A snapshot of each package folder, keyed by the folder."""
    return {str(root): snapshot(root, package_code) for root in roots}
