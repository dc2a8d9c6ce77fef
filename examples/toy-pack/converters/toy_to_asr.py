"""Convert a toy transcript (one JSON document) to an ASR stream: the toy pack's example converter.

Standard library only. Every value comes from the document, so the same input always gives
the same stream. ``convert(data, bug)`` takes an optional seeded bug, for the suite's tests.
"""

from __future__ import annotations

import hashlib
import json
import sys
from typing import Any

NAME = "toy-to-asr"
VERSION = "0.1.0"


class Refused(Exception):
    """The input is not a toy transcript; the message says why."""


def _document(data: bytes) -> dict[str, Any]:
    try:
        document = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise Refused(f"not a JSON document: {error}") from None
    if not isinstance(document, dict) or document.get("toy") != 1 or not isinstance(document.get("events"), list):
        raise Refused("not a toy transcript: no \"toy\": 1 and events array")
    if not isinstance(document.get("session"), str) or not document["session"]:
        raise Refused("no session ID")
    for number, event in enumerate(document["events"]):
        if not isinstance(event, dict) or not isinstance(event.get("at"), str):
            raise Refused(f"/events/{number}: an event without a time")
        call = event.get("call")
        if call is not None and (not isinstance(call, dict) or not isinstance(call.get("id"), str)
                                 or not isinstance(call.get("tool"), str) or not call["tool"]):
            raise Refused(f"/events/{number}: a call without an id or tool")
    if not document["events"]:
        raise Refused("no events")
    return document


def convert(data: bytes, bug: str | None = None) -> list[dict[str, Any]]:
    document = _document(data)
    events = document["events"]
    times = [e["at"] for e in events] + [e["result"]["at"] for e in events
                                         if isinstance(e.get("result"), dict) and isinstance(e["result"].get("at"), str)]
    agent = document.get("agent") if isinstance(document.get("agent"), str) else None
    header: dict[str, Any] = {
        "type": "session", "seq": 0, "id": "h", "formatVersion": "0.1",
        "agent": {"name": "toy-agent", **({"version": agent} if agent else {})},
        "sessionId": document["session"],
        "producer": {"name": NAME, "version": VERSION, "method": "converter",
                     "instance": "conv-" + hashlib.sha256(data).hexdigest()[:12],
                     "source": {"format": "toy-json"}, "lossy": []},
        "startedAt": min(times), "profiles": ["core"], "contentLevel": "full",
    }
    records: list[dict[str, Any]] = [header]
    calls = 0

    def add(record: dict[str, Any]) -> None:
        record["seq"] = len(records)
        record["id"] = f"r{len(records)}"
        records.append(record)

    for event in events:
        for key, role in (("user", "user"), ("agent", "assistant")):
            if isinstance(event.get(key), str):
                add({"type": "message", "ts": event["at"], "role": role,
                     "content": [{"type": "text", "text": event[key]}]})
        call = event.get("call")
        if not isinstance(call, dict):
            continue
        calls += 1
        if bug == "drop-every-second-call" and calls % 2 == 0:
            continue
        record: dict[str, Any] = {"type": "tool_call", "ts": event["at"], "callId": call["id"], "callIdSource": "native",
                                  "name": call["tool"]}
        if bug == "kind-from-name":
            record["kind"] = "execute" if call["tool"] in ("shell", "bash", "sh") else "other"
        if "args" in call:
            record["input"] = call["args"]
        add(record)
        result = event.get("result")
        if isinstance(result, dict):
            answer: dict[str, Any] = {"type": "tool_result", "ts": result.get("at") or event["at"], "callId": call["id"],
                                      "linkage": "exact", "status": "completed" if result.get("ok") is True else "failed"}
            if isinstance(result.get("out"), str):
                answer["content"] = [{"type": "text", "text": result["out"]}]
            if isinstance(result.get("exit"), int) and not isinstance(result.get("exit"), bool):
                answer["exec"] = {"exitCode": result["exit"]}
            add(answer)
    return records


def main(argv: list[str], bug: str | None = None) -> int:
    if len(argv) != 2:
        print(f"usage: {NAME} TRANSCRIPT.json > STREAM.jsonl", file=sys.stderr)
        return 2
    try:
        with open(argv[1], "rb") as handle:
            records = convert(handle.read(), bug)
    except Refused as error:
        print(f"{NAME}: {argv[1]}: {error}", file=sys.stderr)
        return 1
    except OSError as error:
        print(f"{NAME}: {error}", file=sys.stderr)
        return 1
    out = sys.stdout.buffer
    for record in records:
        out.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n")
    return 0
