"""The verdict is INCOMPLETE whenever the run did not finish, and never CONFORMS then."""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest

from asr_conformance.gate.results import Result
from asr_conformance.gate.verdict import Completeness, overall, role_verdict, verdicts

IMPLEMENTATION = [{"key": "acme", "roles": ["validator"]}]


def result(outcome: str, test: str = "t") -> Result:
    return Result(id=test, implementation="acme", role="validator", kind="corpus", test=test, rules=[],
                  outcome=outcome)


@pytest.mark.parametrize(
    ("counts", "complete", "expected"),
    [
        ({"pass": 3}, True, "conforms"),
        ({"pass": 3, "expected-fail": 1}, True, "conforms-except-known-failures"),
        ({"pass": 3, "crash": 1}, True, "does-not-conform"),
        ({"skipped": 2}, True, "no-verdict"),
        ({"pass": 3}, False, "incomplete"),
        ({"skipped": 2}, False, "incomplete"),
        ({"pass": 3, "fail": 1}, False, "does-not-conform"),
    ],
)
def test_role_verdicts(counts: dict[str, int], complete: bool, expected: str) -> None:
    assert role_verdict(Counter(counts), complete) == expected


@pytest.mark.parametrize(
    "completeness",
    [
        Completeness(interrupted=True),
        Completeness(exit_status=2),
        Completeness(exit_status=3),
        Completeness(missing=("t::lost",)),
        Completeness(changed=("cases/validator/x.toml",)),
        Completeness(other=("no conformance test was collected",)),
    ],
)
def test_an_unfinished_run_is_incomplete_whatever_passed(completeness: Completeness) -> None:
    found = verdicts(IMPLEMENTATION, [result("pass")], completeness.complete)
    assert found[0].verdict == "incomplete"
    words = overall(found, [], completeness)
    assert words.startswith("INCOMPLETE: ") and "CONFORMS" not in words
    assert completeness.to_json()["complete"] is False


def test_a_finished_run_with_failing_tests_is_complete() -> None:
    completeness = Completeness(exit_status=1)
    assert completeness.complete
    found = verdicts(IMPLEMENTATION, [result("pass"), result("fail", "u")], True)
    assert overall(found, ["1 failing result(s)"], completeness) == "DOES NOT CONFORM"
    assert overall(verdicts(IMPLEMENTATION, [result("pass")]), [], Completeness()) == "CONFORMS"


def test_missing_tests_are_named_and_counted() -> None:
    missing = tuple(f"t::{i}" for i in range(12))
    (reason,) = Completeness(missing=missing).reasons()
    assert reason.startswith("12 collected test(s) sent no result") and "t::0" in reason and "and 7 more" in reason


def _fidelity(outcome: str, message: str = "", why: str | None = None) -> Result:
    return Result(id="producer/test_fidelity[a]", implementation="acme", role="producer", kind="producer",
                  test="t::f", rules=["ASR-103"], outcome=outcome, message=message,
                  details={"fidelity_not_checked": why} if why else {})


def test_fidelity_not_checked_is_read_from_the_record_not_the_message() -> None:
    producer = [{"key": "acme", "roles": ["producer"]}]
    recorded = _fidelity("skipped", "any words at all", "no witness for format 'acme-agent-log'")
    (verdict,) = verdicts(producer, [_fidelity("pass"), recorded])
    assert verdict.fidelity_not_checked == ("no witness for format 'acme-agent-log'",)
    assert verdict.verdict == "partial"
    assert overall([verdict], [], Completeness()).startswith("PARTIAL: conforms on what was checked; not checked: "
                                                             "fidelity not checked: no witness")
    # A skip whose text merely reads like it (an implementation's words can reach a message) counts for nothing.
    (plain,) = verdicts(producer, [_fidelity("pass"), _fidelity("skipped", "fidelity not checked: a made-up reason")])
    assert not plain.fidelity_not_checked and "fidelity_not_checked" not in plain.to_json()
    assert overall([plain], [], Completeness()) == "CONFORMS"


