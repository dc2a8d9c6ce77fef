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
from certifying import Certification, Certify, shared_certification
from corpus_cases import corpus_cases
from validator_runs import (
    SIDE_BY_SIDE_SLICE,
    column_failed,
    column_results,
    place,
    seeded_validators,
    side_by_side,
)

from asr_conformance.gate.results import FAILING
from asr_conformance.harness.adapters.targets import TargetError, resolve_targets
from asr_conformance.reference.checks import validate_bytes
from asr_conformance.vocabulary.cases import Case

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
MISBEHAVING = EXAMPLES / "misbehaving"
CASES = corpus_cases("validator")
COUNT = Counter(case.verdict for case in CASES)
VALID, INVALID, DEFINED = COUNT["valid"], COUNT["invalid"], COUNT["implementation-defined"]


#: The corpus part of the conformance suite (the fuzz part has its own tests in test_fuzz_harness.py).
CORPUS = ("-m", "corpus")
#: A slice of the corpus for tests of one mechanism: the content-level and exitCode cases, valid and invalid.
SLICE = SIDE_BY_SIDE_SLICE
#: The cases SLICE selects: those of the two rule folders and those marked with either rule.
SLICE_CASES = [case for case in CASES if {"ASR-164", "ASR-260"} & {case.id.split("/")[1], *case.rules}]


@pytest.mark.e2e
def test_reference_through_the_persistent_protocol_passes_everything(certify: Certify) -> None:
    result = certify(f"--implementation={EXAMPLES / 'reference.toml'}", *CORPUS, "--check-protocol")
    result.assert_outcomes(passed=VALID + INVALID, skipped=DEFINED)
    result.stdout.fnmatch_lines(["*verdict: CONFORMS*"])
    assert result.ret == 0


def _shape(case: Case) -> tuple[object, ...]:
    """What the one-shot transport carries for a case, as the reference answers it: the case's verdict, the exit
    status, whether a warning is printed, how many rules the errors name (none, one, more), whether a format rule
    (X-) is among them, whether the stream is UTF-8, whether it is empty."""
    data = case.stream.read_bytes()
    answer = validate_bytes(data)
    named = {d.rule for d in answer.errors}
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        utf8 = False
    else:
        utf8 = True
    return (case.verdict, answer.valid, bool(answer.warnings), min(len(named), 2),
            any(rule.startswith("X-") for rule in named), utf8, not data)


def _a_case_of_each_shape() -> list[Case]:
    """The first case of each answer shape (_shape), and the largest stream of the corpus."""
    chosen: dict[tuple[object, ...], Case] = {}
    for case in CASES:
        chosen.setdefault(_shape(case), case)
    return sorted({*chosen.values(), max(CASES, key=lambda c: c.stream.stat().st_size)}, key=lambda c: c.id)


#: A test of the vendor's own beside the suite: a certification run never collects it.
VENDOR_TEST = "def test_vendor_own_test():\n    assert True is not None\n"
#: The bundled reference as a one-shot executable and as a manifest with a {stream} placeholder and exit codes.
ONE_SHOT = "reference-validator"
MANIFEST = "asr-conformance-reference-one-shot-"  # the manifest's name as a key


@pytest.fixture(scope="module")
def one_shot_references(tmp_path_factory: pytest.TempPathFactory) -> tuple[Certification, list[Case]]:
    """The one-shot reference as an executable and as a manifest side by side, one process per case, over a case
    of each answer shape and the exitCode cases, in a folder holding a test of the vendor's own; and the cases selected."""
    names = [case.id for case in _a_case_of_each_shape()]
    selection = " or ".join([*names, "ASR-260"])
    selected = [case for case in CASES if any(name in case.id for name in names)  # -k matches substrings
                or "ASR-260" in {case.id.split("/")[1], *case.rules}]
    place(tmp_path_factory, "one-shot-references", "test_mine.py", VENDOR_TEST)
    run = shared_certification(tmp_path_factory, "one-shot-references", f"--implementation={EXAMPLES / ONE_SHOT}",
                               f"--implementation={EXAMPLES / 'reference-oneshot.toml'}", *CORPUS, "-k", selection)
    return run, selected


