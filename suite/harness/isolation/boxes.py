"""Boxes: each implementation process's private folders, blind copies of its inputs, and their removal.

An implementation wants the badge, so it must learn nothing about a case but
its bytes.  Each process gets a *box*: a private folder (0700) under this
run's staging root, holding ``in/`` (each input as a read-only copy under a
random name, alone in a folder of its own, removed after the case), ``out/``
(fresh output folders for conversions), ``tmp/`` (its TMPDIR) and ``home/``
(its HOME).

The staging is per process, not per run: what a process made (``_made``, one root per run staging
folder) is what its exit and its signal handlers remove (``signal_handlers``), and a signal handler
reaches nothing but a module.  ``_made``, ``_roots`` and the background remover are that per-process
registry of folders on the machine, never a run's choice: no test resets them.
"""

from __future__ import annotations

import atexit
import os
import queue
import secrets
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from asr_conformance.harness.isolation import mounts
from asr_conformance.harness.isolation.allowlist import child_environment
from asr_conformance.harness.isolation.limits import alive, remove_stale_groups
from asr_conformance.harness.isolation.policies import DEFAULT_SETTINGS, Policy, Settings, effective_limits, sandboxed

STAGING_PREFIX = "asr-run-"


def make_staging_parent() -> Path:
    """The run's staging folder (0700, removed at exit), made once by the controller, named after
    its process so that a later run can tell it is stale (``remove_stale_staging``)."""
    remove_stale_staging()
    remove_stale_groups()
    parent = Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{os.getpid()}-"))
    atexit.register(_remove_tree, parent)
    _made.append(parent)
    return parent


def remove_stale_staging(folder: Path | None = None) -> list[Path]:
    """Remove the staging folders of runs whose process is gone (killed runs never clean up);
    returns what was removed."""
    removed: list[Path] = []
    base = Path(folder or tempfile.gettempdir())
    try:
        entries = list(base.glob(f"{STAGING_PREFIX}*-*"))
    except OSError:
        return removed
    for entry in entries:
        owner = entry.name[len(STAGING_PREFIX):].split("-", 1)[0]
        if not owner.isdigit() or alive(int(owner)) or entry.is_symlink() or not entry.is_dir():
            continue
        _remove_tree(entry)
        removed.append(entry)
    return removed


#: Guards ``_roots`` and the remover.  Per-process, as what it guards.
_root_lock = threading.Lock()


#: This process's staging root in each run staging folder (``None``: the system's temporary folder): a
#: per-process registry of folders on the machine.
_roots: dict[Path | None, Path] = {}


def staging_root(settings: Settings = DEFAULT_SETTINGS) -> Path:
    """This process's staging root (0700) in the run's staging folder, made on first use, removed at exit.

    Kept per process, not per run: what a process made is what its exit and its signal handlers remove
    (``_made``), and a signal handler can reach nothing but the module."""
    parent = settings.staging_parent
    with _root_lock:
        root = _roots.get(parent)
        if root is None or not root.is_dir():
            root = Path(tempfile.mkdtemp(prefix="asr-", dir=parent if parent and parent.is_dir() else None))
            atexit.register(_remove_tree, root)
            _made.append(root)
            _roots[parent] = root
        return root


