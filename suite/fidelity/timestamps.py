"""Timestamps as instants: a stream may write the source's time in another offset or precision."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from functools import lru_cache

#: RFC 3339 date-time; the fraction is kept apart so that nanoseconds survive the comparison.
_RFC3339 = re.compile(
    r"(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2}:\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})"
)

Instant = tuple[int, str]


@lru_cache(maxsize=65536)
def parse_instant(text: str) -> Instant | None:
    """(whole seconds since the epoch, fraction digits without trailing zeros), or ``None``."""
    match = _RFC3339.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        return None
    day, clock, fraction, offset = match.groups()
    offset = "+00:00" if offset in ("Z", "z") else offset
    try:
        moment = datetime.fromisoformat(f"{day}T{clock}{offset}")
    except ValueError:
        return None
    return int(moment.astimezone(UTC).timestamp()), (fraction or "").rstrip("0")


def same_instant(a: str | None, b: str | None) -> bool:
    """Whether two timestamps name the same instant (both parseable)."""
    return a is not None and b is not None and parse_instant(a) is not None and parse_instant(a) == parse_instant(b)
