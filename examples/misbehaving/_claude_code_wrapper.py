"""Shared by the cc-* seeded-bug producers: the example converter's own conversion, then a change to its records.

Each cc-* file says its one bug in its docstring and passes a function from the example's
records to the buggy records. Records are renumbered afterwards (seq and id), so the stream
stays valid and only the fidelity checks can tell. The conversion runs in this process (the
installed package's converter), under the example's command-line shell: one-shot with a file
argument, the persistent protocol without one, refusals exactly as the example words them.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable

from asr_conformance.reference.claude_code_converter import NAME, VERSION, convert
from asr_conformance.reference.converter_cli import Shell, encode_stream

Records = list[dict]


def run(change: Callable[[Records], Records]) -> None:
    """Convert as the example does, apply ``change``, and answer as the example's shell does."""

    def buggy(data: bytes) -> bytes:
        # "\n" ends a record; str.splitlines would also split at U+2028 and U+0085 inside JSON strings
        records = [json.loads(line) for line in convert(data).decode("utf-8").split("\n") if line.strip()]
        return encode_stream(renumber(change(records)), "transcript")

    sys.exit(Shell(NAME, VERSION, "TRANSCRIPT.jsonl", buggy).main(sys.argv[1:]))


def renumber(records: Records) -> Records:
    for seq, record in enumerate(records):
        record["seq"] = seq
        record["id"] = "h" if seq == 0 else f"r{seq}"
    return records


def of_type(records: Records, kind: str) -> Records:
    return [r for r in records if r.get("type") == kind]
