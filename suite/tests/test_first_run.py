"""A vendor's first run: the shrink budget, progress with -q and -n, the seed in the summary,
a report folder that stands alone (counterexamples inside it, replays from anywhere, badges and
rule cells only for what ran, the handshake's name, options as the manifest set them), and damaged
bytes scored only where a standard settles the verdict.  Each feature is run against an
implementation that should pass and one that should fail."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from certifying import PLUGIN_DEFAULT_REPORT_DIR, Certification, Certify, run_certification, shared_certification
from hypothesis import settings
from miniatures import accept_all, fuzz_failure, fuzz_session, reject_all

from asr_conformance.conformance import test_validator_fuzz as validator_fuzz
from asr_conformance.gate.results import Result
from asr_conformance.harness.adapters.answers import Outcome, Verdict
from asr_conformance.harness.fuzzing.profiles import ShrinkBudget, ValidatorFuzzSession, ensure_profiles
from asr_conformance.reports.document import rule_matrix
from asr_conformance.vocabulary.rules import load_catalog

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
MISBEHAVING = EXAMPLES / "misbehaving"
ACCEPT_ALL = MISBEHAVING / "accept-all"


def run(certify: Certify, *args: str) -> Certification:
    """A certification in the test's folder, its report where the plugin puts it by default (reports/out)."""
    return certify(*args, report_dir=PLUGIN_DEFAULT_REPORT_DIR)


def folder(path: Path) -> Path:
    path.mkdir()
    return path


def report_of(folder: Path) -> dict:
    return json.loads((folder / "report.json").read_text())


def result_of(report: dict, test: str) -> dict:
    return next(r for r in report["results"] if r["id"] == test)


# -- the shrink budget -------------------------------------------------------------------


def fixed() -> settings:
    """The fixed-example profile the project's certification runs use (``ASR_HYPOTHESIS_PROFILE``)."""
    ensure_profiles()
    return settings.get_profile("asr-fixed")


def test_a_spent_shrink_budget_reports_the_smallest_example_so_far(tmp_path: Path) -> None:
    """reject-all (in process) fails the adversarial property; three shrink steps are not enough to finish shrinking
    it.  The time budget is generous, so that the steps, not a busy machine's clock, end the shrinking.  That the
    figures recorded here reach the report, and the budget's options too, is read from a whole run below."""
    session, facts = fuzz_session(reject_all(), tmp_path, fixed(), ShrinkBudget(seconds=3600, steps=3))
    failure = fuzz_failure(validator_fuzz.test_accepts_adversarial_valid_streams, session)
    assert failure is not None
    assert "shrinking stopped at its budget (3 steps" in failure
    assert "this is the smallest failing example found so far" in failure
    assert facts["asr_shrink_stopped_by"] == "steps"
    assert facts["asr_shrink_steps"] == 3  # no call to the implementation past the budget
    assert re.search(r"counterexample \(shrunk\): \S+\.jsonl", failure)


def test_a_generous_budget_lets_shrinking_finish(accept_all_found: Certification) -> None:
    """Read from the session's failing accept-all run (conftest.py): 500 steps and an hour, ended by neither budget,
    however busy the machine; the budget is in the report's options, the shrinking in the failure's details."""
    result = accept_all_found
    assert result.ret == 1
    assert re.search(r"shrunk in \d+ step\(s\)", result.stdout.str())
    report = result.report
    assert report["options"]["shrink"] == {"seconds": 3600.0, "steps": 500}
    failed = result_of(report, "validator/test_rejects_mutated_streams[ASR-289]")
    assert failed["details"]["shrink_stopped_by"] == "finished"
    assert 0 < failed["details"]["shrink_steps"] < 500


@pytest.mark.e2e
def test_a_passing_property_records_no_shrinking(reference_whole_run: Certification) -> None:
    """Read from the session's one whole run of the reference (conftest.py)."""
    assert reference_whole_run.ret == 0, reference_whole_run.stdout.str()[-2000:]
    passed = result_of(reference_whole_run.report, "validator/test_rejects_mutated_streams[X-UTF8]")
    assert passed["outcome"] == "pass" and "shrink_steps" not in passed.get("details", {})


