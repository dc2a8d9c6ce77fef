"""Approvals, terminals and requesters held to what the source records (ASR-157, 267, 270, 274, 279, 291),
each family tri-state: not reported (nothing checked), none recorded (every record invented), or the
recorded items; what no numbered rule settles (a decision the source lacks) is reported, never scored.
In process: hand-made facts, the built-in witnesses on the samples, the example converters in process."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from fidelity_helpers import ROOT

from asr_conformance.fidelity import claude_code, codex, gemini
from asr_conformance.fidelity.compare import REPORTED, check_fidelity, observe_fidelity
from asr_conformance.fidelity.facts import (
    ABSENT,
    NativeCall,
    NativeConfig,
    NativePermission,
    NativeResult,
    NativeTerminal,
    SourceFacts,
    Where,
)
from asr_conformance.harness.judging.fidelity import judge_fidelity
from asr_conformance.packs.guard import malformed
from asr_conformance.reference import claude_code_converter, gemini_converter

AWAITING = ROOT / "examples/gemini-converter/samples/awaiting-approval-null-result-huge-integers.jsonl"
FIX_PARSER = ROOT / "examples/claude-code-converter/samples/fix-parser-test.jsonl"
CODEX = ROOT / "examples/codex-converter/samples"


def _stream(*records: dict[str, Any], lossy: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    header = {"type": "session", "seq": 0, "id": "h", "producer": {"lossy": list(lossy)}}
    return [header, *({"seq": n, "id": f"r{n}", **r} for n, r in enumerate(records, 1))]


def _rules(facts: SourceFacts, *records: dict[str, Any], lossy: tuple[str, ...] = ()) -> list[str]:
    return sorted(f.rule for f in check_fidelity(facts, _stream(*records, lossy=lossy)))


def _records(stream: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.decode("utf-8").split("\n") if line.strip()]


# --- approvals ----------------------------------------------------------------------------------------


PENDING = NativePermission(Where(4), "c1", request_recorded=True, status="pending")
REQUEST = {"type": "permission", "requestId": "c1", "subject": {"callId": "c1"}, "status": "pending"}


def test_a_recorded_request_is_kept_as_a_permission_record() -> None:
    facts = SourceFacts(format="x", permissions=(PENDING,))
    assert _rules(facts, REQUEST) == []
    assert _rules(facts) == ["ASR-157"]  # dropped
    assert _rules(facts, lossy=("permission",)) == []  # dropped, and the loss declared
    answered = dataclasses.replace(facts, calls=[NativeCall("c1", "Bash", Where(3), has_arguments=False)],
                                   results=[NativeResult(Where(5), "c1")])
    call = {"type": "tool_call", "callId": "c1", "callIdSource": "native", "name": "Bash"}
    compact = {"type": "tool_result", "callId": "c1", "linkage": "exact", "status": "completed",
               "permission": {"decision": "allow_once"}}
    assert _rules(answered, call, compact) == ["ASR-279"]  # the compact form, for a request the source records


def test_decider_rule_and_reviews_come_only_from_the_source() -> None:
    facts = SourceFacts(format="x", permissions=(PENDING,))
    for key, value in (("decider", {"device": "d1"}), ("rule", "ask"), ("reviews", [{"by": {"address": "r"}}])):
        assert _rules(facts, {**REQUEST, key: value}) == ["ASR-270"], key
    recorded = SourceFacts(format="x", permissions=(dataclasses.replace(PENDING, provenance=frozenset({"rule"})),))
    assert _rules(recorded, {**REQUEST, "rule": "ask"}) == []


def test_decided_by_follows_the_recorded_approval() -> None:
    decided = dataclasses.replace(PENDING, decided_by=frozenset({"user"}), decisions=frozenset(), status="resolved")
    facts = SourceFacts(format="x", permissions=(decided,))
    resolved = {**REQUEST, "status": "resolved", "decision": "allow_once"}
    assert _rules(facts, {**resolved, "decidedBy": "user"}) == []
    assert _rules(facts, {**resolved, "decidedBy": "policy"}) == ["ASR-270"]


def test_a_decision_the_source_lacks_is_reported_and_never_scored() -> None:
    """No numbered rule of the pages says the decision comes from the source: shown, not a finding."""
    facts = SourceFacts(format="x", permissions=(PENDING,))
    approved = {**REQUEST, "status": "resolved", "decision": "allow_once"}
    scored, reported = observe_fidelity(facts, _stream(approved))
    assert scored == []
    assert [(f.rule, f.family) for f in reported] == [("permission", REPORTED)] * 2
    assert "decision" in reported[0].message and "status" in reported[1].message
    stray = {"type": "tool_result", "callId": "c9", "status": "completed", "permission": {"decision": "allow_once"}}
    scored, reported = observe_fidelity(SourceFacts(format="x", permissions=()), _stream(stray))
    assert [f.rule for f in scored] == ["ASR-267"] and [f.family for f in reported] == [REPORTED]


def test_an_unreporting_pack_checks_no_approval_but_decided_by() -> None:
    facts = SourceFacts(format="x")
    assert _rules(facts, {**REQUEST, "rule": "ask", "decision": "allow_once"}) == []
    assert _rules(facts, {**REQUEST, "decidedBy": "user", "decision": "allow_once"}) == ["ASR-270"]
    assert observe_fidelity(facts, _stream({**REQUEST, "decision": "allow_once"}))[1] == []


def test_gemini_reports_a_pending_confirmation_and_the_example_keeps_it() -> None:
    data = AWAITING.read_bytes()
    facts = gemini.WITNESS.read(data)
    assert facts.permissions is not None and len(facts.permissions) == 1
    (pending,) = facts.permissions
    assert pending.request_recorded and pending.status == "pending" and pending.decisions is None
    assert pending.where.place() == "line 6 at /toolCalls/0"
    stream = gemini_converter.convert(data)
    verdict = judge_fidelity(data, stream)
    assert verdict.findings == [] and verdict.reported == []
    approved = [{**r, "status": "resolved", "decision": "allow_once"} if r["type"] == "permission" else r
                for r in _records(stream)]
    assert any(r["type"] == "permission" for r in approved)
    scored, reported = observe_fidelity(facts, approved)
    assert scored == [] and len(reported) == 2 and {f.rule for f in reported} == {"permission"}


def test_codex_records_no_approval_request_and_a_decline_as_a_refusal() -> None:
    for path in sorted(CODEX.glob("*.jsonl")):
        assert codex.WITNESS.read(path.read_bytes()).permissions == (), path.name
    line = (b'{"timestamp":"2026-01-01T00:00:09.000Z","type":"event_msg","payload":{"type":"exec_command_end",'
            b'"call_id":"call_x","exit_code":1,"status":"declined"}}\n')
    data = (CODEX / "user-shell-bare-patch-aborted.jsonl").read_bytes()
    facts = codex.WITNESS.read(data.rstrip(b"\n") + b"\n" + line)
    assert facts.permissions is not None
    refusal = next(p for p in facts.permissions if p.call_id == "call_x")
    assert refusal.decisions and "reject_once" in refusal.decisions and not refusal.request_recorded


DECLINED = ROOT / "examples/claude-code-converter/samples/declined-question.jsonl"
REFUSAL = "The user doesn't want to proceed with this tool use. The tool use was rejected"


def test_claude_code_reports_a_refusal_at_the_prompt_as_a_request_and_the_example_keeps_it() -> None:
    data = DECLINED.read_bytes()
    facts = claude_code.WITNESS.read(data)
    assert facts.permissions is not None and len(facts.permissions) == 1
    (refusal,) = facts.permissions
    assert refusal.call_id == "toolu_01Nq3Ua5Ns7We9Re1Dq3Uz5X" and refusal.request_recorded
    assert refusal.decided_by == {"user"} and refusal.decisions and "reject_once" in refusal.decisions
    stream = _records(claude_code_converter.convert(data))
    (permission,) = [r for r in stream if r["type"] == "permission"]
    assert permission["subject"] == {"callId": refusal.call_id} and permission["decidedBy"] == "user"
    result = next(r for r in stream if r["type"] == "tool_result" and r.get("callId") == refusal.call_id)
    assert result["status"] == "denied"
    assert observe_fidelity(facts, stream) == ([], [])
    dropped = [r for r in stream if r["type"] != "permission"]
    assert [f.rule for f in check_fidelity(facts, dropped)] == ["ASR-157"]
    compact = [{**r, "permission": {"decision": "reject_once"}} if r is result else r for r in dropped]
    assert [f.rule for f in check_fidelity(facts, compact)] == ["ASR-279"]
    # Without the reading (the family not reported), neither bug is seen: the reading is what catches them.
    unread = dataclasses.replace(facts, permissions=None)
    assert check_fidelity(unread, dropped) == [] and check_fidelity(unread, compact) == []


def test_only_a_refused_error_is_a_recorded_request() -> None:
    """The refusal with the person's words after it counts; the same text without is_error, or another
    error, records no request."""
    data = DECLINED.read_bytes()
    feedback = data.replace(b"wait for the user to tell you how to proceed.", b"To tell you how to proceed, the "
                            b"user said:\\nbump none", 1)
    assert feedback != data
    assert len(claude_code.WITNESS.read(feedback).permissions or ()) == 1
    not_error = data.replace(b'how to proceed.","is_error":true', b'how to proceed.","is_error":false', 1)
    assert not_error != data and claude_code.WITNESS.read(not_error).permissions == ()
    other = data.replace(REFUSAL.encode(), b"Error: command not found", 1)
    assert other != data and claude_code.WITNESS.read(other).permissions == ()
    assert claude_code.WITNESS.read(FIX_PARSER.read_bytes()).permissions == ()


def test_a_decision_line_about_one_tool_use_allows_any_decision_and_provenance() -> None:
    """A hook or attachment line that speaks of a decision for one tool use: what it decided, by whom and under
    which rule is not documented, so any of them passes; a call no such line speaks of gets none."""
    data = FIX_PARSER.read_bytes()
    call = next(c.call_id for c in claude_code.WITNESS.read(data).calls)
    line = {"type": "attachment", "toolUseID": call, "sessionId": "s", "uuid": "u-decision",
            "timestamp": "2026-01-01T00:00:00.000Z", "attachment": {"type": "permission_decision", "decision": "allow"}}
    facts = claude_code.WITNESS.read(data + json.dumps(line).encode() + b"\n")
    assert facts.permissions is not None
    (native,) = facts.permissions
    assert native.call_id == call and not native.request_recorded
    stream = _records(claude_code_converter.convert(data))
    ruled = [{**r, "permission": {"decision": "allow_once", "decidedBy": "policy", "rule": "Bash(cargo:*)"}}
             if r["type"] == "tool_result" and r.get("callId") == call else r for r in stream]
    assert check_fidelity(facts, ruled) == []
    assert [f.rule for f in check_fidelity(claude_code.WITNESS.read(data), ruled)] == ["ASR-270", "ASR-270"]


# --- terminals ----------------------------------------------------------------------------------------


SHELL = NativeTerminal(Where(7), "c1", "bash_1", exit_code=0, output_texts=("ready\n",))
TERMINAL = {"type": "terminal", "terminalId": "bash_1", "callId": "c1", "status": "exited"}


def test_a_terminal_stands_for_a_recorded_process_with_its_recorded_details() -> None:
    facts = SourceFacts(format="x", terminals=(SHELL,))
    assert _rules(facts, TERMINAL) == []
    assert _rules(facts, {**TERMINAL, "terminalId": "other"}) == []  # matched by the call that started it
    assert _rules(facts, {**TERMINAL, "exitCode": 0, "output": {"text": "ready\n"}}) == []
    assert _rules(facts, {**TERMINAL, "exitCode": 3}) == ["ASR-267"]
    assert _rules(facts, {**TERMINAL, "output": {"text": "made up"}}) == ["ASR-267"]
    assert _rules(facts, TERMINAL, {"type": "terminal", "terminalId": "t9", "callId": "c9"}) == ["ASR-291"]
    assert _rules(facts) == ["ASR-157"]
    assert _rules(facts, lossy=("terminal",)) == []
    unread = SourceFacts(format="x", terminals=(dataclasses.replace(SHELL, details_read=False),))
    assert _rules(unread, {**TERMINAL, "exitCode": 3}) == []


def test_no_recorded_process_forbids_terminals_and_an_unreporting_pack_checks_none() -> None:
    assert _rules(SourceFacts(format="x", terminals=()), TERMINAL) == ["ASR-291"]
    assert _rules(SourceFacts(format="x"), TERMINAL) == []


def test_codex_reports_terminals_only_without_unified_exec() -> None:
    found = {p.name: codex.WITNESS.read(p.read_bytes()).terminals for p in sorted(CODEX.glob("*.jsonl"))}
    assert found.pop("cli-exec-exit-codes.jsonl") is None  # exec_command sessions: not followed, not reported
    assert set(found.values()) == {()}


def _background(data: bytes) -> bytes:
    """fix-parser-test with its test run started in the background, as Claude Code records one."""
    edited = data.replace(b'"description":"Run parser tests"}', b'"description":"Run parser tests","run_in_background":true}', 1)
    assert edited != data
    lines = edited.split(b"\n")
    for index, raw in enumerate(lines):
        if b'"tool_result"' in raw and b'"toolUseResult"' in raw:
            value = json.loads(raw)
            if isinstance(value.get("toolUseResult"), dict):
                value["toolUseResult"]["backgroundTaskId"] = "bash_1"
                lines[index] = json.dumps(value, ensure_ascii=False).encode("utf-8")
                break
    return b"\n".join(lines)


def test_claude_code_reports_background_shells_and_the_example_declares_their_loss() -> None:
    assert claude_code.WITNESS.read(FIX_PARSER.read_bytes()).terminals == ()
    data = _background(FIX_PARSER.read_bytes())
    facts = claude_code.WITNESS.read(data)
    assert facts.terminals is not None and len(facts.terminals) == 1
    (shell,) = facts.terminals
    assert shell.call_id and not shell.details_read
    stream = claude_code_converter.convert(data)
    records = _records(stream)
    assert "terminal" in records[0]["producer"]["lossy"]
    assert check_fidelity(facts, records) == []
    undeclared = [{**records[0], "producer": {**records[0]["producer"], "lossy": []}}, *records[1:]]
    assert "ASR-157" in {f.rule for f in check_fidelity(facts, undeclared)}


# --- requesters ---------------------------------------------------------------------------------------


def test_a_requester_the_source_does_not_record_stays_absent() -> None:
    call = NativeCall("c1", "Bash", Where(2), arguments={}, requested_by=ABSENT)
    facts = SourceFacts(format="x", calls=[call])
    record = {"type": "tool_call", "callId": "c1", "callIdSource": "native", "name": "Bash", "input": {}}
    assert _rules(facts, record) == []
    assert _rules(facts, {**record, "requestedBy": "model"}) == ["ASR-274"]
    unchecked = SourceFacts(format="x", calls=[dataclasses.replace(call, requested_by=None)])
    assert _rules(unchecked, {**record, "requestedBy": "model"}) == []


# --- a pack's answer ------------------------------------------------------------------------------------


def test_the_guard_names_a_family_in_the_wrong_shape() -> None:
    assert malformed(SourceFacts(format="x", permissions=(PENDING,), terminals=(SHELL,))) is None
    bad: Any = ["not a permission"]
    assert "SourceFacts.permissions[0]" in str(malformed(SourceFacts(format="x", permissions=bad)))
    assert "SourceFacts.terminals as dict" in str(malformed(SourceFacts(format="x", terminals={})))  # type: ignore[arg-type]


def test_samples_of_every_built_in_format_read_with_the_new_families(tmp_path: Path) -> None:
    """Each built-in witness says, per family, whether it reports it; a pack left at None checks nothing."""
    cc = claude_code.WITNESS.read(FIX_PARSER.read_bytes())
    assert cc.permissions == () and cc.terminals == ()
    assert gemini.WITNESS.read(AWAITING.read_bytes()).terminals == ()


# --- subagents ----------------------------------------------------------------------------------------


def _line(kind: str, uuid: str, parent: str | None, content: Any, side: bool, second: int) -> dict[str, Any]:
    return {"parentUuid": parent, "isSidechain": side, "userType": "external", "cwd": "/w", "sessionId": "s-1",
            "version": "1.0.44", "type": kind, "uuid": uuid, "timestamp": f"2026-01-01T00:00:{second:02d}.000Z",
            "message": {"role": kind, "content": content}}


def _inline_subagents() -> bytes:
    """Two parallel subagents written inline, as Claude Code 1.0.x did: sidechain chains of their own."""
    task = [{"type": "tool_use", "id": f"toolu_T{n}", "name": "Task", "input": {"prompt": f"Look in part {n}."}}
            for n in (1, 2)]
    lines = [_line("user", "u1", None, "Find the bug.", False, 1), _line("assistant", "a1", "u1", task, False, 2)]
    for n in (1, 2):
        lines += [
            _line("user", f"s{n}u", None, f"Look in part {n}.", True, 2 + n),
            _line("assistant", f"s{n}a", f"s{n}u",
                  [{"type": "tool_use", "id": f"toolu_S{n}", "name": "Grep", "input": {"pattern": "bug"}}], True, 4 + n),
            _line("user", f"s{n}r", f"s{n}a",
                  [{"type": "tool_result", "tool_use_id": f"toolu_S{n}", "content": "none"}], True, 6 + n)]
    lines += [_line("user", f"r{n}", "a1", [{"type": "tool_result", "tool_use_id": f"toolu_T{n}", "content": "none"}],
                    False, 8 + n) for n in (1, 2)]
    return b"\n".join(json.dumps(line).encode() for line in lines) + b"\n"


def test_inline_subagents_are_reported_by_their_chains_and_flattening_is_reported_not_scored() -> None:
    data = _inline_subagents()
    facts = claude_code.WITNESS.read(data)
    assert facts.subagents is not None
    assert [(s.prompts, sorted(s.call_ids), s.whole_input) for s in facts.subagents] == [
        (("Look in part 1.",), ["toolu_S1"], False), (("Look in part 2.",), ["toolu_S2"], False)]
    records = _records(claude_code_converter.convert(data))  # the example writes them in the session's scope
    scored, reported = observe_fidelity(facts, records)
    assert scored == []
    assert [f.rule for f in reported] == ["Lineage"] * 4 and {f.family for f in reported} == {REPORTED}
    scoped = [*records, {"type": "subagent", "seq": len(records), "id": "sub"}]
    assert observe_fidelity(facts, scoped)[1] == []
    assert observe_fidelity(dataclasses.replace(facts, subagents=None), records)[1] == []


def test_a_subagent_file_is_one_subagent_whose_header_says_so() -> None:
    path = ROOT / "examples/claude-code-converter/samples/subagent-task/subagents/agent-a4c81f2.jsonl"
    facts = claude_code.WITNESS.read(path.read_bytes())
    assert facts.subagents is not None and [(s.agent_id, s.whole_input) for s in facts.subagents] == [("a4c81f2", True)]
    records = _records(claude_code_converter.convert(path.read_bytes()))
    assert records[0]["scope"] == "subagent" and observe_fidelity(facts, records) == ([], [])
    primary = [{**records[0], "scope": "primary"}, *records[1:]]
    assert [f.rule for f in observe_fidelity(facts, primary)[1]] == ["Lineage"]


def test_a_producer_result_carries_what_was_reported_beside_its_verdict() -> None:
    from asr_conformance.gate.results import TestRecord

    record = TestRecord("t", "impl", "producer", "fidelity").with_(fidelity_reported=("permission (reported): ...",))
    again = TestRecord.from_json(record.to_json())
    assert again == record and again.details()["fidelity_reported"] == ["permission (reported): ..."]
    assert "fidelity_reported" not in TestRecord("t", "impl", "producer", "fidelity").details()


# --- configuration --------------------------------------------------------------------------------------


AT, LATER = "2026-01-01T00:00:01Z", "2026-01-01T00:00:09Z"
FIRST = NativeConfig(Where(2), {"model": frozenset({"m1"}), "permissionMode": frozenset({"on-request"})}, False, AT)
SECOND = NativeConfig(Where(8), {"model": frozenset({"m2"}), "permissionMode": frozenset({"on-request"})}, True, LATER)


def test_a_change_is_written_only_where_the_source_records_one_with_its_values() -> None:
    facts = SourceFacts(format="x", configs=(FIRST, SECOND), times=frozenset({AT, LATER}),
                        permission_modes=frozenset({"on-request"}))
    change = {"type": "config_change", "ts": LATER, "model": {"id": "m2"}}
    assert _rules(facts, change) == []
    assert _rules(facts, {**change, "ts": AT, "model": {"id": "m1"}}) == ["ASR-172"]  # the state, not a change
    assert _rules(facts, {**change, "model": {"id": "m3"}}) == ["ASR-172"]  # not the recorded value
    assert _rules(facts, {**change, "effort": "high"}) == []  # a member the pack does not read: not checked
    snapshot = {"type": "config_change", "ts": AT, "snapshot": True, "model": {"id": "m1"}, "permissionMode": "on-request"}
    assert _rules(facts, snapshot) == []
    assert _rules(facts, {**snapshot, "model": {"id": "m2"}}) == ["ASR-187"]  # another point's value
    assert _rules(SourceFacts(format="x", configs=()), {"type": "config_change", "model": {"id": "m"}}) == ["ASR-172"]
    assert _rules(SourceFacts(format="x", times=facts.times), change) == []  # not reported: not checked


def test_claude_code_records_mode_changes_and_commands_as_change_points() -> None:
    path = ROOT / "examples/claude-code-converter/samples/compaction-question-and-hooks.jsonl"
    facts = claude_code.WITNESS.read(path.read_bytes())
    assert facts.configs is not None
    changes = [(c.where.line, dict(c.values)) for c in facts.configs if c.change]
    assert changes[:1] == [(2, {})]  # the /plan command
    assert (4, {"permissionMode": frozenset({"plan"})}) in changes and all(c.other_ts for c in facts.configs if not c.ts)


def test_codex_records_each_turn_and_a_change_where_a_turn_differs() -> None:
    facts = codex.WITNESS.read((CODEX / "user-shell-bare-patch-aborted.jsonl").read_bytes())
    assert facts.configs and not facts.configs[0].change
    assert {"model", "effort", "permissionMode", "sandbox"} == set(facts.configs[0].values)


def test_a_mode_that_differs_after_a_command_is_still_a_change() -> None:
    """The last mode is the last one recorded, whatever lines (a local command) stand between."""
    lines = [_line("user", "u1", None, "hi", False, 1), _line("user", "u2", "u1", "<command-name>/model</command-name>",
                                                              False, 2), _line("user", "u3", "u2", "go on", False, 3)]
    lines[0]["permissionMode"], lines[2]["permissionMode"] = "default", "plan"
    facts = claude_code.WITNESS.read(b"\n".join(json.dumps(line).encode() for line in lines))
    assert facts.configs is not None
    assert [(c.where.line, c.change) for c in facts.configs] == [(1, False), (2, True), (3, True)]


# --- triggers -----------------------------------------------------------------------------------------


SCHEDULED = {"type": "message", "turnId": "t1", "role": "user", "trigger": {"kind": "schedule", "native": "scheduled"}}


def test_a_trigger_comes_only_from_a_value_the_source_records() -> None:
    none = SourceFacts(format="x", triggers=frozenset())
    assert _rules(none, SCHEDULED) == ["ASR-186"]
    assert _rules(none, {**SCHEDULED, "trigger": {"kind": "schedule"}}) == ["ASR-186"]  # a kind from nothing
    header_trigger = [{**_stream()[0], "trigger": {"kind": "schedule"}}]
    assert [f.rule for f in check_fidelity(none, header_trigger)] == ["ASR-186"]
    assert _rules(none, {"type": "compaction", "turnId": "t1", "trigger": "auto"}) == []  # the compaction's own
    recorded = SourceFacts(format="x", triggers=frozenset({"scheduled"}))
    assert _rules(recorded, SCHEDULED) == []
    assert _rules(recorded, {**SCHEDULED, "trigger": {"kind": "schedule", "native": "cron"}}) == ["ASR-186"]
    scored, reported = observe_fidelity(recorded, _stream({**SCHEDULED, "trigger": {"kind": "schedule"}}))
    assert scored == [] and [f.rule for f in reported] == ["trigger"]  # which mapping gave the kind: not checked
    # An unreporting pack checks no trigger: the reading is what catches an invented one.
    assert _rules(SourceFacts(format="x"), SCHEDULED) == []


def test_the_witnesses_read_trigger_values_wherever_a_line_records_them() -> None:
    data = FIX_PARSER.read_bytes()
    assert claude_code.WITNESS.read(data).triggers == frozenset()
    line = json.loads(data.split(b"\n")[0])
    for origin in ("scheduled", {"kind": "scheduled", "taskId": "8c41d2e7"}):
        marked = json.dumps({**line, "turnOrigin": origin}).encode() + b"\n" + data
        assert "scheduled" in (claude_code.WITNESS.read(marked).triggers or ())
    # Newer transcripts say how a prompt entered in several members; a converter may take its native from any.
    notified = json.dumps({**line, "origin": {"kind": "task-notification"}, "promptSource": "system",
                           "turnOrigin": "task_notification"}).encode() + b"\n" + data
    assert {"task-notification", "system", "task_notification"} <= (claude_code.WITNESS.read(notified).triggers or set())
    for path in sorted(CODEX.glob("*.jsonl")):
        assert codex.WITNESS.read(path.read_bytes()).triggers == frozenset(), path.name
    rollout = (CODEX / "user-shell-bare-patch-aborted.jsonl").read_bytes()
    event = (b'{"timestamp":"2026-01-01T00:00:09.000Z","type":"event_msg","payload":{"type":"task_started",'
             b'"turn_id":"t9","turn_trigger":"automation"}}\n')
    assert codex.WITNESS.read(rollout.rstrip(b"\n") + b"\n" + event).triggers == {"automation"}
    bad: Any = ["automation"]
    assert "SourceFacts.triggers" in str(malformed(SourceFacts(format="x", triggers=bad)))


# --- turn links ---------------------------------------------------------------------------------------


PARENTED = {"type": "state", "turnId": "t2", "state": "running", "parentTurn": {"turnId": "t1"}}


def test_a_turn_link_comes_only_from_the_source() -> None:
    recorded = SourceFacts(format="x", turn_links=frozenset({("t2", "parentTurn", "t1")}))
    assert _rules(recorded, PARENTED) == []
    assert _rules(recorded, {**PARENTED, "parentTurn": {"turnId": "t0"}}) == ["ASR-183"]
    assert _rules(recorded, {**PARENTED, "rootTurn": {"turnId": "t1"}}) == ["ASR-183"]  # recorded as the parent only
    assert _rules(SourceFacts(format="x", turn_links=frozenset()), PARENTED) == ["ASR-183"]
    assert _rules(SourceFacts(format="x"), PARENTED) == []  # not reported: the reading is what catches it
    bad: Any = {("t2", "parentTurn")}
    assert "SourceFacts.turn_links" in str(malformed(SourceFacts(format="x", turn_links=bad)))


def test_codex_reads_turn_links_beside_a_turn_id() -> None:
    rollout = (CODEX / "user-shell-bare-patch-aborted.jsonl").read_bytes()
    assert codex.WITNESS.read(rollout).turn_links == frozenset()
    event = (b'{"timestamp":"2026-01-01T00:00:09.000Z","type":"event_msg","payload":{"type":"task_started",'
             b'"turn_id":"t9","parent_turn_id":"t8","root_turn_id":"t1"}}\n')
    links = codex.WITNESS.read(rollout.rstrip(b"\n") + b"\n" + event).turn_links
    assert links == {("t9", "parentTurn", "t8"), ("t9", "rootTurn", "t1")}


# --- input requests and hooks in Codex rollouts ----------------------------------------------------------


def test_codex_reads_request_user_input_answers_from_the_output_and_none_from_a_cancellation() -> None:
    facts = codex.WITNESS.read((CODEX / "plan-mode-questions-and-hook.jsonl").read_bytes())
    answered, cancelled = facts.questions
    assert answered.questions == ("Which field separator should the export use?",
                                  "Should amounts keep their currency symbol?")
    assert answered.answers == ("Semicolon", "Plain numbers (Recommended)",
                                "user_note: two decimals, no thousands separator")
    assert cancelled.answers is None  # "request_user_input was cancelled before receiving a response"
    facts = SourceFacts(format="x", questions=facts.questions)  # the answers alone, against a stream of one record
    request = {"type": "input_request", "requestId": answered.call_id, "callId": answered.call_id, "mode": "questions",
               "questions": [{"id": "separator", "text": answered.questions[0]}], "status": "answered",
               "answers": [{"questionId": "separator", "selected": ["Semicolon"]}]}
    assert _rules(facts, request) == []
    assert _rules(facts, {**request, "answers": [{"questionId": "separator", "selected": ["Comma (Recommended)"]}]}) \
        == ["ASR-285"]
    assert _rules(facts, {**request, "status": "cancelled", "answers": []}) == ["ASR-285"]  # it was answered
    assert _rules(facts, {**request, "requestId": cancelled.call_id, "callId": cancelled.call_id}) == ["ASR-285"]
    assert _rules(facts, {**request, "requestId": cancelled.call_id, "callId": cancelled.call_id,
                          "status": "cancelled", "answers": []}) == []


def test_codex_records_hook_runs_only_through_injected_prompts_and_never_their_details() -> None:
    facts = codex.WITNESS.read((CODEX / "plan-mode-questions-and-hook.jsonl").read_bytes())
    assert facts.hooks is not None and [(h.where.line, h.event, h.details) for h in facts.hooks] == [(18, None, {})]
    assert codex.WITNESS.read((CODEX / "cli-exec-exit-codes.jsonl").read_bytes()).hooks == ()
    facts = SourceFacts(format="x", hooks=facts.hooks)
    hook = {"type": "hook", "event": "stop", "status": "completed"}
    assert _rules(facts, hook) == []  # that a hook ran may be written; its execution details may not
    assert _rules(facts, {**hook, "exitCode": 0}) == ["ASR-287"]
    assert _rules(dataclasses.replace(facts, hooks=None), {**hook, "exitCode": 0}) == []


# --- subagents in Codex rollouts and Gemini CLI sessions ---------------------------------------------------


def _codex_lines(*payloads: tuple[str, dict[str, Any]]) -> bytes:
    return b"".join(json.dumps({"timestamp": f"2026-01-01T00:00:{n:02d}.000Z", "type": kind, "payload": payload}).encode()
                    + b"\n" for n, (kind, payload) in enumerate(payloads, 1))


def test_codex_reports_spawned_subagents_and_a_subagent_thread_of_its_own() -> None:
    call = {"type": "function_call", "name": "spawn_agent", "call_id": "call_S", "arguments": '{"message":"Map the parser."}'}
    spawn = {"type": "collab_agent_spawn_end", "call_id": "call_S", "sender_thread_id": "parent-1",
             "new_thread_id": "child-1", "prompt": "Map the parser.", "status": "running"}
    parent = _codex_lines(("session_meta", {"id": "parent-1", "cwd": "/w"}), ("response_item", call),
                          ("event_msg", {**spawn, "type": "collab_agent_spawn_begin"}), ("event_msg", spawn))
    facts = codex.WITNESS.read(parent)
    assert facts.subagents is not None
    assert [(s.agent_id, s.parent_call_id, s.prompts, s.whole_input) for s in facts.subagents] == [
        ("child-1", "call_S", ("Map the parser.",), False)]  # begin and end of one spawn: one subagent
    flat = {"type": "message", "role": "user", "content": [{"type": "text", "text": "Map the parser."}]}
    assert [f.rule for f in observe_fidelity(SourceFacts(format="x", subagents=facts.subagents), _stream(flat))[1]] \
        == ["Lineage"]  # the prompt written as the session's own user message: reported, never scored
    assert observe_fidelity(SourceFacts(format="x", subagents=facts.subagents), _stream())[1] == []
    child = _codex_lines(("session_meta", {"id": "child-1", "cwd": "/w", "source": {
        "subagent": {"thread_spawn": {"parent_thread_id": "parent-1", "depth": 1}}}}))
    subagents = codex.WITNESS.read(child).subagents
    assert subagents is not None and [(s.agent_id, s.whole_input) for s in subagents] == [("child-1", True)]
    own = SourceFacts(format="x", subagents=subagents)
    assert [f.rule for f in observe_fidelity(own, [{"type": "session", "seq": 0, "id": "h", "scope": "primary"}])[1]] \
        == ["Lineage"]
    assert observe_fidelity(own, [{"type": "session", "seq": 0, "id": "h", "scope": "subagent"}])[1] == []
    assert codex.WITNESS.read((CODEX / "cli-exec-exit-codes.jsonl").read_bytes()).subagents == ()


def test_gemini_reports_a_subagent_session_and_calls_that_delegate_to_one() -> None:
    meta = {"sessionId": "g-1", "projectHash": "ab" * 32, "startTime": "2026-01-01T00:00:01.000Z",
            "lastUpdated": "2026-01-01T00:00:01.000Z"}
    user = {"id": "m1", "timestamp": "2026-01-01T00:00:02.000Z", "type": "user", "content": [{"text": "Find it."}]}
    call = {"id": "c1", "name": "codebase_investigator", "args": {"objective": "Find it."}, "status": "success",
            "timestamp": "2026-01-01T00:00:03.000Z", "agentId": "sub-9",
            "result": [{"functionResponse": {"id": "c1", "name": "codebase_investigator", "response": {"output": "ok"}}}]}
    reply = {"id": "m2", "timestamp": "2026-01-01T00:00:03.000Z", "type": "gemini", "content": "", "toolCalls": [call]}

    def session(**extra: Any) -> bytes:
        return b"".join(json.dumps(v).encode() + b"\n" for v in ({**meta, **extra}, user, reply))

    main = gemini.WITNESS.read(session(kind="main")).subagents
    assert main is not None and [(s.agent_id, s.parent_call_id, s.whole_input) for s in main] == [("sub-9", "c1", False)]
    own = gemini.WITNESS.read(session(kind="subagent")).subagents
    assert own is not None and [(s.agent_id, s.whole_input) for s in own][0] == ("g-1", True)
    plain = ROOT / "examples/gemini-converter/samples/calls-updates-parallel-cancelled.jsonl"
    assert gemini.WITNESS.read(plain.read_bytes()).subagents == ()


# --- provider identity ------------------------------------------------------------------------------------


def _exact(call_id: str, kind: str = "tool_call", **names: str) -> dict[str, Any]:
    return {"type": kind, "callId": call_id, "provider": {"kind": "mcp", "identity": "exact", **names}}


def test_an_exact_provider_only_where_the_source_records_the_identity_in_separate_fields() -> None:
    facts = SourceFacts(format="x", providers={"c1": frozenset({("ledger_db", "describe_table")}),
                                               "c2": frozenset({(None, "read")})})
    assert _rules(facts, _exact("c1", server="ledger_db", tool="describe_table")) == []
    result = _exact("c1", "tool_result", server="ledger_db", tool="describe_table")  # ASR-276: on the result
    assert "ASR-255" not in _rules(facts, result)  # (its call is not in these facts: ASR-267 says so)
    assert _rules(facts, _exact("c1", server="ledger", tool="db__describe_table")) == ["ASR-255"]
    assert _rules(facts, _exact("c2", server="anything", tool="read")) == []  # a namespace: the server is not split
    assert _rules(facts, _exact("c3", server="ledger_db", tool="list_tables")) == ["ASR-255"]
    parsed = {"type": "tool_call", "callId": "c3", "provider": {"kind": "mcp", "identity": "parsed", "server": "x"}}
    assert _rules(facts, parsed) == []  # a registry rule's business, not checked here
    assert _rules(SourceFacts(format="x"), _exact("c3", server="a", tool="b")) == []  # not reported: not checked
    bad: Any = {"c1": {("a",)}}
    assert "SourceFacts.providers" in str(malformed(SourceFacts(format="x", providers=bad)))


def test_the_witnesses_read_where_tool_identities_are_recorded() -> None:
    facts = codex.WITNESS.read((CODEX / "plan-mode-questions-and-hook.jsonl").read_bytes())
    assert facts.providers == {"call_D9pWr3Yb6KeN0aTx5QvLm2Gc": {("ledger_db", "describe_table")}}  # its end event
    call = {"type": "function_call", "namespace": "mcp__haft", "name": "haft_method", "call_id": "call_N",
            "arguments": "{}"}
    rollout = _codex_lines(("session_meta", {"id": "s", "cwd": "/w"}), ("response_item", call))
    assert codex.WITNESS.read(rollout).providers == {"call_N": {(None, "haft_method")}}
    named = codex.WITNESS.read(rollout)
    assert named.calls[0].name == "haft_method"  # ASR-252: the bare name, or the namespace's spelling of it
    facts = SourceFacts(format="x", calls=named.calls)
    call_record = {"type": "tool_call", "callId": "call_N", "callIdSource": "native", "input": {}}
    assert _rules(facts, {**call_record, "name": "haft_method"}) == []
    assert _rules(facts, {**call_record, "name": "mcp__haft__haft_method"}) == []
    assert _rules(facts, {**call_record, "name": "haft__haft_method"}) == ["ASR-252"]
    assert gemini.WITNESS.read(AWAITING.read_bytes()).providers == {}  # a tool call records no server apart
    assert claude_code.WITNESS.read(FIX_PARSER.read_bytes()).providers is None


def test_gemini_records_no_turn_link_and_no_trigger_but_its_session_kind() -> None:
    facts = gemini.WITNESS.read((ROOT / "examples/gemini-converter/samples/rewind-and-checkpoint.jsonl").read_bytes())
    assert facts.turn_links == frozenset() and facts.triggers is not None
    kinds = {s: gemini.WITNESS.read(s.read_bytes()).triggers
             for s in sorted((ROOT / "examples/gemini-converter/samples").glob("*"))}
    assert all(len(kind) <= 1 for kind in kinds.values())  # the metadata's kind, where it has one
    assert kinds[ROOT / "examples/gemini-converter/samples/rewind-and-checkpoint.jsonl"] == {"main"}
    assert _rules(SourceFacts(format="x", triggers=frozenset({"subagent"})),
                  {"type": "state", "turnId": "t1", "trigger": {"kind": "agent", "native": "subagent"}}) == []
