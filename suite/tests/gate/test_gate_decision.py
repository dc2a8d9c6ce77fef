"""The gate's decisions, as pure functions: what is excused, why a run fails the gate, and the exit status."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from asr_conformance.gate.baseline import Baseline
from asr_conformance.gate.decision import EXIT_OK, EXIT_TESTS_FAILED, GateSettings, decide, excuse, exit_status
from asr_conformance.gate.expectations import Expectation
from asr_conformance.gate.results import Result
from asr_conformance.gate.verdict import Completeness


@dataclass(frozen=True)
class Implementation:
    key: str
    expectations: Path | None = None


ACME = Implementation("acme", Path("acme-expectations.toml"))
KNOWN = Expectation(0, "a known bug", case="validator/ASR-260/invalid-x")


def result(outcome: str, id: str = "validator/ASR-260/invalid-x") -> Result:
    return Result(id=id, implementation="acme", role="validator", kind="corpus", test=id, rules=["ASR-260"],
                  outcome=outcome)


def test_an_expectations_entry_or_the_baseline_excuses_a_failure() -> None:
    settings = GateSettings([ACME], {"acme": (KNOWN,)})
    assert "known failure (case validator/ASR-260/invalid-x): a known bug" in str(
        excuse(settings, KNOWN.case or "", ["ASR-260"], "acme"))
    assert excuse(settings, "validator/other", ["ASR-001"], "acme") is None
    baseline = Baseline(Path("before.json"), {"acme": {"validator/other": "fail"}})
    assert "failing in the baseline before.json too (fail)" == excuse(
        GateSettings([ACME], baseline=baseline), "validator/other", [], "acme")


def test_a_clean_run_passes_the_gate() -> None:
    decision = decide(GateSettings([ACME]), [result("pass")])
    assert decision.reasons == [] and decision.stale == [] and decision.comparison is None
    assert exit_status(EXIT_OK, decision.reasons, Completeness()) == EXIT_OK


def test_the_gate_says_why_a_run_does_not_pass() -> None:
    nothing = decide(GateSettings([ACME]), [result("skipped")])
    assert nothing.reasons == ["no case was executed (zero executed cases is never a pass)"]
    stale = decide(GateSettings([ACME], {"acme": (KNOWN,)}), [result("pass"), result("fail", "validator/b")])
    assert stale.reasons == ["stale expectation in acme-expectations.toml: case validator/ASR-260/invalid-x now "
                             "passes (remove the entry)", "1 failing result(s)"]
    assert stale.stale == [("acme-expectations.toml", KNOWN)]
    regressed = decide(GateSettings([ACME], baseline=Baseline(Path("b.json"), {"acme": {KNOWN.case: "pass"}})),
                       [result("fail")])
    assert regressed.comparison is not None and regressed.reasons[0] == "1 regression(s) against the baseline b.json"


def test_the_exit_status_fails_a_run_that_passed_its_tests_but_not_the_gate() -> None:
    assert exit_status(EXIT_OK, ["1 failing result(s)"], Completeness()) == EXIT_TESTS_FAILED
    assert exit_status(EXIT_OK, [], Completeness(interrupted=True)) == EXIT_TESTS_FAILED
    assert exit_status(2, ["x"], Completeness()) == 2  # pytest's own failure status stands
