"""Reports and the regression gate, against the reference and seeded-bug validators: the report matches its
schema and merges xdist workers; expectations excuse listed failures, fail on unlisted and stale ones; a
baseline catches regressions and lists fixes; side-by-side runs get one column per implementation.

Whole runs prove the wiring: a report file and its summary, page and badge; the exit status and verdict line
of a run with an expectations file (named by a manifest) and of one with a baseline; xdist merging; usage
errors.  The variants of the gate (unlisted, rule and stale entries, an entry whose cases did not run, a
baseline the run still fails or has fixed, zero executed cases) are decided in process by the gate's own
functions (``gate.decision``) over the results of those runs, as the plugin hands them over."""

from __future__ import annotations

import dataclasses
import fnmatch
import json
from pathlib import Path
from typing import Any

import pytest
from certifying import Certification, Certify, shared_certification
from validator_runs import REFERENCE, XDIST_SLICE, place, side_by_side

from asr_conformance import CORPUS_DIR, __version__
from asr_conformance.gate.baseline import BaselineError, load_baseline
from asr_conformance.gate.decision import EXIT_OK, EXIT_TESTS_FAILED, GateSettings, decide, excuse, exit_status
from asr_conformance.gate.expectations import Expectation
from asr_conformance.gate.results import FAILING, Result
from asr_conformance.gate.verdict import Completeness, run_verdict, verdicts
from asr_conformance.reports.document import RunFacts, build_report
from asr_conformance.reports.terminal import render_terminal
from asr_conformance.vocabulary.cases import iter_cases
from asr_conformance.vocabulary.errors import UserError
from asr_conformance.vocabulary.rules import load_catalog
from asr_conformance.vocabulary.schemas import check_report

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
ACCEPT_ALL = EXAMPLES / "misbehaving" / "accept-all"
#: A small, fixed slice of the corpus: the exitCode range cases (valid and invalid).
SLICE = ("-m", "corpus", "-k", "ASR-260")
#: The seeded-bug validator's run: SLICE and the content-level cases, randomized (a randomized run earns badges).
ACCEPT_ALL_RUN = ("-m", "corpus", "-k", "ASR-260 or ASR-164", "--hypothesis-profile=asr-fast")


def report_of(folder: Path, name: str = "out") -> dict:
    data = json.loads((folder / name / "report.json").read_text())
    assert check_report(data) is None
    return data


@pytest.fixture(scope="module")
def reference_slice(tmp_path_factory: pytest.TempPathFactory) -> Certification:
    """The reference on XDIST_SLICE in one process, once for the tests that read its report (a baseline, the
    results a stale entry is judged on, one side of a merge)."""
    return shared_certification(tmp_path_factory, "reports-reference-slice", f"--implementation={REFERENCE}",
                                *XDIST_SLICE)


@pytest.fixture(scope="module")
def accept_all_run(tmp_path_factory: pytest.TempPathFactory) -> Certification:
    """accept-all on ACCEPT_ALL_RUN, writing its expectations, once for the tests that read its report or that file."""
    return shared_certification(tmp_path_factory, "reports-accept-all", f"--implementation={ACCEPT_ALL}",
                                *ACCEPT_ALL_RUN, "--write-expectations=known.toml")


@pytest.fixture(scope="module")
def known_failures_run(tmp_path_factory: pytest.TempPathFactory, accept_all_run: Certification) -> Certification:
    """accept-all on SLICE through a manifest that names the expectations accept_all_run wrote: every failure
    listed (the written entries of ASR-164's cases, which do not run on SLICE, are not stale).  The manifest
    sits in the run's own folder, named relatively, so every xdist worker asks for the same run."""
    place(tmp_path_factory, "reports-known-failures", "accept-all.toml",
          f'name = "accept-all"\ncommand = ["{ACCEPT_ALL}"]\nexpectations = "{accept_all_run.folder / "known.toml"}"\n')
    return shared_certification(tmp_path_factory, "reports-known-failures", "--implementation=accept-all.toml",
                                *SLICE)


def invalid_ids(report: dict) -> set[str]:
    return {r["id"] for r in report["results"] if r["outcome"] in ("fail", "expected-fail")}


# --- the gate in process, as the plugin hands it a run's results ---------------------------------------------


@dataclasses.dataclass(frozen=True)
class Implementation:
    """What the gate needs of an implementation (``decision.GateTarget``)."""

    key: str
    expectations: Path | None = None