def test_reference_through_one_shot_processes_passes_a_case_of_each_answer_shape(
        one_shot_references: tuple[Certification, list[Case]]) -> None:
    """The persistent reference passes the whole corpus (above), and every case's judging is proved in process;
    one-shot, one process per case, it passes a case of each answer shape: each verdict of a case, exit 0 and 1,
    no diagnostic, warnings, one rule and several named, format rules, a stream that is not UTF-8, an empty one and
    the largest.  What the transport carries (the staged stream, the exit status, the diagnostic lines) takes no
    other shape, so a case of every rule (a third of the corpus, a process each) would prove it no better."""
    result, selected = one_shot_references
    shapes = {_shape(case) for case in CASES}
    assert {_shape(case) for case in selected} == shapes
    assert {verdict for verdict, *_ in shapes} == {"valid", "invalid", "implementation-defined"}
    count = Counter(case.verdict for case in selected)
    # Both columns judge the same cases: each passes every scored one and reports the others.
    result.assert_outcomes(passed=2 * (count["valid"] + count["invalid"]), skipped=2 * count["implementation-defined"])
    for name in (ONE_SHOT, MANIFEST):
        assert Counter(r["outcome"] for r in column_results(result, name)) == {
            "pass": count["valid"] + count["invalid"], "not-scored": count["implementation-defined"]}
    assert result.ret == 0


def test_manifest_with_placeholder_and_exit_codes(one_shot_references: tuple[Certification, list[Case]]) -> None:
    result, _ = one_shot_references
    outcomes = Counter(r["outcome"] for r in column_results(result, MANIFEST))
    assert outcomes["pass"] > 10 and "fail" not in outcomes
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


@pytest.fixture(scope="module")
def beside_the_reference(tmp_path_factory: pytest.TempPathFactory) -> Certification:
    """accept-all and reject-all beside the reference on SLICE (validator_runs.py; test_reports.py reads it too)."""
    return side_by_side(tmp_path_factory)


def _column_outcomes(result: Certification, name: str) -> Counter[str]:
    return Counter(r["outcome"] for r in column_results(result, name))


def _failing(outcomes: Counter[str]) -> int:
    """How many results failed, whatever the kind of failure (a wrong verdict, a crash, a timeout)."""
    return sum(count for outcome, count in outcomes.items() if outcome in FAILING)


def _column_messages(result: Certification, name: str) -> str:
    return "\n".join(f"{r.get('message', '')}\n{r.get('output', '')}" for r in column_results(result, name))


def test_accept_all_run_fails_the_invalid_cases_of_a_slice(beside_the_reference: Certification) -> None:
    """The program, certified on SLICE: the same judging reaches the run's outcomes, summary and verdict."""
    result = beside_the_reference
    count = Counter(case.verdict for case in SLICE_CASES)
    assert count["valid"] and count["invalid"]
    assert _column_outcomes(result, "accept-all") == Counter(
        {"pass": count["valid"], "fail": count["invalid"], "not-scored": count["implementation-defined"]})
    assert result.ret == 1
    assert column_failed(result, "accept-all") == {c.id for c in SLICE_CASES if c.verdict == "invalid"}
    text = _column_messages(result, "accept-all")
    assert "case validator/ASR-260/" in text and "accepted an invalid stream; it breaks ASR-260" in text
    result.stdout.fnmatch_lines(["*accept-all validator: DOES NOT CONFORM*", "*verdict: DOES NOT CONFORM*"])


def test_reject_all_fails_once_per_valid_case() -> None:
    """The whole corpus, judged in process: reject-all fails exactly the valid cases."""
    judged = miniatures.judge_cases(CASES, miniatures.reject_all())
    assert Counter(status for status, _ in judged.values()) == {"passed": INVALID, "failed": VALID, "skipped": DEFINED}
    assert {case_id for case_id, (status, _) in judged.items() if status == "failed"} == \
        {c.id for c in CASES if c.verdict == "valid"}
    assert any("rejected a valid stream" in message for _, message in judged.values())


