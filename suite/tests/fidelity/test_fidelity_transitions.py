"""State records only where the source records a transition (ASR-169), results whose call the source
lacks checked by value (ASR-258, 260), recorded parent links kept (ASR-157): each seeded bug breaks
exactly its rule on a realistic sample, the example converters conform, and each bug passes once the
fact that catches it is taken away."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from fidelity_helpers import MISBEHAVING, ROOT, convert

from asr_conformance.fidelity import claude_code, codex, gemini
from asr_conformance.fidelity.compare import check_fidelity
from asr_conformance.fidelity.facts import NativeHook, NativeTransition, SourceFacts, Where
from asr_conformance.harness.judging.fidelity import policy_of
from asr_conformance.packs.builtin import gemini_cli

CC = ROOT / "examples/claude-code-converter"
CODEX = ROOT / "examples/codex-converter"
GEMINI = ROOT / "examples/gemini-converter"
USER_SHELL = CODEX / "samples/user-shell-bare-patch-aborted.jsonl"
PLAN_MODE = CODEX / "samples/plan-mode-questions-and-hook.jsonl"


def _no_transitions(facts: SourceFacts) -> SourceFacts:
    return dataclasses.replace(facts, transitions=None)


def _no_optional_results(facts: SourceFacts) -> SourceFacts:
    return dataclasses.replace(facts, results=[r for r in facts.results if not r.optional])


def _no_refusal_rule(facts: SourceFacts) -> SourceFacts:
    return dataclasses.replace(facts, results=[dataclasses.replace(r, ruled_out=frozenset()) for r in facts.results])


def _no_hooks(facts: SourceFacts) -> SourceFacts:
    return dataclasses.replace(facts, hooks=None)


def _no_terminals(facts: SourceFacts) -> SourceFacts:
    return dataclasses.replace(facts, terminals=None)


def _no_permissions(facts: SourceFacts) -> SourceFacts:
    return dataclasses.replace(facts, permissions=None)


def _no_configs(facts: SourceFacts) -> SourceFacts:
    return dataclasses.replace(facts, configs=None)


def _no_parent_links(facts: SourceFacts) -> SourceFacts:
    return dataclasses.replace(facts, calls=[dataclasses.replace(c, parent_call_id=None) for c in facts.calls])


def _no_triggers(facts: SourceFacts) -> SourceFacts:
    return dataclasses.replace(facts, triggers=None)


def _no_turn_links(facts: SourceFacts) -> SourceFacts:
    return dataclasses.replace(facts, turn_links=None)


def _no_providers(facts: SourceFacts) -> SourceFacts:
    return dataclasses.replace(facts, providers=None)


def _no_questions(facts: SourceFacts) -> SourceFacts:
    return dataclasses.replace(facts, questions=[])


#: (seeded bug, its format's witness, the sample, the rules it breaks there, how the protection is removed)
CASES: list[tuple[str, object, Path, set[str], Callable[[SourceFacts], SourceFacts]]] = [
    ("cc-invents-turn-states", claude_code.WITNESS, CC / "samples/plain-chat.jsonl", {"ASR-169"}, _no_transitions),
    ("cc-invents-turn-states", claude_code.WITNESS, CC / "samples/compaction-question-and-hooks.jsonl", {"ASR-169"},
     _no_transitions),
    ("codex-invents-turn-states", codex.WITNESS, USER_SHELL, {"ASR-169"}, _no_transitions),
    ("gemini-invents-turn-states", gemini.WITNESS, GEMINI / "samples/rewind-and-checkpoint.jsonl", {"ASR-169"},
     _no_transitions),
    ("codex-rewrites-user-shell-results", codex.WITNESS, USER_SHELL, {"ASR-258", "ASR-260"}, _no_optional_results),
    ("codex-bare-output-as-denied", codex.WITNESS, USER_SHELL, {"ASR-258"}, _no_refusal_rule),
    ("cc-invents-hook-exit-codes", claude_code.WITNESS, CC / "samples/subagent-task.jsonl", {"ASR-287"}, _no_hooks),
    ("gemini-invents-hook-exit-codes", gemini.WITNESS, GEMINI / "samples/calls-updates-parallel-cancelled.jsonl",
     {"ASR-287"}, _no_hooks),
    ("cc-flattens-nested-calls", claude_code.WITNESS, CC / "samples/code-execution-calls.jsonl", {"ASR-157"},
     _no_parent_links),
    ("cc-invents-terminals", claude_code.WITNESS, CC / "samples/fix-parser-test.jsonl", {"ASR-291"}, _no_terminals),
    ("gemini-drops-approval-requests", gemini.WITNESS,
     GEMINI / "samples/awaiting-approval-null-result-huge-integers.jsonl", {"ASR-157"}, _no_permissions),
    ("cc-invents-model-changes", claude_code.WITNESS, CC / "samples/compaction-question-and-hooks.jsonl", {"ASR-172"},
     _no_configs),
    ("codex-turn-configs-as-changes", codex.WITNESS, USER_SHELL, {"ASR-172"}, _no_configs),
    ("cc-drops-refusal-permissions", claude_code.WITNESS, CC / "samples/declined-question.jsonl", {"ASR-157"},
     _no_permissions),
    ("cc-refusal-as-compact-permission", claude_code.WITNESS, CC / "samples/declined-question.jsonl", {"ASR-279"},
     _no_permissions),
    ("cc-invents-trigger", claude_code.WITNESS, CC / "samples/fix-parser-test.jsonl", {"ASR-186"}, _no_triggers),
    ("codex-invents-turn-triggers", codex.WITNESS, USER_SHELL, {"ASR-186"}, _no_triggers),
    ("codex-invents-parent-turns", codex.WITNESS, USER_SHELL, {"ASR-183"}, _no_turn_links),
    ("codex-invents-answers", codex.WITNESS, PLAN_MODE, {"ASR-285"}, _no_questions),
    ("codex-invents-hook-exit-codes", codex.WITNESS, PLAN_MODE, {"ASR-287"}, _no_hooks),
    ("codex-provider-exact-from-name", codex.WITNESS, PLAN_MODE, {"ASR-255"}, _no_providers),
    ("gemini-invents-trigger", gemini.WITNESS, GEMINI / "samples/rewind-and-checkpoint.jsonl", {"ASR-186"},
     _no_triggers),
    ("gemini-invents-parent-turns", gemini.WITNESS, GEMINI / "samples/calls-updates-parallel-cancelled.jsonl",
     {"ASR-183"}, _no_turn_links),
]


def _findings(bug: str, witness: object, sample: Path, change: Callable[[SourceFacts], SourceFacts] = lambda f: f) -> set[str]:
    facts = change(witness.read(sample.read_bytes()))  # type: ignore[attr-defined]
    policy = policy_of(gemini_cli()) if witness is gemini.WITNESS else None
    return {f.rule for f in check_fidelity(facts, convert(MISBEHAVING / bug, sample.read_bytes()), policy)}


@pytest.mark.parametrize(("bug", "witness", "sample", "rules", "unprotect"), CASES,
                         ids=[f"{c[0]}-{c[2].stem}" for c in CASES])
def test_the_seeded_bug_breaks_exactly_its_rule_and_passes_without_the_fact(
        bug: str, witness: object, sample: Path, rules: set[str], unprotect: Callable[[SourceFacts], SourceFacts]) -> None:
    assert _findings(bug, witness, sample) == rules
    assert _findings(bug, witness, sample, unprotect) == set()


def test_the_example_converters_write_states_only_at_recorded_transitions() -> None:
    """The Codex example writes a state per turn event; its turn IDs and the abort's reason agree."""
    facts = codex.WITNESS.read(USER_SHELL.read_bytes())
    assert facts.transitions is not None
    assert [(sorted(t.states), t.stop_reasons) for t in facts.transitions] == [
        (["running"], None), (["idle"], None), (["running"], None),
        (["error", "idle"], frozenset({"interrupted", "cancelled"}))]
    stream = convert(CODEX / "asr-from-codex", USER_SHELL.read_bytes())
    assert [(r["state"], r.get("stopReason")) for r in stream if r["type"] == "state"] == [
        ("running", None), ("idle", None), ("running", None), ("idle", "interrupted")]
    assert check_fidelity(facts, stream) == []