_RESULT_FIELDS = {f.name for f in dataclasses.fields(Result)} - {"counterexample"}


def results_of(run: Certification, only_slice: bool = False) -> list[Result]:
    """A run's results as the plugin held them (from its report); ``only_slice``: those SLICE selects (the
    ASR-260 folder and the cases marked with ASR-260)."""
    found = [Result(**{k: v for k, v in r.items() if k in _RESULT_FIELDS}) for r in run.report["results"]]
    return [r for r in found if not only_slice or r.id.startswith("validator/ASR-260/") or "ASR-260" in r.rules]


def gated(settings: GateSettings[Any], results: list[Result]) -> list[Result]:
    """The results of a run under ``settings``: a failure that an entry or the baseline excuses (asked where the
    test ran, ``decision.excuse``) is an expected failure carrying the excuse."""
    found = []
    for result in results:
        reason = excuse(settings, result.id, result.rules, result.implementation) if result.outcome in FAILING else None
        found.append(dataclasses.replace(result, outcome="expected-fail", excused_by=reason) if reason else result)
    return found


def gate_run(settings: GateSettings[Any], results: list[Result]) -> tuple[int, dict, list[str]]:
    """What the plugin does at the end of a run over ``results`` (session.pytest_sessionfinish): the gate's
    decision, the exit status, the report and its terminal summary."""
    decision = decide(settings, results)
    described = [{"key": t.key, "name": t.key, "version": None, "roles": ["validator"], "protocol": "oneshot",
                  "command": [t.key], "expectations": str(t.expectations) if t.expectations else None}
                 for t in settings.targets]
    found = verdicts(described, results)
    tests_failed = EXIT_TESTS_FAILED if any(r.outcome in FAILING for r in results) else EXIT_OK
    status = exit_status(tests_failed, decision.reasons, Completeness(),
                         run_verdict(found, decision.reasons, Completeness(), True))
    comparison, baseline = decision.comparison, settings.baseline
    facts = RunFacts(
        suite_version=__version__, corpus=CORPUS_DIR, started="2026-01-01T00:00:00+00:00", duration=1.0,
        implementations=described, options={"partial": True, "partial_reasons": ["-k 'ASR-260'"]},
        hypothesis={"profile": "asr-fixed", "seed": None}, catalog=load_catalog(),
        expectations={"files": sorted({str(t.expectations) for t in settings.targets if t.expectations}),
                      "stale": [{"entry": e.label, "reason": e.reason, "file": f} for f, e in decision.stale]},
        baseline=None if comparison is None or baseline is None else {
            "file": str(baseline.path), "regressions": [r.id for r in comparison.regressions],
            "fixed": [r.id for r in comparison.fixed], "new_failures": [r.id for r in comparison.new_failures]},
        exit={"status": status, "reasons": decision.reasons}, completeness=Completeness(exit_status=status),
        verdicts=found,
    )
    report = build_report(facts, results)
    assert check_report(report) is None
    return status, report, render_terminal(report)


def matches(lines: list[str], pattern: str) -> bool:
    return any(fnmatch.fnmatch(line, pattern) for line in lines)


# --- reports ------------------------------------------------------------------------------------------------


