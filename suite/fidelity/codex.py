"""The witness for Codex CLI and Desktop rollouts (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl).

A rollout is JSON Lines: ``{"timestamp", "type", "payload"}`` with ``type`` one of
``session_meta``, ``turn_context``, ``response_item``, ``event_msg`` and ``compacted``.
Rollouts written before that envelope existed (mid 2025) hold a bare header line
(``{"id", "timestamp", ...}``), ``{"record_type": ...}`` markers and bare response items;
they are read too. The witness reads what every faithful converter must keep:

- **Calls**: ``function_call`` (arguments are JSON text: parsed when they are JSON the
  stream can hold, else kept as text) and ``custom_tool_call`` (free-form ``input``, always
  text). Both are response items of the model, so ``requested_by`` is ``model``. Web search
  and local shell items record neither a call ID nor a tool name and are not demanded.
- **Results**: ``function_call_output`` and ``custom_tool_call_output``; their ``output``
  (a string, content items, or the early ``{content, success}`` object) is what reached the
  model. ``exec_command_end``, ``patch_apply_end`` and ``mcp_tool_call_end`` with the same
  call ID add the recorded outcome (the last event for a call wins); an outcome event for a
  call the rollout holds but never answered is a result of its own (what the model saw is
  then not recorded). Outcome events of calls the rollout does not hold (a person's shell
  command, ``source: user_shell``; a ``patch_apply_end`` alone) are optional results: not
  demanded, but every value a stream writes for them is held against the event.
- **Statuses**: Codex's own verdict (``status``, ``success``, an MCP ``Err``); a recorded
  failure may be written ``failed``, ``interrupted`` or ``cancelled``, never ``completed``
  or ``denied``. An exit code without a verdict rules out only the contrary status. A bare
  output records no outcome, so any status but ``denied`` (no refusal is recorded) is consistent.
- **Transitions** (ASR-169): ``task_started`` / ``turn_started`` (running), ``task_complete`` /
  ``turn_complete`` (idle), ``turn_aborted`` (idle or error; its ``reason`` or ``cancelled`` as
  stop reason), ``error`` (error or idle) and ``shutdown_complete`` (ended), each with its
  ``turn_id``; no other line is a place for a ``state`` record.
- **Approvals, processes, configuration**: rollouts persist no approval request; a ``declined``
  outcome is a recorded refusal (``permissions``). Without unified exec calls (``exec_command``,
  ``write_stdin``) no process lifecycle is recorded (``terminals`` empty); with them, terminals are
  not reported. Each ``turn_context`` is the configuration in force (model, effort, approval
  policy, sandbox), a change where it differs from the last (``configs``).
- **Input requests** (ASR-285): a ``request_user_input`` call's questions (its arguments) and the answers its
  output records (``{"answers": {question ID: {"answers": [...]}}}``); any other output records no answer.
- **Hooks** (ASR-287): Codex never persists its hook start and completion events, so a rollout records a hook
  run only through the prompt the hook injected (a ``<hook_prompt>`` user message), without execution details.
- **Tool identities** (ASR-255): an MCP outcome event's ``invocation`` (``server``, ``tool``) and a call's
  ``namespace`` beside its ``name`` record them in separate fields; a composite ``mcp__server__tool`` name does not.
- **Subagents** (reported, never scored): a rollout whose ``session_meta`` source is ``{"subagent": ...}`` is a
  subagent's own thread; ``collab_agent_spawn_begin``/``_end`` events record a subagent, the call that started
  it and its prompt (its records are in its own rollout).
- **Turn links** (ASR-183): ``parent_turn_id`` and ``root_turn_id`` beside a ``turn_id`` in a
  payload; none of the rollouts the suite knows has one, so a state's ``parentTurn`` or
  ``rootTurn`` in their streams is invented.
- **Triggers** (ASR-186): the strings a ``turn_trigger`` or ``thread_source`` member holds, wherever
  a line has one; none of the rollouts the suite knows has one, so a ``trigger`` in their streams
  is invented.
- **Exit codes** come only from ``exec_command_end.exit_code``, a number. "Exit code: N",
  "Process exited with code N" and ``{"metadata": {"exit_code": N}}`` inside an output
  string are text the model read, never an exit code (ASR-260).
- **Messages**: assistant ``message`` items; user ``message`` items that the rollout also
  records as a ``user_message`` event, with the typed text only (the rest are injected
  context: AGENTS.md, environment context, permission notes; image tags around the text),
  or, in rollouts with no such events at all, the ones that do not open with a known
  context tag; and message events whose text no item holds. Developer and system messages
  are instructions and not demanded. Texts are compared byte for byte.
- **Times**: every line's ``timestamp`` and ``session_meta``'s own ``timestamp`` (the
  session's start, often earlier than its line's); ``completed_at_ms`` of an exec end.

Malformed input raises ``NotThisFormat`` naming the line; nothing here raises anything else.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from asr_conformance.fidelity.facts import (
    NativeCall,
    NativeConfig,
    NativeHook,
    NativeMessage,
    NativePermission,
    NativeQuestion,
    NativeResult,
    NativeSubagent,
    NativeTransition,
    NotThisFormat,
    SourceFacts,
    Timing,
    Where,
    strings_under,
)
from asr_conformance.vocabulary.strict_json import fits, is_timestamp, loads

FORMAT = "codex-rollout-jsonl"
#: Envelope line types.
ENVELOPE_TYPES = frozenset({"session_meta", "turn_context", "response_item", "event_msg", "compacted"})
#: Content item types whose ``text`` is message or output text.
TEXT_ITEMS = frozenset({"input_text", "output_text", "text"})
#: Outcome events that add to the result of the call they name.
OUTCOME_EVENTS = frozenset({"exec_command_end", "patch_apply_end", "mcp_tool_call_end"})
#: Codex's outcome words and the stream status each means (``declined`` is a recorded refusal).
STATUS_WORDS = {"completed": frozenset({"completed"}), "success": frozenset({"completed"}),
                "failed": frozenset({"failed", "interrupted", "cancelled"}),
                "declined": frozenset({"denied"}), "rejected": frozenset({"denied"})}
#: A failure Codex records may be written as failed, or as an interruption or cancellation when the
#: converter knows more; never as denied, which needs a recorded refusal (ASR-258).
FAILED = STATUS_WORDS["failed"]
#: An output that records no outcome records no refusal either: any status but denied (ASR-258).
NO_REFUSAL = frozenset({"denied"})
COMPLETED = STATUS_WORDS["completed"]
#: The stream decisions a declined outcome is consistent with.
#: The members in which Codex records what started a turn or a thread (ASR-186).
TRIGGER_KEYS = frozenset({"turn_trigger", "thread_source"})
#: Codex's turn-link members and the state record members they are written as (ASR-183).
TURN_LINKS = {"parent_turn_id": "parentTurn", "root_turn_id": "rootTurn"}
REFUSALS = frozenset({"reject_once", "reject_always", "cancelled", "timeout"})
#: The tool through which the model asks the person questions (Plan mode); its answers come back in its output.
ASK_TOOL = "request_user_input"
#: The events that record a subagent started by a call (Codex's collaboration tools, ``spawn_agent``).
SPAWN_EVENTS = ("collab_agent_spawn_begin", "collab_agent_spawn_end")
#: The opening of a user-role message that carries what a hook injected (``<hook_prompt hook_run_id="...">``).
HOOK_PROMPT = "<hook_prompt"
#: Tool names of Codex's unified exec, whose sessions are processes that outlive a call.
UNIFIED_EXEC = frozenset({"exec_command", "write_stdin"})
#: Events that record a change of turn or session status, and the stream states each may be written as
#: (ASR-169); ``turn_started`` and ``turn_complete`` are the later names of the task events.
TRANSITION_EVENTS = {
    "task_started": frozenset({"running"}), "turn_started": frozenset({"running"}),
    "task_complete": frozenset({"idle"}), "turn_complete": frozenset({"idle"}),
    "turn_aborted": frozenset({"idle", "error"}), "error": frozenset({"error", "idle"}),
    "shutdown_complete": frozenset({"ended"}),
}
#: Openings of the user-role messages Codex injects (context, not something a person typed).
INJECTED_OPENINGS = (
    "<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<INSTRUCTIONS>",
    "<permissions instructions>", "<user_shell_command>", "<turn_aborted>", "<subagent_notification>",
    "<skill>", "<hook_prompt", "<collaboration_mode>", "<personality_spec>", "<model_switch>",
)
#: Spellings of the format name a vendor may write in ``producer.source.format`` (after
#: lower-casing and turning ``_``, ``.`` and spaces into ``-``).
FORMAT_NAMES = frozenset({
    "codex-rollout-jsonl", "codex-rollout", "codex-rollouts", "codex-jsonl", "codex",
    "codex-cli-rollout", "codex-cli-rollout-jsonl", "codex-cli-jsonl", "codex-cli",
    "codex-session-jsonl", "codex-sessions-jsonl", "codex-session", "codex-desktop-rollout",
    "openai-codex-rollout", "openai-codex-rollout-jsonl", "openai-codex-jsonl", "openai-codex",
    "codex-rs-rollout", "codex-rs-rollout-jsonl",
})
EXCERPT = 200
SNIFF_BYTES = 1 << 16


class CodexWitness:
    """Reads Codex rollouts (format ``codex-rollout-jsonl``) into ``SourceFacts``."""

    format = FORMAT

    def accepts_format_name(self, name: object) -> bool:
        """The canonical name and the plain variants vendors write (case, ``_``, ``.jsonl``)."""
        if not isinstance(name, str):
            return False
        return re.sub(r"[\s_.]+", "-", name.strip().lower()) in FORMAT_NAMES

    def sniff(self, data: bytes) -> bool:
        """The first line is a rollout line (an envelope or the pre-envelope header)."""
        head = data[:SNIFF_BYTES].lstrip()
        if not head.startswith(b"{"):
            return False
        first = head.split(b"\n", 1)[0]
        try:
            value = json.loads(first)
        except ValueError:  # a first line longer than the window: look at its opening keys
            return re.match(rb'\{\s*"(timestamp|type)"\s*:\s*"[^"]*"\s*,\s*"(type|payload)"', first) is not None \
                and b'"session_meta"' in first[:200]
        if not isinstance(value, dict):
            return False
        if value.get("type") in ENVELOPE_TYPES and isinstance(value.get("payload"), dict):
            return True
        return "type" not in value and isinstance(value.get("id"), str) and b'{"record_type"' in head

    def read(self, data: bytes) -> SourceFacts:
        return _Reader(data).facts()


WITNESS = CodexWitness()


# --- reading ------------------------------------------------------------------


def _excerpt(text: str) -> str:
    return text if len(text) <= EXCERPT else text[: EXCERPT - 1] + "…"


def _instant(stamp: str) -> datetime:
    text = stamp.upper().replace("Z", "+00:00")
    if "." in text:  # datetime takes at most six fraction digits
        whole, rest = text.split(".", 1)
        digits = re.match(r"\d+", rest).group(0)  # type: ignore[union-attr]
        text = f"{whole}.{digits[:6].ljust(6, '0')}{rest[len(digits):]}"
    text = text.replace(":60", ":59")  # a leap second sorts with the second before it
    return datetime.fromisoformat(text)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _text(mapping: dict[str, Any], key: str) -> str | None:
    value = mapping.get(key)
    return value if isinstance(value, str) and value else None


def _texts(content: Any) -> tuple[str, ...] | None:
    if not isinstance(content, list):
        return None
    return tuple(item["text"] for item in content if isinstance(item, dict)
                 and item.get("type") in TEXT_ITEMS and isinstance(item.get("text"), str))


class _Line:
    __slots__ = ("number", "kind", "payload", "ts", "raw")

    def __init__(self, number: int, kind: str, payload: dict[str, Any], ts: str | None, raw: str) -> None:
        self.number, self.kind, self.payload, self.ts, self.raw = number, kind, payload, ts, raw

    def where(self) -> Where:
        return Where(self.number, _excerpt(self.raw))


class _Reader:
    """One read of one rollout."""

    def __init__(self, data: bytes) -> None:
        self.lines = self._parse(data)
        self.skipped: dict[str, int] = {}
        self.optional: set[str] = set()

    # -- lines --

    @staticmethod
    def _parse(data: bytes) -> list[_Line]:
        if not data.strip():
            raise NotThisFormat("the input is empty; a rollout has at least one line")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise NotThisFormat(f"the input is not UTF-8 (bad byte at offset {error.start})") from None
        values: list[tuple[int, dict[str, Any], str]] = []
        for number, raw in enumerate(text.split("\n"), 1):
            if not raw.strip():
                continue
            try:
                value = loads(raw)
            except (ValueError, RecursionError) as error:
                raise NotThisFormat(f"line {number} is not JSON ({str(error).splitlines()[0]})") from None
            if not isinstance(value, dict):
                raise NotThisFormat(f"line {number} is not a JSON object")
            values.append((number, value, raw))
        number, first, raw = values[0]
        if first.get("type") in ENVELOPE_TYPES:
            return [_Reader._envelope(n, v, r) for n, v, r in values]
        if "type" not in first and isinstance(first.get("id"), str):
            return _Reader._pre_envelope(values)
        raise NotThisFormat(f"line {number} is neither a rollout line (type and payload) nor a rollout header")

    @staticmethod
    def _envelope(number: int, value: dict[str, Any], raw: str) -> _Line:
        kind, payload, ts = value.get("type"), value.get("payload"), value.get("timestamp")
        if not isinstance(kind, str):
            raise NotThisFormat(f"line {number} has no type; it is not a rollout line")
        if not isinstance(payload, dict):
            raise NotThisFormat(f"line {number}: a {kind} line without a payload object")
        if ts is not None and not is_timestamp(ts):
            raise NotThisFormat(f"line {number}: timestamp {ts!r} is not an RFC 3339 date-time")
        return _Line(number, kind, payload, ts, raw)

    @staticmethod
    def _pre_envelope(values: list[tuple[int, dict[str, Any], str]]) -> list[_Line]:
        (number, header, raw), rest = values[0], values[1:]
        lines = [_Line(number, "session_meta", header, None, raw)]
        for number, value, raw in rest:
            if "record_type" in value:
                continue
            if not isinstance(value.get("type"), str):
                raise NotThisFormat(f"line {number} has no type; it is not a rollout line")
            ts = value.get("timestamp")
            if ts is not None and not is_timestamp(ts):
                raise NotThisFormat(f"line {number}: timestamp {ts!r} is not an RFC 3339 date-time")
            lines.append(_Line(number, "response_item", value, ts, raw))
        return lines

    # -- facts --

    def facts(self) -> SourceFacts:
        facts = SourceFacts(format=FORMAT, records_exit_codes=True)
        metas = [line for line in self.lines if line.kind == "session_meta"]
        if not metas:
            raise NotThisFormat("no session_meta line; this is not a Codex rollout")
        meta = metas[0]
        session = _text(meta.payload, "id") or _text(meta.payload, "session_id")
        if session is None:
            raise NotThisFormat(f"line {meta.number}: session_meta has no session id")
        facts.session_ids = frozenset({session})
        facts.agent_version = _text(meta.payload, "cli_version")
        versions = (_text(line.payload, "cli_version") for line in metas)
        facts.agent_versions = tuple(dict.fromkeys(v for v in versions if v is not None))
        times = [line.ts for line in self.lines if line.ts is not None]
        if is_timestamp(meta.payload.get("timestamp")):
            times.append(meta.payload["timestamp"])
        facts.times = frozenset(times)
        if times:
            facts.earliest_time = min(times, key=_instant)
        # The approval policy of each turn is the rollout's permission mode (ASR-187 holds snapshots to it).
        facts.permission_modes = frozenset(
            line.payload["approval_policy"] for line in self.lines
            if line.kind == "turn_context" and isinstance(line.payload.get("approval_policy"), str)
        )
        facts.calls = self._calls()
        facts.results = self._results({c.call_id for c in facts.calls})
        facts.messages = self._messages(facts.skipped)
        facts.skipped.update(self.skipped)
        facts.optional_ids = frozenset(self.optional)
        facts.transitions = self._transitions()
        facts.permissions = self._refusals()
        facts.turn_links = self._turn_links()
        facts.triggers = frozenset(t for line in self.lines if any(f'"{k}"' in line.raw for k in TRIGGER_KEYS)
                                   for t in strings_under(loads(line.raw), TRIGGER_KEYS))
        facts.configs = self._configs()
        facts.questions = self._questions()
        facts.hooks = self._hooks()
        facts.subagents = self._subagents(meta)
        facts.providers = self._providers()
        # Unified exec sessions (exec_command, write_stdin) are processes the witness does not follow: with
        # one, terminals are not reported; without, the rollout records no process lifecycle (ASR-291).
        facts.terminals = None if any(c.name in UNIFIED_EXEC for c in facts.calls) else ()
        for line in self.lines:
            kind = line.payload.get("type") if line.kind in ("response_item", "event_msg") else line.kind
            if kind in ("reasoning", "agent_reasoning", "compacted", "compaction", "context_compacted",
                        "web_search_call", "local_shell_call"):
                facts.skipped[str(kind)] = facts.skipped.get(str(kind), 0) + 1
        return facts

    def _items(self, *kinds: str) -> list[_Line]:
        out = []
        for line in self.lines:
            if line.kind != "response_item":
                continue
            kind = line.payload.get("type")
            if not isinstance(kind, str):
                raise NotThisFormat(f"line {line.number}: a response_item without a type")
            if kind in kinds:
                out.append(line)
        return out

    def _events(self, *kinds: str) -> list[_Line]:
        out = []
        for line in self.lines:
            if line.kind != "event_msg":
                continue
            kind = line.payload.get("type")
            if not isinstance(kind, str):
                raise NotThisFormat(f"line {line.number}: an event_msg without a type")
            if kind in kinds:
                out.append(line)
        return out

    def _calls(self) -> list[NativeCall]:
        calls = []
        for line in self._items("function_call", "custom_tool_call"):
            item = line.payload
            call_id, name = item.get("call_id"), item.get("name")
            if not isinstance(call_id, str) or not call_id or not isinstance(name, str) or not name:
                raise NotThisFormat(f"line {line.number}: a {item['type']} without a call_id or a name")
            arguments: Any = None
            arguments_text: str | None = None
            raw = item.get("arguments") if item["type"] == "function_call" else item.get("input")
            if isinstance(raw, (dict, list)):  # arguments already held as JSON rather than JSON text
                arguments, arguments_text = (raw, None) if fits(raw) else (None, json.dumps(raw, ensure_ascii=False))
            elif raw is not None and not isinstance(raw, str):
                raise NotThisFormat(f"line {line.number}: {item['type']} arguments are neither text nor JSON")
            elif isinstance(raw, str):
                if item["type"] == "function_call":
                    try:
                        arguments = loads(raw)
                    except (ValueError, RecursionError):
                        arguments_text = raw
                    else:
                        if not fits(arguments):
                            arguments, arguments_text = None, raw
                else:
                    arguments_text = raw  # free-form input is text even when it looks like JSON
            namespace = item.get("namespace")
            spelled = {"name": _qualified(namespace, name)} if isinstance(namespace, str) and namespace else {}
            calls.append(NativeCall(call_id=call_id, name=name, where=line.where(), arguments=arguments,
                                    arguments_text=arguments_text, requested_by="model", ts=line.ts, updates=spelled))
        return calls

    def _outcomes(self) -> dict[str, _Line]:
        """The last outcome event per call ID (a later event for the same call supersedes)."""
        outcomes: dict[str, _Line] = {}
        for line in self._events(*OUTCOME_EVENTS):
            call_id = line.payload.get("call_id")
            if not isinstance(call_id, str) or not call_id:
                raise NotThisFormat(f"line {line.number}: a {line.payload['type']} event without a call_id")
            code = line.payload.get("exit_code")
            if code is not None and _int(code) is None:
                raise NotThisFormat(f"line {line.number}: exit_code {code!r} is not an integer")
            outcomes[call_id] = line
        return outcomes

    def _results(self, call_ids: set[str]) -> list[NativeResult]:
        outcomes = self._outcomes()
        results = []
        answered: set[str] = set()
        for line in self._items("function_call_output", "custom_tool_call_output"):
            item = line.payload
            call_id = item.get("call_id")
            if not isinstance(call_id, str) or not call_id:
                raise NotThisFormat(f"line {line.number}: a {item['type']} without a call_id")
            output = item.get("output")
            if isinstance(output, str):
                texts: tuple[str, ...] | None = (output,)
            elif isinstance(output, dict) and isinstance(output.get("content"), str):
                texts = (output["content"],)
            else:
                texts = _texts(output)
            if texts is None:
                raise NotThisFormat(f"line {line.number}: {item['type']} output is neither text nor content items")
            answered.add(call_id)
            event = outcomes.get(call_id)
            results.append(self._result(line, call_id, texts, output, event.payload if event else None))
        for call_id, line in outcomes.items():
            if call_id in answered:
                continue
            if call_id in call_ids:  # the call's outcome, though its output was never written
                results.append(self._result(line, call_id, None, None, line.payload))
            else:  # a person's shell command (source user_shell) or another call the rollout does not hold
                kind = f"{line.payload['type']} without a call"
                self.skipped[kind] = self.skipped.get(kind, 0) + 1
                self.optional.add(call_id)  # not demanded; its values are checked when a stream writes it
                results.append(replace(self._result(line, call_id, None, None, line.payload), optional=True))
        results.sort(key=lambda r: r.where.line)
        return results

    @staticmethod
    def _result(line: _Line, call_id: str, texts: tuple[str, ...] | None, output: Any,
                event: dict[str, Any] | None) -> NativeResult:
        exit_code = None
        timing = Timing()
        if event is not None and event.get("type") == "exec_command_end":
            exit_code = _int(event.get("exit_code"))
            duration_ms = None
            duration = event.get("duration")
            if isinstance(duration, dict):
                secs, nanos = _int(duration.get("secs")), _int(duration.get("nanos"))
                if secs is not None and nanos is not None and secs >= 0 and nanos >= 0:
                    duration_ms = secs * 1000 + nanos / 1_000_000
            timing = Timing(started_at=_epoch_ms(event.get("started_at_ms")),
                            completed_at=_epoch_ms(event.get("completed_at_ms")), duration_ms=duration_ms)
        statuses = _statuses(output, event)
        return NativeResult(where=line.where(), call_id=call_id, statuses=statuses,
                            model_texts=texts, exit_code=exit_code, timing=timing, ts=line.ts,
                            ruled_out=frozenset() if statuses else NO_REFUSAL)

    def _configs(self) -> tuple[NativeConfig, ...]:
        """Each turn's configuration (ASR-187); a turn whose model, effort, approval policy or sandbox differs from
        the last turn's records a change (ASR-172)."""
        found: list[NativeConfig] = []
        for line in self.lines:
            if line.kind != "turn_context":
                continue
            payload = line.payload
            values = {member: frozenset({v} if v is not None else ()) for member, v in (
                ("model", _text(payload, "model")), ("effort", _text(payload, "effort")),
                ("permissionMode", _text(payload, "approval_policy")), ("sandbox", _sandbox_mode(payload)))}
            change = bool(found) and values != found[-1].values
            found.append(NativeConfig(line.where(), values, change, line.ts))
        return tuple(found)

    def _refusals(self) -> tuple[NativePermission, ...]:
        """Codex persists no approval request in a rollout; a declined outcome is the only decision it records
        (a refusal, by no recorded decider)."""
        return tuple(NativePermission(line.where(), call_id, decisions=REFUSALS)
                     for call_id, line in self._outcomes().items()
                     if line.payload.get("status") in ("declined", "rejected"))

    def _questions(self) -> list[NativeQuestion]:
        """Each ``request_user_input`` call and the answers its output records (ASR-285). Codex persists neither the
        request event nor the person's reply as such: the call's arguments hold the questions, and its output is
        ``{"answers": {question ID: {"answers": [...]}}}`` when the person answered; any other output (the
        cancellation message, an error, no output at all) records no answer."""
        outputs = {line.payload.get("call_id"): line for line in self._items("function_call_output")}
        found = []
        for line in self._items("function_call"):
            if line.payload.get("name") != ASK_TOOL or not isinstance(line.payload.get("call_id"), str):
                continue
            call_id = line.payload["call_id"]
            asked = _json_object(line.payload.get("arguments"))
            questions = [q for q in asked.get("questions") or () if isinstance(q, dict)] \
                if isinstance(asked.get("questions"), list) else []
            texts = tuple(q["question"] for q in questions if isinstance(q.get("question"), str))
            answered = outputs.get(call_id)
            answers = _answers(answered.payload.get("output")) if answered is not None else None
            found.append(NativeQuestion(call_id=call_id, questions=texts, answers=answers,
                                        where=(answered or line).where(),
                                        secret=any(q.get("isSecret") is True for q in questions)))
        return found

    def _providers(self) -> dict[str, frozenset[tuple[str | None, str | None]]]:
        """Tool identities recorded in separate fields (ASR-255): an MCP outcome event's ``invocation`` (``server``
        and ``tool``), and a call's own ``namespace`` beside its ``name`` (newer rollouts: the tool is the name, the
        namespace says where it comes from). A call with neither records its identity only in its composite name
        (``mcp__server__tool``, where a server's own ``_`` make the split ambiguous)."""
        found: dict[str, set[tuple[str | None, str | None]]] = {}
        for line in self._items("function_call", "custom_tool_call"):
            call_id, name = line.payload.get("call_id"), line.payload.get("name")
            if isinstance(call_id, str) and isinstance(line.payload.get("namespace"), str):
                found.setdefault(call_id, set()).add((None, name if isinstance(name, str) else None))
        for line in self._events("mcp_tool_call_begin", "mcp_tool_call_end"):
            invocation = line.payload.get("invocation")
            call_id = line.payload.get("call_id")
            if isinstance(call_id, str) and isinstance(invocation, dict):
                server, tool = _text(invocation, "server"), _text(invocation, "tool")
                if server or tool:
                    found.setdefault(call_id, set()).add((server, tool))
        return {call_id: frozenset(pairs) for call_id, pairs in found.items()}

    def _subagents(self, meta: _Line) -> tuple[NativeSubagent, ...]:
        """A rollout whose ``session_meta`` source is ``{"subagent": ...}`` is a subagent's own thread; in any rollout
        a ``collab_agent_spawn_begin`` or ``_end`` event records a subagent started by the call it names, with the
        prompt it was given (its own records are in its own rollout, not here)."""
        found: list[NativeSubagent] = []
        source = meta.payload.get("source")
        if isinstance(source, dict) and "subagent" in source:
            found.append(NativeSubagent(meta.where(), _text(meta.payload, "id") or _text(meta.payload, "session_id"),
                                        whole_input=True))
        spawned: dict[str, int] = {}
        for line in self._events(*SPAWN_EVENTS):
            call_id = _text(line.payload, "call_id")
            prompt = _text(line.payload, "prompt")
            subagent = NativeSubagent(line.where(), _text(line.payload, "new_thread_id"),
                                      prompts=(prompt,) if prompt else (), parent_call_id=call_id)
            if call_id is not None and call_id in spawned:  # the end event of a begun spawn: one subagent
                found[spawned[call_id]] = subagent
            else:
                spawned[call_id or f"line {line.number}"] = len(found)
                found.append(subagent)
        return tuple(found)

    def _hooks(self) -> tuple[NativeHook, ...]:
        """The hook runs a rollout records: only through what a hook injected, a user-role message wrapped in
        ``<hook_prompt hook_run_id="...">``. Codex never persists its hook start and completion events, so no
        execution detail (exit code, streams, duration, timeout) of any run is recorded (ASR-287)."""
        found = []
        for line in self._items("message"):
            texts = _texts(line.payload.get("content")) or ()
            if line.payload.get("role") == "user" and any(t.lstrip().startswith(HOOK_PROMPT) for t in texts):
                found.append(NativeHook(line.where()))
        return tuple(found)

    def _turn_links(self) -> frozenset[tuple[str, str, str]]:
        """Each ``parent_turn_id`` and ``root_turn_id`` a line of a turn records, with that line's ``turn_id``
        (ASR-183): the only turn links a state record of that turn may carry."""
        links: set[tuple[str, str, str]] = set()
        for line in self.lines:
            if not any(f'"{key}"' in line.raw for key in TURN_LINKS):
                continue
            turn = _text(line.payload, "turn_id")
            for key, member in TURN_LINKS.items():
                linked = _text(line.payload, key)
                if turn and linked:
                    links.add((turn, member, linked))
        return frozenset(links)

    def _transitions(self) -> tuple[NativeTransition, ...]:
        """Turn starts, ends and aborts, errors and shutdown, as recorded (ASR-169); an abort's reason is
        its stop reason, written as recorded or as ACP's ``cancelled``."""
        found = []
        for line in self._events(*TRANSITION_EVENTS):
            kind = line.payload["type"]
            reason = _text(line.payload, "reason")
            reasons = frozenset({reason, "cancelled"}) if kind == "turn_aborted" and reason else None
            found.append(NativeTransition(where=line.where(), states=TRANSITION_EVENTS[kind],
                                          turn_id=_text(line.payload, "turn_id"), stop_reasons=reasons, ts=line.ts))
        return tuple(found)

    def _messages(self, skipped: dict[str, int]) -> list[NativeMessage]:
        typed = {line.payload["message"] for line in self._events("user_message")
                 if isinstance(line.payload.get("message"), str)}
        has_events = bool(typed)
        item_texts: dict[str, set[str]] = {"user": set(), "assistant": set()}
        messages: list[NativeMessage] = []
        for line in self._items("message"):
            item = line.payload
            role = item.get("role")
            texts = _texts(item.get("content"))
            if not isinstance(role, str) or texts is None:
                raise NotThisFormat(f"line {line.number}: a message without a role or a content list")
            if role not in item_texts:
                skipped[f"{role} messages"] = skipped.get(f"{role} messages", 0) + 1
                continue
            item_texts[role].update({"".join(texts), *texts})
            if role == "user" and not _typed(texts, typed, has_events):
                skipped["injected user messages"] = skipped.get("injected user messages", 0) + 1
                continue
            if role == "user" and has_events:  # the typed text; image tags around it are not demanded
                joined = "".join(texts)
                texts = (joined,) if joined in typed else tuple(t for t in texts if t in typed)
            messages.append(NativeMessage(role=role, texts=texts, where=line.where(),
                                          native_id=_text(item, "id"), ts=line.ts))
        for line in self._events("user_message", "agent_message"):
            text = line.payload.get("message")
            if not isinstance(text, str):
                continue  # an event without text holds nothing to keep
            role = "user" if line.payload["type"] == "user_message" else "assistant"
            if text not in item_texts[role]:
                messages.append(NativeMessage(role=role, texts=(text,), where=line.where(), ts=line.ts))
        messages.sort(key=lambda m: m.where.line)
        return messages


