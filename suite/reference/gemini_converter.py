#!/usr/bin/env python3
"""asr-from-gemini: a Gemini CLI session to an ASR stream.

    asr-from-gemini SESSION.jsonl > STREAM.jsonl    one-shot (docs/contract.md §2)
    asr-from-gemini                                 persistent protocol (docs/contract.md §4)

Gemini CLI keeps each session under ~/.gemini/tmp/<project hash>/chats/: since its April 2026
releases as `session-<time>-<id>.jsonl` (a metadata line, then each message appended again
whole, under its `id`, whenever it changes; `{"$set": ...}` metadata updates, a `$set` with
`messages` replacing the conversation, and `{"$rewindTo": id}` removing that message and all
after it), before that as one `session-*.json` object with a `messages` array. Both are read.

The stream is the conversation Gemini itself resumes: the last copy of each message in the place
of its first, rewound and replaced messages left out (declared as `gemini.rewound`). Tool calls
come from the `toolCalls` of Gemini's messages; a call that is still validating, scheduled,
awaiting approval or executing gets no result (ASR-265), and one awaiting approval a pending
`permission` record (the request was shown; ASR-279); `success`, `error` and `cancelled` become
completed, failed and cancelled; a `null` result records nothing of what reached the model, so
content is absent (ASR-259). Gemini records no exit codes, no timing, no tool kinds and no
agent version, so none are written. Every value comes from the file: no clock, no environment.
Input that is not a readable session is refused: exit status 1 and one line on stderr.

Standard library only, Python 3.11: beside this file it needs only converter_cli.py (the
command-line shell) and ../vocabulary/strict_json.py (limits and strict JSON).
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if __package__ or TYPE_CHECKING:
    from asr_conformance.reference.converter_cli import Refused, Shell, encode_stream, first_line
    from asr_conformance.vocabulary.strict_json import fits, is_timestamp, loads
else:  # run as a script (examples/*-converter link here): the shared shell and limits sit in the source tree
    here = Path(__file__).resolve().parent
    sys.path[:0] = [str(here), str(here.parent / "vocabulary")]
    from converter_cli import Refused, Shell, encode_stream, first_line  # noqa: E402
    from strict_json import fits, is_timestamp, loads  # noqa: E402

NAME = "asr-from-gemini"
VERSION = "0.1.0"
SOURCE_FORMAT = "gemini-cli-session"
#: Gemini's finished statuses and the stream status each means (ASR-258).
STATUSES = {"success": "completed", "error": "failed", "cancelled": "cancelled"}
#: Statuses of a call that has no result yet.
PENDING = ("validating", "scheduled", "awaiting_approval", "executing")


# --- reading ------------------------------------------------------------------


def is_session_start(first: bytes) -> bool:
    """Whether an input's first line opens a Gemini session (metadata, or a session object)."""
    first = first.strip()
    if first == b"{":
        return True
    try:
        value = json.loads(first)
    except (ValueError, RecursionError):
        return False
    return isinstance(value, dict) and isinstance(value.get("sessionId"), str) and isinstance(value.get("projectHash"), str)


