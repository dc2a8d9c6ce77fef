"""What every family of fidelity checks shares: the facts, the indexed stream, the declared losses, the
findings (scored) and the observations (reported), and the two checks several families use (a loss that
excuses a missing item, a time that must be the source's)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from asr_conformance.fidelity.facts import Finding, SourceFacts, Where
from asr_conformance.fidelity.stream_view import (
    DEFAULT_NAMESPACES,
    REPORTED,
    SIDECHAIN_CATEGORIES,
    Lossy,
    Policy,
    Stream,
)
from asr_conformance.fidelity.timestamps import parse_instant, same_instant


class CheckerBase:
    """The state of one stream's checks against one source; ``findings`` grows as they run."""

    def __init__(self, facts: SourceFacts, records: list[dict[str, Any]], policy: Policy | None = None) -> None:
        self.facts = facts
        self.policy = policy or Policy()
        self.stream = Stream.of(records)
        self.lossy = Lossy.of(records, self.policy.loss_namespaces or DEFAULT_NAMESPACES)
        self.findings: list[Finding] = []
        #: Disagreements no numbered rule of the pages settles: reported beside the verdict, never scored.
        self.reported: list[Finding] = []
        self.native_ids = {c.call_id for c in facts.calls} | {r.call_id for r in facts.results if r.call_id}
        self.instants = {parse_instant(t) for t in facts.times} - {None}
        self.matched: set[int] = set()  # id() of stream records tied to a native item

    def next_written(self, seen: dict[str, int], call_id: str, written: dict[str, list[dict[str, Any]]]) -> dict[str, Any] | None:
        """The stream's record for the next native item of ``call_id`` (the n-th native item of an ID goes with its
        n-th record), marked matched; None when the stream wrote fewer."""
        index = seen[call_id]
        seen[call_id] += 1
        candidates = written.get(call_id, [])
        if index >= len(candidates):
            return None
        record = candidates[index]
        self.matched.add(id(record))
        return record

    def add(self, rule: str, family: str, message: str, where: Where | None = None, record: dict[str, Any] | None = None) -> None:
        seq = record.get("seq") if isinstance(record, dict) and isinstance(record.get("seq"), int) else None
        self.findings.append(Finding(rule, family, message, where, seq))

    def report(self, rule: str, message: str, where: Where | None = None, record: dict[str, Any] | None = None) -> None:
        """An observation for the vendor that no numbered rule settles (``rule`` names the section instead)."""
        seq = record.get("seq") if isinstance(record, dict) and isinstance(record.get("seq"), int) else None
        self.reported.append(Finding(rule, REPORTED, message, where, seq))

    def excused(self, categories: Iterable[str], sidechain: bool) -> bool:
        return self.lossy.excuses(categories) or (sidechain and self.lossy.excuses(SIDECHAIN_CATEGORIES))

    def same_time(self, native: str | None, record: dict[str, Any], where: Where, others: frozenset[str] = frozenset()) -> None:
        ts = record.get("ts")
        if ts is None:
            return
        if native is None:
            self.add("ASR-104", "nothing-invented",
                     f"{record.get('type')} has ts {ts}, but the source records no time for it", where, record)
        elif not same_instant(ts, native) and not any(same_instant(ts, other) for other in others):
            self.add("ASR-103", "exact-values",
                     f"{record.get('type')} has ts {ts}, not the source's {native} (the same instant is required; "
                     f"the offset and precision may differ)", where, record)
