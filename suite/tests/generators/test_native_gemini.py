"""The Gemini CLI session generator (asr_conformance.generators.native.gemini).

Generated sessions must be valid by construction (the witness reads them, they sniff as Gemini,
``variant_of`` names their layout) and hold the features they claim, checked through the
witness's facts and the raw records. They must be realistic: the example converter turns them
into valid streams that pass every fidelity check and every source mutation. And they must be
adversarial: each seeded-bug converter (examples/misbehaving/gemini-*) is caught within a small
derandomized budget by the feature that exposes it.
"""

from __future__ import annotations

import functools
import json
import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from in_process import run_in_process

from asr_conformance.fidelity.facts import SourceFacts
from asr_conformance.fidelity.gemini import WITNESS
from asr_conformance.generators.native import gemini
from asr_conformance.generators.native.common import NativeTranscript, feature_names
from asr_conformance.harness.judging.fidelity import judge_fidelity, judge_mutation, mutations_of
from asr_conformance.packs.registry import installed
from asr_conformance.reference import gemini_converter
from asr_conformance.reference.checks import validate_bytes

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ROOT / "examples" / "gemini-converter" / "samples"
MISBEHAVING = ROOT / "examples" / "misbehaving"
REQUESTS = [*feature_names(gemini.FEATURES), gemini.MIXED]
COMBINATIONS = [(v, f) for v in gemini.VARIANTS for f in REQUESTS if gemini.available(f, v)]
SAFE = 2**53 - 1
#: Each seeded bug, the feature that catches it and the rule the fidelity checks name.
BUGS = {
    "gemini-cancelled-as-completed": ("cancelled", "ASR-258"),
    "gemini-drops-parallel-calls": ("parallel", "ASR-157"),
    "gemini-exit-code-from-text": ("exit-code-in-text", "ASR-260"),
    "gemini-first-copy-wins": ("re-recorded", "ASR-157"),
    "gemini-kind-from-name": ("calls", "ASR-253"),
    "gemini-null-result-as-text": ("null-results", "ASR-259"),
    "gemini-renames-tools": ("calls", "ASR-252"),
    "gemini-results-for-pending-calls": ("awaiting-approval", "ASR-265"),
    "gemini-rewinds-one-too-many": ("rewinds", "ASR-157"),
    "gemini-shifts-timestamps": ("calls", "ASR-103"),
    "gemini-invents-turn-states": ("calls", "ASR-169"),
    "gemini-invents-hook-exit-codes": ("calls", "ASR-287"),
    "gemini-drops-approval-requests": ("awaiting-approval", "ASR-157"),
    "gemini-invents-trigger": ("plain", "ASR-186"),
    "gemini-invents-parent-turns": ("plain", "ASR-183"),
}


@functools.cache
def convert(data: bytes) -> bytes | str:
    """The example converter's stream, or why it refused (a sentence, as judge_mutation expects)."""
    try:
        return gemini_converter.convert(data)
    except gemini_converter.Refused as why:
        return f"refused: {why}"


@functools.cache
def run_script(script: Path, data: bytes) -> bytes:
    """A seeded-bug script's stream for these bytes (it must exit 0), the script run in this process as its
    command line would run it (``in_process.run_in_process``: the example's conversion imported through
    ``_gemini_wrapper`` and a change to its records), as the fidelity tests run them."""
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "session.jsonl"
        source.write_bytes(data)
        code, stdout, stderr = run_in_process(script, source)
    assert code == 0, f"{script.name} exited {code}: {stderr.decode(errors='replace')}"
    return stdout


def values(data: bytes) -> list[dict]:
    text = data.decode("utf-8")
    if text.startswith("{\n"):
        return [json.loads(text)]
    return [json.loads(raw) for raw in text.split("\n") if raw.strip()]


def copies(data: bytes) -> list[dict]:
    """Every message record, in every line (checkpoints and the one-object layout included)."""
    out = []
    for value in values(data):
        if isinstance(value.get("id"), str):
            out.append(value)
        holder = value.get("$set") if isinstance(value.get("$set"), dict) else value
        out += [m for m in holder.get("messages") or () if isinstance(m, dict)]
    return out


def numbers(value: object) -> list[float | int]:
    if isinstance(value, dict):
        return [n for v in value.values() for n in numbers(v)]
    if isinstance(value, list):
        return [n for v in value for n in numbers(v)]
    return [value] if isinstance(value, (int, float)) and not isinstance(value, bool) else []


