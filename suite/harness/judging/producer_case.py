"""The producer's judging, one function per producer test: what each test does with the implementation's
conversions, records for reports and decides (pass, fail, skip). Beside the validator's
(``judging.validator.run_validator_case``) and the reader's; ``suite/conformance/test_producer.py``
only parametrizes and calls these.

The pack that judges an input is the one chosen for it at collection (``packs.selection.SourceInput``,
carried on each test of the input and on each ``SourceEdit``): every test of the input uses that choice,
and the stream's header is held to it, never a second sniffing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

from asr_conformance.harness.adapters.answers import Conversion, Outcome
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
)
from asr_conformance.harness.judging.producer import (
    OUTPUT_RULES,
    ProducerRunner,
    Variant,
    bounded_differences,
    damaged_inputs,
    output_problems,
    rules_of,
    summarize,
)
from asr_conformance.packs.registry import Packs
from asr_conformance.packs.selection import SourceInput
from asr_conformance.vocabulary.inline import inline_input

Record = Callable[..., None]
OUTPUT_LIMIT = 20_000
PROBLEM_LIMIT = 20


def run_output_case(source: Path, runner: ProducerRunner, record: Record) -> None:
    """The baseline conversion exits 0 with a stream that conforms."""
    conversion = runner.baseline(source)
    expected = "exit 0 with a stream that conforms"
    stream = _stream_or_fail(conversion, source, expected, OUTPUT_RULES, record)
    problems = output_problems(stream)
    broken = sorted({p.rule for p in problems})
    _record(record, source, stream, expected, broken or OUTPUT_RULES, "failed" if problems else "passed")
    if problems:
        shown = [str(p) for p in problems[:PROBLEM_LIMIT]]
        if len(problems) > PROBLEM_LIMIT:
            shown.append(f"... and {len(problems) - PROBLEM_LIMIT} more")
        pytest.fail(f"{source.name}: the stream breaks {', '.join(broken)}:\n" + "\n".join(shown), pytrace=False)


def run_variant_case(source: Path, runner: ProducerRunner, variant: Variant, record: Record) -> None:
    """Converted again under another environment (or just again), the stream is the same."""
    if not variant.available:
        pytest.skip(f"the {variant.name} variant is unavailable here: {variant.unavailable}")
    _compare_with_baseline(source, runner, variant, record)


def run_damaged_case(source: Path, runner: ProducerRunner, damage: str, folder: Path, record: Record) -> None:
    """No ASR rule governs a refusal (docs/contract.md §2.4 and §6 do); a stream, when given, must conform."""
    damaged = folder / f"{source.stem}.{damage}{source.suffix}"
    damaged.write_bytes(damaged_inputs(source.read_bytes())[damage])
    conversion = runner.convert(damaged, "baseline")
    expected = "a refusal (non-zero exit) with a message, or a stream that conforms"
    output = _shown(conversion)
    if conversion.outcome is Outcome.REFUSED:
        refused_with_reason = bool(conversion.refusal.strip())
        _record(record, damaged, output, expected, [], "passed" if refused_with_reason else "failed")
        if not refused_with_reason:
            pytest.fail(f"{damaged.name} ({damage} copy of {source.name}): refused without a message; "
                        f"a refusal says why on stderr\n{conversion.explain()}", pytrace=False)
        return
    if conversion.outcome is not Outcome.CONVERTED or conversion.stream is None:
        record(answer=conversion.outcome.value)
        _record(record, damaged, output, expected, [], "failed")
        pytest.fail(f"{damaged.name} ({damage} copy of {source.name}): {conversion.outcome.value} on "
                    "damaged input; a producer refuses it (non-zero exit, a message on stderr: docs/contract.md §6) "
                    f"or converts it to a stream that conforms\n{conversion.explain()}", pytrace=False)
    problems = output_problems(conversion.stream)
    broken = sorted({p.rule for p in problems})
    _record(record, damaged, output, expected, broken, "failed" if problems else "passed")
    if problems:
        pytest.fail(f"{damaged.name} ({damage} copy of {source.name}): exit 0 with a stream that breaks "
                    f"{', '.join(broken)}; refuse damaged input instead:\n"
                    + "\n".join(str(p) for p in problems[:PROBLEM_LIMIT]), pytrace=False)


def run_fidelity_case(given: SourceInput, runner: ProducerRunner, record: Record) -> None:
    """The stream keeps what the native input records and invents nothing (the witness of the pack chosen for
    the input at collection reads it)."""
    source = _file(given)
    baseline = runner.baseline(source)
    if baseline.outcome is not Outcome.CONVERTED or baseline.stream is None:
        pytest.skip(f"no stream to hold to its source ({baseline.outcome.value}; see test_output_conforms)")
    result = judge_fidelity(source.read_bytes(), baseline.stream, name=source.name, source=given,
                            readings=runner.readings)
    _judge_fidelity_result(result, source, baseline.stream, "a stream that keeps every fact of its source",
                           record, f"{source.name}: the stream does not follow its source")


def run_disguised_case(given: SourceInput, runner: ProducerRunner, packs: Packs, seed: int, record: Record) -> None:
    """A disguised copy of the input (fresh IDs, shifted times, a renamed project: docs/contract.md §6.2) is
    held to its source like the input itself, so a converter that recognises the input cannot pass on that.
    The copy is another input: it is sniffed among ``packs`` when it is judged."""
    source = _file(given)
    # An input no pack reads is not disguised: judged as in test_fidelity, it is not checked for the same reason.
    known = given.pack is not None
    copy = _disguised(source, seed, runner, record) if known else source
    original = runner.baseline(source)
    if original.outcome is not Outcome.CONVERTED or original.stream is None:
        pytest.skip(f"no stream to hold to its source ({original.outcome.value}; see test_output_conforms)")
    baseline = runner.baseline(copy)
    if baseline.outcome is not Outcome.CONVERTED or baseline.stream is None:
        # The input converts and its disguised copy, the same transcript, does not: it told the two apart.
        record(answer=baseline.outcome.value)
        _record(record, copy, _shown(baseline), "a stream of the disguised copy", list(FIDELITY_RULES), "failed")
        pytest.fail(f"{source.name}, disguised: no stream ({baseline.outcome.value}); the copy is the same "
                    f"transcript with fresh IDs and shifted times\n{baseline.explain()}", pytrace=False)
    # The copy is another input, sniffed now; an input no pack read is judged as it was made at collection.
    result = judge_fidelity(copy.read_bytes(), baseline.stream, packs, f"the disguised copy of {source.name}",
                            source=None if known else given, readings=runner.readings)
    _judge_fidelity_result(result, copy, baseline.stream, "a stream that keeps every fact of its source",
                           record, f"{source.name}, disguised (fresh IDs, shifted times): the stream does not "
                           "follow its source")


def run_source_edit_case(source_edit: SourceEdit, runner: ProducerRunner, folder: Path, seed: int,
                         record: Record) -> None:
    """An edited copy of the input converts to a stream that changed exactly as the edit implies; the edit is
    made on a disguised copy, so the edited input cannot be matched to the one it came from. The pack is the
    one chosen for the input at collection (``SourceInput.pack``)."""
    original = _file(source_edit.source)
    if source_edit.mutation is None:
        pytest.skip("source edits not tried: no witness reads this input, so it cannot be edited in known ways")
    pack = source_edit.source.pack
    mutation = mutation_named(pack, source_edit.mutation) if pack is not None else None
    if pack is None or mutation is None:
        why = f"the {source_edit.mutation} edit is not offered for this input"
        record(fidelity_not_checked=why)
        pytest.skip(f"fidelity not checked: {why}")
    source = _disguised(original, seed, runner, record)
    data = source.read_bytes()
    baseline = runner.baseline(source)
    if baseline.outcome is not Outcome.CONVERTED or baseline.stream is None:
        pytest.skip(f"no stream to compare with ({baseline.outcome.value}; see test_fidelity_disguised)")

    def convert(edited: bytes) -> bytes | str:
        copy = folder / f"edited{source.suffix}"
        copy.write_bytes(edited)
        conversion = runner.convert(copy, "baseline")
        if conversion.outcome is Outcome.CONVERTED and conversion.stream is not None:
            return conversion.stream
        return f"{conversion.outcome.value}: {conversion.refusal or conversion.explain()}"

    result = judge_mutation(mutation, pack, data, baseline.stream, convert, f"the disguised copy of {original.name}",
                            runner.readings)
    _judge_fidelity_result(result, source, baseline.stream, f"after the edit: {mutation.description}",
                           record, f"{original.name}, disguised and edited ({mutation.name}): the stream did "
                           "not follow")


def _file(given: SourceInput) -> Path:
    """The file of an input made at collection (every producer input is a file)."""
    if given.path is None:
        raise ValueError(f"{given.id}: a producer input without a file")
    return given.path


def _judge_fidelity_result(result: Fidelity, source: Path, stream: bytes, expected: str, record: Record,
                           headline: str) -> None:
    if result.judge is not None:
        record(judge=result.judge.to_json())
    if result.reported:
        record(fidelity_reported=tuple(describe(result.reported)))
    if result.error is not None:
        # The judge failed, not the implementation: no verdict on this input, and the run is incomplete.
        record(suite_error=result.error)
        pytest.skip(f"{source.name}: {result.error}")
    if result.not_checked is not None and not result.findings:
        record(fidelity_not_checked=result.unchecked)
        pytest.skip(f"fidelity {result.not_checked}")
    rules = result.rules or list(FIDELITY_RULES)
    _record(record, source, stream, expected, rules, "failed" if result.findings else "passed")
    if result.findings:
        pytest.fail(f"{headline} (breaks {', '.join(result.rules)}):\n" + "\n".join(describe(result.findings)),
                    pytrace=False)


def _disguised(source: Path, seed: int, runner: ProducerRunner, record: Record) -> Path:
    """The input's disguised copy; when disguising it hangs, the suite's error (the run is incomplete)."""
    try:
        return disguised_input(source, seed, runner.scratch)
    except StepHung as error:
        record(suite_error=str(error))
        pytest.skip(str(error))


def _compare_with_baseline(source: Path, runner: ProducerRunner, variant: Variant, record: Record) -> None:
    baseline = runner.baseline(source)
    if baseline.outcome is not Outcome.CONVERTED or baseline.stream is None:
        pytest.skip(f"no baseline stream to compare with ({baseline.outcome.value}; see test_output_conforms)")
    expected = f"the baseline stream, record for record (producer.instance aside), when converted {variant.description}"
    conversion = runner.convert(source, variant)
    stream = _stream_or_fail(conversion, source, expected, variant.rules, record,
                             f" when converted {variant.description}")
    try:  # bounded like every step of the suite's own: past the limit, the suite's error names the step and input
        found = bounded_differences(baseline.stream, stream, f"comparing the stream of {source.name} converted "
                                    f"{variant.description} with its baseline")
    except StepHung as error:
        record(suite_error=str(error))
        pytest.skip(str(error))
    rules = rules_of(found, variant.rules) if found else list(variant.rules)
    _record(record, source, stream, expected, rules, "failed" if found else "passed")
    if found:
        pytest.fail(
            f"{source.name}: converting {variant.description} changed the stream; every value must come from the "
            f"input, not from the conversion environment (breaks {', '.join(rules)}). Baseline -> {variant.name}:\n"
            + "\n".join(summarize(found, baseline.stream, stream)), pytrace=False)


def _stream_or_fail(conversion: Conversion, source: Path, expected: str, rules: Iterable[str], record: Record,
                    when: str = "") -> bytes:
    if conversion.outcome is Outcome.CONVERTED and conversion.stream is not None:
        return conversion.stream
    record(answer=conversion.outcome.value)
    _record(record, source, _shown(conversion), expected, list(rules), "failed")
    if conversion.outcome is Outcome.REFUSED:
        pytest.fail(f"{source.name}: refused a good input{when}: {conversion.refusal or '(no message)'}\n"
                    f"{conversion.explain()}", pytrace=False)
    pytest.fail(f"{source.name}: no stream{when}\n{conversion.explain()}", pytrace=False)


def _shown(conversion: Conversion) -> str:
    if conversion.outcome is Outcome.CONVERTED and conversion.stream is not None:
        return conversion.stream.decode("utf-8", "replace")
    return conversion.explain()


def _record(record: Record, source: Path, output: str | bytes, expected: str, rules: Iterable[str],
            status: str) -> None:
    """What run_validator_case records, for reports."""
    text = output.decode("utf-8", "replace") if isinstance(output, bytes) else output
    if len(text) > OUTPUT_LIMIT:
        text = text[:OUTPUT_LIMIT] + f"\n... ({len(text) - OUTPUT_LIMIT} more characters)"
    given = inline_input(Path(source).read_bytes()) if status == "failed" and Path(source).is_file() else {}
    record(status=status, rules=rules, output=text, expected=expected, **given)
