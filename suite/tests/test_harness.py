"""The harness discriminates: the reference passes, every misbehaving
implementation in examples/ fails exactly where it should, and none of them
stops the run or leaves a process behind."""

from __future__ import annotations

import re
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from asr_conformance import CORPUS_DIR
from asr_conformance.vocabulary.cases import iter_cases

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
MISBEHAVING = EXAMPLES / "misbehaving"
CASES = list(iter_cases(CORPUS_DIR, role="validator"))
COUNT = Counter(case.verdict for case in CASES)
VALID, INVALID, DEFINED = COUNT["valid"], COUNT["invalid"], COUNT["implementation-defined"]


def certify(pytester: pytest.Pytester, implementation: Path | str, *args: str) -> pytest.RunResult:
    """Run the corpus part of the conformance suite in a fresh pytest process, from an
    unrelated folder (the fuzz part has its own tests in test_fuzz_harness.py)."""
    selection = () if "-m" in args else ("-m", "corpus")
    return pytester.runpytest_subprocess(
        f"--implementation={implementation}", "-p", "no:cacheprovider", *selection, *args
    )


def failed_case_ids(result: pytest.RunResult) -> set[str]:
    return set(re.findall(r"FAILED \S*test_validator_case\[(.+?)\]", result.stdout.str()))


def test_reference_through_the_persistent_protocol_passes_everything(pytester: pytest.Pytester) -> None:
    result = certify(pytester, EXAMPLES / "reference.toml", "--check-protocol")
    result.assert_outcomes(passed=VALID + INVALID, skipped=DEFINED)
    result.stdout.fnmatch_lines(["*verdict: CONFORMS*"])
    assert result.ret == 0


def test_reference_through_one_shot_processes_passes_everything(pytester: pytest.Pytester) -> None:
    result = certify(pytester, EXAMPLES / "reference-validator", "-n", "2")
    result.assert_outcomes(passed=VALID + INVALID, skipped=DEFINED)
    assert result.ret == 0


def test_manifest_with_placeholder_and_exit_codes(pytester: pytest.Pytester) -> None:
    result = certify(pytester, EXAMPLES / "reference-oneshot.toml", "-k", "ASR-260 or ASR-164")
    outcomes = result.parseoutcomes()
    assert outcomes["passed"] > 10 and "failed" not in outcomes
    assert result.ret == 0


def test_accept_all_fails_once_per_invalid_case_naming_case_and_rule(pytester: pytest.Pytester) -> None:
    result = certify(pytester, MISBEHAVING / "accept-all")
    result.assert_outcomes(passed=VALID, failed=INVALID, skipped=DEFINED)
    assert result.ret == 1
    failed = failed_case_ids(result)
    assert failed == {c.id for c in CASES if c.verdict == "invalid"}
    text = result.stdout.str()
    assert "case validator/ASR-260/" in text and "accepted an invalid stream; it breaks ASR-260" in text
    result.stdout.fnmatch_lines(["*verdict: DOES NOT CONFORM*"])


def test_reject_all_fails_once_per_valid_case(pytester: pytest.Pytester) -> None:
    result = certify(pytester, MISBEHAVING / "reject-all")
    result.assert_outcomes(passed=INVALID, failed=VALID, skipped=DEFINED)
    assert failed_case_ids(result) == {c.id for c in CASES if c.verdict == "valid"}
    assert "rejected a valid stream" in result.stdout.str()


@pytest.mark.parametrize(
    ("name", "expected"),
    [("crashes", "killed by signal 11 is not a verdict"), ("exits-2", "exit status 2 is not a verdict")],
)
def test_crashes_fail_every_case_and_the_run_goes_on(pytester: pytest.Pytester, name: str, expected: str) -> None:
    result = certify(pytester, MISBEHAVING / name)
    result.assert_outcomes(failed=len(CASES))
    text = result.stdout.str()
    assert expected in text
    if name == "exits-2":
        assert "internal error" in text  # the stderr tail is shown


def _sleepers() -> int:
    found = subprocess.run(["pgrep", "-f", "sleep 3607"], capture_output=True, text=True)
    return len(found.stdout.split())


def test_hangs_time_out_and_leave_no_process_behind(pytester: pytest.Pytester) -> None:
    before = _sleepers()
    result = certify(pytester, MISBEHAVING / "hangs", "--timeout=0.5", "-k", "ASR-164")
    outcomes = result.parseoutcomes()
    assert outcomes["failed"] >= 8 and "passed" not in outcomes
    assert "no exit within 0.5 s; process group killed" in result.stdout.str()
    assert _sleepers() == before


def test_a_flood_of_output_fails_the_case_without_exhausting_memory(pytester: pytest.Pytester) -> None:
    result = certify(pytester, MISBEHAVING / "floods-stdout", "--timeout=20", "-k", "ASR-164")
    outcomes = result.parseoutcomes()
    assert outcomes["failed"] >= 8 and "passed" not in outcomes
    assert "stdout flooded past the read limit" in result.stdout.str()


