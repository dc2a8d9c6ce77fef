"""Codex CLI and Desktop rollouts (``~/.codex/sessions/.../rollout-*.jsonl``), valid by construction.

``transcripts(feature, variant)`` builds small rollouts (a few to ~30 lines) that hold the named
adversarial feature, for fuzzing converters that turn rollouts into ASR streams. A rollout is
JSON Lines: ``{"timestamp", "type", "payload"}`` with ``session_meta``, ``turn_context``,
``response_item`` (messages, ``function_call``/``custom_tool_call`` and their outputs, reasoning,
web search), ``event_msg`` (``task_started``, ``user_message``, ``exec_command_end``,
``patch_apply_end``, ``mcp_tool_call_end``, ``turn_aborted``, ...) and ``compacted`` lines.

Four variants (``VARIANTS``): ``cli`` and ``desktop`` record exit codes as numbers in
``exec_command_end`` events; ``old`` rollouts (late 2025) record none, so "Exit code: N" exists
only inside output text, which a faithful converter must not parse (ASR-260); ``legacy`` rollouts
predate the envelope (a bare header, ``record_type`` markers, bare response items). Each
transcript's ``features`` names what it actually holds, so a test can demand that the stream
keeps it. Nothing here reads a rollout back except ``variant_of``, which tells the variant of
any rollout's bytes (a vendor's own inputs included) so that the legacy variant is fuzzed only
for converters that meet it.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import strategies as st

from asr_conformance.generators.native.common import (
    Clock,
    NativeTranscript,
    awkward_text,
    clock,
    dumps,
    feature_names,
    project_path,
    prompt_text,
    reply_text,
    tool_output,
    unicode_text,
    words,
)

#: The witness's format name (``producer.source.format``).
FORMAT = "codex-rollout-jsonl"

VARIANTS: dict[str, str] = {
    "cli": "Codex CLI rollout (envelope lines, turn IDs, exec_command_end events record exit codes as numbers)",
    "desktop": "Codex Desktop / IDE rollout (as cli, originator 'Codex Desktop', source vscode, macOS or Windows paths)",
    "old": "envelope rollout from before exec_command_end and turn IDs were written: exit codes only as text in outputs",
    "legacy": "pre-envelope rollout (mid 2025): a bare header line, record_type markers and bare response items",
}
#: Variants drawn when none is asked for; legacy only when asked for explicitly.
DEFAULT_VARIANTS = ("cli", "desktop", "old")

FEATURES: dict[str, str] = {
    "plain": "messages only: typed user messages (with their user_message events), injected context, assistant replies",
    "calls": "function calls answered by outputs (plan updates, MCP tools, images, shell commands, "
             "request_user_input questions answered or cancelled)",
    "exit-codes": "shell commands whose exec_command_end records a numeric exit_code (and status)",
    "exit-code-in-text": "an output holding 'Exit code: N', 'Process exited with code N' or metadata.exit_code as text, "
                         "with no exec_command_end for its call: no exec.exitCode may come of it (ASR-260)",
    "custom-tools": "custom_tool_call apply_patch with free-form patch input (never parsed) and its output",
    "parallel": "several calls in a row, their events and outputs in another order",
    "duplicate-ids": "two calls that share one native call ID (call_...), each answered",
    "dangling": "a call that never gets an output or an outcome event",
    "interrupted": "a turn aborted (turn_aborted, reason interrupted) with its call still pending",
    "orphans": "an output whose call ID no call in the rollout has",
    "errors": "recorded failures: non-zero exit codes with status failed, failed patches, MCP errors, success false",
    "empty-output": "an output that is the empty string",
    "arguments": "arguments that are not JSON, hold integers past 2**64, deep nesting, non-objects or odd unicode",
    "compaction": "a compacted line (summary, replacement history) and its context_compacted event",
    "web-search": "web_search_call items (no call ID or tool name) and their web_search_end events",
    "turns": "several turns, each with its own turn_context (model, effort, approval policy); "
             "in cli and desktop rollouts maybe a last turn a Stop hook started (<hook_prompt>)",
}
#: Asking for "mixed" draws several features available in the variant.
MIXED = "mixed"

_EVERYWHERE = frozenset({"plain", "calls", "exit-code-in-text", "parallel", "duplicate-ids", "dangling", "orphans",
                         "empty-output", "arguments"})
#: Which features each variant can hold: exit codes need exec_command_end (cli, desktop); a recorded
#: failure needs an outcome event or the early {content, success} output (legacy); turns, aborts,
#: compaction and web search need the envelope; apply_patch as a custom tool came after legacy rollouts.
AVAILABLE: dict[str, frozenset[str]] = {
    "cli": frozenset(FEATURES),
    "desktop": frozenset(FEATURES),
    "old": _EVERYWHERE | {"custom-tools", "interrupted", "compaction", "web-search", "turns"},
    "legacy": _EVERYWHERE | {"errors"},
}

#: When old and legacy rollouts were written (cli and desktop ones use the shared clock).
ERAS = {"legacy": datetime(2025, 5, 1, tzinfo=UTC), "old": datetime(2025, 8, 20, tzinfo=UTC)}
ALNUM = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
#: Features a "mixed" rollout draws from (plain is the absence of calls, so it is never mixed in).
_MIXABLE = tuple(f for f in feature_names(FEATURES) if f != "plain")


def available(feature: str, variant: str) -> bool:
    """Whether a rollout of this variant can hold the feature ("mixed" is available everywhere)."""
    _check(feature, variant)
    return feature == MIXED or feature in AVAILABLE[variant]


def _check(feature: str, variant: str | None) -> None:
    if feature != MIXED and feature not in FEATURES:
        raise ValueError(f"unknown Codex feature {feature!r}; known: {', '.join(feature_names(FEATURES))}, {MIXED}")
    if variant is not None and variant not in VARIANTS:
        raise ValueError(f"unknown Codex variant {variant!r}; known: {', '.join(VARIANTS)}")


def transcripts(feature: str = MIXED, variant: str | None = None) -> st.SearchStrategy[NativeTranscript]:
    """Rollouts that hold ``feature``, of ``variant`` (None: cli, desktop or old, wherever the feature is available).

    Raises ValueError for an unknown feature or variant, or a feature the variant cannot hold."""
    _check(feature, variant)
    if variant is not None:
        if not available(feature, variant):
            where = ", ".join(v for v in VARIANTS if available(feature, v))
            raise ValueError(f"a {variant} rollout cannot hold {feature!r} (available in: {where})")
        variants: tuple[str, ...] = (variant,)
    else:
        variants = tuple(v for v in DEFAULT_VARIANTS if available(feature, v))
    return st.sampled_from(variants).flatmap(lambda v: _rollouts(feature, v))


def variant_of(data: bytes) -> str | None:
    """Which variant a rollout follows (legacy, desktop, old or cli), or None when it is no rollout.

    Legacy: the first line is a bare header. Desktop: session_meta names a desktop or IDE
    originator or source. Old: no exec_command_end, no task_started and no turn_context with a
    turn_id (the protocol before turn IDs). Anything else with the envelope is cli. A line that
    is not a JSON object (a file cut short, a damaged copy) is passed over; the first must be one."""
    lines: list[dict[str, Any]] = []
    for raw in data.decode("utf-8", "replace").split("\n"):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except (ValueError, RecursionError):
            value = None
        if isinstance(value, dict):
            lines.append(value)
        elif not lines:
            return None
    if not lines:
        return None
    first = lines[0]
    if "type" not in first and isinstance(first.get("id"), str):
        return "legacy"
    if first.get("type") not in ("session_meta", "turn_context", "response_item", "event_msg", "compacted"):
        return None
    meta = next((line.get("payload") for line in lines if line.get("type") == "session_meta"), None)
    if not isinstance(meta, dict):
        return None
    originator, source = str(meta.get("originator", "")).lower(), str(meta.get("source", "")).lower()
    if "desktop" in originator or "vscode" in originator or source in ("vscode", "desktop"):
        return "desktop"
    newer = False
    for line in lines:
        payload = line["payload"] if isinstance(line.get("payload"), dict) else {}
        if line.get("type") == "event_msg" and payload.get("type") in ("exec_command_end", "task_started"):
            newer = True
        if line.get("type") == "turn_context" and "turn_id" in payload:
            newer = True
    turn_contexts = any(line.get("type") == "turn_context" for line in lines)
    return "old" if turn_contexts and not newer else "cli"


# --- text ----------------------------------------------------------------------------------------

_prose = st.one_of(prompt_text(), reply_text())
#: Text a person or a model writes: prose most of the time, and anything Unicode can hold.
#: Characters that str.splitlines() takes for line breaks though JSON keeps them raw inside strings.
_separated = st.lists(st.sampled_from(["\u2028", "\u2029", "\x85", "\x1c", "\x1e", "\x0b", "\x0c", "\ufeff", "\r"])
                      | _prose, min_size=2, max_size=4).map("".join)
_text = st.one_of(_prose, _prose, awkward_text, unicode_text.filter(lambda t: t.strip() != ""), _separated)
#: Output a command prints (may be empty when the feature asks for it, not here).
_output = st.one_of(tool_output().map(lambda t: t + "\n"), awkward_text, st.lists(_prose, min_size=1, max_size=4).map(
    lambda ls: "\n".join(ls) + "\n"))
_COMMANDS = ("cargo test -p parser", "ls -la", "rg -n TODO src", "git status --short", "pytest -q tests",
             "npm run build", "cat README.md", "sed -n 1,40p src/main.rs", "go test ./...", "make check")
_MODELS = ("gpt-5.3-codex", "gpt-5-codex", "gpt-5.2", "gpt-5.3-codex-spark", "o4-mini")
_EFFORTS = ("minimal", "low", "medium", "high", "xhigh")
_POLICIES = ("on-request", "never", "untrusted", "on-failure")
_SANDBOXES = ("workspace-write", "read-only", "danger-full-access")
_PIXEL = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
_MCP = (("github", "get_issue"), ("linear", "search_issues"), ("postgres", "query"), ("sentry", "get_event"))


#: An odd multiplier prime to 31: a bijection on [0, 62**n) and [0, 2**n) that makes small draws look random.
_SCRAMBLE = 0x9E3779B97F4A7C15F39CC0605CEDC835


def _base62(number: int, width: int) -> str:
    number = number * _SCRAMBLE % 62**width
    out = []
    for _ in range(width):
        number, digit = divmod(number, 62)
        out.append(ALNUM[digit])
    return "".join(out)


def _hex(draw: st.DrawFn, digits: int) -> str:
    return f"{draw(st.integers(0, 16**digits - 1)) * _SCRAMBLE % 16**digits:0{digits}x}"


def _uuid7(draw: st.DrawFn, at: datetime | None = None) -> str:
    """A UUIDv7 as Codex writes them: its first 48 bits are the creation time in milliseconds (``at``, when given)."""
    value = draw(st.integers(0, 2**116 - 1)) * _SCRAMBLE % 2**116
    text = f"{value:029x}"
    if at is not None:
        millis = f"{int(at.timestamp() * 1000) % 16**12:012x}"
        return f"{millis[:8]}-{millis[8:]}-7{text[9:12]}-{'89ab'[value % 4]}{text[12:15]}-{text[15:27]}"
    return f"019{text[:5]}-{text[5:9]}-7{text[9:12]}-{'89ab'[value % 4]}{text[12:15]}-{text[15:27]}"


# --- the rollout being built ---------------------------------------------------------------------


class _Rollout:
    """A rollout under construction: its lines, its clock and the features it has come to hold."""

    def __init__(self, draw: st.DrawFn, variant: str) -> None:
        self.draw, self.variant = draw, variant
        self.clock: Clock = clock(draw) if variant in ("cli", "desktop") else Clock(ERAS[variant] + timedelta(
            days=draw(st.integers(0, 90)), milliseconds=draw(st.integers(0, 86_399_999))))
        self.lines: list[str] = []
        self.present: set[str] = set()
        self.ids: set[str] = set()
        self.turn_id: str | None = None
        self.turns = 0
        self.has_calls = False
        self.called: set[str] = set()
        self.windows = variant == "desktop" and draw(st.booleans())
        user = draw(words)
        project = draw(words)
        if self.windows:
            self.cwd = f"C:\\Users\\{user}\\src\\{project}"
        elif variant == "desktop":
            self.cwd = f"/Users/{user}/src/{project}"
        else:
            self.cwd = project_path(draw, ("home", "Users", "srv", "workspaces", "workspace"))

    # -- lines --

    @property
    def envelope(self) -> bool:
        return self.variant != "legacy"

    @property
    def records_exits(self) -> bool:
        """Whether this variant writes exec_command_end (and the other outcome events)."""
        return self.variant in ("cli", "desktop")

    def tick(self, most_ms: int = 40) -> str:
        return self.clock.tick(self.draw, most_ms)

    def write(self, kind: str, payload: dict[str, Any], most_ms: int = 40) -> None:
        """One line; a legacy rollout keeps only response items, bare and without a time."""
        stamp = self.tick(most_ms)
        if self.envelope:
            self.lines.append(dumps({"timestamp": stamp, "type": kind, "payload": payload}))
        elif kind == "response_item":
            self.lines.append(dumps(payload))

    def item(self, payload: dict[str, Any], most_ms: int = 40) -> None:
        self.write("response_item", payload, most_ms)

    def event(self, payload: dict[str, Any], most_ms: int = 40) -> None:
        if self.envelope:
            self.write("event_msg", payload, most_ms)

    def call_id(self, prefix: str = "call_") -> str:
        """A fresh native ID: unique even when shrinking draws the same number twice."""
        value = prefix + _base62(self.draw(st.integers(0, 62**24 - 1)), 24)
        while value in self.ids:
            value += ALNUM[len(self.ids) % 62]
        self.ids.add(value)
        return value

    def text(self) -> str:
        return self.draw(_text)

    # -- framing --

    def session_meta(self) -> None:
        draw = self.draw
        session = _uuid7(draw, self.clock.now)
        started = self.clock.stamp()
        if self.variant == "legacy":
            header: dict[str, Any] = {"id": session, "timestamp": started, "instructions": None}
            if draw(st.booleans()):
                header["git"] = self.git()
            self.lines.append(dumps(header))
            self.lines.append('{"record_type": "state"}')
            return
        payload: dict[str, Any] = {"id": session, "timestamp": started, "cwd": self.cwd}
        if self.variant == "desktop":
            payload["originator"] = draw(st.sampled_from(["Codex Desktop", "codex_vscode"]))
            payload["cli_version"] = f"0.{draw(st.integers(120, 150))}.{draw(st.integers(0, 3))}"
            payload["source"] = "vscode"
        elif self.variant == "cli":
            payload["originator"] = draw(st.sampled_from(["codex_cli_rs", "codex_exec"]))
            payload["cli_version"] = f"0.{draw(st.integers(98, 150))}.{draw(st.integers(0, 3))}"
            payload["source"] = "exec" if payload["originator"] == "codex_exec" else "cli"
        else:
            payload["originator"] = draw(st.sampled_from(["codex_cli_rs", "codex_exec"]))
            payload["cli_version"] = f"0.{draw(st.integers(30, 47))}.0"
            payload["instructions"] = None
            if draw(st.booleans()):
                payload["source"] = "exec" if payload["originator"] == "codex_exec" else "cli"
        if self.variant != "old":
            payload["model_provider"] = "openai"
            if draw(st.booleans()):
                payload["base_instructions"] = {"text": "You are Codex, a coding agent. " + draw(_prose) + "."}
        payload["git"] = self.git() if draw(st.booleans()) else {}
        # The line's own time is a little later than the session's start.
        self.write("session_meta", payload, most_ms=30)

    def git(self) -> dict[str, Any]:
        draw = self.draw
        git: dict[str, Any] = {}
        if draw(st.booleans()):
            git["commit_hash"] = _hex(draw, 40)
        git["branch"] = draw(st.sampled_from(["main", "fix-rounding", "config-audit", "feature/ünïcode"]))
        if draw(st.booleans()):
            git["repository_url"] = f"git@github.com:{draw(words)}/{draw(words)}.git"
        return git

    def context(self) -> None:
        """What Codex injects before the first turn: permissions, AGENTS.md, environment context."""
        draw = self.draw
        if self.variant in ("cli", "desktop") and draw(st.booleans()):
            self.item({"type": "message", "role": "developer", "content": [{"type": "input_text", "text":
                       "<permissions instructions>\nApproval policy is on-request.\n</permissions instructions>"}]}, 2)
        if draw(st.booleans()):
            opening = "<user_instructions>\n" if self.variant in ("old", "legacy") else "# AGENTS.md instructions\n\n<INSTRUCTIONS>\n"
            closing = "\n</user_instructions>" if self.variant in ("old", "legacy") else "\n</INSTRUCTIONS>"
            self.item(self.user_item(opening + draw(_prose) + closing), 2)
        self.item(self.user_item(f"<environment_context>\n  <cwd>{self.cwd}</cwd>\n  <shell>bash</shell>\n</environment_context>"), 2)

    @staticmethod
    def user_item(text: str) -> dict[str, Any]:
        return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}

    def open_turn(self) -> None:
        """task_started, turn_context and the person's message (with its user_message event)."""
        draw = self.draw
        self.turns += 1
        if self.turns == 2:
            self.present.add("turns")
        if self.turns > 1 and self.variant in ("cli", "desktop") and draw(st.integers(0, 3)) == 0:
            self.resume()
        if self.variant in ("cli", "desktop"):
            self.turn_id = _uuid7(draw, self.clock.now)
            self.event({"type": "task_started", "turn_id": self.turn_id,
                        "model_context_window": draw(st.sampled_from([128000, 258400, 272000]))}, most_ms=600_000)
        if self.envelope:
            context: dict[str, Any] = {}
            if self.turn_id is not None:
                context["turn_id"] = self.turn_id
            sandbox = draw(st.sampled_from(_SANDBOXES))
            policy: dict[str, Any] = {("mode" if self.variant == "old" else "type"): sandbox}
            if sandbox == "workspace-write":
                policy["network_access"] = draw(st.booleans())
            context.update(cwd=self.cwd, approval_policy=draw(st.sampled_from(_POLICIES)), sandbox_policy=policy,
                           model=draw(st.sampled_from(_MODELS)), effort=draw(st.sampled_from(_EFFORTS)), summary="auto")
            self.write("turn_context", context, most_ms=600_000 if self.variant == "old" else 3)
        text = self.text()
        images: list[str] = []
        if self.variant in ("cli", "desktop") and draw(st.integers(0, 4)) == 0:
            # A pasted image: Codex wraps it in tags of its own; the event holds the typed text alone.
            images = [_PIXEL]
            self.item({"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": "<image name=[Image #1]>"}, {"type": "input_image", "image_url": _PIXEL},
                {"type": "input_text", "text": "</image>"}, {"type": "input_text", "text": text}]}, 3)
        else:
            self.item(self.user_item(text), 3)
        event: dict[str, Any] = {"type": "user_message", "message": text}
        if self.variant == "old":
            event["kind"] = "plain"
        else:
            event["images"] = images
        self.event(event, 2)

    def reasoning(self) -> None:
        if self.draw(st.booleans()):
            return
        summary = "**" + self.draw(_prose).capitalize() + "**"
        if self.variant == "old" and self.draw(st.booleans()):
            self.event({"type": "agent_reasoning", "text": summary}, 3000)
        self.item({"type": "reasoning", "summary": [{"type": "summary_text", "text": summary}], "content": None,
                   "encrypted_content": "gAAAAAB" + _base62(self.draw(st.integers(0, 62**16)), 16)}, 3000)

    def reply(self) -> str:
        """The model's message and its agent_message event."""
        text = self.text()
        item: dict[str, Any] = {"type": "message"}
        if self.variant in ("cli", "desktop") and self.draw(st.booleans()):
            item["id"] = "msg_" + _hex(self.draw, 12)
        item.update(role="assistant", content=[{"type": "output_text", "text": text}])
        self.item(item, 5000)
        self.event({"type": "agent_message", "message": text}, 2)
        return text

    def close_turn(self, last: str | None) -> None:
        if self.variant in ("cli", "desktop"):
            self.event({"type": "task_complete", "turn_id": self.turn_id, "last_agent_message": last}, 30)

    def token_count(self) -> None:
        if self.variant in ("cli", "desktop", "old") and self.draw(st.booleans()):
            used = self.draw(st.integers(1000, 200_000))
            self.event({"type": "token_count", "info": {"total_token_usage": {
                "input_tokens": used, "cached_input_tokens": used // 2, "output_tokens": used // 20,
                "reasoning_output_tokens": used // 40, "total_tokens": used + used // 20}}, "rate_limits": None}, 20)

    # -- calls --

    def function_call(self, name: str, arguments: str, call_id: str | None = None) -> str:
        call_id = call_id or self.call_id()
        item: dict[str, Any] = {"type": "function_call", "name": name, "arguments": arguments, "call_id": call_id}
        if self.variant == "legacy":
            item = {"type": "function_call", "id": "fc_" + _base62(self.draw(st.integers(0, 62**10)), 10), **item}
        self.item(item, 4000)
        self.has_calls = True
        self.called.add(call_id)
        return call_id

    def output(self, call_id: str, output: Any, custom: bool = False, most_ms: int = 30) -> None:
        kind = "custom_tool_call_output" if custom else "function_call_output"
        self.item({"type": kind, "call_id": call_id, "output": output}, most_ms)
        if call_id in self.called:
            self.present.add("calls")
        if output == "":
            self.present.add("empty-output")

    def shell_arguments(self, name: str, command: str) -> str:
        workdir = self.cwd
        if name == "exec_command":
            return dumps({"cmd": command, "workdir": workdir, "yield_time_ms": 10000})
        if name == "shell_command":
            return dumps({"command": command, "workdir": workdir})
        return dumps({"command": ["bash", "-lc", command], "workdir": workdir, "timeout_ms": 120000})

    def command(self) -> str:
        draw = self.draw
        command = draw(st.sampled_from(_COMMANDS))
        if draw(st.integers(0, 3)) == 0:
            command += " " + json.dumps(draw(_text), ensure_ascii=False)
        return command

    def shell_name(self) -> str:
        if self.variant in ("old", "legacy"):
            return "shell"
        return self.draw(st.sampled_from(["shell", "exec_command", "shell_command"]))

    def formatted(self, name: str, code: int, out: str, seconds: float) -> str:
        """The output text the model reads, in the shape of the tool and the variant."""
        if self.variant == "legacy" or (self.variant == "old" and self.draw(st.booleans())):
            return dumps({"output": out, "metadata": {"exit_code": code, "duration_seconds": round(seconds, 1)}})
        if name == "exec_command":
            return (f"Chunk ID: {_hex(self.draw, 6)}\nWall time: {seconds:.4f} seconds\n"
                    f"Process exited with code {code}\nOriginal token count: {len(out) // 4}\nOutput:\n{out}")
        return f"Exit code: {code}\nWall time: {seconds:.1f} seconds\nOutput:\n{out}"

    def exec_end(self, call_id: str, command: str, code: int, out: str, seconds: float, status: bool = True) -> None:
        """exec_command_end: the recorded exit code (a number) and Codex's verdict."""
        if not self.records_exits:
            return
        event: dict[str, Any] = {"type": "exec_command_end", "call_id": call_id, "turn_id": self.turn_id,
                                 "command": ["bash", "-lc", command], "cwd": self.cwd, "parsed_cmd": [],
                                 "source": "agent", "stdout": out if code == 0 else "", "stderr": "" if code == 0 else out,
                                 "aggregated_output": out, "exit_code": code,
                                 "duration": {"secs": int(seconds), "nanos": int(seconds * 1e9) % 1_000_000_000},
                                 "formatted_output": out}
        if status:
            event["status"] = "completed" if code == 0 else "failed"
        self.event(event, int(seconds * 1000) + 1)
        self.present.add("exit-codes")
        if code != 0:
            self.present.add("errors")

    def shell(self, code: int | None = None, empty: bool = False) -> None:
        """A shell command, its exec_command_end where the variant writes one, and its output."""
        draw = self.draw
        name, command = self.shell_name(), self.command()
        code = draw(st.sampled_from([0, 0, 0, 1, 2, 101, 127])) if code is None else code
        out = "" if empty else draw(_output)
        seconds = round(draw(st.floats(0, 30, allow_nan=False)), 3)
        call_id = self.function_call(name, self.shell_arguments(name, command))
        self.exec_end(call_id, command, code, out, seconds, status=draw(st.integers(0, 4)) > 0)
        text = "" if empty else self.formatted(name, code, out, seconds)
        if not self.records_exits and not empty:
            self.present.add("exit-code-in-text")
        if self.variant == "legacy" and code != 0 and draw(st.booleans()):
            self.output(call_id, {"content": text, "success": False})
            self.present.add("errors")
        else:
            self.output(call_id, text)

    def other_call(self) -> None:
        """A call that is no command: a plan update, an MCP tool, an image, a directory listing."""
        draw = self.draw
        kinds = ["plan", "mcp", "mcp", "image", "question"] if self.variant in ("cli", "desktop") \
            else ["plan", "mcp"] if self.variant == "old" else ["shell"]
        kind = draw(st.sampled_from(kinds))
        if kind == "shell":
            self.shell()
        elif kind == "plan":
            steps = [{"step": draw(_prose), "status": draw(st.sampled_from(["pending", "in_progress", "completed"]))}
                     for _ in range(draw(st.integers(1, 3)))]
            call_id = self.function_call("update_plan", dumps({"plan": steps}))
            self.output(call_id, "Plan updated")
        elif kind == "mcp":
            self.mcp(failed=False)
        elif kind == "question":
            self.question()
        else:
            path = f"{self.cwd}/{draw(words)}.png"
            call_id = self.function_call("view_image", dumps({"path": path}))
            image = {"type": "input_image", "image_url": _PIXEL}
            self.output(call_id, draw(st.sampled_from([[{"type": "input_text", "text": f"<image name={path}>"}, image], [image]])))

    def question(self) -> None:
        """request_user_input (Plan mode): the questions in its arguments; its output the person's answers, by
        question ID (an option's label, maybe with a typed note), or the cancellation message (no answer)."""
        draw = self.draw
        questions: list[dict[str, Any]] = []
        labels: dict[str, list[str]] = {}
        for number in range(draw(st.integers(1, 2))):
            ident = f"{draw(words)}_{number}"
            labels[ident] = draw(st.lists(_prose.map(lambda t: t[:40].strip() or "Yes"), min_size=2, max_size=3,
                                          unique=True))
            questions.append({"id": ident, "header": draw(words).capitalize(), "question": draw(_prose) + "?",
                              "options": [{"label": label, "description": draw(_prose)} for label in labels[ident]]})
        call_id = self.function_call("request_user_input", dumps({"questions": questions}))
        if draw(st.integers(0, 3)) == 0:
            self.output(call_id, "request_user_input was cancelled before receiving a response", most_ms=120_000)
            return
        answers = {}
        for ident, options in labels.items():
            chosen = [draw(st.sampled_from(options))]
            if draw(st.integers(0, 3)) == 0:
                chosen.append("user_note: " + draw(_prose))
            answers[ident] = {"answers": chosen}
        self.output(call_id, dumps({"answers": answers}), most_ms=120_000)

    def hook_turn(self) -> None:
        """A Stop hook that asks the model to go on: a turn whose input is what the hook injected, wrapped in
        ``<hook_prompt hook_run_id=...>``. Codex persists no hook start or completion event, so no execution
        detail of the run is recorded."""
        draw = self.draw
        self.turn_id = _uuid7(draw, self.clock.now)
        self.event({"type": "task_started", "turn_id": self.turn_id,
                    "model_context_window": draw(st.sampled_from([128000, 258400, 272000]))}, most_ms=400)
        run = f"stop:{draw(st.integers(0, 2))}:{self.cwd}/.codex/hooks.json"
        self.item(self.user_item(f'<hook_prompt hook_run_id="{run}">{draw(_prose)}</hook_prompt>'), 3)
        last = self.reply()
        self.close_turn(last)

    def user_shell(self) -> None:
        """A command the person ran (``!cmd``): an exec_command_end with no call, which no reader demands."""
        draw = self.draw
        command, out = self.command(), draw(_output)
        self.item(self.user_item(f"<user_shell_command>\n{command}\n</user_shell_command>"), 20_000)
        self.event({"type": "exec_command_end", "call_id": self.call_id(), "turn_id": self.turn_id,
                    "command": ["bash", "-lc", command], "cwd": self.cwd, "parsed_cmd": [], "source": "user_shell",
                    "stdout": out, "stderr": "", "aggregated_output": out, "exit_code": 0,
                    "duration": {"secs": 0, "nanos": draw(st.integers(0, 999_999_999))}, "formatted_output": out,
                    "status": "completed"}, 500)

    def resume(self) -> None:
        """A resumed session appends a session_meta line of its own, maybe from a newer Codex."""
        meta = json.loads(self.lines[0])["payload"]
        meta = {**meta, "timestamp": self.clock.stamp()}
        if self.draw(st.booleans()):
            major, minor, patch = meta["cli_version"].split(".")
            meta["cli_version"] = f"{major}.{int(minor) + self.draw(st.integers(1, 5))}.{patch}"
        self.write("session_meta", meta, 3_600_000)

    def mcp(self, failed: bool) -> None:
        draw = self.draw
        server, tool = draw(st.sampled_from(_MCP))
        arguments = {"query": draw(_text)}
        call_id = self.function_call(f"mcp__{server}__{tool}", dumps(arguments))
        text = draw(_text)
        result: dict[str, Any] = ({"Err": f"tool call failed: {text}"} if failed
                                  else {"Ok": {"content": [{"type": "text", "text": text}], "isError": False}})
        # Codex persisted mcp_tool_call_end only from early 2026 (never in old rollouts): before, a success left only
        # the composite name (a failure keeps its event here, since the outcome is what the errors feature is about).
        if failed or (self.records_exits and draw(st.booleans())):
            self.event({"type": "mcp_tool_call_end", "call_id": call_id,
                        "invocation": {"server": server, "tool": tool, "arguments": arguments},
                        "duration": {"secs": draw(st.integers(0, 9)), "nanos": draw(st.integers(0, 999_999_999))},
                        "result": result}, 3000)
        if failed:
            self.present.add("errors")
        self.output(call_id, f"tool call failed: {text}" if failed else text)

    def patch(self, failed: bool = False, empty: bool = False) -> None:
        """apply_patch as a custom tool: free-form input, patch_apply_end where the variant writes it."""
        draw = self.draw
        path = f"src/{draw(words)}.rs"
        old, new = draw(_text), draw(_text)
        patch = f"*** Begin Patch\n*** Update File: {path}\n@@\n-{old}\n+{new}\n*** End Patch\n"
        call_id = self.call_id()
        self.item({"type": "custom_tool_call", "status": "completed", "call_id": call_id, "name": "apply_patch",
                   "input": patch}, 4000)
        self.present.add("custom-tools")
        self.has_calls = True
        self.called.add(call_id)
        if failed:
            stdout, stderr = "", f"Failed to find expected lines in {path}:\n{old}"
        else:
            stdout, stderr = f"Success. Updated the following files:\nM {path}\n", ""
        if self.records_exits:
            absolute = self.cwd + ("\\" if self.windows else "/") + path
            self.event({"type": "patch_apply_end", "call_id": call_id, "turn_id": self.turn_id, "stdout": stdout,
                        "stderr": stderr, "success": not failed,
                        "changes": {} if failed else {absolute: {"type": "update", "unified_diff": f"@@ -1 +1 @@\n-{old}\n+{new}\n",
                                                                  "move_path": None}},
                        "status": "failed" if failed else "completed"}, 100)
            if failed:
                self.present.add("errors")
        if empty:
            text = ""
        elif failed:
            text = f"apply_patch verification failed: {stderr}"
        else:
            text = dumps({"output": stdout, "metadata": {"exit_code": 0, "duration_seconds": 0.0}})
            if not self.records_exits:
                self.present.add("exit-code-in-text")
        self.output(call_id, text, custom=True)


# --- features ------------------------------------------------------------------------------------


def _calls(r: _Rollout) -> None:
    for _ in range(r.draw(st.integers(1, 2))):
        r.other_call()
    # A question besides, in half the rollouts that can hold one: drawn only as one call kind of five, an answered
    # or cancelled request_user_input was missing from every example of some runs.
    if r.variant in ("cli", "desktop") and r.draw(st.booleans()):
        r.question()
    if r.records_exits and r.draw(st.integers(0, 3)) == 0:
        r.user_shell()


def _exit_codes(r: _Rollout) -> None:
    for _ in range(r.draw(st.integers(1, 2))):
        r.shell()


def _exit_code_in_text(r: _Rollout) -> None:
    """Text that looks like an exit code, where no exec_command_end records one for the call."""
    draw = r.draw
    if not r.records_exits:
        r.shell(code=draw(st.sampled_from([0, 1, 2, 127])))
        return
    # A long-running command polled with write_stdin: the poll's output says "Process exited
    # with code N"; only the first call's exec_command_end records the number.
    command, code = r.command(), draw(st.sampled_from([0, 1, 2, 130]))
    first = r.function_call("exec_command", r.shell_arguments("exec_command", command))
    session = draw(st.integers(1000, 99999))
    r.output(first, f"Chunk ID: {_hex(draw, 6)}\nWall time: 10.0021 seconds\n"
                    f"Process running with session ID {session}\nOriginal token count: 0\nOutput:\n")
    poll = r.function_call("write_stdin", dumps({"session_id": session, "chars": "", "yield_time_ms": 30000}))
    out = draw(_output)
    seconds = round(draw(st.floats(10, 60, allow_nan=False)), 3)
    r.output(poll, f"Chunk ID: {_hex(draw, 6)}\nWall time: {seconds - 10:.4f} seconds\n"
                   f"Process exited with code {code}\nOriginal token count: {len(out) // 4}\nOutput:\n{out}", most_ms=30000)
    r.exec_end(first, command, code, out, seconds)
    r.present.add("exit-code-in-text")


def _custom_tools(r: _Rollout) -> None:
    r.patch()


def _parallel(r: _Rollout) -> None:
    """Calls written back to back; their outcomes and outputs arrive in completion order."""
    draw = r.draw
    n = draw(st.integers(2, 3))
    planned = []
    for _ in range(n):
        name, command = r.shell_name(), r.command()
        call_id = r.function_call(name, r.shell_arguments(name, command))
        code = draw(st.sampled_from([0, 0, 1]))
        planned.append((call_id, name, command, code, draw(_output), round(draw(st.floats(0, 5, allow_nan=False)), 3)))
    order = draw(st.permutations(range(n)))
    if order == list(range(n)):
        order = order[1:] + order[:1]  # at least one output out of call order
    for i in order:
        call_id, name, command, code, out, seconds = planned[i]
        r.exec_end(call_id, command, code, out, seconds)
        if not r.records_exits:
            r.present.add("exit-code-in-text")
        r.output(call_id, r.formatted(name, code, out, seconds))
    r.present.add("parallel")


def _duplicate_ids(r: _Rollout) -> None:
    """Two calls with one native ID (a resumed or forked rollout, a provider reusing IDs)."""
    draw = r.draw
    call_id = r.call_id()
    # One exit code for both: the last event for an ID is the one every reader keeps.
    code = draw(st.sampled_from([0, 0, 1]))
    for _ in range(2):
        name, command = r.shell_name(), r.command()
        r.function_call(name, r.shell_arguments(name, command), call_id=call_id)
        out = draw(_output)
        seconds = round(draw(st.floats(0, 5, allow_nan=False)), 3)
        r.exec_end(call_id, command, code, out, seconds)
        r.output(call_id, r.formatted(name, code, out, seconds))
        if not r.records_exits:
            r.present.add("exit-code-in-text")
    r.present.add("duplicate-ids")


def _dangling(r: _Rollout) -> None:
    """A call whose output never reached the rollout."""
    name, command = r.shell_name(), r.command()
    r.function_call(name, r.shell_arguments(name, command))
    r.present.add("dangling")


def _interrupted(r: _Rollout) -> None:
    """The person interrupts while commands run: a call stays pending and the turn is aborted.

    Where exec_command_end is written, a second command may be killed first: its event records the
    outcome though no output ever reached the model (a result without content)."""
    draw = r.draw
    if r.records_exits and draw(st.booleans()):
        name, command = r.shell_name(), r.command()
        killed = r.function_call(name, r.shell_arguments(name, command))
        _dangling(r)
        r.exec_end(killed, command, draw(st.sampled_from([130, 137, -1])), draw(_output), 1.5)
    else:
        _dangling(r)
    payload: dict[str, Any] = {"type": "turn_aborted", "reason": "interrupted"}
    if r.turn_id is not None:
        payload = {"type": "turn_aborted", "turn_id": r.turn_id, "reason": "interrupted",
                   "duration_ms": draw(st.integers(100, 60_000))}
    r.event(payload, 60_000)
    if r.variant in ("cli", "desktop") and draw(st.booleans()):
        r.item(r.user_item("<turn_aborted>\n  <reason>interrupted</reason>\n</turn_aborted>"), 2)
    r.present.add("interrupted")


def _orphans(r: _Rollout) -> None:
    """An output whose call is gone (a resumed session, a compacted history)."""
    draw = r.draw
    call_id = r.call_id()
    text = draw(_text)
    if draw(st.booleans()) and r.variant != "legacy":
        r.output(call_id, [{"type": "input_text", "text": text}])
    else:
        r.output(call_id, text)
    r.present.add("orphans")


def _errors(r: _Rollout) -> None:
    draw = r.draw
    if r.variant == "legacy":
        name, command = "shell", r.command()
        call_id = r.function_call(name, r.shell_arguments(name, command))
        r.output(call_id, {"content": draw(_output), "success": False})
        r.present.add("errors")
        return
    kind = draw(st.sampled_from(["exit", "patch", "mcp"]))
    if kind == "exit":
        r.shell(code=draw(st.sampled_from([1, 2, 101, 124, 127, 255, -1])))
    elif kind == "patch":
        r.patch(failed=True)
    else:
        r.mcp(failed=True)


def _empty_output(r: _Rollout) -> None:
    kinds = ["shell", "patch"] if r.variant != "legacy" else ["shell"]
    if r.draw(st.sampled_from(kinds)) == "patch":
        r.patch(empty=True)
    else:
        r.shell(code=0, empty=True)


def _not_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return True
    return False


def _huge() -> st.SearchStrategy[int]:
    return st.one_of(st.integers(2**64, 2**80), st.integers(-(2**80), -(2**64)), st.just(18446744073709551617))


#: Arguments a stream cannot hold as an object: not JSON, integers past 2**64 (ASR-032), deeper than
#: a stream may nest, or JSON that is no object. ASR-254 keeps them whole, as text or as the value.
_hard_arguments = st.one_of(
    st.builds(lambda n, k: f'{{"{k}":{n}}}', _huge(), words),
    st.builds(lambda n, t: dumps({"plan": [{"step": t, "status": "pending"}]})[:-1] + f',"revision":{n}}}', _huge(), _text),
    _text.map(lambda t: '{"command":"' + t.replace("\\", "").replace('"', "")),  # cut short: not JSON
    _text.filter(_not_json),  # free text
    st.just(""),
    st.sampled_from(["[1,2,3]", '"just a string"', "null", "42", '{"x":1e400}', '{"x":NaN}', "{} trailing",
                     "{'single': 'quotes'}", '{"a":1}{"b":2}']),
    st.integers(201, 260).map(lambda d: "[" * d + "]" * d),  # deeper than a stream may nest
)
#: Arguments that are JSON objects, but odd ones: unicode keys, duplicate keys, -0.0, tiny floats.
_odd_arguments = st.one_of(
    st.sampled_from(['{"a":1,"a":2}', '{"n":-0.0,"f":1.5e-7}', '{"":""}', '{"\\u00e9":"\\ud83e\\udd80"}']),
    st.dictionaries(_text, st.one_of(_text, st.integers(-(2**53) + 1, 2**53 - 1), st.booleans(), st.none()),
                    max_size=3).map(dumps),
)


def _arguments_feature(r: _Rollout) -> None:
    """One call whose arguments the stream cannot hold as an object, and maybe one with odd JSON."""
    draw = r.draw
    for arguments in [draw(_hard_arguments)] + ([draw(_odd_arguments)] if draw(st.booleans()) else []):
        name = draw(st.sampled_from(["update_plan", "mcp__github__get_issue", "shell", "view_image", "write_stdin"]))
        call_id = r.function_call(name, arguments)
        r.output(call_id, draw(st.sampled_from(["Plan updated", "failed to parse function arguments: EOF while parsing",
                                                "ok"])))
    r.present.add("arguments")


def _compaction(r: _Rollout) -> None:
    draw = r.draw
    payload: dict[str, Any] = {"message": draw(_text)}
    if r.variant != "old":
        payload["replacement_history"] = [r.user_item(draw(_text))] if draw(st.booleans()) else []
    r.write("compacted", payload, 20_000)
    r.event({"type": "context_compacted"}, 2)
    r.present.add("compaction")


def _web_search(r: _Rollout) -> None:
    draw = r.draw
    query = draw(_text)
    search_id = r.call_id("ws_")
    if r.records_exits:
        r.event({"type": "web_search_begin", "call_id": search_id}, 500)
    r.item({"type": "web_search_call", "status": "completed", "action": {"type": "search", "query": query}}, 3000)
    if r.records_exits:
        r.event({"type": "web_search_end", "call_id": search_id, "query": query}, 2)
    r.present.add("web-search")


def _nothing(r: _Rollout) -> None:
    """plain and turns need no segment of their own: every rollout has messages and at least one turn."""


SEGMENTS: dict[str, Callable[[_Rollout], None]] = {
    "plain": _nothing, "calls": _calls, "exit-codes": _exit_codes, "exit-code-in-text": _exit_code_in_text,
    "custom-tools": _custom_tools, "parallel": _parallel, "duplicate-ids": _duplicate_ids, "dangling": _dangling,
    "interrupted": _interrupted, "orphans": _orphans, "errors": _errors, "empty-output": _empty_output,
    "arguments": _arguments_feature, "compaction": _compaction, "web-search": _web_search, "turns": _nothing,
}


@st.composite
def _rollouts(draw: st.DrawFn, feature: str, variant: str) -> NativeTranscript:
    if feature == MIXED:
        mixable = [f for f in _MIXABLE if f in AVAILABLE[variant]]
        wanted = draw(st.lists(st.sampled_from(mixable), min_size=2, max_size=3, unique=True))
    else:
        wanted = [feature]
    r = _Rollout(draw, variant)
    r.session_meta()
    r.context()
    segments = [f for f in wanted if f not in ("plain", "turns")]
    # Interruption ends a turn, so it needs a later one; "turns" asks for several.
    several = "turns" in wanted or "interrupted" in wanted
    turns = (draw(st.integers(2, 3)) if wanted == ["turns"] else 2) if several else 1
    # Each segment goes to a turn; the interruption closes the first turn that holds one.
    placed = [draw(st.integers(0, turns - 1)) if f != "interrupted" else 0 for f in segments]
    rng = random.Random(draw(st.integers(0, 2**16)))
    pending = False
    for turn in range(turns):
        if variant == "legacy" and turn:
            break
        r.open_turn()
        mine = [f for f, t in zip(segments, placed, strict=True) if t == turn]
        mine.sort(key=lambda f: (f == "interrupted", rng.random()))
        for name in mine:
            r.reasoning()
            SEGMENTS[name](r)
            r.token_count()
        if "interrupted" in mine:
            continue
        if mine and mine[-1] == "dangling" and turn == turns - 1 and draw(st.booleans()):
            pending = True
            break  # the file ends with the pending call (the process was killed)
        r.reasoning()
        last = r.reply()
        r.close_turn(last)
    if "turns" in wanted and variant in ("cli", "desktop") and not pending and draw(st.booleans()):
        r.hook_turn()
    present = set(r.present)
    if not r.has_calls:
        present.add("plain")
    return NativeTranscript(FORMAT, variant, tuple(r.lines), frozenset(present))


__all__ = ["AVAILABLE", "FEATURES", "FORMAT", "MIXED", "VARIANTS", "available", "transcripts", "variant_of"]
