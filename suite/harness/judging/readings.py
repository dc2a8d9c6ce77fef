"""A pack's readings of inputs, kept by whoever judges them: an input's facts serve its fidelity test and every
source edit of it, read once.

``Readings`` is an object its owner holds and passes in (the producer's runner, one per session and worker; a
producer fuzz session), never process-wide state: a judge given none reads afresh. Facts are read-only.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass

from asr_conformance.fidelity.facts import NotThisFormat, SourceFacts
from asr_conformance.packs.guard import PackError, bounded, malformed
from asr_conformance.packs.registry import Installed


@dataclass(frozen=True, slots=True)
class Unread:
    """Why a witness could not read an input: fidelity is then not checked, for this reason (data, not a sentence
    to parse back)."""

    reason: str

    @property
    def message(self) -> str:
        return f"not checked: {self.reason}"


#: Readings a ``Readings`` keeps by default: an input's facts serve its fidelity test and every source edit.
FACTS_KEPT = 16


class Readings:
    """The last ``kept`` readings, by pack and the input's digest."""

    def __init__(self, kept: int = FACTS_KEPT) -> None:
        self.kept = kept
        self._readings: OrderedDict[tuple[int, str], tuple[Installed, SourceFacts | Unread]] = OrderedDict()

    def facts(self, pack: Installed, data: bytes, digest: str | None = None) -> SourceFacts | Unread:
        """The pack's facts of ``data``, or why it could not read them (``read``), read once and then kept.
        ``digest``: the SHA-256 of ``data`` when the caller has it already (a large input is not hashed twice)."""
        key = (id(pack), digest or hashlib.sha256(data).hexdigest())
        kept = self._readings.get(key)
        if kept is not None and kept[0] is pack:
            self._readings.move_to_end(key)
            return kept[1]
        facts = read(pack, data)
        self._readings[key] = (pack, facts)  # the pack is kept with its facts, so its id is not reused meanwhile
        while len(self._readings) > self.kept:
            self._readings.popitem(last=False)
        return facts

    def forget(self) -> None:
        """Drop every kept reading (benchmarks start from none)."""
        self._readings.clear()


def read(pack: Installed, data: bytes) -> SourceFacts | Unread:
    """The pack's facts, or why it could not read the input (a sentence, never a traceback).

    The read is bounded in time and checked for shape: a pack that raises, hangs or answers with malformed
    facts raises ``PackError`` (the suite's error, never the converter's; not kept, so each use reports it)."""
    witness = pack.pack.witness
    try:
        facts = bounded(pack.identity, "reading the input", pack.pack.time_limit, witness.read, data)
    except NotThisFormat as error:
        return Unread(f"the {witness.format} witness cannot read this input: {error}")
    except RecursionError:
        return Unread(f"the {witness.format} witness cannot read this input: nested too deeply")
    problem = malformed(facts)
    if problem is not None:
        raise PackError(pack.identity, f"{problem} (malformed facts)")
    return facts
