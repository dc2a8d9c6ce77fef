"""The harness discriminates: the reference passes, every misbehaving
implementation in examples/ fails exactly where it should, and none of them
stops the run or leaves a process behind."""

from __future__ import annotations

import os
import re
import subprocess
import time
from collections import Counter
from pathlib import Path

import miniatures
import pytest
from certifying import Certify
from corpus_cases import corpus_cases

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
MISBEHAVING = EXAMPLES / "misbehaving"
CASES = corpus_cases("validator")
COUNT = Counter(case.verdict for case in CASES)
VALID, INVALID, DEFINED = COUNT["valid"], COUNT["invalid"], COUNT["implementation-defined"]


#: The corpus part of the conformance suite (the fuzz part has its own tests in test_fuzz_harness.py).
CORPUS = ("-m", "corpus")
#: A slice of the corpus for tests of one mechanism: the content-level and exitCode cases, valid and invalid.
SLICE = (*CORPUS, "-k", "ASR-164 or ASR-260")
#: For whole-corpus runs that count verdicts: the sandbox, tested on its own (harness/), would only add
#: its start-up to each of several hundred processes.
JUDGING_ONLY = ("--sandbox=none",)
#: The cases SLICE selects: those of the two rule folders and those marked with either rule.
SLICE_CASES = [case for case in CASES if {"ASR-164", "ASR-260"} & {case.id.split("/")[1], *case.rules}]


@pytest.mark.e2e
def test_reference_through_the_persistent_protocol_passes_everything(certify: Certify) -> None:
    result = certify(f"--implementation={EXAMPLES / 'reference.toml'}", *CORPUS, "--check-protocol")
    result.assert_outcomes(passed=VALID + INVALID, skipped=DEFINED)
    result.stdout.fnmatch_lines(["*verdict: CONFORMS*"])
    assert result.ret == 0


def _first_of_each_rule_and_verdict() -> list[str]:
    """One case of each verdict in each rule folder: every rule and every kind of answer, a third of the corpus."""
    chosen: dict[tuple[str, str], str] = {}
    for case in CASES:
        chosen.setdefault((case.id.split("/")[1], case.verdict), case.id)
    return sorted(chosen.values())


@pytest.mark.e2e
def test_reference_through_one_shot_processes_passes_every_rule(certify: Certify) -> None:
    """The persistent reference passes the whole corpus (above); one-shot, one process per case, it passes
    a case of each verdict of each rule: the transport differs, the checks behind it are the same."""
    chosen = _first_of_each_rule_and_verdict()
    selected = [case for case in CASES if any(name in case.id for name in chosen)]  # -k matches substrings
    assert {case.id.split("/")[1] for case in selected} == {case.id.split("/")[1] for case in CASES}
    count = Counter(case.verdict for case in selected)
    assert count["valid"] and count["invalid"] and count["implementation-defined"]
    result = certify(f"--implementation={EXAMPLES / 'reference-validator'}", *CORPUS, "-k", " or ".join(chosen))
    result.assert_outcomes(passed=count["valid"] + count["invalid"], skipped=count["implementation-defined"])
    assert result.ret == 0


def test_manifest_with_placeholder_and_exit_codes(certify: Certify) -> None:
    result = certify(f"--implementation={EXAMPLES / 'reference-oneshot.toml'}", *CORPUS, "-k", "ASR-260 or ASR-164")
    outcomes = result.parseoutcomes()
    assert outcomes["passed"] > 10 and "failed" not in outcomes
    assert result.ret == 0


def test_accept_all_fails_once_per_invalid_case_naming_case_and_rule() -> None:
    """The whole corpus, judged in process by the corpus test's body: accept-all fails exactly the invalid cases."""
    adapter = miniatures.accept_all()
    judged = miniatures.judge_cases(CASES, adapter)
    assert len(adapter.asked) == len(CASES)
    assert Counter(status for status, _ in judged.values()) == {"passed": VALID, "failed": INVALID, "skipped": DEFINED}
    assert {case_id for case_id, (status, _) in judged.items() if status == "failed"} == \
        {c.id for c in CASES if c.verdict == "invalid"}
    text = "\n".join(message for _, message in judged.values())
    assert "case validator/ASR-260/" in text and "accepted an invalid stream; it breaks ASR-260" in text


def test_accept_all_run_fails_the_invalid_cases_of_a_slice(certify: Certify) -> None:
    """The program, certified on SLICE: the same judging reaches the run's outcomes, summary and verdict."""
    result = certify(f"--implementation={MISBEHAVING / 'accept-all'}", *SLICE, *JUDGING_ONLY)
    count = Counter(case.verdict for case in SLICE_CASES)
    assert count["valid"] and count["invalid"]
    result.assert_outcomes(passed=count["valid"], failed=count["invalid"], skipped=count["implementation-defined"])
    assert result.ret == 1
    assert result.failed() == {c.id for c in SLICE_CASES if c.verdict == "invalid"}
    text = result.stdout.str()
    assert "case validator/ASR-260/" in text and "accepted an invalid stream; it breaks ASR-260" in text
    result.stdout.fnmatch_lines(["*verdict: DOES NOT CONFORM*"])


