#!/usr/bin/env python3
"""asr-from-codex: a Codex CLI or Desktop rollout to an ASR stream.

    asr-from-codex ROLLOUT.jsonl > STREAM.jsonl    one-shot (docs/contract.md §2)
    asr-from-codex                                 persistent protocol (docs/contract.md §4)

A rollout is the JSONL file Codex keeps under
~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl: `session_meta`,
`turn_context`, `response_item`, `event_msg` and `compacted` lines, each
`{"timestamp", "type", "payload"}`.  Rollouts written before that envelope
existed (a bare header line, `{"record_type": ...}` markers and bare response
items) are read too.  Every value written comes from that file: no clock, no
working directory, no environment, no random numbers, so the same rollout
always gives the same stream.  Input that is not a readable rollout is
refused: exit status 1 and one line on stderr.

Exit codes come only from `exec_command_end` events, which record them as
numbers; "Exit code: N" inside a tool's output text is output, never an exit
code (ASR-260).

Standard library only, Python 3.11: beside this file it needs only converter_cli.py (the
command-line shell) and ../vocabulary/strict_json.py (limits and strict JSON).
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import re
import sys
from collections import Counter
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

NAME = "asr-from-codex"
VERSION = "0.1.0"
SOURCE_FORMAT = "codex-rollout-jsonl"
ROOT_ID = "workspace"
#: The exec table's range for exitCode.
EXIT_CODE_RANGE = (-(2**31), 2**32 - 1)
#: Line types of the rollout envelope.
ENVELOPE_TYPES = ("session_meta", "turn_context", "response_item", "event_msg", "compacted")
#: Content item types whose `text` is message text.
TEXT_ITEMS = ("input_text", "output_text", "text")
#: Outcome words Codex records (exec, patch and MCP events) and the stream status each means.
STATUS_WORDS = {"completed": "completed", "success": "completed", "failed": "failed",
                "declined": "denied", "rejected": "denied"}
#: Events whose content the stream holds through other lines, so nothing is lost by skipping them.
COPIES = ("user_message", "agent_message", "exec_command_end", "patch_apply_end", "mcp_tool_call_end",
          "task_started", "task_complete", "turn_aborted", "exec_command_begin", "patch_apply_begin",
          "mcp_tool_call_begin")


# --- reading ------------------------------------------------------------------


def read_lines(data: bytes) -> list[tuple[int, dict[str, Any]]]:
    """The rollout as (line number, envelope) pairs; pre-envelope rollouts are wrapped."""
    if not data.strip():
        raise Refused("the input is empty; a rollout has at least one line")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise Refused(f"the input is not UTF-8 text (bad byte at offset {error.start})") from None
    lines = text.split("\n")
    last = max(i for i, line in enumerate(lines, 1) if line.strip())
    values: list[tuple[int, dict[str, Any]]] = []
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
        values.append((number, value))
    first = values[0][1]
    if first.get("type") in ENVELOPE_TYPES and isinstance(first.get("payload"), dict):
        return [_envelope(number, value) for number, value in values]
    if "type" not in first and isinstance(first.get("id"), str):
        return _unwrapped(values)
    raise Refused(f"line {values[0][0]} is neither a rollout line (type and payload) nor a rollout header")


def _envelope(number: int, value: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    kind = value.get("type")
    if not isinstance(kind, str):
        raise Refused(f"line {number} has no type; it is not a Codex rollout line")
    if not isinstance(value.get("payload"), dict):
        raise Refused(f"line {number}: a {kind} line without a payload object")
    stamp = value.get("timestamp")
    if stamp is not None and not is_timestamp(stamp):
        raise Refused(f"line {number}: timestamp {stamp!r} is not an RFC 3339 date-time")
    return number, value


def _unwrapped(values: list[tuple[int, dict[str, Any]]]) -> list[tuple[int, dict[str, Any]]]:
    """A rollout from before the envelope: a bare header, then bare response items."""
    (number, header), rest = values[0], values[1:]
    out = [(number, {"type": "session_meta", "payload": header})]
    for number, value in rest:
        if "record_type" in value:
            continue  # a state marker; it holds nothing
        if not isinstance(value.get("type"), str):
            raise Refused(f"line {number} has no type; it is not a Codex rollout line")
        stamp = value.get("timestamp")
        if stamp is not None and not is_timestamp(stamp):
            raise Refused(f"line {number}: timestamp {stamp!r} is not an RFC 3339 date-time")
        line = {"type": "response_item", "payload": value}
        if stamp is not None:
            line["timestamp"] = stamp
        out.append((number, line))
    return out


def parse_arguments(text: str) -> tuple[bool, Any]:
    """(True, value) when the arguments are JSON text the stream can hold as input (ASR-254)."""
    try:
        value = loads(text)
    except (ValueError, RecursionError):
        return False, None
    return (True, value) if fits(value) else (False, None)


def _string(mapping: dict[str, Any], key: str) -> str | None:
    value = mapping.get(key)
    return value if isinstance(value, str) and value else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def item_texts(content: Any) -> list[str] | None:
    """The texts of a content list (message or tool output), in order; None when it is no list."""
    if not isinstance(content, list):
        return None
    return [item["text"] for item in content
            if isinstance(item, dict) and item.get("type") in TEXT_ITEMS and isinstance(item.get("text"), str)]


def output_texts(output: Any) -> list[str] | None:
    """What reached the model from a tool output: a string, content items, or {content, success}."""
    if isinstance(output, str):
        return [output]
    if isinstance(output, dict) and isinstance(output.get("content"), str):
        return [output["content"]]
    return item_texts(output)


def duration_ms(value: Any) -> float | None:
    """A recorded duration ({secs, nanos}) in milliseconds; other shapes are not read."""
    if isinstance(value, dict):
        secs, nanos = _int(value.get("secs")), _int(value.get("nanos"))
        if secs is not None and nanos is not None and secs >= 0 and nanos >= 0:
            return secs * 1000 + nanos / 1_000_000
    return None


# --- converting ---------------------------------------------------------------


class RolloutConverter:
    """One pass over a rollout's lines, in file order, after an index of the events by call ID."""

    def __init__(self, lines: list[tuple[int, dict[str, Any]]], digest: str) -> None:
        self.lines = lines
        self.digest = digest
        self.records: list[dict[str, Any]] = []
        self.lossy: set[str] = set()
        self.meta = next((v["payload"] for _, v in lines if v["type"] == "session_meta"), None)
        payloads = [(n, v["payload"]) for n, v in lines if v["type"] == "response_item"]
        events = [(n, v["payload"]) for n, v in lines if v["type"] == "event_msg"]
        self.call_counts = Counter(
            p["call_id"] for _, p in payloads
            if p.get("type") in ("function_call", "custom_tool_call") and isinstance(p.get("call_id"), str)
        )
        self.outputs = {p["call_id"] for _, p in payloads
                        if p.get("type") in ("function_call_output", "custom_tool_call_output")
                        and isinstance(p.get("call_id"), str)}
        #: The last outcome event for each call ID (exec_command_end, patch_apply_end, mcp_tool_call_end).
        self.outcomes: dict[str, tuple[int, dict[str, Any]]] = {}
        for number, event in events:
            if event.get("type") in ("exec_command_end", "patch_apply_end", "mcp_tool_call_end"):
                call_id = event.get("call_id")
                if isinstance(call_id, str) and call_id:
                    self.outcomes[call_id] = (number, event)
        #: Per role, the texts message items hold (each part, and all parts joined).
        self.item_texts: dict[str, set[str]] = {"user": set(), "assistant": set()}
        for _, item in payloads:
            texts = item_texts(item.get("content")) if item.get("type") == "message" else None
            if texts is not None and item.get("role") in self.item_texts:
                self.item_texts[item["role"]].update({"".join(texts), *texts})
        self.session_id: str | None = None
        self.agent_version: str | None = None
        self.root_path: str | None = None

    def emit(self, kind: str, ts: str | None, **members: Any) -> None:
        seq = len(self.records) + 1
        record: dict[str, Any] = {"type": kind, "seq": seq, "id": f"r{seq}"}
        if ts is not None:
            record["ts"] = ts
        record.update(members)
        self.records.append(record)

    def run(self) -> list[dict[str, Any]]:
        if self.meta is None:
            raise Refused("no session_meta line; this is not a Codex rollout")
        self.session_id = _string(self.meta, "id") or _string(self.meta, "session_id")
        if self.session_id is None:
            raise Refused("the session_meta line has no session id")
        self.agent_version = _string(self.meta, "cli_version")
        self.root_path = self.root_of(_string(self.meta, "cwd"))
        for number, line in self.lines:
            self.line(number, line)
        return [self.header(), *self.records]  # the header last: its lossy list needs every line read

    # -- the header --

    def header(self) -> dict[str, Any]:
        meta = self.meta or {}
        source: dict[str, Any] = {"format": SOURCE_FORMAT}
        version = _string(meta, "cli_version")
        if version:
            source["agentVersion"] = version
        header: dict[str, Any] = {
            "type": "session", "seq": 0, "id": "h", "formatVersion": "0.1",
            "agent": {"name": "codex", **({"version": version} if version else {})},
            "sessionId": self.session_id,
            "producer": {
                "name": NAME, "version": VERSION, "method": "converter", "instance": "conv-" + self.digest[:12],
                "source": source, "lossy": sorted(self.lossy),
            },
        }
        started = self.started_at()
        if started is not None:
            header["startedAt"] = started
        originator = _string(meta, "originator")
        if originator is not None:
            header["client"] = {"name": originator}
        root = self.root()
        if root is not None:
            header["workspace"] = {"roots": [root]}
        header["profiles"] = ["core", "coding"] if root is not None else ["core"]
        header["contentLevel"] = "full"
        return header

    def started_at(self) -> str | None:
        """session_meta's own timestamp (the session's start), else the first line's."""
        own = (self.meta or {}).get("timestamp")
        if is_timestamp(own):
            return own
        return next((v["timestamp"] for _, v in self.lines if "timestamp" in v), None)

    @staticmethod
    def root_of(cwd: str | None) -> str | None:
        if cwd is None:
            return None
        if cwd.startswith("/") and "\\" not in cwd:
            return posixpath.normpath(cwd)
        return None

    def root(self) -> dict[str, Any] | None:
        """The working directory session_meta records, with the git facts it records (ASR-159)."""
        cwd = _string(self.meta or {}, "cwd")
        if cwd is None:
            return None
        root: dict[str, Any] = {"id": ROOT_ID}
        if self.root_path is not None:
            root["path"] = self.root_path
            if self.root_path != cwd:
                root["nativePath"] = cwd
        elif re.match(r"[A-Za-z]:[\\/]", cwd):
            root["path"] = cwd.replace("\\", "/")
            root["nativePath"] = cwd
        else:
            root["path"] = None
            root["nativePath"] = cwd
        git = (self.meta or {}).get("git")
        if isinstance(git, dict):
            vcs: dict[str, Any] = {"type": "git"}
            for native, member in (("branch", "branch"), ("repository_url", "remote")):
                if _string(git, native):
                    vcs[member] = git[native]
            head = _string(git, "commit_hash")
            if head and re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", head):
                vcs["head"] = head
            elif head:
                self.lossy.add("codex.git.commit_hash")
            if len(vcs) > 1:
                root["vcs"] = vcs
        return root

    def path_ref(self, path: str) -> dict[str, Any]:
        """A recorded directory as a PathRef: relative to the workspace root when inside it."""
        if self.root_path is not None and path.startswith("/") and "\\" not in path:
            normal = posixpath.normpath(path)
            if normal == self.root_path or normal.startswith(self.root_path.rstrip("/") + "/"):
                return {"root": ROOT_ID, "path": posixpath.relpath(normal, self.root_path)}
            return {"root": None, "path": normal}
        return {"root": None, "path": path}

    # -- lines --

    def line(self, number: int, line: dict[str, Any]) -> None:
        kind, payload, ts = line["type"], line["payload"], line.get("timestamp")
        if kind == "session_meta":
            self.session_meta(payload, ts)
        elif kind == "turn_context":
            self.turn_context(payload, ts)
        elif kind == "response_item":
            self.response_item(number, payload, ts)
        elif kind == "event_msg":
            self.event(number, payload, ts)
        elif kind == "compacted":
            self.lossy.add("compaction")
        else:
            self.lossy.add(f"codex.{kind}")

    def session_meta(self, payload: dict[str, Any], ts: str | None) -> None:
        """A later session_meta (a resumed or forked rollout) may carry another version or session."""
        if payload is self.meta:
            return
        if (_string(payload, "id") or _string(payload, "session_id")) != self.session_id:
            self.lossy.add("codex.session_meta")
        version = _string(payload, "cli_version")
        if version is not None and version != self.agent_version:
            self.emit("declaration", ts, agentVersion=version)
            self.agent_version = version

    def turn_context(self, payload: dict[str, Any], ts: str | None) -> None:
        """The configuration in force at the start of a turn: a snapshot (ASR-187)."""
        members: dict[str, Any] = {}
        turn = _string(payload, "turn_id")
        if turn is not None:
            members["turnId"] = turn
        members["snapshot"] = True
        if _string(payload, "model"):
            members["model"] = {"id": payload["model"]}
        if _string(payload, "effort"):
            members["effort"] = payload["effort"]
        if _string(payload, "approval_policy"):
            members["permissionMode"] = payload["approval_policy"]
        sandbox = self.sandbox(payload.get("sandbox_policy"))
        if sandbox:
            members["sandbox"] = sandbox
        used = {"turn_id", "model", "effort", "approval_policy", "sandbox_policy"}
        cwd = _string(payload, "cwd")
        if cwd is not None and self.root_of(cwd) == self.root_path:
            used.add("cwd")
        if any(v is not None for k, v in payload.items() if k not in used):
            self.lossy.add("codex.turn_context")
        if len(members) > (2 if turn is not None else 1):
            self.emit("config_change", ts, **members)

    def sandbox(self, policy: Any) -> dict[str, Any]:
        if isinstance(policy, str) and policy:
            return {"mode": policy}
        if not isinstance(policy, dict):
            return {}
        sandbox: dict[str, Any] = {}
        mode = _string(policy, "type") or _string(policy, "mode")
        if mode is not None:
            sandbox["mode"] = mode
        if isinstance(policy.get("network_access"), bool):
            sandbox["network"] = policy["network_access"]
        if set(policy) - {"type", "mode", "network_access"}:
            self.lossy.add("codex.sandbox_policy")
        return sandbox

    def response_item(self, number: int, item: dict[str, Any], ts: str | None) -> None:
        kind = item.get("type")
        if kind == "message":
            self.message(number, item, ts)
        elif kind in ("function_call", "custom_tool_call"):
            self.tool_call(number, item, ts)
        elif kind in ("function_call_output", "custom_tool_call_output"):
            self.tool_output(number, item, ts)
        elif kind == "reasoning":
            self.lossy.add("reasoning")
        elif kind in ("compaction", "context_compaction"):
            self.lossy.add("compaction")
        elif isinstance(kind, str):
            self.lossy.add(f"codex.{kind}")
        else:
            raise Refused(f"line {number}: a response_item without a type")

    def message(self, number: int, item: dict[str, Any], ts: str | None) -> None:
        role = item.get("role")
        if not isinstance(role, str) or not role:
            raise Refused(f"line {number}: a message without a role")
        texts = item_texts(item.get("content"))
        if texts is None:
            raise Refused(f"line {number}: message content is not a list of items")
        for part in item["content"]:
            kind = part.get("type") if isinstance(part, dict) else None
            if kind not in TEXT_ITEMS:
                self.lossy.add(f"content.{kind}" if isinstance(kind, str) else "content")
        native = {"messageId": item["id"]} if _string(item, "id") else {}
        self.emit("message", ts, **native, role=role, content=[{"type": "text", "text": t} for t in texts])

    def tool_call(self, number: int, item: dict[str, Any], ts: str | None) -> None:
        call_id, name = item.get("call_id"), item.get("name")
        if not isinstance(call_id, str) or not call_id or not isinstance(name, str) or not name:
            raise Refused(f"line {number}: a {item['type']} without a call_id or a name")
        members: dict[str, Any] = {"callId": call_id, "callIdSource": "native", "name": name,
                                   "requestedBy": "model"}  # a response item of the model (ASR-274)
        if item["type"] == "function_call":
            arguments = item.get("arguments")
            if isinstance(arguments, str):
                parsed, value = parse_arguments(arguments)
                if parsed:
                    members["input"] = value
                else:  # ASR-254: kept whole, as text
                    members["inputText"] = arguments
            elif isinstance(arguments, (dict, list)):  # already JSON rather than JSON text
                if fits(arguments):
                    members["input"] = arguments
                else:
                    members["inputText"] = json.dumps(arguments, ensure_ascii=False)
            elif arguments is not None:
                raise Refused(f"line {number}: function_call arguments are neither text nor JSON")
        else:
            text = item.get("input")
            if isinstance(text, str):
                members["inputText"] = text  # free-form input, never parsed
            elif text is not None:
                raise Refused(f"line {number}: custom_tool_call input is not text")
        self.emit("tool_call", ts, **members)

    def linkage(self, call_id: str) -> dict[str, Any]:
        if self.call_counts[call_id] > 1:  # ASR-262: the ID cannot show which call
            return {"linkage": "ambiguous", "nativeCallId": call_id}
        return {"callId": call_id, "linkage": "exact"}

    def tool_output(self, number: int, item: dict[str, Any], ts: str | None) -> None:
        call_id = item.get("call_id")
        if not isinstance(call_id, str) or not call_id:
            raise Refused(f"line {number}: a {item['type']} without a call_id")
        output = item.get("output")
        texts = output_texts(output)
        if texts is None:
            raise Refused(f"line {number}: {item['type']} output is neither text nor a list of content items")
        if isinstance(output, list) and len(texts) != len(output):
            self.lossy.add("content.image")
        members = self.linkage(call_id)
        outcome = self.outcomes.get(call_id)
        members["status"] = self.status(output, outcome[1] if outcome else None)
        members["content"] = [{"type": "text", "text": t} for t in texts]
        if outcome is not None:
            self.outcome(outcome[1], members)
        self.emit("tool_result", ts, **members)

    def status(self, output: Any, event: dict[str, Any] | None) -> str:
        """The outcome the source records (ASR-258); an output alone records none."""
        if event is not None:
            word = _string(event, "status")
            if word is not None:
                return STATUS_WORDS.get(word, "unknown")
            if isinstance(event.get("success"), bool):
                return "completed" if event["success"] else "failed"
            result = event.get("result")
            if isinstance(result, dict) and ("Ok" in result or "Err" in result):
                ok = result.get("Ok")
                failed = "Err" in result or (isinstance(ok, dict) and ok.get("isError") is True)
                return "failed" if failed else "completed"
        if isinstance(output, dict) and isinstance(output.get("success"), bool):
            return "completed" if output["success"] else "failed"
        return "unknown"

    def outcome(self, event: dict[str, Any], members: dict[str, Any]) -> None:
        """What an exec_command_end records about the process (ASR-260, 261, 267)."""
        if event.get("type") != "exec_command_end":
            return
        exec_: dict[str, Any] = {}
        command = event.get("command")
        if isinstance(command, str) or (isinstance(command, list) and all(isinstance(c, str) for c in command)):
            exec_["command"] = command
        if _string(event, "cwd"):
            exec_["cwd"] = self.path_ref(event["cwd"])
        code = _int(event.get("exit_code"))
        if code is not None:
            if EXIT_CODE_RANGE[0] <= code <= EXIT_CODE_RANGE[1]:
                exec_["exitCode"] = code
            else:
                self.lossy.add("exec.exitCode")
        for native, member in (("stdout", "stdout"), ("stderr", "stderr")):
            if isinstance(event.get(native), str):
                exec_[member] = event[native]
        if "stdout" not in exec_ and "stderr" not in exec_ and isinstance(event.get("aggregated_output"), str):
            exec_["output"] = event["aggregated_output"]
        if exec_:
            members["exec"] = exec_
        took = duration_ms(event.get("duration"))
        if took is not None:
            members["durationMs"] = took

    def event(self, number: int, event: dict[str, Any], ts: str | None) -> None:
        kind = event.get("type")
        if not isinstance(kind, str):
            raise Refused(f"line {number}: an event_msg without a type")
        if kind == "task_started":
            self.state(event, ts, "running")
        elif kind == "task_complete":
            self.state(event, ts, "idle")
        elif kind == "turn_aborted":
            self.state(event, ts, "idle", _string(event, "reason"))
        elif kind in ("user_message", "agent_message"):
            self.event_message(number, event, ts)
        elif kind in ("exec_command_end", "patch_apply_end", "mcp_tool_call_end"):
            self.unanswered_outcome(number, event, ts)
        elif kind == "context_compacted":
            self.lossy.add("compaction")
        elif kind in ("agent_reasoning", "agent_reasoning_raw_content"):
            self.lossy.add("reasoning")
        elif kind == "token_count":
            self.lossy.add("inference")
        elif kind not in COPIES:
            self.lossy.add(f"codex.{kind}")

    def state(self, event: dict[str, Any], ts: str | None, state: str, reason: str | None = None) -> None:
        """Turn transitions the source records (ASR-169), with its own turn ID."""
        members: dict[str, Any] = {}
        if _string(event, "turn_id"):
            members["turnId"] = event["turn_id"]
        members["state"] = state
        if reason is not None:
            members["stopReason"] = reason
        self.emit("state", ts, **members)

    def event_message(self, number: int, event: dict[str, Any], ts: str | None) -> None:
        """A message event is the UI's copy of a response item; kept only when the item is missing."""
        text = event.get("message")
        if not isinstance(text, str):
            return  # an event without text holds nothing to keep
        role = "user" if event["type"] == "user_message" else "assistant"
        if text not in self.item_texts[role]:
            self.emit("message", ts, role=role, content=[{"type": "text", "text": text}])

    def unanswered_outcome(self, number: int, event: dict[str, Any], ts: str | None) -> None:
        """An outcome event whose call has no output item still records a result."""
        call_id = event.get("call_id")
        if not isinstance(call_id, str) or not call_id:
            raise Refused(f"line {number}: a {event['type']} event without a call_id")
        code = event.get("exit_code")
        if code is not None and _int(code) is None:
            raise Refused(f"line {number}: exit_code {code!r} is not an integer")
        if call_id in self.outputs or self.outcomes.get(call_id, (None,))[0] != number:
            return
        members = self.linkage(call_id)
        members["status"] = self.status(None, event)
        members["capture"] = {"content": {"state": "absent"}}  # the event does not say what the model saw
        self.outcome(event, members)
        self.emit("tool_result", ts, **members)


def convert(data: bytes) -> bytes:
    """The whole conversion: rollout bytes in, stream bytes out (or Refused)."""
    return encode_stream(RolloutConverter(read_lines(data), hashlib.sha256(data).hexdigest()).run(), "rollout")


SHELL = Shell(NAME, VERSION, "ROLLOUT.jsonl", convert)
main = SHELL.main


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
