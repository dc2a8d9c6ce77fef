"""Large, valid, realistic streams for speed and memory measurements.

Not a Hypothesis strategy: a seeded, deterministic writer that produces
sessions of any size with the record mix of a coding agent (messages, tool
calls and results with exec details, permissions, hooks, config changes,
state changes), so that benchmarks measure what validators meet in practice.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

WORDS = (
    "parser test cargo build failed passed module error index value return empty list "
    "struct function branch commit review docs update fix refactor config schema"
).split()


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def realistic_records(seed: int = 0) -> Iterator[dict[str, Any]]:
    """An endless valid stream: a header, then turn after turn."""
    rng = random.Random(seed)
    seq = 0

    def record(record_type: str, /, **members: object) -> dict[str, Any]:
        nonlocal seq
        seq += 1
        return {"type": record_type, "seq": seq, "id": f"r{seq}", "ts": f"2026-10-26T14:{seq // 60 % 60:02d}:{seq % 60:02d}.{seq % 1000:03d}Z", **members}

    yield {
        "type": "session", "seq": 0, "id": "h", "formatVersion": "0.1",
        "agent": {"name": "claude-code", "version": "2.1.305"},
        "sessionId": "0f3c2a7e-91b4-4d6a-8c2e-5a7b3d1e9f04",
        "producer": {"name": "bench-converter", "version": "1.0.0", "method": "converter", "instance": "b-1",
                     "source": {"format": "claude-code-jsonl"}, "lossy": []},
        "startedAt": "2026-10-26T14:02:11.204Z",
        "workspace": {"roots": [{"id": "app", "path": "/work/acme-app", "vcs": {"type": "git", "branch": "main"}}]},
        "profiles": ["core", "coding"], "contentLevel": "full",
    }
    turn = 0
    while True:
        turn += 1
        turn_id = f"turn-{turn}"
        yield record("message", turnId=turn_id, role="user",
                     content=[{"type": "text", "text": _text(rng, rng.randint(10, 60))}])
        yield record("state", turnId=turn_id, state="running")
        if turn % 25 == 0:
            yield record("config_change", model={"provider": "anthropic", "id": "claude-sonnet-5-5"}, actor="user")
        for call in range(rng.randint(1, 4)):
            call_id = f"toolu_{turn}_{call}"
            command = f"cargo test -p {rng.choice(WORDS)}"
            yield record("tool_call", turnId=turn_id, callId=call_id, callIdSource="native", name="Bash",
                         kind="execute", requestedBy="model", input={"command": command, "timeout": 120000})
            if rng.random() < 0.2:
                yield record("permission", turnId=turn_id, requestId=f"perm-{turn}-{call}",
                             subject={"callId": call_id}, status="resolved", decision="allow_once", decidedBy="user")
                compact = {}
            else:
                compact = {"permission": {"decision": "allow_once", "decidedBy": "policy"}}
            output = "\n".join(_text(rng, 12) for _ in range(rng.randint(2, 30)))
            yield record("tool_result", turnId=turn_id, callId=call_id, linkage="exact",
                         status=rng.choice(("completed", "failed")), content=[{"type": "text", "text": output}],
                         exec={"command": command, "cwd": {"root": "app", "path": "."},
                               "exitCode": rng.choice((0, 1, 101)), "stdout": output, "stderr": ""},
                         durationMs=rng.randint(5, 90000), **compact)
            if rng.random() < 0.3:
                yield record("hook", turnId=turn_id, event="post_tool_use", handlerKind="command",
                             command="cargo fmt --check", callId=call_id, status="completed", exitCode=0,
                             durationMs=rng.randint(50, 900))
        yield record("message", turnId=turn_id, role="assistant",
                     content=[{"type": "text", "text": _text(rng, rng.randint(20, 200))}])
        yield record("state", turnId=turn_id, state="idle", stopReason="end_turn")


def write_realistic_stream(path: Path, target_bytes: int, seed: int = 0) -> tuple[int, int]:
    """Write records until the file holds at least target_bytes; return (records, bytes)."""
    written = 0
    count = 0
    with open(path, "w", encoding="utf-8") as handle:
        for record in realistic_records(seed):
            line = json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n"
            handle.write(line)
            written += len(line.encode("utf-8"))
            count += 1
            if written >= target_bytes:
                break
    return count, written