def _stream(*states: dict[str, object]) -> list[dict[str, object]]:
    return [{"type": "session", "seq": 0, "id": "h"},
            *({"type": "state", "seq": n, "id": f"r{n}", **s} for n, s in enumerate(states, 1))]


def test_each_transition_stands_for_one_state_record_of_its_turn_and_stop_reason() -> None:
    at = "2026-01-01T00:00:05Z"
    aborted = NativeTransition(Where(3), frozenset({"idle", "error"}), "t1", frozenset({"interrupted", "cancelled"}), at)
    facts = SourceFacts(format="x", times=frozenset({at}), transitions=(aborted,))

    def rules(*states: dict[str, object]) -> list[str]:
        return [f.rule for f in check_fidelity(facts, _stream(*states))]

    assert rules({"ts": at, "turnId": "t1", "state": "idle", "stopReason": "cancelled"}) == []
    assert rules({"state": "idle"}) == []  # no time, no turn: still the recorded transition
    assert rules({"ts": at, "state": "running"}) == ["ASR-169"]  # the source records a stop here
    assert rules({"ts": at, "turnId": "t2", "state": "idle"}) == ["ASR-169"]  # another turn's
    assert rules({"ts": at, "state": "idle", "stopReason": "end_turn"}) == ["ASR-169"]  # contradicts the abort
    assert rules({"ts": at, "state": "idle"}, {"ts": at, "state": "idle"}) == ["ASR-169"]  # written twice


