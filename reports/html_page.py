"""The HTML summary: one self-contained page (no scripts, no external files) with the rule matrix.

Rules are grouped by page and section; in each group the rules with
failures, or on which implementations disagree, come first and the rest fold
into one ``<details>``.  Each cell links to its failing results, shown below
with the stream given, the answer and what was expected.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from html import escape
from typing import Any

from asr_conformance.gate.results import ResultOutcome
from asr_conformance.gate.verdict import VerdictKind, judge_label, reasons_line, widened_note
from asr_conformance.vocabulary.inline import INLINE_LIMIT
from asr_conformance.vocabulary.untrusted import visible_controls

STATUS_LABEL = {
    "fail": "fail", "expected-fail": "known failure", "pass": "pass", "not-scored": "not scored",
    "not-run": "not run", "untestable": "untestable",
}
VERDICT_LABEL = {
    VerdictKind.CONFORMS: "conforms", VerdictKind.CONFORMS_EXCEPT_KNOWN_FAILURES: "conforms except known failures",
    VerdictKind.PARTIAL: "partial: not everything checked", VerdictKind.DOES_NOT_CONFORM: "does not conform",
    VerdictKind.NO_VERDICT: "no verdict", VerdictKind.INCOMPLETE: "incomplete run",
}
SHOWN_OUTCOMES = (ResultOutcome.FAIL, ResultOutcome.CRASH, ResultOutcome.TIMEOUT, ResultOutcome.EXPECTED_FAIL)

STYLE = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d2330;color:#fff;padding:18px 28px}header h1{margin:0 0 4px;font-size:22px}
header p{margin:0;color:#c9cfda;font-size:13px}main{padding:18px 28px;max-width:1400px}
h2{font-size:18px;margin:28px 0 10px}h3{font-size:15px;margin:20px 0 6px;color:#3b4252}
.cards{display:flex;flex-wrap:wrap;gap:12px}.card{background:#fff;border-radius:8px;padding:12px 16px;
box-shadow:0 1px 2px #0002;min-width:230px}.card .v{font-size:17px;font-weight:600;margin:4px 0}
.conforms{color:#137333}.does-not-conform{color:#b3261e}.conforms-except-known-failures{color:#8a6100}
.partial{color:#b05a00}
.no-verdict,.incomplete{color:#666}.counts{color:#555;font-size:12px}
table{border-collapse:collapse;width:100%;background:#fff;box-shadow:0 1px 2px #0002;margin-bottom:6px}
th,td{text-align:left;padding:6px 8px;border-bottom:1px solid #e6e8ec;vertical-align:top}
th{background:#eef0f4;font-size:12px;text-transform:uppercase;letter-spacing:.03em;color:#4a5263}
td.rule{white-space:nowrap;font-family:ui-monospace,Menlo,monospace}td.summary{color:#333;max-width:520px}
.chip{display:inline-block;border-radius:10px;padding:1px 9px;font-size:12px;font-weight:600;white-space:nowrap}
.s-fail{background:#fde7e6;color:#b3261e}.s-expected-fail{background:#fff4d6;color:#8a6100}
.s-pass{background:#e6f4ea;color:#137333}.s-not-scored,.s-not-run,.s-untestable{background:#eceff3;color:#555}
.links a{font-size:12px;margin-right:6px}details>summary{cursor:pointer;color:#3b4252;padding:4px 0}
.result{background:#fff;border-left:4px solid #b3261e;border-radius:6px;padding:10px 14px;margin:10px 0;
box-shadow:0 1px 2px #0002}.result.expected-fail{border-color:#d9a400}.result h4{margin:0 0 6px;font-size:14px;
font-family:ui-monospace,Menlo,monospace}pre{background:#f3f4f7;padding:8px;border-radius:4px;overflow:auto;
max-height:320px;font-size:12px;white-space:pre-wrap;word-break:break-all}.gate{background:#fff;border-radius:8px;
padding:10px 16px;box-shadow:0 1px 2px #0002}.muted{color:#666;font-size:12px}
"""


