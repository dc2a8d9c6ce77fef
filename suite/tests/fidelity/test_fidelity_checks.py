"""check_fidelity: the example converter passes; each check is tolerant of legitimate mapping choices
and still fails on the one change that breaks its rule."""

from __future__ import annotations

import copy

import pytest
from fidelity_helpers import EXAMPLE, SAMPLES, SAMPLES_DIR, convert, run_converter, sample_id

from asr_conformance.fidelity.claude_code import WITNESS
from asr_conformance.fidelity.compare import check_fidelity
from asr_conformance.fidelity.facts import SourceFacts
from asr_conformance.reference.checks import validate_bytes


def example(name: str) -> tuple[SourceFacts, list[dict]]:
    data = (SAMPLES_DIR / name).read_bytes()
    return WITNESS.read(data), convert(EXAMPLE, data)


def rules(facts: SourceFacts, records: list[dict]) -> set[str]:
    return {f.rule for f in check_fidelity(facts, records)}


@pytest.mark.parametrize("path", SAMPLES, ids=sample_id)
def test_example_converter_is_faithful(path) -> None:
    data = path.read_bytes()
    stream = run_converter(EXAMPLE, data)
    assert validate_bytes(stream).valid
    assert check_fidelity(WITNESS.read(data), convert(EXAMPLE, data)) == []


def of(records: list[dict], kind: str) -> list[dict]:
    return [r for r in records if r["type"] == kind]


def test_findings_name_the_native_line_and_the_record() -> None:
    facts, records = example("fix-parser-test.jsonl")
    of(records, "tool_call")[0]["name"] = "bash"
    (finding,) = check_fidelity(facts, records)
    assert finding.rule == "ASR-252" and finding.family == "exact-values"
    assert finding.where is not None and finding.where.line == 3 and '"Bash"' in finding.where.excerpt
    assert finding.seq == of(records, "tool_call")[0]["seq"]
    assert "'bash'" in finding.message or '"bash"' in finding.message


# --- tolerance: a faithful converter that maps differently must pass ---------------------------


def test_text_split_into_parts_or_joined_passes() -> None:
    facts, records = example("parallel-calls-and-upgrade.jsonl")
    for record in of(records, "message") + of(records, "tool_result"):
        text = "".join(p["text"] for p in record.get("content", []))
        middle = len(text) // 2
        record["content"] = [{"type": "text", "text": text[:middle]}, {"type": "text", "text": text[middle:]}]
    assert check_fidelity(facts, records) == []


def test_messages_joined_into_one_record_pass() -> None:
    facts, records = example("plain-chat.jsonl")
    messages = of(records, "message")
    first = messages[0]
    first["content"] = [{"type": "text", "text": "\n".join(t["text"] for m in messages for t in m["content"])}]
    kept = [r for r in records if r["type"] != "message" or r is first]
    assert check_fidelity(facts, kept) == []


def test_times_in_another_offset_and_precision_pass() -> None:
    facts, records = example("fix-parser-test.jsonl")
    for record in records:
        if "ts" in record:
            # 09:21:07.532Z is 11:21:07.532000+02:00
            hour = int(record["ts"][11:13]) + 2
            record["ts"] = f"{record['ts'][:11]}{hour:02d}{record['ts'][13:23]}000+02:00"
    assert check_fidelity(facts, records) == []


def test_optional_members_left_out_pass() -> None:
    facts, records = example("fix-parser-test.jsonl")
    for record in records:
        for key in ("ts", "requestedBy", "raw", "messageId"):
            record.pop(key, None)
    assert check_fidelity(facts, records) == []


def test_input_as_text_passes_and_kind_by_name_passes() -> None:
    facts, records = example("fix-parser-test.jsonl")
    import json

    for call in of(records, "tool_call"):
        call["inputText"] = json.dumps(call.pop("input"))
        call["kind"] = {"Bash": "execute", "Edit": "edit"}.get(call["name"], "other")
    assert check_fidelity(facts, records) == []


def test_error_as_denied_or_interrupted_passes() -> None:
    facts, records = example("declined-question.jsonl")
    for status in ("denied", "interrupted", "failed"):
        changed = copy.deepcopy(records)
        next(r for r in of(changed, "tool_result") if r["status"] in ("failed", "denied"))["status"] = status
        assert check_fidelity(facts, changed) == []


@pytest.mark.parametrize("lossy", ["tool_call", "tool_calls", "claude-code.tool_use", "tool_call.input"])
def test_declared_loss_excuses_missing_calls(lossy: str) -> None:
    facts, records = example("fix-parser-test.jsonl")
    if lossy == "tool_call.input":
        for call in of(records, "tool_call"):
            del call["input"]
    else:
        records = [r for r in records if r["type"] != "tool_call"]
    assert "ASR-157" in rules(facts, records)
    records[0]["producer"]["lossy"].append(lossy)
    assert check_fidelity(facts, records) == []