def holds(feature: str, data: bytes, facts: SourceFacts) -> bool:
    """Whether the session holds the feature, read through the witness's facts where it can."""
    answered = {r.call_id: r for r in facts.results}
    records = values(data)
    if feature == "plain":
        return not facts.calls and bool(facts.messages or facts.skipped)
    if feature == "calls":
        return any(r.statuses == {"completed"} for r in facts.results)
    if feature == "parallel":
        return any(len(m.get("toolCalls") or ()) >= 2 for m in copies(data))
    if feature == "failed":
        return any(r.statuses == {"failed"} for r in facts.results)
    if feature == "cancelled":
        return any(r.statuses == {"cancelled", "interrupted"} for r in facts.results)
    if feature == "null-results":
        return any(not r.content_recorded for r in facts.results)
    if feature == "awaiting-approval":
        return any(c.call_id not in answered for c in facts.calls)
    if feature == "re-recorded":
        ids = [m["id"] for m in records if isinstance(m.get("id"), str)]
        return len(ids) > len(set(ids))
    if feature == "rewinds":
        return any("$rewindTo" in r for r in records) and facts.skipped.get("rewound or replaced messages", 0) > 0
    if feature == "set":
        return any("$set" in r and "messages" not in r["$set"] for r in records)
    if feature == "checkpoint":
        return any("$set" in r and "messages" in r["$set"] for r in records)
    if feature == "subagents":
        return records[0].get("kind") == "subagent" or any("agentId" in c for m in copies(data)
                                                            for c in m.get("toolCalls") or ())
    if feature == "unicode":  # in a message, a result or an argument: somewhere past ASCII, or a NUL
        return any(byte > 127 for byte in data) or b"\\u0000" in data
    if feature == "huge-integers":
        return any(abs(n) > SAFE for c in facts.calls for n in numbers(c.arguments))
    if feature == "exit-code-in-text":
        return any(re.search(r"^Exit Code: \d+$", "".join(r.model_texts or ()), re.M) for r in facts.results)
    if feature == "injected":
        return facts.skipped.get("injected or command user messages", 0) >= 2
    raise AssertionError(feature)


# --- valid by construction --------------------------------------------------------------------------


@pytest.mark.parametrize(("variant", "feature"), COMBINATIONS)
@settings(max_examples=8, derandomize=True, deadline=None, database=None)
@given(data=st.data())
def test_the_witness_reads_it_and_it_holds_the_feature(variant: str, feature: str, data: st.DataObject) -> None:
    transcript = data.draw(gemini.transcripts(feature, variant))
    raw = transcript.data()
    facts = WITNESS.read(raw)
    assert WITNESS.sniff(raw), transcript.summary()
    assert transcript.format == gemini.FORMAT == WITNESS.format
    assert transcript.variant == variant and gemini.variant_of(raw) == variant, transcript.summary()
    assert feature == gemini.MIXED or feature in transcript.features
    assert transcript.features <= gemini.AVAILABLE[variant]
    for held in transcript.features:
        assert holds(held, raw, facts), (held, transcript.summary())


# --- realistic: a faithful converter passes everything --------------------------------------------


@pytest.mark.parametrize(("variant", "feature"), COMBINATIONS)
@settings(max_examples=3, derandomize=True, deadline=None, database=None)
@given(data=st.data())
def test_the_example_converter_passes_every_check_and_mutation(variant: str, feature: str, data: st.DataObject) -> None:
    transcript = data.draw(gemini.transcripts(feature, variant))
    raw = transcript.data()
    stream = convert(raw)
    assert isinstance(stream, bytes), (stream, transcript.summary())
    outcome = validate_bytes(stream)
    assert outcome.valid, ([(d.rule, d.message) for d in outcome.errors][:5], transcript.summary())
    verdict = judge_fidelity(raw, stream)
    assert verdict.not_checked is None, verdict.not_checked
    assert not verdict.findings, ([(f.rule, f.message) for f in verdict.findings][:5], transcript.summary())
    mutations = list(mutations_of(installed().for_format(WITNESS.format)))
    assert mutations, "the witness offers no source edit: the loop below would check nothing"
    for mutation in mutations:
        judged = judge_mutation(mutation, installed().for_format(WITNESS.format), raw, stream, convert)
        assert not judged.findings, (mutation.name, [(f.rule, f.message) for f in judged.findings][:5], transcript.summary())


def test_every_mutation_applies_to_some_generated_session() -> None:
    applied: set[str] = set()

    @settings(max_examples=30, derandomize=True, deadline=None, database=None)
    @given(gemini.transcripts(gemini.MIXED))
    def collect(transcript: NativeTranscript) -> None:
        applied.update(m.name for m in mutations_of(installed().for_format(WITNESS.format)) if m.apply(transcript.data()) is not None)

    collect()
    assert applied == {m.name for m in mutations_of(installed().for_format(WITNESS.format))}


# --- adversarial: each seeded bug is caught ---------------------------------------------------------


def test_every_gemini_seeded_bug_has_a_feature() -> None:
    long_only = ("gemini-drops-late-calls",)  # only past the 1,000th message: test_fuzzing_finds_seeded_bugs.py
    assert sorted([*BUGS, *long_only]) == sorted(p.name for p in MISBEHAVING.glob("gemini-*"))


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_each_seeded_bug_is_caught_by_its_feature(bug: str) -> None:
    feature, rule = BUGS[bug]
    caught: set[str] = set()

    @settings(max_examples=8, derandomize=True, deadline=None, database=None)
    @given(gemini.transcripts(feature))
    def hunt(transcript: NativeTranscript) -> None:
        if rule in caught:
            return
        raw = transcript.data()
        stream = run_script(MISBEHAVING / bug, raw)
        assert validate_bytes(stream).valid, (bug, transcript.summary())
        verdict = judge_fidelity(raw, stream)
        assert verdict.not_checked is None, verdict.not_checked
        caught.update(verdict.rules)

    hunt()
    assert rule in caught, (bug, feature, caught)


