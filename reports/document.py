"""The certification report as one JSON document (schema: ``schemas/report.schema.json`` of the package).

Everything the human summaries show is computed here once: per-role
verdicts, the rule matrix (rule x implementation) and the counterexamples,
so the Markdown and HTML writers only lay it out.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from asr_conformance.gate.results import FAILING, OUTCOMES, SCORED, Result
from asr_conformance.vocabulary.rules import Rule

REPORT_VERSION = 1
_COUNTEREXAMPLE = re.compile(r"counterexample \(shrunk\): (?P<path>\S+)\nreplay: (?P<replay>[^\n]+)")


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


def corpus_digest(corpus: Path) -> tuple[str, int]:
    """sha256 over every case file's path and bytes, in path order: two runs on the same corpus agree."""
    digest = hashlib.sha256()
    count = 0
    if corpus.is_dir():
        for path in sorted(p for p in corpus.rglob("*") if p.is_file()):
            digest.update(path.relative_to(corpus).as_posix().encode() + b"\0")
            digest.update(path.read_bytes())
            count += path.suffix == ".jsonl"
    return "sha256:" + digest.hexdigest(), count


def build_report(facts: RunFacts, results: Sequence[Result]) -> dict[str, Any]:
    ordered = sorted(results, key=lambda r: (r.implementation, r.role, r.id, r.test))
    keys = [i["key"] for i in facts.implementations]
    digest, cases = corpus_digest(facts.corpus)
    return {
        "report_version": REPORT_VERSION,
        "suite": {"name": "asr-conformance", "version": facts.suite_version},
        "corpus": {"path": str(facts.corpus), "digest": digest, "streams": cases},
        "started": facts.started,
        "duration": round(facts.duration, 3),
        "options": facts.options,
        "hypothesis": facts.hypothesis,
        "implementations": facts.implementations,
        "verdicts": verdicts(facts.implementations, ordered),
        "rules": rule_matrix(facts.catalog, keys, ordered),
        "results": [r.to_json() for r in ordered],
        "counterexamples": counterexamples(ordered),
        "expectations": facts.expectations,
        "baseline": facts.baseline,
        "exit": facts.exit,
    }


def verdicts(implementations: list[dict[str, Any]], results: Sequence[Result]) -> list[dict[str, Any]]:
    """One certification verdict per implementation and role it was run in."""
    found = []
    for implementation in implementations:
        for role in implementation["roles"]:
            mine = [r for r in results if r.implementation == implementation["key"] and r.role == role]
            counts = Counter(r.outcome for r in mine)
            scored = sum(counts[o] for o in SCORED)
            failing = sum(counts[o] for o in FAILING)
            if scored == 0:
                verdict = "no-verdict"
            elif failing:
                verdict = "does-not-conform"
            elif counts["expected-fail"]:
                verdict = "conforms-except-known-failures"
            else:
                verdict = "conforms"
            found.append({
                "implementation": implementation["key"], "role": role, "verdict": verdict,
                "counts": {o: counts[o] for o in OUTCOMES},
                "pass_percent": round(100.0 * counts["pass"] / scored, 2) if scored else 0.0,
            })
    return found


def rule_status(outcomes: Counter, tested: str) -> str:
    if any(outcomes[o] for o in FAILING):
        return "fail"
    if outcomes["expected-fail"]:
        return "expected-fail"
    if outcomes["pass"]:
        return "pass"
    if outcomes["not-scored"]:
        return "not-scored"
    return "untestable" if tested == "untestable" else "not-run"


def rule_matrix(catalog: dict[str, Rule], keys: list[str], results: Sequence[Result]) -> list[dict[str, Any]]:
    """Rules x implementations, each cell with its status, counts and result IDs; failures first."""
    by_rule: dict[tuple[str, str], list[Result]] = {}
    for result in results:
        for rule in result.rules:
            by_rule.setdefault((rule, result.implementation), []).append(result)
    rows = []
    for rule in catalog.values():
        cells = {}
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
    found = []
    for result in results:
        match = _COUNTEREXAMPLE.search(result.message)
        if match:
            found.append({"implementation": result.implementation, "test": result.id,
                          "path": match["path"], "replay": match["replay"].strip()})
    return found
