"""Validator role: one test per case of the corpus, the case ID as the test ID."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from asr_conformance.harness.adapters.roles import ValidatorAdapter
from asr_conformance.harness.adapters.targets import Target
from asr_conformance.harness.judging.validator import run_validator_case
from asr_conformance.vocabulary.cases import Case

pytestmark = [pytest.mark.conformance, pytest.mark.validator]


def test_validator_case(validator_case: Case, asr_validator: ValidatorAdapter, asr_target: Target,
                        asr_record: Callable[..., None]) -> None:
    run_validator_case(validator_case, asr_validator, asr_record, asr_target.strict_reasons)