def test_reject_all_run_fails_the_valid_cases_of_a_slice(beside_the_reference: Certification) -> None:
    result = beside_the_reference
    count = Counter(case.verdict for case in SLICE_CASES)
    assert _column_outcomes(result, "reject-all") == Counter(
        {"pass": count["invalid"], "fail": count["valid"], "not-scored": count["implementation-defined"]})
    assert column_failed(result, "reject-all") == {c.id for c in SLICE_CASES if c.verdict == "valid"}
    assert "rejected a valid stream" in _column_messages(result, "reject-all")


CRASHING = {"crashes": "killed by signal 11 is not a verdict", "exits-2": "exit status 2 is not a verdict"}


@pytest.fixture(scope="module")
def crashing_validators(tmp_path_factory: pytest.TempPathFactory) -> Certification:
    """Both crashing validators side by side on SLICE: one run, a column each."""
    return shared_certification(tmp_path_factory, "crashing-validators",
                                *(f"--implementation={MISBEHAVING / name}" for name in sorted(CRASHING)), *SLICE)


@pytest.mark.parametrize(("name", "expected"), sorted(CRASHING.items()))
def test_crashes_fail_every_case_and_the_run_goes_on(crashing_validators: Certification, name: str,
                                                     expected: str) -> None:
    """A slice is enough: the mechanism (a crash is no verdict, the next case still runs) is the same for every case."""
    result = crashing_validators
    result.assert_outcomes(failed=len(CRASHING) * len(SLICE_CASES))
    assert _column_outcomes(result, name) == {"crash": len(SLICE_CASES)}  # no verdict: a crash, never a pass
    assert column_failed(result, name) == {case.id for case in SLICE_CASES}
    text = _column_messages(result, name)
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


#: Persistent validators that fail in the protocol: speaks-garbage (not JSON) on ASR-164, dies-after-three on the
#: valid cases of the ASR-15x rules; side by side, each column over both selections.
BROKEN_PROTOCOL = ("-k", "ASR-164 or (ASR-15 and valid- and not invalid-)")


@pytest.fixture(scope="module")
def broken_protocol(tmp_path_factory: pytest.TempPathFactory) -> Certification:
    return shared_certification(tmp_path_factory, "broken-protocol",
                                f"--implementation={MISBEHAVING / 'speaks-garbage'}",
                                f"--implementation={MISBEHAVING / 'dies-after-three'}", *CORPUS, "--persistent",
                                *BROKEN_PROTOCOL)


def test_garbage_over_the_protocol_fails_each_case_and_restarts(broken_protocol: Certification) -> None:
    outcomes = _column_outcomes(broken_protocol, "speaks-garbage")
    assert _failing(outcomes) >= 8 and "pass" not in outcomes
    text = _column_messages(broken_protocol, "speaks-garbage")
    assert "not JSON" in text and "OK, looks fine to me!" in text and "restarting for the next case" in text


def test_a_dead_persistent_process_is_restarted(broken_protocol: Certification) -> None:
    outcomes = _column_outcomes(broken_protocol, "dies-after-three")
    # After three answers the process exits: the fourth case fails, the next ones get a fresh process.
    assert _failing(outcomes) >= 2 and outcomes["pass"] >= 2 * 3
    assert "the process exited (status 0)" in _column_messages(broken_protocol, "dies-after-three")


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


