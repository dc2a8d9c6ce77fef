"""One mutator per ``stream`` rule: take a valid stream, break exactly that rule.

A mutator is a function ``(draw, records) -> bytes``: ``draw`` is Hypothesis'
draw function (so the breakage itself varies and shrinks), ``records`` is a
valid stream as a list of record dicts (header first, seq increasing), and
the result is the bytes of a stream that breaks the mutator's rule and no
other.  Most mutators append or edit a record and serialize with
``serialize``; byte-level ones damage the serialized bytes.

``MUTATORS`` maps rule ID -> mutator; ``NO_MUTATOR`` maps rule ID -> the
written reason a stream rule has none.  A test fails when a stream rule of
the catalog is in neither.  The rule modules (``mutators_session``,
``mutators_tools``) register into them; ``generators.mutated`` gathers them.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable

from hypothesis import strategies as st

Records = list[dict]
Mutator = Callable[[st.DrawFn, Records], bytes]

MUTATORS: dict[str, Mutator] = {}
NO_MUTATOR: dict[str, str] = {}

#: Rules whose mutations break an assumption, not a rule the pages state
#: (cases/ASSUMPTIONS.md): an implementation's verdict on them is reported, not
#: scored, as for implementation-defined cases.  The reference rejects them all.
#: ASR-262's only mutation (an exact link to a shared call ID) rests on A-LINKAGE.
UNSCORED = frozenset({
    "ASR-018", "ASR-032", "ASR-076", "ASR-262",
    "X-BOM", "X-BLANK", "X-DUPKEY", "X-SURROGATE", "X-DEPTH", "X-TYPE", "X-SEQ", "X-ID", "X-TS", "X-SUPERSEDES",
})


def mutator(rule: str) -> Callable[[Mutator], Mutator]:
    """Register a mutator for ``rule`` (decorator)."""

    def register(function: Mutator) -> Mutator:
        if rule in MUTATORS:
            raise ValueError(f"two mutators for {rule}")
        MUTATORS[rule] = function
        return function

    return register


def serialize(records: Records) -> bytes:
    """Compact JSON Lines, one record per line, UTF-8, final newline."""
    return "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records).encode()


def copied(records: Records) -> Records:
    return copy.deepcopy(records)


def next_seq(records: Records) -> int:
    return max((r["seq"] for r in records if isinstance(r.get("seq"), int)), default=-1) + 1


def fresh_id(records: Records, prefix: str = "m") -> str:
    """A record ID no record of the stream uses."""
    used = {r.get("id") for r in records}
    number = len(records)
    while f"{prefix}{number}" in used:
        number += 1
    return f"{prefix}{number}"


def append(records: Records, record_type: str, **members: object) -> dict:
    """Append a record with the next seq and a fresh id; return it."""
    record = {"type": record_type, "seq": next_seq(records), "id": fresh_id(records), **members}
    records.append(record)
    return record


def header(records: Records) -> dict:
    return records[0]


def of_type(records: Records, record_type: str) -> list[dict]:
    return [r for r in records if r.get("type") == record_type]
