"""A report that stands alone: every failing result, of every role and kind, carries the input it was
given inline (text clipped with its size stated, base64 for bytes that are not UTF-8), the answer and
the expected verdict; the HTML page shows each failing stream without xdist's worker line, without the
dead paths of staged copies, with control characters visible, and the gate box only when a gate ran."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from certifying import run_certification

from asr_conformance.gate.results import without_worker_noise
from asr_conformance.reports.html_page import render_html
from asr_conformance.vocabulary.inline import INLINE_LIMIT, inline_input
from asr_conformance.vocabulary.schemas import check_report

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"
MISBEHAVING = EXAMPLES / "misbehaving"


def test_utf8_text_stays_text_with_its_size() -> None:
    assert inline_input("{\"é\": 1}\n".encode()) == {"input": "{\"é\": 1}\n", "input_encoding": "utf-8",
                                                     "input_size": 10, "input_clipped": False}


def test_bytes_that_are_not_utf8_are_base64() -> None:
    data = b'{"a":"\xff"}\n'
    found = inline_input(data)
    assert found["input_encoding"] == "base64" and base64.b64decode(found["input"]) == data


def test_a_long_input_is_clipped_and_says_so_without_splitting_a_character() -> None:
    data = b"a" * (INLINE_LIMIT - 1) + "é".encode() + b"b" * 10
    found = inline_input(data)
    assert found["input_clipped"] and found["input_size"] == len(data)
    assert found["input"] == "a" * (INLINE_LIMIT - 1)
    long_bytes = inline_input(b"\xff" * (INLINE_LIMIT + 5))
    assert long_bytes["input_clipped"] and len(base64.b64decode(long_bytes["input"])) == INLINE_LIMIT


def test_the_worker_line_goes_and_the_message_stays() -> None:
    text = "[gw1] linux -- Python 3.11.7 /work/.venv/bin/python3\naccepted an invalid stream\n"
    assert without_worker_noise(text) == "accepted an invalid stream\n"
    assert without_worker_noise("a line about [gw1] linux -- Python stays") == "a line about [gw1] linux -- Python stays"


def _report(report_of, **result_fields) -> dict:
    report = report_of()
    report["results"][0].update(result_fields)
    return report


def test_the_page_shows_the_stream_with_controls_visible_and_no_dead_paths(report_of) -> None:
    staged = "/tmp/asr-run-1a2b/asr-x/q9/in/k3/54f19d6de21c0a36.jsonl"
    page = render_html(_report(report_of, **inline_input(b'{"type":"session"\x00}\n'),
                               message=f"accepted an invalid stream\nsent: /bin/acme {staged}",
                               output="accept (exit 0)"))
    assert "\x00" not in page and '{&quot;type&quot;:&quot;session&quot;\\x00}' in page
    assert staged not in page and "(the staged copy of the input)" in page
    assert "stream or input given, 20 bytes" in page


def test_an_answer_the_message_already_quotes_is_not_repeated(report_of) -> None:
    page = render_html(_report(report_of, message="accepted an invalid stream; answer: ACCEPTED-42",
                               output="ACCEPTED-42"))
    assert page.count("ACCEPTED-42") == 1 and "the implementation&#x27;s answer" not in page


def test_the_gate_box_shows_only_when_a_gate_ran(report_of) -> None:
    report = report_of()
    report["expectations"] = {"files": [], "stale": []}
    report["baseline"] = None
    report["exit"] = {"status": 1, "reasons": ["2 failing result(s)"]}
    page = render_html(report)
    assert "Regression gate" not in page and "<h2>Why the run failed</h2>" in page and "2 failing result(s)" in page
    report["expectations"] = {"files": ["known.toml"], "stale": []}
    assert "Regression gate" in render_html(report)


def _manifest(folder: Path, name: str, command: Path, role: str, extra: str = "") -> Path:
    path = folder / f"{name}.toml"
    path.write_text(f'name = "{name}"\ncommand = ["{command}"]\nroles = ["{role}"]\n{extra}')
    return path


def test_every_failing_result_of_every_role_and_kind_carries_its_input(pytester: pytest.Pytester) -> None:
    """Side by side, under xdist: a validator (corpus and fuzz, with UTF-8 and non-UTF-8 damage), a reader
    and a producer (its own inputs and generated transcripts) that each fail."""
    samples = EXAMPLES / "claude-code-converter" / "samples"
    implementations = [
        _manifest(pytester.path, "validator", MISBEHAVING / "accept-all", "validator"),
        _manifest(pytester.path, "reader", MISBEHAVING / "pairs-by-position", "reader"),
        _manifest(pytester.path, "producer", MISBEHAVING / "cc-fixed-output", "producer",
                  f'inputs = ["{samples / "plain-chat.jsonl"}"]\nsource_formats = ["claude-code-jsonl"]\n'),
    ]
    result = run_certification(
        *[f"--implementation={m}" for m in implementations], "-n", "2",
        "--asr-shrink-steps=3", "--report-dir=out",
        "-k", "ASR-164 or ASR-289 or nul-byte or invalid-utf8 or ASR-263 or test_fidelity or jsonl-calls",
        cwd=pytester.path)
    assert result.ret == 1
    report = json.loads((pytester.path / "out" / "report.json").read_text())
    assert check_report(report) is None
    failing = [r for r in report["results"] if r["outcome"] in ("fail", "crash", "timeout")]
    kinds = {(r["implementation"], r["kind"]) for r in failing}
    assert kinds >= {("validator", "corpus"), ("validator", "fuzz"), ("reader", "reader"),
                     ("producer", "producer"), ("producer", "fuzz")}, kinds
    for found in failing:
        assert found.get("input") and found["input_size"] > 0, found["id"]
        assert found.get("output") and found.get("expected"), found["id"]
        assert "[gw" not in found["message"], found["id"]
    encodings = {r["id"]: r["input_encoding"] for r in failing}
    assert encodings["validator/test_survives_damaged_bytes[invalid-utf8]"] == "base64"
    nul = next(r for r in failing if r["id"] == "validator/test_survives_damaged_bytes[nul-byte]")
    assert "\x00" in nul["input"]
    page = (pytester.path / "out" / "report.html").read_text()
    assert "\x00" not in page and "[gw" not in page and "Regression gate" not in page
