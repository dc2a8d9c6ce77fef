"""Producer role: every input is converted, checked, converted again under other
clocks, timezones, locales, working directories and HOMEs, and damaged.

The stream must conform, must not change with the conversion environment (the
metamorphic form of "taken from the source": ASR-103/104, 154, 159, 169, 187,
261, 267), and damaged input must be refused with a message or still give a
valid stream; never a crash, a hang or an invalid stream.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from asr_conformance.harness.answers import Conversion, Outcome
from asr_conformance.harness.judging.fidelity import (
    FIDELITY_RULES,
    Fidelity,
    SourceEdit,
    StepHung,
    describe,
    disguised_input,
    judge_fidelity,
    judge_mutation,
    mutation_named,
    pack_for_input,
)
from asr_conformance.harness.judging.producer import (
    INDEPENDENCE,
    OUTPUT_RULES,
    ProducerRunner,
    Variant,
    damaged_inputs,
    differences,
    output_problems,
    rules_of,
    summarize,
    variants,
)
from asr_conformance.harness.targets import ProducerInput
from asr_conformance.packs.registry import Packs
from asr_conformance.vocabulary.inline import inline_input

#: A test function, returned as it was given by the marking decorator.
Test = TypeVar("Test", bound=Callable[..., Any])

pytestmark = [pytest.mark.conformance, pytest.mark.producer]

VARIANTS = variants()
OUTPUT_LIMIT = 20_000
PROBLEM_LIMIT = 20


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
def test_output_conforms(producer_input: ProducerInput | Path, asr_producer: ProducerRunner, asr_record: Callable[..., None]) -> None:
    producer_input = _path(producer_input)
    conversion = asr_producer.baseline(producer_input)
    expected = "exit 0 with a stream that conforms"
    stream = _stream_or_fail(conversion, producer_input, expected, OUTPUT_RULES, asr_record)
    problems = output_problems(stream)
    broken = sorted({p.rule for p in problems})
    _record(asr_record, producer_input, stream, expected, broken or OUTPUT_RULES,
            "failed" if problems else "passed")
    if problems:
        shown = [str(p) for p in problems[:PROBLEM_LIMIT]]
        if len(problems) > PROBLEM_LIMIT:
            shown.append(f"... and {len(problems) - PROBLEM_LIMIT} more")
        pytest.fail(f"{producer_input.name}: the stream breaks {', '.join(broken)}:\n" + "\n".join(shown),
                    pytrace=False)


@_marked(VARIANTS["again"].rules)
def test_deterministic(producer_input: ProducerInput | Path, asr_producer: ProducerRunner, asr_record: Callable[..., None]) -> None:
    _compare_with_baseline(_path(producer_input), asr_producer, VARIANTS["again"], asr_record)


@pytest.mark.parametrize("variant_name", [
    pytest.param(name, id=name, marks=_marks(VARIANTS[name].rules)) for name in INDEPENDENCE
])
def test_independent_of(producer_input: ProducerInput | Path, asr_producer: ProducerRunner, variant_name: str,
                        asr_record: Callable[..., None]) -> None:
    variant = VARIANTS[variant_name]
    if not variant.available:
        pytest.skip(f"the {variant.name} variant is unavailable here: {variant.unavailable}")
    _compare_with_baseline(_path(producer_input), asr_producer, variant, asr_record)


@pytest.mark.parametrize("damage", sorted(damaged_inputs(b"")))
def test_damaged_input(producer_input: ProducerInput | Path, asr_producer: ProducerRunner, damage: str, tmp_path: Path,
                       asr_record: Callable[..., None]) -> None:
    """No ASR rule governs a refusal (docs/contract.md §2.4 and §6 do); a stream, when given, must conform."""
    producer_input = _path(producer_input)
    damaged = tmp_path / f"{producer_input.stem}.{damage}{producer_input.suffix}"
    damaged.write_bytes(damaged_inputs(producer_input.read_bytes())[damage])
    conversion = asr_producer.convert(damaged, "baseline")
    expected = "a refusal (non-zero exit) with a message, or a stream that conforms"
    output = _shown(conversion)
    if conversion.outcome is Outcome.REFUSED:
        refused_with_reason = bool(conversion.refusal.strip())
        _record(asr_record, damaged, output, expected, [], "passed" if refused_with_reason else "failed")
        if not refused_with_reason:
            pytest.fail(f"{damaged.name} ({damage} copy of {producer_input.name}): refused without a message; "
                        f"a refusal says why on stderr\n{conversion.explain()}", pytrace=False)
        return
    if conversion.outcome is not Outcome.CONVERTED or conversion.stream is None:
        asr_record(answer=conversion.outcome.value)
        _record(asr_record, damaged, output, expected, [], "failed")
        pytest.fail(f"{damaged.name} ({damage} copy of {producer_input.name}): {conversion.outcome.value} on "
                    "damaged input; a producer refuses it (non-zero exit, a message on stderr: docs/contract.md §6) "
                    f"or converts it to a stream that conforms\n{conversion.explain()}", pytrace=False)
    problems = output_problems(conversion.stream)
    broken = sorted({p.rule for p in problems})
    _record(asr_record, damaged, output, expected, broken, "failed" if problems else "passed")
    if problems:
        pytest.fail(f"{damaged.name} ({damage} copy of {producer_input.name}): exit 0 with a stream that breaks "
                    f"{', '.join(broken)}; refuse damaged input instead:\n"
                    + "\n".join(str(p) for p in problems[:PROBLEM_LIMIT]), pytrace=False)


@_marked(FIDELITY_RULES)
def test_fidelity(producer_input: ProducerInput | Path, asr_producer: ProducerRunner, asr_packs: Packs, asr_record: Callable[..., None]) -> None:
    """The stream keeps what the native input records and invents nothing (the format pack's witness reads the input)."""
    source = _path(producer_input)
    baseline = asr_producer.baseline(source)
    if baseline.outcome is not Outcome.CONVERTED or baseline.stream is None:
        pytest.skip(f"no stream to hold to its source ({baseline.outcome.value}; see test_output_conforms)")
    result = judge_fidelity(source.read_bytes(), baseline.stream, asr_packs)
    _judge_fidelity_result(result, source, baseline.stream, "a stream that keeps every fact of its source",
                           asr_record, f"{source.name}: the stream does not follow its source")


@_marked(FIDELITY_RULES)
def test_fidelity_disguised(producer_input: ProducerInput | Path, asr_producer: ProducerRunner, asr_packs: Packs,
                            asr_disguise_seed: int, asr_record: Callable[..., None]) -> None:
    """A disguised copy of the input (fresh IDs, shifted times, a renamed project: docs/contract.md §6.2) is
    held to its source like the input itself, so a converter that recognises the input cannot pass on that."""
    source = _path(producer_input)
    # An input no pack reads is not disguised: judged as in test_fidelity, it is not checked for the same reason.
    known = pack_for_input(source.read_bytes(), asr_packs) is not None
    copy = _disguised(source, asr_disguise_seed, asr_producer, asr_record) if known else source
    original = asr_producer.baseline(source)
    if original.outcome is not Outcome.CONVERTED or original.stream is None:
        pytest.skip(f"no stream to hold to its source ({original.outcome.value}; see test_output_conforms)")
    baseline = asr_producer.baseline(copy)
    if baseline.outcome is not Outcome.CONVERTED or baseline.stream is None:
        # The input converts and its disguised copy, the same transcript, does not: it told the two apart.
        asr_record(answer=baseline.outcome.value)
        _record(asr_record, copy, _shown(baseline), "a stream of the disguised copy", list(FIDELITY_RULES), "failed")
        pytest.fail(f"{source.name}, disguised: no stream ({baseline.outcome.value}); the copy is the same "
                    f"transcript with fresh IDs and shifted times\n{baseline.explain()}", pytrace=False)
    result = judge_fidelity(copy.read_bytes(), baseline.stream, asr_packs)
    _judge_fidelity_result(result, copy, baseline.stream, "a stream that keeps every fact of its source",
                           asr_record, f"{source.name}, disguised (fresh IDs, shifted times): the stream does not "
                           "follow its source")


@_marked(FIDELITY_RULES)
def test_follows_source_edit(source_edit: SourceEdit, asr_producer: ProducerRunner, asr_packs: Packs,
                             tmp_path: Path, asr_disguise_seed: int, asr_record: Callable[..., None]) -> None:
    """An edited copy of the input converts to a stream that changed exactly as the edit implies; the edit is
    made on a disguised copy, so the edited input cannot be matched to the one it came from."""
    original = Path(source_edit.input.path)
    if source_edit.mutation is None:
        pytest.skip("source edits not tried: no witness reads this input, so it cannot be edited in known ways")
    pack = pack_for_input(original.read_bytes(), asr_packs)
    mutation = mutation_named(pack, source_edit.mutation) if pack is not None else None
    if pack is None or mutation is None:
        why = f"the {source_edit.mutation} edit is not offered for this input"
        asr_record(fidelity_not_checked=why)
        pytest.skip(f"fidelity not checked: {why}")
    source = _disguised(original, asr_disguise_seed, asr_producer, asr_record)
    data = source.read_bytes()
    baseline = asr_producer.baseline(source)
    if baseline.outcome is not Outcome.CONVERTED or baseline.stream is None:
        pytest.skip(f"no stream to compare with ({baseline.outcome.value}; see test_fidelity_disguised)")

    def convert(edited: bytes) -> bytes | str:
        copy = tmp_path / f"edited{source.suffix}"
        copy.write_bytes(edited)
        conversion = asr_producer.convert(copy, "baseline")
        if conversion.outcome is Outcome.CONVERTED and conversion.stream is not None:
            return conversion.stream
        return f"{conversion.outcome.value}: {conversion.refusal or conversion.explain()}"

    result = judge_mutation(mutation, pack, data, baseline.stream, convert)
    _judge_fidelity_result(result, source, baseline.stream, f"after the edit: {mutation.description}",
                           asr_record, f"{original.name}, disguised and edited ({mutation.name}): the stream did "
                           "not follow")


def _judge_fidelity_result(result: Fidelity, source: Path, stream: bytes, expected: str, asr_record: Callable[..., None],
                           headline: str) -> None:
    if result.judge is not None:
        asr_record(judge=result.judge.to_json())
    if result.reported:
        asr_record(fidelity_reported=tuple(describe(result.reported)))
    if result.error is not None:
        # The judge failed, not the implementation: no verdict on this input, and the run is incomplete.
        asr_record(suite_error=result.error)
        pytest.skip(f"{source.name}: {result.error}")
    if result.not_checked is not None and not result.findings:
        asr_record(fidelity_not_checked=result.unchecked)
        pytest.skip(f"fidelity {result.not_checked}")
    rules = result.rules or list(FIDELITY_RULES)
    _record(asr_record, source, stream, expected, rules, "failed" if result.findings else "passed")
    if result.findings:
        pytest.fail(f"{headline} (breaks {', '.join(result.rules)}):\n" + "\n".join(describe(result.findings)),
                    pytrace=False)


# --- helpers ---------------------------------------------------------------------------


def _disguised(source: Path, seed: int, runner: ProducerRunner, asr_record: Callable[..., None]) -> Path:
    """The input's disguised copy; when disguising it hangs, the suite's error (the run is incomplete)."""
    try:
        return disguised_input(source, seed, runner.scratch)
    except StepHung as error:
        asr_record(suite_error=str(error))
        pytest.skip(str(error))


def _path(producer_input: ProducerInput | Path) -> Path:
    """The input's file (the plugin gives a ProducerInput, with its test ID and path)."""
    return producer_input if isinstance(producer_input, Path) else Path(producer_input.path)


def _compare_with_baseline(source: Path, runner: ProducerRunner, variant: Variant, asr_record: Callable[..., None]) -> None:
    baseline = runner.baseline(source)
    if baseline.outcome is not Outcome.CONVERTED or baseline.stream is None:
        pytest.skip(f"no baseline stream to compare with ({baseline.outcome.value}; see test_output_conforms)")
    expected = f"the baseline stream, record for record (producer.instance aside), when converted {variant.description}"
    conversion = runner.convert(source, variant)
    stream = _stream_or_fail(conversion, source, expected, variant.rules, asr_record,
                             f" when converted {variant.description}")
    found = differences(baseline.stream, stream)
    rules = rules_of(found, variant.rules) if found else list(variant.rules)
    _record(asr_record, source, stream, expected, rules, "failed" if found else "passed")
    if found:
        pytest.fail(
            f"{source.name}: converting {variant.description} changed the stream; every value must come from the "
            f"input, not from the conversion environment (breaks {', '.join(rules)}). Baseline -> {variant.name}:\n"
            + "\n".join(summarize(found, baseline.stream, stream)), pytrace=False)


def _stream_or_fail(conversion: Conversion, source: Path, expected: str, rules: Iterable[str], asr_record: Callable[..., None],
                    when: str = "") -> bytes:
    if conversion.outcome is Outcome.CONVERTED and conversion.stream is not None:
        return conversion.stream
    asr_record(answer=conversion.outcome.value)
    _record(asr_record, source, _shown(conversion), expected, list(rules), "failed")
    if conversion.outcome is Outcome.REFUSED:
        pytest.fail(f"{source.name}: refused a good input{when}: {conversion.refusal or '(no message)'}\n"
                    f"{conversion.explain()}", pytrace=False)
    pytest.fail(f"{source.name}: no stream{when}\n{conversion.explain()}", pytrace=False)


def _shown(conversion: Conversion) -> str:
    if conversion.outcome is Outcome.CONVERTED and conversion.stream is not None:
        return conversion.stream.decode("utf-8", "replace")
    return conversion.explain()


def _record(record: Callable[..., None], source: Path, output: str | bytes, expected: str, rules: Iterable[str],
            status: str) -> None:
    """What run_validator_case records, for reports."""
    text = output.decode("utf-8", "replace") if isinstance(output, bytes) else output
    if len(text) > OUTPUT_LIMIT:
        text = text[:OUTPUT_LIMIT] + f"\n... ({len(text) - OUTPUT_LIMIT} more characters)"
    given = inline_input(Path(source).read_bytes()) if status == "failed" and Path(source).is_file() else {}
    record(status=status, rules=rules, output=text, expected=expected, **given)
