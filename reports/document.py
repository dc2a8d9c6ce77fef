"""The certification report as one JSON document (schema: ``schemas/report.schema.json`` of the package).

Everything the human summaries show is computed here once: per-role
verdicts, the rule matrix (rule x implementation) and the counterexamples,
so the Markdown and HTML writers only lay it out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from asr_conformance.gate.integrity import Snapshot, snapshot
from asr_conformance.gate.results import FAILING, OUTCOMES, Result, ResultOutcome
from asr_conformance.gate.verdict import Completeness, RoleVerdict, verdicts
from asr_conformance.vocabulary.rules import Rule

REPORT_VERSION = 1
__all__ = ["RunFacts", "build_report", "corpus_digest", "counterexamples", "fuzz_summary", "rule_matrix", "verdicts"]


@dataclass
class RunFacts:
    """What the plugin knows about the run besides its results."""

    suite_version: str
    corpus: Path
    started: str
    duration: float
    implementations: list[dict[str, Any]]
    options: dict[str, Any]
    hypothesis: dict[str, Any]
    catalog: dict[str, Rule]
    expectations: dict[str, Any] = field(default_factory=dict)
    baseline: dict[str, Any] | None = None
    exit: dict[str, Any] = field(default_factory=dict)
    #: The corpus as hashed at the start of the run (hashed now when not given).
    corpus_snapshot: Snapshot | None = None
    completeness: Completeness = field(default_factory=Completeness)
    #: The package's code digest at the start of the run, by folder.
    package: dict[str, str] = field(default_factory=dict)
    #: The per-role verdicts the run already decided (its terminal shows them); computed here when not given.
    verdicts: list[RoleVerdict] | None = None


def corpus_digest(corpus: Path) -> tuple[str, int]:
    """The corpus digest (bounded: see ``gate.integrity``) and its number of streams."""
    found = snapshot(corpus)
    return found.digest, found.count(".jsonl")


def build_report(facts: RunFacts, results: Sequence[Result]) -> dict[str, Any]:
    ordered = sorted(results, key=lambda r: (r.implementation, r.role, r.id, r.test))
    keys = [i["key"] for i in facts.implementations]
    corpus = facts.corpus_snapshot or snapshot(facts.corpus)
    complete = facts.completeness.complete
    return {
        "report_version": REPORT_VERSION,
        "suite": {"name": "asr-conformance", "version": facts.suite_version},
        "corpus": {"path": str(facts.corpus), "digest": corpus.digest, "streams": corpus.count(".jsonl"),
                   "flagged": list(corpus.flagged)},
        "started": facts.started,
        "duration": round(facts.duration, 3),
        "options": facts.options,
        "hypothesis": facts.hypothesis,
        "implementations": facts.implementations,
        "verdicts": [v.to_json() for v in (facts.verdicts if facts.verdicts is not None
                                            else verdicts(facts.implementations, ordered, complete))],
        "rules": rule_matrix(facts.catalog, keys, ordered),
        "results": [r.to_json() for r in ordered],
        "counterexamples": counterexamples(ordered),
        "fuzz": fuzz_summary(ordered),
        "expectations": facts.expectations,
        "baseline": facts.baseline,
        "exit": facts.exit,
        "completeness": facts.completeness.to_json(),
        "package": facts.package,
    }


def rule_status(outcomes: Counter[ResultOutcome], tested: str) -> str:
    if any(outcomes[o] for o in FAILING):
        return "fail"
    if outcomes[ResultOutcome.EXPECTED_FAIL]:
        return "expected-fail"
    if outcomes[ResultOutcome.PASS]:
        return "pass"
    if outcomes[ResultOutcome.NOT_SCORED]:
        return "not-scored"
    return "untestable" if tested == "untestable" else "not-run"


def rule_matrix(catalog: dict[str, Rule], keys: list[str], results: Sequence[Result]) -> list[dict[str, Any]]:
    """Rules x implementations, each cell with its status, counts and result IDs; failures first.

    A result counts for a rule only in a role the rule binds: a validator case whose stream shows a
    reader rule (ASR-269's pending permission) says nothing about readers, so a validator-only run
    shows that rule "not run"."""
    by_rule: dict[tuple[str, str], list[Result]] = {}
    for result in results:
        for rule_id in result.rules:
            binds = catalog[rule_id].binds if rule_id in catalog else ()
            if result.role in binds or not binds:
                by_rule.setdefault((rule_id, result.implementation), []).append(result)
    rows: list[dict[str, Any]] = []
    for rule in catalog.values():
        cells: dict[str, dict[str, Any]] = {}
        for key in keys:
            mine = by_rule.get((rule.id, key), [])
            counts = Counter(r.outcome for r in mine)
            cells[key] = {
                "status": rule_status(counts, rule.tested),
                "counts": {o: counts[o] for o in OUTCOMES if counts[o]},
                "results": sorted({r.id for r in mine}),
            }
        rows.append({
            "id": rule.id, "page": rule.page, "section": rule.section, "level": rule.level,
            "tested": rule.tested, "summary": rule.summary, **({"reason": rule.reason} if rule.reason else {}),
            "cells": cells,
        })
    rank = {"fail": 0, "expected-fail": 1, "not-run": 2, "not-scored": 3, "pass": 4, "untestable": 5}
    rows.sort(key=lambda row: (min(rank[c["status"]] for c in row["cells"].values()) if row["cells"] else 9,
                               row["page"], row["section"], row["id"]))
    return rows


def counterexamples(results: Sequence[Result]) -> list[dict[str, str]]:
    """The fuzz counterexamples the results carry (as data, from the test's record)."""
    return [{"implementation": r.implementation, "test": r.id, "path": r.counterexample.path,
             "replay": r.counterexample.replay} for r in results if r.counterexample is not None]


def fuzz_summary(results: Sequence[Result]) -> list[dict[str, Any]]:
    """Per implementation and role: the fuzz properties run, how they ended, the examples they tried,
    and why a role was not fuzzed (a skipped property's reason), so that no report hides an unfuzzed role."""
    groups: dict[tuple[str, str], list[Result]] = {}
    for result in results:
        if result.kind == "fuzz":
            groups.setdefault((result.implementation, result.role), []).append(result)
    summary = []
    for (implementation, role), mine in sorted(groups.items()):
        outcomes = Counter(r.outcome for r in mine)
        ran = [r for r in mine if r.outcome != "skipped"]
        summary.append({
            "implementation": implementation, "role": role, "properties": len(ran),
            "outcomes": {o: outcomes[o] for o in OUTCOMES if outcomes[o]},
            "examples": sum(int(r.details.get("fuzz_examples") or 0) for r in mine),
            "counterexamples": sum(1 for r in mine if r.counterexample is not None),
            "failing": sorted(r.id for r in mine if r.outcome in FAILING),
            "not_fuzzed": sorted({r.message for r in mine if r.outcome == "skipped" and r.message}),
        })
    return summary
