"""Badges as shields.io endpoint JSON (https://shields.io/badges/endpoint-badge), one per role.

With one implementation the files are ``badge-<role>.json``; side by side,
``badge-<implementation>-<role>.json``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def badge(verdict: dict[str, Any]) -> dict[str, Any]:
    counts = verdict["counts"]
    scored = sum(counts.get(o, 0) for o in ("pass", "fail", "crash", "timeout", "expected-fail"))
    percent = verdict["pass_percent"]
    if verdict["verdict"] == "no-verdict":
        message, color = "no verdict", "lightgrey"
    else:
        message = f"{percent:g}% ({counts.get('pass', 0)}/{scored})"
        color = {"conforms": "brightgreen", "conforms-except-known-failures": "yellow"}.get(verdict["verdict"], "red")
    return {"schemaVersion": 1, "label": f"ASR {verdict['role']}", "message": message, "color": color}


def write_badges(report: dict[str, Any], folder: Path) -> list[Path]:
    """One badge per role that ran; badge files of an earlier run for other roles are removed,
    so a folder never shows a verdict this run did not reach."""
    single = len(report["implementations"]) == 1
    written = []
    for verdict in report["verdicts"]:
        name = f"badge-{verdict['role']}.json" if single else f"badge-{verdict['implementation']}-{verdict['role']}.json"
        path = folder / name
        path.write_text(json.dumps(badge(verdict)) + "\n", encoding="utf-8")
        written.append(path)
    for stale in folder.glob("badge-*.json"):
        if stale not in written:
            stale.unlink()
    return written
