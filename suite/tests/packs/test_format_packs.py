"""Format packs as objects: the built-ins through the public interface, loading, identity, the guard and the
format-neutral checks a pack's policy drives."""

from __future__ import annotations

import json
import secrets
import threading
from dataclasses import replace
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest
from toy_site import SAMPLES, TOY

from asr_conformance.fidelity.compare import Policy, check_fidelity
from asr_conformance.fidelity.facts import NativeCall, NativeHook, NativeTransition, SourceFacts, Where
from asr_conformance.gate.verdict import RoleVerdict, VerdictKind, judged_suffix
from asr_conformance.harness.judging.fidelity import judge_fidelity, stream_records
from asr_conformance.packs import registry
from asr_conformance.packs.builtin import builtin_packs
from asr_conformance.packs.guard import PREFIX, PackError, bounded, malformed
from asr_conformance.packs.identity import identify
from asr_conformance.packs.pack import FormatPack, witness_only
from asr_conformance.reports.badges import badge

CONVERTER = TOY / "converters"


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.syspath_prepend(str(TOY / "src"))
    import asr_toy_pack

    return asr_toy_pack.PACK


def toy_stream(sample: str, bug: str | None = None) -> list[dict]:
    import sys

    sys.path.insert(0, str(CONVERTER))
    try:
        from toy_to_asr import convert
    finally:
        sys.path.remove(str(CONVERTER))
    return convert((SAMPLES / sample).read_bytes(), bug)


def test_the_built_in_packs_are_ordinary_packs_with_witness_edits_and_generator() -> None:
    packs = {p.name: p for p in builtin_packs()}
    assert set(packs) >= {"claude-code", "codex"}
    for pack in packs.values():
        assert isinstance(pack, FormatPack) and pack.edits and pack.generator is not None
        assert pack.generator.FEATURES and pack.file_name is not None
        identity = identify(pack, "asr-conformance", True)
        assert len(identity.sha256) == 64 and identity.label() == f"{pack.name} {pack.version} (built-in)"
    assert packs["claude-code"].format == "claude-code-jsonl" and packs["codex"].format == "codex-rollout-jsonl"


def test_the_built_in_packs_are_plain_values_their_edits_passed_in_not_attached_to_the_witness() -> None:
    """Importing a witness module, and its edits module too, leaves the witness without edits: a built-in pack
    has them because ``packs.builtin`` passes them in, and two packs built from one witness may differ."""
    from asr_conformance.fidelity import claude_code, claude_code_mutations, codex, codex_mutations, gemini, gemini_mutations

    for witness, edits in ((claude_code.WITNESS, claude_code_mutations.MUTATIONS), (codex.WITNESS, codex_mutations.MUTATIONS),
                           (gemini.WITNESS, gemini_mutations.MUTATIONS)):
        assert not hasattr(witness, "mutations") and not hasattr(type(witness), "mutations")
        (pack,) = [p for p in builtin_packs() if p.witness is witness]
        assert pack.edits == edits and edits
        assert witness_only(witness, "1").edits == ()


def test_a_digest_changes_with_the_packs_files(toy, tmp_path: Path) -> None:
    first = identify(toy, "d", False).sha256
    moved = replace(toy, modules=("json",))
    assert identify(moved, "d", False).sha256 != first


def test_a_pack_with_an_unknown_kind_policy_or_no_witness_is_refused(toy) -> None:
    with pytest.raises(ValueError, match="kind_policy 'guess'"):
        replace(toy, kind_policy="guess")
    with pytest.raises(TypeError, match="Witness interface"):
        FormatPack("x", "1", witness=object())  # type: ignore[arg-type]


def test_entry_points_load_packs_and_deprecated_witnesses_and_report_broken_ones(toy, monkeypatch) -> None:
    points = {
        registry.GROUP: [EntryPoint("toy", "asr_toy_pack:PACK", registry.GROUP),
                         EntryPoint("broken", "no_such_module:PACK", registry.GROUP),
                         EntryPoint("wrong", "json:dumps", registry.GROUP)],
        registry.WITNESS_GROUP: [EntryPoint("old", "asr_toy_pack.witness:ToyWitness", registry.WITNESS_GROUP)],
    }
    monkeypatch.setattr(registry, "entry_points", lambda group: points.get(group, []))
    packs = registry.load_packs()
    found = packs.for_format("toy")
    assert found is not None and found.pack is toy and not found.builtin
    assert any("no_such_module" in p for p in packs.problems) and any("json:dumps" in p for p in packs.problems)
    # The old group's witness serves a format already served: it is not used, and the note says so.
    assert any("already has a pack" in n for n in packs.notes)
    assert [i.pack.name for i in packs.only_builtin().installed] == [p.name for p in builtin_packs()]