def test_reject_all_fails_once_per_valid_case() -> None:
    """The whole corpus, judged in process: reject-all fails exactly the valid cases."""
    judged = miniatures.judge_cases(CASES, miniatures.reject_all())
    assert Counter(status for status, _ in judged.values()) == {"passed": INVALID, "failed": VALID, "skipped": DEFINED}
    assert {case_id for case_id, (status, _) in judged.items() if status == "failed"} == \
        {c.id for c in CASES if c.verdict == "valid"}
    assert any("rejected a valid stream" in message for _, message in judged.values())


def test_reject_all_run_fails_the_valid_cases_of_a_slice(certify: Certify) -> None:
    result = certify(f"--implementation={MISBEHAVING / 'reject-all'}", *SLICE, *JUDGING_ONLY)
    count = Counter(case.verdict for case in SLICE_CASES)
    result.assert_outcomes(passed=count["invalid"], failed=count["valid"], skipped=count["implementation-defined"])
    assert result.failed() == {c.id for c in SLICE_CASES if c.verdict == "valid"}
    assert "rejected a valid stream" in result.stdout.str()


@pytest.mark.parametrize(
    ("name", "expected"),
    [("crashes", "killed by signal 11 is not a verdict"), ("exits-2", "exit status 2 is not a verdict")],
)
def test_crashes_fail_every_case_and_the_run_goes_on(certify: Certify, name: str, expected: str) -> None:
    """A slice is enough: the mechanism (a crash is no verdict, the next case still runs) is the same for every case."""
    result = certify(f"--implementation={MISBEHAVING / name}", *SLICE)
    result.assert_outcomes(failed=len(SLICE_CASES))
    assert result.failed() == {case.id for case in SLICE_CASES}
    text = result.stdout.str()
    assert expected in text
    if name == "exits-2":
        assert "internal error" in text  # the stderr tail is shown


def _sleepers(duration: str) -> int:
    found = subprocess.run(["pgrep", "-f", f"sleep {duration}"], capture_output=True, text=True)
    return len(found.stdout.split())


#: The per-case limit of the tests whose implementation never answers: each of their cases costs this much, and
#: an implementation that never answers fails at any limit.
HANG_TIMEOUT = 0.2


def test_hangs_time_out_and_leave_no_process_behind(certify: Certify, tmp_path: Path) -> None:
    """The hanging implementation, with a sleep of its own length (examples/misbehaving/hangs sleeps 3607 s):
    other runs on the machine (another worker's hang test, another checkout) start sleepers too, and only
    this run's must be counted."""
    duration = f"3607.{os.getpid()}{time.monotonic_ns() % 100000}"
    program = tmp_path / "hangs"
    program.write_text((MISBEHAVING / "hangs").read_text().replace("sleep 3607", f"sleep {duration}"))
    program.chmod(0o755)
    result = certify(f"--implementation={program}", *CORPUS, f"--timeout={HANG_TIMEOUT}", "-k", "ASR-164")
    outcomes = result.parseoutcomes()
    assert outcomes["failed"] >= 8 and "passed" not in outcomes
    assert f"no exit within {HANG_TIMEOUT} s; process group killed" in result.stdout.str()
    assert _sleepers(duration) == 0


def test_a_flood_of_output_fails_the_case_without_exhausting_memory(certify: Certify) -> None:
    result = certify(f"--implementation={MISBEHAVING / 'floods-stdout'}", *CORPUS, "--timeout=20", "-k", "ASR-164")
    outcomes = result.parseoutcomes()
    assert outcomes["failed"] >= 8 and "passed" not in outcomes
    assert "stdout flooded past the read limit" in result.stdout.str()


def test_garbage_over_the_protocol_fails_each_case_and_restarts(certify: Certify) -> None:
    result = certify(f"--implementation={MISBEHAVING / 'speaks-garbage'}", *CORPUS, "--persistent", "-k", "ASR-164")
    outcomes = result.parseoutcomes()
    assert outcomes["failed"] >= 8 and "passed" not in outcomes
    text = result.stdout.str()
    assert "not JSON" in text and "OK, looks fine to me!" in text and "restarting for the next case" in text


def test_a_dead_persistent_process_is_restarted(certify: Certify) -> None:
    result = certify(f"--implementation={MISBEHAVING / 'dies-after-three'}", *CORPUS, "--persistent", "-k", "ASR-15 and valid- and not invalid-")
    outcomes = result.parseoutcomes()
    # After three answers the process exits: the fourth case fails, the next ones get a fresh process.
    assert outcomes["failed"] >= 2 and outcomes["passed"] >= 2 * 3
    assert "the process exited (status 0)" in result.stdout.str()


