"""Badges as shields.io endpoint JSON (https://shields.io/badges/endpoint-badge), one per role.

With one implementation the files are ``badge-<role>.json``; side by side,
``badge-<implementation>-<role>.json``."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from asr_conformance.gate.results import SCORED
from asr_conformance.gate.verdict import VerdictKind, judge_label


def badge(verdict: dict[str, Any], widened: Sequence[str] = ()) -> dict[str, Any]:
    """One role's badge; ``widened``: how the run widened the closed box (named on the badge)."""
    counts = verdict["counts"]
    scored = sum(counts.get(o, 0) for o in SCORED)
    percent = verdict["pass_percent"]
    if verdict["verdict"] == VerdictKind.NO_VERDICT:
        message, color = "no verdict", "lightgrey"
    elif verdict["verdict"] == VerdictKind.INCOMPLETE:
        message, color = "incomplete run", "lightgrey"
    elif verdict["verdict"] == VerdictKind.PARTIAL:
        # Never green: a pass percentage over what was checked is not a pass (docs/certification.md §4).
        message, color = f"partial: {_unchecked_words(verdict)} ({counts.get('pass', 0)}/{scored} passed)", "blue"
    else:
        message = f"{percent:g}% ({counts.get('pass', 0)}/{scored})"
        color = {VerdictKind.CONFORMS: "brightgreen", VerdictKind.CONFORMS_EXCEPT_KNOWN_FAILURES: "yellow"}.get(
            verdict["verdict"], "red")
    judges = ", ".join(judge_label(j) for j in verdict.get("judged_by", ()))
    if judges:
        message += f", fidelity judged by {judges}"
    if verdict.get("not_fuzzed") and verdict["verdict"] != VerdictKind.PARTIAL:
        message += ", not fuzzed"
    if widened:
        message += ", widened sandbox: " + "; ".join(widened)
    return {"schemaVersion": 1, "label": f"ASR {verdict['role']}", "message": message, "color": color}


def _unchecked_words(verdict: dict[str, Any]) -> str:
    """What a partial verdict left unchecked, in a badge's few words."""
    kinds = []
    for why in verdict.get("unchecked", ()):
        kind = ("fidelity not checked" if why.startswith("fidelity not checked") else "not fuzzed"
                if why.startswith("not fuzzed") else "widened sandbox" if why.startswith("widened sandbox") else why)
        kinds.append(kind)
    return ", ".join(dict.fromkeys(kinds)) or "not everything checked"


def badge_name(verdict: dict[str, Any], single: bool) -> str:
    """The badge's file name; an implementation key is reduced to safe characters (it names a file)."""
    if single:
        return f"badge-{verdict['role']}.json"
    key = re.sub(r"[^A-Za-z0-9._-]", "_", verdict["implementation"]).lstrip(".")[:80] or "_"
    return f"badge-{key}-{verdict['role']}.json"


def badge_files(report: dict[str, Any]) -> dict[str, str]:
    """Each badge's file name and JSON text; an incomplete run's badges say so, whatever passed.

    A run on fixed examples (``asr-fixed``) earns none: an implementation could have learnt them."""
    if report.get("hypothesis", {}).get("fixed_examples"):
        return {}
    single = len(report["implementations"]) == 1
    widened = report["options"].get("widened") or ()
    return {badge_name(v, single): json.dumps(badge(v, widened)) + "\n" for v in report["verdicts"]}
