"""Every case of the corpus loads, and the reference validator agrees with it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from corpus_cases import corpus_cases

from asr_conformance import CORPUS_DIR
from asr_conformance.harness.judging.corpus_check import disagreement
from asr_conformance.vocabulary.cases import CorpusError, load_case, orphan_streams
from asr_conformance.vocabulary.seen_digests import SeenDigests

CASES = corpus_cases()


def test_the_corpus_is_not_empty() -> None:
    assert len(CASES) > 100


def test_every_stream_has_metadata() -> None:
    assert orphan_streams(CORPUS_DIR) == []


def test_case_ids_are_unique_and_path_derived() -> None:
    ids = [c.id for c in CASES]
    assert ids, f"no case found under {CORPUS_DIR}"
    assert len(ids) == len(set(ids))
    for case in CASES:
        assert case.stream.relative_to(CORPUS_DIR).with_suffix("").as_posix() == case.id


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_reference_agrees_with_case(case) -> None:
    prefix = {"valid": "valid-", "invalid": "invalid-", "implementation-defined": "impl-"}[case.verdict]
    assert case.id.rsplit("/", 1)[-1].startswith(prefix)
    assert disagreement(case) is None, disagreement(case)


def test_bad_metadata_is_reported_with_its_file(tmp_path) -> None:
    folder = tmp_path / "validator" / "ASR-999"
    folder.mkdir(parents=True)
    (folder / "valid-x.jsonl").write_text("{}\n")
    (folder / "valid-x.toml").write_text('description = "too short"\nverdict = "maybe"\nrules = []\nspec = "x"\n')
    with pytest.raises(CorpusError, match=r"valid-x\.toml"):
        load_case(folder / "valid-x.toml", tmp_path)
    (folder / "valid-x.toml").write_text("description = [unclosed\n")
    with pytest.raises(CorpusError, match=r"valid-x\.toml: cannot read"):
        load_case(folder / "valid-x.toml", tmp_path)


def test_every_corpus_file_ships_in_the_package() -> None:
    """A plain (non-editable) install carries the corpus as package data: every file under cases/
    must match one of pyproject's package-data patterns, or a new kind of file would be left out.
    Git's own files (``.gitattributes``) are not corpus files."""
    import fnmatch
    import tomllib

    root = CORPUS_DIR.parent
    setuptools = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert setuptools["package-dir"]["asr_conformance.cases"] == "cases"
    patterns = setuptools["package-data"]["asr_conformance.cases"]
    left_out = [
        path.relative_to(CORPUS_DIR).as_posix() for path in CORPUS_DIR.rglob("*")
        if path.is_file() and not path.name.startswith(".git")
        if not any(fnmatch.fnmatch(path.relative_to(CORPUS_DIR).as_posix(), p)
                   and path.relative_to(CORPUS_DIR).as_posix().count("/") == p.count("/") for p in patterns)
    ]
    assert left_out == []


def test_asr_corpus_fails_on_a_corpus_that_is_not_there(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from asr_conformance.harness.judging.corpus_check import main

    assert main(["check", "--corpus", str(tmp_path / "nonexistent")]) == 2
    assert "nonexistent: no such corpus folder" in capsys.readouterr().err
    assert main(["check", "--corpus", str(tmp_path)]) == 1  # a folder without cases: a check of nothing
    assert "no case found" in capsys.readouterr().err
    assert main(["list"]) == 0 and "validator/ASR-003/" in capsys.readouterr().out


def test_metadata_once_found_valid_is_not_checked_again_and_a_new_file_is(tmp_path, monkeypatch) -> None:
    from asr_conformance.vocabulary import cases

    private = SeenDigests(tmp_path / "checked.json")  # this test's list, not the package's
    monkeypatch.setattr(cases, "_checked", lambda: private)
    case = tmp_path / "validator" / "ASR-001"
    case.mkdir(parents=True)
    (case / "valid-x.jsonl").write_text("{}\n")
    (case / "valid-x.toml").write_text('description = "A header and nothing else, as checked here."\n'
                                       'verdict = "valid"\nrules = ["ASR-001"]\nspec = "Envelope"\n')
    checked: list[object] = []
    real = cases.first_problem

    def counting(schema, data, *rest):
        checked.append(data)
        return real(schema, data, *rest)

    monkeypatch.setattr(cases, "first_problem", counting)
    assert load_case(case / "valid-x.toml", tmp_path).verdict == "valid"
    assert load_case(case / "valid-x.toml", tmp_path).verdict == "valid"
    assert len(checked) == 1, "the same bytes were checked once"
    private.save()
    assert len(json.loads(private.path.read_text())) == 1, "only the valid bytes are listed"
    (case / "valid-x.toml").write_text('description = "too short"\nverdict = "valid"\nrules = ["ASR-001"]\nspec = "E"\n')
    with pytest.raises(CorpusError, match=r"valid-x\.toml"):
        load_case(case / "valid-x.toml", tmp_path)
    private.save()
    assert len(json.loads(private.path.read_text())) == 1, "bytes that failed the schema are never listed"