def _qualified(namespace: str, name: str) -> tuple[str, ...]:
    """The names a call recorded as ``namespace`` and ``name`` may be written as besides its bare name (ASR-252 does
    not say which is the tool name as requested): joined as Codex spells MCP tools (``mcp__server__tool``) or with a
    dot (``image_gen.imagegen``, the older spelling)."""
    joined = namespace + name if namespace.endswith("__") else f"{namespace}__{name}"
    return (joined, f"{namespace}.{name}")


def _json_object(value: Any) -> dict[str, Any]:
    """A call's arguments or an output as a JSON object (text parsed); ``{}`` when it is none."""
    if isinstance(value, str):
        try:
            value = loads(value)
        except (ValueError, RecursionError):
            return {}
    return value if isinstance(value, dict) else {}


def _answers(output: Any) -> tuple[str, ...] | None:
    """The answers a ``request_user_input`` output records, every question's in order; ``None`` when the output
    is not Codex's answer object (the request was cancelled or failed: no answer is recorded)."""
    answers = _json_object(output).get("answers")
    if not isinstance(answers, dict):
        return None
    return tuple(a for entry in answers.values() if isinstance(entry, dict) and isinstance(entry.get("answers"), list)
                 for a in entry["answers"] if isinstance(a, str))


def _sandbox_mode(payload: dict[str, Any]) -> str | None:
    """The sandbox policy's name: the policy itself when it is text, else its ``type`` or ``mode``."""
    policy = payload.get("sandbox_policy")
    if isinstance(policy, str) and policy:
        return policy
    if isinstance(policy, dict):
        return _text(policy, "type") or _text(policy, "mode")
    return None


