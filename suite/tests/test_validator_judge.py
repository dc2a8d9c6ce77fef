"""One judge of a validator's answer: corpus cases and generated streams are judged by the same decision."""

from __future__ import annotations

from pathlib import Path

import pytest

from asr_conformance.harness.adapters.answers import Outcome, Verdict
from asr_conformance.harness.fuzzing.profiles import ValidatorFuzzSession
from asr_conformance.harness.judging.validator import judge, judge_answer
from asr_conformance.vocabulary.cases import Case

ALLOWED = frozenset({"ASR-260"})
ANSWERS = {
    "accept": Verdict(Outcome.ACCEPT),
    "reject-right": Verdict(Outcome.REJECT, rules=frozenset({"ASR-260"})),
    "reject-wrong": Verdict(Outcome.REJECT, rules=frozenset({"ASR-001"})),
    "reject-unnamed": Verdict(Outcome.REJECT),
    "crash": Verdict(Outcome.CRASH, message="killed"),
    "declined": Verdict(Outcome.SKIPPED, message="not mine"),
}
#: (expected verdict, answer) -> (status, problem): the table the pages and the scoring policy settle.
TABLE = {
    ("valid", "accept"): ("passed", None),
    ("valid", "reject-right"): ("failed", "rejected-valid"),
    ("valid", "reject-unnamed"): ("failed", "rejected-valid"),
    ("invalid", "accept"): ("failed", "accepted-invalid"),
    ("invalid", "reject-right"): ("passed", None),
    ("invalid", "reject-unnamed"): ("passed", None),
    ("invalid", "reject-wrong"): ("passed", None),
    ("implementation-defined", "accept"): ("reported", None),
    ("implementation-defined", "reject-wrong"): ("reported", None),
    ("implementation-defined", "crash"): ("failed", "no-verdict"),
    ("invalid", "crash"): ("failed", "no-verdict"),
    ("valid", "declined"): ("failed", "declined"),
}
#: Under --strict-reasons (a manifest's strict_reasons) a wrong reason fails; everything else is judged alike.
STRICT = {**TABLE, ("invalid", "reject-wrong"): ("failed", "wrong-rule")}


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize(("expected", "answer"), sorted(TABLE))
def test_the_judge_decides_as_the_table_says(expected: str, answer: str, strict: bool) -> None:
    found = judge_answer(expected, ANSWERS[answer], ALLOWED, "ASR-260", strict)
    assert (found.status, found.problem) == (STRICT if strict else TABLE)[(expected, answer)]
    if (expected, answer) == ("invalid", "reject-wrong"):
        assert "named ASR-001; the stream breaks ASR-260" in found.reason
        assert found.rule_level == "wrong"


def test_a_rejection_counts_in_the_reasons_figure_whatever_it_names() -> None:
    figures = {answer: judge_answer("invalid", ANSWERS[answer], ALLOWED, "ASR-260").reasons
               for answer in ("reject-right", "reject-wrong", "reject-unnamed")}
    assert figures["reject-right"] == {"rejections": 1, "naming_a_broken_rule": 1, "naming_only_broken_rules": 1,
                                       "naming_no_rule": 0}
    assert figures["reject-wrong"] == {"rejections": 1, "naming_a_broken_rule": 0, "naming_only_broken_rules": 0,
                                       "naming_no_rule": 0}
    assert figures["reject-unnamed"] == {"rejections": 1, "naming_a_broken_rule": 0, "naming_only_broken_rules": 0,
                                         "naming_no_rule": 1}
    both = Verdict(Outcome.REJECT, rules=frozenset({"ASR-260", "ASR-168"}))
    assert judge_answer("invalid", both, ALLOWED, "ASR-260").reasons["naming_a_broken_rule"] == 1
    assert judge_answer("invalid", both, ALLOWED, "ASR-260").reasons["naming_only_broken_rules"] == 0
    # Only scored rejections count: an accepted valid stream, or a defect with no page rule, adds nothing.
    assert judge_answer("valid", ANSWERS["accept"], ALLOWED, "ASR-260").reasons == {}
    assert judge_answer("invalid", ANSWERS["reject-right"], frozenset(), None).reasons == {}


def _case(tmp_path: Path, verdict: str) -> Case:
    stream = tmp_path / "x.jsonl"
    stream.write_bytes(b"{}\n")
    return Case(id="validator/ASR-260/x", stream=stream, verdict=verdict, rules=("ASR-260",), spec="s",
                description="d", reference="reject" if verdict != "valid" else "accept")


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize(("expected", "answer"), sorted(TABLE))
def test_a_corpus_case_is_judged_by_the_same_decision(tmp_path: Path, expected: str, answer: str,
                                                      strict: bool) -> None:
    shared = judge_answer(expected, ANSWERS[answer], ALLOWED, "ASR-260", strict)
    found = judge(_case(tmp_path, expected), ANSWERS[answer], strict)
    assert (found.status, found.problem, found.rule_level) == (shared.status, shared.problem, shared.rule_level)


class _Answers:
    """A validator that gives one fixed answer."""

    def __init__(self, verdict: Verdict) -> None:
        self.verdict = verdict

    def validate(self, stream: Path) -> Verdict:
        return self.verdict


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize(("expected", "answer"), sorted(k for k in TABLE if k[0] != "valid"))
def test_a_generated_stream_is_judged_by_the_same_decision(tmp_path: Path, expected: str, answer: str,
                                                           strict: bool) -> None:
    """The fuzz harness fails exactly where the shared judge does (a damaged-looking stream the reference
    rejects stands in for a generated invalid one)."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    session = ValidatorFuzzSession(_Answers(ANSWERS[answer]), tmp_path, tmp_path / "cx", [], settings(database=None), None, {},
                                   strict_reasons=strict)

    @settings(max_examples=1, database=None, deadline=None)
    @given(st.just(b"not json\n"))
    def example(stream: bytes) -> None:  # inside a property, as the fuzz test runs it
        session.expect(expected, stream, "t", ["ASR-260"], "a stream")

    failed = False
    try:
        example()
    except AssertionError:
        failed = True
    assert failed == ((STRICT if strict else TABLE)[(expected, answer)][0] == "failed")
