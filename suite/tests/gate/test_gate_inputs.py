"""Baselines and expectations files are bounded regular files; nesting is refused before any parser recurses."""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path

import pytest
from certifying import run_certification

from asr_conformance.gate.baseline import BaselineError, load_baseline
from asr_conformance.gate.expectations import ExpectationsError, load_expectations
from asr_conformance.vocabulary.bounded_files import InputFileError, nesting_depth, read_regular_file

ROOT = Path(__file__).resolve().parents[3]


def test_dev_zero_is_not_a_regular_file() -> None:
    with pytest.raises(BaselineError, match="/dev/zero: the baseline report is not a regular file"):
        load_baseline(Path("/dev/zero"))


def test_a_fifo_neither_hangs_nor_is_read(tmp_path: Path) -> None:
    fifo = tmp_path / "baseline.json"
    os.mkfifo(fifo)
    errors: list[Exception] = []

    def load() -> None:
        try:
            load_baseline(fifo)
        except BaselineError as error:
            errors.append(error)

    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    worker.join(10)
    assert errors and "not a regular file" in str(errors[0])


def test_a_file_over_the_limit_is_refused_by_name(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    with open(big, "wb") as handle:
        handle.truncate(2048)
    with pytest.raises(InputFileError, match="big.json: the baseline report is larger than 1024 bytes"):
        read_regular_file(big, "baseline report", limit=1024)


def test_deeply_nested_json_is_a_usage_error_not_a_recursion_error(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text('{"results": ' + "[" * 200_000 + "]" * 200_000 + "}")
    with pytest.raises(BaselineError, match="deep.json: the baseline report nests deeper than 64 levels"):
        load_baseline(deep)


def test_deeply_nested_toml_expectations_are_refused(tmp_path: Path) -> None:
    deep = tmp_path / "expected.toml"
    deep.write_text("x = " + "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(ExpectationsError, match="expected.toml: the expectations file nests deeper than 64 levels"):
        load_expectations(deep)


def test_an_expectations_path_that_is_a_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ExpectationsError, match="not a regular file|Is a directory"):
        load_expectations(tmp_path)


def test_nesting_is_counted_outside_strings() -> None:
    assert nesting_depth('{"a": "[[[[", "b": [[1]]}') == 3
    assert nesting_depth("a = '[[[[' \nb = [[1]]") == 2


def _entries(tmp_path: Path, body: str):
    from asr_conformance.gate.expectations import load_expectations

    path = tmp_path / "known.toml"
    path.write_text(body)
    return path, load_expectations(path)


@pytest.mark.parametrize(("body", "message"), [
    ('[[failure]]\ncase = "validator/ASR-164/invalid-no-such-case"\nreason = "r"\n', "entry 1 (case validator/ASR-164/"
     "invalid-no-such-case) matches no case"),
    ('[[failure]]\ncase = "validator/test_no_such_property[ASR-164]"\nreason = "r"\n', "matches no case"),
    ('[[failure]]\nrule = "ASR-999"\nreason = "r"\n', "ASR-999 is not a rule of the catalog"),
    ('[[failure]]\nrule = "ASR-164"\nreason = "r"\nimplementation = "other"\n', "no implementation 'other'"),
], ids=["unknown-case", "unknown-test", "unknown-rule", "unknown-implementation"])
def test_an_entry_that_matches_nothing_is_an_error(tmp_path: Path, body: str, message: str) -> None:
    from asr_conformance.gate.expectations import check_entries
    from asr_conformance.plugin.hooks import conformance_tests
    from asr_conformance.vocabulary.rules import load_catalog

    path, entries = _entries(tmp_path, body)
    with pytest.raises(ExpectationsError, match=re.escape(message)):
        check_entries(path, entries, ["validator/ASR-164/invalid-loosen-redacted-to-full"], conformance_tests(),
                      load_catalog(), ["acme"])


def test_entries_that_can_match_pass_the_check(tmp_path: Path) -> None:
    from asr_conformance.gate.expectations import check_entries
    from asr_conformance.plugin.hooks import conformance_tests
    from asr_conformance.vocabulary.rules import load_catalog

    path, entries = _entries(tmp_path, '[[failure]]\ncase = "validator/ASR-164/invalid-loosen-redacted-to-full"\n'
                             'reason = "r"\n[[failure]]\ncase = "validator/test_rejects_mutated_streams[ASR-164]"\n'
                             'reason = "r"\n[[failure]]\ncase = "producer/test_damaged_input[a.jsonl-empty]"\n'
                             'reason = "r"\n[[failure]]\nrule = "ASR-164"\nreason = "r"\nimplementation = "acme"\n')
    check_entries(path, entries, ["validator/ASR-164/invalid-loosen-redacted-to-full"], conformance_tests(),
                  load_catalog(), ["acme"])


def test_a_run_with_an_entry_that_matches_nothing_is_a_usage_error(pytester: pytest.Pytester) -> None:
    (pytester.path / "known.toml").write_text('[[failure]]\ncase = "validator/ASR-164/invalid-typo"\nreason = "r"\n')
    result = run_certification(f"--implementation={ROOT / 'examples' / 'reference-validator'}",
                               "--expectations=known.toml", "--report-dir=none", cwd=pytester.path)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "known.toml: entry 1 (case validator/ASR-164/invalid-typo) matches no case" in result.stderr.str()
