#!/usr/bin/env python3
"""asr-from-claude-code: a Claude Code session transcript to an ASR stream.

    asr-from-claude-code TRANSCRIPT.jsonl > STREAM.jsonl    one-shot (docs/contract.md §2)
    asr-from-claude-code                                    persistent protocol (docs/contract.md §4)

A transcript is the JSONL file Claude Code keeps under
~/.claude/projects/<project>/<session>.jsonl.  Every value written comes from
that file: no clock, no working directory, no environment, no random
numbers, so the same transcript always gives the same stream.  Input that is
not a readable transcript is refused: exit status 1 and one line on stderr.

Standard library only, Python 3.11: beside this file it needs only converter_cli.py (the
command-line shell) and ../vocabulary/strict_json.py (limits and strict JSON).
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections import Counter
from collections.abc import Iterable
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

NAME = "asr-from-claude-code"
VERSION = "0.1.0"
SOURCE_FORMAT = "claude-code-jsonl"
#: Entry types that carry conversation records.
MESSAGE_ENTRIES = ("user", "assistant")


# --- reading ------------------------------------------------------------------


def read_entries(data: bytes) -> list[tuple[int, dict[str, Any]]]:
    """The transcript's lines as (line number, object); refuses anything else."""
    if not data.strip():
        raise Refused("the input is empty; a transcript has at least one line")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise Refused(f"the input is not UTF-8 text (bad byte at offset {error.start})") from None
    lines = text.split("\n")
    last = max(i for i, line in enumerate(lines, 1) if line.strip())
    entries = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            value = loads(line)
        except (ValueError, RecursionError) as error:
            hint = "; the file looks cut short" if number == last and not text.endswith("\n") else ""
            raise Refused(f"line {number} is not valid JSON ({first_line(error)}){hint}") from None
        if not isinstance(value, dict):
            raise Refused(f"line {number} is not a JSON object")
        if not isinstance(value.get("type"), str):
            raise Refused(f"line {number} has no type; it is not a Claude Code transcript line")
        timestamp = value.get("timestamp")
        if timestamp is not None and not is_timestamp(timestamp):
            raise Refused(f"line {number}: timestamp {timestamp!r} is not an RFC 3339 date-time")
        entries.append((number, value))
    return entries


def _string(entry: dict[str, Any], key: str) -> str | None:
    value = entry.get(key)
    return value if isinstance(value, str) and value else None


# --- converting ---------------------------------------------------------------