def test_every_partial_verdict_has_its_own_word_and_exit_status() -> None:
    """Fidelity not checked, not fuzzed, a widened sandbox, a role without cases: never CONFORMS, never exit 0."""
    from asr_conformance.gate.decision import exit_status
    from asr_conformance.gate.verdict import EXIT_PARTIAL, EXIT_STATUSES, run_verdict

    producer = [{"key": "acme", "roles": ["producer"]}]
    not_fuzzed = Result(id="producer/test_converts_generated_transcripts[x]", implementation="acme", role="producer",
                        kind="fuzz", test="t::g", rules=[], outcome="skipped", message="not fuzzed: no generator for x",
                        not_fuzzed="not fuzzed: no generator for x")
    widened = [{"key": "acme", "roles": ["validator"], "widened": ["environment passed through: ACME_KEY"]}]
    both = [{"key": "acme", "roles": ["validator", "reader"]}]
    cases = {
        "fidelity": verdicts(producer, [_fidelity("pass"), _fidelity("skipped", "x", "no witness for format 'y'")]),
        "not fuzzed": verdicts(producer, [_fidelity("pass"), not_fuzzed]),
        "widened": verdicts(widened, [result("pass")]),
        "role without cases": verdicts(both, [result("pass")]),
    }
    for name, found in cases.items():
        kind = run_verdict(found, [], Completeness())
        assert kind == "partial", name
        assert overall(found, [], Completeness()).startswith("PARTIAL: "), name
        assert exit_status(0, [], Completeness(), kind) == EXIT_PARTIAL == EXIT_STATUSES["partial"], name
    assert cases["widened"][0].unchecked == ("widened sandbox: environment passed through: ACME_KEY",)
    # In a run narrowed with -m or -k (which certifies nothing, and says so) a role's cases were deselected.
    assert run_verdict(cases["role without cases"], [], Completeness(), narrowed=True) == "conforms"
    assert run_verdict(cases["widened"], [], Completeness(), narrowed=True) == "partial"
    # Without the unchecked part the same results conform and exit 0: the test can tell them apart.
    plain = verdicts(IMPLEMENTATION, [result("pass")])
    assert run_verdict(plain, [], Completeness()) == "conforms"
    assert exit_status(0, [], Completeness(), "conforms") == 0
    # A skipped fuzz test whose message merely reads "not fuzzed: " (no record of it) leaves nothing unchecked.
    (worded,) = verdicts(producer, [_fidelity("pass"), dataclasses.replace(not_fuzzed, not_fuzzed=None)])
    assert not worded.not_fuzzed and run_verdict([worded], [], Completeness()) == "conforms"
    # A failure stays a failure (exit 1) whatever was not checked.
    failing = verdicts(widened, [result("fail")])
    assert run_verdict(failing, [], Completeness()) == "does-not-conform"
    assert exit_status(1, [], Completeness(), "does-not-conform") == 1


def test_the_reasons_figure_is_summed_beside_the_verdict() -> None:
    validator = [{"key": "acme", "roles": ["validator"]}]
    figures = [{"rejections": 1, "naming_a_broken_rule": 1, "naming_only_broken_rules": 0, "naming_no_rule": 0},
               {"rejections": 3, "naming_a_broken_rule": 1, "naming_only_broken_rules": 1, "naming_no_rule": 2}]
    found = [Result(id=f"validator/c{i}", implementation="acme", role="validator", kind="corpus", test=f"t::{i}",
                    rules=["ASR-164"], outcome="pass", details={"reasons": f}) for i, f in enumerate(figures)]
    (verdict,) = verdicts(validator, found)
    assert verdict.verdict == "conforms"
    assert verdict.reasons == {"rejections": 4, "naming_a_broken_rule": 2, "naming_only_broken_rules": 1,
                                  "naming_no_rule": 2}
