"""The toy format's witness: one JSON document per session, no record per line.

    {"toy": 1, "session": "t-1", "agent": "0.3.0", "events": [
      {"at": "2026-05-01T10:00:00.000Z", "user": "Run the tests"},
      {"at": "2026-05-01T10:00:02.000Z", "call": {"id": "c1", "tool": "shell", "args": {"cmd": "make"}},
       "result": {"ok": false, "out": "1 failed", "exit": 2, "at": "2026-05-01T10:00:09.000Z"}},
      {"at": "2026-05-01T10:00:10.000Z", "agent": "One test fails."}]}

A result sits inside its call's event; its own ``at`` is optional, so a converter may give the
result either time (``NativeResult.other_ts``). Locations are byte offsets and JSON pointers.
"""

from __future__ import annotations

import json
import re
from typing import Any

from asr_conformance.fidelity.facts import NativeCall, NativeMessage, NativeResult, NotThisFormat, SourceFacts, Where

FORMAT = "toy-json"
EXCERPT = 160
SNIFF = re.compile(rb'\s*\{\s*"toy"\s*:\s*1\s*[,}]')
FAILED = frozenset({"failed", "denied", "interrupted"})


def events_with_offsets(text: str) -> list[tuple[int, Any]]:
    """Each event of the document and the character offset where it starts (the top level is scanned by hand)."""
    decoder = json.JSONDecoder()
    index = _skip(text, 0)
    if text[index:index + 1] != "{":
        raise NotThisFormat("byte 0: the document is not a JSON object")
    index = _skip(text, index + 1)
    while text[index:index + 1] not in ("}", ""):
        key, index = decoder.raw_decode(text, index)
        index = _skip(text, index)
        if text[index:index + 1] != ":":
            raise NotThisFormat(f"byte {_bytes(text, index)}: expected ':' after a key")
        index = _skip(text, index + 1)
        if key == "events" and text[index:index + 1] == "[":
            return _array(text, index, decoder)
        _, index = decoder.raw_decode(text, index)
        index = _skip(text, index)
        if text[index:index + 1] == ",":
            index = _skip(text, index + 1)
    raise NotThisFormat("the document has no events array")


def _array(text: str, index: int, decoder: json.JSONDecoder) -> list[tuple[int, Any]]:
    found = []
    index = _skip(text, index + 1)
    while text[index:index + 1] != "]":
        start = index
        value, index = decoder.raw_decode(text, index)
        found.append((start, value))
        index = _skip(text, index)
        if text[index:index + 1] == ",":
            index = _skip(text, index + 1)
    return found


def _skip(text: str, index: int) -> int:
    while index < len(text) and text[index] in " \t\r\n":
        index += 1
    return index


def _bytes(text: str, index: int) -> int:
    return len(text[:index].encode("utf-8"))


class ToyWitness:
    """Reads toy transcripts; every call, result and message it lists is one every faithful converter keeps."""

    format = FORMAT

    def accepts_format_name(self, name: str) -> bool:
        return name.lower() in (FORMAT, "toy", "toy-agent")

    def sniff(self, data: bytes) -> bool:
        """A toy document opens with its ``"toy": 1`` member."""
        return SNIFF.match(data[:256]) is not None

    def read(self, data: bytes) -> SourceFacts:
        try:
            text = data.decode("utf-8")
            document = json.loads(text)
        except (UnicodeDecodeError, ValueError) as error:
            raise NotThisFormat(f"not a JSON document: {error}") from None
        if not isinstance(document, dict) or document.get("toy") != 1 or not isinstance(document.get("events"), list):
            raise NotThisFormat("not a toy transcript (no \"toy\": 1 and events array)")
        try:
            placed = events_with_offsets(text)
        except ValueError as error:
            raise NotThisFormat(str(error)) from None
        facts = SourceFacts(format=FORMAT, records_exit_codes=True)
        if isinstance(document.get("session"), str):
            facts.session_ids = frozenset({document["session"]})
        if isinstance(document.get("agent"), str):
            facts.agent_version = document["agent"]
            facts.agent_versions = (document["agent"],)
        times: set[str] = set()
        for number, (offset, event) in enumerate(placed):
            where = Where(0, json.dumps(event, ensure_ascii=False)[:EXCERPT], offset=_bytes(text, offset),
                          pointer=f"/events/{number}")
            self._event(facts, event, where, times)
        facts.times = frozenset(times)
        facts.earliest_time = min(times) if times else None
        return facts

    def _event(self, facts: SourceFacts, event: Any, where: Where, times: set[str]) -> None:
        if not isinstance(event, dict) or not isinstance(event.get("at"), str):
            raise NotThisFormat(f"{where.place()}: an event without a time")
        at = event["at"]
        times.add(at)
        for key, role in (("user", "user"), ("agent", "assistant")):
            if isinstance(event.get(key), str):
                facts.messages.append(NativeMessage(role, (event[key],), where, ts=at))
        call = event.get("call")
        if isinstance(call, dict):
            if not isinstance(call.get("id"), str) or not isinstance(call.get("tool"), str):
                raise NotThisFormat(f"{where.place()}: a call without an id or tool")
            facts.calls.append(NativeCall(call["id"], call["tool"], where, arguments=call.get("args"),
                                          has_arguments="args" in call, ts=at))
            result = event.get("result")
            if isinstance(result, dict):
                own = result.get("at") if isinstance(result.get("at"), str) else None
                if own is not None:
                    times.add(own)
                exit_code = result.get("exit") if isinstance(result.get("exit"), int) else None
                facts.results.append(NativeResult(
                    where, call["id"], statuses=frozenset({"completed"}) if result.get("ok") is True else FAILED,
                    model_texts=(result["out"],) if isinstance(result.get("out"), str) else None,
                    exit_code=exit_code, ts=own or at, other_ts=frozenset({at}) if own else frozenset()))


WITNESS = ToyWitness()