class TranscriptConverter:
    """One pass over a transcript's entries, in file order."""

    def __init__(self, entries: list[tuple[int, dict[str, Any]]], digest: str) -> None:
        self.entries = entries
        self.digest = digest
        self.records: list[dict[str, Any]] = []
        self.lossy: set[str] = set()
        self.uuids = {e["uuid"] for _, e in entries if isinstance(e.get("uuid"), str)}
        self.call_counts = Counter(
            block["id"] for _, e in entries for block in _blocks(e)
            if block.get("type") == "tool_use" and isinstance(block.get("id"), str)
        )
        self.questions: dict[str, dict[str, Any]] = {}
        self.agent_version: str | None = None
        self.title: str | None = None
        self.permission_mode: str | None = None

    def emit(self, kind: str, ts: str | None, **members: Any) -> None:
        seq = len(self.records) + 1
        record: dict[str, Any] = {"type": kind, "seq": seq, "id": f"r{seq}"}
        if ts is not None:
            record["ts"] = ts
        record.update(members)
        self.records.append(record)

    def run(self) -> list[dict[str, Any]]:
        session_id = next((s for _, e in self.entries if (s := _string(e, "sessionId"))), None)
        if session_id is None:
            raise Refused("no line carries a sessionId; this is not a Claude Code session transcript")
        for number, entry in self.entries:
            self.entry(number, entry)
        return [self.header(session_id), *self.records]

    def header(self, session_id: str) -> dict[str, Any]:
        version = next((v for _, e in self.entries if (v := _string(e, "version"))), None)
        agent_id = self.subagent_id()
        started = next((e["timestamp"] for _, e in self.entries if e.get("timestamp") is not None), None)
        root = self.root()
        source: dict[str, Any] = {"format": SOURCE_FORMAT}
        if version:
            source["agentVersion"] = version
        header: dict[str, Any] = {
            "type": "session", "seq": 0, "id": "h", "formatVersion": "0.1",
            "agent": {"name": "claude-code", **({"version": version} if version else {})},
            "sessionId": agent_id or session_id,
            "producer": {
                "name": NAME, "version": VERSION, "method": "converter", "instance": self.instance(),
                "source": source, "lossy": sorted(self.lossy),
            },
        }
        if started is not None:
            header["startedAt"] = started
        if agent_id is not None:
            header["scope"] = "subagent"
        if root is not None:
            header["workspace"] = {"roots": [root]}
        header["profiles"] = ["core", "coding"] if root is not None else ["core"]
        header["contentLevel"] = "full"
        return header

    def subagent_id(self) -> str | None:
        """A subagent's own file: every conversation line is a sidechain of one agentId.

        Its lines carry the parent's sessionId; the subagent's own native ID is its agentId,
        so that is the stream's sessionId, and the header says scope: subagent.
        """
        lines = [e for _, e in self.entries if e["type"] in MESSAGE_ENTRIES]
        agents = {e.get("agentId") for e in lines}
        if lines and all(e.get("isSidechain") is True for e in lines) and len(agents) == 1:
            agent = agents.pop()
            return agent if isinstance(agent, str) and agent else None
        return None

    def instance(self) -> str:
        """ASR-006: opaque; derived from the input so that a conversion is repeatable."""
        return "conv-" + self.digest[:12]

    def root(self) -> dict[str, Any] | None:
        """The working directory the transcript records first, with its branch (ASR-159)."""
        first = next((e for _, e in self.entries if _string(e, "cwd")), None)
        if first is None:
            return None
        cwd = first["cwd"]
        root: dict[str, Any] = {"id": "project"}
        if cwd.startswith("/") and "\\" not in cwd:
            root["path"] = cwd
        elif re.match(r"[A-Za-z]:[\\/]", cwd):
            root["path"] = cwd.replace("\\", "/")
            root["nativePath"] = cwd
        else:
            root["path"] = None
            root["nativePath"] = cwd
        branch = _string(first, "gitBranch")
        if branch:
            root["vcs"] = {"type": "git", "branch": branch}
        self.note_changes("cwd", cwd)
        self.note_changes("gitBranch", branch)
        return root

    def note_changes(self, key: str, first: str | None) -> None:
        """Later values of cwd or gitBranch are not written: declare the loss."""
        if any(_string(e, key) not in (None, first) for _, e in self.entries):
            self.lossy.add(f"claude-code.{key}")

    def entry(self, number: int, entry: dict[str, Any]) -> None:
        kind = entry["type"]
        ts = entry.get("timestamp")
        if kind == "summary":
            self.summary(number, entry)
        elif kind == "permission-mode":
            self.permission(entry, ts)
        elif kind in MESSAGE_ENTRIES:
            self.agent_version_change(entry, ts)
            if kind == "user":
                self.permission(entry, ts)
            self.message(number, entry, ts)
        else:
            self.lossy.add(f"claude-code.{kind}")

    def summary(self, number: int, entry: dict[str, Any]) -> None:
        """A summary whose leafUuid names no line of this file was written for another session."""
        title = entry.get("summary")
        if not isinstance(title, str):
            raise Refused(f"line {number}: a summary line without a summary string")
        leaf = entry.get("leafUuid")
        if isinstance(leaf, str) and leaf not in self.uuids:
            self.lossy.add("claude-code.summary")
        elif title != self.title:
            self.title = title
            self.emit("session_info", None, title=title)

    def permission(self, entry: dict[str, Any], ts: str | None) -> None:
        """The permission mode in force where the source records it: a snapshot (ASR-187)."""
        mode = _string(entry, "permissionMode")
        if mode is not None and mode != self.permission_mode:
            self.permission_mode = mode
            self.emit("config_change", ts, snapshot=True, permissionMode=mode)

    def agent_version_change(self, entry: dict[str, Any], ts: str | None) -> None:
        version = _string(entry, "version")
        if version is None:
            return
        if self.agent_version is not None and version != self.agent_version:
            self.emit("declaration", ts, agentVersion=version)
        self.agent_version = version

    def message(self, number: int, entry: dict[str, Any], ts: str | None) -> None:
        message = entry.get("message")
        if not isinstance(message, dict):
            raise Refused(f"line {number}: the {entry['type']} line has no message object")
        content = message.get("content")
        if not isinstance(content, (str, list)):
            raise Refused(f"line {number}: message.content is neither text nor a list of blocks")
        if entry.get("parentUuid") is not None:
            self.lossy.add("claude-code.parentUuid")
        if entry["type"] == "assistant" and any(k in message for k in ("model", "usage", "stop_reason")):
            self.lossy.add("inference")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        results = sum(1 for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result")
        parts: list[dict[str, Any]] = []
        for index, block in enumerate(blocks):
            if not isinstance(block, dict) or not isinstance(block.get("type"), str):
                raise Refused(f"line {number}: content block {index} has no type")
            kind = block["type"]
            if kind == "text":
                if not isinstance(block.get("text"), str):
                    raise Refused(f"line {number}: text block {index} has no text")
                if not parts:  # one message per entry, where its first text is
                    native = {"messageId": entry["uuid"]} if isinstance(entry.get("uuid"), str) else {}
                    self.emit("message", ts, **native, role=entry["type"], content=parts)
                parts.append({"type": "text", "text": block["text"]})
            elif kind == "tool_use":
                self.tool_call(number, index, entry, block, ts)
            elif kind == "tool_result":
                raw = entry.get("toolUseResult") if results == 1 else None
                if results > 1 and "toolUseResult" in entry:
                    self.lossy.add("tool_result.raw")
                self.tool_result(number, index, block, raw, "toolUseResult" in entry and results == 1, ts)
            elif kind in ("thinking", "redacted_thinking"):
                self.lossy.add("reasoning")
            else:
                self.lossy.add(f"content.{kind}")

    def tool_call(self, number: int, index: int, entry: dict[str, Any], block: dict[str, Any], ts: str | None) -> None:
        call_id, name = block.get("id"), block.get("name")
        if not isinstance(call_id, str) or not call_id or not isinstance(name, str):
            raise Refused(f"line {number}: tool_use block {index} lacks an id or a name")
        members: dict[str, Any] = {"callId": call_id, "callIdSource": "native", "name": name}
        if entry["type"] == "assistant":
            caller = block.get("caller")
            if isinstance(caller, dict) and caller.get("type") not in (None, "direct"):
                members["requestedBy"] = "code"  # run by a program the model wrote (ASR-274)
                if isinstance(caller.get("tool_id"), str) and caller["tool_id"]:
                    members["parentCallId"] = caller["tool_id"]  # the code-execution call that ran it (ASR-275)
            else:
                members["requestedBy"] = "model"  # part of a model response (ASR-274)
        if "input" in block:
            if fits(block["input"]):
                members["input"] = block["input"]
            else:  # ASR-254: kept whole, as text
                members["inputText"] = json.dumps(block["input"], ensure_ascii=False)
        self.emit("tool_call", ts, **members)
        if isinstance(block.get("input"), dict) and block["input"].get("run_in_background") is True:
            self.lossy.add("terminal")  # a background shell's lifecycle is not written as a terminal (ASR-286)
        if name == "AskUserQuestion" and self.call_counts[call_id] == 1 and isinstance(block.get("input"), dict):
            self.questions[call_id] = block["input"]

    def tool_result(self, number: int, index: int, block: dict[str, Any], raw: Any, has_raw: bool, ts: str | None) -> None:
        native = block.get("tool_use_id")
        members: dict[str, Any] = {}
        if native is None:
            members["linkage"] = "none"
        elif not isinstance(native, str) or not native:
            raise Refused(f"line {number}: tool_result block {index} has a tool_use_id that is not a string")
        elif self.call_counts[native] > 1:  # ASR-262: the ID cannot show which call
            members.update(linkage="ambiguous", nativeCallId=native)
        else:
            members.update(callId=native, linkage="exact")
        is_error = block.get("is_error", False)
        if not isinstance(is_error, bool):
            raise Refused(f"line {number}: tool_result block {index} has an is_error that is not true or false")
        members["status"] = "failed" if is_error else "completed"
        members["content"] = self.result_content(number, index, block.get("content", []))
        if is_error and isinstance(native, str) and _refused(members["content"]):
            # The person refused the call at the permission prompt: the request was shown, so it is a
            # permission record (ASR-279), decided by the person (ASR-270), and the result is a denial.
            members["status"] = "denied"
            self.emit("permission", ts, requestId=f"{native}.permission", subject={"callId": native},
                      status="resolved", decision="reject_once", decidedBy="user")
        if has_raw:
            if fits(raw):
                members["raw"] = raw
            else:
                self.lossy.add("tool_result.raw")
        self.emit("tool_result", ts, **members)
        if members.get("linkage") == "exact" and native in self.questions and has_raw:
            self.input_request(native, self.questions.pop(native), raw, ts)

    def input_request(self, call_id: str, arguments: dict[str, Any], raw: Any, ts: str | None) -> None:
        """AskUserQuestion and the answers its result records (toolUseResult.answers); IDs by position."""
        asked = [q for q in arguments.get("questions") or () if isinstance(q, dict) and isinstance(q.get("question"), str)]
        answers = raw.get("answers") if isinstance(raw, dict) else None
        if not asked or not isinstance(answers, dict):
            return
        questions, given = [], []
        for index, item in enumerate(asked):
            question: dict[str, Any] = {"id": str(index), "text": item["question"]}
            if isinstance(item.get("header"), str):
                question["header"] = item["header"]
            options = [o for o in item.get("options") or () if isinstance(o, dict) and isinstance(o.get("label"), str)]
            if options:
                question["options"] = [{k: o[k] for k in ("label", "description") if isinstance(o.get(k), str)}
                                       for o in options]
            if isinstance(item.get("multiSelect"), bool):
                question["multiSelect"] = item["multiSelect"]
            questions.append(question)
            answer = answers.get(item["question"])
            if isinstance(answer, str):
                labels = {o["label"] for o in options}
                given.append({"questionId": str(index), **({"selected": [answer]} if answer in labels else {"text": answer})})
        self.emit("input_request", ts, requestId=call_id, idSource="derived", callId=call_id, mode="questions",
                  questions=questions, status="answered", answers=given)

    def result_content(self, number: int, index: int, content: Any) -> list[dict[str, Any]]:
        """What the model received: the result block's text (ASR-259)."""
        if isinstance(content, str):
            return [{"type": "text", "text": content}]
        if not isinstance(content, list):
            raise Refused(f"line {number}: tool_result block {index} has content that is neither text nor a list")
        parts = []
        for item in content:
            if not isinstance(item, dict) or not isinstance(item.get("type"), str):
                raise Refused(f"line {number}: tool_result block {index} holds a part without a type")
            if item["type"] == "text" and isinstance(item.get("text"), str):
                parts.append({"type": "text", "text": item["text"]})
            else:
                self.lossy.add(f"content.{item['type']}")
        return parts


#: The text Claude Code returns to the model when the person refuses a tool use at its permission prompt.
REFUSED = "The user doesn't want to proceed with this tool use."


def _refused(content: list[dict[str, Any]]) -> bool:
    return any(part.get("type") == "text" and str(part.get("text", "")).startswith(REFUSED) for part in content)


def _blocks(entry: dict[str, Any]) -> Iterable[dict[str, Any]]:
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):
        yield from (b for b in content if isinstance(b, dict))


def convert(data: bytes) -> bytes:
    """The whole conversion: transcript bytes in, stream bytes out (or Refused)."""
    return encode_stream(TranscriptConverter(read_entries(data), hashlib.sha256(data).hexdigest()).run(), "transcript")


SHELL = Shell(NAME, VERSION, "TRANSCRIPT.jsonl", convert)
main = SHELL.main


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
