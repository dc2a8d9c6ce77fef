"""A third-party pack for recorded Agent Client Protocol traffic fits the interface as it is: calls
without a tool name, a kind per call and a later update of it, turn ends from the prompt responses
(transitions with their stop reason), no hook runs reported. Written only from docs/witnesses.md."""

from __future__ import annotations

import json
from typing import Any

from asr_conformance.fidelity.compare import Policy, check_fidelity
from asr_conformance.fidelity.facts import NativeCall, NativeMessage, NativeResult, NativeTransition, NotThisFormat, SourceFacts, Where
from asr_conformance.packs.check import check_pack
from asr_conformance.packs.identity import identify
from asr_conformance.packs.pack import FormatPack

CAPTURE = [
    {"at": "2026-07-01T09:00:00.000Z", "method": "session/prompt", "params": {"sessionId": "acp-1", "prompt": [
        {"type": "text", "text": "Rename the config loader"}]}},
    {"at": "2026-07-01T09:00:02.000Z", "method": "session/update", "params": {"update": {
        "sessionUpdate": "tool_call", "toolCallId": "tc-1", "title": "Read src/config.rs", "kind": "read",
        "status": "pending", "rawInput": {"path": "src/config.rs"}}}},
    {"at": "2026-07-01T09:00:03.000Z", "method": "session/update", "params": {"update": {
        "sessionUpdate": "tool_call_update", "toolCallId": "tc-1", "kind": "edit", "status": "completed",
        "content": [{"type": "content", "content": {"type": "text", "text": "fn load() {}"}}]}}},
    {"at": "2026-07-01T09:00:04.000Z", "result": {"stopReason": "end_turn"}},
]


class AcpWitness:
    format = "acp-capture-jsonl"

    def accepts_format_name(self, name: str) -> bool:
        return name == self.format

    def sniff(self, data: bytes) -> bool:
        return b'"session/prompt"' in data[:4096]

    def read(self, data: bytes) -> SourceFacts:
        facts = SourceFacts(self.format, session_ids=frozenset({"acp-1"}), transitions=())
        calls: dict[str, dict[str, Any]] = {}
        transitions = []
        for number, raw in enumerate(data.decode().splitlines(), 1):
            line = json.loads(raw)
            where, at = Where(number, raw[:80]), line["at"]
            facts.times |= {at}
            update = line.get("params", {}).get("update", {})
            if line.get("method") == "session/prompt":
                texts = tuple(p["text"] for p in line["params"]["prompt"] if p.get("type") == "text")
                facts.messages.append(NativeMessage("user", texts, where, ts=at))
            elif update.get("sessionUpdate") == "tool_call":
                calls[update["toolCallId"]] = {"where": where, "ts": at, "kind": update.get("kind"),
                                               "arguments": update.get("rawInput"), "kinds": []}
            elif update.get("sessionUpdate") == "tool_call_update":
                call = calls[update["toolCallId"]]
                if "kind" in update:
                    call["kinds"].append(update["kind"])
                texts = tuple(c["content"]["text"] for c in update.get("content", ()) if c.get("type") == "content")
                facts.results.append(NativeResult(where, update["toolCallId"], frozenset({"completed"}), texts, ts=at))
            elif "stopReason" in line.get("result", {}):
                transitions.append(NativeTransition(where, frozenset({"idle"}), None,
                                                    frozenset({line["result"]["stopReason"]}), at))
            else:
                raise NotThisFormat(f"line {number}: not a recorded ACP message")
        facts.calls = [NativeCall(call_id, None, c["where"], arguments=c["arguments"], ts=c["ts"], kind=c["kind"],
                                  updates={"kind": tuple(c["kinds"])}) for call_id, c in calls.items()]
        facts.transitions = tuple(transitions)
        return facts


PACK = FormatPack(name="acp-capture", version="0.1.0", witness=AcpWitness(), kind_policy="source-only")
DATA = "".join(json.dumps(line) + "\n" for line in CAPTURE).encode()


def _stream(**call: Any) -> list[dict[str, Any]]:
    return [
        {"type": "session", "seq": 0, "id": "h", "sessionId": "acp-1"},
        {"type": "message", "seq": 1, "id": "r1", "ts": "2026-07-01T09:00:00.000Z", "role": "user",
         "content": [{"type": "text", "text": "Rename the config loader"}]},
        {"type": "tool_call", "seq": 2, "id": "r2", "ts": "2026-07-01T09:00:02.000Z", "callId": "tc-1",
         "callIdSource": "native", "capture": {"name": {"state": "absent"}}, "input": {"path": "src/config.rs"}, **call},
        {"type": "tool_result", "seq": 3, "id": "r3", "ts": "2026-07-01T09:00:03.000Z", "callId": "tc-1",
         "linkage": "exact", "status": "completed", "content": [{"type": "text", "text": "fn load() {}"}]},
        {"type": "state", "seq": 4, "id": "r4", "ts": "2026-07-01T09:00:04.000Z", "state": "idle", "stopReason": "end_turn"},
    ]


def rules(stream: list[dict[str, Any]]) -> list[str]:
    return sorted(f.rule for f in check_fidelity(PACK.witness.read(DATA), stream, Policy("source-only")))


def test_a_faithful_stream_of_the_capture_conforms_with_either_recorded_kind() -> None:
    assert rules(_stream(kind="read")) == []
    assert rules(_stream(kind="edit")) == []  # the kind the capture updates the call to
    assert rules(_stream()) == []


def test_what_the_capture_does_not_record_is_caught() -> None:
    assert rules(_stream(kind="execute")) == ["ASR-253"]
    assert rules(_stream(name="Read src/config.rs")) == ["ASR-252"]  # a title is no tool name
    stream = _stream()
    stream[4]["stopReason"] = "cancelled"
    assert rules(stream) == ["ASR-169"]
    stream.append({"type": "state", "seq": 5, "id": "r5", "ts": "2026-07-01T09:00:00.000Z", "state": "running"})
    assert rules(stream) == ["ASR-169", "ASR-169"]


def test_pack_check_reads_the_capture_without_a_problem() -> None:
    report = check_pack(PACK, identify(PACK, "(given)", False), [("capture.jsonl", DATA)])
    assert report.problems == []
    assert "  transitions: 1" in report.lines and "  hook runs: not reported (not checked)" in report.lines
