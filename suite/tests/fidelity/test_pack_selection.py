"""Choosing the pack for an input (``packs.selection``): by the header's format name, by sniffing, among the
installed packs; mismatches are findings and a missing pack is reported as not checked. The input is
sniffed once, where it is made, and the header is then held to that reading without sniffing again."""

from __future__ import annotations

from dataclasses import dataclass

from fidelity_helpers import EXAMPLE, SAMPLES_DIR, run_converter

from asr_conformance.fidelity.claude_code import WITNESS
from asr_conformance.fidelity.facts import NotThisFormat, SourceFacts, Witness
from asr_conformance.packs.pack import FormatPack, witness_only
from asr_conformance.packs.registry import Packs, installed
from asr_conformance.packs.selection import PackSelection, select_pack, sniffed

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


def select(header_: dict, data: bytes, *witnesses: Witness) -> PackSelection:
    """The choice among the installed packs, or among packs of these witnesses (witness-only packs)."""
    pool = Packs.of(*(witness_only(w, "1") for w in witnesses)) if witnesses else installed()
    return select_pack(header_, data, pool)


def witness_of(chosen: PackSelection) -> Witness | None:
    return chosen.chosen.pack.witness if chosen.chosen is not None else None


def test_witnesses_meet_the_interface() -> None:
    assert isinstance(WITNESS, Witness) and isinstance(RolloutWitness(), Witness)


def test_by_format_name() -> None:
    chosen = select(header("claude-code-jsonl"), TRANSCRIPT)
    assert witness_of(chosen) is WITNESS and not chosen.findings and chosen.not_checked is None


def test_by_sniff_when_the_header_names_no_format() -> None:
    chosen = select(header(None), TRANSCRIPT)
    assert witness_of(chosen) is WITNESS and not chosen.findings
    assert "names no source format" in chosen.notes[0]


def test_unknown_name_falls_back_to_sniffing_with_a_note() -> None:
    chosen = select(header("acme-transcript-v3"), TRANSCRIPT)
    assert witness_of(chosen) is WITNESS and not chosen.findings
    assert "acme-transcript-v3" in chosen.notes[0]


def test_header_naming_another_witness_format_is_a_finding() -> None:
    chosen = select(header("codex-rollout-jsonl"), TRANSCRIPT, WITNESS, RolloutWitness())
    assert witness_of(chosen) is None
    (finding,) = chosen.findings
    assert finding.rule == "ASR-156" and "claude-code-jsonl" in finding.message
    assert chosen.not_checked and chosen.not_checked.startswith("not checked: ")


def test_header_naming_claude_code_for_a_stream_is_a_finding() -> None:
    stream = run_converter(EXAMPLE, TRANSCRIPT)
    chosen = select(header("claude-code-jsonl"), stream)
    assert witness_of(chosen) is None and chosen.findings[0].rule == "ASR-156"


def test_an_input_the_named_witness_does_not_recognise_is_read_by_it_not_charged_to_the_producer() -> None:
    """Not provably another format (no witness recognises it, it is no ASR stream): the named witness reads it,
    and what it cannot read is fidelity not checked, with the reason (the suite's limit)."""
    from asr_conformance.harness.judging.fidelity import judge_fidelity

    odd = b'{"kind":"acme-agent-event","at":"2026-01-01T00:00:00Z"}\n'
    chosen = select(header("claude-code-jsonl"), odd)
    assert witness_of(chosen) is WITNESS and not chosen.findings and not chosen.not_checked
    stream = run_converter(EXAMPLE, TRANSCRIPT)
    found = judge_fidelity(odd, stream, Packs.of(_pack_of(WITNESS)))
    assert not found.findings
    assert found.unchecked is not None and found.unchecked.startswith("the claude-code-jsonl witness cannot read "
                                                                      "this input: ")


def _pack_of(witness: object) -> FormatPack:
    from asr_conformance.packs.builtin import builtin_packs

    return next(p for p in builtin_packs() if p.witness is witness)


def test_no_witness_is_not_checked_never_passed() -> None:
    unknown = b'{"kind":"acme-agent-event","at":"2026-01-01T00:00:00Z"}\n'
    chosen = select(header("acme-agent-log"), unknown)
    assert witness_of(chosen) is None and not chosen.findings
    assert chosen.not_checked == "not checked: no witness for format 'acme-agent-log'"


def test_codex_rollouts_have_a_built_in_witness() -> None:
    chosen = select(header("codex-rollout-jsonl"), ROLLOUT)
    assert chosen.chosen is not None and chosen.chosen.pack.format == "codex-rollout-jsonl"


def test_another_witness_is_chosen_for_its_own_format() -> None:
    rollout = RolloutWitness()
    chosen = select(header("codex-rollout-jsonl"), ROLLOUT, WITNESS, rollout)
    assert witness_of(chosen) is rollout and not chosen.findings


def test_a_witness_whose_sniff_raises_does_not_claim_the_input() -> None:
    class Raising(RolloutWitness):
        def sniff(self, data: bytes) -> bool:
            raise RuntimeError("boom")

    chosen = select(header(None), ROLLOUT, Raising())
    assert witness_of(chosen) is None and chosen.not_checked