def test_a_lenient_validator_is_caught_on_its_rule(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Read from the seeded-bug validators' shared run (validator_runs.py; test_scoring_policy.py reads it too)."""
    seeded = seeded_validators(tmp_path_factory, "lenient-exit-code")
    failed = column_failed(seeded, "lenient-exit-code")
    expected = {c.id for c in CASES if c.verdict == "invalid" and "ASR-260" in c.rules and "exitCode" in c.description}
    assert expected and expected <= failed
    assert all("ASR-260" in case_id for case_id in failed)
    block = re.search(r"^implementation: lenient-exit-code .*\n  validator: .*\n  rules with failing cases: (.*)$",
                      seeded.stdout.str(), re.MULTILINE)
    assert block and block.group(1).startswith("ASR-260"), seeded.stdout.str()[-3000:]


def test_an_over_strict_validator_is_caught_on_valid_cases(tmp_path_factory: pytest.TempPathFactory) -> None:
    seeded = seeded_validators(tmp_path_factory, "rejects-duplicate-call-ids")
    failed = column_failed(seeded, "rejects-duplicate-call-ids")
    assert any(f.startswith("validator/ASR-262/valid-") for f in failed)
    assert all("/valid-" in f for f in failed)
    assert "rejected a valid stream naming ASR-262" in _column_messages(seeded, "rejects-duplicate-call-ids")


def test_naming_wrong_rules_is_a_reject_for_the_wrong_reason_under_strict_reasons(certify: Certify) -> None:
    """Over the persistent protocol (it speaks both): the option and the reasons are under test, not the transport."""
    result = certify(f"--implementation={MISBEHAVING / 'names-wrong-rules'}", *CORPUS, *PERSISTENT, "-k",
                     "ASR-164 or ASR-260", "--strict-reasons")
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


def test_the_run_is_the_conformance_suite_only(one_shot_references: tuple[Certification, list[Case]]) -> None:
    """The run's folder holds a test file of the vendor's own (VENDOR_TEST): it is never collected, and the run's
    counts are the corpus cases' alone."""
    result, selected = one_shot_references
    assert (result.folder / "test_mine.py").read_text() == VENDOR_TEST
    assert "test_vendor_own_test" not in result.stdout.str()
    assert sum(result.parseoutcomes().get(kind, 0) for kind in ("passed", "failed", "skipped", "error")) == \
        2 * len(selected)


def test_a_bad_implementation_argument_is_a_usage_error(certify: Certify, tmp_path: Path) -> None:
    """The run's end of every bad --implementation (below): a usage error, its message on stderr."""
    (tmp_path / "bad.toml").write_text('command = ["x"]\n')
    result = certify("--implementation=bad.toml", *CORPUS)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "bad.toml: (top level): 'name' is a required property" in result.stderr.str()


@pytest.mark.parametrize(
    ("argument", "message"),
    [
        ("no/such/validator", "no such file"),
        (str(ROOT / "README.md"), "not an executable file"),
        ("bad.toml", "bad.toml: (top level): 'name' is a required property"),
    ],
)
def test_bad_implementation_arguments_are_usage_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      argument: str, message: str) -> None:
    """What the run makes of each argument, in process (``resolve_targets``, which the run's configuration calls):
    an error that names it, which the run above turns into a usage error."""
    (tmp_path / "bad.toml").write_text('command = ["x"]\n')
    monkeypatch.chdir(tmp_path)
    with pytest.raises(TargetError) as raised:
        resolve_targets([argument], None, [], False, None, None)
    assert message in str(raised.value)


def test_each_rule_is_a_marker_and_a_keyword(certify: Certify) -> None:
    """One collection selecting by the rule as a marker and as a keyword at once: a case is collected only if
    both match it, so every case of the rule collected proves each."""
    both = certify(f"--implementation={EXAMPLES / 'reference.toml'}", "-m", "ASR-289", "-k", "ASR-289", "--co", "-q")
    expected = {c.id for c in CASES if "ASR-289" in c.rules}
    assert expected
    assert set(re.findall(r"test_validator_case\[(.+?)\]", both.stdout.str())) >= expected


@pytest.mark.e2e
def test_collection_is_identical_on_every_worker(reference_whole_run: Certification) -> None:
    """The session's whole run of the reference on two workers (conftest.py): every role, every generated
    parameter, collected the same on each (test_reports.py compares its merged report)."""
    result = reference_whole_run
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert "Different tests were collected" not in result.stdout.str() + result.stderr.str()
