"""The disguise: a rewritten transcript shares no ID, time, digest or project path with its source, and the
witness reads the same facts from it, up to the renaming itself."""

from __future__ import annotations

import dataclasses
import hashlib
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asr_conformance.fidelity.disguise import Disguise, disguise, draw
from asr_conformance.generators.native import formats, generator
from asr_conformance.harness.judging.fidelity import disguised_input
from asr_conformance.packs.builtin import builtin_packs

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = sorted(p for p in (ROOT / "examples").glob("*-converter/samples/**/*.json*"))
WITNESSES = [p.witness for p in builtin_packs()]
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


#: Fact fields that hold the suite's own words (ASR states), which no disguise rewrites.
VOCABULARY_FIELDS = frozenset({"states", "statuses"})


def witness_of(data: bytes):
    return next(w for w in WITNESSES if w.sniff(data))


def renamed(value: Any, key: Disguise) -> Any:
    """The facts as plain values with every string renamed; excerpts (for people, cut anywhere) left out, and
    the stream states and statuses a fact allows kept (ASR vocabulary the witness names, not text of the source)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: renamed(getattr(value, f.name), key) if f.name not in VOCABULARY_FIELDS else plain(getattr(value, f.name))
                for f in dataclasses.fields(value) if f.name != "excerpt"}
    if isinstance(value, dict):
        return {renamed(k, key): renamed(v, key) for k, v in value.items()}
    if isinstance(value, frozenset | set):
        return sorted(map(repr, (renamed(v, key) for v in value)))
    if isinstance(value, list | tuple):
        return [renamed(v, key) for v in value]
    return key.rename(value) if isinstance(value, str) else value


def plain(value: Any) -> Any:
    """The facts as plain values, nothing renamed."""
    return renamed(value, Disguise({}, timedelta(0), {}))


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_the_witness_reads_the_same_facts_from_a_disguised_sample(sample: Path) -> None:
    data = sample.read_bytes()
    key = draw(data, 20)
    copy = key.rename_bytes(data)
    witness = witness_of(data)
    assert witness.sniff(copy)
    assert plain(witness.read(copy)) == renamed(witness.read(data), key)


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_a_disguised_sample_keeps_no_id_time_or_path_of_its_source(sample: Path) -> None:
    data = sample.read_bytes()
    key = draw(data, 21)
    copy = key.rename_bytes(data).decode()
    facts = witness_of(data).read(data)
    assert hashlib.sha256(copy.encode()).digest() != hashlib.sha256(data).digest()
    assert len(copy.encode()) == len(data), "the rewrite keeps every length (byte offsets stay right)"
    assert facts.session_ids and not any(i in copy for i in facts.session_ids)
    assert not any(u in copy for u in UUID.findall(data.decode()))
    assert not any(t in copy for t in facts.times)
    assert not any(old in copy for old in key.paths)


def test_the_same_id_gets_the_same_new_id_everywhere() -> None:
    data = (ROOT / "examples/claude-code-converter/samples/subagent-task.jsonl").read_bytes()
    key = draw(data, 3)
    copy = key.rename_bytes(data).decode()
    for old, new in key.ids.items():
        assert copy.count(new) == data.decode().count(old), old
    quoted = key.rename("agentId: a4c81f2 (for resuming")
    assert quoted in copy and key.ids["a4c81f2"] in quoted, "an ID quoted in text moves with it"


def test_the_seed_decides_the_disguise() -> None:
    data = SAMPLES[0].read_bytes()
    assert disguise(data, 5) == disguise(data, 5)
    assert disguise(data, 5) != disguise(data, 6)


def test_times_keep_their_order_precision_and_notation() -> None:
    key = Disguise({}, timedelta(days=-400, seconds=7), {})
    assert key.rename("2026-03-01T00:00:00.123456789+05:30 and 2026-03-01 00:00:01Z") == (
        "2025-01-25T00:00:07.123456789+05:30 and 2025-01-25 00:00:08Z")


def test_numbers_and_words_are_not_renamed() -> None:
    data = b'{"id":"4711","pid":4711,"name":"abcdefgh","uuid":"c0000012-0000-4000-8000-000000000012","n":123456789012}\n'
    copy = disguise(data, 1)
    assert b'"id":"4711","pid":4711,"name":"abcdefgh"' in copy and b'"n":123456789012' in copy
    assert b"c0000012-0000-4000-8000-000000000012" not in copy


VARIANTS = [(f, v) for f in formats() for v in generator(f).VARIANTS]


@pytest.mark.parametrize(("format", "variant"), VARIANTS, ids=[f"{f}-{v}" for f, v in VARIANTS])
@settings(max_examples=12, deadline=None, derandomize=True, database=None)
@given(data=st.data(), seed=st.integers(0, 2**32 - 1))
def test_generated_transcripts_keep_their_facts_when_disguised(format: str, variant: str, data: st.DataObject,
                                                               seed: int) -> None:
    module = generator(format)
    available = getattr(module, "available", lambda feature, variant: True)
    feature = data.draw(st.sampled_from([f for f in sorted(module.FEATURES) if available(f, variant)]))
    original = data.draw(module.transcripts(feature, variant)).data()
    key = draw(original, seed)
    witness = witness_of(original)
    copy = key.rename_bytes(original)
    assert module.variant_of(copy) == module.variant_of(original)
    assert plain(witness.read(copy)) == renamed(witness.read(original), key)


def test_the_copy_a_producer_test_sends_is_drawn_from_the_run_seed(tmp_path: Path) -> None:
    source = SAMPLES[0]
    first = disguised_input(source, 7, tmp_path / "a").read_bytes()
    assert first == disguised_input(source, 7, tmp_path / "b").read_bytes(), "--hypothesis-seed replays it"
    assert first != disguised_input(source, 8, tmp_path / "a").read_bytes() != source.read_bytes()
    assert disguised_input(source, 7, tmp_path / "a").name != source.name


def test_a_disguise_that_hangs_is_named_not_waited_for(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past its time, disguising stops the wait with the input's name (the run is incomplete), where the
    progress line would stop moving."""
    import threading

    from asr_conformance.harness.judging import fidelity

    release = threading.Event()
    monkeypatch.setattr(fidelity, "disguise", lambda data, seed: release.wait(30) and data)
    try:
        with pytest.raises(fidelity.StepHung, match=rf"disguising {SAMPLES[0].name} \(.* bytes\) took over 0.2 s"):
            disguised_input(SAMPLES[0], 7, tmp_path, seconds=0.2)
    finally:
        release.set()
    assert not (tmp_path / "disguised").exists() or not any((tmp_path / "disguised").iterdir()), "no copy is left"
    monkeypatch.setattr(fidelity, "disguise", lambda data, seed: data + b"")
    assert disguised_input(SAMPLES[0], 7, tmp_path, seconds=5).read_bytes() == SAMPLES[0].read_bytes()