def test_declared_loss_in_a_declaration_counts() -> None:
    facts, records = example("plain-chat.jsonl")
    records = [r for r in records if not (r["type"] == "message" and r["role"] == "user")]
    assert "ASR-157" in rules(facts, records)
    records.append({"type": "declaration", "seq": len(records), "id": f"r{len(records)}", "lossy": ["message.user"]})
    assert check_fidelity(facts, records) == []


def test_sidechain_loss_excuses_sidechain_lines_only() -> None:
    facts, records = example("subagent-task.jsonl")
    without = [r for r in records if not (r["type"] == "message" and "Searching" in str(r.get("content")))]
    records_lossy = copy.deepcopy(without)
    records_lossy[0]["producer"]["lossy"].append("claude-code.sidechain")
    assert "ASR-157" in rules(facts, without)
    assert check_fidelity(facts, records_lossy) == []


# --- each check fails on exactly its change ---------------------------------------------------


def break_(name: str, change) -> set[str]:
    facts, records = example(name)
    change(records)
    return rules(facts, records)


def test_input_changed() -> None:
    assert break_("fix-parser-test.jsonl", lambda r: of(r, "tool_call")[0]["input"].update(command="cargo test")) == {"ASR-254"}


def test_call_id_source_derived_for_a_native_id() -> None:
    assert break_("fix-parser-test.jsonl", lambda r: of(r, "tool_call")[0].update(callIdSource="derived")) == {"ASR-250"}


def test_paired_ambiguous_result() -> None:
    def pair(records: list[dict]) -> None:
        result = next(r for r in of(records, "tool_result") if r["linkage"] == "ambiguous")
        result.update(linkage="exact", callId=result["nativeCallId"])
    assert break_("orphan-and-duplicate-ids.jsonl", pair) == {"ASR-262"}


def test_result_paired_with_another_call() -> None:
    def swap(records: list[dict]) -> None:
        first, second = of(records, "tool_result")[:2]
        first["callId"], second["callId"] = second["callId"], first["callId"]
    assert "ASR-262" in break_("fix-parser-test.jsonl", swap)


def test_result_text_missing_content() -> None:
    assert break_("fix-parser-test.jsonl", lambda r: of(r, "tool_result")[0].pop("content")) == {"ASR-259"}


def test_times() -> None:
    assert break_("fix-parser-test.jsonl", lambda r: of(r, "tool_call")[0].update(ts="2026-03-14T09:21:08.000Z")) == {"ASR-103"}
    assert break_("plain-chat.jsonl", lambda r: r[0].update(startedAt="2020-01-01T00:00:00Z")) == {"ASR-154"}
    assert break_("plain-chat.jsonl",
                  lambda r: r.append({"type": "state", "seq": len(r), "id": f"r{len(r)}", "ts": "2030-01-01T00:00:00Z",
                                      "state": "idle"})) == {"ASR-104", "ASR-169"}


def test_agent_version() -> None:
    assert break_("plain-chat.jsonl", lambda r: r[0]["agent"].update(version="2.0.62")) == {"ASR-150"}
    assert break_("parallel-calls-and-upgrade.jsonl",
                  lambda r: of(r, "declaration")[0].update(agentVersion="9.9.9")) == {"ASR-179"}


def test_timing_from_the_result_itself_is_allowed_but_not_invented() -> None:
    facts, records = example("compaction-question-and-hooks.jsonl")
    glob = next(r for r in of(records, "tool_result") if r["callId"] == "toolu_01Gl2Ob6Fi0Le4Sx8Yz2Ab6C")
    glob["durationMs"] = 38  # toolUseResult.durationMs
    assert check_fidelity(facts, records) == []
    glob["durationMs"] = 42
    assert rules(facts, records) == {"ASR-261"}
    glob.pop("durationMs")
    glob["startedAt"] = glob["ts"]
    assert rules(facts, records) == {"ASR-261"}


def test_secrets_never_reach_the_stream() -> None:
    facts, records = example("plain-chat.jsonl")
    facts.secrets = ("ghp_SECRETVALUE",)
    assert check_fidelity(facts, records) == []
    records[0]["_meta"] = {"token": "ghp_SECRETVALUE"}
    assert rules(facts, records) == {"ASR-283"}


def test_kind_may_not_vary_for_one_name() -> None:
    facts, records = example("declined-question.jsonl")
    bash = [c for c in of(records, "tool_call") if c["name"] == "Bash"]
    for call in bash:
        call["kind"] = "execute"
    assert check_fidelity(facts, records) == []
    bash[0]["kind"] = "read"
    assert rules(facts, records) == {"ASR-253"}
    bash[0].pop("kind")
    assert rules(facts, records) == {"ASR-253"}


