"""The Codex rollout witness: what it reads from each sample rollout, and how it refuses others.

The expected facts below were read off the sample files by hand; the witness must arrive at
them on its own. Exit codes matter most: a number only where ``exec_command_end`` records one,
never one read out of "Exit code: N" text (ASR-260).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from asr_conformance.fidelity.claude_code import WITNESS as CLAUDE
from asr_conformance.fidelity.codex import FAILED, FORMAT, WITNESS
from asr_conformance.fidelity.compare import check_fidelity
from asr_conformance.fidelity.facts import NotThisFormat, SourceFacts, Witness
from asr_conformance.packs.pack import witness_only
from asr_conformance.packs.registry import Packs
from asr_conformance.packs.selection import select_pack

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ROOT / "examples" / "codex-converter" / "samples"
CLAUDE_SAMPLES = ROOT / "examples" / "claude-code-converter" / "samples"
SAMPLE_FILES = sorted(SAMPLES.glob("*.jsonl"))


def facts_of(name: str) -> SourceFacts:
    return WITNESS.read((SAMPLES / name).read_bytes())


def by_call(facts: SourceFacts) -> dict[str, list]:
    out: dict[str, list] = {}
    for result in facts.results:
        out.setdefault(result.call_id, []).append(result)
    return out


def test_the_samples_cover_the_cases_the_witness_must_handle() -> None:
    names = {p.name for p in SAMPLE_FILES}
    assert {"cli-exec-exit-codes.jsonl", "desktop-parallel-web-search.jsonl", "legacy-pre-envelope.jsonl",
            "cli-old-format-exit-code-in-text.jsonl", "aborted-dangling-orphan-duplicates.jsonl"} <= names


def test_the_witness_meets_the_interface() -> None:
    assert isinstance(WITNESS, Witness)
    assert WITNESS.format == FORMAT == "codex-rollout-jsonl"


@pytest.mark.parametrize("name", ["codex-rollout-jsonl", "Codex-Rollout-JSONL", "codex_rollout.jsonl", "codex-rollout",
                                  "codex", "codex-cli-jsonl", "openai-codex-rollout", " codex_session_jsonl "])
def test_accepts_the_spellings_vendors_write(name: str) -> None:
    assert WITNESS.accepts_format_name(name)


@pytest.mark.parametrize("name", ["claude-code-jsonl", "codex-app-server", "codex-app-server-jsonrpc", "acp", "",
                                  "codexrollout"])
def test_refuses_other_format_names(name: str) -> None:
    assert not WITNESS.accepts_format_name(name)


@pytest.mark.parametrize("path", SAMPLE_FILES, ids=lambda p: p.name)
def test_sniffs_every_sample_and_the_claude_witness_does_not(path: Path) -> None:
    data = path.read_bytes()
    assert WITNESS.sniff(data)
    assert not CLAUDE.sniff(data)
    chosen = select_pack(None, data, Packs.of(witness_only(CLAUDE, "1"), witness_only(WITNESS, "1"))).chosen
    assert chosen is not None and chosen.pack.witness is WITNESS


@pytest.mark.parametrize("path", sorted(CLAUDE_SAMPLES.glob("*.jsonl")), ids=lambda p: p.name)
def test_does_not_sniff_claude_code_transcripts(path: Path) -> None:
    assert not WITNESS.sniff(path.read_bytes())


@pytest.mark.parametrize("data", [b"", b"\n\n", b"not json\n", b"[1,2]\n", b'{"type":"session","seq":0}\n',
                                  b'{"type":"user","message":{"content":"hi"}}\n', b"\xff\xfe{}"])
def test_does_not_sniff_other_input(data: bytes) -> None:
    assert not WITNESS.sniff(data)


def test_sniffs_a_rollout_whose_first_line_outgrows_the_window() -> None:
    meta = {"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta",
            "payload": {"id": "s", "base_instructions": {"text": "x" * 200_000}}}
    assert WITNESS.sniff(json.dumps(meta, separators=(",", ":")).encode() + b"\n")


def test_header_facts_of_the_cli_sample() -> None:
    facts = facts_of("cli-exec-exit-codes.jsonl")
    assert facts.format == FORMAT
    assert facts.session_ids == {"019b2e41-7c3a-7d10-9f42-3e8a1c5d7b20"}
    assert facts.agent_version == "0.142.0"
    assert facts.agent_versions == ("0.142.0",)
    # session_meta's own timestamp is earlier than its line's: the session started then
    assert facts.earliest_time == "2026-09-14T08:12:01.204Z"
    assert "2026-09-14T08:12:01.311Z" in facts.times
    assert facts.records_exit_codes


def test_exit_codes_come_only_from_exec_command_end() -> None:
    results = by_call(facts_of("cli-exec-exit-codes.jsonl"))
    assert [r.exit_code for r in results["call_Xq81vB"]] == [101]
    assert [r.exit_code for r in results["call_Rt4w9Q"]] == [0]
    # apply_patch's output is JSON text with metadata.exit_code 0; that is text, not a recorded exit code
    assert [r.exit_code for r in results["call_Pa7Lm2"]] == [None]
    assert '"exit_code":0' in results["call_Pa7Lm2"][0].model_texts[0]


def test_old_format_exit_codes_in_text_are_not_exit_codes() -> None:
    facts = facts_of("cli-old-format-exit-code-in-text.jsonl")
    texts = [t for r in facts.results for t in r.model_texts or ()]
    assert any(t.startswith("Exit code: 2\n") for t in texts)
    assert any('"exit_code":1' in t for t in texts)
    assert [r.exit_code for r in facts.results] == [None, None]
    assert all(r.statuses == frozenset() for r in facts.results)  # the rollout records no outcome at all


def test_statuses_follow_what_codex_records() -> None:
    results = by_call(facts_of("cli-exec-exit-codes.jsonl"))
    assert results["call_Xq81vB"][0].statuses == {"failed", "interrupted", "cancelled"}  # exec_command_end status
    assert results["call_Rt4w9Q"][0].statuses == {"completed"}
    assert results["call_Pa7Lm2"][0].statuses == {"completed"}  # patch_apply_end
    desktop = by_call(facts_of("desktop-parallel-web-search.jsonl"))
    assert "completed" not in desktop["call_WrkCfg2"][0].statuses
    assert "denied" not in desktop["call_WrkCfg2"][0].statuses  # no refusal is recorded
    assert desktop["call_Plan3"][0].statuses == frozenset()


def test_an_exit_code_without_codex_verdict_rules_out_only_the_contrary_status() -> None:
    lines = [
        {"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta", "payload": {"id": "s"}},
        {"timestamp": "2026-01-01T00:00:01Z", "type": "response_item",
         "payload": {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c1"}},
        {"timestamp": "2026-01-01T00:00:02Z", "type": "event_msg",
         "payload": {"type": "exec_command_end", "call_id": "c1", "exit_code": 2, "stdout": "", "stderr": ""}},
        {"timestamp": "2026-01-01T00:00:03Z", "type": "response_item",
         "payload": {"type": "function_call_output", "call_id": "c1", "output": "x"}},
    ]
    (result,) = WITNESS.read(_rollout(lines)).results
    assert result.exit_code == 2
    assert "completed" not in result.statuses and {"failed", "unknown"} <= result.statuses


def test_timing_only_as_recorded() -> None:
    results = by_call(facts_of("cli-exec-exit-codes.jsonl"))
    assert results["call_Xq81vB"][0].timing.duration_ms == pytest.approx(4870.0)
    assert results["call_Pa7Lm2"][0].timing.duration_ms is None
    assert results["call_Xq81vB"][0].timing.started_at is None
    assert results["call_Rt4w9Q"][0].timing.completed_at == "2026-09-14T08:12:19.377Z"  # completed_at_ms


def test_arguments_parsed_when_json_the_stream_can_hold_else_text() -> None:
    calls = {c.call_id: c for c in facts_of("cli-exec-exit-codes.jsonl").calls}
    assert calls["call_Xq81vB"].arguments == {"command": ["bash", "-lc", "cargo test -p parser"],
                                              "workdir": "/home/dana/acme-app", "timeout_ms": 120000}
    assert calls["call_Xq81vB"].arguments_text is None
    assert calls["call_Pa7Lm2"].arguments is None  # apply_patch input is free-form text
    assert calls["call_Pa7Lm2"].arguments_text.startswith("*** Begin Patch\n")
    assert {c.requested_by for c in calls.values()} == {"model"}
    plan = {c.call_id: c for c in facts_of("desktop-parallel-web-search.jsonl").calls}["call_Plan3"]
    assert plan.arguments is None and "18446744073709551617" in plan.arguments_text  # beyond ASR-032


def test_messages_are_the_typed_ones_byte_for_byte() -> None:
    facts = facts_of("cli-exec-exit-codes.jsonl")
    user = [m.texts for m in facts.messages if m.role == "user"]
    assert user == [("The parser test fails on empty input — can you fix it?",)]  # not AGENTS.md, not the environment
    assistant = [m for m in facts.messages if m.role == "assistant"]
    assert [m.native_id for m in assistant] == ["msg_0a1c7e", "msg_0a1c9f"]
    assert facts.skipped["injected user messages"] == 2
    assert facts.skipped["developer messages"] == 1


def test_pre_envelope_rollouts_use_the_context_tags() -> None:
    facts = facts_of("legacy-pre-envelope.jsonl")
    assert facts.session_ids == {"b6c1a2f0-3d4e-4f50-8a9b-0c1d2e3f4a5b"}
    assert facts.agent_version is None
    assert [(m.role, m.texts) for m in facts.messages] == [
        ("user", ("List the files, please.",)), ("assistant", ("Two files: index.html and style.css.",))]
    assert [r.exit_code for r in facts.results] == [None]
    assert facts.times == {"2025-08-20T13:20:47.060Z"}


def test_dangling_orphan_and_duplicate_calls_are_recorded_as_they_are() -> None:
    facts = facts_of("aborted-dangling-orphan-duplicates.jsonl")
    assert [c.call_id for c in facts.calls] == ["call_Wait1", "call_Dup7", "call_Dup7"]
    assert [r.call_id for r in facts.results] == ["call_Dup7", "call_Orphan9"]
    orphan = facts.results[1]
    assert orphan.model_texts == ("deploy finished: staging @ 3f2a91c",)  # content items, in order
    assert facts.skipped["compacted"] == 1


def test_an_outcome_event_without_an_output_is_a_result_of_its_own() -> None:
    lines = [
        {"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta", "payload": {"id": "s"}},
        {"timestamp": "2026-01-01T00:00:01Z", "type": "response_item",
         "payload": {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c1"}},
        {"timestamp": "2026-01-01T00:00:02Z", "type": "event_msg",
         "payload": {"type": "exec_command_end", "call_id": "c1", "exit_code": 0, "status": "completed"}},
    ]
    (result,) = WITNESS.read(_rollout(lines)).results
    assert (result.call_id, result.exit_code, result.model_texts, result.where.line) == ("c1", 0, None, 3)


def _rollout(lines: list[dict]) -> bytes:
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


META = '{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"s"}}'


@pytest.mark.parametrize(("data", "line"), [
    (META + "\n{not json\n", "line 2"),
    (META + "\n[1]\n", "line 2"),
    (META + '\n{"timestamp":"2026-01-01T00:00:00Z","type":"event_msg"}\n', "line 2"),
    (META + '\n{"timestamp":"yesterday","type":"event_msg","payload":{"type":"x"}}\n', "line 2"),
    (META + '\n\n{"type":"response_item","payload":{"type":"function_call","name":"shell"}}\n', "line 3"),
    (META + '\n{"type":"event_msg","payload":{"type":"exec_command_end","call_id":"c","exit_code":"1"}}\n', "line 2"),
    (META + '\n{"type":"response_item","payload":{"type":"function_call_output","call_id":"c","output":7}}\n',
     "line 2"),
    ('{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{}}\n', "line 1"),
    ('{"type":"response_item","payload":{"type":"message","role":"user","content":[]}}\n', "no session_meta"),
    (META + '\n{"type":"response_item","payload":{"type":"message","role":"user","content":"x"}}\n', "line 2"),
    ('{"hello":"world"}\n', "line 1"),
])
def test_malformed_input_is_refused_naming_the_line(data: str, line: str) -> None:
    """The refusal says where: the line, or the whole input when a fact of the whole input is missing."""
    with pytest.raises(NotThisFormat, match=line):
        WITNESS.read(data.encode())


@pytest.mark.parametrize("data", [b"", b"   \n", b"\xff\xfe\x00"])
def test_empty_or_binary_input_is_refused(data: bytes) -> None:
    with pytest.raises(NotThisFormat):
        WITNESS.read(data)


@pytest.mark.parametrize("path", SAMPLE_FILES, ids=lambda p: p.name)
def test_damaged_samples_never_raise_anything_but_not_this_format(path: Path) -> None:
    data = path.read_bytes()
    cuts = [data[:n] for n in range(1, len(data), max(1, len(data) // 97))]
    flips = [data[:n] + bytes([data[n] ^ 0x5A]) + data[n + 1:] for n in range(0, len(data), max(1, len(data) // 61))]
    for damaged in cuts + flips:
        try:
            WITNESS.read(damaged)
        except NotThisFormat:
            pass


def test_outcome_events_of_calls_the_rollout_does_not_hold_are_optional_results() -> None:
    """A person's shell command (source user_shell) has an exec_command_end but no call item: the result
    is not demanded (not an orphan either), yet it carries the recorded outcome for the value checks."""
    lines = [
        {"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta", "payload": {"id": "s"}},
        {"timestamp": "2026-01-01T00:00:02Z", "type": "event_msg",
         "payload": {"type": "exec_command_end", "call_id": "u1", "exit_code": 2, "status": "failed",
                     "source": "user_shell"}},
    ]
    facts = WITNESS.read(_rollout(lines))
    (result,) = facts.results
    assert (result.call_id, result.optional, result.exit_code, result.statuses) == ("u1", True, 2, FAILED)
    assert facts.orphans() == [] and facts.skipped["exec_command_end without a call"] == 1
    assert check_fidelity(facts, _stream_of_one_result("u1", "failed", 2)) == []
    assert check_fidelity(facts, _stream_of_one_result(None, "", None)) == []  # not demanded
    rewritten = check_fidelity(facts, _stream_of_one_result("u1", "completed", 0))
    assert sorted(f.rule for f in rewritten) == ["ASR-258", "ASR-260"]


def _stream_of_one_result(call_id: str | None, status: str, exit_code: int | None) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = [{"type": "session", "seq": 0, "id": "h", "sessionId": "s"}]
    if call_id is not None:
        result: dict[str, Any] = {"type": "tool_result", "seq": 1, "id": "r1", "callId": call_id, "linkage": "exact",
                                  "status": status}
        if exit_code is not None:
            result["exec"] = {"exitCode": exit_code}
        records.append(result)
    return records


def test_a_bare_output_allows_any_status_but_denied() -> None:
    """An output with no outcome event records no refusal, so denied contradicts it (ASR-258)."""
    call = {"type": "function_call", "call_id": "c1", "name": "shell", "arguments": "{}"}
    output = {"type": "function_call_output", "call_id": "c1", "output": "done"}
    lines = [
        {"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta", "payload": {"id": "s"}},
        {"timestamp": "2026-01-01T00:00:01Z", "type": "response_item", "payload": call},
        {"timestamp": "2026-01-01T00:00:02Z", "type": "response_item", "payload": output},
    ]
    facts = WITNESS.read(_rollout(lines))
    stream: list[dict[str, Any]] = [
        {"type": "session", "seq": 0, "id": "h", "sessionId": "s"},
        {"type": "tool_call", "seq": 1, "id": "r1", "callId": "c1", "callIdSource": "native", "name": "shell", "input": {}},
        {"type": "tool_result", "seq": 2, "id": "r2", "callId": "c1", "linkage": "exact", "status": "completed",
         "content": [{"type": "text", "text": "done"}]},
    ]
    for status in ("completed", "failed", "unknown", "interrupted"):
        stream[2]["status"] = status
        assert check_fidelity(facts, stream) == [], status
    stream[2]["status"] = "denied"
    assert [f.rule for f in check_fidelity(facts, stream)] == ["ASR-258"]


def test_a_typed_message_with_an_image_demands_the_typed_text() -> None:
    item = {"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": "<image name=[Image #1]>"}, {"type": "input_image", "image_url": "data:,"},
        {"type": "input_text", "text": "</image>"}, {"type": "input_text", "text": "What is this?"}]}
    lines = [
        {"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta", "payload": {"id": "s"}},
        {"timestamp": "2026-01-01T00:00:01Z", "type": "response_item", "payload": item},
        {"timestamp": "2026-01-01T00:00:01Z", "type": "event_msg",
         "payload": {"type": "user_message", "message": "What is this?", "images": ["data:,"]}},
    ]
    (message,) = WITNESS.read(_rollout(lines)).messages
    assert (message.role, message.texts, message.where.line) == ("user", ("What is this?",), 2)


def test_a_message_event_without_text_is_passed_over() -> None:
    lines = [
        {"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta", "payload": {"id": "s"}},
        {"timestamp": "2026-01-01T00:00:01Z", "type": "response_item",
         "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Fix it"}]}},
        {"timestamp": "2026-01-01T00:00:01Z", "type": "event_msg", "payload": {"type": "user_message"}},
    ]
    facts = WITNESS.read(_rollout(lines))
    assert [(m.role, m.texts) for m in facts.messages] == [("user", ("Fix it",))]


def test_arguments_already_held_as_json_are_json() -> None:
    lines = [
        {"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta", "payload": {"id": "s"}},
        {"timestamp": "2026-01-01T00:00:01Z", "type": "response_item",
         "payload": {"type": "function_call", "name": "shell", "arguments": {"command": ["ls"]}, "call_id": "c"}},
    ]
    (call,) = WITNESS.read(_rollout(lines)).calls
    assert (call.arguments, call.arguments_text) == ({"command": ["ls"]}, None)
