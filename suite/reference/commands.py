"""The reference implementation behind the one-shot contract (HARNESS.md §4.1)."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import TextIO

from asr_conformance.reference.checks import validate_path

ACCEPT = 0
REJECT = 1
#: Not a verdict: the harness reports any status other than 0 and 1 as a crash.
USAGE = 2


def run_validator(argv: Sequence[str], out: TextIO | None = None) -> int:
    """Validate the stream named by the last argument; diagnostics as JSON lines."""
    out = out or sys.stdout
    if not argv:
        sys.stderr.write("usage: reference-validator STREAM_FILE\n")
        return USAGE
    try:
        outcome = validate_path(argv[-1])
    except OSError as error:
        sys.stderr.write(f"reference-validator: {argv[-1]}: {error.strerror or error}\n")
        return USAGE
    for diagnostic in outcome.diagnostics:
        out.write(json.dumps(diagnostic.as_json(), ensure_ascii=False) + "\n")
    out.flush()
    return ACCEPT if outcome.valid else REJECT
