"""Digests of the ground truth (the case corpus) and the judge (the package's code), taken at the start
of a run and checked at its end.

An implementation under test may try to rewrite the corpus or patch the installed harness; a run
whose files changed under it certifies nothing.  The judge is everything Python loads for it,
bytecode caches included: a planted cache runs in place of its source, so each one is checked
against what its source compiles to before the run (``prepare_bytecode``) and hashed with the rest.  Hashing is bounded, because the corpus folder
may hold anything: each file is read up to a size limit (a larger one is recorded by its size,
not read), links and other non-regular entries (FIFOs, devices, sockets) are recorded by kind
and never opened, links to folders are not followed, and the number of entries is capped.
"""

from __future__ import annotations

import compileall
import hashlib
import importlib.machinery
import importlib.util
import marshal
import os
import re
import stat
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from asr_conformance.vocabulary.seen_digests import SeenDigests

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


#: Seconds a file's last change must lie before its hashing for its digest to be remembered: the kernel stamps
#: changes with a coarse clock, so a write within the same tick as the hash could leave every stamp as it was.
SETTLED_SECONDS = 2.0


class DigestMemo:
    """Digests of regular files by what ``lstat`` says of them (device, inode, size, modification and change
    times in nanoseconds), so a file that did not change is not read again: within a run (its end checks what its
    start hashed) and in every run forked from a process that hashed the same files.

    Only ever spares work on a file whose every stamp is as it was when it was read: a write changes its change
    time, which no call of a program can set back (``utime`` moves the change time too).  A file changed within
    ``SETTLED_SECONDS`` of its hashing is never remembered (see there).  A pure cache of facts about bytes: a
    stale entry cannot arise, so no test or run needs to clear it."""

    def __init__(self, max_kept: int = 200_000) -> None:
        self.max_kept = max_kept
        self._known: dict[tuple[str, int, int, int, int, int, int], str] = {}

    def recall(self, path: str, info: os.stat_result, limit: int) -> str | None:
        return self._known.get(self._key(path, info, limit))

    def remember(self, path: str, info: os.stat_result, limit: int, digest: str, hashed_at: float) -> None:
        if hashed_at - max(info.st_mtime_ns, info.st_ctime_ns) / 1e9 < SETTLED_SECONDS:
            return
        if len(self._known) >= self.max_kept:
            self._known.clear()
        self._known[self._key(path, info, limit)] = digest

    @staticmethod
    def _key(path: str, info: os.stat_result, limit: int) -> tuple[str, int, int, int, int, int, int]:
        return (path, info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns, limit)


#: The process's memo of file digests (see ``DigestMemo``: a pure cache, safe across ``fork``).
DIGESTS = DigestMemo()


def file_digest(path: str | os.PathLike[str], limit: int = MAX_FILE_BYTES, memo: DigestMemo | None = DIGESTS) -> str:
    """``sha256:…`` of a regular file, or a label saying why it was not read (never follows a link, never blocks).
    A regular file whose ``lstat`` is as when ``memo`` saw it is not read again (``DigestMemo``)."""
    if memo is not None:
        try:
            before = os.lstat(path)
        except OSError:
            before = None
        if before is not None and stat.S_ISREG(before.st_mode):
            known = memo.recall(os.fspath(path), before, limit)
            if known is not None:
                return known
            hashed_at = time.time()
            hashed = file_digest(path, limit, memo=None)
            try:
                after = os.lstat(path)
            except OSError:
                return hashed
            if hashed.startswith("sha256:") and _same_stamps(before, after):
                memo.remember(os.fspath(path), after, limit, hashed, hashed_at)
            return hashed
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


def _same_stamps(before: os.stat_result, after: os.stat_result) -> bool:
    return (before.st_dev, before.st_ino, before.st_size, before.st_mtime_ns, before.st_ctime_ns) == (
        after.st_dev, after.st_ino, after.st_size, after.st_mtime_ns, after.st_ctime_ns)


def snapshot(root: Path, keep: Callable[[str], bool] = lambda name: True, limit: int = MAX_FILE_BYTES,
             max_entries: int = MAX_ENTRIES) -> Snapshot:
    """Every entry under ``root`` that ``keep`` accepts (by relative POSIX path), bounded as the module says."""
    entries: dict[str, str] = {}
    flagged: list[str] = []
    if not root.is_dir():
        return Snapshot(root, {}, ("(no folder)",))
    base = os.fspath(root)
    # Plain strings, not Path objects: a run takes four snapshots of a few thousand files.
    for folder, dirs, files in os.walk(base, followlinks=False):
        dirs.sort()
        prefix = "" if folder == base else os.path.relpath(folder, base).replace(os.sep, "/") + "/"
        for name in sorted(files) + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
            relative = prefix + name
            if not keep(relative):
                continue
            if len(entries) >= max_entries:
                flagged.append(f"(more than {max_entries} entries; the rest not hashed)")
                return Snapshot(root, entries, tuple(flagged))
            entries[relative] = file_digest(os.path.join(folder, name), limit)
            if not entries[relative].startswith("sha256:"):
                flagged.append(relative)
    return Snapshot(root, entries, tuple(flagged))