def test_garbage_over_the_protocol_fails_each_case_and_restarts(pytester: pytest.Pytester) -> None:
    result = certify(pytester, MISBEHAVING / "speaks-garbage", "--persistent", "-k", "ASR-164")
    outcomes = result.parseoutcomes()
    assert outcomes["failed"] >= 8 and "passed" not in outcomes
    text = result.stdout.str()
    assert "not JSON" in text and "OK, looks fine to me!" in text and "restarting for the next case" in text


def test_a_dead_persistent_process_is_restarted(pytester: pytest.Pytester) -> None:
    result = certify(pytester, MISBEHAVING / "dies-after-three", "--persistent", "-k", "ASR-15 and valid- and not invalid-")
    outcomes = result.parseoutcomes()
    # After three answers the process exits: the fourth case fails, the next ones get a fresh process.
    assert outcomes["failed"] >= 2 and outcomes["passed"] >= 2 * 3
    assert "the process exited (status 0)" in result.stdout.str()


def test_a_silent_persistent_process_times_out(pytester: pytest.Pytester) -> None:
    result = certify(pytester, MISBEHAVING / "never-replies", "--persistent", "--timeout=0.5", "-k", "ASR-164")
    outcomes = result.parseoutcomes()
    assert outcomes["failed"] >= 8 and "passed" not in outcomes
    assert "no reply within 0.5 s" in result.stdout.str()


def test_a_lenient_validator_is_caught_on_its_rule(pytester: pytest.Pytester) -> None:
    result = certify(pytester, MISBEHAVING / "lenient-exit-code", "-k", "ASR-26 or ASR-16", "-n", "2")
    failed = failed_case_ids(result)
    expected = {c.id for c in CASES if c.verdict == "invalid" and "ASR-260" in c.rules and "exitCode" in c.description}
    assert expected and expected <= failed
    assert all("ASR-260" in case_id for case_id in failed)
    result.stdout.fnmatch_lines(["*rules with failing cases: ASR-260*"])


def test_an_over_strict_validator_is_caught_on_valid_cases(pytester: pytest.Pytester) -> None:
    result = certify(pytester, MISBEHAVING / "rejects-duplicate-call-ids", "-k", "ASR-262 or ASR-265 or ASR-266")
    failed = failed_case_ids(result)
    assert any(f.startswith("validator/ASR-262/valid-") for f in failed)
    assert all("/valid-" in f for f in failed)
    assert "rejected a valid stream naming ASR-262" in result.stdout.str()


def test_naming_wrong_rules_is_a_reject_for_the_wrong_reason(pytester: pytest.Pytester) -> None:
    result = certify(pytester, MISBEHAVING / "names-wrong-rules", "-k", "ASR-164 or ASR-260")
    text = result.stdout.str()
    assert "rejected for the wrong reason: named ASR-999; the stream breaks ASR-164" in text
    outcomes = result.parseoutcomes()
    assert outcomes["failed"] >= 5


def test_zero_executed_cases_is_never_a_pass(pytester: pytest.Pytester) -> None:
    result = certify(pytester, EXAMPLES / "reference.toml", "-k", "no-such-case")
    assert result.ret != 0


def test_the_run_is_the_conformance_suite_only(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_mine="def test_vendor_own_test():\n    assert True is not None\n")
    result = certify(pytester, EXAMPLES / "reference.toml", "-k", "ASR-164")
    assert "test_vendor_own_test" not in result.stdout.str()
    assert result.parseoutcomes()["passed"] == 8


@pytest.mark.parametrize(
    ("argument", "message"),
    [
        ("no/such/validator", "no such file"),
        (str(ROOT / "README.md"), "not an executable file"),
        ("bad.toml", "bad.toml: (top level): 'name' is a required property"),
    ],
)
def test_bad_implementation_arguments_are_usage_errors(pytester: pytest.Pytester, argument: str, message: str) -> None:
    pytester.makefile(".toml", bad='command = ["x"]\n')
    result = certify(pytester, argument)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()


def test_each_rule_is_a_marker_and_a_keyword(pytester: pytest.Pytester) -> None:
    by_marker = certify(pytester, EXAMPLES / "reference.toml", "-m", "ASR-289", "--co", "-q")
    by_keyword = certify(pytester, EXAMPLES / "reference.toml", "-k", "ASR-289", "--co", "-q")
    expected = {c.id for c in CASES if "ASR-289" in c.rules}
    for result in (by_marker, by_keyword):
        assert set(re.findall(r"test_validator_case\[(.+?)\]", result.stdout.str())) >= expected


def test_collection_is_identical_on_every_worker(pytester: pytest.Pytester) -> None:
    result = certify(pytester, EXAMPLES / "reference.toml", "-n", "2", "-k", "ASR-25")
    assert result.ret == 0
    assert "Different tests were collected" not in result.stdout.str() + result.stderr.str()
