"""Putting report files into the report folder without trusting what is already there.

The folder may hold files planted by an earlier run of a hostile implementation: a badge that
says "100%", ``summary.md`` as a link to a file elsewhere.  Every file is first written to a
fresh temporary folder beside the report folder (same file system), then renamed into place:
a rename replaces a planted file or link and never writes through it.  Files of ours the run
did not produce (an old badge of another role) are removed; other files are left alone, so a
report folder shared with other things loses nothing else.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path

from asr_conformance.vocabulary.errors import UserError

#: Names the report writers own in the report folder (the badge names vary with roles and implementations).
OWNED = re.compile(r"(report\.json|summary\.md|report\.html|badge-.*\.json)")


class ReportFolderError(UserError):
    """The report folder cannot be used (it is a file, or cannot be created)."""


def _write_new(path: Path, text: str) -> None:
    """Create ``path`` (which must not exist) and write ``text``; never follows a link."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
        handle.write(text)


def _real_folder(folder: Path) -> None:
    """Make ``folder`` a real directory: a link in its place is removed (not followed), a missing one made."""
    if folder.is_symlink():
        folder.unlink()
    if folder.exists() and not folder.is_dir():
        raise ReportFolderError(f"{folder}: the report folder is not a folder")
    folder.mkdir(parents=True, exist_ok=True)


def clear_owned(folder: Path) -> list[str]:
    """Remove the report files a previous run left (links removed, not followed); return their names.

    Done when a run starts, so a run killed before its end leaves no earlier verdict behind
    to be mistaken for its own."""
    removed = []
    if folder.is_dir() and not folder.is_symlink():
        for entry in os.listdir(folder):
            target = folder / entry
            if OWNED.fullmatch(entry) and (target.is_symlink() or not target.is_dir()):
                target.unlink()
                removed.append(entry)
    return removed


def install(files: Mapping[str, str], folder: Path) -> dict[str, Path]:
    """Write ``files`` (name -> text) into ``folder`` by way of a fresh folder and renames; return their paths."""
    folder = Path(os.path.abspath(folder))
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".tmp", dir=folder.parent))
    except OSError as error:
        raise ReportFolderError(f"{folder}: cannot write reports: {error.strerror or error}") from None
    try:
        for name, text in files.items():
            _write_new(staging / name, text)
        _real_folder(folder)
        for entry in os.listdir(folder):
            if OWNED.fullmatch(entry) and entry not in files:
                target = folder / entry
                if target.is_dir() and not target.is_symlink():
                    shutil.rmtree(target)
                else:
                    target.unlink()
        written = {}
        for name in files:
            target = folder / name
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)  # a folder planted under a report's name
            os.replace(staging / name, target)
            written[name] = target
        return written
    except OSError as error:
        raise ReportFolderError(f"{folder}: cannot write reports: {error.strerror or error}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