class Session:
    """The metadata, the live messages in order, and whether anything was rewound or replaced."""

    def __init__(self) -> None:
        self.session_id: str | None = None
        self.start_time: str | None = None
        self.times: list[str] = []
        self.messages: dict[str, dict[str, Any]] = {}
        self.removed = False
        self.unknown = False

    def metadata(self, value: dict[str, Any], where: str) -> None:
        if self.session_id is None and isinstance(value.get("sessionId"), str) and value["sessionId"]:
            self.session_id = value["sessionId"]
        for key in ("startTime", "lastUpdated"):
            stamp = value.get(key)
            if stamp is None:
                continue
            if not is_timestamp(stamp):
                raise Refused(f"{where}: {key} {stamp!r} is not an RFC 3339 date-time")
            self.times.append(stamp)
            if key == "startTime" and self.start_time is None:
                self.start_time = stamp

    def message(self, value: Any, where: str) -> None:
        if not isinstance(value, dict) or not isinstance(value.get("id"), str) or not value["id"]:
            raise Refused(f"{where}: a message without an id")
        if not isinstance(value.get("type"), str):
            raise Refused(f"{where}: message {value['id']} has no type")
        if not is_timestamp(value.get("timestamp")):
            raise Refused(f"{where}: message {value['id']} has no RFC 3339 timestamp")
        self.times.append(value["timestamp"])
        calls = value.get("toolCalls")
        if calls is not None and not isinstance(calls, list):
            raise Refused(f"{where}: toolCalls of message {value['id']} is not a list")
        for call in calls or ():
            if not isinstance(call, dict) or not isinstance(call.get("id"), str) or not call["id"] \
                    or not isinstance(call.get("name"), str) or not call["name"]:
                raise Refused(f"{where}: a tool call of message {value['id']} has no id or no name")
            if not isinstance(call.get("status"), str):
                raise Refused(f"{where}: tool call {call['id']} has no status")
            if "args" in call and not isinstance(call["args"], dict):
                raise Refused(f"{where}: the args of tool call {call['id']} are not an object")
            if call.get("timestamp") is not None:
                if not is_timestamp(call["timestamp"]):
                    raise Refused(f"{where}: tool call {call['id']} has timestamp {call['timestamp']!r}")
                self.times.append(call["timestamp"])
            if result_texts(call.get("result")) is False:
                raise Refused(f"{where}: the result of tool call {call['id']} is neither parts nor text")
        self.messages[value["id"]] = value  # a later copy replaces the earlier one, in its place

    def rewind(self, target: str) -> None:
        ids = list(self.messages)
        cut = ids.index(target) if target in self.messages else 0
        for gone in ids[cut:]:
            del self.messages[gone]
            self.removed = True


def read_session(data: bytes) -> Session:
    if not data.strip():
        raise Refused("the input is empty; a Gemini CLI session has at least a metadata line")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise Refused(f"the input is not UTF-8 text (bad byte at offset {error.start})") from None
    session = Session()
    first = text.lstrip().split("\n", 1)[0].strip()
    if first == "{" or (first.startswith("{") and text.strip().count("\n") == 0 and '"messages"' in first):
        try:
            value = loads(text)
        except (ValueError, RecursionError) as error:
            raise Refused(f"line {getattr(error, 'lineno', 1)}: the session object is not JSON "
                          f"({first_line(error)})") from None
        if not isinstance(value, dict) or not isinstance(value.get("messages"), list):
            raise Refused("line 1: the session object has no messages array")
        session.metadata(value, "line 1")
        for index, message in enumerate(value["messages"]):
            session.message(message, f"/messages/{index}")
    else:
        lines = text.split("\n")
        last = max(i for i, line in enumerate(lines, 1) if line.strip())
        for number, raw in enumerate(lines, 1):
            if raw.strip():
                read_line(session, number, raw, number == last and not text.endswith("\n"))
    if session.session_id is None:
        raise Refused("no metadata line records a sessionId; this is not a Gemini CLI session")
    return session


def read_line(session: Session, number: int, raw: str, cut_short: bool) -> None:
    try:
        value = loads(raw)
    except (ValueError, RecursionError) as error:
        hint = "; the file looks cut short" if cut_short else ""
        raise Refused(f"line {number} is not valid JSON ({first_line(error)}){hint}") from None
    if not isinstance(value, dict):
        raise Refused(f"line {number} is not a JSON object")
    where = f"line {number}"
    if number == 1 and not (isinstance(value.get("sessionId"), str) and isinstance(value.get("projectHash"), str)):
        raise Refused("line 1 is not a Gemini CLI metadata line (sessionId and projectHash)")
    if "$rewindTo" in value:
        if not isinstance(value["$rewindTo"], str):
            raise Refused(f"{where}: $rewindTo is not a message id")
        session.rewind(value["$rewindTo"])
    elif isinstance(value.get("id"), str):
        session.message(value, where)
    elif "$set" in value:
        update = value["$set"]
        if not isinstance(update, dict):
            raise Refused(f"{where}: $set is not an object")
        session.metadata(update, where)
        if isinstance(update.get("messages"), list):  # a checkpoint replaces the conversation
            session.removed = session.removed or bool(session.messages)
            session.messages = {}
            for index, message in enumerate(update["messages"]):
                session.message(message, f"{where} at /$set/messages/{index}")
    elif isinstance(value.get("sessionId"), str) and isinstance(value.get("projectHash"), str):
        session.metadata(value, where)
        for index, message in enumerate(value.get("messages") or ()):
            session.message(message, f"{where} at /messages/{index}")
    else:
        session.unknown = True