# --- the strategy itself ------------------------------------------------------------------------------


def _examples(strategy: st.SearchStrategy[NativeTranscript], count: int) -> list[NativeTranscript]:
    found: list[NativeTranscript] = []

    @settings(max_examples=count, derandomize=True, deadline=None, database=None)
    @given(strategy)
    def collect(transcript: NativeTranscript) -> None:
        found.append(transcript)

    collect()
    return found


def test_generation_is_deterministic() -> None:
    first, again = _examples(gemini.transcripts(), 12), _examples(gemini.transcripts(), 12)
    assert [t.data() for t in first] == [t.data() for t in again]
    assert all(t.data().endswith(b"\n") and t.data().count(b"\n") == len(t.lines) for t in first)


def test_no_variant_asked_draws_json_lines_and_the_older_layout_only_when_asked() -> None:
    assert {t.variant for t in _examples(gemini.transcripts(), 20)} == {"jsonl"}
    assert {t.variant for t in _examples(gemini.transcripts("calls", "json"), 3)} == {"json"}


def test_huge_integers_are_written_as_javascript_writes_them() -> None:
    drawn = _examples(gemini.transcripts("huge-integers"), 4)
    assert drawn, "no huge-integers transcript was drawn"
    for transcript in drawn:
        text = transcript.data().decode()
        assert re.search(r'"nested":\{"ids":\[\d(\.\d+)?e\+\d+,7\]\}', text), transcript.summary()


def test_variant_of_reads_the_hand_written_samples() -> None:
    found = {p.name: gemini.variant_of(p.read_bytes()) for p in sorted(SAMPLES.iterdir())}
    assert found == {p.name: "json" if p.suffix == ".json" else "jsonl" for p in SAMPLES.iterdir()}
    for junk in (b"", b"\xff\xfe", b"[]\n", b"not json\n", b'{"type":"session","seq":0}\n', b'{"sessionId":"s"}\n'):
        assert gemini.variant_of(junk) is None


def test_availability() -> None:
    assert set(gemini.FEATURES) == {
        "plain", "calls", "parallel", "failed", "cancelled", "null-results", "awaiting-approval", "re-recorded",
        "rewinds", "set", "checkpoint", "subagents", "unicode", "huge-integers", "exit-code-in-text", "injected"}
    assert set(gemini.VARIANTS) == {"jsonl", "json"}
    assert gemini.available("rewinds", "jsonl") and not gemini.available("rewinds", "json")
    assert all(gemini.available(gemini.MIXED, v) for v in gemini.VARIANTS)


@pytest.mark.parametrize(("feature", "variant", "says"), [
    ("bogus", None, "unknown Gemini CLI feature 'bogus'; known: awaiting-approval, calls"),
    ("calls", "yaml", "unknown Gemini CLI variant 'yaml'; known: jsonl, json"),
    ("checkpoint", "json", "cannot hold 'checkpoint' (available in: jsonl)"),
])
def test_unknown_or_impossible_requests_raise(feature: str, variant: str | None, says: str) -> None:
    with pytest.raises(ValueError, match=re.escape(says)):
        gemini.transcripts(feature, variant)


def test_texts_read_as_a_person_a_model_and_tools_write_them() -> None:
    """Prompts and replies are sentences of real words (``vocabulary.words``), not runs of letters; replies
    hold code blocks at times, calls hold paths and command lines, failed calls errors."""
    from asr_conformance.vocabulary.words import CONTENT

    vocabulary = set(CONTENT)
    prompts: list[str] = []
    replies: list[str] = []
    args: list[dict[str, object]] = []
    drawn = [*_examples(gemini.transcripts("calls"), 16), *_examples(gemini.transcripts("failed"), 4),
             *_examples(gemini.transcripts("exit-code-in-text"), 4)]  # (every one of the last holds a shell call)
    for transcript in drawn:
        for line in transcript.lines:
            value = json.loads(line)
            if value.get("type") == "user" and isinstance(value.get("content"), list):
                prompts.append(value["content"][0]["text"])
            elif value.get("type") == "gemini" and isinstance(value.get("content"), str) and value["content"]:
                replies.append(value["content"])
            args += [call["args"] for call in value.get("toolCalls", ()) if isinstance(call, dict)]
    plain = [text for text in prompts + replies if text.isascii() and "\x00" not in text]
    assert len(plain) > 30
    words = [re.findall(r"[a-z]+", text.lower()) for text in plain]
    assert sum(len(found) >= 4 and sum(w in vocabulary for w in found) >= 2 for found in words) > 0.9 * len(plain)
    assert any("```" in reply for reply in replies), "a reply with a code block"
    shown = json.dumps(args)
    assert re.search(r"src/[a-z_/]+\.(py|rs|ts|go|md|toml|json|sh|txt|yaml)", shown), "a file path"
    assert re.search(r'"command": "(git|cargo|npm|pytest|python|go|make|rg|sed|ls|cat|docker) ', shown), "a command"
