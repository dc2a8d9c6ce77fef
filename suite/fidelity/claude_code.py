"""The witness for Claude Code transcripts (``~/.claude/projects/<project>/<session>.jsonl``).

It reads a transcript on its own terms, never through a converter, and keeps only what every
faithful converter must preserve. What the format is, as learned from real transcripts:

* One JSON object per line, each with a string ``type``. ``user`` and ``assistant`` lines carry
  ``message.content`` (a string, or a list of blocks) with ``uuid``, ``timestamp``,
  ``sessionId``, ``version``; an assistant response is often split over several lines that share
  ``message.id``, one block per line.
* ``tool_use`` blocks (assistant lines) are calls: ``id``, ``name``, ``input``, and in recent
  versions ``caller`` (``{"type": "direct"}``, or a code-execution tool that ran it).
* ``tool_result`` blocks (user lines) are results: ``tool_use_id``, ``content`` (what the model
  received), ``is_error`` (absent on many). ``toolUseResult`` beside them is the tool's own
  structured output (raw, not what reached the model); some tools record a duration there.
  Claude Code records no numeric exit code for shell commands (``returnCodeInterpretation`` is
  descriptive text, ASR-260).
* Subagent files (``<session>/subagents/agent-<id>.jsonl``) look the same, every line marked
  ``isSidechain: true`` with an ``agentId``; their ``sessionId`` is the parent session's.
* ``progress`` lines (hook, bash, agent progress), ``system`` lines (``compact_boundary``,
  ``turn_duration``, ``stop_hook_summary``, ``local_command``), ``file-history-snapshot``,
  ``queue-operation``, ``summary`` and ``permission-mode`` lines carry no conversation text a
  converter must keep. ``agent_progress`` lines copy a subagent's messages (kept in its own
  file) and record the Task call that ran them (``parentToolUseID``): a parent link.
* User lines that are not the person's words: ``isMeta`` (skill bodies, reminders),
  ``isCompactSummary`` (the summary after compaction), command echo and output
  (``<command-name>``, ``<local-command-stdout>``, ...), task notifications and the
  ``[Request interrupted by user]`` markers. A faithful converter may map these to other
  records (instructions, compaction, hook messages, state), so no message is demanded for them.
* Hook runs (ASR-287): ``hook_progress`` lines (event and command, no outcome), the Stop hook
  summary (``stop_hook_summary``: no exit code or output per hook), and ``hook_*`` attachments,
  whose ``exitCode``, ``stdout``, ``stderr``, ``content`` and ``durationMs`` are the only execution
  details a ``hook`` record may carry.
* Configuration (ASR-172, 187): ``permissionMode`` where a line records it, a change where a
  ``permission-mode`` line sets it or it differs from the last; local commands (``/model``...)
  are change points whose values are not read. Background shells (``run_in_background``) are the
  processes whose lifecycle the transcript records (``terminals``). Side conversations
  (``isSidechain`` chains of ``parentUuid``; a subagent file is one) are ``subagents``.
* Approvals (ASR-279, 157, 270): a ``tool_result`` with ``is_error`` whose text is the refusal at the
  permission prompt (``The user doesn't want to proceed with this tool use.``, the person's words
  after it when they typed some) is a request shown and refused by the person; nothing else about
  the request is recorded. A hook, attachment or system line with ``toolUseID`` that speaks of a
  decision allows any decision, decider, rule and reviews for that call.
* Triggers (ASR-186): the strings the members that say how a turn started hold, wherever a line has
  one: ``turnOrigin`` (newer versions write ``human``, ``scheduled``, ``task_notification``, ``agent``),
  ``origin`` (its ``kind``, such as ``task-notification``), ``promptSource`` and ``scheduledTaskId``. A
  converter may take its ``native`` from any of them; a transcript with none records no trigger, so a
  ``trigger`` in its stream is invented.
* Transitions (ASR-169): ``system`` and ``queue-operation`` lines, interrupt markers and the
  harness's own API-error replies are where the transcript records a change of status, without
  saying which; a ``state`` record elsewhere (at a prompt, at a reply) is synthesized.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from asr_conformance.fidelity.facts import (
    ABSENT,
    PERMISSION_PROVENANCE,
    NativeCall,
    NativeConfig,
    NativeHook,
    NativeMessage,
    NativePermission,
    NativeQuestion,
    NativeResult,
    NativeSubagent,
    NativeTerminal,
    NativeTransition,
    NotThisFormat,
    SourceFacts,
    Timing,
    Where,
    strings_under,
)
from asr_conformance.fidelity.timestamps import parse_instant
from asr_conformance.vocabulary.strict_json import no_constant

try:  # orjson is a dependency of the suite; the witness still works without it
    import orjson as _orjson
except ImportError:  # pragma: no cover - exercised only where orjson is missing
    _orjson = None  # type: ignore[assignment]  # the module or None: mypy types an import as the module

FORMAT = "claude-code-jsonl"
#: Line types only Claude Code writes; one of them must appear before the witness answers yes.
CLAUDE_TYPES = frozenset({
    "user", "assistant", "system", "summary", "progress", "file-history-snapshot",
    "queue-operation", "permission-mode", "attachment", "custom-title", "last-prompt",
})
#: Keys that tie such a line to Claude Code rather than to any JSONL with a ``type``.
CLAUDE_KEYS = ("sessionId", "uuid", "leafUuid", "messageId", "parentUuid", "isSidechain")
#: Text the harness writes into user lines; converters may record it as something else.
HARNESS_PREFIXES = (
    "<command-name>", "<command-message>", "<command-args>", "<local-command-stdout>",
    "<local-command-stderr>", "<local-command-caveat>", "<task-notification>", "<system-reminder>",
    "<bash-input>", "<bash-stdout>", "<bash-stderr>", "<user-prompt-submit-hook>",
    "[Request interrupted by user", "Caveat: The messages below were generated by the user",
)
#: toolUseResult members that record how long the tool ran, with their unit in milliseconds.
DURATION_KEYS = (("durationMs", 1.0), ("totalDurationMs", 1.0), ("durationSeconds", 1000.0))
EXCERPT = 200
SNIFF_BYTES = 65536
#: Line types that record a change of session or turn status (ASR-169): compaction, turn ends, API
#: errors and hook summaries (``system``), prompts queued and dequeued (``queue-operation``).
TRANSITION_LINES = frozenset({"system", "queue-operation"})
#: Members of a hook attachment that record a run's execution, with the JSON types they must have.
HOOK_DETAIL_KINDS: dict[str, tuple[type, ...]] = {
    "exitCode": (int,), "stdout": (str,), "stderr": (str,), "durationMs": (int, float), "timedOut": (bool,)}
#: The marker Claude Code writes when the person stops a turn.
INTERRUPTED = "[Request interrupted by user"
ANSWERED = "User has answered your questions:"
#: Placeholder text Claude Code writes for an empty response; a converter may leave it out.
PLACEHOLDERS = frozenset({"(no content)"})
ANY_DECIDER = frozenset({"*"})
#: The text Claude Code returns to the model when the person refuses a tool use at its permission prompt
#: (followed, when the person typed one, by what they said). It records a request shown and a refusal.
REJECTED_PREFIX = "The user doesn't want to proceed with this tool use."
#: The decisions a person's refusal at the prompt is consistent with; the transcript does not say which.
REFUSALS = frozenset({"reject_once", "reject_always"})
#: The member in which Claude Code records what started a turn (a scheduled task's ``scheduled``...).
TRIGGER_KEYS = frozenset({"turnOrigin", "origin", "promptSource", "scheduledTaskId"})


def _excerpt(line: bytes | str) -> str:
    text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
    return text if len(text) <= EXCERPT else text[: EXCERPT - 1] + "…"


def _excerpt_at(where: Where, raw: bytes, needle: str) -> Where:
    """The same line, excerpted around the value that matters (a call's ID, a message's text)."""
    at = raw.find(json.dumps(needle, ensure_ascii=False)[1:-1][:60].encode("utf-8"))
    if at <= 0:
        return where
    start = max(0, at - 60)
    return Where(where.line, ("…" if start else "") + _excerpt(raw[start:]))


#: A run of digits as long as the smallest integer orjson turns into a float (beyond 64 bits); a line
#: holding one is parsed by the standard library, which keeps every integer exact.
_LONG_DIGITS = re.compile(rb"\d{19}")


def _loads(raw: bytes) -> Any:
    """One line as JSON; orjson when it can, the standard library for what orjson refuses or would
    change (integers past 64 bits, which orjson reads as floats)."""
    if _orjson is not None and not _LONG_DIGITS.search(raw):
        try:
            return _orjson.loads(raw)
        except _orjson.JSONDecodeError:
            pass  # big integers, lone surrogates: let the strict standard parser decide
    value = json.loads(raw.decode("utf-8"), parse_constant=no_constant)
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("number out of range")
    return value


def iter_lines(data: bytes) -> Iterator[tuple[int, bytes, dict[str, Any]]]:
    """(line number, raw line, object) for each non-blank line; ``NotThisFormat`` names the bad line."""
    if not data.strip():
        raise NotThisFormat("the input is empty: a Claude Code transcript has at least one line")
    for number, raw in enumerate(data.split(b"\n"), 1):
        if not raw.strip():
            continue
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise NotThisFormat(f"line {number}: not UTF-8 text (bad byte at column {error.start + 1})") from None
        try:
            value = _loads(raw)
        except (ValueError, RecursionError) as error:
            reason = (str(error).splitlines() or ["invalid JSON"])[0]
            raise NotThisFormat(f"line {number}: not valid JSON ({reason}): {_excerpt(raw)}") from None
        if not isinstance(value, dict):
            raise NotThisFormat(f"line {number}: not a JSON object: {_excerpt(raw)}")
        if not isinstance(value.get("type"), str):
            raise NotThisFormat(f"line {number}: no string 'type', so not a Claude Code transcript line")
        yield number, raw, value


def looks_like_claude_code(line: dict[str, Any]) -> bool:
    return line.get("type") in CLAUDE_TYPES and any(key in line for key in CLAUDE_KEYS)


def _is_harness_text(text: str) -> bool:
    return text.lstrip().startswith(HARNESS_PREFIXES)


class ClaudeCodeWitness:
    """Reads Claude Code JSONL transcripts, main session files and subagent files alike."""

    format = FORMAT

    def accepts_format_name(self, name: str) -> bool:
        """Any name that says Claude Code and nothing contrary: ``claude-code-jsonl``,
        ``claude_code``, ``Claude Code transcript``, ``claude-code/jsonl``, ``claudecode``.

        Vendors spell formats freely; what must not pass is a name of another format (the
        Claude Agent SDK stream, an ACP recording), which names a protocol, not the transcript.
        """
        words = re.sub(r"[^a-z0-9]+", " ", name.lower()).split()
        joined = "".join(words)
        if "claudecode" not in joined:
            return False
        return not any(word in words for word in ("sdk", "acp", "stream", "api", "protocol"))

    def sniff(self, data: bytes) -> bool:
        """True when the first complete lines are JSON objects and one is plainly Claude Code's."""
        head = data[:SNIFF_BYTES]
        lines = head.split(b"\n")
        if len(data) > SNIFF_BYTES:
            lines = lines[:-1]  # the last piece may be cut
        seen = False
        for raw in lines[:20]:
            if not raw.strip():
                continue
            try:
                value = _loads(raw)
            except (ValueError, RecursionError):
                return False
            if not isinstance(value, dict) or not isinstance(value.get("type"), str):
                return False
            seen = seen or looks_like_claude_code(value)
        if not lines and head.lstrip().startswith(b"{"):  # one line longer than the window
            return bool(re.search(rb'"type"\s*:\s*"(user|assistant|summary|system)"', head)) and b'"sessionId"' in head
        return seen

    def read(self, data: bytes) -> SourceFacts:
        """The facts of one transcript; ``NotThisFormat`` names the first line it cannot read."""
        return _Reading().run(data)


