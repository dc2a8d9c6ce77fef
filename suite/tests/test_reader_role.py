"""The reader role end to end: the reference reader passes every reader case, one-shot,
persistent and bundled; each seeded-bug reader in examples/misbehaving fails, and its
failures name the rule it breaks."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from certifying import Certification, Certify, shared_certification
from corpus_cases import corpus_cases
from miniatures import judge_reads, reference_reader

from asr_conformance.vocabulary.cases import iter_cases

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
MISBEHAVING = EXAMPLES / "misbehaving"
READER_CASES = corpus_cases("reader")
COUNT = len(READER_CASES)
#: Cases whose expected view rests on an open assumption, and impl- cases: reported (skipped), never scored.
UNSCORED = sum(not case.view_scored for case in READER_CASES)
SCORED = COUNT - UNSCORED


#: The reader part of the conformance suite: the reader cases, or the reader fuzz properties.
READER = ("--role=reader", "-m", "not fuzz")
READER_FUZZ = ("--role=reader", "-m", "fuzz")


def test_there_are_reader_cases() -> None:
    assert COUNT >= 36 and 0 < UNSCORED < SCORED


@pytest.mark.e2e
def test_reference_reader_one_shot_passes_a_case_of_every_rule(certify: Certify) -> None:
    """The persistent reference reads every case (below); one-shot, a process per case, it reads the first
    scored and the first unscored case of each rule folder: the transport differs, the reader is the same."""
    chosen: dict[tuple[str, bool], str] = {}
    for case in READER_CASES:
        chosen.setdefault((case.id.split("/")[1], case.view_scored), case.id)
    selected = [case for case in READER_CASES if any(name in case.id for name in chosen.values())]
    assert {case.id.split("/")[1] for case in selected} == {case.id.split("/")[1] for case in READER_CASES}
    scored = sum(case.view_scored for case in selected)
    assert scored and len(selected) > scored
    result = certify(*READER, "-k", " or ".join(sorted(chosen.values())),
                     f"--implementation={EXAMPLES / 'reference-reader'}", report_dir=None)
    result.assert_outcomes(passed=scored, skipped=len(selected) - scored)
    result.stdout.fnmatch_lines(["*verdict: CONFORMS*"])
    assert result.ret == 0


#: The reference, persistent, certified beside the seeded-bug readers (its own column of their run).
REFERENCE_PERSISTENT = "reference-validator-persistent"


@pytest.mark.e2e
def test_reference_reader_persistent_passes_every_reader_case(seeded_readers: Certification,
                                                              seeded_report: dict) -> None:
    """Its column of the side-by-side run over the persistent protocol, checked: every scored case passes, every
    unscored one is reported, not scored (skipped), and its verdict line conforms (the run's exit status is the seeded bugs')."""
    results = [r for r in seeded_report["results"] if r["implementation"] == REFERENCE_PERSISTENT]
    outcomes = Counter(r["outcome"] for r in results if r["id"].startswith("reader/"))
    assert outcomes == {"pass": SCORED, "not-scored": UNSCORED}, outcomes  # pytest reports the unscored skipped
    assert not failed_cases(seeded_readers, REFERENCE_PERSISTENT)
    seeded_readers.stdout.fnmatch_lines([f"  {REFERENCE_PERSISTENT} reader: CONFORMS*"])


@pytest.mark.e2e
def test_bundled_reference_plays_the_reader_role(certify: Certify) -> None:
    result = certify(*READER, str(ROOT / "suite" / "conformance" / "test_reader_corpus.py"), report_dir=None)
    result.assert_outcomes(passed=SCORED, skipped=UNSCORED)
    result.stdout.fnmatch_lines(["*reader: * pass*"])
    assert result.ret == 0


#: Each seeded-bug reader, the rule its failures must name, and cases it must fail.
SEEDED = {
    "pairs-by-position": ("ASR-263", {"reader/ASR-263/valid-duplicate-call-ids-no-positional-pairing",
                                      "reader/ASR-264/valid-two-results-for-one-call"}),
    "falls-back-to-native-call-id": ("ASR-262", {"reader/ASR-263/valid-native-call-id-never-pairs"}),
    "keeps-old-title-source": ("ASR-181", {"reader/ASR-181/valid-new-title-without-source-is-unknown",
                                           "reader/ASR-181/valid-source-stays-unknown-until-recorded-again"}),
    "dangling-as-completed": ("ASR-265", {"reader/ASR-265/valid-call-without-result-is-dangling",
                                          "reader/ASR-265/valid-refused-call-without-result"}),
    "reclassifies-content-level": ("ASR-165", {"reader/ASR-165/valid-declaration-applies-to-later-records-only",
                                               "reader/ASR-165/valid-tightened-twice"}),
    # Caught only because a client as recorded is compared whole (the other seeded readers: test_reader.py).
    "merges-client-members": ("ASR-179", {"reader/ASR-179/valid-client-replaced-whole"}),
}


@pytest.fixture(scope="module")
def seeded_readers(tmp_path_factory: pytest.TempPathFactory) -> Certification:
    """Every seeded-bug reader side by side in one run, one report column each, over the persistent protocol
    with its check (one process per reader for the run, not one per case), and the persistent reference reader
    beside them as a column of its own: the bugs, not the protocol, are under test here; the one-shot protocol
    is the reference reader's test above.  One run instead of one per
    reader spares a pytest start-up, a collection and a report each; every assertion reads its own reader's
    column (the report's results, its block of the summary, its failed tests)."""
    readers = [f"--implementation={MISBEHAVING / name}" for name in sorted(SEEDED)]
    return shared_certification(tmp_path_factory, "seeded-readers", *READER, *readers,
                                f"--implementation={EXAMPLES / REFERENCE_PERSISTENT}", "--persistent",
                                "--check-protocol")


@pytest.fixture(scope="module")
def seeded_report(seeded_readers: Certification) -> dict:
    """The side-by-side run's report.json, read and checked against its schema once for every test of it."""
    return seeded_readers.report


def failed_cases(result: Certification, name: str) -> set[str]:
    """The reader cases ``name`` failed, from the short summary (a side-by-side test ID ends in ``-name``)."""
    suffix = f"-{name}"
    return {case[: -len(suffix)] for case in result.failed("test_reader_case") if case.endswith(suffix)}


@pytest.mark.e2e
@pytest.mark.parametrize("name", sorted(SEEDED))
def test_seeded_bug_reader_fails_naming_its_rule(seeded_readers: Certification, seeded_report: dict, name: str) -> None:
    rule, must_fail = SEEDED[name]
    failed = failed_cases(seeded_readers, name)
    assert must_fail <= failed, seeded_readers.stdout.str()
    results = [r for r in seeded_report["results"] if r["implementation"] == name]
    outcomes = Counter(r["outcome"] for r in results)
    assert outcomes["fail"] == len(failed) and outcomes["pass"] == SCORED - len(failed), outcomes
    messages = "\n".join(r["message"] for r in results if r["outcome"] == "fail")
    assert re.search(rf"^(ASR-\d+, )*{rule}(, ASR-\d+)*: ", messages, re.MULTILINE), f"no failure message names {rule}"
    text = seeded_readers.stdout.str()
    block = re.search(rf"^implementation: {name} .*\n  reader: .*\n  rules with failing cases: (.*)$", text, re.MULTILINE)
    assert block and rule in block.group(1).split(", "), text[-3000:]
    seeded_readers.stdout.fnmatch_lines([f"  {name} reader: DOES NOT CONFORM*"])
    assert seeded_readers.ret == 1


def test_reader_fuzzing_end_to_end_finds_a_seeded_bug_and_its_case_replays(certify: Certify, tmp_path: Path) -> None:
    """-m fuzz with the reader role runs the reader properties; the shrunk failure is a reader case
    that fails the buggy reader again and that the reference reader passes."""
    bug = MISBEHAVING / "decision-without-status-unresolved"
    folder = tmp_path / "found"
    result = certify(*READER_FUZZ, f"--implementation={bug}", f"--counterexamples={folder}", "-k",
                     "decision-without-status", report_dir=None)
    result.assert_outcomes(failed=1)
    text = result.stdout.str()
    assert re.search(r"^ASR-269: the view of a valid stream with permissions decided without a status", text,
                     re.MULTILINE), text
    [written] = folder.glob("reader/ASR-269/valid-fuzz-decision-without-status-*.jsonl")
    assert written.with_suffix(".toml").is_file() and written.with_name(written.stem + ".view.json").is_file()
    replay = certify(*READER, f"--implementation={bug}", f"--cases={folder}", "-k", written.stem, report_dir=None)
    replay.assert_outcomes(failed=1)
    assert "ASR-269: unresolved permissions" in replay.stdout.str()
    # The reference reader (in process: the package's reader, which examples/reference-reader runs) passes it.
    found = [case for case in iter_cases(folder, role="reader") if case.id.endswith(f"/{written.stem}")]
    assert len(found) == 1
    assert judge_reads(found, reference_reader()) == {found[0].id: ("passed", "")}


@pytest.mark.e2e
def test_seeded_bug_reader_fails_through_the_persistent_protocol(seeded_readers: Certification,
                                                                 seeded_report: dict) -> None:
    """Read from the side-by-side run, which checks the protocol (--check-protocol)."""
    assert "--check-protocol" in seeded_readers.args
    assert SEEDED["dangling-as-completed"][1] <= failed_cases(seeded_readers, "dangling-as-completed")
    messages = [r.get("message", "") for r in seeded_report["results"]
                if r["implementation"] == "dangling-as-completed"]
    assert any("call r1: status: expected unknown (null), got \"completed\"" in m for m in messages)
    assert seeded_readers.ret == 1
