"""Choosing a witness: by the header's format name, by sniffing, through entry points; mismatches
are findings and a missing witness is reported as not checked."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from fidelity_helpers import EXAMPLE, SAMPLES_DIR, run_converter

from asr_conformance.fidelity import registry
from asr_conformance.fidelity.claude_code import WITNESS, ClaudeCodeWitness
from asr_conformance.fidelity.facts import NotThisFormat, SourceFacts, Witness

TRANSCRIPT = (SAMPLES_DIR / "fix-parser-test.jsonl").read_bytes()
ROLLOUT = b'{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"019a"}}\n'


def header(format_name: str | None) -> dict:
    source = {} if format_name is None else {"format": format_name}
    return {"type": "session", "producer": {"name": "x", "source": source}}


@dataclass
class RolloutWitness:
    """A stand-in for a vendor's witness of another format."""

    format: str = "codex-rollout-jsonl"

    def accepts_format_name(self, name: str) -> bool:
        return name == self.format

    def sniff(self, data: bytes) -> bool:
        return data.startswith(b'{"timestamp"') and b'"session_meta"' in data[:4096]

    def read(self, data: bytes) -> SourceFacts:
        if not self.sniff(data):
            raise NotThisFormat("line 1: not a rollout")
        return SourceFacts(format=self.format)


def test_witnesses_meet_the_interface() -> None:
    assert isinstance(WITNESS, Witness) and isinstance(RolloutWitness(), Witness)


def test_by_format_name() -> None:
    chosen = registry.select_witness(header("claude-code-jsonl"), TRANSCRIPT)
    assert chosen.witness is WITNESS and not chosen.findings and chosen.not_checked is None


def test_by_sniff_when_the_header_names_no_format() -> None:
    chosen = registry.select_witness(header(None), TRANSCRIPT)
    assert chosen.witness is WITNESS and not chosen.findings
    assert "names no source format" in chosen.notes[0]


def test_unknown_name_falls_back_to_sniffing_with_a_note() -> None:
    chosen = registry.select_witness(header("acme-transcript-v3"), TRANSCRIPT)
    assert chosen.witness is WITNESS and not chosen.findings
    assert "acme-transcript-v3" in chosen.notes[0]


def test_header_naming_another_witness_format_is_a_finding() -> None:
    pool = [WITNESS, RolloutWitness()]
    chosen = registry.select_witness(header("codex-rollout-jsonl"), TRANSCRIPT, pool)
    assert chosen.witness is None
    (finding,) = chosen.findings
    assert finding.rule == "ASR-156" and "claude-code-jsonl" in finding.message
    assert chosen.not_checked and chosen.not_checked.startswith("not checked: ")


def test_header_naming_claude_code_for_a_stream_is_a_finding() -> None:
    stream = run_converter(EXAMPLE, TRANSCRIPT)
    chosen = registry.select_witness(header("claude-code-jsonl"), stream)
    assert chosen.witness is None and chosen.findings[0].rule == "ASR-156"


def test_an_input_the_named_witness_does_not_recognise_is_read_by_it_not_charged_to_the_producer() -> None:
    """Not provably another format (no witness recognises it, it is no ASR stream): the named witness reads it,
    and what it cannot read is fidelity not checked, with the reason (the suite's limit)."""
    from asr_conformance.harness.judging.fidelity import judge_fidelity

    odd = b'{"kind":"acme-agent-event","at":"2026-01-01T00:00:00Z"}\n'
    chosen = registry.select_witness(header("claude-code-jsonl"), odd)
    assert chosen.witness is WITNESS and not chosen.findings and not chosen.not_checked
    stream = run_converter(EXAMPLE, TRANSCRIPT)
    found = judge_fidelity(odd, stream, [_pack_of(WITNESS)])
    assert not found.findings
    assert found.unchecked is not None and found.unchecked.startswith("the claude-code-jsonl witness cannot read "
                                                                      "this input: ")


def _pack_of(witness: object) -> object:
    from asr_conformance.packs.builtin import builtin_packs

    return next(p for p in builtin_packs() if p.witness is witness)


def test_no_witness_is_not_checked_never_passed() -> None:
    unknown = b'{"kind":"acme-agent-event","at":"2026-01-01T00:00:00Z"}\n'
    chosen = registry.select_witness(header("acme-agent-log"), unknown)
    assert chosen.witness is None and not chosen.findings
    assert chosen.not_checked == "not checked: no witness for format 'acme-agent-log'"


def test_codex_rollouts_have_a_built_in_witness() -> None:
    chosen = registry.select_witness(header("codex-rollout-jsonl"), ROLLOUT)
    assert chosen.witness is not None and chosen.witness.format == "codex-rollout-jsonl"


def test_another_witness_is_chosen_for_its_own_format() -> None:
    rollout = RolloutWitness()
    chosen = registry.select_witness(header("codex-rollout-jsonl"), ROLLOUT, [WITNESS, rollout])
    assert chosen.witness is rollout and not chosen.findings


class FakeEntryPoint:
    def __init__(self, name: str, loaded: object) -> None:
        self.name, self.value, self.loaded = name, f"fake:{name}", loaded

    def load(self) -> object:
        if isinstance(self.loaded, Exception):
            raise self.loaded
        return self.loaded


def test_entry_points_add_witnesses_by_class_or_instance(monkeypatch: pytest.MonkeyPatch) -> None:
    points = [FakeEntryPoint("rollout", RolloutWitness), FakeEntryPoint("again", ClaudeCodeWitness),
              FakeEntryPoint("broken", ImportError("no module named acme")), FakeEntryPoint("junk", object())]
    monkeypatch.setattr(registry, "entry_points", lambda group: points if group == registry.GROUP else [])
    witnesses, problems = registry.installed_witnesses()
    assert [w.format for w in witnesses] == ["claude-code-jsonl", "codex-rollout-jsonl", "gemini-cli-session"]
    assert len(problems) == 2 and "broken" in problems[0] and "junk" in problems[1]
    chosen = registry.select_witness(header("codex-rollout-jsonl"), ROLLOUT)
    assert chosen.witness is not None and chosen.witness.format == "codex-rollout-jsonl"


def test_a_witness_whose_sniff_raises_does_not_claim_the_input() -> None:
    class Raising(RolloutWitness):
        def sniff(self, data: bytes) -> bool:
            raise RuntimeError("boom")

    chosen = registry.select_witness(header(None), ROLLOUT, [Raising()])
    assert chosen.witness is None and chosen.not_checked
