"""A small report document built the way the plugin builds one, for the report writers' tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from asr_conformance import CORPUS_DIR
from asr_conformance.gate.results import Counterexample, Result
from asr_conformance.gate.verdict import Completeness
from asr_conformance.reports.document import RunFacts, build_report
from asr_conformance.vocabulary.rules import load_catalog

#: What an implementation may put in its name, its rule IDs and its messages.
HOSTILE = ("acme\n| acme | validator | ✅ conforms |\n<!-- hidden <script>alert(1)</script> `code` "
           "\x1b[32mgreen\x1b[0m\n::error::forged \ud800 *bold* [link](http://x) &amp;")


def make_report(name: str = "acme", completeness: Completeness | None = None, key: str = "acme",
                rule: str = "ASR-260", message: str = "accepted an invalid stream") -> dict[str, Any]:
    results = [
        Result(id="validator/ASR-260/invalid-x", implementation=key, role="validator", kind="corpus",
               test="t::a", rules=[rule], outcome="fail", message=message, output=message),
        Result(id="validator/ASR-260/valid-x", implementation=key, role="validator", kind="corpus",
               test="t::b", rules=["ASR-260"], outcome="pass"),
        Result(id="validator/fuzz", implementation=key, role="validator", kind="fuzz", test="t::c", rules=[],
               outcome="fail", counterexample=Counterexample("cx/a `b`.jsonl", "pytest -k 'a\nb'")),
    ]
    facts = RunFacts(
        suite_version="0.1.0", corpus=CORPUS_DIR, started="2026-01-01T00:00:00+00:00", duration=1.0,
        implementations=[{"key": key, "name": name, "version": None, "roles": ["validator"],
                          "protocol": "oneshot", "command": ["x"], "announced": name}],
        options={"partial": False}, hypothesis={"profile": "asr-fast", "seed": None}, catalog=load_catalog(),
        expectations={"files": [], "stale": [{"entry": "rule ASR-260", "reason": name}]},
        exit={"status": 1, "reasons": [f"stale expectation: {name}"]},
        completeness=completeness or Completeness(exit_status=1),
    )
    return build_report(facts, results)


@pytest.fixture
def report_of() -> Any:
    return make_report


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return tmp_path / "out"
