"""The Claude Code witness: facts of each sample, sniffing, format names, refusing malformed input."""

from __future__ import annotations

import json

import pytest
from fidelity_helpers import EXAMPLE, SAMPLES, SAMPLES_DIR, run_converter, sample_id

from asr_conformance.fidelity.claude_code import WITNESS
from asr_conformance.fidelity.facts import NotThisFormat, SourceFacts

#: Per sample: calls, results, messages, questions, the first agent version.
EXPECTED = {
    "fix-parser-test.jsonl": (3, 3, 3, 0, "2.1.17"),
    "plain-chat.jsonl": (0, 0, 4, 0, "2.0.61"),
    "interrupted-edit.jsonl": (2, 1, 2, 0, "2.1.2"),
    "parallel-calls-and-upgrade.jsonl": (3, 3, 3, 0, "2.1.16"),
    "orphan-and-duplicate-ids.jsonl": (2, 2, 2, 0, "2.1.17"),
    "subagent-task.jsonl": (1, 1, 4, 0, "2.1.39"),
    "subagent-task/subagents/agent-a4c81f2.jsonl": (2, 2, 2, 0, "2.1.39"),
    "compaction-question-and-hooks.jsonl": (3, 3, 3, 1, "2.1.39"),
    "declined-question.jsonl": (3, 3, 3, 1, "2.1.44"),
    "code-execution-calls.jsonl": (2, 2, 2, 0, "2.1.42"),
}


def facts_of(name: str) -> SourceFacts:
    return WITNESS.read((SAMPLES_DIR / name).read_bytes())


def test_every_sample_has_expectations() -> None:
    assert sorted(EXPECTED) == sorted(sample_id(p) for p in SAMPLES)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_facts_of_each_sample(name: str) -> None:
    facts = facts_of(name)
    calls, results, messages, questions, version = EXPECTED[name]
    assert (len(facts.calls), len(facts.results), len(facts.messages), len(facts.questions)) == (
        calls, results, messages, questions)
    assert facts.agent_version == version
    assert facts.format == "claude-code-jsonl"
    assert not facts.records_exit_codes
    assert all(r.exit_code is None for r in facts.results)
    code = name == "code-execution-calls.jsonl"  # its calls were made by the model's program
    assert all(c.requested_by == ("code" if code else "model") for c in facts.calls)
    assert all((c.parent_call_id is not None) is code for c in facts.calls)


def test_error_flag_gives_error_statuses() -> None:
    facts = facts_of("fix-parser-test.jsonl")
    failed = [r for r in facts.results if "failed" in r.statuses]
    assert len(failed) == 1 and "completed" not in failed[0].statuses
    assert failed[0].model_texts and failed[0].model_texts[0].startswith("running 3 tests\n")


def test_subagent_file_accepts_the_agent_id_as_session_id() -> None:
    facts = facts_of("subagent-task/subagents/agent-a4c81f2.jsonl")
    assert facts.session_ids == {"9e4d2b7a-5c13-4f86-a0b2-6d8e1f3c7a59", "a4c81f2", "agent-a4c81f2"}
    assert all(c.sidechain for c in facts.calls)
    glob_like = {r.call_id: r.timing.duration_ms for r in facts.results}
    assert glob_like["toolu_01Gp3LxW7eRn5TbK9qMz2VcH"] == 41.0  # toolUseResult.durationMs


def test_agent_progress_records_a_parent_link_but_no_call() -> None:
    facts = facts_of("subagent-task.jsonl")
    assert [c.name for c in facts.calls] == ["Task"]
    assert facts.parent_links == {"toolu_01Gp3LxW7eRn5TbK9qMz2VcH": frozenset({"toolu_01Tk5Qa8ZbNw3XmRv7LpC2Je"})}
    task = facts.results[0]
    assert task.timing.duration_ms == 37542.0
    assert task.model_texts[-1].startswith("agentId: a4c81f2")
    assert any(m.sidechain for m in facts.messages)  # the inline sidechain line


def test_meta_command_and_compaction_lines_are_not_demanded_as_messages() -> None:
    facts = facts_of("compaction-question-and-hooks.jsonl")
    texts = [t for m in facts.messages for t in m.texts]
    assert texts == ["Fix the flaky   test in ci.yml —\nit times out on main.",
                     "Raise the deploy step timeout to 60s; leave the rest.",
                     "Understood — only the deploy timeout changes."]
    assert facts.skipped["user:isMeta"] == 1 and facts.skipped["user:isCompactSummary"] == 1
    assert facts.skipped["user:harness-text"] == 3
    assert facts.agent_versions == ("2.1.39", "2.1.41")