class CountingWitness(RolloutWitness):
    """A rollout witness that counts its sniffs and, when ``fickle``, claims an input on its first sniff only
    (a pack whose answer could change between collection and judging)."""

    def __init__(self, fickle: bool = False) -> None:
        self.sniffs, self.fickle = 0, fickle

    def sniff(self, data: bytes) -> bool:
        self.sniffs += 1
        return super().sniff(data) and (not self.fickle or self.sniffs == 1)


def test_an_input_is_sniffed_once_for_its_edits_its_fidelity_and_the_header_check(tmp_path) -> None:
    from asr_conformance.harness.judging.fidelity import judge_fidelity, source_edits
    from asr_conformance.packs.selection import source_input

    witness = CountingWitness()
    pool = Packs.of(witness_only(WITNESS, "1"), witness_only(witness, "1"))
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(ROLLOUT)
    made = source_input(path, pool, "rollout")
    assert made.pack is not None and witness.sniffs == 1
    source_edits(made)
    stream = run_converter(EXAMPLE, TRANSCRIPT)  # names claude-code-jsonl: another format than the input's
    for _ in range(3):
        judged = judge_fidelity(ROLLOUT, stream, name="rollout.jsonl", source=made)
        assert [f.rule for f in judged.findings] == ["ASR-156"]
    assert witness.sniffs == 1
    # Judging without the input made at collection sniffs again: the count is what proves the reuse above.
    judge_fidelity(ROLLOUT, stream, pool)
    assert witness.sniffs == 2


def test_collection_and_judging_cannot_disagree_on_the_pack() -> None:
    """A pack whose sniff changes its answer: the input made once keeps its first answer for every use, where
    choosing again (as judging once did, on the whole input and the header) reaches another verdict."""
    witness = CountingWitness(fickle=True)
    pool = Packs.of(witness_only(WITNESS, "1"), witness_only(witness, "1"))
    made = sniffed(ROLLOUT, pool)
    assert made.pack is not None and made.pack.pack.witness is witness
    named = header("claude-code-jsonl")
    assert made.choose(named).findings[0].rule == "ASR-156"  # the header names another format than the input's
    assert made.choose(named).findings[0].rule == "ASR-156"  # every time, from the one reading
    again = select_pack(named, ROLLOUT, pool)  # choosing again: the fickle pack no longer claims the input
    assert not again.findings and again.chosen is not None and again.chosen.pack.witness is WITNESS


def test_an_input_changed_after_collection_is_the_suites_error_not_a_verdict(tmp_path) -> None:
    from asr_conformance.harness.judging.fidelity import judge_fidelity

    made = sniffed(TRANSCRIPT, installed(), "fix-parser-test.jsonl")
    stream = run_converter(EXAMPLE, TRANSCRIPT)
    assert judge_fidelity(TRANSCRIPT, stream, source=made).findings == []
    changed = judge_fidelity(TRANSCRIPT + b"\n", stream, name="fix-parser-test.jsonl", source=made)
    assert not changed.findings and changed.error is not None and "changed after it was collected" in changed.error
    from asr_conformance.packs.selection import source_input

    unread = source_input(tmp_path / "gone.jsonl", installed(), "gone.jsonl")
    late = judge_fidelity(TRANSCRIPT, stream, name="gone.jsonl", source=unread)
    assert not late.findings and late.error is not None and "could not be read when it was collected" in late.error


def test_a_run_makes_each_input_once_for_every_test_and_the_fuzz_plan(tmp_path) -> None:
    """What the plugin parametrizes with: one ``SourceInput`` per input, the same object for every test of it,
    its edits and the fuzz plan, so each pack sniffs each input once in the process."""
    from types import SimpleNamespace

    import pytest

    from asr_conformance.harness.adapters.targets import ProducerInput
    from asr_conformance.harness.judging.fidelity import source_edits
    from asr_conformance.harness.run_context import RunContext
    from asr_conformance.plugin import run_config

    witness = CountingWitness()
    files = [tmp_path / "a.jsonl", tmp_path / "b.jsonl"]
    for path in files:
        path.write_bytes(ROLLOUT)
    inputs = tuple(ProducerInput(p.name, p) for p in files)
    target = SimpleNamespace(key="t", roles=("producer",), inputs=inputs, source_formats=())
    config = SimpleNamespace(stash=pytest.Stash(), getoption=lambda name, default=None: default)
    config.stash[run_config.TARGETS_KEY] = [target, target]  # two targets sharing inputs: still one each
    config.stash[run_config.PACKS_KEY] = Packs.of(witness_only(WITNESS, "1"), witness_only(witness, "1"))
    config.stash[run_config.RUN_CONTEXT_KEY] = RunContext()
    first = run_config.sources_of(config)  # type: ignore[arg-type]
    assert list(first) == ["a.jsonl", "b.jsonl"] and witness.sniffs == 2
    assert run_config.sources_of(config) is first  # type: ignore[arg-type]  # a second test function's params
    assert all(e.source is first[e.source.id] for s in first.values() for e in source_edits(s))
    run_config.fuzz_plans(config)  # type: ignore[arg-type]
    assert witness.sniffs == 2
