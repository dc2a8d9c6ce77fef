"""Limits and strict JSON reading shared by the reference, the witnesses, the harness and the converters.

Standard library only: the example converters (``reference/*_converter.py``) import it and promise
to run on Python 3.11 without the package's dependencies.

Depth policy.  The spec sets no nesting limit, so the suite sets one, ``MAX_DEPTH``: the deepest
record a stream line may hold.  Every other depth is derived from it, for one reason each:

* ``COPY_DEPTH``: the deepest native value a converter (and the witness predicting it) copies as
  JSON; deeper values stay text (ASR-254).  A copied value sits a few levels inside its record
  (``tool_call.input``...), so it stays well under ``MAX_DEPTH`` and a converter never writes a
  record the reader refuses.
* ``REPLY_DEPTH``: the deepest JSON an implementation under test may answer with (replies,
  diagnostics, views).  A view echoes a record of ``MAX_DEPTH`` (the corpus' deepest valid stream
  nests 257 levels counting its line) inside the reply's own objects, so it needs headroom above
  ``MAX_DEPTH``; it stays bounded so every recursive step of judging and reporting is safe.
* ``FILE_DEPTH``: the deepest input file a run is given (baselines, expectations, manifests);
  those are reports and tables that nest about eight levels, so anything far deeper is hostile.
"""

from __future__ import annotations

import calendar
import json
import math
import re
from typing import Any, TypeGuard

#: ASR-032: the largest integer magnitude a stream may hold, 2^53 - 1.
SAFE_INTEGER = 2**53 - 1
#: Deepest nesting of arrays and objects a record may have (suite-defined: the spec sets none).
MAX_DEPTH = 256
#: Deepest native value copied as JSON by a converter; deeper values are kept as text (ASR-254).
COPY_DEPTH = MAX_DEPTH - 56
#: Deepest JSON accepted from an implementation: a record of MAX_DEPTH plus its reply's envelope.
REPLY_DEPTH = MAX_DEPTH + 44
#: Deepest nesting accepted in a JSON or TOML input file (reports nest about eight levels).
FILE_DEPTH = MAX_DEPTH // 4

#: RFC 3339 date-time with an offset (the Timestamp type); field ranges are in the pattern,
#: second 60 included (RFC 3339 allows a leap second).
TIMESTAMP = re.compile(
    r"(\d{4})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])[Tt]([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?"
    r"([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d)"
)


def is_timestamp(value: object) -> TypeGuard[str]:
    """An RFC 3339 date-time with an offset; only days past the 28th need the calendar."""
    if type(value) is not str:
        return False
    match = TIMESTAMP.fullmatch(value)
    if match is None:
        return False
    day = int(match.group(3))
    return day <= 28 or day <= calendar.monthrange(int(match.group(1)), int(match.group(2)))[1]


def is_safe_integer(value: object) -> bool:
    """An integer (not a boolean) inside ±(2^53 - 1) (ASR-032)."""
    return type(value) is int and -SAFE_INTEGER <= value <= SAFE_INTEGER


class TooDeep(ValueError):
    """JSON nested deeper than a limit (a ValueError, so callers treat it as unusable JSON)."""


def no_constant(name: str) -> float:
    """parse_constant hook: NaN, Infinity and -Infinity are not JSON."""
    raise ValueError(f"{name} is not JSON")


def finite(text: str) -> float:
    """parse_float hook: a number that overflows to infinity is not a value a stream can hold."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text} is out of range")
    return value


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """object_pairs_hook: an object naming a key twice is refused, not silently last-wins."""
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError("duplicate key")
    return dict(pairs)


def loads(text: str | bytes, *, no_duplicates: bool = False) -> Any:
    """json.loads refusing NaN, Infinity and overflowing numbers (and, if asked, duplicate keys).

    Raises ValueError or RecursionError, as json.loads does."""
    if no_duplicates:
        return json.loads(text, parse_constant=no_constant, parse_float=finite, object_pairs_hook=unique_keys)
    return json.loads(text, parse_constant=no_constant, parse_float=finite)


def has_lone_surrogate(value: Any) -> bool:
    """True when a parsed value holds a string that cannot be written as UTF-8 (a lone \\ud800...)."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def depth(value: Any) -> int:
    """How deeply ``value`` nests (a scalar is 0), counted without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in children)
    return deepest


def loads_bounded(text: str | bytes, max_depth: int = REPLY_DEPTH) -> Any:
    """json.loads for untrusted text: TooDeep instead of a RecursionError or a value too deep to judge."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise TooDeep(f"JSON nested too deeply (more than {max_depth} levels)") from None
    if depth(value) > max_depth:
        raise TooDeep(f"JSON nested {depth(value)} levels deep (at most {max_depth})")
    return value


def fits(value: Any, depth: int = 0, limit: int = COPY_DEPTH) -> bool:
    """True when the value can be copied into a stream as JSON without loss (ASR-032) or excess depth."""
    if depth > limit:
        return False
    if isinstance(value, bool) or value is None or isinstance(value, (str, float)):
        return True
    if isinstance(value, int):
        return -SAFE_INTEGER <= value <= SAFE_INTEGER
    if isinstance(value, list):
        return all(fits(item, depth + 1, limit) for item in value)
    if isinstance(value, dict):
        return all(fits(item, depth + 1, limit) for item in value.values())
    return False