class _Always:
    """An adapter that gives one answer to everything and counts the questions."""

    def __init__(self, outcome: Outcome) -> None:
        self.outcome = outcome
        self.asked = 0

    def validate(self, stream: Path) -> Verdict:
        self.asked += 1
        return Verdict(self.outcome)


def _session(tmp_path: Path, adapter: _Always, budget: ShrinkBudget) -> ValidatorFuzzSession:
    from hypothesis import settings

    return ValidatorFuzzSession(adapter, tmp_path, tmp_path / "counterexamples", ["--implementation=/x"],
                       settings(max_examples=20, derandomize=True, database=None), None, {}, budget)


def test_past_the_budget_known_failures_fail_from_memory_and_nothing_is_asked(tmp_path: Path) -> None:
    from asr_conformance.generators.mutators import serialize

    adapter = _Always(Outcome.ACCEPT)
    session = _session(tmp_path, adapter, ShrinkBudget(seconds=60, steps=0))
    broken = b'{"type":"session","seq":0,"id":"h"\n'
    with pytest.raises(AssertionError, match="accepted"):
        session.expect_damaged(broken, "damaged", "a cut stream", kind="truncated")
    assert adapter.asked == 1
    with pytest.raises(AssertionError, match="accepted"):  # the same bytes again: from memory
        session.expect_damaged(broken, "damaged", "a cut stream", kind="truncated")
    other = serialize([{"type": "session", "seq": 0, "id": "h"}])[:20]
    session.expect_damaged(other, "damaged", "a cut stream", kind="truncated")  # unseen: passes, unasked
    assert adapter.asked == 1 and session.shrinking is not None and session.shrinking.stopped_by == "steps"


# -- damaged bytes: scored only where a standard settles the verdict ----------------------------


def test_damage_the_pages_leave_open_is_never_scored_even_on_the_header(tmp_path: Path) -> None:
    """Deep nesting in line 1 makes the reference name ASR-003 too; the verdict still rests on A-DEPTH."""
    from asr_conformance.reference.checks import validate_bytes

    header = b'{"_d":' + b"[" * 1100 + b"]" * 1100 + b',"type":"session","seq":0,"id":"h"}\n'
    assert "ASR-003" in validate_bytes(header).rules()
    adapter = _Always(Outcome.ACCEPT)
    _session(tmp_path, adapter, ShrinkBudget()).expect_damaged(header, "damaged", "deep nesting", kind="deep-nesting")
    assert adapter.asked == 1


def test_invalid_utf8_must_be_rejected_and_says_why(tmp_path: Path) -> None:
    adapter = _Always(Outcome.ACCEPT)
    with pytest.raises(AssertionError, match=r"RFC 8259 §8\.1"):
        _session(tmp_path, adapter, ShrinkBudget()).expect_damaged(
            b'{"type":"session","seq":0,"id":"h\xff"}\n', "damaged", "bad bytes", kind="invalid-utf8")
    rejecting = _Always(Outcome.REJECT)
    _session(tmp_path, rejecting, ShrinkBudget()).expect_damaged(
        b'{"type":"session","seq":0,"id":"h\xff"}\n', "damaged", "bad bytes", kind="invalid-utf8")


def test_accept_all_fails_only_the_damage_a_standard_settles(tmp_path: Path) -> None:
    """accept-all in process on every damaged-bytes property; one shrink step: the outcomes are read, not the
    examples' size."""
    from asr_conformance.generators.damage import DAMAGES, SETTLED_DAMAGE

    assert DAMAGES, "no damage kinds: the loop below would check nothing"
    for kind in DAMAGES:
        session, _ = fuzz_session(accept_all(), tmp_path / kind, fixed(), ShrinkBudget(steps=1))
        failure = fuzz_failure(validator_fuzz.test_survives_damaged_bytes, session, kind)
        assert (failure is not None) is (kind in SETTLED_DAMAGE), (kind, failure)


# -- the terminal: progress and the seed --------------------------------------------------------


