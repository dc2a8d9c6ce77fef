"""Digests of inputs a check has already passed, kept beside the package's bytecode caches.

Some checks at the start of every run depend on bytes alone (a bytecode cache against its source,
case metadata against its schema), yet cost a good part of a run's start. A list of the SHA-256
digests that passed spares repeating them. It only ever spares work: a digest not in it is checked,
and whoever could write a false one there could as well rewrite the package itself, which every run
takes as it finds it. Never in the corpus, whose every file is hashed as the ground truth.
"""

from __future__ import annotations

import json
import os
from pathlib import Path


class SeenDigests:
    """One list on disk: ``knows`` and ``add`` during a run, ``save`` at its end (never failing the run)."""

    def __init__(self, path: Path, max_kept: int = 4096, prune: bool = False) -> None:
        #: ``prune``: keep only what this process used (a folder's caches are all met every run).
        self.path, self.max_kept, self.prune = path, max_kept, prune
        self.used: set[str] = set()
        try:
            listed = json.loads(path.read_text(encoding="utf-8"))
            self.loaded = {str(item) for item in listed} if isinstance(listed, list) else set()
        except (OSError, ValueError):
            self.loaded = set()

    def knows(self, digest: str) -> bool:
        """Whether ``digest`` passed before (only then is it kept: a digest that fails is never listed)."""
        if digest in self.used:
            return True
        if digest in self.loaded:
            self.used.add(digest)
            return True
        return False

    def add(self, digest: str) -> None:
        self.used.add(digest)

    def save(self) -> None:
        """Write the list when it changed: what this process used, and (unless pruning) what it held, while
        that stays under ``max_kept``."""
        kept = self.used | (set() if self.prune else self.loaded)
        if len(kept) > self.max_kept:
            kept = set(self.used)
        if kept == self.loaded:
            return
        try:
            self.path.parent.mkdir(exist_ok=True)
            temporary = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
            temporary.write_text(json.dumps(sorted(kept)), encoding="utf-8")
            os.replace(temporary, self.path)
            self.loaded = kept
        except OSError:
            pass


def package_cache_folder() -> Path:
    """The ``__pycache__`` of the package's top folder."""
    import asr_conformance

    return Path(asr_conformance.__file__).resolve().parent / "__pycache__"
