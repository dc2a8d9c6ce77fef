"""In-process validators for the project's tests: each meets ``ValidatorAdapter`` (``harness/adapters/roles.py``)
without starting a process, so that what a judge decides about an implementation's answers is tested on
every corpus case in milliseconds.  A certification run of the matching program under ``examples/``
proves the wiring (process, protocol, report) on a slice; these prove the judging on the whole corpus.

``fuzz_session`` and ``fuzz_failure`` do the same for fuzzing: a validator fuzz test of the conformance suite
(``conformance/test_validator_fuzz.py``) called in process with the session its ``asr_fuzz`` fixture would give,
so that shrinking, budgets and what a property fails on are tested without a pytest start-up."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import settings

from asr_conformance.harness.adapters.answers import Outcome, Verdict
from asr_conformance.harness.adapters.roles import ValidatorAdapter
from asr_conformance.harness.fuzzing.profiles import ShrinkBudget, ValidatorFuzzSession
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


def fuzz_session(adapter: ValidatorAdapter, folder: Path, hypothesis_settings: settings,
                 budget: ShrinkBudget | None = None, seed: int | None = None,
                 replay: tuple[str, ...] = ("--implementation=miniature",)) -> tuple[ValidatorFuzzSession, dict[str, object]]:
    """The session the plugin's ``asr_fuzz`` fixture builds (rules named beside each mutator's own included), and the
    facts it records for the report (``asr_shrink_steps``...), which the fixture would hand to the test's record."""
    from asr_conformance.generators.registry import ALSO_NAMED

    facts: dict[str, object] = {}
    folder.mkdir(parents=True, exist_ok=True)
    session = ValidatorFuzzSession(adapter, folder, folder / "counterexamples", list(replay), hypothesis_settings, seed,
                                   {rule: set(companions) for rule, companions in ALSO_NAMED.items()}, budget,
                                   record=facts.__setitem__)
    return session, facts


def fuzz_failure(test: Callable[..., None], session: ValidatorFuzzSession, *args: str) -> str | None:
    """Call a fuzz test's own body with ``session`` (and its parameter); its failure message, None when it passed."""
    try:
        test(session, *args)
    except pytest.fail.Exception as failure:
        return str(failure)
    return None
