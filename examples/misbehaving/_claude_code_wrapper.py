"""Shared by the cc-* seeded-bug producers: run the example converter, then change its records.

Each cc-* file says its one bug in its docstring and passes a function from the example's
records to the buggy records. Records are renumbered afterwards (seq and id), so the stream
stays valid and only the fidelity checks can tell. One-shot contract only.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

CONVERTER = Path(__file__).resolve().parent.parent / "claude-code-converter" / "asr-from-claude-code"

Records = list[dict]


def run(change: Callable[[Records], Records]) -> None:
    """Convert sys.argv[1] with the example converter, apply ``change``, write the stream."""
    done = subprocess.run([sys.executable, str(CONVERTER), *sys.argv[1:]], capture_output=True)
    if done.returncode != 0:
        sys.stderr.buffer.write(done.stderr)
        sys.exit(done.returncode)
    # "\n" ends a record; str.splitlines would also split at U+2028 and U+0085 inside JSON strings
    records = [json.loads(line) for line in done.stdout.decode("utf-8").split("\n") if line.strip()]
    changed = renumber(change(records))
    sys.stdout.write("".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in changed))


def renumber(records: Records) -> Records:
    for seq, record in enumerate(records):
        record["seq"] = seq
        record["id"] = "h" if seq == 0 else f"r{seq}"
    return records


def of_type(records: Records, kind: str) -> Records:
    return [r for r in records if r.get("type") == kind]
