"""The Codex rollout generator (asr_conformance.generators.native.codex).

Generated rollouts must be valid by construction (the witness reads them, they sniff as Codex,
``variant_of`` names their variant) and hold the features they claim, checked through the
witness's facts. They must be realistic: the example converter turns them into valid streams
that pass every fidelity check and every source mutation. And they must be adversarial: each
seeded-bug converter (examples/misbehaving/codex-*) is caught within a small derandomized budget.

The example converter runs in process (it is one stdlib module with ``convert(bytes)``); the
seeded-bug scripts, which start it as a process and change its records, run in process too, and the
process they start runs once per distinct rollout (``in_process.run_seeded_codex``).
"""

from __future__ import annotations

import functools
import importlib.machinery
import importlib.util
import json
import re
import tempfile
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from in_process import run_seeded_codex

from asr_conformance.fidelity.codex import WITNESS
from asr_conformance.fidelity.facts import SourceFacts
from asr_conformance.generators.native import codex
from asr_conformance.generators.native.common import NativeTranscript, feature_names
from asr_conformance.harness.judging.fidelity import judge_fidelity, judge_mutation, mutations_of
from asr_conformance.packs.registry import installed
from asr_conformance.reference.checks import validate_bytes

ROOT = Path(__file__).resolve().parents[3]
CONVERTER = ROOT / "examples" / "codex-converter" / "asr-from-codex"
SAMPLES = ROOT / "examples" / "codex-converter" / "samples"
MISBEHAVING = ROOT / "examples" / "misbehaving"
REQUESTS = [*feature_names(codex.FEATURES), codex.MIXED]
COMBINATIONS = [(v, f) for v in codex.VARIANTS for f in REQUESTS if codex.available(f, v)]
#: Text the model read that looks like an exit code (ASR-260: never one).
EXIT_TEXT = re.compile(r'Exit code: -?\d+|Process exited with code -?\d+|"exit_code":\s*-?\d+')
#: Each seeded bug, the feature that catches it and the rule the fidelity checks name.
BUGS = {
    "codex-parses-exit-code-from-text": ("exit-code-in-text", "ASR-260"),
    "codex-drops-exit-codes": ("exit-codes", "ASR-157"),
    "codex-invents-exit-zero": ("calls", "ASR-260"),
    "codex-failed-as-completed": ("errors", "ASR-258"),
    "codex-renames-tools": ("exit-codes", "ASR-252"),
    "codex-drops-orphan-outputs": ("orphans", "ASR-266"),
    "codex-shifts-timestamps": ("calls", "ASR-103"),
    "codex-invents-turn-states": ("plain", "ASR-169"),
    "codex-invents-turn-triggers": ("plain", "ASR-186"),
    "codex-invents-parent-turns": ("turns", "ASR-183"),
    "codex-bare-output-as-denied": ("calls", "ASR-258"),
    "codex-rewrites-user-shell-results": ("calls", "ASR-258"),
    "codex-turn-configs-as-changes": ("plain", "ASR-172"),
    "codex-invents-answers": ("calls", "ASR-285"),
    "codex-invents-hook-exit-codes": ("turns", "ASR-287"),
    "codex-provider-exact-from-name": ("calls", "ASR-255"),
}