class _Reading:
    """One pass over a transcript, collecting facts in file order."""

    def __init__(self) -> None:
        self.facts = SourceFacts(format=FORMAT)
        self.session_ids: list[str] = []
        self.agent_ids: list[str] = []
        self.versions: list[str] = []
        self.times: set[str] = set()
        self.parent_links: dict[str, set[str]] = {}
        self.skipped: Counter[str] = Counter()
        self.questions: dict[str, tuple[NativeCall, tuple[str, ...]]] = {}
        self.answers: dict[str, tuple[tuple[str, ...], Where]] = {}
        self.response_times: dict[str, set[str]] = {}
        self.modes: set[str] = set()
        self.configs: list[NativeConfig] = []
        self.last_time: str | None = None
        self.last_mode: str | None = None
        self.untimed: list[int] = []  # configs without a time, waiting for the next line's
        self.call_responses: list[str | None] = []
        self.transitions: list[NativeTransition] = []
        self.hooks: list[NativeHook] = []
        #: Approvals: refusals at the permission prompt, and decisions that lines about one tool use speak of.
        self.permissions: list[NativePermission] = []
        self.triggers: set[str] = set()
        #: Side conversations by the uuid of their first line: where, agentId, calls, message uuids, prompt.
        self.chains: dict[str, dict[str, Any]] = {}
        self.chain_of: dict[str, str] = {}  # a sidechain line's uuid -> the first line of its conversation
        self.main_lines = 0
        #: Background shells by the call that started them, with the task ID its result records.
        self.background: dict[str, tuple[Where, str | None]] = {}

    def run(self, data: bytes) -> SourceFacts:
        recognised = False
        for number, raw, line in iter_lines(data):
            recognised = recognised or looks_like_claude_code(line)
            self.line(number, raw, line)
        if not recognised:
            raise NotThisFormat("no line looks like a Claude Code transcript line (no sessionId, uuid or leafUuid)")
        if not self.session_ids:
            raise NotThisFormat("no line carries a sessionId, so this is not a Claude Code session transcript")
        return self.finish()

    def finish(self) -> SourceFacts:
        facts = self.facts
        # Every sessionId the file records: a resumed session's file can begin with lines copied from
        # the session it continues, so no single one is "the" ID by position alone.
        ids = set(self.session_ids)
        for agent in self.agent_ids[:1]:  # a subagent file: its own ID is a native session ID too
            ids |= {agent, f"agent-{agent}"}
        facts.session_ids = frozenset(ids)
        facts.agent_versions = tuple(dict.fromkeys(self.versions))
        facts.agent_version = facts.agent_versions[0] if facts.agent_versions else None
        facts.times = frozenset(self.times)
        facts.permission_modes = frozenset(self.modes)
        facts.configs = tuple(self.configs)
        instants = [(parse_instant(t), t) for t in self.times]
        facts.earliest_time = min(instants)[1] if instants else None
        facts.parent_links = {k: frozenset(v) for k, v in self.parent_links.items()}
        facts.transitions = tuple(self.transitions)
        facts.hooks = tuple(self.hooks)
        facts.permissions = tuple(self.permissions)
        facts.triggers = frozenset(self.triggers)
        # A background shell's later reads (BashOutput) are not followed: its exit code and output not checked.
        facts.terminals = tuple(NativeTerminal(where, call_id, task, details_read=False)
                                for call_id, (where, task) in self.background.items())
        facts.subagents = tuple(
            NativeSubagent(c["where"], c["agent"], frozenset(c["calls"]), frozenset(c["messages"]), tuple(c["prompt"]),
                           whole_input=not self.main_lines and len(self.chains) == 1)
            for c in self.chains.values())
        facts.skipped = dict(self.skipped)
        facts.questions = [self.question(call_id, call, texts) for call_id, (call, texts) in self.questions.items()]
        facts.calls = [self.with_response_times(call, response) for call, response in zip(facts.calls, self.call_responses, strict=False)]
        return facts

    def with_response_times(self, call: NativeCall, response: str | None) -> NativeCall:
        times = self.response_times.get(response or "", set()) - {call.ts}
        return replace(call, other_ts=frozenset(times)) if times else call

    def question(self, call_id: str, call: NativeCall, texts: tuple[str, ...]) -> NativeQuestion:
        answers, where = self.answers.get(call_id, (None, call.where))
        return NativeQuestion(call_id=call_id, questions=texts, answers=answers, where=where)

    # --- one line -------------------------------------------------------------

    def line(self, number: int, raw: bytes, line: dict[str, Any]) -> None:
        where = Where(number, _excerpt(raw))
        ts = self.timestamp(number, line.get("timestamp"))
        self.note_identity(line)
        if ts is not None:
            for index in self.untimed:  # a line without a time sits between its neighbours' times
                self.configs[index] = replace(self.configs[index], other_ts=self.configs[index].other_ts | {ts})
            self.untimed.clear()
        self.config(where, raw, line, ts)
        if any(b'"%s"' % key.encode() in raw for key in TRIGGER_KEYS):
            self.triggers |= strings_under(line, TRIGGER_KEYS)
        if ts is not None:
            self.last_time = ts
        kind = line["type"]
        if kind in ("user", "assistant"):
            self.message_line(number, where, raw, line, ts)
        elif kind == "progress":
            self.progress(line)
            self.decision_near(where, raw, line)
            self.hook(where, line)
        elif kind == "file-history-snapshot":
            snapshot = line.get("snapshot")
            if isinstance(snapshot, dict):
                self.timestamp(number, snapshot.get("timestamp"), required=False)
            self.skipped[kind] += 1
        else:
            self.decision_near(where, raw, line)
            self.skipped[f"{kind}:{line.get('subtype')}" if "subtype" in line else kind] += 1
            if kind in TRANSITION_LINES:
                self.transition(where, line, ts)
            self.hook(where, line)

    def config(self, where: Where, raw: bytes, line: dict[str, Any], ts: str | None) -> None:
        """Configuration points (ASR-172, 187): the permission mode where a line records it (a change where a
        permission-mode line sets it or it differs from the last), and local commands (``/model``,
        ``/permissions``...), which may change configuration the witness does not read."""
        mode = line.get("permissionMode")
        if isinstance(mode, str):
            change = line["type"] == "permission-mode" or (self.last_mode is not None and mode != self.last_mode)
            self.last_mode = mode
            self.modes.add(mode)
            self.configs.append(NativeConfig(where, {"permissionMode": frozenset({mode})}, change, ts))
        elif line.get("subtype") == "local_command" or (line["type"] == "user" and b"<command-name>/" in raw):
            self.configs.append(NativeConfig(where, {}, True, ts))
        else:
            return
        if ts is None:
            self.untimed.append(len(self.configs) - 1)
            if self.last_time is not None:
                self.configs[-1] = replace(self.configs[-1], other_ts=frozenset({self.last_time}))

    def hook(self, where: Where, line: dict[str, Any]) -> None:
        """Hook runs: hook progress (event and command), a Stop hook summary, and hook attachments, the
        only lines that may record a run's exit code, output or duration (ASR-287)."""
        data = line.get("data") if line["type"] == "progress" else line.get("attachment")
        if line.get("subtype") == "stop_hook_summary":
            self.hooks.append(NativeHook(where, "Stop"))
        elif isinstance(data, dict) and str(data.get("type", "")).startswith("hook"):
            event = data.get("hookEvent")
            details = {key: data[key] for key, kinds in HOOK_DETAIL_KINDS.items()
                       if isinstance(data.get(key), kinds) and not (key == "exitCode" and isinstance(data[key], bool))}
            if isinstance(data.get("content"), str):
                details["output"] = data["content"]
            self.hooks.append(NativeHook(where, event if isinstance(event, str) else None, details))

    def transition(self, where: Where, line: dict[str, Any], ts: str | None) -> None:
        """A line where the transcript records a change of status; which change is not recorded (ASR-169)."""
        prompt = line.get("promptId")
        self.transitions.append(NativeTransition(where=where, turn_id=prompt if isinstance(prompt, str) else None, ts=ts))

    def decision_near(self, where: Where, raw: bytes, line: dict[str, Any]) -> None:
        """A hook, attachment or system line that speaks of a decision for one tool use (ASR-270).

        Which decider such a line establishes is not documented, so any ``decidedBy`` for that call
        is accepted; what is refused is a decider for a call the transcript says nothing about.
        """
        tool = line.get("toolUseID")
        if isinstance(tool, str) and b"ecision" in raw:
            self.facts.decided_by[tool] = ANY_DECIDER
            # What the decision was, and its decider, rule or review, is not documented: any of them passes.
            self.permissions.append(NativePermission(
                where, tool, decisions=frozenset(), decided_by=ANY_DECIDER,
                provenance=frozenset(PERMISSION_PROVENANCE)))

    def timestamp(self, number: int, value: Any, required: bool = True) -> str | None:
        if value is None:
            return None
        if not isinstance(value, str) or parse_instant(value) is None:
            if not required:
                return None
            raise NotThisFormat(f"line {number}: timestamp {value!r} is not an RFC 3339 date-time")
        self.times.add(value)
        return value

    def note_identity(self, line: dict[str, Any]) -> None:
        for key, store in (("sessionId", self.session_ids), ("agentId", self.agent_ids), ("version", self.versions)):
            value = line.get(key)
            if isinstance(value, str) and value and (not store or store[-1] != value):
                store.append(value)

    def progress(self, line: dict[str, Any]) -> None:
        """Agent progress copies a subagent's lines and records the Task call that ran them."""
        self.skipped["progress"] += 1
        data, parent = line.get("data"), line.get("parentToolUseID")
        if not isinstance(data, dict) or not isinstance(parent, str):
            return
        copied = data.get("message")
        if not isinstance(copied, dict):
            return
        stamp = copied.get("timestamp")
        if isinstance(stamp, str) and parse_instant(stamp) is not None:
            self.times.add(stamp)
        inner = copied.get("message")
        content = inner.get("content") if isinstance(inner, dict) else None
        for block in content if isinstance(content, list) else ():
            if isinstance(block, dict) and block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                self.parent_links.setdefault(block["id"], set()).add(parent)

    def message_line(self, number: int, where: Where, raw: bytes, line: dict[str, Any], ts: str | None) -> None:
        message = line.get("message")
        if not isinstance(message, dict):
            raise NotThisFormat(f"line {number}: a {line['type']} line without a message object")
        content = message.get("content")
        if isinstance(content, str):
            blocks: list[Any] = [{"type": "text", "text": content}]
        elif isinstance(content, list):
            blocks = content
        else:
            raise NotThisFormat(f"line {number}: message.content is neither text nor a list of blocks")
        results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
        response = message.get("id") if line["type"] == "assistant" and isinstance(message.get("id"), str) else None
        if response is not None and ts is not None:
            self.response_times.setdefault(response, set()).add(ts)
        texts: list[str] = []
        chain = self.side_conversation(where, line)
        for index, block in enumerate(blocks):
            if not isinstance(block, dict) or not isinstance(block.get("type"), str):
                raise NotThisFormat(f"line {number}: content block {index} has no type")
            kind = block["type"]
            if kind == "text":
                if not isinstance(block.get("text"), str):
                    raise NotThisFormat(f"line {number}: text block {index} has no text")
                texts.append(block["text"])
            elif kind == "tool_use":
                self.call(number, index, _excerpt_at(where, raw, str(block.get("id"))), line, block, ts)
                self.call_responses.append(response)
                if chain is not None and isinstance(block.get("id"), str):
                    chain["calls"].add(block["id"])
            elif kind == "tool_result":
                self.result(number, index, _excerpt_at(where, raw, str(block.get("tool_use_id"))), line, block, ts,
                            len(results))
        self.message(_excerpt_at(where, raw, texts[0]) if texts else where, line, texts, ts)
        if chain is not None and line["type"] == "user" and not chain["prompt"] and not results:
            chain["prompt"] = [t for t in texts if t.strip()]

    def side_conversation(self, where: Where, line: dict[str, Any]) -> dict[str, Any] | None:
        """The subagent conversation a sidechain line belongs to: the chain of ``parentUuid`` links back to a
        line whose parent is not a sidechain line (parallel subagents written inline are separate chains)."""
        if line.get("isSidechain") is not True:
            self.main_lines += 1
            return None
        uuid, parent = line.get("uuid"), line.get("parentUuid")
        root = self.chain_of.get(parent) if isinstance(parent, str) else None
        if root is None:
            root = uuid if isinstance(uuid, str) else f"line {where.line}"
            agent = line.get("agentId")
            self.chains[root] = {"where": where, "agent": agent if isinstance(agent, str) else None,
                                 "calls": set(), "messages": set(), "prompt": []}
        if isinstance(uuid, str):
            self.chain_of[uuid] = root
            self.chains[root]["messages"].add(uuid)
        return self.chains[root]

    def message(self, where: Where, line: dict[str, Any], texts: list[str], ts: str | None) -> None:
        """A message is demanded only for text that is plainly the person's or the model's own."""
        role = line["type"]
        if role == "assistant" and (line.get("isApiErrorMessage") is True or _model(line) == "<synthetic>"):
            self.skipped["assistant:synthetic"] += len(texts)  # the harness's own error text, often a state record
            self.transition(where, line, ts)
            return
        if role == "user":
            for flag in ("isMeta", "isCompactSummary", "isVisibleInTranscriptOnly"):
                if line.get(flag) is True:
                    self.skipped[f"user:{flag}"] += len(texts)
                    return
        kept = []
        for text in texts:
            if not text.strip() or text in PLACEHOLDERS:
                self.skipped[f"{role}:blank"] += 1
            elif role == "user" and _is_harness_text(text):
                self.skipped["user:harness-text"] += 1
                if text.lstrip().startswith(INTERRUPTED):
                    self.transition(where, line, ts)
            else:
                kept.append(text)
        if kept:
            native = line.get("uuid") if isinstance(line.get("uuid"), str) else None
            sidechain = line.get("isSidechain") is True
            self.facts.messages.append(NativeMessage(role=role, texts=tuple(kept), where=where, native_id=native, ts=ts,
                                                     sidechain=sidechain))

    def call(self, number: int, index: int, where: Where, line: dict[str, Any], block: dict[str, Any], ts: str | None) -> None:
        call_id, name = block.get("id"), block.get("name")
        if not isinstance(call_id, str) or not call_id or not isinstance(name, str):
            raise NotThisFormat(f"line {number}: tool_use block {index} lacks a string id or name")
        requested_by, parent = self.requester(line, block)
        call = NativeCall(call_id=call_id, name=name, where=where, arguments=block.get("input"),
                          requested_by=requested_by, parent_call_id=parent, ts=ts,
                          sidechain=line.get("isSidechain") is True, has_arguments="input" in block)
        self.facts.calls.append(call)
        arguments = block.get("input")
        if isinstance(arguments, dict) and arguments.get("run_in_background") is True and call_id not in self.background:
            self.background[call_id] = (where, None)  # a process that outlives the call (ASR-286)
        if name == "AskUserQuestion":
            self.questions[call_id] = (call, _question_texts(block.get("input")))

    @staticmethod
    def requester(line: dict[str, Any], block: dict[str, Any]) -> tuple[str | None, str | None]:
        """Who asked (ASR-274) and the containing call (ASR-275), from the block's own ``caller``."""
        if line["type"] != "assistant":
            return ABSENT, None  # not part of a model response, and no requester recorded (ASR-274)
        caller = block.get("caller")
        if not isinstance(caller, dict) or caller.get("type") in (None, "direct"):
            return "model", None
        tool = caller.get("tool_id")
        return "code", tool if isinstance(tool, str) and tool else None

    def result(self, number: int, index: int, where: Where, line: dict[str, Any], block: dict[str, Any], ts: str | None,
               siblings: int) -> None:
        native = block.get("tool_use_id")
        if native is not None and (not isinstance(native, str) or not native):
            raise NotThisFormat(f"line {number}: tool_result block {index} has a tool_use_id that is not a string")
        is_error = block.get("is_error")
        if is_error is not None and not isinstance(is_error, bool):
            raise NotThisFormat(f"line {number}: tool_result block {index} has an is_error that is not true or false")
        texts = _result_texts(number, index, block.get("content"))
        raw = line.get("toolUseResult") if siblings == 1 else None
        self.facts.results.append(NativeResult(
            where=where, call_id=native, statuses=_statuses(is_error), model_texts=texts,
            exit_code=_exit_code(raw), timing=Timing(duration_ms=_duration(raw)), ts=ts,
            sidechain=line.get("isSidechain") is True))
        if isinstance(native, str) and native in self.background and isinstance(raw, dict) \
                and isinstance(raw.get("backgroundTaskId"), str):
            self.background[native] = (self.background[native][0], raw["backgroundTaskId"])
        if isinstance(native, str) and is_error is True and any(t.startswith(REJECTED_PREFIX) for t in texts):
            # The person refused the call at the permission prompt: a request shown and decided (ASR-279, ASR-157),
            # by the person (ASR-270). Nothing else about the request (title, options, rule) is recorded.
            self.permissions.append(NativePermission(
                where, native, request_recorded=True, status="resolved", decisions=REFUSALS,
                decided_by=frozenset({"user"})))
        if isinstance(native, str):
            answers = _answers(raw, texts)
            if answers is not None:
                self.answers[native] = (answers, where)


