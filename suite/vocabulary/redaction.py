"""Nothing of the caller in a report: the values of variables passed through to implementations.

A variable named with ``--pass-env`` or a manifest's ``pass_env`` reaches the implementation, which
may print it back (as a message, a diagnostic, a named rule).  Whatever the harness records of an
implementation's output passes through ``redact``, which puts ``[value of NAME]`` where a passed
value stood, raw or JSON-escaped.  Values are read from this process's environment when redacting,
as the harness passes them; values shorter than MIN_LENGTH are no secret and are left alone (they
would blank out ordinary words).

The names are registered per process (``register``; the run's ``--pass-env`` when its settings are
made, each implementation's ``pass_env`` at its start), not per run: redaction must cover every text
the process writes, pytest's own failure text and captured sections included, which no run context
reaches; a name only ever widens what is redacted.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable
from typing import Any

#: Shortest value redacted.
MIN_LENGTH = 4

#: Guards ``_names``: per-process, as the names are.
_lock = threading.Lock()
#: The names of variables passed through to some implementation: per-process (see above), only ever widened.
_names: set[str] = set()


def register(names: Iterable[str]) -> None:
    """Names of variables passed through to some implementation in this process."""
    with _lock:
        _names.update(names)


def passed_names() -> tuple[str, ...]:
    with _lock:
        return tuple(sorted(_names))


def _pairs() -> list[tuple[str, str]]:
    """(spelling, replacement) for every passed value, longest first."""
    found: list[tuple[str, str]] = []
    for name in passed_names():
        value = os.environ.get(name, "")
        if len(value) < MIN_LENGTH:
            continue
        label = f"[value of {name}]"
        found.append((value, label))
        escaped = json.dumps(value, ensure_ascii=True)[1:-1]
        if escaped != value:
            found.append((escaped, label))
        loose = json.dumps(value, ensure_ascii=False)[1:-1]
        if loose not in (value, escaped):
            found.append((loose, label))
    return sorted(found, key=lambda pair: len(pair[0]), reverse=True)


def redact(text: str) -> str:
    """``text`` with every passed value replaced by its variable's name."""
    if not text:
        return text
    for value, label in _pairs():
        if value in text:
            text = text.replace(value, label)
    return text


def redact_bytes(data: bytes) -> bytes:
    if not data or not _names:
        return data
    for value, label in _pairs():
        raw = value.encode("utf-8", "surrogateescape")
        if raw in data:
            data = data.replace(raw, label.encode())
    return data


def redact_value(value: Any) -> Any:
    """A JSON-like value with every string (keys too) redacted."""
    if not _names:
        return value
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact_value(k): redact_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(redact_value(v) for v in value)
    if isinstance(value, frozenset):
        return frozenset(redact_value(v) for v in value)
    return value