def test_orphan_kept_without_its_id_passes_but_dropped_fails() -> None:
    facts, records = example("orphan-and-duplicate-ids.jsonl")
    calls = {c["callId"] for c in of(records, "tool_call")}
    orphan = next(r for r in of(records, "tool_result") if r.get("callId") and r["callId"] not in calls)
    orphan.pop("callId")
    orphan["linkage"] = "none"
    assert check_fidelity(facts, records) == []
    records.remove(orphan)
    assert rules(facts, records) == {"ASR-266"}


def test_decider_accepted_only_where_the_source_speaks_of_a_decision() -> None:
    import json

    lines = (SAMPLES_DIR / "fix-parser-test.jsonl").read_bytes()
    call_id = "toolu_01Vb8XkQ3mLp9RtW2sYc6HzN"
    hook = {"type": "progress", "sessionId": "7b2e4c1a-93d5-4f60-8a1e-2c5d9b0f7e31", "uuid": "f1",
            "timestamp": "2026-03-14T09:21:07.600Z", "toolUseID": call_id, "parentToolUseID": call_id,
            "data": {"type": "hook_progress", "hookEvent": "PreToolUse", "permissionDecision": "allow"}}
    with_hook = lines + json.dumps(hook).encode() + b"\n"
    records = convert(EXAMPLE, lines)
    next(r for r in of(records, "tool_result") if r["callId"] == call_id)["permission"] = {
        "decision": "allow_once", "decidedBy": "hook"}
    assert rules(WITNESS.read(lines), records) == {"ASR-270"}
    assert "ASR-270" not in rules(WITNESS.read(with_hook), records)


def test_judging_reads_streams_with_line_separators_inside_strings() -> None:
    """A record ends at "\\n" only: U+2028 or U+0085 inside a string must not make the stream unreadable."""
    from asr_conformance.harness.judging.fidelity import judge_fidelity, stream_records

    data = (SAMPLES_DIR / "plain-chat.jsonl").read_bytes()
    edited = data.replace(b'"content":"', b'"content":"a\xe2\x80\xa8b\xc2\x85c', 1)
    stream = run_converter(EXAMPLE, edited)
    assert "\u2028".encode() in stream
    assert stream_records(stream) == convert(EXAMPLE, edited)
    judged = judge_fidelity(edited, stream)
    assert judged.not_checked is None and judged.findings == []


def test_a_call_made_by_code_execution_is_requested_by_code_with_its_parent() -> None:
    """caller type code_execution_...: requestedBy code (ASR-274), parentCallId the caller's tool_id (ASR-275)."""
    import json

    line = {"parentUuid": None, "isSidechain": False, "type": "assistant", "sessionId": "s1", "uuid": "a1",
            "timestamp": "2026-05-01T10:00:00.000Z", "message": {"id": "msg_1", "role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_01Code", "name": "Bash", "input": {"command": "ls"},
                 "caller": {"type": "code_execution_20250825", "tool_id": "srvtoolu_01Cell"}},
                {"type": "tool_use", "id": "toolu_01Direct", "name": "Read", "input": {"file_path": "/a"},
                 "caller": {"type": "direct"}}]}}
    data = (json.dumps(line) + "\n").encode()
    records = convert(EXAMPLE, data)
    calls = {r["callId"]: r for r in records if r["type"] == "tool_call"}
    assert calls["toolu_01Code"]["requestedBy"] == "code" and calls["toolu_01Code"]["parentCallId"] == "srvtoolu_01Cell"
    assert calls["toolu_01Direct"]["requestedBy"] == "model" and "parentCallId" not in calls["toolu_01Direct"]
    assert check_fidelity(WITNESS.read(data), records) == []


def test_calls_sharing_an_id_may_each_keep_the_parent_the_source_records() -> None:
    """Two tool_use blocks share an ID; only the first was run by code: its parentCallId is recorded."""
    import json

    def line(uuid: str, caller: dict) -> str:
        return json.dumps({"type": "assistant", "sessionId": "s1", "uuid": uuid, "timestamp": "2026-05-01T10:00:00.000Z",
                           "message": {"id": f"msg_{uuid}", "role": "assistant", "content": [
                               {"type": "tool_use", "id": "toolu_01Same", "name": "Bash", "input": {"command": "ls"},
                                "caller": caller}]}})

    data = (line("a1", {"type": "code_execution_20250825", "tool_id": "srvtoolu_01Cell"}) + "\n"
            + line("a2", {"type": "direct"}) + "\n").encode()
    records = convert(EXAMPLE, data)
    assert [r.get("parentCallId") for r in records if r["type"] == "tool_call"] == ["srvtoolu_01Cell", None]
    assert check_fidelity(WITNESS.read(data), records) == []
    invented = copy.deepcopy(records)
    next(r for r in invented if r["type"] == "tool_call" and "parentCallId" not in r)["parentCallId"] = "toolu_01Other"
    assert rules(WITNESS.read(data), invented) == {"ASR-275"}
