"""Reader role: one test per reader case, the case ID as the test ID."""

from __future__ import annotations

import pytest

from asr_conformance.harness.judging.reader import run_reader_case

pytestmark = [pytest.mark.conformance, pytest.mark.reader]


def test_reader_case(reader_case, asr_reader, asr_record) -> None:
    run_reader_case(reader_case, asr_reader, asr_record)
