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
``mutators_tools``) register into them; ``generators.registry`` gathers them.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

Records = list[dict[str, Any]]
Mutator = Callable[[st.DrawFn, Records], bytes]

MUTATORS: dict[str, Mutator] = {}
NO_MUTATOR: dict[str, str] = {}

#: Assumptions a whole mutator rests on when it declares no modes of its own
#: (cases/ASSUMPTIONS.md).  A mode resting on an ``open`` assumption is reported,
#: not scored, as for implementation-defined cases; see ``Mode.scored``.
RULE_ASSUMPTIONS: dict[str, tuple[str, ...]] = {
    "ASR-018": ("A-ID",), "ASR-032": ("A-NUMBERS",), "ASR-290": ("A-BUNDLE",),
    "X-BOM": ("A-BOM",), "X-BLANK": ("A-BLANK",), "X-DUPKEY": ("A-DUPKEY",), "X-SURROGATE": ("A-SURROGATE",),
    "X-DEPTH": ("A-DEPTH",), "X-TYPE": ("A-TYPE",), "X-SEQ": ("A-SEQ",), "X-ID": ("A-ID",), "X-TS": ("A-TS",),
    "X-SUPERSEDES": ("A-SUPERSEDES",), "X-UTF8": ("A-FORMAT",), "X-JSON": ("A-FORMAT",),
    "X-RECORD": ("A-FORMAT",), "ASR-076": ("A-ACTOR",),
}


@dataclass(frozen=True, slots=True)
class Mode:
    """One way a mutator breaks its rule, with what its verdict rests on.

    ``defect`` is shared with corpus cases (their ``defect`` key) that break the
    rule the same way, so a test can check that both are scored alike.
    ``names`` is the naming set: the rules a validator may name for it."""

    rule: str
    name: str
    defect: str
    assumptions: tuple[str, ...] = ()
    names: tuple[str, ...] = ()

    @property
    def scored(self) -> bool:
        from asr_conformance.vocabulary.scoring import is_scored

        return is_scored(self.assumptions)

    @property
    def expected(self) -> str:
        """The verdict a stream of this mode expects, in the corpus's words: ``invalid`` when scored, else
        ``implementation-defined`` (reported, never scored), as for a corpus case with the same defect."""
        return "invalid" if self.scored else "implementation-defined"


#: rule -> mode name -> Mode, filled by ``modes`` (and by ``declared_modes`` for single-mode mutators).
MODES: dict[str, dict[str, Mode]] = {}
_DRAWN: dict[str, Mode] = {}


def modes(rule: str, names: tuple[str, ...] = (), /, **declared: object) -> None:
    """Declare a mutator's modes: ``mode="defect"`` or ``mode={"defect": ..., "assumptions": (...),
    "names": (...)}``.  ``names`` given here applies to every mode without its own.  (Each mode is
    typed ``object``: mypy joins a ``**{...}`` literal's mixed values to a type no narrower.)"""
    table = MODES.setdefault(rule, {})
    for name, given in declared.items():
        if not isinstance(given, str | Mapping):
            raise TypeError(f"mode {rule}/{name}: a defect name or a mapping, not {given!r}")
        spec: Mapping[str, Any] = {"defect": given} if isinstance(given, str) else given
        table[name] = Mode(rule, name, spec.get("defect", f"{rule}/{name}"),
                           tuple(spec.get("assumptions", RULE_ASSUMPTIONS.get(rule, ()))),
                           tuple(spec.get("names", names or (rule,))))


def pick(draw: st.DrawFn, rule: str, among: list[str] | None = None) -> str:
    """Draw one of the rule's declared modes (or of ``among``) and remember it for ``drawn_mode``."""
    choices = among if among is not None else list(MODES[rule])
    name = draw(st.sampled_from(choices))
    _DRAWN[rule] = MODES[rule][name]
    return name


def forget_drawn(rule: str) -> None:
    """Forget the mode an earlier call of the rule's mutator drew and left untaken (a call that ended early, an
    example Hypothesis turned away), so that ``drawn_mode`` after the next call says what that call drew."""
    _DRAWN.pop(rule, None)


def declared_modes(rule: str) -> dict[str, Mode]:
    """The modes of a rule's mutator; a mutator that declares none is one mode, ``all``.

    The per-page modules must be imported first (``generators.registry`` does)."""
    if rule not in MODES:
        MODES[rule] = {"all": Mode(rule, "all", f"{rule}/all", RULE_ASSUMPTIONS.get(rule, ()), (rule,))}
    return MODES[rule]


def drawn_mode(rule: str) -> Mode:
    """The mode the last call of the rule's mutator drew (``all`` for a single-mode mutator)."""
    table = declared_modes(rule)
    drawn = _DRAWN.pop(rule, None)
    if drawn is not None:
        return drawn
    if len(table) != 1:
        raise RuntimeError(f"the {rule} mutator declares modes but drew none with pick()")
    return next(iter(table.values()))


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


def append(records: Records, record_type: str, **members: object) -> dict[str, Any]:
    """Append a record with the next seq and a fresh id; return it."""
    record = {"type": record_type, "seq": next_seq(records), "id": fresh_id(records), **members}
    records.append(record)
    return record


def header(records: Records) -> dict[str, Any]:
    return records[0]


def of_type(records: Records, record_type: str) -> list[dict[str, Any]]:
    return [r for r in records if r.get("type") == record_type]
