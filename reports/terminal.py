"""The terminal summary of a saved report: what the run's own ``asr-conformance`` section said,
re-read from ``report.json`` alone (``asr-conformance summary REPORT``)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from asr_conformance.gate.results import FAILING, TALLY_ORDER
from asr_conformance.gate.verdict import (
    EXIT_PARTIAL,
    Completeness,
    RoleVerdict,
    VerdictKind,
    judged_suffix,
    overall,
    reasons_line,
    run_verdict,
    widened_note,
)


def verdict_words(report: dict[str, Any]) -> str:
    """The run's verdict in words, as the run printed it, from the report's verdicts, exit reasons and
    completeness."""
    incomplete = tuple(report["completeness"].get("reasons") or ())
    reasons = [r for r in report["exit"].get("reasons", []) if r not in incomplete]
    return overall(_role_verdicts(report), reasons, Completeness(other=incomplete), bool(report["options"].get("partial")))


def conforms(report: dict[str, Any]) -> bool:
    """Whether the saved run conformed: it exited 0 and its verdict is one of conformance."""
    return report["exit"].get("status") == 0 and verdict_words(report).startswith("CONFORMS")


def partial(report: dict[str, Any]) -> bool:
    """Whether the saved run's verdict is partial: it conformed on what it checked, not on everything."""
    incomplete = tuple(report["completeness"].get("reasons") or ())
    reasons = [r for r in report["exit"].get("reasons", []) if r not in incomplete]
    return report["exit"].get("status") == EXIT_PARTIAL and \
        run_verdict(_role_verdicts(report), reasons, Completeness(other=incomplete),
                    bool(report["options"].get("partial"))) is VerdictKind.PARTIAL


def _role_verdicts(report: dict[str, Any]) -> list[RoleVerdict]:
    return [RoleVerdict.from_json(v) for v in report["verdicts"]]


def render_terminal(report: dict[str, Any]) -> list[str]:
    """The summary's lines (the caller neutralizes them for a terminal: names come from implementations)."""
    facts = report["hypothesis"]
    seed = f", seed {facts['seed']} (replay with --hypothesis-seed={facts['seed']})" \
        if facts.get("seed") is not None else ""
    lines = [f"hypothesis: profile {facts['profile']}{seed}"]
    several = len(report["implementations"]) > 1
    for implementation in report["implementations"]:
        key = implementation["key"]
        name = implementation.get("announced") or " ".join(filter(None, [implementation["name"],
                                                                         implementation.get("version")]))
        lines.append(f"implementation: {name} ({implementation['protocol']})" + (f" [{key}]" if several else ""))
        mine = [r for r in report["results"] if r["implementation"] == key]
        for role in implementation["roles"]:
            counts = Counter(r["outcome"] for r in mine if r["role"] == role)
            tally = ", ".join(f"{counts[o]} {o}" for o in TALLY_ORDER if counts[o])
            lines.append(f"  {role}: {tally or 'nothing ran'}")
        failing = sorted({rule for r in mine if r["outcome"] in FAILING for rule in r.get("rules", ())})
        if failing:
            lines.append("  rules with failing cases: " + ", ".join(failing))
    for entry in report.get("expectations", {}).get("stale", []):
        lines.append(f"stale expectation: {entry['entry']} now passes ({entry['reason']})")
    for name in report["completeness"].get("missing", [])[:20]:
        lines.append(f"no result: {name}")
    verdict = verdict_words(report)
    if several:
        for each in report["verdicts"]:
            lines.append(f"  {each['implementation']} {each['role']}: {each['verdict']} ({each['pass_percent']:g}% pass)")
    for each in report["verdicts"]:
        if each.get("reasons"):
            lines.append((f"{each['implementation']} {each['role']} " if several else "") + reasons_line(each["reasons"]))
    narrowed = report["options"].get("partial_reasons") or []
    suffix = f" (partial run: {', '.join(narrowed)}; only a full run certifies)" if report["options"].get("partial") else ""
    lines.append(f"verdict: {verdict}{judged_suffix(_role_verdicts(report))}{suffix}")
    note = widened_note(report["options"].get("widened") or ())
    if note:
        lines.append(note)
    return lines