def _model(line: dict[str, Any]) -> object:
    message = line.get("message")
    return message.get("model") if isinstance(message, dict) else None


def _statuses(is_error: bool | None) -> frozenset[str]:
    """ASR-258: the API's own flag. An error may be a failure, a refusal or an interruption."""
    if is_error is True:
        return frozenset({"failed", "denied", "cancelled", "interrupted"})
    if is_error is False:
        return frozenset({"completed"})
    return frozenset({"completed", "unknown"})  # absent: the API reads it as success; unknown is honest too


def _result_texts(number: int, index: int, content: Any) -> tuple[str, ...]:
    if content is None:
        return ()
    if isinstance(content, str):
        return (content,)
    if not isinstance(content, list):
        raise NotThisFormat(f"line {number}: tool_result block {index} has content that is neither text nor a list")
    texts = []
    for part in content:
        if not isinstance(part, dict) or not isinstance(part.get("type"), str):
            raise NotThisFormat(f"line {number}: tool_result block {index} holds a part without a type")
        if part["type"] == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
    return tuple(texts)


def _exit_code(raw: Any) -> int | None:
    """Only a numeric exit code the tool output records itself; none of today's tools do."""
    if isinstance(raw, dict):
        for key in ("exitCode", "exit_code"):
            value = raw.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
    return None


def _duration(raw: Any) -> float | None:
    if isinstance(raw, dict):
        for key, scale in DURATION_KEYS:
            value = raw.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return float(value) * scale
    return None


def _question_texts(arguments: Any) -> tuple[str, ...]:
    questions = arguments.get("questions") if isinstance(arguments, dict) else None
    return tuple(q["question"] for q in questions or () if isinstance(q, dict) and isinstance(q.get("question"), str))


def _answers(raw: Any, texts: tuple[str, ...]) -> tuple[str, ...] | None:
    """AskUserQuestion answers: ``toolUseResult.answers`` (question -> answer), else the result text."""
    if isinstance(raw, dict) and isinstance(raw.get("answers"), dict):
        return tuple(str(v) for v in raw["answers"].values())
    if any(text.startswith(ANSWERED) for text in texts):
        return texts
    return None


WITNESS = ClaudeCodeWitness()


__all__ = ["ClaudeCodeWitness", "FORMAT", "WITNESS"]
