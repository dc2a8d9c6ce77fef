"""The Markdown summary: short enough for a CI job summary or a pull-request comment."""

from __future__ import annotations

from typing import Any

from asr_conformance.gate.verdict import VerdictKind, judge_label, reasons_line, widened_note
from asr_conformance.vocabulary.untrusted import code_span, markdown_text

#: Each verdict as the summary's table shows it (looked up by the report's ``verdict`` word).
VERDICT_WORDS = {
    VerdictKind.CONFORMS: "✅ conforms",
    VerdictKind.CONFORMS_EXCEPT_KNOWN_FAILURES: "🟡 conforms except known failures",
    VerdictKind.PARTIAL: "🔶 partial: not everything was checked (not a pass)",
    VerdictKind.DOES_NOT_CONFORM: "❌ does not conform",
    VerdictKind.NO_VERDICT: "⚪ no verdict (nothing executed)",
    VerdictKind.INCOMPLETE: "⚪ incomplete run (certifies nothing)",
}
#: Failing rules listed at most; the HTML page and the JSON report have them all.
MAX_ROWS = 40


def _cell(text: Any) -> str:
    """Any text in a table cell or list item: one line, Markdown and HTML escaped (see ``untrusted``)."""
    return markdown_text(str(text))


def render_markdown(report: dict[str, Any]) -> str:
    lines = [f"# ASR conformance: {_cell(', '.join(i['name'] for i in report['implementations']))}", ""]
    lines += [
        f"asr-conformance {report['suite']['version']} · corpus `{report['corpus']['digest'][:19]}…` · "
        f"Hypothesis profile `{report['hypothesis']['profile']}`"
        + (f", seed `{report['hypothesis']['seed']}`" if report["hypothesis"].get("seed") is not None else "")
        + f" · {report['duration']:.1f} s",
        "",
        *_incomplete(report),
        *([f"> **Partial run** ({_cell('; '.join(report['options'].get('partial_reasons') or ['narrowed with -m or -k']))})"
           ": only a full run certifies.", ""] if report["options"].get("partial") else []),
        *([f"> **{_cell(widened_note(report['options']['widened']))}**", ""] if report["options"].get("widened") else []),
        "| implementation | role | verdict | pass | fail | crash | timeout | known | not scored | skipped | pass % |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for verdict in report["verdicts"]:
        c = verdict["counts"]
        lines.append(
            f"| {_cell(verdict['implementation'])} | {_cell(verdict['role'])} | {VERDICT_WORDS[verdict['verdict']]} | "
            f"{c['pass']} | {c['fail']} | {c['crash']} | {c['timeout']} | {c['expected-fail']} | "
            f"{c['not-scored']} | {c['skipped']} | {verdict['pass_percent']:g} |"
        )
    lines.append("")
    for verdict in report["verdicts"]:
        for why in verdict.get("unchecked", ()):
            lines.append(f"- {_cell(verdict['implementation'])}, {_cell(verdict['role'])}: not checked, so not a "
                         f"pass: {_cell(why)}")
        if verdict.get("reasons"):
            lines.append(f"- {_cell(verdict['implementation'])}, {_cell(verdict['role'])}: "
                         f"{_cell(reasons_line(verdict['reasons']))}")
    for verdict in report["verdicts"]:
        for judge in verdict.get("judged_by", ()):
            lines.append(f"- {_cell(verdict['implementation'])}, producer: fidelity judged by "
                         f"{_cell(judge_label(judge))} from {_cell(str(judge.get('distribution')))}, "
                         f"sha256 {code_span(str(judge.get('sha256')))}")
        for why in (*verdict.get("judge_errors", ()), *verdict.get("not_fuzzed", ())):
            lines.append(f"- {_cell(verdict['implementation'])}, producer: {_cell(why)}")
    if any(v.get(k) for v in report["verdicts"]
           for k in ("fidelity_not_checked", "judged_by", "judge_errors", "not_fuzzed", "unchecked", "reasons")):
        lines.append("")
    lines += _failing_rules(report)
    lines += _gate(report)
    lines += _fuzz(report)
    if report["counterexamples"]:
        lines += ["## Fuzz counterexamples", ""]
        for found in report["counterexamples"]:
            lines.append(f"- {code_span(found['test'])} ({_cell(found['implementation'])}): {code_span(found['path'])}  ")
            lines.append(f"  replay: {code_span(found['replay'])}")
        lines.append("")
    lines.append("The full rule matrix is in `report.html`; every result, with inputs and outputs of failures, "
                 "in `report.json`.")
    return "\n".join(lines) + "\n"


def _fuzz(report: dict[str, Any]) -> list[str]:
    """One line per implementation and role fuzzed (or not, and why)."""
    rows = report.get("fuzz") or []
    if not rows:
        return []
    lines = ["## Fuzzing", ""]
    for row in rows:
        failing = sum(row["outcomes"].get(o, 0) for o in ("fail", "crash", "timeout"))
        text = (f"- {_cell(row['implementation'])}, {_cell(row['role'])}: {row['properties']} properties, "
                f"{row['examples']} examples, {failing} failing, {row['counterexamples']} counterexamples")
        lines.append(text)
        for why in row["not_fuzzed"]:
            lines.append(f"  - {_cell(why)}")
    return lines + [""]


def _failing_rules(report: dict[str, Any]) -> list[str]:
    keys = [i["key"] for i in report["implementations"]]
    failing = [row for row in report["rules"]
               if any(row["cells"][k]["status"] in ("fail", "expected-fail") for k in keys)]
    if not failing:
        return ["No rule has a failing case.", ""]
    lines = ["## Rules with failing cases", "", "| rule | level | section | " + " | ".join(map(_cell, keys)) + " |",
             "|---|---|---|" + "---|" * len(keys)]
    for row in failing[:MAX_ROWS]:
        cells = []
        for key in keys:
            cell = row["cells"][key]
            bad = sum(cell["counts"].get(o, 0) for o in ("fail", "crash", "timeout"))
            known = cell["counts"].get("expected-fail", 0)
            cells.append({"fail": f"❌ {bad} failing", "expected-fail": f"🟡 {known} known"}.get(
                cell["status"], cell["status"]))
        lines.append(f"| {_cell(row['id'])} | {_cell(row['level'])} | {_cell(row['section'])} | " + " | ".join(cells) + " |")
    if len(failing) > MAX_ROWS:
        lines.append(f"| … | | {len(failing) - MAX_ROWS} more | " + " | " * len(keys))
    return lines + [""]


def _incomplete(report: dict[str, Any]) -> list[str]:
    """The warning of a run that did not finish, before any table: it certifies nothing."""
    completeness = report.get("completeness") or {}
    if completeness.get("complete", True):
        return []
    lines = ["> **Incomplete run**: it certifies nothing.", ">"]
    lines += [f"> - {_cell(reason)}" for reason in completeness.get("reasons", [])]
    return lines + [""]


def _gate(report: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    stale = report["expectations"].get("stale", [])
    if stale:
        lines += ["## Stale expectations (they now pass: remove them)", ""]
        lines += [f"- {_cell(entry['entry'])}: {_cell(entry['reason'])}" for entry in stale] + [""]
    baseline = report["baseline"]
    if baseline:
        lines += [f"## Against the baseline {code_span(baseline['file'])}", ""]
        for title, key in (("Regressions", "regressions"), ("New failures", "new_failures"), ("Fixed", "fixed")):
            found = baseline[key]
            lines.append(f"- {title}: {len(found)}" + (": " + ", ".join(code_span(i) for i in found[:20]) if found else ""))
        lines.append("")
    if report["exit"].get("reasons"):
        lines += ["## Why the run failed", ""] + [f"- {_cell(r)}" for r in report["exit"]["reasons"]] + [""]
    return lines
