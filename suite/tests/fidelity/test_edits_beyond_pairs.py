"""Source edits reach sessions that hold no clean call/result pair and no plain prompt: a session
whose only call is dangling is still renamed and moved, one whose only result is an orphan still has
its error flag flipped, one whose only input is a slash command and its expansion gets a prompt that
must then be kept. The example converters follow; a converter that ignores the edited fact does not;
and without the fallbacks these sessions get no edit at all."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fidelity_helpers import EXAMPLE, MISBEHAVING, ROOT, convert

from asr_conformance.fidelity import claude_code_mutations as cc
from asr_conformance.fidelity import codex_mutations as cx
from asr_conformance.fidelity.claude_code import WITNESS as CC_WITNESS
from asr_conformance.fidelity.codex import WITNESS as CODEX_WITNESS
from asr_conformance.fidelity.compare import check_fidelity
from asr_conformance.fidelity.mutations import SourceMutation

SID = "5e1d9c3b-7a24-4f68-9b10-2c3d4e5f6a7b"
BASE = {"isSidechain": False, "userType": "external", "cwd": "/home/dev/shop", "sessionId": SID, "version": "2.1.40",
        "gitBranch": "main"}
CODEX = ROOT / "examples/codex-converter/asr-from-codex"


def _cc(*lines: dict[str, Any]) -> bytes:
    out, parent = [], None
    for n, line in enumerate(lines, 1):
        uuid = f"5e1d9c3b-0000-4000-8000-{n:012d}"
        out.append({"parentUuid": parent, **BASE, **line, "uuid": uuid, "timestamp": f"2026-06-01T10:00:{n:02d}.250Z"})
        parent = uuid
    return "".join(json.dumps(v, separators=(",", ":")) + "\n" for v in out).encode()


def _assistant(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"type": "assistant", "message": {"model": "claude-sonnet-4-5-20250929", "id": "msg_01Aa", "type": "message",
                                             "role": "assistant", "content": list(blocks), "stop_reason": "tool_use"}}


SLASH = _cc(
    {"type": "user", "message": {"role": "user", "content":
        "<command-message>review is running…</command-message>\n<command-name>/review</command-name>"}},
    {"type": "user", "isMeta": True, "message": {"role": "user", "content": [
        {"type": "text", "text": "Review the staged changes for bugs and missing tests."}]}},
    {"type": "assistant", "message": {"model": "claude-sonnet-4-5-20250929", "id": "msg_01Rv", "type": "message",
                                      "role": "assistant", "content": [{"type": "text", "text": "The staged diff looks fine."}],
                                      "stop_reason": "end_turn"}},
)
DANGLING = _cc(
    {"type": "user", "message": {"role": "user", "content": "[Request interrupted by user for tool use]"}},
    _assistant({"type": "tool_use", "id": "toolu_01Dg7", "name": "Bash", "input": {"command": "make deploy"}}),
)
ORPHAN = _cc(
    {"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_01Or3", "content": "deployed", "is_error": False}]}},
)


def _findings(converter, mutation: SourceMutation, data: bytes, witness=CC_WITNESS) -> set[str]:
    edited = mutation.apply(data)
    assert edited is not None, mutation.name
    before, after = witness.read(data), witness.read(edited)
    assert before != after
    stream_before, stream_after = convert(converter, data), convert(converter, edited)
    return {f.rule for f in mutation.expect(before, after, stream_before, stream_after) + check_fidelity(after, stream_after)}


def _edit(module: Any, name: str) -> SourceMutation:
    return next(m for m in module.MUTATIONS if m.name == name)


@pytest.mark.parametrize(("name", "data", "bug", "rule"), [
    ("change-message", SLASH, "cc-drops-user-messages", "ASR-157"),
    ("rename-tool", DANGLING, "cc-lowercases-tool-names", "ASR-252"),
    ("move-timestamp", DANGLING, "cc-shifts-timestamps", "ASR-103"),
    ("flip-error", ORPHAN, "cc-failed-as-completed", "ASR-258"),
])
def test_claude_code_edits_reach_sessions_without_pairs_or_prompts(name: str, data: bytes, bug: str, rule: str) -> None:
    if name == "change-message":  # before the edit, nothing of the person's is demanded
        assert [m.role for m in CC_WITNESS.read(data).messages] == ["assistant"]
    assert _findings(EXAMPLE, _edit(cc, name), data) == set()
    assert rule in _findings(MISBEHAVING / bug, _edit(cc, name), data)


def test_without_the_fallbacks_these_sessions_get_no_edit() -> None:
    assert cc._first_pair(DANGLING) is None and cc._first_pair(ORPHAN) is None  # clean pairs only: nothing
    assert not [i for i, (_, v) in enumerate(cc._lines(SLASH) or []) if cc._is_prompt(v)]


ROLLOUT = [
    {"timestamp": "2026-06-01T10:00:00.100Z", "type": "session_meta", "payload": {"id": "019c0000-aaaa-7bbb-8ccc-000000000001",
                                                                             "cli_version": "0.151.0"}},
    {"timestamp": "2026-06-01T10:00:01.100Z", "type": "event_msg", "payload": {
        "type": "exec_command_end", "call_id": "user-shell-1", "command": ["bash", "-lc", "make test"], "cwd": "/srv",
        "source": "user_shell", "stdout": "1 failed\n", "stderr": "", "aggregated_output": "1 failed\n",
        "exit_code": 2, "duration": {"secs": 3, "nanos": 0}, "status": "failed"}},
    {"timestamp": "2026-06-01T10:00:02.100Z", "type": "response_item", "payload": {
        "type": "function_call", "name": "shell_command", "arguments": "{\"command\":\"make deploy\"}", "call_id": "call_D1"}},
]


@pytest.mark.parametrize(("name", "rule"), [
    ("rename-tool", "ASR-252"), ("move-timestamp", "ASR-103"), ("flip-status", "ASR-258"), ("alter-exit-code", "ASR-260"),
])
def test_codex_edits_reach_dangling_calls_and_outcomes_without_a_call(name: str, rule: str) -> None:
    """The example follows each edit; a stream that ignores it (the unedited input's stream) fails its rule."""
    data = "".join(json.dumps(v) + "\n" for v in ROLLOUT).encode()
    edit = _edit(cx, name)
    assert _findings(CODEX, edit, data, CODEX_WITNESS) == set()
    edited = edit.apply(data)
    assert edited is not None
    stale = convert(CODEX, data)
    assert rule in {f.rule for f in edit.expect(CODEX_WITNESS.read(data), CODEX_WITNESS.read(edited), stale, stale)}


def test_an_outcome_without_a_call_may_be_left_out_after_an_edit() -> None:
    data = "".join(json.dumps(v) + "\n" for v in ROLLOUT).encode()
    for name in ("flip-status", "alter-exit-code"):
        edit = _edit(cx, name)
        edited = edit.apply(data)
        assert edited is not None
        without = [r for r in convert(CODEX, edited) if r.get("callId") != "user-shell-1"]
        assert edit.expect(CODEX_WITNESS.read(data), CODEX_WITNESS.read(edited), without, without) == []