def changed(before: Snapshot, after: Snapshot) -> list[str]:
    """The entries added, removed or altered between two snapshots of one tree, in path order."""
    names = set(before.entries) | set(after.entries)
    return sorted(n for n in names if before.entries.get(n) != after.entries.get(n))


_EXTENSIONS = tuple(importlib.machinery.EXTENSION_SUFFIXES)


def package_code(name: str) -> bool:
    """The files that make up the judge: everything in the package's folders that Python or the suite may
    load (modules, their bytecode caches, extension modules, schemas), not the project's own tests; pytest's
    rewritten test modules are left out (the run removes them at its start, ``remove_rewritten``)."""
    parts = name.split("/")
    if parts[0] in ("tests", "benchmarks"):
        return False
    if "__pycache__" in parts and "-pytest-" in parts[-1]:
        return False
    return name.endswith((".py", ".pyc", ".pyo", *_EXTENSIONS)) or "schemas" in parts[:-1]


_SKIPPED_FOLDERS = re.compile(r"[/\\](tests|benchmarks)[/\\]")


#: Beside a package folder's own caches: the (source, cache) digest pairs already compiled and found equal.
VERIFIED_NAME = "asr-verified-caches.json"


def prepare_bytecode(roots: Iterable[Path]) -> list[str]:
    """Before a run: write the bytecode caches Python would write during it (so that none appears
    mid-run), remove pytest's rewritten caches of the package's test modules (pytest reads them
    unchecked; it writes them anew from the source), and return every file Python could load in place
    of a module's source that is not what that source compiles to: a cache whose code differs from
    its source's, an extension module or a sourceless module the package does not ship.  Each one
    found is removed, and the run that found it certifies nothing.

    Compiling every source again costs a fifth of a second per run, so each package folder keeps the
    SHA-256 pairs (source, cache) it has already found equal (``VERIFIED_NAME`` in its ``__pycache__``);
    a pair seen before is not compiled again.  Whoever could write a false pair there could as well
    rewrite the source itself, which every run takes as it finds it: the list adds no way in."""
    forged: list[str] = []
    for root in roots:
        if not root.is_dir():
            continue
        compileall.compile_dir(str(root), quiet=2, rx=_SKIPPED_FOLDERS, workers=1)
        verified = SeenDigests(root / "__pycache__" / VERIFIED_NAME, prune=True)
        for folder, dirs, files in os.walk(root):
            if _SKIPPED_FOLDERS.search(folder + os.sep):
                dirs.clear()
                continue
            here = Path(folder)
            for name in files:
                path = here / name
                if here.name == "__pycache__" and "-pytest-" in name:
                    _remove(path)
                elif here.name == "__pycache__" and name.endswith(".pyc"):
                    if not _cache_matches_source(path, verified):
                        forged.append(str(path))
                elif name.endswith(_EXTENSIONS) or name.endswith((".pyc", ".pyo")):
                    forged.append(str(path))
        verified.save()
    for name in forged:
        _remove(Path(name))
    return forged


def _cache_matches_source(cache: Path, verified: SeenDigests | None = None) -> bool:
    """Whether a ``__pycache__`` file holds exactly the code its source compiles to (a cache of another
    interpreter, or one whose source is gone, is never loaded by this one and passes)."""
    try:
        source = Path(importlib.util.source_from_cache(str(cache)))
    except ValueError:
        return True
    if importlib.util.cache_from_source(str(source)) != str(cache) or not source.is_file():
        return True
    try:
        data = cache.read_bytes()
        text = source.read_bytes()
    except OSError:
        return False
    pair = hashlib.sha256(text).hexdigest() + ":" + hashlib.sha256(data).hexdigest()
    if verified is not None and verified.knows(pair):
        return True
    try:
        loaded = marshal.loads(data[16:])
        fresh = compile(text, str(source), "exec", dont_inherit=True)
    except (ValueError, EOFError, TypeError, SyntaxError):
        return False
    same: bool = loaded == fresh
    if same and verified is not None:
        verified.add(pair)
    return same


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass


def package_snapshot(roots: Iterable[Path]) -> dict[str, Snapshot]:
    """A snapshot of each package folder, keyed by the folder."""
    return {str(root): snapshot(root, package_code) for root in roots}
