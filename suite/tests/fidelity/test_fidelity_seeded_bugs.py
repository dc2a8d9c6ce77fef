"""Each seeded-bug Claude Code producer writes valid streams, and fidelity names its rule."""

from __future__ import annotations

import ast

import pytest
from fidelity_helpers import MISBEHAVING, SAMPLES, SAMPLES_DIR, convert, records_of, run_converter

from asr_conformance.fidelity.claude_code import WITNESS
from asr_conformance.fidelity.compare import check_fidelity
from asr_conformance.fidelity.facts import FAMILIES
from asr_conformance.reference.checks import validate_bytes

#: Each producer and the rule its bug breaks.
SEEDED = {
    "cc-fixed-output": "ASR-051",
    "cc-drops-every-second-call": "ASR-157",
    "cc-failed-as-completed": "ASR-258",
    "cc-invents-exit-codes": "ASR-260",
    "cc-lowercases-tool-names": "ASR-252",
    "cc-truncates-output": "ASR-259",
    "cc-synthesizes-dangling-results": "ASR-265",
    "cc-drops-orphans": "ASR-266",
    "cc-invents-parent-call-id": "ASR-275",
    "cc-duration-from-neighbours": "ASR-261",
    "cc-renumbers-call-ids": "ASR-262",
    "cc-shifts-timestamps": "ASR-103",
    "cc-drops-user-messages": "ASR-157",
    "cc-collapses-whitespace": "ASR-157",
    "cc-constant-session-id": "ASR-051",
    "cc-kind-from-input": "ASR-253",
    "cc-invents-answers": "ASR-285",
    "cc-invents-decisions": "ASR-270",
    "cc-requested-by-user": "ASR-274",
    "cc-invents-permission-mode": "ASR-187",
    "cc-invents-turn-states": "ASR-169",
    "cc-flattens-nested-calls": "ASR-157",
    "cc-invents-hook-exit-codes": "ASR-287",
    "cc-invents-terminals": "ASR-291",
    "cc-invents-model-changes": "ASR-172",
    "cc-drops-refusal-permissions": "ASR-157",
    "cc-refusal-as-compact-permission": "ASR-279",
    "cc-invents-trigger": "ASR-186",
}


#: Seeded bugs no sample here is long enough to show (past the 1,000th record): the producer fuzz's
#: long sessions find them (suite/tests/generators/test_fuzzing_finds_seeded_bugs.py).
LONG_ONLY = ("cc-drops-late-calls",)


def test_every_seeded_producer_is_listed() -> None:
    assert sorted(p.name for p in MISBEHAVING.glob("cc-*")) == sorted([*SEEDED, *LONG_ONLY])


@pytest.mark.parametrize("name", sorted([*SEEDED, *LONG_ONLY]))
def test_docstring_says_the_bug_in_one_sentence(name: str) -> None:
    doc = ast.get_docstring(ast.parse((MISBEHAVING / name).read_text()))
    assert doc and doc.startswith("A Claude Code converter that ") and doc.count(". ") == 0


@pytest.mark.parametrize("name", sorted(SEEDED))
def test_seeded_bug_is_caught_with_its_rule_while_output_stays_valid(name: str) -> None:
    caught: set[str] = set()
    for path in SAMPLES:
        data = path.read_bytes()
        stream = run_converter(MISBEHAVING / name, data)
        outcome = validate_bytes(stream)
        assert outcome.valid, f"{name} on {path.name}: {[d.rule for d in outcome.errors]}"
        findings = check_fidelity(WITNESS.read(data), convert(MISBEHAVING / name, data))
        assert all(f.family in FAMILIES and f.message for f in findings)
        caught |= {f.rule for f in findings}
    assert SEEDED[name] in caught


def test_the_wrapper_splits_records_at_newlines_only() -> None:
    """U+2028 and U+0085 stand unescaped in the example's JSON strings; they do not end a record."""
    data = (SAMPLES_DIR / "plain-chat.jsonl").read_bytes()
    text = "one\u2028two\u0085three"
    edited = data.replace(b'"content":"', b'"content":"' + text.encode("utf-8"), 1)
    assert edited != data
    stream = run_converter(MISBEHAVING / "cc-invents-exit-codes", edited)
    assert validate_bytes(stream).valid
    assert any(text in p.get("text", "") for r in records_of(stream) if r["type"] == "message" for p in r["content"])


@pytest.mark.parametrize("name", ["cc-invents-answers", "cc-kind-from-input"])
def test_arguments_that_are_not_an_object_do_not_crash_a_seeded_producer(name: str) -> None:
    """A tool_use input may be any JSON value (text when the model's arguments were not JSON)."""
    data = (SAMPLES_DIR / "fix-parser-test.jsonl").read_bytes()
    edited = data.replace(b'"input":{"command":"cargo test -p parser","description":"Run parser tests"}',
                          b'"input":"{\\"command\\": \\"cargo test"', 1)
    assert edited != data
    assert validate_bytes(run_converter(MISBEHAVING / name, edited)).valid
