"""How fast the Gemini CLI witness and the fidelity checks are, in seconds per megabyte.

The input is generated: a JSON Lines session of several megabytes in which every model message
is recorded again as it changes (tokens, then each tool call), with $set updates after each
message, a rewind every so often and a checkpoint now and then, so that most bytes are copies
the witness must read and set aside. No timed assertions; ``extra_info`` holds
``seconds_per_mb`` and ``copies_per_message``.

    pytest -p no:xdist --benchmark-only suite/benchmarks/test_gemini_witness_speed.py

ASR_GEMINI_BENCH_BYTES sets the session's size (default 8 MB).
"""

from __future__ import annotations

import json
import os
import random
from datetime import UTC, datetime, timedelta

import pytest

from asr_conformance.fidelity.compare import check_fidelity
from asr_conformance.fidelity.gemini import WITNESS
from asr_conformance.reference import gemini_converter

SESSION_BYTES = int(os.environ.get("ASR_GEMINI_BENCH_BYTES", 8_000_000))
TOOLS = ("read_file", "run_shell_command", "glob", "replace", "search_file_content")
ROUNDS = 3


class Session:
    """Writes Gemini CLI records with consecutive times and fresh IDs, from a seeded generator."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.clock = datetime(2026, 7, 1, 9, 0, tzinfo=UTC)
        self.lines: list[str] = []
        self.live: list[str] = []
        self.size = 0

    def stamp(self) -> str:
        self.clock += timedelta(milliseconds=self.rng.randint(5, 4000))
        return self.clock.isoformat(timespec="milliseconds").replace("+00:00", "Z")

    def uid(self) -> str:
        return f"{self.rng.getrandbits(128):032x}"

    def text(self, words: int) -> str:
        vocabulary = ("parser", "config", "test", "  fails", "on\tmain", "line\n", "ok", "Σ", "npm", "the")
        return " ".join(self.rng.choice(vocabulary) for _ in range(words))

    def write(self, value: dict) -> None:
        line = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        self.lines.append(line)
        self.size += len(line) + 1
        if isinstance(value.get("id"), str):
            self.write({"$set": {"lastUpdated": self.stamp()}})

    def turn(self) -> None:
        prompt = {"id": self.uid(), "timestamp": self.stamp(), "type": "user", "content": [{"text": self.text(30)}]}
        self.write(prompt)
        self.live.append(prompt["id"])
        message = {"id": self.uid(), "timestamp": self.stamp(), "type": "gemini", "content": self.text(40),
                   "tokens": None, "model": "gemini-2.5-pro"}
        self.write(message)
        self.live.append(message["id"])
        message["tokens"] = {"input": 9000, "output": 90, "cached": 0, "thoughts": 0, "tool": 0, "total": 9090}
        self.write(message)
        for _ in range(self.rng.randint(2, 6)):
            name = self.rng.choice(TOOLS)
            call_id = f"{name}-{self.rng.getrandbits(40)}-{self.uid()[:8]}"
            status = self.rng.choice(("success", "success", "success", "error", "cancelled"))
            result = [{"functionResponse": {"id": call_id, "name": name, "response": {
                "output" if status == "success" else "error": self.text(self.rng.randint(20, 160))}}}]
            message.setdefault("toolCalls", []).append({
                "id": call_id, "name": name, "args": {"command": self.text(6), "n": 3}, "result": result,
                "status": status, "timestamp": self.stamp(), "displayName": name, "description": self.text(4),
                "renderOutputAsMarkdown": True})
            self.write(message)

    def generate(self, target: int) -> bytes:
        self.write({"sessionId": "bench-0001", "projectHash": "ab" * 32, "startTime": self.stamp(),
                    "lastUpdated": self.stamp(), "kind": "main"})
        turns = 0
        while self.size < target:
            self.turn()
            turns += 1
            if turns % 25 == 0 and len(self.live) > 4:
                target_id = self.live[-2]
                self.write({"$rewindTo": target_id})
                del self.live[-2:]
        return ("\n".join(self.lines) + "\n").encode("utf-8")


@pytest.fixture(scope="module")
def session() -> bytes:
    return Session(7).generate(SESSION_BYTES)


def _report(benchmark, data: bytes, facts) -> None:
    megabytes = len(data) / 1_000_000
    copies = sum(1 for line in data.split(b"\n") if line.startswith(b'{"id":'))
    benchmark.extra_info.update({
        "bytes": len(data), "calls": len(facts.calls), "results": len(facts.results),
        "messages": len(facts.messages), "copies_per_message": copies / max(1, len(facts.messages)),
        "seconds_per_mb": benchmark.stats.stats.mean / megabytes})


def test_witness_reads_a_session(benchmark, session: bytes) -> None:
    facts = benchmark.pedantic(WITNESS.read, args=(session,), rounds=ROUNDS, iterations=1)
    assert len(facts.calls) >= 1000 and facts.skipped.get("rewound or replaced messages")  # the input is what it claims
    _report(benchmark, session, facts)


def test_fidelity_checks_of_a_converted_session(benchmark, session: bytes) -> None:
    records = [json.loads(line) for line in gemini_converter.convert(session).split(b"\n") if line.strip()]
    facts = WITNESS.read(session)
    findings = benchmark.pedantic(check_fidelity, args=(facts, records), rounds=ROUNDS, iterations=1)
    assert findings == []
    _report(benchmark, session, facts)