def test_questions_and_their_answers() -> None:
    answered = facts_of("compaction-question-and-hooks.jsonl").questions[0]
    assert answered.questions == ("Which branch should the fix go on?",)
    assert answered.answers == ("release/2.4",)
    declined = facts_of("declined-question.jsonl").questions[0]
    assert declined.answers is None


def test_dangling_orphan_and_duplicate_ids() -> None:
    dangling = facts_of("interrupted-edit.jsonl")
    assert [c.call_id for c in dangling.dangling()] == ["toolu_01Hn7RoB5sYz8QeX2dTu6NfL"]
    assert not dangling.orphans() and not dangling.duplicate_ids()
    both = facts_of("orphan-and-duplicate-ids.jsonl")
    ids = [c.call_id for c in both.calls]
    assert len(ids) == 2 and both.duplicate_ids() == set(ids)
    assert len(both.orphans()) == 1 and both.orphans()[0].call_id not in ids


def test_times_and_earliest_time() -> None:
    facts = facts_of("subagent-task.jsonl")
    assert facts.earliest_time == "2026-04-02T10:14:58.903Z"  # a hook line before the first prompt
    assert "2026-04-02T10:15:05.228Z" in facts.times  # the copied subagent line's own time


@pytest.mark.parametrize("path", SAMPLES, ids=sample_id)
def test_sniff_accepts_every_sample(path) -> None:
    assert WITNESS.sniff(path.read_bytes())


@pytest.mark.parametrize("data", [
    b"",
    b"\x00\x01\x02binary",
    b'{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"x"}}\n',  # a Codex rollout line
    b'{"type":"user","text":"hello"}\n',  # has a type, nothing of Claude Code
    b"[1, 2, 3]\n",
    b"not json at all\n",
], ids=["empty", "binary", "codex", "generic-type", "array", "text"])
def test_sniff_refuses_other_inputs(data: bytes) -> None:
    assert not WITNESS.sniff(data)


def test_sniff_refuses_an_asr_stream() -> None:
    stream = run_converter(EXAMPLE, (SAMPLES_DIR / "fix-parser-test.jsonl").read_bytes())
    assert not WITNESS.sniff(stream)


def test_sniff_with_a_first_line_longer_than_the_window() -> None:
    long_line = json.dumps({"type": "user", "sessionId": "s1", "uuid": "u1",
                            "message": {"role": "user", "content": "x" * 200_000}}).encode()
    assert WITNESS.sniff(long_line + b"\n" + GOOD.encode() + b"\n")
    assert not WITNESS.sniff(b'{"kind": "other", "text": "' + b"x" * 200_000 + b'"}\n')


def test_sniff_reads_only_the_head() -> None:
    head = (SAMPLES_DIR / "fix-parser-test.jsonl").read_bytes()
    assert WITNESS.sniff(head + b"x" * 5_000_000)  # garbage far below the first lines is not read


@pytest.mark.parametrize("name", ["claude-code-jsonl", "claude_code", "Claude Code transcript", "claude-code/jsonl",
                                  "claudecode", "CLAUDE-CODE-JSONL", "anthropic.claude-code.transcript"])
def test_accepts_spellings_of_claude_code(name: str) -> None:
    assert WITNESS.accepts_format_name(name)


@pytest.mark.parametrize("name", ["codex-rollout-jsonl", "claude", "claude-agent-sdk-stream", "acp",
                                  "claude-code-sdk", "claude-code-acp", ""])
def test_refuses_other_format_names(name: str) -> None:
    assert not WITNESS.accepts_format_name(name)


GOOD = json.dumps({"type": "user", "sessionId": "s1", "uuid": "u1", "timestamp": "2026-01-01T00:00:00Z",
                   "message": {"role": "user", "content": "hi"}})