def test_a_deprecated_witness_alone_becomes_a_witness_only_pack(toy, monkeypatch) -> None:
    points = {registry.WITNESS_GROUP: [EntryPoint("old", "asr_toy_pack.witness:ToyWitness", registry.WITNESS_GROUP),
                                       EntryPoint("gone", "no_such_module:Witness", registry.WITNESS_GROUP),
                                       EntryPoint("junk", "json:JSONDecodeError", registry.WITNESS_GROUP)]}
    monkeypatch.setattr(registry, "entry_points", lambda group: points.get(group, []))
    packs = registry.load_packs()
    found = packs.for_format("toy-json")
    assert found is not None and found.pack.generator is None and found.pack.edits == ()
    assert any("deprecated" in n for n in packs.notes)
    # One that fails to load, or is no witness, is a problem reported beside the others, never fatal.
    assert [p.split(" (")[0] for p in packs.problems] == ["witness entry point gone", "witness entry point junk"]
    assert "toy-json" not in packs.generated_formats()


def test_the_built_in_only_policy_is_the_packs_object_a_run_passes_not_a_process_wide_flag(toy, monkeypatch) -> None:
    """``--builtin-packs-only`` gives a run its own ``Packs``; asking for them leaves every later caller in the
    process (pack-check, the console, another run in the same interpreter) with every installed pack."""
    points = {registry.GROUP: [EntryPoint("toy", "asr_toy_pack:PACK", registry.GROUP)]}
    monkeypatch.setattr(registry, "entry_points", lambda group: points.get(group, []))
    monkeypatch.setattr(registry, "_loaded_once", registry.load_packs)  # this test's entry points, not the cached
    strict = registry.installed(builtin_only=True)
    assert strict.for_format("toy") is None and strict.ignored == ["toy-pack 0.1.0 (third-party, (unknown distribution))"]
    assert not hasattr(registry, "accept_builtin_only") and not hasattr(registry, "_POLICY")
    assert registry.installed().for_format("toy") is not None


def test_the_guard_names_the_pack_for_a_raise_a_hang_and_passes_an_answer(toy) -> None:
    # A pack of this call's own (a hung pack stays hung in the process: its thread cannot be stopped).
    judge = identify(toy, f"asr-toy-pack {secrets.token_hex(4)}", False)
    assert bounded(judge, "adding", 1, lambda a, b: a + b, 1, 2) == 3
    with pytest.raises(PackError, match=r"toy-pack 0\.1\.0 \(third-party, asr-toy-pack [0-9a-f]+\) raised ZeroDivisionError"):
        bounded(judge, "dividing", 1, lambda: 1 / 0)
    # A hang is a call that has not returned: the guard must answer while it still blocks (no clock read).
    release, returned = threading.Event(), threading.Event()

    def hangs() -> None:
        release.wait(60)
        returned.set()

    with pytest.raises(PackError, match="did not finish sleeping within 0.2 s"):
        bounded(judge, "sleeping", 0.2, hangs)
    assert not returned.is_set(), "the guard waited for the hung call to end"
    # A pack that hung is not called again: the next call fails at once, naming the first hang.
    called = threading.Event()
    with pytest.raises(PackError, match="did not finish sleeping within 0.2 s .hung.; not called again in this run"):
        bounded(judge, "adding", 1, lambda: called.set())
    assert not called.is_set()
    release.set()
    assert str(PackError(judge, "x")).startswith(PREFIX)


def test_malformed_facts_are_named() -> None:
    assert malformed({"calls": []}) == "returned dict, not SourceFacts"
    facts = SourceFacts("f", calls=[NativeCall("c", "n", Where(1))])
    assert malformed(facts) is None
    facts.calls.append("c2")  # type: ignore[arg-type]
    assert malformed(facts) == "gave SourceFacts.calls[1] as str, not NativeCall"
    assert malformed(SourceFacts("f", times=frozenset({1}))) == "gave SourceFacts.times that is not a set of strings"  # type: ignore[arg-type]
    assert malformed(SourceFacts("f", transitions=(NativeTransition(Where(2)),))) is None
    assert malformed(SourceFacts("f", transitions=[])) is None
    assert malformed(SourceFacts("f", transitions="none")) == (  # type: ignore[arg-type]
        "gave SourceFacts.transitions as str, not a tuple or None")
    assert malformed(SourceFacts("f", transitions=({"state": "idle"},))).startswith(  # type: ignore[arg-type, union-attr]
        "gave SourceFacts.transitions[0] that is not a NativeTransition")
    assert malformed(SourceFacts("f", hooks=(NativeHook(Where(1), "Stop", {"exitCode": 0}),))) is None
    assert malformed(SourceFacts("f", hooks=(NativeHook(Where(1), "Stop", []),))).startswith(  # type: ignore[arg-type, union-attr]
        "gave SourceFacts.hooks[0] that is not a NativeHook")


def test_a_hollow_source_makes_a_faithful_streams_calls_and_results_findings(toy) -> None:
    stream = toy_stream("fix-tests.json")
    full = toy.witness.read((SAMPLES / "fix-tests.json").read_bytes())
    assert check_fidelity(full, stream, Policy("source-only")) == []
    hollow = check_fidelity(SourceFacts("toy-json"), stream, Policy("source-only"))
    assert {"ASR-250", "ASR-267", "ASR-104"} <= {f.rule for f in hollow}


