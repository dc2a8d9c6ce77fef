"""Reader fuzzing alone finds every seeded-bug reader, naming its rule.

The fuzz session (the one-shot script reading each generated stream, the reference reader as
oracle, shrinking) runs the property of the feature that exposes each bug, as
``pytest --role=reader --implementation=BUG -m fuzz`` does, and must fail with the bug's rule
and write a reader case that holds it."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings

from asr_conformance.generators.mutators import serialize
from asr_conformance.generators.reader_streams import FEATURES, reader_streams
from asr_conformance.harness.adapters.targets import Target
from asr_conformance.harness.fuzzing.profiles import ShrinkBudget
from asr_conformance.harness.fuzzing.readers import ReaderFuzzSession
from asr_conformance.harness.judging.corpus_check import reader_disagreement
from asr_conformance.vocabulary.cases import iter_cases

MISBEHAVING = Path(__file__).resolve().parents[3] / "examples" / "misbehaving"
#: Each seeded-bug reader: the feature whose streams expose it, and the rule it breaks.
SEEDED = {
    "merges-client-members": ("client", "ASR-179"),
    "merges-project": ("project", "ASR-160"),
    "required-from-latest-declaration": ("extensions", "ASR-163"),
    "drops-null-primary-head": ("heads", "ASR-160"),
    "counts-call-revisions-as-calls": ("call-revision", "ASR-263"),
    "removed-takes-records-out": ("removed", "ASR-174"),
    "decision-without-status-unresolved": ("decision-without-status", "ASR-269"),
    "drops-compact-beside-permission": ("compact-beside-command", "ASR-279"),
    "merges-terminal-revisions": ("terminal-revisions", "ASR-271"),
    "process-id-as-terminal-fallback": ("terminal-reads", "ASR-290"),
    "keeps-old-title-source": ("title", "ASR-181"),
    "reclassifies-content-level": ("content-level", "ASR-165"),
    "pairs-by-position": ("call-revision", "ASR-263"),
    "falls-back-to-native-call-id": ("shared-native-id", "ASR-262"),
    "dangling-as-completed": ("call-revision", "ASR-265"),
}


@pytest.mark.parametrize("name", sorted(SEEDED))
def test_reader_fuzzing_alone_finds_the_seeded_bug(name: str, tmp_path: Path) -> None:
    feature, rule = SEEDED[name]
    program = MISBEHAVING / name
    target = Target(key=name, name=name, version=None, command=(str(program),), protocol="oneshot", timeout=60.0,
                    roles=("reader",))
    adapter = target.adapter("reader")
    session = ReaderFuzzSession(adapter, tmp_path / "scratch", tmp_path / "counterexamples",
                                [f"--implementation={program}", "--role=reader"],
                                settings(max_examples=8, derandomize=True, database=None, deadline=None),
                                None, ShrinkBudget(seconds=0.2, steps=2))

    @session.settings
    @given(reader_streams(feature))
    def agrees(records: list[dict]) -> None:
        session.expect_view(records, serialize(records), f"fuzz-{feature}", "a stream", FEATURES[feature].rules)

    try:
        with pytest.raises(pytest.fail.Exception) as failure:
            session.run(agrees)
    finally:
        adapter.close()
    assert rule in session.broken, str(failure.value)[:3000]
    [case] = iter_cases(tmp_path / "counterexamples", role="reader")
    assert rule in case.rules and case.id.startswith(f"reader/{session.broken[0]}/")
    assert reader_disagreement(case) is None
