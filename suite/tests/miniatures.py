"""In-process validators for the project's tests: each meets ``ValidatorAdapter`` (``harness/adapters/roles.py``)
without starting a process, so that what a judge decides about an implementation's answers is tested on
every corpus case in milliseconds.  A certification run of the matching program under ``examples/``
proves the wiring (process, protocol, report) on a slice; these prove the judging on the whole corpus."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from asr_conformance.harness.adapters.answers import Outcome, Verdict
from asr_conformance.harness.judging.validator import run_validator_case
from asr_conformance.vocabulary.cases import Case


class MiniatureValidator:
    """A validator whose answer is a Python function of the stream; it remembers what it was asked."""

    def __init__(self, answer: Callable[[Path], Verdict]) -> None:
        self._answer = answer
        self.asked: list[Path] = []
        self.closed = False

    def validate(self, stream: Path) -> Verdict:
        self.asked.append(stream)
        return self._answer(stream)

    def close(self) -> None:
        self.closed = True


def accept_all() -> MiniatureValidator:
    """``examples/misbehaving/accept-all`` in process: every stream accepted."""
    return MiniatureValidator(lambda stream: Verdict(Outcome.ACCEPT, sent=f"accept-all {stream}"))


def reject_all() -> MiniatureValidator:
    """``examples/misbehaving/reject-all`` in process: every stream rejected, no rule named."""
    return MiniatureValidator(lambda stream: Verdict(Outcome.REJECT, sent=f"reject-all {stream}"))


def judge_cases(cases: list[Case], adapter: MiniatureValidator, strict: bool = False) -> dict[str, tuple[str, str]]:
    """Each case's outcome (passed, failed or skipped) and message, from the corpus test's own body
    (``run_validator_case``) called in process with ``adapter``."""
    judged: dict[str, tuple[str, str]] = {}
    for case in cases:
        try:
            run_validator_case(case, adapter, lambda **fields: None, strict)
        except pytest.fail.Exception as failure:
            judged[case.id] = ("failed", str(failure))
        except pytest.skip.Exception as skip:
            judged[case.id] = ("skipped", str(skip))
        else:
            judged[case.id] = ("passed", "")
    return judged