def test_a_source_without_transitions_forbids_state_records_and_an_unreporting_pack_checks_none() -> None:
    stream = _stream({"state": "running"})
    assert [f.rule for f in check_fidelity(SourceFacts(format="x", transitions=()), stream)] == ["ASR-169"]
    assert check_fidelity(SourceFacts(format="x"), stream) == []  # transitions None: not reported, not checked


def test_a_declared_loss_of_parent_links_excuses_flattened_calls() -> None:
    sample = (CC / "samples/code-execution-calls.jsonl").read_bytes()
    facts = claude_code.WITNESS.read(sample)
    stream = convert(MISBEHAVING / "cc-flattens-nested-calls", sample)
    assert [f.rule for f in check_fidelity(facts, stream)] == ["ASR-157", "ASR-157"]
    stream[0]["producer"]["lossy"] = [*stream[0]["producer"]["lossy"], "tool_call.parentCallId"]
    assert check_fidelity(facts, stream) == []
    faithful = convert(CC / "asr-from-claude-code", sample)
    assert [r["parentCallId"] for r in faithful if r["type"] == "tool_call"] == ["srvtoolu_01Ke4Wd9Qx2Lm7Rb5Tn8Vc3F"] * 2
    assert check_fidelity(facts, faithful) == []


def test_hook_details_only_from_a_recorded_run_of_that_event() -> None:
    at = "2026-01-01T00:00:05Z"
    runs = (NativeHook(Where(4), "PostToolUse", {"exitCode": 2, "stderr": "fmt: 1 file changed", "durationMs": 412.4}),
            NativeHook(Where(9), "Stop"))
    facts = SourceFacts(format="x", times=frozenset({at}), hooks=runs)

    def rules(**hook: object) -> list[str]:
        stream = [{"type": "session", "seq": 0, "id": "h"}, {"type": "hook", "seq": 1, "id": "r1", "ts": at, **hook}]
        return [f.rule for f in check_fidelity(facts, stream)]

    assert rules(event="post_tool_use", exitCode=2, durationMs=412, stderr="fmt: 1 file changed") == []
    assert rules(event="post_tool_use", output=[{"type": "text", "text": "1 file changed"}]) == []
    assert rules(event="stop", status="completed") == []  # a run the source records, without details
    assert rules(event="post_tool_use", exitCode=0) == ["ASR-287"]
    assert rules(event="stop", exitCode=2) == ["ASR-287"]  # another event's exit code
    assert rules(event="stop", durationMs=10, stdout="") == ["ASR-287", "ASR-287"]
    assert check_fidelity(SourceFacts(format="x", times=frozenset({at})),
                          [{"type": "hook", "seq": 0, "id": "h", "ts": at, "event": "stop", "exitCode": 0}]) == []


def test_claude_code_hook_attachments_record_details_and_progress_lines_none() -> None:
    lines = [
        {"type": "user", "sessionId": "s1", "uuid": "u1", "timestamp": "2026-01-01T00:00:01Z",
         "message": {"role": "user", "content": "format the code"}},
        {"type": "progress", "sessionId": "s1", "uuid": "u2", "timestamp": "2026-01-01T00:00:02Z",
         "data": {"type": "hook_progress", "hookEvent": "PostToolUse", "hookName": "PostToolUse:Edit", "command": "fmt"}},
        {"type": "attachment", "sessionId": "s1", "uuid": "u3", "timestamp": "2026-01-01T00:00:03Z",
         "attachment": {"type": "hook_non_blocking_error", "hookEvent": "PostToolUse", "hookName": "PostToolUse:Edit",
                        "stderr": "fmt: 1 file changed", "stdout": "", "exitCode": 1, "durationMs": 41}},
    ]
    facts = claude_code.WITNESS.read("".join(json.dumps(v) + "\n" for v in lines).encode())
    assert facts.hooks is not None
    assert [(h.event, h.details) for h in facts.hooks] == [
        ("PostToolUse", {}),
        ("PostToolUse", {"exitCode": 1, "stdout": "", "stderr": "fmt: 1 file changed", "durationMs": 41})]
    stream = [{"type": "session", "seq": 0, "id": "h", "sessionId": "s1"},
              {"type": "message", "seq": 1, "id": "r1", "role": "user", "content": [{"type": "text", "text": "format the code"}]},
              {"type": "hook", "seq": 2, "id": "r2", "event": "post_tool_use", "exitCode": 1, "durationMs": 41}]
    assert check_fidelity(facts, stream) == []
    stream[2]["exitCode"] = 0
    assert [f.rule for f in check_fidelity(facts, stream)] == ["ASR-287"]
