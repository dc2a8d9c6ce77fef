"""Reports and the regression gate, run for real against the reference and seeded-bug validators:
the report matches its schema and merges xdist workers; expectations excuse listed failures, fail
on unlisted and stale ones; a baseline catches regressions and lists fixes; side-by-side runs get
one column per implementation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from certifying import Certification, Certify, shared_certification

from asr_conformance import CORPUS_DIR
from asr_conformance.vocabulary.cases import iter_cases
from asr_conformance.vocabulary.schemas import check_report

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
ACCEPT_ALL = EXAMPLES / "misbehaving" / "accept-all"
REFERENCE = EXAMPLES / "reference.toml"
#: A small, fixed slice of the corpus: the exitCode range cases (valid and invalid).
SLICE = ("-m", "corpus", "-k", "ASR-260")


def report_of(folder: Path, name: str = "out") -> dict:
    data = json.loads((folder / name / "report.json").read_text())
    assert check_report(data) is None
    return data


@pytest.fixture(scope="module")
def reference_slice(tmp_path_factory: pytest.TempPathFactory) -> Certification:
    """The reference on SLICE, once for the tests that read its report (a baseline, one side of a merge)."""
    return shared_certification(tmp_path_factory, "reports-reference-slice", f"--implementation={REFERENCE}", *SLICE)


@pytest.fixture(scope="module")
def accept_all_slice(tmp_path_factory: pytest.TempPathFactory) -> Certification:
    """accept-all on SLICE, writing its expectations, once for the tests that read its report or that file."""
    return shared_certification(tmp_path_factory, "reports-accept-all-slice", f"--implementation={ACCEPT_ALL}", *SLICE,
                                "--write-expectations=known.toml")


def invalid_ids(report: dict) -> set[str]:
    return {r["id"] for r in report["results"] if r["outcome"] in ("fail", "expected-fail")}


def test_report_of_a_seeded_bug_validator_shows_failing_rules_first(certify: Certify, tmp_path: Path) -> None:
    result = certify(f"--implementation={ACCEPT_ALL}", "-m", "corpus", "-k", "ASR-260 or ASR-164",
                     "--hypothesis-profile=asr-fast")  # a randomized run earns badges
    assert result.ret == 1
    report = report_of(tmp_path)
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
    badge = json.loads((tmp_path / "out" / "badge-validator.json").read_text())
    assert badge["schemaVersion"] == 1 and badge["color"] == "red" and "%" in badge["message"]
    markdown = (tmp_path / "out" / "summary.md").read_text()
    assert "does not conform" in markdown and "| ASR-" in markdown
    assert "Partial run" in markdown and report["options"]["partial"] is True
    result.stdout.fnmatch_lines(["*verdict: DOES NOT CONFORM (partial run: -m 'corpus', -k 'ASR-260 or ASR-164'*"])
    html = (tmp_path / "out" / "report.html").read_text()
    # sections with failures first (exec before input_request, which has none), failing rows unfolded
    assert html.index('id="rule-ASR-260"') < html.index('id="rule-ASR-285"')
    assert html.index('id="rule-ASR-260"') < html.index("<details><summary>", html.index("tool-records › exec"))


def test_report_merges_every_xdist_worker(certify: Certify, reference_slice: Certification) -> None:
    merged = certify(f"--implementation={REFERENCE}", *SLICE, "-n", "2")
    assert reference_slice.ret == merged.ret == 0
    one, two = reference_slice.report, merged.report
    assert len(one["results"]) == len(two["results"]) > 5
    assert {r["id"]: r["outcome"] for r in one["results"]} == {r["id"]: r["outcome"] for r in two["results"]}
    assert two["options"]["workers"] == 2
    assert two["implementations"][0]["announced"].startswith("asr-conformance-reference")


def _expectations(folder: Path, body: str) -> Path:
    path = folder / "expected.toml"
    path.write_text(body)
    return path


def test_listed_failures_pass_the_run_and_unlisted_ones_fail_it(certify: Certify, tmp_path: Path,
                                                               accept_all_slice: Certification) -> None:
    failing = sorted(invalid_ids(accept_all_slice.report))
    assert accept_all_slice.ret == 1 and len(failing) >= 2
    entries = "".join(f'[[failure]]\ncase = "{case}"\nreason = "accepts everything"\n' for case in failing[1:])
    partial = _expectations(tmp_path, entries)
    result = certify(f"--implementation={ACCEPT_ALL}", *SLICE, f"--expectations={partial}")
    assert result.ret == 1  # the first failure is not listed
    result.stdout.fnmatch_lines([f"*FAILED*{failing[0]}*"])
    listed = _expectations(tmp_path, entries + f'[[failure]]\ncase = "{failing[0]}"\nreason = "too"\n')
    result = certify(f"--implementation={ACCEPT_ALL}", *SLICE, f"--expectations={listed}")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["*verdict: CONFORMS EXCEPT KNOWN FAILURES*"])
    report = report_of(tmp_path)
    assert {r["id"] for r in report["results"] if r["outcome"] == "expected-fail"} == set(failing)
    assert all("known failure" in r["excused_by"] for r in report["results"] if r["outcome"] == "expected-fail")


def test_a_rule_entry_excuses_every_case_of_the_rule(certify: Certify, tmp_path: Path) -> None:
    rule = _expectations(tmp_path, '[[failure]]\nrule = "ASR-260"\nreason = "no range check"\n'
                                   'issue = "https://example.org/issues/1"\n')
    result = certify(f"--implementation={ACCEPT_ALL}", *SLICE, f"--expectations={rule}")
    assert result.ret == 0, result.stdout.str()
    assert "https://example.org/issues/1" in json.dumps(report_of(tmp_path))


def test_a_stale_expectation_fails_the_run(certify: Certify, tmp_path: Path) -> None:
    stale = _expectations(tmp_path, '[[failure]]\nrule = "ASR-260"\nreason = "used to fail"\n')
    result = certify(f"--implementation={REFERENCE}", *SLICE, f"--expectations={stale}")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*stale expectation: rule ASR-260 now passes*", "*verdict: DOES NOT PASS THE GATE*"])
    assert report_of(tmp_path)["expectations"]["stale"][0]["entry"] == "rule ASR-260"


def test_an_entry_whose_cases_did_not_run_is_not_stale(certify: Certify, tmp_path: Path) -> None:
    other = _expectations(tmp_path, '[[failure]]\nrule = "ASR-164"\nreason = "not in this slice"\n')
    result = certify(f"--implementation={REFERENCE}", *SLICE, f"--expectations={other}")
    assert result.ret == 0, result.stdout.str()


def test_written_expectations_make_the_same_run_pass(certify: Certify, accept_all_slice: Certification) -> None:
    assert accept_all_slice.ret == 1
    accept_all_slice.stdout.fnmatch_lines(["*expectations written to known.toml*"])
    again = certify(f"--implementation={ACCEPT_ALL}", *SLICE, f"--expectations={accept_all_slice.folder / 'known.toml'}")
    assert again.ret == 0, again.stdout.str()


def test_bad_expectations_file_is_a_usage_error_naming_file_and_key(certify: Certify, tmp_path: Path) -> None:
    bad = _expectations(tmp_path, '[[failure]]\ncase = "x"\n')
    result = certify(f"--implementation={REFERENCE}", *SLICE, f"--expectations={bad}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*expected.toml: failure.0: 'reason' is a required property*"])


def test_baseline_catches_regressions_and_lists_fixes(certify: Certify, tmp_path: Path, reference_slice: Certification,
                                                     accept_all_slice: Certification) -> None:
    assert reference_slice.ret == 0 and accept_all_slice.ret == 1
    good, bad = reference_slice.report_dir / "report.json", accept_all_slice.report_dir / "report.json"
    regressed = certify(f"--implementation={ACCEPT_ALL}", *SLICE, f"--baseline={good}")
    assert regressed.ret == 1
    regressed.stdout.fnmatch_lines(["*regression: validator/ASR-260/invalid-*"])
    assert report_of(tmp_path)["baseline"]["regressions"]
    still = certify(f"--implementation={ACCEPT_ALL}", *SLICE, f"--baseline={bad}")
    assert still.ret == 0, still.stdout.str()  # the same failures as the baseline: no change, no failure
    fixed = certify(f"--implementation={REFERENCE}", *SLICE, f"--baseline={bad}")
    assert fixed.ret == 0
    fixed.stdout.fnmatch_lines(["*fixed: validator/ASR-260/invalid-*"])
    assert report_of(tmp_path)["baseline"]["fixed"]


def test_a_baseline_that_is_not_a_report_is_a_usage_error(certify: Certify, tmp_path: Path) -> None:
    (tmp_path / "junk.json").write_text('{"results": 3}')
    result = certify(f"--implementation={REFERENCE}", *SLICE, "--baseline=junk.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*junk.json: not an asr-conformance report*"])


def test_zero_executed_cases_is_never_a_pass(certify: Certify, tmp_path: Path) -> None:
    result = certify(f"--implementation={REFERENCE}", "-m", "corpus and ASR-999")
    assert result.ret != 0
    result = certify(f"--implementation={REFERENCE}", "-m", "corpus", "-k", "valid-exitcode-max and not valid")
    assert result.ret != 0


def test_side_by_side_gives_one_column_per_implementation(certify: Certify, tmp_path: Path) -> None:
    result = certify(f"--implementation={REFERENCE}", f"--implementation={ACCEPT_ALL}", *SLICE)
    assert result.ret == 1
    text = result.stdout.str()
    assert "asr-conformance-reference validator: CONFORMS" in text and "accept-all validator: DOES NOT CONFORM" in text
    report = report_of(tmp_path)
    assert [i["key"] for i in report["implementations"]] == ["asr-conformance-reference", "accept-all"]
    row = next(r for r in report["rules"] if r["id"] == "ASR-260")
    assert row["cells"]["asr-conformance-reference"]["status"] == "pass"
    assert row["cells"]["accept-all"]["status"] == "fail"
    ids = [r["id"] for r in report["rules"]]
    first_agreeing = next(i for i, r in enumerate(report["rules"]) if len({c["status"] for c in r["cells"].values()}) == 1)
    assert ids.index("ASR-260") < first_agreeing  # disagreeing rows first
    html = (tmp_path / "out" / "report.html").read_text()
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


def test_a_manifest_names_its_expectations_file(certify: Certify, tmp_path: Path) -> None:
    _expectations(tmp_path, '[[failure]]\nrule = "ASR-260"\nreason = "no range check"\n')
    manifest = tmp_path / "accept-all.toml"
    manifest.write_text(f'name = "accept-all"\ncommand = ["{ACCEPT_ALL}"]\nexpectations = "expected.toml"\n')
    result = certify(f"--implementation={manifest}", *SLICE)
    assert result.ret == 0, result.stdout.str()
    assert report_of(tmp_path)["implementations"][0]["expectations"].endswith("expected.toml")


def test_written_expectations_say_what_went_wrong(accept_all_slice: Certification) -> None:
    text = (accept_all_slice.folder / "known.toml").read_text()
    assert 'reason = "accepted an invalid stream; it breaks ASR-260"' in text
