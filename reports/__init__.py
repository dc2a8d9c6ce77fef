"""Report writers: the JSON report, its Markdown and HTML summaries, and the badges.

The plugin builds one report document (``document.build_report``) on the
process that sees every result, then hands it to ``write_reports``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from asr_conformance.reports.badges import write_badges
from asr_conformance.reports.html_page import render_html
from asr_conformance.reports.markdown import render_markdown

__all__ = ["write_reports"]


def write_reports(report: dict[str, Any], folder: Path) -> dict[str, Path]:
    """Write report.json, summary.md, report.html and the badges; return what was written, by kind."""
    folder.mkdir(parents=True, exist_ok=True)
    written = {
        "json": folder / "report.json",
        "markdown": folder / "summary.md",
        "html": folder / "report.html",
    }
    written["json"].write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    written["markdown"].write_text(render_markdown(report), encoding="utf-8")
    written["html"].write_text(render_html(report), encoding="utf-8")
    for index, path in enumerate(write_badges(report, folder)):
        written[f"badge-{index}"] = path
    return written
