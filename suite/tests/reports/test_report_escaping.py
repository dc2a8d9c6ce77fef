"""What an implementation names (its name, rules, messages, expectation reasons) renders as text in
summary.md and report.html: no forged table, no hidden section, no markup."""

from __future__ import annotations

import re

from asr_conformance.gate.verdict import Completeness
from asr_conformance.reports.html_page import render_html
from asr_conformance.reports.markdown import render_markdown
from asr_conformance.vocabulary.untrusted import clean_value
from conftest import HOSTILE  # the reports folder's conftest


def test_markdown_keeps_hostile_text_on_one_escaped_line(report_of) -> None:
    markdown = render_markdown(clean_value(report_of(name=HOSTILE, rule=HOSTILE, message=HOSTILE)))
    assert "<!--" not in markdown and "<script>" not in markdown
    assert "\x1b" not in markdown and "\ud800" not in markdown
    assert not re.search(r"^\s*::", markdown, re.MULTILINE)
    # The forged row is escaped text inside the title, not a row: no cell says "conforms".
    assert "✅ conforms |" not in markdown and "conforms \\|" in markdown
    title = markdown.splitlines()[0]
    assert title.startswith("# ASR conformance: acme \\| acme \\| validator \\| ✅ conforms \\| &lt;!-- hidden")
    assert "`code`" not in markdown.replace("\\`code\\`", "")


def test_markdown_code_spans_survive_backticks_and_newlines(report_of) -> None:
    markdown = render_markdown(report_of())
    line = next(line for line in markdown.splitlines() if "cx/a" in line)
    assert "``cx/a `b`.jsonl``" in line
    assert "replay: ``" not in markdown or "\n  replay: `pytest -k 'a b'`" in markdown


def test_markdown_warns_of_an_incomplete_run_before_the_verdicts(report_of) -> None:
    markdown = render_markdown(report_of(completeness=Completeness(missing=("t::lost",))))
    assert markdown.index("**Incomplete run**") < markdown.index("| implementation |")
    assert "t::lost" in markdown


def test_html_escapes_everything_the_implementation_controls(report_of) -> None:
    html = render_html(clean_value(report_of(name=HOSTILE, rule=HOSTILE, message=HOSTILE,
                                             completeness=Completeness(changed=(HOSTILE,)))))
    assert "<script>" not in html and "<!-- hidden" not in html
    assert "&lt;script&gt;" in html and "&lt;!-- hidden" in html
    assert "Incomplete run" in html
