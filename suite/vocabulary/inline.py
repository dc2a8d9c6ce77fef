"""An input as a report carries it: inline, so that ``report.json`` alone shows and replays a failure.

UTF-8 text stays text; any other bytes are base64.  Either is clipped to a bound, and the
original size is stated beside it, so that a clipped input never passes for the whole one."""

from __future__ import annotations

import base64
from typing import Any

#: Most bytes of an input a report carries inline.
INLINE_LIMIT = 20_000


def inline_input(data: bytes, limit: int = INLINE_LIMIT) -> dict[str, Any]:
    """The record fields for ``data``: ``input`` (its text, or base64), ``input_encoding`` (``utf-8`` or
    ``base64``), ``input_size`` (bytes of the whole input) and ``input_clipped``."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        content, encoding = base64.b64encode(data[:limit]).decode("ascii"), "base64"
    else:  # a character the limit cuts in two is left out whole
        content, encoding = data[:limit].decode("utf-8", "ignore"), "utf-8"
    return {"input": content, "input_encoding": encoding, "input_size": len(data), "input_clipped": len(data) > limit}