def _epoch_ms(value: Any) -> str | None:
    """A time recorded as milliseconds since the epoch (0 means unset), as an RFC 3339 UTC time."""
    millis = _int(value)
    if millis is None or millis <= 0 or millis > 253402300799999:
        return None
    moment = datetime.fromtimestamp(millis // 1000, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{millis % 1000:03d}Z"


def _typed(texts: tuple[str, ...], typed: set[str], has_events: bool) -> bool:
    """Whether a user message item is the person's input rather than injected context."""
    if has_events:
        return "".join(texts) in typed or any(t in typed for t in texts)
    return not any(t.lstrip().startswith(INJECTED_OPENINGS) for t in texts[:1])


def _statuses(output: Any, event: dict[str, Any] | None) -> frozenset[str]:
    """Stream statuses consistent with the outcome the rollout records (ASR-258); empty means any."""
    if event is not None:
        word = event.get("status")
        if isinstance(word, str) and word in STATUS_WORDS:
            return STATUS_WORDS[word]
        if isinstance(event.get("success"), bool):
            return COMPLETED if event["success"] else FAILED
        result = event.get("result")
        if isinstance(result, dict) and ("Ok" in result or "Err" in result):
            ok = result.get("Ok")
            failed = "Err" in result or (isinstance(ok, dict) and ok.get("isError") is True)
            return FAILED if failed else COMPLETED
        code = _int(event.get("exit_code"))
        if code is not None:  # a process exit status without Codex's own verdict: not completed if non-zero
            return FAILED | {"unknown"} if code != 0 else COMPLETED | {"unknown"}
    if isinstance(output, dict) and isinstance(output.get("success"), bool):
        return COMPLETED if output["success"] else FAILED
    return frozenset()



__all__ = ["CodexWitness", "FORMAT", "WITNESS"]