def test_progress_lines_show_with_q_under_xdist(certify: Certify, tmp_path: Path) -> None:
    # One shrink step: the lines are read, not the failing example's size.
    result = run(certify, f"--implementation={ACCEPT_ALL}", "-q", "-n", "2", "--asr-progress=0.001",
                 "-k", "ASR-164", "--asr-shrink-steps=1")
    lines = [line for line in result.stdout.lines if line.startswith("asr-conformance progress")]
    assert lines, result.stdout.str()[-2000:]
    last = re.search(r"validator (\d+)/(\d+) done, (\d+) failing, phase: (\S+)", lines[-1])
    assert last and last.group(1) == last.group(2) and int(last.group(3)) > 0 and last.group(4) == "done"
    assert any(re.search(r"phase: .*(corpus|fuzz)", line) for line in lines)


@pytest.fixture(scope="module")
def quiet_fixed(tmp_path_factory: pytest.TempPathFactory) -> Certification:
    """accept-all on the corpus cases of ASR-164, quiet, progress switched off, under the fixed profile."""
    return shared_certification(tmp_path_factory, "first-run-quiet-fixed", f"--implementation={ACCEPT_ALL}", "-q",
                                "--asr-progress=0", "-m", "corpus", "-k", "ASR-164", "--hypothesis-profile=asr-fixed",
                                report_dir=PLUGIN_DEFAULT_REPORT_DIR)


def test_no_progress_lines_when_switched_off(quiet_fixed: Certification) -> None:
    assert "asr-conformance progress" not in quiet_fixed.stdout.str()


def test_the_seed_is_in_the_quiet_summary(certify: Certify, tmp_path: Path) -> None:
    """Any randomized profile prints its seed; asr-fast's 8 examples show it as well as asr-certify's 60
    (test_fuzz_harness.py runs asr-certify)."""
    result = run(certify, f"--implementation={EXAMPLES / 'reference.toml'}", "-q", "-m", "fuzz", "-k", "ASR-162",
                 "--hypothesis-profile=asr-fast")
    found = re.search(r"^hypothesis: profile asr-fast, seed (\d+) \(replay with --hypothesis-seed=\1\)$",
                      result.stdout.str(), re.MULTILINE)
    assert found and result.ret == 0
    assert report_of(tmp_path / "reports" / "out")["hypothesis"]["seed"] == int(found.group(1))


def test_a_derandomized_run_says_it_has_no_seed(quiet_fixed: Certification) -> None:
    result = quiet_fixed
    assert "hypothesis: profile asr-fixed" in result.stdout.str()
    # (the run's folder is named after the run, so lines naming it are left out)
    shown = "\n".join(line for line in result.stdout.lines if str(result.folder) not in line)
    assert "seed" not in shown


# -- a report folder that stands alone ------------------------------------------------------


def test_counterexamples_go_under_the_report_folder_and_replay_from_anywhere(accept_all_found: Certification,
                                                                             tmp_path: Path) -> None:
    """Read from the session's failing accept-all run (conftest.py), whose report folder is ``my reports``; the
    replay command it prints is run from another folder. (That ``--counterexamples`` moves them is
    test_fuzz_harness.py's.)"""
    result = accept_all_found
    reports = result.report_dir
    assert reports is not None and reports.name == "my reports"
    match = re.search(r"counterexample \(shrunk\): (.+\.jsonl)\nreplay: (.+)", result.stdout.str())
    assert match, result.stdout.str()[-3000:]
    stream = Path(match.group(1))
    assert stream.is_absolute() and reports / "counterexamples" in stream.parents
    assert not (result.folder / "reports").exists()
    listed = report_of(reports)["counterexamples"]
    assert [(c["path"], c["replay"]) for c in listed] == [(match.group(1), match.group(2).strip())]
    elsewhere = folder(tmp_path / "elsewhere")
    words = shlex.split(match.group(2))
    assert words[0] == "pytest"
    done = run_certification(*words[1:], cwd=elsewhere, timeout=300)
    assert done.ret == 1, done.stdout.str()[-2000:]
    done.assert_outcomes(failed=1)
    assert "accepted an invalid stream; it breaks ASR-289" in done.stdout.str()
    assert not list(elsewhere.rglob("report.json")), "a replay writes no report"