def render_html(report: dict[str, Any]) -> str:
    names = ", ".join(i["name"] for i in report["implementations"])
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>ASR conformance: {escape(names)}</title><style>{STYLE}</style></head><body>",
        f"<header><h1>ASR conformance: {escape(names)}</h1><p>{_facts(report)}</p></header><main>",
        _incomplete(report),
        '<p class="gate"><b>Partial run</b> (' + escape("; ".join(report["options"].get("partial_reasons") or
                                                            ["narrowed with -m or -k"]))
        + "): only a full run certifies.</p>" if report["options"].get("partial") else "",
        _verdicts(report), _gate(report), _matrix(report), _failures(report), _fuzz(report), _counterexamples(report),
        "</main></body></html>",
    ]
    return "\n".join(part for part in parts if part)


def anchor(implementation: str, result_id: str) -> str:
    return "r-" + re.sub(r"[^A-Za-z0-9_-]+", "-", f"{implementation}-{result_id}")


def _facts(report: dict[str, Any]) -> str:
    hypothesis = report["hypothesis"]
    seed = f", seed {hypothesis['seed']}" if hypothesis.get("seed") is not None else ""
    return escape(
        f"asr-conformance {report['suite']['version']} · corpus {report['corpus']['digest'][:19]}… "
        f"({report['corpus']['streams']} streams) · Hypothesis profile {hypothesis['profile']}{seed} · "
        f"started {report['started']} · {report['duration']:.1f} s"
    )


def _incomplete(report: dict[str, Any]) -> str:
    """The banner of a run that did not finish: it certifies nothing, whatever passed."""
    completeness = report.get("completeness") or {}
    if completeness.get("complete", True):
        return ""
    reasons = "".join(f"<li>{escape(reason)}</li>" for reason in completeness.get("reasons", []))
    return f'<div class="gate"><b>Incomplete run</b>: it certifies nothing.<ul>{reasons}</ul></div>'


def _verdicts(report: dict[str, Any]) -> str:
    cards = []
    for verdict in report["verdicts"]:
        counts = verdict["counts"]
        detail = ", ".join(f"{n} {o}" for o, n in counts.items() if n)
        cards.append(
            f'<div class="card"><div class="muted">{escape(verdict["implementation"])} · {verdict["role"]}</div>'
            f'<div class="v {verdict["verdict"]}">{VERDICT_LABEL[verdict["verdict"]]}</div>'
            f'<div class="counts">{verdict["pass_percent"]:g}% pass · {escape(detail) or "nothing ran"}</div>'
            + "".join(f'<div class="muted">not checked, so not a pass: {escape(why)}</div>'
                      for why in verdict.get("unchecked", ()))
            + (f'<div class="muted">{escape(reasons_line(verdict["reasons"]))}</div>' if verdict.get("reasons") else "")
            + "".join(f'<div class="muted">fidelity judged by {escape(judge_label(j))}, sha256 '
                      f'{escape(str(j.get("sha256"))[:16])}…</div>' for j in verdict.get("judged_by", ()))
            + "".join(f'<div class="muted">{escape(why)}</div>'
                      for why in (*verdict.get("judge_errors", ()), *verdict.get("not_fuzzed", ())))
            + '</div>'
        )
    note = widened_note(report["options"].get("widened") or ())
    widened = f'<div class="gate"><b>{escape(note)}</b></div>' if note else ""
    return '<h2>Verdicts</h2>' + widened + '<div class="cards">' + "".join(cards) + "</div>"


def _gate(report: dict[str, Any]) -> str:
    """The regression gate's box when a gate ran (an expectations file, or a baseline); otherwise only why
    the run failed, under that name."""
    items = [escape(reason) for reason in report["exit"].get("reasons", [])]
    gated = bool(report["expectations"].get("files") or report["baseline"])
    if not gated:
        return ('<h2>Why the run failed</h2><div class="gate"><ul>' + "".join(f"<li>{i}</li>" for i in items)
                + "</ul></div>") if items else ""
    for entry in report["expectations"].get("stale", []):
        items.append(f"stale expectation (now passes): {escape(entry['entry'])}: {escape(entry['reason'])}")
    baseline = report["baseline"]
    if baseline:
        for title, key in (("regression", "regressions"), ("new failure", "new_failures"), ("fixed", "fixed")):
            items += [f"{title}: <code>{escape(i)}</code>" for i in baseline[key]]
    if not items:
        return ""
    return '<h2>Regression gate</h2><div class="gate"><ul>' + "".join(f"<li>{i}</li>" for i in items) + "</ul></div>"


