"""Gemini CLI sessions (``~/.gemini/tmp/<project hash>/chats/session-*.jsonl`` and ``.json``), valid by construction.

``transcripts(feature, variant)`` builds small sessions that hold the named adversarial feature,
for fuzzing converters that turn Gemini sessions into ASR streams. Two variants (``VARIANTS``):

- ``jsonl``: a metadata line (``sessionId``, ``projectHash``, ``startTime``, ``lastUpdated``,
  ``kind``), then each message appended again whole under its ``id`` whenever it changes (its
  tokens come in, its tool calls are scheduled and finish), ``{"$set": ...}`` metadata updates
  after each message, ``$set`` checkpoints holding ``messages``, and ``{"$rewindTo": id}``;
- ``json``: the one pretty-printed object of earlier releases, holding the final messages only.

Messages are ``user``, ``gemini`` (text, ``thoughts``, ``tokens``, ``model``, ``toolCalls``),
``info``, ``error`` and ``warning``. Tool calls carry ``id`` (``<name>-<epoch ms>-<hex>``),
``name``, ``args``, ``status``, ``result`` (``functionResponse`` parts, or ``null``),
``timestamp``, ``displayName``, ``description`` and ``renderOutputAsMarkdown``. Numbers in
``args`` are written as JavaScript writes a double: integers past 2**53 keep their digits
rounded, past 1e21 they turn to exponent form.

The json variant is drawn only when asked for (``DEFAULT_VARIANTS``): Gemini CLI rewrites such a
file as JSON Lines when it resumes it, so it is fuzzed only for converters whose inputs hold one.
Each transcript's ``features`` names what it actually holds. ``variant_of`` tells the variant of
any session's bytes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from asr_conformance.generators.native.common import (
    Clock,
    NativeTranscript,
    awkward_text,
    clock,
    code_text,
    dumps,
    error_message,
    feature_names,
    file_path,
    project_path,
    prompt_text,
    reply_text,
    sentence,
    shell_command,
    tool_output,
    unicode_text,
    words,
)

#: The witness's format name (``producer.source.format``).
FORMAT = "gemini-cli-session"

VARIANTS: dict[str, str] = {
    "jsonl": "Gemini CLI session as JSON Lines (since April 2026): metadata line, re-recorded messages, $set, $rewindTo",
    "json": "Gemini CLI session as one pretty-printed object with a messages array (earlier releases)",
}
DEFAULT_VARIANTS = ("jsonl",)

FEATURES: dict[str, str] = {
    "plain": "user and model messages only, with info, warning and error notices between them",
    "calls": "tool calls that succeed (read_file, run_shell_command, glob, list_directory, ...)",
    "parallel": "several tool calls in one model message, finishing in another order",
    "failed": "calls with status error and an error response",
    "cancelled": "calls with status cancelled ([Operation Cancelled] responses)",
    "null-results": "finished calls whose result is null (nothing of what reached the model is recorded)",
    "awaiting-approval": "calls left validating, scheduled, awaiting approval or executing: no result yet",
    "re-recorded": "a model message recorded again as it changes (text, tokens, calls executing then done)",
    "rewinds": "a $rewindTo that drops a message and everything after it, then a new prompt",
    "set": "$set records: lastUpdated after each message, a summary, workspace directories",
    "checkpoint": "a $set holding messages that replaces the conversation (tool outputs masked)",
    "subagents": "a call that delegates to a subagent (agentId), or the subagent's own session (kind subagent)",
    "unicode": "text with combining marks, NUL, line and paragraph separators, emoji, odd spacing",
    "huge-integers": "tool arguments with integers past 2**53, written as JavaScript writes them",
    "exit-code-in-text": "a shell call whose output text says 'Exit Code: N' (Gemini records no exit code)",
    "injected": "user messages Gemini injects or treats as commands (<session_context>, /stats)",
}
MIXED = "mixed"

_JSONL_ONLY = frozenset({"re-recorded", "rewinds", "set", "checkpoint"})
AVAILABLE: dict[str, frozenset[str]] = {
    "jsonl": frozenset(FEATURES),
    "json": frozenset(FEATURES) - _JSONL_ONLY,
}
_MIXABLE = tuple(f for f in feature_names(FEATURES) if f != "plain")
_MODELS = ("gemini-2.5-pro", "gemini-2.5-flash", "gemini-3-pro-preview", "gemini-3-flash-preview")
_PENDING = ("validating", "scheduled", "awaiting_approval", "executing")
_SCRAMBLE = 0x9E3779B97F4A7C15F39CC0605CEDC835


def available(feature: str, variant: str) -> bool:
    """Whether a session of this variant can hold the feature ("mixed" is available everywhere)."""
    _check(feature, variant)
    return feature == MIXED or feature in AVAILABLE[variant]


def _check(feature: str, variant: str | None) -> None:
    if feature != MIXED and feature not in FEATURES:
        raise ValueError(f"unknown Gemini CLI feature {feature!r}; known: {', '.join(feature_names(FEATURES))}, {MIXED}")
    if variant is not None and variant not in VARIANTS:
        raise ValueError(f"unknown Gemini CLI variant {variant!r}; known: {', '.join(VARIANTS)}")


def transcripts(feature: str = MIXED, variant: str | None = None) -> st.SearchStrategy[NativeTranscript]:
    """Sessions that hold ``feature``, of ``variant`` (None: the default variants where the feature is available).

    Raises ValueError for an unknown feature or variant, or a feature the variant cannot hold."""
    _check(feature, variant)
    if variant is not None:
        if not available(feature, variant):
            where = ", ".join(v for v in VARIANTS if available(feature, v))
            raise ValueError(f"a {variant} session cannot hold {feature!r} (available in: {where})")
        variants: tuple[str, ...] = (variant,)
    else:
        variants = tuple(v for v in DEFAULT_VARIANTS if available(feature, v))
    return st.sampled_from(variants).flatmap(lambda v: _sessions(feature, v))


def variant_of(data: bytes) -> str | None:
    """``json`` for the one-object layout, ``jsonl`` for JSON Lines, None when it is no Gemini session."""
    head = data[:1 << 16].lstrip()
    first = head.split(b"\n", 1)[0].strip()
    if first == b"{":
        return "json" if b'"sessionId"' in head[:4096] else None
    try:
        value = json.loads(first)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict) or not isinstance(value.get("sessionId"), str) \
            or not isinstance(value.get("projectHash"), str):
        return None
    return "json" if isinstance(value.get("messages"), list) and b"\n" not in head.rstrip() else "jsonl"


# --- text ----------------------------------------------------------------------------------------

_prose = st.lists(words, min_size=1, max_size=7).map(" ".join)
_separated = st.lists(st.sampled_from(["\u2028", "\u2029", "\x85", "\x00", "\ufeff", "\r\n", "e\u0301", "🦀"])
                      | _prose, min_size=2, max_size=4).map("".join)
#: Text as people, the model and tools write it (``common``: sentences of real words, code, paths, commands,
#: errors, outputs of a few lines or, now and then, past a MiB), each for its place in a session.
_PROMPT, _REPLY, _CODE, _ERROR = prompt_text(), reply_text(), code_text(), error_message()
#: A tool's output: Gemini records the whole output in the call, and a JSON Lines session may record a message
#: again as it changes, so the longest output stays just past a MiB.
_OUTPUT = tool_output(1_150_000)
#: What a call, a todo or a thought says it does: one short sentence.
_DESCRIBED = sentence(8)
_COMMANDS = st.sampled_from(["pytest -q", "make check", "cargo test", "false"]) | shell_command()
_odd_text = st.one_of(awkward_text, unicode_text, _separated)
#: Odd text that always holds something past ASCII (or a NUL) and is never blank.
_unicode_text = st.tuples(_odd_text, st.sampled_from(["é", "🦀", "\u2028", "e\u0301", "\x00", "漢字", "\u200b"])).map(
    lambda pair: ("" if pair[0].strip() else "x") + pair[0] + pair[1])


def _hex(draw: st.DrawFn, digits: int) -> str:
    """Hex digits that look random from a small draw (large draws make Hypothesis's smallest example large)."""
    return f"{(draw(st.integers(0, 2**20)) + 1) * _SCRAMBLE % 16**digits:0{digits}x}"


def _uuid(draw: st.DrawFn, wide: bool = False) -> str:
    """A version-4 UUID; ``wide`` draws it from all of them (a session ID must not come from a list one could keep)."""
    text = f"{draw(st.integers(0, 16**32 - 1)):032x}" if wide else _hex(draw, 32)
    return f"{text[:8]}-{text[8:12]}-4{text[13:16]}-{'89ab'[int(text[16], 16) % 4]}{text[17:20]}-{text[20:32]}"


def _bump(value: str, extra: int) -> str:
    """Another ID of the same shape: its last hex digits moved by ``extra``."""
    head, tail = value[:-6], value[-6:]
    return head + f"{(int(tail, 16) + extra * 0x9E3779) % 16**6:06x}"


def _js_number(value: int) -> str:
    """An integer as JavaScript's JSON.stringify writes the double nearest to it."""
    double = float(value)
    if abs(double) < 1e21:
        return str(int(double))
    mantissa, exponent = repr(double).split("e")
    return f"{mantissa}e{'+' if not exponent.startswith('-') else ''}{int(exponent)}"


class _Raw(str):
    """JSON text placed as is (a number in JavaScript's spelling)."""


def _encode(value: Any, indent: int | None = None) -> str:
    """JSON as Gemini CLI writes it (compact lines, or two-space indents), with raw numbers kept."""
    marks: dict[str, str] = {}

    def swap(item: Any) -> Any:
        if isinstance(item, _Raw):
            key = f"\ue000raw{len(marks)}\ue001"
            marks[key] = str(item)
            return key
        if isinstance(item, dict):
            return {k: swap(v) for k, v in item.items()}
        if isinstance(item, list):
            return [swap(v) for v in item]
        return item

    text = json.dumps(swap(value), ensure_ascii=False, indent=indent) if indent else dumps(swap(value))
    for key, raw in marks.items():
        text = text.replace(json.dumps(key, ensure_ascii=False), raw)
    return text


# --- the session being built ---------------------------------------------------------------------


class _Session:
    """A session under construction: its records, its live messages, its clock and the features it holds."""

    def __init__(self, draw: st.DrawFn, variant: str, odd: bool) -> None:
        self.draw, self.variant, self.odd = draw, variant, odd
        self.clock: Clock = clock(draw)
        self.values: list[Any] = []
        self.live: dict[str, dict[str, Any]] = {}
        self.present: set[str] = set()
        self.ids: set[str] = set()
        self.model = draw(st.sampled_from(_MODELS))
        self.sets = False
        self.has_calls = False
        self.meta: dict[str, Any] = {}

    @property
    def jsonl(self) -> bool:
        return self.variant == "jsonl"

    def tick(self, most_ms: int = 4000) -> str:
        return self.clock.tick(self.draw, most_ms)

    def fresh(self, make: Callable[[], str]) -> str:
        """A new ID: drawn once, then made unique without drawing again (shrinking draws the same value)."""
        value, extra = make(), 0
        while value in self.ids:
            extra += 1
            value = _bump(value, extra)
        self.ids.add(value)
        return value

    def text(self, kind: st.SearchStrategy[str] = _REPLY) -> str:
        """Text of ``kind`` (a model's reply unless told), or in one draw of six odd Unicode text."""
        if self.odd or self.draw(st.integers(0, 5)) == 5:
            self.present.add("unicode")
            return self.draw(_unicode_text)
        return self.draw(kind)

    def maybe_text(self) -> str:
        """A model message's text, or none (a message that only calls tools)."""
        return self.text() if self.draw(st.booleans()) else ""

    # -- records --

    def metadata(self, subagent: bool) -> None:
        draw = self.draw
        started = self.clock.stamp()
        self.meta = {"sessionId": _uuid(draw, wide=True), "projectHash": f"{draw(st.integers(0, 16**64 - 1)):064x}", "startTime": started,
                     "lastUpdated": started}
        if subagent:
            self.meta["kind"] = "subagent"
            self.meta["directories"] = [project_path(draw)]
            self.present.add("subagents")
        elif draw(st.booleans()):
            self.meta["kind"] = "main"
        if self.jsonl:
            self.values.append(dict(self.meta))

    def record(self, message: dict[str, Any]) -> None:
        """A message's current state: appended again whole (jsonl); the final state is what json keeps."""
        copy = json.loads(json.dumps(message))  # the record as written now, untouched by later changes
        copy = _restore_raw(copy, message)
        self.live[message["id"]] = copy
        if self.jsonl:
            self.values.append(copy)
            if self.sets:
                self.values.append({"$set": {"lastUpdated": self.tick(3)}})

    def set(self, updates: dict[str, Any]) -> None:
        if self.jsonl:
            self.values.append({"$set": updates})
            self.present.add("set")

    def message(self, kind: str, content: Any, **members: Any) -> dict[str, Any]:
        message = {"id": self.fresh(lambda: _uuid(self.draw)), "timestamp": self.tick(), "type": kind,
                   "content": content, **members}
        self.record(message)
        return message

    def user(self, text: str | None = None) -> dict[str, Any]:
        """A prompt: a list of parts, or (as older sessions wrote it) a plain string."""
        text = self.text(_PROMPT) if text is None else text
        return self.message("user", text if self.draw(st.integers(0, 3)) == 3 else [{"text": text}])

    def notice(self) -> None:
        kind = self.draw(st.sampled_from(["info", "warning", "error"]))
        text = {"info": "Request cancelled.", "warning": "Skipping unreadable file: .env",
                "error": "[API Error: You exceeded your current quota (RESOURCE_EXHAUSTED)]"}[kind]
        self.message(kind, text)

    def gemini(self, text: str = "", calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """A model message; with re-recording, it is first written without tokens, then again with them."""
        draw = self.draw
        members: dict[str, Any] = {}
        if draw(st.booleans()):
            members["thoughts"] = [{"subject": draw(_prose).capitalize(), "description": draw(_DESCRIBED),
                                    "timestamp": self.clock.stamp()}]
        members["tokens"] = None
        members["model"] = self.model
        message = self.message("gemini", text, **members)
        tokens = draw(st.integers(1000, 200_000))
        message["tokens"] = {"input": tokens, "output": tokens // 40, "cached": tokens // 2, "thoughts": 0,
                             "tool": 0, "total": tokens + tokens // 40}
        if self.jsonl and draw(st.booleans()):
            self.record(message)
        for call in calls or ():
            self.add_call(message, call)
        return message

    def add_call(self, message: dict[str, Any], call: dict[str, Any]) -> None:
        message.setdefault("toolCalls", []).append(call)
        self.record(message)
        self.has_calls = True

    # -- calls --

    def call(self, name: str, args: dict[str, Any], status: str = "success", output: str | None = None,
             result: Any = "default", **members: Any) -> dict[str, Any]:
        stamp = self.tick(20_000)
        call_id = self.fresh(lambda: f"{name}-{self.clock.now.timestamp() * 1000:.0f}-{_hex(self.draw, 8)}")
        if status in _PENDING:
            result = None  # no output drawn: text drawn here would never reach the file
        if result == "default":
            key = "output" if status == "success" else "error"
            text = output if output is not None else self.output_for(name, status)
            result = [{"functionResponse": {"id": call_id, "name": name, "response": {key: text}}}]
        call = {"id": call_id, "name": name, "args": args, "result": result, "status": status, "timestamp": stamp,
                **members, "displayName": _DISPLAY.get(name, name), "description": self.draw(_DESCRIBED),
                "renderOutputAsMarkdown": name != "run_shell_command"}
        if status in _PENDING:
            call["result"] = None
        return call

    def output_for(self, name: str, status: str) -> str:
        draw = self.draw
        if status == "cancelled":
            reason = draw(st.sampled_from(["User did not allow tool call", "User cancelled the operation"]))
            return f"[Operation Cancelled] Reason: {reason}"
        if status == "error":
            return draw(st.sampled_from([f"File not found: /{draw(words)}/{draw(words)}.py",
                                         f"Tool \"{name}\" not found in registry.",
                                         "params/absolute_path must be absolute"])) + " " + self.text(_ERROR)
        return self.text(_OUTPUT) + "\n"

    def any_call(self, status: str = "success", result: Any = "default") -> dict[str, Any]:
        draw = self.draw
        root = project_path(draw)
        kind = draw(st.sampled_from(["read_file", "run_shell_command", "glob", "list_directory", "search_file_content",
                                     "replace", "write_todos", "google_web_search"]))
        makers: dict[str, Callable[[], dict[str, Any]]] = {
            "read_file": lambda: {"absolute_path": f"{root}/{draw(file_path())}"},
            "run_shell_command": lambda: {"command": draw(_COMMANDS), "description": draw(_DESCRIBED)},
            "glob": lambda: {"pattern": f"src/**/*.{draw(st.sampled_from(['ts', 'py', 'go']))}"},
            "list_directory": lambda: {"dir_path": root},
            "search_file_content": lambda: {"pattern": draw(words), "path": "src"},
            "replace": lambda: {"file_path": f"{root}/{draw(file_path())}", "old_string": self.text(_CODE),
                                "new_string": self.text(_CODE), "instruction": draw(_DESCRIBED)},
            "write_todos": lambda: {"todos": [{"description": draw(_DESCRIBED), "status": draw(st.sampled_from(
                ["pending", "in_progress", "completed"]))} for _ in range(draw(st.integers(1, 3)))]},
            "google_web_search": lambda: {"query": self.text(_DESCRIBED)},
        }
        args = makers[kind]()
        return self.call(kind, args, status, result=result)

    def shell(self, code: int) -> dict[str, Any]:
        """run_shell_command: its output text says the exit code; the record holds no number."""
        draw = self.draw
        command = draw(_COMMANDS)
        out = self.text(_OUTPUT)
        text = (f"Command: {command}\nDirectory: (root)\nOutput: {out}\nError: (none)\nExit Code: {code}\n"
                f"Signal: (none)\nBackground PIDs: (none)\nProcess Group PGID: {draw(st.integers(100, 99999))}")
        self.present.add("exit-code-in-text")
        return self.call("run_shell_command", {"command": command, "description": draw(_DESCRIBED)}, output=text)

    # -- segments: each one model turn or more --

    def turn_with(self, calls: list[dict[str, Any]], parallel: bool = False) -> None:
        self.user()
        if parallel:
            self.gemini(self.maybe_text(), calls)
        else:
            for call in calls:
                self.gemini(self.maybe_text(), [call])
        self.gemini(self.text())

    def seg_calls(self) -> None:
        self.turn_with([self.any_call() for _ in range(self.draw(st.integers(1, 2)))])
        self.present.add("calls")

    def seg_parallel(self) -> None:
        calls = [self.any_call(self.draw(st.sampled_from(["success", "success", "error"])) if n else "success")
                 for n in range(self.draw(st.integers(2, 4)))]
        order = self.draw(st.permutations(range(len(calls))))
        self.user()
        message = self.gemini(self.maybe_text())
        for index in order:  # recorded as each finishes, each with its own time
            self.add_call(message, calls[index])
        self.gemini(self.text())
        self.present.update({"parallel", "calls"})

    def seg_failed(self) -> None:
        self.turn_with([self.any_call("error")])
        self.present.add("failed")

    def seg_cancelled(self) -> None:
        self.turn_with([self.any_call("cancelled")])
        if self.draw(st.booleans()):
            self.notice()
        self.present.add("cancelled")

    def seg_null_results(self) -> None:
        call = self.any_call(self.draw(st.sampled_from(["success", "error", "cancelled"])), result=None)
        self.turn_with([call])
        self.present.add("null-results")

    def seg_awaiting_approval(self) -> None:
        """Pending calls; the file ends soon after (the process was stopped while they waited or ran)."""
        self.user()
        # One call always awaits approval (the feature's name; a converter's approval handling is under test),
        # the other, when drawn, may be in any pending state.
        statuses = ["awaiting_approval", *(self.draw(st.sampled_from(_PENDING)) for _ in range(self.draw(st.integers(0, 1))))]
        calls = [self.any_call(status) for status in statuses]
        self.gemini(self.text(), calls)
        self.present.add("awaiting-approval")

    def seg_re_recorded(self) -> None:
        """Text streamed in, tokens added, a call recorded executing and again when it is done."""
        draw = self.draw
        self.user()
        message = self.gemini("")
        message["content"] = self.text()
        self.record(message)
        done = self.any_call()
        running = {**done, "status": draw(st.sampled_from(["executing", "scheduled"])), "result": None}
        self.add_call(message, running)
        message["toolCalls"][-1] = done
        self.record(message)
        self.gemini(self.text())
        self.present.add("re-recorded")

    def seg_rewinds(self) -> None:
        """A turn, then a rewind to its prompt (or its answer), then another prompt."""
        draw = self.draw
        if not self.live:
            self.user()
            self.gemini(self.text())
        prompt = self.user()
        answer = self.gemini(self.text(), [self.any_call()] if draw(st.booleans()) else None)
        target = prompt if draw(st.booleans()) else answer
        if draw(st.integers(0, 7)) == 0:
            self.values.append({"$rewindTo": self.fresh(lambda: _uuid(draw))})  # unknown: Gemini clears everything
            self.live.clear()
        else:
            self.values.append({"$rewindTo": target["id"]})
            ids = list(self.live)
            for gone in ids[ids.index(target["id"]):]:
                del self.live[gone]
        self.user()
        self.gemini(self.text())
        self.present.add("rewinds")

    def seg_set(self) -> None:
        draw = self.draw
        self.sets = True
        self.user()
        self.gemini(self.text())
        self.set({"summary": draw(_DESCRIBED)})
        if draw(st.booleans()):
            self.set({"directories": [project_path(draw)]})
        if draw(st.booleans()):
            self.set({"sessionId": self.meta["sessionId"]})  # a resumed session writes its ID again

    def seg_checkpoint(self) -> None:
        self.seg_calls()
        messages = []
        for message in self.live.values():
            copy = _restore_raw(json.loads(json.dumps(message)), message)
            for call in copy.get("toolCalls") or ():
                if isinstance(call.get("result"), list) and self.draw(st.booleans()):
                    call["result"] = [{"functionResponse": {"id": call["id"], "name": call["name"], "response": {
                        "output": f"<tool_output_masked: {self.draw(st.integers(10, 9999))} bytes>"}}}]
            messages.append(copy)
        self.values.append({"$set": {"lastUpdated": self.tick(50), "messages": messages}})
        self.live = {m["id"]: m for m in messages}
        self.user()
        self.gemini(self.text())
        self.present.add("checkpoint")

    def seg_subagents(self) -> None:
        draw = self.draw
        agent = draw(st.sampled_from(["codebase_investigator", "generalist", "cli_help"]))
        call = self.call(agent, {"objective": draw(_DESCRIBED)}, output=f"Subagent {agent} finished.\n" + self.text(),
                         agentId=_uuid(draw))
        self.turn_with([call])
        self.present.update({"subagents", "calls"})

    def seg_unicode(self) -> None:
        self.odd = True
        self.user()
        self.gemini(self.text())
        self.present.add("unicode")

    def seg_huge_integers(self) -> None:
        draw = self.draw
        values = [draw(st.integers(2**53 + 1, 2**64)), -draw(st.integers(2**53 + 1, 2**70)),
                  draw(st.integers(10**21, 10**30))]
        args = {"account": _Raw(_js_number(values[0])), "delta": _Raw(_js_number(values[1])),
                "nested": {"ids": [_Raw(_js_number(values[2])), 7]}, "memo": self.text()}
        call = self.call("mcp_ledger_post_entry", args)
        self.turn_with([call])
        self.present.update({"huge-integers", "calls"})

    def seg_exit_code_in_text(self) -> None:
        self.turn_with([self.shell(self.draw(st.sampled_from([0, 1, 2, 127])))])
        self.present.add("calls")

    def seg_injected(self) -> None:
        draw = self.draw
        self.user(f"<session_context>\nWorkspace: {project_path(draw)}\nDate: today\n</session_context>")
        self.user(draw(st.sampled_from(["/stats", "/memory show", "?"])))
        self.present.add("injected")

    def plain(self) -> None:
        self.user()
        if self.draw(st.integers(0, 2)) == 0:
            self.notice()
        self.gemini(self.text())

    # -- the file --

    def lines(self) -> tuple[str, ...]:
        if self.jsonl:
            return tuple(_encode(v) for v in self.values)
        document = {**self.meta, "lastUpdated": self.clock.stamp(), "messages": list(self.live.values())}
        return tuple(_encode(document, indent=2).split("\n"))


def _restore_raw(copy: Any, original: Any) -> Any:
    """Put raw numbers back into a JSON round-trip copy (json.dumps wrote them as strings)."""
    if isinstance(original, _Raw):
        return original
    if isinstance(original, dict) and isinstance(copy, dict):
        return {k: _restore_raw(copy[k], original[k]) for k in original}
    if isinstance(original, list) and isinstance(copy, list):
        return [_restore_raw(c, o) for c, o in zip(copy, original, strict=True)]
    return copy


_DISPLAY = {"read_file": "ReadFile", "run_shell_command": "Shell", "glob": "FindFiles", "list_directory": "ReadFolder",
            "search_file_content": "SearchText", "replace": "Edit", "write_todos": "WriteTodos",
            "google_web_search": "GoogleSearch", "codebase_investigator": "Codebase Investigator Agent"}

SEGMENTS = {name: getattr(_Session, "seg_" + name.replace("-", "_")) for name in FEATURES if name != "plain"}


@st.composite
def _sessions(draw: st.DrawFn, feature: str, variant: str) -> NativeTranscript:
    if feature == MIXED:
        mixable = [f for f in _MIXABLE if f in AVAILABLE[variant]]
        wanted = draw(st.lists(st.sampled_from(mixable), min_size=2, max_size=3, unique=True))
    else:
        wanted = [feature]
    # The pending calls end the file; the subagent feature may be the subagent's own file.
    wanted.sort(key=lambda f: f == "awaiting-approval")
    subagent_file = "subagents" in wanted and draw(st.booleans())
    session = _Session(draw, variant, odd=False)
    session.metadata(subagent=subagent_file)
    if draw(st.booleans()):
        session.plain()
    for name in wanted:
        if name == "plain":
            session.plain()
        elif name == "subagents" and subagent_file:
            session.seg_calls()
        else:
            SEGMENTS[name](session)
    if "awaiting-approval" not in wanted and draw(st.booleans()):
        session.plain()
    present = set(session.present)
    if not session.has_calls:
        present.add("plain")
    return NativeTranscript(FORMAT, variant, session.lines(), frozenset(present & set(FEATURES)))


__all__ = ["AVAILABLE", "DEFAULT_VARIANTS", "FEATURES", "FORMAT", "MIXED", "VARIANTS", "available", "transcripts",
           "variant_of"]
