"""Reader role: one test per reader case, the case ID as the test ID."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from asr_conformance.harness.adapters.roles import ReaderAdapter
from asr_conformance.harness.judging.reader import run_reader_case
from asr_conformance.vocabulary.cases import Case

pytestmark = [pytest.mark.conformance, pytest.mark.reader]


def test_reader_case(reader_case: Case, asr_reader: ReaderAdapter, asr_record: Callable[..., None]) -> None:
    run_reader_case(reader_case, asr_reader, asr_record)