def test_report_of_a_seeded_bug_validator_shows_failing_rules_first(accept_all_run: Certification) -> None:
    result = accept_all_run
    assert result.ret == 1
    report = result.report
    statuses = [row["cells"]["accept-all"]["status"] for row in report["rules"]]
    first_pass = statuses.index("pass") if "pass" in statuses else len(statuses)
    assert "fail" not in statuses[first_pass:]  # failures first
    failing = {r["id"] for r in report["results"] if r["outcome"] == "fail"}
    assert failing == {c.id for c in iter_cases(CORPUS_DIR, role="validator") if c.verdict == "invalid"
                       and (c.id.startswith(("validator/ASR-164/", "validator/ASR-260/")) or
                            {"ASR-164", "ASR-260"} & set(c.rules))}
    assert {"ASR-164", "ASR-260"} <= {row["id"] for row in report["rules"]
                                      if row["cells"]["accept-all"]["status"] == "fail"}
    failure = next(r for r in report["results"] if r["outcome"] == "fail")
    assert failure["input"].startswith('{"type":') or failure["input"].startswith("{")
    assert "outcome: accept" in failure["output"]
    assert failure["expected"].startswith("reject")
    verdict = report["verdicts"][0]
    assert verdict["verdict"] == "does-not-conform" and verdict["role"] == "validator"
    assert 0 < verdict["pass_percent"] < 100
    out = result.report_dir
    assert out is not None
    badge = json.loads((out / "badge-validator.json").read_text())
    assert badge["schemaVersion"] == 1 and badge["color"] == "red" and "%" in badge["message"]
    markdown = (out / "summary.md").read_text()
    assert "does not conform" in markdown and "| ASR-" in markdown
    assert "Partial run" in markdown and report["options"]["partial"] is True
    result.stdout.fnmatch_lines(["*verdict: DOES NOT CONFORM (partial run: -m 'corpus', -k 'ASR-260 or ASR-164'*"])
    html = (out / "report.html").read_text()
    # sections with failures first (exec before input_request, which has none), failing rows unfolded
    assert html.index('id="rule-ASR-260"') < html.index('id="rule-ASR-285"')
    assert html.index('id="rule-ASR-260"') < html.index("<details><summary>", html.index("tool-records › exec"))


@pytest.mark.e2e
def test_report_merges_every_xdist_worker(reference_slice: Certification, reference_whole_run: Certification) -> None:
    """The session's whole run of the reference on two workers (conftest.py) holds, in its one report, each
    result of the same slice run in one process, with the same outcome, each once and none missing."""
    merged = reference_whole_run
    assert reference_slice.ret == merged.ret == 0, merged.stdout.str()[-3000:]
    one, two = reference_slice.report, merged.report
    outcomes = {r["id"]: r["outcome"] for r in two["results"]}
    assert len(one["results"]) > 5 and len(outcomes) == len(two["results"])
    assert {r["id"]: r["outcome"] for r in one["results"]} == {r["id"]: outcomes.get(r["id"]) for r in one["results"]}
    assert two["completeness"]["missing"] == [] and two["options"]["workers"] == 2
    assert two["implementations"][0]["announced"].startswith("asr-conformance-reference")


# --- expectations -------------------------------------------------------------------------------------------


def test_listed_failures_pass_the_run_and_unlisted_ones_fail_it(accept_all_run: Certification,
                                                               known_failures_run: Certification) -> None:
    failing = sorted(invalid_ids(accept_all_run.report) & {r.id for r in results_of(accept_all_run, True)})
    assert accept_all_run.ret == 1 and len(failing) >= 2
    # Every failure listed: the run passes the gate, each failure an expected one.
    assert known_failures_run.ret == 0, known_failures_run.stdout.str()
    known_failures_run.stdout.fnmatch_lines(["*verdict: CONFORMS EXCEPT KNOWN FAILURES*"])
    report = known_failures_run.report
    assert {r["id"] for r in report["results"] if r["outcome"] == "expected-fail"} == set(failing)
    assert all("known failure" in r["excused_by"] for r in report["results"] if r["outcome"] == "expected-fail")
    # The first failure not listed: it fails the run, alone.
    listed = tuple(Expectation(i, "accepts everything", case=case) for i, case in enumerate(failing[1:]))
    settings = GateSettings([Implementation("accept-all", Path("expected.toml"))], {"accept-all": listed})
    results = gated(settings, results_of(accept_all_run, True))
    assert [r.id for r in results if r.outcome in FAILING] == [failing[0]]
    status, _, lines = gate_run(settings, results)
    assert status == EXIT_TESTS_FAILED and matches(lines, "verdict: DOES NOT CONFORM*")
    # The same run with every failure listed, in process too: what the whole run above says.
    every = listed + (Expectation(len(listed), "too", case=failing[0]),)
    settings = GateSettings([Implementation("accept-all", Path("expected.toml"))], {"accept-all": every})
    status, report, lines = gate_run(settings, gated(settings, results_of(accept_all_run, True)))
    assert status == EXIT_OK and matches(lines, "verdict: CONFORMS EXCEPT KNOWN FAILURES*")
    assert {r["id"] for r in report["results"] if r["outcome"] == "expected-fail"} == set(failing)


