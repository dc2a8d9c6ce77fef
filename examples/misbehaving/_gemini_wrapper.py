"""Shared by the gemini-* seeded-bug producers: run the example converter, changing its input or its records.

Each gemini-* file says its one bug in its docstring and passes a function over the session's
lines (``source``: the JSON values of a session, one per line, or the one object of the older
layout) and/or over the example's records (``change``). Records are renumbered afterwards (seq
and id), so the stream stays valid and only the fidelity checks can tell. One-shot contract only.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

CONVERTER = Path(__file__).resolve().parent.parent / "gemini-converter" / "asr-from-gemini"

Records = list[dict]


def run(change: Callable[[Records], Records] = lambda r: r,
        source: Callable[[list[Any]], list[Any]] | None = None) -> None:
    """Convert sys.argv[1] (edited by ``source`` first, when given), apply ``change``, write the stream."""
    if len(sys.argv) != 2:
        sys.stderr.write(f"usage: {Path(sys.argv[0]).name} SESSION.jsonl\n")
        sys.exit(2)
    path = sys.argv[1]
    with tempfile.TemporaryDirectory() as folder:
        if source is not None:
            path = edited(path, source, Path(folder))
        done = subprocess.run([sys.executable, str(CONVERTER), path], capture_output=True)
    if done.returncode != 0:
        sys.stderr.buffer.write(done.stderr)
        sys.exit(done.returncode)
    # "\n" ends a record; str.splitlines would also split at U+2028 and U+0085 inside JSON strings
    records = [json.loads(line) for line in done.stdout.decode("utf-8").split("\n") if line.strip()]
    changed = renumber(change(records))
    sys.stdout.write("".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in changed))


def edited(path: str, source: Callable[[list[Any]], list[Any]], folder: Path) -> str:
    """The input with its values passed through ``source``; the input itself when it is not readable JSON."""
    text = Path(path).read_bytes().decode("utf-8", "replace")
    try:
        if text.lstrip().split("\n", 1)[0].strip() == "{":
            values, layout = [json.loads(text)], "json"
        else:
            values, layout = [json.loads(line) for line in text.split("\n") if line.strip()], "jsonl"
    except ValueError:
        return path
    out = folder / Path(path).name
    changed = source(values)
    if layout == "json":
        out.write_text(json.dumps(changed[0], ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    else:
        out.write_text("".join(json.dumps(v, ensure_ascii=False) + "\n" for v in changed), encoding="utf-8")
    return str(out)


def messages_in(value: Any) -> list[dict]:
    """The message records one value holds: itself, a checkpoint's, or the older layout's."""
    if not isinstance(value, dict):
        return []
    if isinstance(value.get("id"), str):
        return [value]
    holder = value["$set"] if isinstance(value.get("$set"), dict) else value
    return [m for m in holder.get("messages") or () if isinstance(m, dict)]


def renumber(records: Records) -> Records:
    for seq, record in enumerate(records):
        record["seq"] = seq
        record["id"] = "h" if seq == 0 else f"r{seq}"
    return records


def of_type(records: Records, kind: str) -> Records:
    return [r for r in records if r.get("type") == kind]
