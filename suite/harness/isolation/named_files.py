"""Reading a file an implementation names (a producer's ``stream_path``), as untrusted as the rest of it.

The file must be a regular file inside the output folder the harness gave, reached without following
a link, not a hard link, within the output limit and the time budget: a FIFO nobody writes, a link to
the corpus or a file that grows without end is refused (``UnsafeOutput``), never read.
"""

from __future__ import annotations

import errno
import os
import stat
import time
from pathlib import Path


class UnsafeOutput(Exception):
    """A stream_path the harness refuses to read; the message says why."""


def read_output(named: str, folder: Path, identity: tuple[int, int] | None, limit: int, budget: float) -> bytes:
    """Read the regular file ``named`` inside ``folder``, following no link, at most ``limit``
    bytes, within ``budget`` seconds; UnsafeOutput for anything else (a FIFO, a device, a link,
    a path outside, a hard link, too large, too slow)."""
    path = Path(named) if os.path.isabs(named) else folder / named
    normal = os.path.normpath(path)
    base = os.path.normpath(folder)
    if os.path.commonpath([normal, base]) != base or normal == base:
        raise UnsafeOutput(f"stream_path {named!r} is not inside the output_dir it was given ({folder})")
    parts = Path(normal).relative_to(base).parts
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(base, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | nofollow)
    except OSError as error:
        raise UnsafeOutput(f"the output_dir cannot be opened: {error.strerror or error}") from None
    try:
        found = os.fstat(fd)
        if identity is not None and (found.st_dev, found.st_ino) != identity:
            raise UnsafeOutput("the output_dir was replaced during the conversion")
        for part in parts[:-1]:
            fd = _open_at(fd, part, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | nofollow, named)
        fd = _open_at(fd, parts[-1], os.O_RDONLY | nofollow | getattr(os, "O_NONBLOCK", 0), named)
        return _read_regular(fd, named, limit, budget)
    finally:
        os.close(fd)


def _open_at(parent: int, name: str, flags: int, named: str) -> int:
    """Open ``name`` in the folder ``parent`` without following a link; ``parent`` is closed on success
    (on failure the caller still holds it)."""
    try:
        child = os.open(name, flags, dir_fd=parent)
    except OSError as error:
        try:
            is_link = stat.S_ISLNK(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode)
        except OSError:
            is_link = False
        why = "a symbolic link" if is_link or error.errno == errno.ELOOP else (error.strerror or str(error))
        raise UnsafeOutput(f"stream_path {named!r}: {why}") from None
    os.close(parent)
    return child


def _read_regular(fd: int, named: str, limit: int, budget: float) -> bytes:
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        raise UnsafeOutput(f"stream_path {named!r} is not a regular file (a FIFO, device, socket or folder)")
    if info.st_nlink != 1:
        raise UnsafeOutput(f"stream_path {named!r} is a hard link to another file")
    if info.st_size > limit:
        raise UnsafeOutput(f"the stream is {info.st_size} bytes, above the limit of {limit} (--max-output)")
    os.set_blocking(fd, True)
    deadline = time.monotonic() + budget
    chunks: list[bytes] = []
    size = 0
    while chunk := os.read(fd, min(1 << 20, limit + 1 - size) or 1):
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            raise UnsafeOutput(f"the stream grew above the limit of {limit} bytes (--max-output) while read")
        if time.monotonic() > deadline:
            raise UnsafeOutput(f"reading the stream took more than {budget:g} s")
    return b"".join(chunks)
