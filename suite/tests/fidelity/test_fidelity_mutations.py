"""Source mutations: each changes the source, the example converter follows, a converter that
ignores its input does not."""

from __future__ import annotations

import pytest
from fidelity_helpers import EXAMPLE, MISBEHAVING, SAMPLES, convert, sample_id

from asr_conformance.fidelity.claude_code import WITNESS
from asr_conformance.fidelity.claude_code_mutations import MUTATIONS
from asr_conformance.fidelity.compare import check_fidelity
from asr_conformance.fidelity.mutations import SourceMutation

#: (mutation, sample) pairs where the sample has something to mutate, found at collection time.
APPLICABLE = [(m, p) for m in MUTATIONS for p in SAMPLES if m.apply(p.read_bytes()) is not None]


def findings(converter, mutation: SourceMutation, data: bytes):
    mutated = mutation.apply(data)
    assert mutated is not None
    before, after = WITNESS.read(data), WITNESS.read(mutated)
    stream_before, stream_after = convert(converter, data), convert(converter, mutated)
    return mutation.expect(before, after, stream_before, stream_after) + check_fidelity(after, stream_after)


def test_every_mutation_applies_to_some_sample() -> None:
    assert {m.name for m, _ in APPLICABLE} == {m.name for m in MUTATIONS}


@pytest.mark.parametrize("mutation, path", APPLICABLE, ids=[f"{m.name}-{sample_id(p)}" for m, p in APPLICABLE])
def test_mutation_changes_the_facts(mutation: SourceMutation, path) -> None:
    data = path.read_bytes()
    before, after = WITNESS.read(data), WITNESS.read(mutation.apply(data))
    assert before != after


@pytest.mark.parametrize("mutation, path", APPLICABLE, ids=[f"{m.name}-{sample_id(p)}" for m, p in APPLICABLE])
def test_example_converter_follows_every_mutation(mutation: SourceMutation, path) -> None:
    assert findings(EXAMPLE, mutation, path.read_bytes()) == []


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_a_converter_that_ignores_its_input_fails_every_mutation(mutation: SourceMutation) -> None:
    fixed = MISBEHAVING / "cc-fixed-output"
    path = next(p for m, p in APPLICABLE if m is mutation)
    data = path.read_bytes()
    mutated = mutation.apply(data)
    own = mutation.expect(WITNESS.read(data), WITNESS.read(mutated), convert(fixed, data), convert(fixed, mutated))
    assert own and {f.rule for f in own} <= {mutation.rule, "ASR-157", "ASR-250"}


@pytest.mark.parametrize("mutation, converter", [
    ("delete-result", "cc-synthesizes-dangling-results"),
    ("delete-call", "cc-drops-orphans"),
    ("flip-error", "cc-failed-as-completed"),
    ("rename-tool", "cc-lowercases-tool-names"),
    ("move-timestamp", "cc-shifts-timestamps"),
    ("change-message", "cc-collapses-whitespace"),
    ("duplicate-call-id", "cc-renumbers-call-ids"),
])
def test_mutation_expectation_catches_its_bug(mutation: str, converter: str) -> None:
    chosen = next(m for m in MUTATIONS if m.name == mutation)
    hits = set()
    for m, path in APPLICABLE:
        if m is chosen:
            data = path.read_bytes()
            mutated = m.apply(data)
            stream = convert(MISBEHAVING / converter, mutated)
            hits |= {f.rule for f in m.expect(WITNESS.read(data), WITNESS.read(mutated), [], stream)}
    assert chosen.rule in hits


def test_nothing_to_mutate_gives_none() -> None:
    plain = next(p for p in SAMPLES if p.name == "plain-chat.jsonl").read_bytes()
    assert [m.name for m in MUTATIONS if m.apply(plain) is None] == [
        "delete-result", "delete-call", "duplicate-call-id", "flip-error", "rename-tool", "move-timestamp"]
    assert all(m.apply(b"not json\n") is None for m in MUTATIONS)
