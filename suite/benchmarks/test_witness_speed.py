"""How fast the Claude Code witness and the fidelity checks are, in seconds per megabyte.

The input is generated: a main transcript of several megabytes with thousands of tool calls,
hook and bash progress lines, agent progress copies, inline sidechain lines and compactions,
and one subagent file. No timed assertions; ``extra_info`` holds ``seconds_per_mb`` (the target
is well under 1 s/MB).

    pytest -p no:xdist --benchmark-only suite/benchmarks/test_witness_speed.py

ASR_WITNESS_BENCH_BYTES sets the main transcript's size (default 8 MB).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from asr_conformance.fidelity.claude_code import WITNESS
from asr_conformance.fidelity.compare import check_fidelity

TRANSCRIPT_BYTES = int(os.environ.get("ASR_WITNESS_BENCH_BYTES", 8_000_000))
CONVERTER = Path(__file__).resolve().parents[1] / "reference" / "claude_code_converter.py"
SESSION = "5d0c7e1a-4b28-4f93-8a61-2e9b3c7d0f14"
AGENT = "a9f3c21"
TOOLS = ("Bash", "Read", "Edit", "Grep", "Glob", "mcp__github__get_pull_request")
ROUNDS = 3


class Transcript:
    """Writes Claude Code lines with consecutive times and fresh IDs, from a seeded generator."""

    def __init__(self, seed: int, sidechain: bool = False) -> None:
        self.rng = random.Random(seed)
        self.clock = datetime(2026, 7, 1, 9, 0, tzinfo=UTC)
        self.sidechain = sidechain
        self.count = 0
        self.parent: str | None = None

    def uid(self, prefix: str = "") -> str:
        self.count += 1
        return f"{prefix}{self.rng.getrandbits(128):032x}"

    def line(self, kind: str, **members: object) -> str:
        self.clock += timedelta(milliseconds=self.rng.randint(5, 4000))
        uuid = self.uid()
        record = {"parentUuid": self.parent, "isSidechain": self.sidechain, "userType": "external",
                  "cwd": "/home/dev/acme-app", "sessionId": SESSION, "version": "2.1.39", "gitBranch": "main",
                  **({"agentId": AGENT} if self.sidechain else {}), "type": kind, **members, "uuid": uuid,
                  "timestamp": self.clock.isoformat(timespec="milliseconds").replace("+00:00", "Z")}
        self.parent = uuid
        return json.dumps(record, ensure_ascii=False, separators=(",", ":"))

    def text(self, words: int) -> str:
        vocabulary = ("parser", "config", "test", "  fails", "on\tmain", "line\n", "ok", "Σ", "cargo", "the")
        return " ".join(self.rng.choice(vocabulary) for _ in range(words))

    def turn(self) -> Iterator[str]:
        yield self.line("user", message={"role": "user", "content": self.text(30)}, permissionMode="default")
        response = self.uid("msg_")
        yield self.line("assistant", message={"id": response, "role": "assistant", "model": "claude-sonnet-4-5",
                                              "content": [{"type": "text", "text": self.text(40)}]})
        for _ in range(self.rng.randint(2, 6)):
            yield from self.call(response)

    def call(self, response: str) -> Iterator[str]:
        call_id = self.uid("toolu_")
        name = self.rng.choice(TOOLS)
        yield self.line("assistant", message={"id": response, "role": "assistant", "content": [
            {"type": "tool_use", "id": call_id, "name": name, "input": {"command": self.text(6), "n": 3},
             "caller": {"type": "direct"}}]})
        for event in ("PreToolUse", "PostToolUse"):
            yield self.line("progress", data={"type": "hook_progress", "hookEvent": event, "hookName": f"{event}:{name}",
                                              "command": "audit.sh"}, toolUseID=call_id, parentToolUseID=call_id)
        output = self.text(self.rng.randint(20, 160))
        yield self.line("user", message={"role": "user", "content": [
            {"tool_use_id": call_id, "type": "tool_result", "content": output, "is_error": self.rng.random() < 0.1}]},
            toolUseResult={"stdout": output, "stderr": "", "interrupted": False, "isImage": False})

    def compaction(self) -> Iterator[str]:
        yield self.line("system", subtype="compact_boundary", content="Conversation compacted",
                        compactMetadata={"trigger": "auto", "preTokens": 160000})
        yield self.line("user", message={"role": "user", "content": "This session is being continued. " + self.text(200)},
                        isCompactSummary=True, isVisibleInTranscriptOnly=True)

    def agent_progress(self, task: str) -> Iterator[str]:
        inner = {"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": self.uid("toolu_"), "name": "Grep", "input": {"pattern": "x"}}]}}
        yield self.line("progress", data={"type": "agent_progress", "message": inner, "agentId": AGENT},
                        toolUseID=self.uid("agent_msg_"), parentToolUseID=task)


def generate(target: int, seed: int = 7, sidechain: bool = False) -> bytes:
    """A transcript of at least ``target`` bytes."""
    writer, lines, size, turns = Transcript(seed, sidechain), [], 0, 0
    while size < target:
        batch = list(writer.turn())
        turns += 1
        if turns % 40 == 0:
            batch += list(writer.compaction())
        if turns % 7 == 0:
            batch += list(writer.agent_progress(writer.uid("toolu_")))
            writer.sidechain = True
            batch.append(writer.line("assistant", message={"role": "assistant", "content": [
                {"type": "text", "text": writer.text(20)}]}))
            writer.sidechain = sidechain
        lines += batch
        size += sum(len(line) + 1 for line in batch)
    return ("\n".join(lines) + "\n").encode("utf-8")


@pytest.fixture(scope="module")
def transcript(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("witness") / f"{SESSION}.jsonl"
    path.write_bytes(generate(TRANSCRIPT_BYTES))
    return path


@pytest.fixture(scope="module")
def subagent_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("witness") / SESSION / "subagents" / f"agent-{AGENT}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(generate(TRANSCRIPT_BYTES // 8, seed=11, sidechain=True))
    return path


def _report(benchmark, data: bytes, facts) -> None:
    megabytes = len(data) / 1_000_000
    benchmark.extra_info.update({
        "bytes": len(data), "calls": len(facts.calls), "results": len(facts.results),
        "messages": len(facts.messages), "seconds_per_mb": benchmark.stats.stats.mean / megabytes})


def test_witness_reads_a_main_transcript(benchmark, transcript: Path) -> None:
    data = transcript.read_bytes()
    facts = benchmark.pedantic(WITNESS.read, args=(data,), rounds=ROUNDS, iterations=1)
    assert len(facts.calls) >= 2000 and facts.skipped.get("system:compact_boundary")  # the input is what it claims
    _report(benchmark, data, facts)


def test_witness_reads_a_subagent_file(benchmark, subagent_file: Path) -> None:
    data = subagent_file.read_bytes()
    facts = benchmark.pedantic(WITNESS.read, args=(data,), rounds=ROUNDS, iterations=1)
    assert AGENT in facts.session_ids
    _report(benchmark, data, facts)


def test_fidelity_checks_of_a_converted_transcript(benchmark, transcript: Path) -> None:
    data = transcript.read_bytes()
    done = subprocess.run([sys.executable, str(CONVERTER), str(transcript)], capture_output=True, check=True)
    records = [json.loads(line) for line in done.stdout.splitlines()]
    facts = WITNESS.read(data)
    findings = benchmark.pedantic(check_fidelity, args=(facts, records), rounds=ROUNDS, iterations=1)
    assert findings == []
    _report(benchmark, data, facts)
