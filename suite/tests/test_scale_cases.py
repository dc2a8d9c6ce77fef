"""The corpus's scale cases (generators/scale_cases.py): the committed files are what the writer
makes, byte for byte; a validator that checks only the first N lines and a reader that reads only
the first N records (examples/hostile/, N = 64 and 1,000) fail them, and give the reference's
answer on every other case of the corpus (so the scale cases are what catches them)."""

from __future__ import annotations

from pathlib import Path

from corpus_cases import corpus_cases

from asr_conformance.generators.scale_cases import all_files, differences, main
from asr_conformance.harness.adapters.answers import Outcome
from asr_conformance.harness.adapters.persistent import PersistentImplementation
from asr_conformance.harness.judging.views import compare_views
from asr_conformance.reference.checks import validate_path
from asr_conformance.reference.reader import read_view
from asr_conformance.vocabulary.cases import Case

HOSTILE = Path(__file__).resolve().parents[2] / "examples" / "hostile"
VALIDATOR_CASES = corpus_cases("validator")
READER_CASES = corpus_cases("reader")


def _scale(case: Case) -> bool:
    return "/valid-scale-" in case.id or "/invalid-scale-" in case.id


def test_the_committed_scale_cases_are_what_the_writer_makes(tmp_path: Path) -> None:
    assert differences() == []
    files = all_files()
    assert len([p for p in files if p.endswith(".jsonl")]) == 6
    long = [data for path, data in files.items() if path.startswith("validator/") and path.endswith(".jsonl")]
    assert all(data.count(b"\n") > 5000 and len(data) > 2 * 2**20 for data in long)
    (tmp_path / "validator" / "format").mkdir(parents=True)
    (tmp_path / "validator" / "format" / "valid-scale-coding-session.jsonl").write_bytes(b"{}\n")
    assert main(["--check", str(tmp_path)]) == 1, "a changed or missing file fails the check"


def test_the_scale_cases_are_in_the_corpus_with_their_rules() -> None:
    scale = [case for case in VALIDATOR_CASES + READER_CASES if _scale(case)]
    assert sorted(case.id for case in scale) == sorted(p.removesuffix(".jsonl") for p in all_files() if p.endswith(".jsonl"))
    assert all(case.rules and case.spec for case in scale)




def test_a_validator_that_checks_only_the_first_lines_accepts_every_invalid_scale_case(
        hostile_validator: PersistentImplementation) -> None:
    invalid = [case for case in VALIDATOR_CASES if _scale(case) and case.verdict == "invalid"]
    assert len(invalid) == 3
    for case in invalid:
        assert not validate_path(case.stream).valid, case.id
        assert hostile_validator.validate(case.stream).outcome is Outcome.ACCEPT, case.id


def test_a_validator_that_checks_only_the_first_lines_agrees_with_every_other_case(
        hostile_validator: PersistentImplementation) -> None:
    others = [case for case in VALIDATOR_CASES if not _scale(case)]
    assert others
    for case in others:
        expected = Outcome.ACCEPT if validate_path(case.stream).valid else Outcome.REJECT
        assert hostile_validator.validate(case.stream).outcome is expected, case.id


def test_a_reader_that_reads_only_the_first_records_gets_every_scale_case_wrong(
        hostile_reader: PersistentImplementation) -> None:
    scale = [case for case in READER_CASES if _scale(case)]
    assert len(scale) == 2
    for case in scale:
        assert compare_views(case.view(), read_view(case.stream), case.partial) == [], case.id
        answer = hostile_reader.read(case.stream)
        assert answer.outcome is Outcome.VIEWED and compare_views(case.view(), answer.view, case.partial), case.id


def test_a_reader_that_reads_only_the_first_records_agrees_with_every_other_case(
        hostile_reader: PersistentImplementation) -> None:
    others = [case for case in READER_CASES if not _scale(case)]
    assert others
    for case in others:
        answer = hostile_reader.read(case.stream)
        assert answer.outcome is Outcome.VIEWED and answer.view == read_view(case.stream), case.id
