"""Producer role: every input is converted, checked, converted again under other
clocks, timezones, locales, working directories and HOMEs, and damaged.

The stream must conform, must not change with the conversion environment (the
metamorphic form of "taken from the source": ASR-103/104, 154, 159, 169, 187,
261, 267), and damaged input must be refused with a message or still give a
valid stream; never a crash, a hang or an invalid stream. The judging is
``harness.judging.producer_case``'s; this module parametrizes and marks the tests.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from asr_conformance.harness.judging.fidelity import FIDELITY_RULES, SourceEdit
from asr_conformance.harness.judging.producer import (
    INDEPENDENCE,
    OUTPUT_RULES,
    ProducerRunner,
    damaged_inputs,
    variants,
)
from asr_conformance.harness.judging.producer_case import (
    run_damaged_case,
    run_disguised_case,
    run_fidelity_case,
    run_output_case,
    run_source_edit_case,
    run_variant_case,
)
from asr_conformance.packs.registry import Packs
from asr_conformance.packs.selection import SourceInput

#: A test function, returned as it was given by the marking decorator.
Test = TypeVar("Test", bound=Callable[..., Any])

pytestmark = [pytest.mark.conformance, pytest.mark.producer]

VARIANTS = variants()


def _marks(rules: Iterable[str]) -> list[pytest.MarkDecorator]:
    return [getattr(pytest.mark, rule) for rule in rules]


def _marked(rules: Iterable[str]) -> Callable[[Test], Test]:
    """Marks a test with the rules it checks, so that -m ASR-154 selects it."""
    def apply(function: Test) -> Test:
        for mark in _marks(rules):
            function = mark(function)
        return function
    return apply


@_marked(OUTPUT_RULES)
def test_output_conforms(producer_input: SourceInput, asr_producer: ProducerRunner, asr_record: Callable[..., None]) -> None:
    run_output_case(_path(producer_input), asr_producer, asr_record)


@_marked(VARIANTS["again"].rules)
def test_deterministic(producer_input: SourceInput, asr_producer: ProducerRunner, asr_record: Callable[..., None]) -> None:
    run_variant_case(_path(producer_input), asr_producer, VARIANTS["again"], asr_record)


@pytest.mark.parametrize("variant_name", [
    pytest.param(name, id=name, marks=_marks(VARIANTS[name].rules)) for name in INDEPENDENCE
])
def test_independent_of(producer_input: SourceInput, asr_producer: ProducerRunner, variant_name: str,
                        asr_record: Callable[..., None]) -> None:
    run_variant_case(_path(producer_input), asr_producer, VARIANTS[variant_name], asr_record)


@pytest.mark.parametrize("damage", sorted(damaged_inputs(b"")))
def test_damaged_input(producer_input: SourceInput, asr_producer: ProducerRunner, damage: str, tmp_path: Path,
                       asr_record: Callable[..., None]) -> None:
    """No ASR rule governs a refusal (docs/contract.md §2.4 and §6 do); a stream, when given, must conform."""
    run_damaged_case(_path(producer_input), asr_producer, damage, tmp_path, asr_record)


@_marked(FIDELITY_RULES)
def test_fidelity(producer_input: SourceInput, asr_producer: ProducerRunner, asr_record: Callable[..., None]) -> None:
    """The stream keeps what the native input records and invents nothing (the witness of the pack chosen for the
    input at collection reads it)."""
    run_fidelity_case(producer_input, asr_producer, asr_record)


@_marked(FIDELITY_RULES)
def test_fidelity_disguised(producer_input: SourceInput, asr_producer: ProducerRunner, asr_packs: Packs,
                            asr_disguise_seed: int, asr_record: Callable[..., None]) -> None:
    """A disguised copy of the input (fresh IDs, shifted times, a renamed project: docs/contract.md §6.2) is
    held to its source like the input itself, so a converter that recognises the input cannot pass on that."""
    run_disguised_case(producer_input, asr_producer, asr_packs, asr_disguise_seed, asr_record)


@_marked(FIDELITY_RULES)
def test_follows_source_edit(source_edit: SourceEdit, asr_producer: ProducerRunner, tmp_path: Path,
                             asr_disguise_seed: int, asr_record: Callable[..., None]) -> None:
    """An edited copy of the input converts to a stream that changed exactly as the edit implies; the edit is
    made on a disguised copy, so the edited input cannot be matched to the one it came from."""
    run_source_edit_case(source_edit, asr_producer, tmp_path, asr_disguise_seed, asr_record)


def _path(producer_input: SourceInput | Path) -> Path:
    """The input's file (the plugin gives a SourceInput: its test ID, path and the pack chosen for it)."""
    if isinstance(producer_input, Path):
        return producer_input
    return Path(producer_input.path or producer_input.id)