def texts_of(content: Any) -> list[str]:
    """The text parts of a message's content (a string, a part or a list of parts); thoughts are not text."""
    if isinstance(content, str):
        return [content]
    parts = content if isinstance(content, list) else [content] if isinstance(content, dict) else []
    return [p if isinstance(p, str) else p["text"] for p in parts
            if isinstance(p, str) or (isinstance(p, dict) and isinstance(p.get("text"), str) and not p.get("thought"))]


def result_texts(result: Any) -> list[str] | None | bool:
    """What reached the model: text parts and functionResponse output or error; None for null; False if unreadable."""
    if result is None:
        return None
    if isinstance(result, str):
        return [result]
    if not isinstance(result, (list, dict)):
        return False
    out: list[str] = []
    for part in result if isinstance(result, list) else [result]:
        if isinstance(part, str):
            out.append(part)
        elif isinstance(part, dict):
            if isinstance(part.get("text"), str) and not part.get("thought"):
                out.append(part["text"])
            response = part.get("functionResponse")
            inner = response.get("response") if isinstance(response, dict) else None
            if isinstance(inner, dict):
                out += [inner[key] for key in ("output", "error") if isinstance(inner.get(key), str)]
    return out


# --- converting ---------------------------------------------------------------


class SessionConverter:
    """One pass over the live messages, in conversation order."""

    def __init__(self, session: Session, digest: str) -> None:
        self.session = session
        self.digest = digest
        self.records: list[dict[str, Any]] = []
        self.lossy: set[str] = set()
        if session.removed:
            self.lossy.add("gemini.rewound")
        if session.unknown:
            self.lossy.add("gemini.unknown_records")
        self.call_counts = Counter(call["id"] for m in session.messages.values() if m["type"] == "gemini"
                                   for call in m.get("toolCalls") or ())

    def emit(self, kind: str, ts: str | None, **members: Any) -> None:
        seq = len(self.records) + 1
        record: dict[str, Any] = {"type": kind, "seq": seq, "id": f"r{seq}"}
        if ts is not None:
            record["ts"] = ts
        record.update(members)
        self.records.append(record)

    def run(self) -> list[dict[str, Any]]:
        for message in self.session.messages.values():
            self.message(message)
        return [self.header(), *self.records]

    def header(self) -> dict[str, Any]:
        header: dict[str, Any] = {
            "type": "session", "seq": 0, "id": "h", "formatVersion": "0.1",
            "agent": {"name": "gemini-cli"},
            "sessionId": self.session.session_id,
            "producer": {
                "name": NAME, "version": VERSION, "method": "converter", "instance": "conv-" + self.digest[:12],
                "source": {"format": SOURCE_FORMAT}, "lossy": sorted(self.lossy),
            },
        }
        started = self.started_at()
        if started is not None:
            header["startedAt"] = started
        header["profiles"] = ["core"]
        header["contentLevel"] = "full"
        return header

    def started_at(self) -> str | None:
        """The metadata's startTime, unless a record is older (then the oldest time recorded)."""
        times = self.session.times
        if not times:
            return None
        oldest = min(times, key=_sort_key)
        start = self.session.start_time
        return start if start is not None and _sort_key(start) <= _sort_key(oldest) else oldest

    def message(self, message: dict[str, Any]) -> None:
        kind, ts = message["type"], message["timestamp"]
        texts = texts_of(message.get("content"))
        content = message.get("content")
        parts = content if isinstance(content, list) else [content] if isinstance(content, dict) else []
        if any(isinstance(p, dict) and not isinstance(p.get("text"), str) for p in parts):
            self.lossy.add("content.media")
        if kind == "user":
            if "".join(texts):
                self.emit("message", ts, messageId=message["id"], role="user",
                          content=[{"type": "text", "text": t} for t in texts])
        elif kind == "gemini":
            if message.get("thoughts"):
                self.lossy.add("reasoning")
            if message.get("tokens"):
                self.lossy.add("inference")
            if any(texts):
                self.emit("message", ts, messageId=message["id"], role="assistant",
                          content=[{"type": "text", "text": t} for t in texts if t])
            calls = [c for c in message.get("toolCalls") or ()]
            for call in calls:
                self.tool_call(call, ts)
            for call in calls:
                self.tool_result(call, ts)
        else:
            self.lossy.add(f"gemini.{kind}")

    def tool_call(self, call: dict[str, Any], message_ts: str) -> None:
        members: dict[str, Any] = {"callId": call["id"], "callIdSource": "native", "name": call["name"],
                                   "requestedBy": "model"}  # calls sit in the model's message (ASR-274)
        if "args" in call:
            if fits(call["args"]):
                members["input"] = call["args"]
            else:  # ASR-254: integers past 2**53 stay exact, as text
                members["inputText"] = json.dumps(call["args"], ensure_ascii=False, separators=(",", ":"))
        self.emit("tool_call", call.get("timestamp") or message_ts, **members)

    def tool_result(self, call: dict[str, Any], message_ts: str) -> None:
        status = call["status"]
        if status == "awaiting_approval":  # the confirmation is shown and unanswered: a pending request (ASR-279)
            self.emit("permission", call.get("timestamp") or message_ts, requestId=call["id"],
                      subject={"callId": call["id"]}, status="pending")
        if status in PENDING:
            return  # still running or waiting: dangling, never given a made-up result (ASR-265)
        if self.call_counts[call["id"]] > 1:  # ASR-262: the ID cannot show which call
            members: dict[str, Any] = {"linkage": "ambiguous", "nativeCallId": call["id"]}
        else:
            members = {"callId": call["id"], "linkage": "exact"}
        members["status"] = STATUSES.get(status, "unknown")
        texts = result_texts(call.get("result"))
        if texts is None:
            members["capture"] = {"content": {"state": "absent"}}  # null: what reached the model is not recorded
        else:
            assert isinstance(texts, list)
            members["content"] = [{"type": "text", "text": t} for t in texts]
            result = call.get("result")
            parts = result if isinstance(result, list) else [result]
            if any(isinstance(p, dict) and ("inlineData" in p or "fileData" in p) for p in parts):
                self.lossy.add("content.media")
        self.emit("tool_result", call.get("timestamp") or message_ts, **members)


def _sort_key(stamp: str) -> tuple[int, str]:
    """An RFC 3339 time as (whole seconds since the epoch, fraction digits): sortable across offsets."""
    text = stamp.upper().replace("Z", "+00:00")
    whole, dot, rest = text.partition(".")
    fraction = ""
    if dot:
        fraction = re.match(r"\d+", rest).group(0)  # type: ignore[union-attr]
        text = whole + rest[len(fraction):]
    text = re.sub(r":60(?=[+-])", ":59", text)  # a leap second sorts with the second before it
    return int(datetime.fromisoformat(text).timestamp()), fraction.ljust(12, "0")


def convert(data: bytes) -> bytes:
    """The whole conversion: session bytes in, stream bytes out (or Refused)."""
    return encode_stream(SessionConverter(read_session(data), hashlib.sha256(data).hexdigest()).run(), "session")


SHELL = Shell(NAME, VERSION, "SESSION.jsonl", convert)
main = SHELL.main


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