def _matrix(report: dict[str, Any]) -> str:
    keys = [i["key"] for i in report["implementations"]]
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in report["rules"]:
        groups.setdefault((row["page"], row["section"]), []).append(row)
    ordered = sorted(groups.items(), key=lambda item: (not any(_notable(r, keys) for r in item[1]), item[0]))
    single = len(keys) == 1
    out = ["<h2>Rule matrix</h2>", f'<p class="muted">{escape(_tally(report, keys))}. Rules with failures'
           + ("" if single else ", or on which the implementations disagree,")
           + " come first; the rest of each section is folded. “No result”: no selected test checks the rule "
           "in this run (see the rule's reason).</p>"]
    for (page, section), rows in ordered:
        notable = [r for r in rows if _notable(r, keys)]
        quiet = [r for r in rows if not _notable(r, keys)]
        out.append(f"<h3>{escape(page)} › {escape(section)}</h3>")
        if notable:
            out.append(_table(notable, keys, report))
        if quiet:
            statuses = sorted({c["status"] for r in quiet for c in r["cells"].values()})
            label = ", ".join(STATUS_LABEL[s] for s in statuses)
            where = "" if single else " where every implementation agrees"
            out.append(f"<details><summary>{len(quiet)} rule{'s' if len(quiet) != 1 else ''}{where} "
                       f"({escape(label)})</summary>{_table(quiet, keys, report)}</details>")
    return "\n".join(out)


def _tally(report: dict[str, Any], keys: list[str]) -> str:
    """'118 rules; reference: 80 pass, 20 untestable, ...' for the matrix's heading."""
    parts = []
    for key in keys:
        counts: dict[str, int] = {}
        for row in report["rules"]:
            status = row["cells"][key]["status"]
            counts[status] = counts.get(status, 0) + 1
        shown = ", ".join(f"{counts[s]} {STATUS_LABEL[s]}" for s in STATUS_LABEL if counts.get(s))
        parts.append(f"{key}: {shown}")
    return f"{len(report['rules'])} rules; " + "; ".join(parts)


def _notable(row: dict[str, Any], keys: list[str]) -> bool:
    statuses = {row["cells"][k]["status"] for k in keys}
    return bool(statuses & {"fail", "expected-fail"}) or len(statuses) > 1


def _table(rows: Iterable[dict[str, Any]], keys: list[str], report: dict[str, Any]) -> str:
    head = "".join(f"<th>{escape(k)}</th>" for k in keys)
    body = []
    failing = {(r["implementation"], r["id"]) for r in report["results"] if r["outcome"] in SHOWN_OUTCOMES}
    for row in rows:
        cells = "".join(_cell(row["cells"][k], k, failing) for k in keys)
        reason = f'<div class="muted">{escape(row["reason"])}</div>' if row.get("reason") else ""
        body.append(
            f'<tr id="rule-{escape(row["id"])}"><td class="rule">{escape(row["id"])}<div class="muted">'
            f'{escape(row["level"])} · {escape(row["tested"])}</div></td>'
            f'<td class="summary">{escape(row["summary"])}{reason}</td>{cells}</tr>'
        )
    return f"<table><tr><th>rule</th><th>summary</th>{head}</tr>{''.join(body)}</table>"


def _cell(cell: dict[str, Any], key: str, failing: set[tuple[str, str]]) -> str:
    counts = ", ".join(f"{n} {o}" for o, n in cell["counts"].items())
    links = [f'<a href="#{anchor(key, rid)}">{escape(rid.rsplit("/", 1)[-1])}</a>'
             for rid in cell["results"] if (key, rid) in failing]
    rest = [rid for rid in cell["results"] if (key, rid) not in failing]
    listing = ""
    if rest:
        listing = (f"<details><summary class=\"muted\">{len(rest)} other result{'s' if len(rest) != 1 else ''}"
                   "</summary><div class=\"muted\">" + "<br>".join(escape(r) for r in rest) + "</div></details>")
    return (f'<td><span class="chip s-{cell["status"]}">{STATUS_LABEL[cell["status"]]}</span> '
            f'<span class="muted">{escape(counts)}</span><div class="links">{"".join(links)}</div>{listing}</td>')