@dataclass
class Box:
    """One implementation process's private folders (see the module docstring), in the staging of ``settings``."""

    settings: Settings = DEFAULT_SETTINGS
    token: str = field(default_factory=lambda: secrets.token_hex(12))
    _outputs: dict[str, tuple[int, int]] = field(default_factory=dict)
    path: Path = field(init=False)

    def __post_init__(self) -> None:
        self.path = Path(tempfile.mkdtemp(prefix="", dir=staging_root(self.settings)))
        for name in ("in", "out", "tmp", "home"):
            (self.path / name).mkdir(mode=0o700, exist_ok=True)
        # In the sandbox, out/ is the one folder of the machine the implementation writes: a tmpfs of the disk
        # limit where the harness may mount one (wrap() gives it the implementation's own limit).
        if sandboxed(self.settings):
            mounts.limit_folder(self.path / "out", effective_limits(Policy(settings=self.settings)).disk)

    def reserve(self, suffix: str = ".jsonl") -> Path:
        """The random name, alone in a fresh private folder, that the next input will be staged under."""
        return Path(tempfile.mkdtemp(prefix="", dir=self.path / "in")) / (secrets.token_hex(8) + suffix)

    def stage(self, source: Path | bytes, suffix: str = ".jsonl", into: Path | None = None) -> Path:
        """A fresh read-only copy of ``source`` under a random name, alone in a private folder (``into``: a
        name ``reserve`` gave)."""
        target = into or self.reserve(suffix)
        handle = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o400)
        with os.fdopen(handle, "wb") as out:
            if isinstance(source, bytes):
                out.write(source)
            else:
                with open(source, "rb") as given:
                    shutil.copyfileobj(given, out, 1 << 20)
        return target

    def output_dir(self) -> Path:
        """A fresh, empty, private folder for one conversion's stream."""
        folder = tempfile.mkdtemp(prefix="", dir=self.path / "out")
        made = os.stat(folder)
        self._outputs[folder] = (made.st_dev, made.st_ino)
        return Path(folder)

    def output_identity(self, folder: Path) -> tuple[int, int] | None:
        """The (device, inode) the output folder had when it was made."""
        return self._outputs.get(str(folder))

    def discard(self, path: Path) -> None:
        """Take a staged input's folder or an output folder away, once the case is over."""
        self._outputs.pop(str(path), None)
        folder = path if path.parent.name == "out" else path.parent
        dispose(folder, self.settings)

    def environment(self, overrides: Mapping[str, str] | None = None,
                    pass_env: Iterable[str] = ()) -> dict[str, str]:
        return child_environment(self, overrides, pass_env)

    def close(self) -> None:
        dispose(self.path, self.settings)


#: Folders moved out of every box, waiting for the background remover: per-process, as the remover.
_spent: queue.SimpleQueue[Path] = queue.SimpleQueue()


#: The background remover, a thread of this process (per-process, started once and again only if it died).
_remover: threading.Thread | None = None


def dispose(path: Path, settings: Settings = DEFAULT_SETTINGS) -> None:
    """Move ``path`` out of every box at once (a rename, within the staging of ``settings``, which the sandbox
    hides), and delete it in the background: deleting folders costs milliseconds each on some file systems,
    renaming them does not."""
    global _remover
    mounts.release_under(path)
    root = staging_root(settings)
    spent = root / "spent"
    spent.mkdir(mode=0o700, exist_ok=True)
    try:
        moved = spent / secrets.token_hex(8)
        os.rename(path, moved)
    except OSError:
        _remove_tree(path)
        return
    _spent.put(moved)
    with _root_lock:
        if _remover is None or not _remover.is_alive():
            _remover = threading.Thread(target=_remove_spent, name="asr-staging-cleanup", daemon=True)
            _remover.start()


def _remove_spent() -> None:
    while True:
        _remove_tree(_spent.get())


def _remove_tree(path: Path) -> None:
    """Remove a folder the implementation may have made unwritable (its mounts released first)."""
    if not os.path.lexists(path):
        return
    mounts.release_under(path, scan=True)
    top = os.fspath(path)

    def retry(function: Callable[[str], object], name: str, _info: object) -> None:
        """Make the entry and its folder writable and try again, never touching what holds ``path``."""
        try:
            if os.path.normpath(name) != os.path.normpath(top):
                os.chmod(os.path.dirname(name), 0o700)
            os.chmod(name, 0o700)
            function(name)
        except OSError:
            pass

    shutil.rmtree(path, onerror=retry)


#: The staging folders this process made: a per-process registry of folders on the machine, removed at exit
#: and by the signal handlers.
_made: list[Path] = []


def remove_staging(patience: float = 3.0, folders: list[Path] | None = None) -> None:
    """Remove the staging this process made (``folders``, by default ``_made``; on a signal that ends it,
    atexit never runs).

    Other threads of the run (the background remover, a step of the suite's own) may still be
    touching it while the signal is handled, so a folder that survives one removal is removed
    again, for at most ``patience`` seconds."""
    deadline = time.monotonic() + patience
    for folder in _made if folders is None else folders:
        _remove_tree(folder)
        while os.path.lexists(folder) and time.monotonic() < deadline:
            time.sleep(0.02)
            _remove_tree(folder)