def test_a_silent_persistent_process_times_out(certify: Certify) -> None:
    result = certify(f"--implementation={MISBEHAVING / 'never-replies'}", *CORPUS, "--persistent",
                     f"--timeout={HANG_TIMEOUT}", "-k", "ASR-164")
    outcomes = result.parseoutcomes()
    assert outcomes["failed"] >= 8 and "passed" not in outcomes
    assert f"no reply within {HANG_TIMEOUT} s" in result.stdout.str()


#: Seeded-bug validators that speak both protocols are certified over the persistent one where what is tested is
#: the judging, not the transport (one process, not one per case); the one-shot transport is tested above and by
#: the crashing, hanging and flooding validators.
PERSISTENT = ("--persistent",)


def test_a_lenient_validator_is_caught_on_its_rule(certify: Certify) -> None:
    result = certify(f"--implementation={MISBEHAVING / 'lenient-exit-code'}", *CORPUS, *PERSISTENT, "-k",
                     "ASR-26 or ASR-164")
    failed = result.failed()
    expected = {c.id for c in CASES if c.verdict == "invalid" and "ASR-260" in c.rules and "exitCode" in c.description}
    assert expected and expected <= failed
    assert all("ASR-260" in case_id for case_id in failed)
    result.stdout.fnmatch_lines(["*rules with failing cases: ASR-260*"])


def test_an_over_strict_validator_is_caught_on_valid_cases(certify: Certify) -> None:
    result = certify(f"--implementation={MISBEHAVING / 'rejects-duplicate-call-ids'}", *CORPUS, *PERSISTENT, "-k",
                     "ASR-262 or ASR-265 or ASR-266")
    failed = result.failed()
    assert any(f.startswith("validator/ASR-262/valid-") for f in failed)
    assert all("/valid-" in f for f in failed)
    assert "rejected a valid stream naming ASR-262" in result.stdout.str()


def test_naming_wrong_rules_is_a_reject_for_the_wrong_reason_under_strict_reasons(certify: Certify) -> None:
    result = certify(f"--implementation={MISBEHAVING / 'names-wrong-rules'}", *CORPUS, "-k", "ASR-164 or ASR-260",
                     "--strict-reasons")
    text = result.stdout.str()
    assert "rejected for the wrong reason: named ASR-999; the stream breaks ASR-164" in text
    outcomes = result.parseoutcomes()
    assert outcomes["failed"] >= 5


def test_naming_wrong_rules_with_right_verdicts_conforms_and_the_reasons_figure_says_so(certify: Certify) -> None:
    """Conformance is the verdict: the rules named are a second figure beside it, in the header and the report."""
    result = certify(f"--implementation={MISBEHAVING / 'names-wrong-rules'}", *CORPUS, *PERSISTENT, "-k",
                     "ASR-164 or ASR-260")
    assert result.ret == 0, result.stdout.str()
    (verdict,) = result.report["verdicts"]
    assert verdict["verdict"] == "conforms"
    figure = verdict["reasons"]
    assert figure["rejections"] >= 5 and figure["naming_only_broken_rules"] == 0
    assert "name only such rules" in result.stdout.str()


def test_zero_executed_cases_is_never_a_pass(certify: Certify) -> None:
    result = certify(f"--implementation={EXAMPLES / 'reference.toml'}", *CORPUS, "-k", "no-such-case")
    assert result.ret != 0


def test_the_run_is_the_conformance_suite_only(certify: Certify, tmp_path: Path) -> None:
    (tmp_path / "test_mine.py").write_text("def test_vendor_own_test():\n    assert True is not None\n")
    result = certify(f"--implementation={EXAMPLES / 'reference.toml'}", *CORPUS, "-k", "ASR-164")
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
def test_bad_implementation_arguments_are_usage_errors(certify: Certify, tmp_path: Path, argument: str,
                                                      message: str) -> None:
    (tmp_path / "bad.toml").write_text('command = ["x"]\n')
    result = certify(f"--implementation={argument}", *CORPUS)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()


def test_each_rule_is_a_marker_and_a_keyword(certify: Certify) -> None:
    by_marker = certify(f"--implementation={EXAMPLES / 'reference.toml'}", "-m", "ASR-289", "--co", "-q")
    by_keyword = certify(f"--implementation={EXAMPLES / 'reference.toml'}", *CORPUS, "-k", "ASR-289", "--co", "-q")
    expected = {c.id for c in CASES if "ASR-289" in c.rules}
    for result in (by_marker, by_keyword):
        assert set(re.findall(r"test_validator_case\[(.+?)\]", result.stdout.str())) >= expected


def test_collection_is_identical_on_every_worker(certify: Certify) -> None:
    result = certify(f"--implementation={EXAMPLES / 'reference.toml'}", *CORPUS, "-n", "2", "-k", "ASR-25")
    assert result.ret == 0
    assert "Different tests were collected" not in result.stdout.str() + result.stderr.str()