def test_a_rule_entry_excuses_every_case_of_the_rule(accept_all_run: Certification) -> None:
    rule = Expectation(0, "no range check", rule="ASR-260", issue="https://example.org/issues/1")
    settings = GateSettings([Implementation("accept-all", Path("expected.toml"))], {"accept-all": (rule,)})
    results = gated(settings, results_of(accept_all_run, True))
    assert any(r.outcome == "expected-fail" for r in results)
    status, report, _ = gate_run(settings, results)
    assert status == EXIT_OK
    assert "https://example.org/issues/1" in json.dumps(report)


def test_a_stale_expectation_fails_the_run(reference_slice: Certification) -> None:
    stale = Expectation(0, "used to fail", rule="ASR-260")
    settings = GateSettings([Implementation("asr-conformance-reference", Path("expected.toml"))],
                            {"asr-conformance-reference": (stale,)})
    status, report, lines = gate_run(settings, gated(settings, results_of(reference_slice)))
    assert status == EXIT_TESTS_FAILED
    assert matches(lines, "*stale expectation: rule ASR-260 now passes*")
    assert matches(lines, "*verdict: DOES NOT PASS THE GATE*")
    assert report["expectations"]["stale"][0]["entry"] == "rule ASR-260"


def test_an_entry_whose_cases_did_not_run_is_not_stale(reference_slice: Certification, accept_all_run: Certification,
                                                      known_failures_run: Certification) -> None:
    other = Expectation(0, "not in this slice", rule="ASR-164")
    settings = GateSettings([Implementation("asr-conformance-reference", Path("expected.toml"))],
                            {"asr-conformance-reference": (other,)})
    results = results_of(reference_slice, True)
    assert results and not any("ASR-164" in r.rules for r in results)
    status, report, _ = gate_run(settings, gated(settings, results))
    assert status == EXIT_OK and report["expectations"]["stale"] == []
    # In the whole run: the written entries of ASR-164's cases, which SLICE does not run, fail nothing.
    known = (accept_all_run.folder / "known.toml").read_text()
    assert "validator/ASR-164/" in known and known_failures_run.ret == 0


def test_written_expectations_make_the_same_run_pass(accept_all_run: Certification,
                                                     known_failures_run: Certification) -> None:
    assert accept_all_run.ret == 1
    accept_all_run.stdout.fnmatch_lines(["*expectations written to known.toml*"])
    assert known_failures_run.ret == 0, known_failures_run.stdout.str()


def test_bad_expectations_file_is_a_usage_error_naming_file_and_key(certify: Certify, tmp_path: Path) -> None:
    bad = tmp_path / "expected.toml"
    bad.write_text('[[failure]]\ncase = "x"\n')
    result = certify(f"--implementation={REFERENCE}", *SLICE, f"--expectations={bad}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*expected.toml: failure.0: 'reason' is a required property*"])


def test_a_manifest_names_its_expectations_file(known_failures_run: Certification) -> None:
    assert known_failures_run.ret == 0, known_failures_run.stdout.str()
    assert known_failures_run.report["implementations"][0]["expectations"].endswith("known.toml")


def test_written_expectations_say_what_went_wrong(accept_all_run: Certification) -> None:
    text = (accept_all_run.folder / "known.toml").read_text()
    assert 'reason = "accepted an invalid stream; it breaks ASR-260"' in text


# --- baselines ----------------------------------------------------------------------------------------------


def test_baseline_catches_regressions_and_lists_fixes(certify: Certify, tmp_path: Path, reference_slice: Certification,
                                                     accept_all_run: Certification) -> None:
    assert reference_slice.ret == 0 and accept_all_run.ret == 1
    assert reference_slice.report_dir is not None and accept_all_run.report_dir is not None
    good, bad = reference_slice.report_dir / "report.json", accept_all_run.report_dir / "report.json"
    regressed = certify(f"--implementation={ACCEPT_ALL}", *SLICE, f"--baseline={good}")
    assert regressed.ret == 1
    regressed.stdout.fnmatch_lines(["*regression: validator/ASR-260/invalid-*"])
    assert report_of(tmp_path)["baseline"]["regressions"]
    # The same failures as the baseline: no change, no failure (each one excused by the baseline).
    before = load_baseline(bad)
    settings = GateSettings([Implementation("accept-all")], baseline=before)
    still = gated(settings, results_of(accept_all_run, True))
    assert all("failing in the baseline report.json too" in str(r.excused_by) for r in still
               if r.outcome == "expected-fail")
    status, report, _ = gate_run(settings, still)
    assert status == EXIT_OK, report["exit"]
    # The reference against accept-all's baseline: nothing regressed, and what it passes now is listed as fixed.
    settings = GateSettings([Implementation("asr-conformance-reference")], baseline=before)
    status, report, _ = gate_run(settings, gated(settings, results_of(reference_slice, True)))
    assert status == EXIT_OK
    assert report["baseline"]["fixed"]
    assert any(fnmatch.fnmatch(case, "validator/ASR-260/invalid-*") for case in report["baseline"]["fixed"])