def test_the_kind_policy_comes_from_the_pack(toy) -> None:
    stream = toy_stream("fix-tests.json", "kind-from-name")
    facts = toy.witness.read((SAMPLES / "fix-tests.json").read_bytes())
    assert check_fidelity(facts, stream, Policy("any")) == []  # one kind per name: consistent, so allowed
    findings = check_fidelity(facts, stream, Policy("source-only"))
    assert findings and {f.rule for f in findings} == {"ASR-253"}
    assert "publishes no mapping" in findings[0].message


def test_a_result_may_carry_the_time_of_the_event_that_holds_it(toy) -> None:
    stream = toy_stream("fix-tests.json")
    for record in stream:
        if record["type"] == "tool_result" and record["callId"] == "c1":
            record["ts"] = "2026-05-01T10:00:02.120Z"  # the call's event time, not the result's own
    facts = toy.witness.read((SAMPLES / "fix-tests.json").read_bytes())
    assert check_fidelity(facts, stream) == []
    strict = SourceFacts("toy-json", calls=facts.calls, messages=facts.messages, times=facts.times,
                         results=[replace(r, other_ts=frozenset()) for r in facts.results],
                         session_ids=facts.session_ids, agent_versions=facts.agent_versions,
                         earliest_time=facts.earliest_time, records_exit_codes=True)
    assert {f.rule for f in check_fidelity(strict, stream)} == {"ASR-103"}


def test_loss_categories_are_read_in_the_packs_namespace(toy) -> None:
    stream = [r for r in toy_stream("fix-tests.json") if r["type"] != "message" or r["role"] != "user"]
    stream[0]["producer"]["lossy"] = ["toy.message.user"]
    facts = toy.witness.read((SAMPLES / "fix-tests.json").read_bytes())
    assert check_fidelity(facts, stream, Policy(loss_namespaces=("toy.",))) == []
    assert {f.rule for f in check_fidelity(facts, stream)} == {"ASR-157"}  # the Claude Code namespace does not apply


def test_a_one_document_format_locates_findings_by_byte_and_pointer(toy) -> None:
    data = (SAMPLES / "fix-tests.json").read_bytes()
    stream = toy_stream("fix-tests.json", "drop-every-second-call")
    body = b"".join(json.dumps(r).encode() + b"\n" for r in stream)
    result = judge_fidelity(data, body, registry.Packs.of(toy))
    where = next(f.where for f in result.findings if f.where is not None)
    assert where.line == 0 and where.pointer == "/events/2"
    assert data[where.offset:where.offset + 6] == b'{"at":'
    assert where.place() == f"byte {where.offset} at /events/2"
    assert result.judge is not None and result.judge.name == "toy-pack"
    assert stream_records(body) is not None


def test_the_verdict_line_and_badge_name_the_judge_and_what_was_not_fuzzed() -> None:
    third = {"name": "toy-pack", "version": "0.1.0", "builtin": False, "sha256": "0" * 64, "distribution": "d"}
    verdicts = [{"implementation": "x", "role": "producer", "verdict": "conforms", "pass_percent": 100.0,
                 "counts": {"pass": 3}, "judged_by": [third], "not_fuzzed": ["not fuzzed: no generator for acme"]}]
    assert judged_suffix([RoleVerdict.from_json(v) for v in verdicts]) == (
        " (fidelity judged by toy-pack 0.1.0 (third-party); not fuzzed: no generator for acme)")
    message = badge(verdicts[0])["message"]
    assert "fidelity judged by toy-pack 0.1.0 (third-party)" in message and "not fuzzed" in message
    assert judged_suffix([RoleVerdict("x", "validator", {}, 0.0, VerdictKind.NO_VERDICT)]) == ""


def test_the_built_in_packs_load_through_the_suites_own_entry_points() -> None:
    """No private path: the installed suite registers its packs under the group a vendor uses, and they are
    loaded from there, first, as built-ins; a distribution that is not the suite's is never built-in."""
    points = [p for p in registry.entry_points(group=registry.GROUP) if registry._is_builtin(p)]
    assert sorted(p.name for p in points) == sorted(p.name for p in builtin_packs())
    packs = registry.load_packs()
    assert not any("not installed as a distribution" in n for n in packs.notes)
    assert [i.pack.name for i in packs.installed[:len(points)]] == [p.name for p in builtin_packs()]
    assert all(i.builtin and i.identity.distribution == "asr-conformance" for i in packs.installed[:len(points)])
    impostor = EntryPoint("claude-code", "asr_conformance.packs.builtin:claude_code", registry.GROUP)
    assert not registry._is_builtin(impostor), "an entry point of no distribution is not the suite's"


def test_without_the_suites_entry_points_the_built_ins_still_load_and_the_notes_say_why(monkeypatch) -> None:
    monkeypatch.setattr(registry, "entry_points", lambda group: [])
    packs = registry.load_packs()
    assert [i.pack.name for i in packs.installed] == [p.name for p in builtin_packs()]
    assert any("not installed as a distribution" in n for n in packs.notes)