def test_stale_badges_of_roles_that_did_not_run_are_removed(certify: Certify, tmp_path: Path) -> None:
    out = folder(tmp_path / "out")
    for role in ("producer", "reader", "validator"):
        (out / f"badge-{role}.json").write_text('{"message": "100%"}')
    result = run(certify, f"--implementation={ACCEPT_ALL}", "--report-dir=out", "-m", "corpus", "-k", "ASR-164",
                 "--hypothesis-profile=asr-fast")  # badges come from randomized runs only
    assert result.ret == 1
    assert sorted(p.name for p in out.glob("badge-*.json")) == ["badge-validator.json"]
    assert json.loads((out / "badge-validator.json").read_text())["color"] == "red"


def _result(rule: str, role: str, outcome: str = "pass") -> Result:
    return Result(id=f"{role}/x", implementation="impl", role=role, kind="corpus", test="t", rules=[rule],
                  outcome=outcome)


def test_a_reader_rule_is_not_run_in_a_validator_run() -> None:
    catalog = load_catalog()
    assert catalog["ASR-269"].binds == ("reader",)
    cells = {row["id"]: row["cells"]["impl"] for row in rule_matrix(
        catalog, ["impl"], [_result("ASR-269", "validator"), _result("ASR-164", "validator", "fail")])}
    assert cells["ASR-269"]["status"] == "not-run" and cells["ASR-269"]["results"] == []
    assert cells["ASR-164"]["status"] == "fail"
    read = {row["id"]: row["cells"]["impl"] for row in rule_matrix(catalog, ["impl"], [_result("ASR-269", "reader")])}
    assert read["ASR-269"]["status"] == "pass"


@pytest.fixture(scope="module")
def oneshot_manifest(tmp_path_factory: pytest.TempPathFactory) -> Certification:
    """The one-shot reference's manifest (a validator) asked for a reader rule's cases: none of them runs."""
    return shared_certification(tmp_path_factory, "first-run-oneshot-manifest",
                                f"--implementation={EXAMPLES / 'reference-oneshot.toml'}", "-m", "corpus", "-k",
                                "ASR-269", report_dir=PLUGIN_DEFAULT_REPORT_DIR)


def test_the_html_page_says_not_run(oneshot_manifest: Certification) -> None:
    out = oneshot_manifest.folder / "reports" / "out"
    report = report_of(out)
    row = next(r for r in report["rules"] if r["id"] == "ASR-269")
    assert next(iter(row["cells"].values()))["status"] == "not-run"
    assert "not run" in (out / "report.html").read_text()


def test_without_a_manifest_the_handshake_names_the_implementation(certify: Certify, tmp_path: Path) -> None:
    result = run(certify, f"--implementation={EXAMPLES / 'reference-validator-persistent'}", "--persistent",
                 "-m", "corpus", "-k", "ASR-164")
    assert result.ret == 0, result.stdout.str()[-2000:]
    from asr_conformance import __version__

    report = report_of(tmp_path / "reports" / "out")
    described = report["implementations"][0]
    assert (described["name"], described["version"]) == ("asr-conformance-reference", __version__)
    assert report["options"]["persistent"] is True


def test_a_manifest_keeps_its_name_and_sets_the_protocol_option(certify: Certify, tmp_path: Path,
                                                               oneshot_manifest: Certification) -> None:
    result = run(certify, f"--implementation={EXAMPLES / 'reference.toml'}", "--role=validator",
                 "-m", "corpus", "-k", "ASR-164")
    assert result.ret == 0, result.stdout.str()[-2000:]
    report = report_of(tmp_path / "reports" / "out")
    assert report["options"]["persistent"] is True
    assert report["implementations"][0]["name"] == "asr-conformance-reference"
    # A one-shot manifest's run (the selection is no matter: the manifest sets the protocol)
    assert report_of(oneshot_manifest.folder / "reports" / "out")["options"]["persistent"] is False