def test_a_baseline_that_is_not_a_report_is_a_usage_error(tmp_path: Path) -> None:
    """Read in process (``load_baseline``, which the run's configuration calls on --baseline): an error naming the
    file, a ``UserError``, which a run ends as a usage error with its message on stderr (the bad expectations
    file above takes that way whole; the regression run above shows --baseline reaches ``load_baseline``)."""
    (tmp_path / "junk.json").write_text('{"results": 3}')
    with pytest.raises(BaselineError) as raised:
        load_baseline(tmp_path / "junk.json")
    assert isinstance(raised.value, UserError)
    assert fnmatch.fnmatch(str(raised.value), "*junk.json: not an asr-conformance report*")


# --- zero executed cases ------------------------------------------------------------------------------------


@pytest.mark.parametrize("results", [[], ["not-scored"]], ids=["none-selected", "none-scored"])
def test_zero_executed_cases_is_never_a_pass(results: list[str]) -> None:
    """A selection that runs nothing (``-m 'corpus and ASR-999'``, ``-k 'valid-exitcode-max and not valid'``;
    test_harness.py runs one whole) never passes: pytest's own status for nothing collected stands, and a run
    that did collect but scored nothing fails the gate."""
    found = [Result(id=f"validator/ASR-260/impl-{i}", implementation="acme", role="validator", kind="corpus",
                    test="t", rules=["ASR-260"], outcome=outcome) for i, outcome in enumerate(results)]
    decision = decide(GateSettings([Implementation("acme")]), found)
    assert decision.reasons == ["no case was executed (zero executed cases is never a pass)"]
    assert exit_status(EXIT_OK, decision.reasons, Completeness()) == EXIT_TESTS_FAILED
    assert exit_status(pytest.ExitCode.NO_TESTS_COLLECTED, decision.reasons, Completeness()) != EXIT_OK


# --- side by side -------------------------------------------------------------------------------------------


def test_side_by_side_gives_one_column_per_implementation(tmp_path_factory: pytest.TempPathFactory) -> None:
    result = side_by_side(tmp_path_factory)
    assert result.ret == 1
    text = result.stdout.str()
    assert "asr-conformance-reference validator: CONFORMS" in text and "accept-all validator: DOES NOT CONFORM" in text
    report = result.report
    assert [i["key"] for i in report["implementations"]] == ["asr-conformance-reference", "accept-all", "reject-all"]
    row = next(r for r in report["rules"] if r["id"] == "ASR-260")
    assert row["cells"]["asr-conformance-reference"]["status"] == "pass"
    assert row["cells"]["accept-all"]["status"] == "fail"
    ids = [r["id"] for r in report["rules"]]
    first_agreeing = next(i for i, r in enumerate(report["rules"]) if len({c["status"] for c in r["cells"].values()}) == 1)
    assert ids.index("ASR-260") < first_agreeing  # disagreeing rows first
    assert result.report_dir is not None
    html = (result.report_dir / "report.html").read_text()
    assert "<th>asr-conformance-reference</th><th>accept-all</th>" in html
    assert "where every implementation agrees" in html


def test_every_option_the_docs_use_exists(certify: Certify, tmp_path: Path) -> None:
    """The CI workflow and the certification guide only name options the plugin (or pytest), or the
    asr-conformance command, has."""
    import re

    from asr_conformance.plugin.console import build_parser

    commands = build_parser()
    help_text = certify("--help", all_plugins=True).text + commands.format_help() + "".join(
        sub.format_help() for action in commands._subparsers._group_actions for sub in action.choices.values())
    for doc in (ROOT / "examples" / "ci" / "asr-conformance.yml", ROOT / "docs" / "certification.md"):
        options = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]+)", doc.read_text()))
        assert options, f"{doc.name} names no option"
        for option in options:
            assert option in help_text, f"{doc.name} names {option}, which pytest does not know"
