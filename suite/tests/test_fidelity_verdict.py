"""A producer of a format no witness reads: fidelity is not checked, says so, and never counts as passed."""

from __future__ import annotations

import json
from pathlib import Path

import producer_runs as runs
import pytest
from certifying import Certification

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def no_witness(tmp_path_factory: pytest.TempPathFactory) -> Certification:
    """``producer_runs.no_witness`` (test_producer_fuzz_harness.py reads it too)."""
    return runs.no_witness(tmp_path_factory)


def test_no_witness_gives_a_partial_verdict_never_a_pass(no_witness: Certification) -> None:
    """Fidelity not checked is its own verdict everywhere: the word, report.json, summary.md, the badge, and an
    exit status of its own (10), never 0."""
    assert "--hypothesis-profile=asr-fast" in no_witness.args  # a randomized run earns badges
    assert no_witness.report_dir is not None
    out = no_witness.report_dir
    text = no_witness.stdout.str()
    assert "verdict: PARTIAL: conforms on what was checked; not checked: fidelity not checked: no witness for " \
        "format 'acme-agent-log'" in text
    assert int(no_witness.ret) == 10
    report = json.loads((out / "report.json").read_text())
    (verdict,) = report["verdicts"]
    assert verdict["verdict"] == "partial" and report["exit"]["status"] == 10
    assert verdict["fidelity_not_checked"] == ["no witness for format 'acme-agent-log'"]
    badge = json.loads((out / "badge-producer.json").read_text())
    assert badge["color"] != "brightgreen" and badge["message"].startswith("partial")
    assert "partial" in (out / "summary.md").read_text()
    fidelity = [r for r in report["results"] if r["id"].startswith("producer/test_fidelity")]
    assert fidelity and all(r["outcome"] == "skipped" for r in fidelity)
    assert "fidelity not checked" in (out / "summary.md").read_text()
    assert "fidelity not checked" in json.loads((out / "badge-producer.json").read_text())["message"]


@pytest.fixture(scope="module")
def example_one_shot(tmp_path_factory: pytest.TempPathFactory) -> Certification:
    """``producer_runs.example_converter_one_shot`` (test_producer_role.py reads it too)."""
    return runs.example_converter_one_shot(tmp_path_factory)


def test_a_witnessed_format_is_checked_and_plainly_conforms(example_one_shot: Certification) -> None:
    """The other side: the example converter on one sample with tool calls gets the plain verdict. (Its other
    samples and generated transcripts are left out here: test_producer_role runs them all; the verdict's words do
    not change with the number of inputs.)"""
    sample = ROOT / "examples" / "claude-code-converter" / "samples" / "fix-parser-test.jsonl"
    assert sample == runs.ONE_SHOT_SAMPLE and "not fuzz" in example_one_shot.args
    text = example_one_shot.text
    assert "verdict: CONFORMS" in text and "fidelity not checked" not in text, text[-3000:]
    fidelity = [r for r in example_one_shot.report["results"]
                if r["id"].startswith("producer/test_fidelity") and f"[{sample.name}" in r["id"]]
    assert fidelity and all(r["outcome"] == "pass" for r in fidelity), fidelity
