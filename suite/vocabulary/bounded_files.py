"""Reading the files a run is given (baselines, expectations, manifests) without trusting them.

A path may name ``/dev/zero``, a FIFO that never opens, a multi-gigabyte file or JSON nested a
million levels deep.  Each of those must end as a message naming the file, never as a hang, an
exhausted memory or a RecursionError.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from asr_conformance.vocabulary.errors import UserError
from asr_conformance.vocabulary.strict_json import FILE_DEPTH

#: Largest input file read (a baseline report of a big side-by-side run stays far below).
MAX_INPUT_BYTES = 64 * 1024 * 1024


class InputFileError(UserError):
    """An input file the suite will not read; the message names the file."""


def read_regular_file(path: Path, what: str, limit: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of ``path``, which must be a regular file of at most ``limit`` bytes.

    Opened non-blocking (a FIFO does not hang the open) and checked with ``fstat`` on the open
    descriptor, so a file swapped between the check and the read is still the one checked."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as error:
        raise InputFileError(f"{path}: cannot read the {what}: {error.strerror or error}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InputFileError(f"{path}: the {what} is not a regular file")
        if info.st_size > limit:
            raise InputFileError(f"{path}: the {what} is larger than {limit} bytes ({info.st_size})")
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise InputFileError(f"{path}: the {what} is larger than {limit} bytes")
        return b"".join(chunks)
    except OSError as error:
        raise InputFileError(f"{path}: cannot read the {what}: {error.strerror or error}") from None
    finally:
        os.close(fd)


def nesting_depth(text: str) -> int:
    """How deeply brackets nest in JSON or TOML text, counted outside strings (an upper bound is enough)."""
    depth = deepest = 0
    in_string = escaped = False
    quote = ""
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\" and quote == '"':
                escaped = True
            elif char == quote:
                in_string = False
        elif char in "\"'":
            in_string, quote = True, char
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def check_depth(text: str, path: Path, what: str, limit: int = FILE_DEPTH) -> None:
    """Refuse text nested deeper than ``limit`` before a recursive parser or validator sees it."""
    if nesting_depth(text) > limit:
        raise InputFileError(f"{path}: the {what} nests deeper than {limit} levels")


def load_json_file(path: Path, what: str, limit: int = MAX_INPUT_BYTES) -> Any:
    """A bounded, depth-checked JSON file; every problem is an ``InputFileError`` naming the file."""
    data = read_regular_file(path, what, limit)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputFileError(f"{path}: the {what} is not UTF-8: {error}") from None
    check_depth(text, path, what)
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as error:
        raise InputFileError(f"{path}: the {what} is not JSON: {error}") from None