@pytest.mark.parametrize("lines, line", [
    ([GOOD, GOOD, '{"type": "user", "sessionId": '], 3),
    ([GOOD, "[1, 2]"], 2),
    ([GOOD, '{"sessionId": "s1"}'], 2),
    ([GOOD, GOOD.replace("2026-01-01T00:00:00Z", "yesterday")], 2),
    ([GOOD, json.dumps({"type": "assistant", "sessionId": "s1", "uuid": "a1",
                        "message": {"content": [{"type": "tool_use", "name": "Bash"}]}})], 2),
    ([GOOD, json.dumps({"type": "user", "sessionId": "s1", "uuid": "u2",
                        "message": {"content": [{"type": "tool_result", "tool_use_id": 7}]}})], 2),
    ([GOOD, json.dumps({"type": "user", "sessionId": "s1", "uuid": "u2",
                        "message": {"content": [{"type": "tool_result", "tool_use_id": "t", "is_error": "yes"}]}})], 2),
    ([GOOD, json.dumps({"type": "assistant", "sessionId": "s1", "uuid": "a1", "message": {"content": 5}})], 2),
    ([GOOD, '{"type": "user", "n": NaN}'], 2),
], ids=["cut-short", "not-object", "no-type", "bad-timestamp", "tool-use-without-id", "tool-use-id-not-string",
        "is-error-not-bool", "content-not-text", "nan"])
def test_malformed_lines_are_named(lines: list[str], line: int) -> None:
    with pytest.raises(NotThisFormat, match=rf"^line {line}: "):
        WITNESS.read("\n".join(lines).encode())


def test_bad_bytes_are_named_by_line() -> None:
    with pytest.raises(NotThisFormat, match=r"^line 2: not UTF-8"):
        WITNESS.read(GOOD.encode() + b"\n" + b'{"type": "user", "x": "\xff"}\n')


@pytest.mark.parametrize("data, reason", [
    (b"", "empty"),
    (b"\n  \n", "empty"),
    (b'{"type": "summary", "summary": "t", "leafUuid": "x"}\n', "no line carries a sessionId"),
    (b'{"type": "user", "message": {"content": "x"}}\n', "no line looks like"),
])
def test_inputs_that_are_not_transcripts(data: bytes, reason: str) -> None:
    with pytest.raises(NotThisFormat, match=reason):
        WITNESS.read(data)


@pytest.mark.parametrize("path", SAMPLES, ids=sample_id)
def test_damaged_copies_give_facts_or_not_this_format(path) -> None:
    """Cut short or with a byte flipped anywhere, a sample never gives a traceback."""
    data = path.read_bytes()
    assert data
    for cut in range(0, len(data), max(1, len(data) // 40)):
        for damaged in (data[:cut], data[:cut] + b"\xff" + data[cut + 1:], data[:cut] + b"}" + data[cut + 1:]):
            try:
                WITNESS.read(damaged)
            except NotThisFormat as why:
                assert str(why)


def test_synthetic_assistant_text_and_placeholders_are_not_demanded() -> None:
    lines = [GOOD,
             json.dumps({"type": "assistant", "sessionId": "s1", "uuid": "a1", "isApiErrorMessage": True,
                         "message": {"model": "<synthetic>", "content": [{"type": "text", "text": "API Error: 529"}]}}),
             json.dumps({"type": "assistant", "sessionId": "s1", "uuid": "a2",
                         "message": {"content": [{"type": "text", "text": "(no content)"}]}})]
    facts = WITNESS.read("\n".join(lines).encode())
    assert [m.texts for m in facts.messages] == [("hi",)]


def test_every_recorded_session_id_is_accepted() -> None:
    resumed = GOOD + "\n" + GOOD.replace('"s1"', '"s2"')
    assert WITNESS.read(resumed.encode()).session_ids == {"s1", "s2"}


@pytest.mark.parametrize("number", [2**64, 2**64 - 1, -(2**63) - 1, 10**40, -(10**30)])
def test_integers_past_64_bits_are_read_exactly(number: int) -> None:
    """orjson reads integers past 64 bits as floats; the witness must keep them exact (ASR-254)."""
    call = {"type": "assistant", "sessionId": "s1", "uuid": "a1", "message": {"id": "msg_1", "content": [
        {"type": "tool_use", "id": "toolu_1", "name": "mcp__db__get", "input": {"id": number, "n": [number]}}]}}
    facts = WITNESS.read(json.dumps(call).encode())
    assert facts.calls[0].arguments == {"id": number, "n": [number]}
    assert type(facts.calls[0].arguments["id"]) is int
