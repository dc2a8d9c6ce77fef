"""Baselines and expectations files are bounded regular files; nesting is refused before any parser recurses."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from asr_conformance.gate.baseline import BaselineError, load_baseline
from asr_conformance.gate.expectations import ExpectationsError, load_expectations
from asr_conformance.vocabulary.bounded_files import InputFileError, nesting_depth, read_regular_file


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
