"""Validator role, fuzzed: generated streams through the implementation's adapter.

Valid and adversarial-valid streams must be accepted; a stream broken by one
rule's mutator must be rejected (naming that rule, when the implementation
names rules); damaged bytes must get a verdict, never a crash or a hang, and
must be rejected where RFC 8259 settles it (``damage.SETTLED_DAMAGE``).  Every
property draws a long shape too (``generators.long_streams``): in some examples thousands of
generated records, a MiB or more, are spliced in around the defect, so that it sits anywhere, the
last line included; the number shrinks to none.  A
failure says what the mutator changed (``generators.changes``), is shrunk by
Hypothesis within the shrink budget and written as a ready case file.

The long shapes are the session's (``ValidatorFuzzSession.long_shapes``: filler from the pool of the
run's seed, none in the cost benchmark's baseline), bound in each test to the name its property has
always drawn them by: Hypothesis keys a property's examples on its source, decorators included, so a
derandomized profile draws the same examples and an example database replays the same entries."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from asr_conformance.generators.changes import explain, mutate
from asr_conformance.generators.damage import DAMAGES
from asr_conformance.generators.long_streams import LongShape, defect_lines, spliced
from asr_conformance.generators.mutators import drawn_mode, serialize
from asr_conformance.generators.registry import registry
from asr_conformance.generators.streams import adversarial_streams, valid_streams
from asr_conformance.harness.fuzzing.profiles import ValidatorFuzzSession

pytestmark = [pytest.mark.conformance, pytest.mark.validator, pytest.mark.fuzz]


def test_accepts_valid_streams(asr_fuzz: ValidatorFuzzSession) -> None:
    long_shapes = asr_fuzz.long_shapes  # the run's (module docstring)

    @asr_fuzz.settings
    @given(valid_streams(), long_shapes(), st.data())
    def accepts(records: list[dict[str, Any]], shape: LongShape, data: st.DataObject) -> None:
        stream = shape.splice(data.draw, serialize(shape.spread(records))).data  # type: ignore[arg-type]
        asr_fuzz.expect("valid", stream, "accepts-valid", ["X-SHAPE"], "a valid stream built by construction")

    asr_fuzz.run(accepts)


def test_accepts_adversarial_valid_streams(asr_fuzz: ValidatorFuzzSession) -> None:
    long_shapes = asr_fuzz.long_shapes  # the run's (module docstring)

    @asr_fuzz.settings
    @given(adversarial_streams(), long_shapes(), st.data())
    def accepts(records: list[dict[str, Any]], shape: LongShape, data: st.DataObject) -> None:
        stream = shape.splice(data.draw, serialize(shape.spread(records))).data  # type: ignore[arg-type]
        asr_fuzz.expect("valid", stream, "accepts-adversarial", ["ASR-262", "ASR-264", "ASR-168"],
                        "a valid stream with duplicate native call IDs, two results for one call, stopReason "
                        "beside state error, records after ended, orphans, dangling calls, pending permissions, "
                        "vendor profiles and Unicode strings")

    asr_fuzz.run(accepts)


@pytest.mark.parametrize(
    "rule", [pytest.param(rule, marks=getattr(pytest.mark, rule)) for rule in sorted(registry())]
)
def test_rejects_mutated_streams(asr_fuzz: ValidatorFuzzSession, rule: str) -> None:
    mutator = registry()[rule]

    long_shapes = asr_fuzz.long_shapes  # the run's (module docstring)

    @asr_fuzz.settings
    @given(valid_streams(max_steps=12), long_shapes(), st.data())
    def rejects(records: list[dict[str, Any]], shape: LongShape, data: st.DataObject) -> None:
        # DataObject.draw draws as a DrawFn does, but lacks the __signature__ attribute the protocol lists.
        mutation = mutate(mutator, data.draw, shape.spread(records), rule)  # type: ignore[arg-type]
        mode = drawn_mode(rule)
        # The first block of filler goes before the defect in most long examples: thousands of lines from the start.
        mutation = spliced(mutation, shape.splice(data.draw, mutation.data, defect_lines(mutation)))  # type: ignore[arg-type]
        # A mode resting on an open assumption is reported, not scored (cases/README.md, Scoring policy).
        asr_fuzz.expect(mode.expected, mutation.data, f"mutated-{rule}", list(mode.names),
                        f"a valid stream broken by the {rule} mutator ({mode.name}: {mode.defect})",
                        mutation=replace(mutation, mode=mode.name))

    asr_fuzz.run(rejects)


@pytest.mark.parametrize("kind", sorted(DAMAGES))
def test_survives_damaged_bytes(asr_fuzz: ValidatorFuzzSession, kind: str) -> None:
    damage = DAMAGES[kind]

    long_shapes = asr_fuzz.long_shapes  # the run's (module docstring)

    @asr_fuzz.settings
    @given(valid_streams(max_steps=6), long_shapes(), st.data())
    def survives(records: list[dict[str, Any]], shape: LongShape, data: st.DataObject) -> None:
        records = shape.spread(records)
        # DataObject.draw draws as a DrawFn does, but lacks the __signature__ attribute the protocol lists.
        mutation = explain(records, damage(data.draw, serialize(records)), "damage", kind)  # type: ignore[arg-type]
        mutation = spliced(mutation, shape.splice(data.draw, mutation.data, defect_lines(mutation)))  # type: ignore[arg-type]
        asr_fuzz.expect_damaged(mutation.data, f"damaged-{kind}", f"a valid stream with {kind} damage", kind=kind,
                                mutation=mutation)

    asr_fuzz.run(survives)
