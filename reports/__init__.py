"""Report writers: the JSON report, its Markdown and HTML summaries, and the badges.

The plugin builds one report document (``document.build_report``) on the
process that sees every result, then hands it to ``write_reports``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from asr_conformance.reports.badges import badge_files
from asr_conformance.reports.html_page import render_html
from asr_conformance.reports.markdown import render_markdown
from asr_conformance.reports.writing import ReportFolderError, install
from asr_conformance.vocabulary.untrusted import clean_value

__all__ = ["ReportFolderError", "write_reports"]


def write_reports(report: dict[str, Any], folder: Path) -> dict[str, Path]:
    """Write report.json, summary.md, report.html and the badges; return what was written, by kind.

    Every string is cleaned of lone surrogates first (they cannot be written as UTF-8), and the
    files reach the folder through ``writing.install`` (fresh files renamed into place)."""
    report = clean_value(report)
    files = {
        "report.json": json.dumps(report, indent=1, ensure_ascii=False) + "\n",
        "summary.md": render_markdown(report),
        "report.html": render_html(report),
    }
    badges = badge_files(report)
    files.update(badges)
    paths = install(files, folder)
    written = {"json": paths["report.json"], "markdown": paths["summary.md"], "html": paths["report.html"]}
    for index, name in enumerate(badges):
        written[f"badge-{index}"] = paths[name]
    return written
