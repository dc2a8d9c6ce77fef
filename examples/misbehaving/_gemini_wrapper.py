"""Shared by the gemini-* seeded-bug producers: the example converter's own conversion, of an edited input or
with changed records.

Each gemini-* file says its one bug in its docstring and passes a function over the session's
lines (``source``: the JSON values of a session, one per line, or the one object of the older
layout) and/or over the example's records (``change``). Records are renumbered afterwards (seq
and id), so the stream stays valid and only the fidelity checks can tell. The conversion runs in
this process (the installed package's converter), under the example's command-line shell:
one-shot with a file argument, the persistent protocol without one.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

from asr_conformance.reference.converter_cli import Shell, encode_stream
from asr_conformance.reference.gemini_converter import NAME, VERSION, convert

Records = list[dict]


def run(change: Callable[[Records], Records] = lambda r: r,
        source: Callable[[list[Any]], list[Any]] | None = None) -> None:
    """Convert the input (edited by ``source`` first, when given) as the example does, apply ``change``."""

    def buggy(data: bytes) -> bytes:
        if source is not None:
            data = edited(data, source)
        # "\n" ends a record; str.splitlines would also split at U+2028 and U+0085 inside JSON strings
        records = [json.loads(line) for line in convert(data).decode("utf-8").split("\n") if line.strip()]
        return encode_stream(renumber(change(records)), "session")

    sys.exit(Shell(NAME, VERSION, "SESSION.jsonl", buggy).main(sys.argv[1:]))


def edited(data: bytes, source: Callable[[list[Any]], list[Any]]) -> bytes:
    """The input with its values passed through ``source``; the input itself when it is not readable JSON."""
    text = data.decode("utf-8", "replace")
    try:
        if text.lstrip().split("\n", 1)[0].strip() == "{":
            values, layout = [json.loads(text)], "json"
        else:
            values, layout = [json.loads(line) for line in text.split("\n") if line.strip()], "jsonl"
    except ValueError:
        return data
    changed = source(values)
    if layout == "json":
        return (json.dumps(changed[0], ensure_ascii=False, indent=2) + "\n").encode("utf-8")
    return "".join(json.dumps(v, ensure_ascii=False) + "\n" for v in changed).encode("utf-8")


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