def _failures(report: dict[str, Any]) -> str:
    shown = [r for r in report["results"] if r["outcome"] in SHOWN_OUTCOMES]
    if not shown:
        return "<h2>Failures</h2><p>None.</p>"
    shown.sort(key=lambda r: (r["outcome"] == "expected-fail", r["implementation"], r["id"]))
    out = [f"<h2>Failures ({len(shown)})</h2>"]
    for result in shown:
        blocks = [f'<div class="muted">{escape(result["implementation"])} · {result["role"]} · '
                  f'rules {escape(", ".join(result["rules"]) or "none")} · {escape(result["test"])}</div>']
        if result.get("excused_by"):
            blocks.append(f"<p>{escape(result['excused_by'])}</p>")
        message = result.get("message") or ""
        for title, key in (("message", "message"), (_input_title(result), "input"),
                           ("the implementation's answer", "output"), ("expected", "expected")):
            text = result.get(key)
            if not text or (key == "output" and text.strip() in message):
                continue  # an answer the message already quotes whole is not shown twice
            blocks.append(f"<div class=\"muted\">{escape(title)}</div><pre>{_shown(text)}</pre>")
        out.append(f'<div class="result {result["outcome"]}" id="{anchor(result["implementation"], result["id"])}">'
                   f'<h4><span class="chip s-{"expected-fail" if result["outcome"] == "expected-fail" else "fail"}">'
                   f'{escape(result["outcome"])}</span> {escape(result["id"])}</h4>{"".join(blocks)}</div>')
    return "\n".join(out)


#: A staged copy's path (``.../in/<folder>/<16 hex digits>[.ext]``): gone once its case ended.
_STAGED = re.compile(r"(?:/[^\s/]+)+/in/[^\s/]+/[0-9a-f]{16}(?:\.[A-Za-z0-9]{1,8})?")


def _shown(text: str) -> str:
    """Text of a failure for the page: staged copies' dead paths named for what they were, controls visible."""
    return escape(visible_controls(_STAGED.sub("(the staged copy of the input)", text)))


def _input_title(result: dict[str, Any]) -> str:
    size, clipped = result.get("input_size"), result.get("input_clipped")
    encoding = " (base64: its bytes are not UTF-8)" if result.get("input_encoding") == "base64" else ""
    amount = f", {size} bytes" if size is not None else ""
    return f"stream or input given{amount}{encoding}" + (f"; the first {INLINE_LIMIT} bytes shown" if clipped else "")


def _fuzz(report: dict[str, Any]) -> str:
    """Per implementation and role: properties, examples, failures, and why a role was not fuzzed."""
    rows = report.get("fuzz") or []
    if not rows:
        return ""
    body = "".join(
        f"<tr><td>{escape(r['implementation'])}</td><td>{escape(r['role'])}</td><td>{r['properties']}</td>"
        f"<td>{r['examples']}</td><td>{sum(r['outcomes'].get(o, 0) for o in ('fail', 'crash', 'timeout'))}</td>"
        f"<td>{r['counterexamples']}</td><td>{escape('; '.join(r['not_fuzzed']))}</td></tr>" for r in rows
    )
    return ("<h2>Fuzzing</h2><table><tr><th>implementation</th><th>role</th><th>properties</th><th>examples</th>"
            f"<th>failing</th><th>counterexamples</th><th>not fuzzed</th></tr>{body}</table>")


def _counterexamples(report: dict[str, Any]) -> str:
    if not report["counterexamples"]:
        return ""
    rows = "".join(
        f"<tr><td>{escape(c['implementation'])}</td><td>{escape(c['test'])}</td><td><code>{escape(c['path'])}</code>"
        f"</td><td><code>{escape(c['replay'])}</code></td></tr>" for c in report["counterexamples"]
    )
    return ("<h2>Fuzz counterexamples</h2><table><tr><th>implementation</th><th>property</th><th>case file</th>"
            f"<th>replay</th></tr>{rows}</table>")