@functools.cache
def converter() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader("asr_from_codex", str(CONVERTER))
    spec = importlib.util.spec_from_loader("asr_from_codex", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


@functools.cache
def convert(data: bytes) -> bytes | str:
    """The example converter's stream, or why it refused (a sentence, as judge_mutation expects)."""
    module = converter()
    try:
        return module.convert(data)
    except module.Refused as why:
        return f"refused: {why}"


@functools.cache
def run_script(script: Path, data: bytes) -> bytes:
    """A seeded-bug script's stream for these bytes (it must exit 0): the script in this process, the example
    it starts as a process once per distinct rollout (``in_process.run_seeded_codex``)."""
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "rollout.jsonl"
        source.write_bytes(data)
        code, stdout, stderr = run_seeded_codex(script, source)
    assert code == 0, f"{script.name} exited {code}: {stderr.decode(errors='replace')}"
    return stdout


def payloads(data: bytes) -> list[dict]:
    """Each line's item or event (the envelope's payload, or a bare pre-envelope item)."""
    values = [json.loads(raw) for raw in data.decode("utf-8").split("\n") if raw.strip()]
    return [v["payload"] if isinstance(v.get("payload"), dict) else v for v in values]


def line_kinds(data: bytes) -> list[str]:
    values = [json.loads(raw) for raw in data.decode("utf-8").split("\n") if raw.strip()]
    return [str(v.get("type")) for v in values]


def holds(feature: str, data: bytes, facts: SourceFacts) -> bool:
    """Whether the rollout holds the feature, read through the witness's facts where it can."""
    calls = Counter(c.call_id for c in facts.calls)
    answered = {r.call_id for r in facts.results}
    kinds = [p.get("type") for p in payloads(data)]
    if feature == "plain":
        roles = {m.role for m in facts.messages}
        return not facts.calls and {"user", "assistant"} <= roles
    if feature == "calls":
        return any(r.call_id in calls for r in facts.results)
    if feature == "exit-codes":
        return any(r.exit_code is not None for r in facts.results)
    if feature == "exit-code-in-text":
        return any(r.exit_code is None and r.model_texts and EXIT_TEXT.search("".join(r.model_texts)) for r in facts.results)
    if feature == "custom-tools":
        return "custom_tool_call" in kinds and any(c.arguments_text is not None for c in facts.calls)
    if feature == "parallel":
        return parallel(facts)
    if feature == "duplicate-ids":
        return any(n > 1 for n in calls.values())
    if feature == "dangling":
        return any(c not in answered for c in calls)
    if feature == "interrupted":
        return "turn_aborted" in kinds and any(c not in answered for c in calls)
    if feature == "orphans":
        return any(r.call_id not in calls for r in facts.results)
    if feature == "errors":
        return any((r.statuses and "completed" not in r.statuses) or r.exit_code not in (None, 0) for r in facts.results)
    if feature == "empty-output":
        return any(r.model_texts == ("",) for r in facts.results)
    if feature == "arguments":
        return any(c.arguments_text is not None or not isinstance(c.arguments, dict)
                   for c, p in zip(facts.calls, [p for p in payloads(data) if p.get("type") in ("function_call", "custom_tool_call")],
                                   strict=True) if p["type"] == "function_call")
    if feature == "compaction":
        return facts.skipped.get("compacted", 0) > 0
    if feature == "web-search":
        return facts.skipped.get("web_search_call", 0) > 0
    if feature == "turns":
        return line_kinds(data).count("turn_context") >= 2
    raise AssertionError(feature)


def parallel(facts: SourceFacts) -> bool:
    """Two calls both written before either's output, and outputs not in call order."""
    first_result: dict[str, int] = {}
    for result in facts.results:
        first_result.setdefault(str(result.call_id), result.where.line)
    calls = [(c.where.line, first_result[c.call_id]) for c in facts.calls if c.call_id in first_result]
    return any(a[0] < b[0] < a[1] and b[1] < a[1] for a in calls for b in calls)


# --- valid by construction --------------------------------------------------------------------------


@pytest.mark.parametrize(("variant", "feature"), COMBINATIONS)
@settings(max_examples=8, derandomize=True, deadline=None, database=None)
@given(data=st.data())
def test_the_witness_reads_it_and_it_holds_the_feature(variant: str, feature: str, data: st.DataObject) -> None:
    transcript = data.draw(codex.transcripts(feature, variant))
    raw = transcript.data()
    facts = WITNESS.read(raw)
    assert WITNESS.sniff(raw), transcript.summary()
    assert transcript.format == codex.FORMAT == WITNESS.format
    assert transcript.variant == variant and codex.variant_of(raw) == variant, transcript.summary()
    assert feature == codex.MIXED or feature in transcript.features
    assert transcript.features <= codex.AVAILABLE[variant]
    for held in transcript.features:
        assert holds(held, raw, facts), (held, transcript.summary())
    assert 3 <= len(transcript.lines) <= 40, transcript.summary()
    if variant in ("old", "legacy"):
        assert not [k for k in (p.get("type") for p in payloads(raw)) if k == "exec_command_end"]


# --- realistic: a faithful converter passes everything --------------------------------------------


@pytest.mark.parametrize(("variant", "feature"), COMBINATIONS)
@settings(max_examples=3, derandomize=True, deadline=None, database=None)
@given(data=st.data())
def test_the_example_converter_passes_every_check_and_mutation(variant: str, feature: str, data: st.DataObject) -> None:
    transcript = data.draw(codex.transcripts(feature, variant))
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


def test_every_mutation_applies_to_some_generated_rollout() -> None:
    applied: set[str] = set()

    @settings(max_examples=30, derandomize=True, deadline=None, database=None)
    @given(codex.transcripts(codex.MIXED, "cli"))
    def collect(transcript: NativeTranscript) -> None:
        applied.update(m.name for m in mutations_of(installed().for_format(WITNESS.format)) if m.apply(transcript.data()) is not None)

    collect()
    assert applied == {m.name for m in mutations_of(installed().for_format(WITNESS.format))}


# --- adversarial: each seeded bug is caught ---------------------------------------------------------


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_each_seeded_bug_is_caught_by_its_feature(bug: str) -> None:
    feature, rule = BUGS[bug]
    caught: set[str] = set()

    @settings(max_examples=8, derandomize=True, deadline=None, database=None)
    @given(codex.transcripts(feature))
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


def test_the_example_converter_writes_no_exit_code_the_old_variant_only_prints() -> None:
    """ASR-260: in old rollouts "Exit code: N" is output text, so no exec.exitCode may appear."""

    @settings(max_examples=10, derandomize=True, deadline=None, database=None)
    @given(codex.transcripts("exit-code-in-text", "old"))
    def check(transcript: NativeTranscript) -> None:
        stream = convert(transcript.data())
        assert isinstance(stream, bytes)
        records = [json.loads(line) for line in stream.decode("utf-8").split("\n") if line.strip()]
        results = [r for r in records if r["type"] == "tool_result"]
        assert results and not [r for r in results if "exitCode" in r.get("exec", {})]

    check()


# --- the API ------------------------------------------------------------------------------------------


def _examples(strategy: st.SearchStrategy[NativeTranscript], count: int) -> list[NativeTranscript]:
    found: list[NativeTranscript] = []

    @settings(max_examples=count, derandomize=True, deadline=None, database=None)
    @given(strategy)
    def collect(transcript: NativeTranscript) -> None:
        found.append(transcript)

    collect()
    return found


def test_generation_is_deterministic() -> None:
    first, again = _examples(codex.transcripts(), 12), _examples(codex.transcripts(), 12)
    assert [t.data() for t in first] == [t.data() for t in again]
    assert all(t.data().endswith(b"\n") and t.data().count(b"\n") == len(t.lines) for t in first)
    assert all(convert(t.data()) == convert(t.data()) for t in first[:3])


def test_no_variant_asked_draws_cli_desktop_or_old_never_legacy() -> None:
    seen = {t.variant for t in _examples(codex.transcripts(), 40)}
    assert seen <= {"cli", "desktop", "old"} and len(seen) >= 2
    assert {t.variant for t in _examples(codex.transcripts("exit-codes"), 10)} <= {"cli", "desktop"}
    assert {t.variant for t in _examples(codex.transcripts("dangling", "legacy"), 3)} == {"legacy"}


def test_variant_of_reads_the_hand_written_samples() -> None:
    expected = {"aborted-dangling-orphan-duplicates.jsonl": "cli", "cli-exec-exit-codes.jsonl": "cli",
                "cli-old-format-exit-code-in-text.jsonl": "old", "desktop-parallel-web-search.jsonl": "desktop",
                "legacy-pre-envelope.jsonl": "legacy", "plan-mode-questions-and-hook.jsonl": "cli",
                "user-shell-bare-patch-aborted.jsonl": "cli"}
    assert {p.name: codex.variant_of(p.read_bytes()) for p in sorted(SAMPLES.glob("*.jsonl"))} == expected
    for junk in (b"", b"\xff\xfe", b"[]\n", b"not json\n", b'{"type":"session","seq":0}\n'):
        assert codex.variant_of(junk) is None
    cut = (SAMPLES / "cli-old-format-exit-code-in-text.jsonl").read_bytes()[:-40]  # a vendor's file cut short
    assert codex.variant_of(cut) == "old"


def test_availability() -> None:
    assert set(codex.FEATURES) == {
        "plain", "calls", "exit-codes", "exit-code-in-text", "custom-tools", "parallel", "duplicate-ids", "dangling",
        "interrupted", "orphans", "errors", "empty-output", "arguments", "compaction", "web-search", "turns"}
    assert set(codex.VARIANTS) == {"cli", "desktop", "old", "legacy"}
    assert codex.available("exit-codes", "cli") and not codex.available("exit-codes", "old")
    assert not codex.available("exit-codes", "legacy") and codex.available("exit-code-in-text", "old")
    assert all(codex.available(codex.MIXED, v) for v in codex.VARIANTS)
    assert all(codex.available(f, v) for v in ("cli", "desktop") for f in codex.FEATURES)


@pytest.mark.parametrize(("feature", "variant", "says"), [
    ("bogus", None, "unknown Codex feature 'bogus'; known: arguments, calls"),
    ("calls", "tui", "unknown Codex variant 'tui'; known: cli, desktop, old, legacy"),
    ("exit-codes", "old", "cannot hold 'exit-codes' (available in: cli, desktop)"),
    ("turns", "legacy", "cannot hold 'turns' (available in: cli, desktop, old)"),
])
def test_unknown_or_impossible_requests_raise(feature: str, variant: str | None, says: str) -> None:
    with pytest.raises(ValueError, match=re.escape(says)):
        codex.transcripts(feature, variant)
    if variant is None or variant in codex.VARIANTS:
        return
    with pytest.raises(ValueError, match="known: cli, desktop, old, legacy"):
        codex.available(feature, variant)
