"""The witness for Gemini CLI sessions (~/.gemini/tmp/<project hash>/chats/session-*.jsonl and .json).

One format, ``gemini-cli-session``, in two layouts that the witness tells apart by the bytes:

- **jsonl** (Gemini CLI since its April 2026 releases): a metadata line (``sessionId``,
  ``projectHash``, ``startTime``, ``lastUpdated``, optional ``kind``, ``directories``), then
  message records appended as they change. A message is appended again whole under its ``id``
  each time it changes (its tool calls run, its tokens come in): the last copy of an id wins and
  keeps the place of the first. ``{"$set": {...}}`` records update the metadata; a ``$set``
  holding ``messages`` is a checkpoint that replaces the whole conversation. ``{"$rewindTo": id}``
  removes that message and every later one (all of them when the id is unknown).
- **json** (earlier releases): one pretty-printed ``ConversationRecord`` object with ``messages``.
  Values carry a JSON pointer in their ``Where`` (``/messages/3/toolCalls/0``) beside the line
  where the message's ``id`` is written.

What the witness demands is the conversation Gemini CLI itself loads when it resumes the session
(its ``loadConversationRecord``): messages of type ``user`` (role user, minus the injected
``<session_context>`` / ``<hook_context>`` text and slash commands, which a converter may record as
other things) and ``gemini`` (role assistant), their text parts byte for byte, and the
``toolCalls`` of ``gemini`` messages.

**Rewound and replaced messages** (removed by ``$rewindTo`` or a checkpoint) are neither demanded
nor forbidden. They did happen (their tools ran), but Gemini drops them from the conversation it
resumes; the spec pages under test do not say whether a stream keeps abandoned history (the
Lineage and revisions sections are not among them), so either reading passes: a stream may keep
them as history or leave them out. Their times stay times the source records (ASR-104).

**Tool calls**: ``id`` (native, ASR-262), the exact ``name`` (ASR-252), ``args`` (ASR-254),
requested by the model (they sit in the model's message, ASR-274), ``ts`` the call's
``timestamp`` or that of its message (any recorded copy). No call links to a parent (ASR-275);
``agentId`` names a subagent's own session file, not a call. Gemini records no tool kind and
publishes no mapping of names to kinds, so ``kind`` must be absent (ASR-253).

**Results**, by ``status`` (ASR-258, 265): ``success`` -> completed; ``error`` -> failed;
``cancelled`` -> cancelled or interrupted (Gemini writes cancelled for a call stopped while
waiting or while running, and records no refusal apart from it, so never denied);
``validating``, ``scheduled``, ``awaiting_approval`` and ``executing`` mean the call has no result
yet: it is dangling, and a stream that gives it one fails ASR-265. An unknown status word with a
result records no outcome (any status). What reached the model is ``result``: its text parts and
each ``functionResponse.response``'s ``output`` or ``error`` text; a ``null`` result records none,
so the stream's ``content`` must be absent (ASR-259). Gemini records no exit code and no timing
(ASR-260, 261, 267). A call ``awaiting_approval`` is an approval request shown and unanswered
(``permissions``: pending, no decision); no other approval and no process lifecycle is recorded.

**Triggers and turn links**: no record says what started a turn or the session, apart from the metadata's
``kind`` (``main``, ``subagent``), the only native trigger value (ASR-186); no turn ID is recorded, so no
``parentTurn`` or ``rootTurn`` comes from the source (ASR-183).

**Times**: every ``timestamp``, ``startTime`` and ``lastUpdated`` the file holds. The header's
``sessionId`` is one the metadata records (ASR-051); no agent version is recorded.

Malformed input raises ``NotThisFormat`` naming the line; nothing here raises anything else.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from asr_conformance.fidelity.facts import (
    NativeCall,
    NativeMessage,
    NativePermission,
    NativeResult,
    NativeSubagent,
    NativeTransition,
    NotThisFormat,
    SourceFacts,
    Where,
)
from asr_conformance.vocabulary.strict_json import fits, is_timestamp, loads

FORMAT = "gemini-cli-session"
#: Spellings of the format name a vendor may write in ``producer.source.format`` (after lower-casing
#: and turning ``_``, ``.`` and spaces into ``-``).
FORMAT_NAMES = frozenset({
    "gemini-cli-session", "gemini-cli-sessions", "gemini-cli-jsonl", "gemini-cli-json", "gemini-cli",
    "gemini", "gemini-session", "gemini-jsonl", "gemini-json", "gemini-cli-chat", "gemini-chat",
    "google-gemini-cli", "gemini-cli-session-jsonl", "gemini-cli-session-json", "gemini-cli-conversation",
})
#: Statuses of a call that has finished, and the stream statuses each is consistent with (ASR-258).
TERMINAL = {"success": frozenset({"completed"}), "error": frozenset({"failed"}),
            "cancelled": frozenset({"cancelled", "interrupted"})}
#: Statuses of a call that has no result yet (ASR-265).
PENDING = frozenset({"validating", "scheduled", "awaiting_approval", "executing"})
#: The status of a call whose confirmation is shown and not yet answered: a pending approval request.
AWAITING = "awaiting_approval"
#: User-message openings Gemini itself does not count as conversation (its isIgnoredUserContent).
IGNORED_OPENINGS = ("/", "?", "<session_context>", "<hook_context>")
MESSAGE_TYPES = frozenset({"user", "gemini", "info", "error", "warning"})
NOTICE_TYPES = frozenset({"info", "error", "warning"})
EXCERPT = 200
SNIFF_BYTES = 1 << 16


class GeminiWitness:
    """Reads Gemini CLI sessions (format ``gemini-cli-session``, both layouts) into ``SourceFacts``."""

    format = FORMAT

    def accepts_format_name(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        return re.sub(r"[\s_.]+", "-", name.strip().lower()) in FORMAT_NAMES

    def sniff(self, data: bytes) -> bool:
        """A metadata line (sessionId and projectHash) first, or one object that opens with them."""
        return layout_of(data) is not None

    def read(self, data: bytes) -> SourceFacts:
        return _facts(read_session(data))


WITNESS = GeminiWitness()


def layout_of(data: bytes) -> str | None:
    """``jsonl``, ``json`` or None, read as JSON: no dependence on key order, indentation or line breaks.

    A first line that is a whole object is the jsonl metadata line (or, alone, a compact session
    object); otherwise the input is one object over several lines, parsed whole. Only input that is
    not JSON as a whole (damaged) falls back to the head's text: ``sessionId`` and ``projectHash``
    written as members anywhere in it, in any order."""
    head = data[:SNIFF_BYTES].lstrip()
    if not head.startswith(b"{"):
        return None
    first = head.split(b"\n", 1)[0].strip()
    value = _object(first)
    if value is not None:
        if not _is_metadata(value):
            return None
        return "json" if isinstance(value.get("messages"), list) and b"\n" not in head.rstrip() else "jsonl"
    whole = _object(data)
    if whole is not None:
        return "json" if _is_metadata(whole) else None
    if _MEMBER_SESSION_ID.search(head) and _MEMBER_PROJECT_HASH.search(head):
        return "json"
    return None


#: ``"sessionId": "`` and ``"projectHash":`` written as members (not inside a string, whose quotes are escaped).
_MEMBER_SESSION_ID = re.compile(rb'(?<!\\)"sessionId"\s*:\s*"')
_MEMBER_PROJECT_HASH = re.compile(rb'(?<!\\)"projectHash"\s*:')


def _object(text: bytes) -> dict[str, Any] | None:
    """``text`` as a JSON object, or None (not JSON, or not an object)."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _is_metadata(value: dict[str, Any]) -> bool:
    return isinstance(value.get("sessionId"), str) and isinstance(value.get("projectHash"), str)


# --- reading ------------------------------------------------------------------


def _instant(stamp: str) -> datetime:
    text = stamp.upper().replace("Z", "+00:00")
    if "." in text:
        whole, rest = text.split(".", 1)
        digits = re.match(r"\d+", rest).group(0)  # type: ignore[union-attr]
        text = f"{whole}.{digits[:6].ljust(6, '0')}{rest[len(digits):]}"
    return datetime.fromisoformat(text.replace(":60", ":59"))


def _excerpt(text: str) -> str:
    return text if len(text) <= EXCERPT else text[: EXCERPT - 1] + "…"


@dataclass
class Copy:
    """One recorded copy of a message: the record and where it is."""

    record: dict[str, Any]
    where: Where
    #: The pointer prefix of the message inside its line or document ("" for a message line of its own).
    pointer: str = ""


@dataclass
class Session:
    """A session as Gemini CLI loads it: metadata, the live messages, and every copy ever recorded."""

    layout: str
    session_ids: list[str] = field(default_factory=list)
    #: Each live message ID's winning copy, in conversation order.
    live: dict[str, Copy] = field(default_factory=dict)
    #: Every copy of every message (live or not), in file order.
    copies: list[Copy] = field(default_factory=list)
    #: IDs removed by a rewind or a checkpoint and not recorded again.
    removed: set[str] = field(default_factory=set)
    times: list[str] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)
    #: The metadata's ``kind`` (``main`` or ``subagent``) and the line that says it, when recorded.
    kind: tuple[str, int] | None = None


def read_session(data: bytes) -> Session:
    """Both layouts; ``NotThisFormat`` naming the line for anything malformed."""
    if not data.strip():
        raise NotThisFormat("the input is empty; a Gemini CLI session has at least a metadata line")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise NotThisFormat(f"the input is not UTF-8 (bad byte at offset {error.start})") from None
    layout = layout_of(data)
    if layout is None:
        raise NotThisFormat("line 1 is neither a Gemini CLI metadata line (sessionId, projectHash) nor the "
                            "opening of a session object")
    session = Session(layout)
    if layout == "json":
        _read_document(text, session)
    else:
        _read_lines(text, session)
    if not session.session_ids:
        raise NotThisFormat("no metadata records a sessionId; this is not a Gemini CLI session")
    return session


def _read_document(text: str, session: Session) -> None:
    try:
        value = loads(text)
    except (ValueError, RecursionError) as error:
        line = getattr(error, "lineno", 1)
        raise NotThisFormat(f"line {line}: the session object is not JSON ({str(error).splitlines()[0]})") from None
    if not isinstance(value, dict) or not isinstance(value.get("messages"), list):
        raise NotThisFormat("line 1: the session object has no messages array")
    _metadata(value, 1, session)
    offset = 0
    lines = text.split("\n")
    for index, message in enumerate(value["messages"]):
        line, offset = _line_of(text, message.get("id") if isinstance(message, dict) else None, offset)
        where = Where(line, _excerpt(lines[line - 1].strip()), pointer=f"/messages/{index}")
        _message(message, where, f"/messages/{index}", session)


def _line_of(text: str, message_id: Any, start: int) -> tuple[int, int]:
    """The line where a message's id is written, searching on from ``start`` (line 1 when not found)."""
    if isinstance(message_id, str):
        found = re.compile(r'"id"\s*:\s*' + re.escape(json.dumps(message_id))).search(text, start)
        if found is not None:
            return text.count("\n", 0, found.start()) + 1, found.end()
    return 1, start


def _read_lines(text: str, session: Session) -> None:
    for number, raw in enumerate(text.split("\n"), 1):
        if not raw.strip():
            continue
        try:
            value = loads(raw)
        except (ValueError, RecursionError) as error:
            raise NotThisFormat(f"line {number} is not JSON ({str(error).splitlines()[0]})") from None
        if not isinstance(value, dict):
            raise NotThisFormat(f"line {number} is not a JSON object")
        where = Where(number, _excerpt(raw))
        if "$rewindTo" in value:
            if not isinstance(value["$rewindTo"], str):
                raise NotThisFormat(f"line {number}: $rewindTo is not a message id")
            _rewind(value["$rewindTo"], session)
        elif isinstance(value.get("id"), str):
            _message(value, where, "", session)
        elif "$set" in value:
            if not isinstance(value["$set"], dict):
                raise NotThisFormat(f"line {number}: $set is not an object")
            _metadata(value["$set"], number, session, update=True)
            if isinstance(value["$set"].get("messages"), list):  # a checkpoint: the conversation anew
                session.removed |= set(session.live)
                session.live = {}
                for index, message in enumerate(value["$set"]["messages"]):
                    pointer = f"/$set/messages/{index}"
                    _message(message, Where(number, where.excerpt, pointer=pointer), pointer, session)
        elif isinstance(value.get("sessionId"), str) and isinstance(value.get("projectHash"), str):
            _metadata(value, number, session)
            for index, message in enumerate(value.get("messages") or ()):
                pointer = f"/messages/{index}"
                _message(message, Where(number, where.excerpt, pointer=pointer), pointer, session)
        else:
            session.skipped["unknown records"] = session.skipped.get("unknown records", 0) + 1


def _metadata(value: dict[str, Any], line: int, session: Session, update: bool = False) -> None:
    session_id = value.get("sessionId")
    if isinstance(session_id, str) and session_id:
        if session_id not in session.session_ids:
            session.session_ids.append(session_id)
    elif not update:
        raise NotThisFormat(f"line {line}: the session metadata has no sessionId")
    if isinstance(value.get("kind"), str):
        session.kind = (value["kind"], line)
    for key in ("startTime", "lastUpdated"):
        stamp = value.get(key)
        if stamp is None:
            continue
        if not is_timestamp(stamp):
            raise NotThisFormat(f"line {line}: {key} {stamp!r} is not an RFC 3339 date-time")
        session.times.append(stamp)


def _rewind(target: str, session: Session) -> None:
    """Gemini's rule: the target and everything after it go; everything goes when the target is unknown."""
    ids = list(session.live)
    cut = ids.index(target) if target in session.live else 0
    for gone in ids[cut:]:
        session.removed.add(gone)
        del session.live[gone]


def _message(value: Any, where: Where, pointer: str, session: Session) -> None:
    place = f"line {where.line}" + (f" at {pointer}" if pointer else "")
    if not isinstance(value, dict) or not isinstance(value.get("id"), str) or not value["id"]:
        raise NotThisFormat(f"{place}: a message without an id")
    kind, stamp = value.get("type"), value.get("timestamp")
    if not isinstance(kind, str):
        raise NotThisFormat(f"{place}: message {value['id']} has no type")
    if not is_timestamp(stamp):
        raise NotThisFormat(f"{place}: message {value['id']} has timestamp {stamp!r}, not an RFC 3339 date-time")
    session.times.append(stamp)
    calls = value.get("toolCalls")
    if calls is not None and not isinstance(calls, list):
        raise NotThisFormat(f"{place}: toolCalls of message {value['id']} is not a list")
    for index, call in enumerate(calls or ()):
        if not isinstance(call, dict) or not isinstance(call.get("id"), str) or not call["id"] \
                or not isinstance(call.get("name"), str) or not call["name"]:
            raise NotThisFormat(f"{place}: tool call {index} of message {value['id']} has no id or no name")
        if not isinstance(call.get("status"), str):
            raise NotThisFormat(f"{place}: tool call {call['id']} has no status")
        if "args" in call and not isinstance(call["args"], dict):
            raise NotThisFormat(f"{place}: the args of tool call {call['id']} are not an object")
        if call.get("timestamp") is not None:
            if not is_timestamp(call["timestamp"]):
                raise NotThisFormat(f"{place}: tool call {call['id']} has timestamp {call['timestamp']!r}")
            session.times.append(call["timestamp"])
        result_texts(call.get("result"), f"{place}: the result of tool call {call['id']}")
    for thought in value.get("thoughts") or () if isinstance(value.get("thoughts"), list) else ():
        if isinstance(thought, dict) and is_timestamp(thought.get("timestamp")):
            session.times.append(thought["timestamp"])
    copy = Copy(value, where, pointer)
    session.copies.append(copy)
    session.live[value["id"]] = copy  # a later copy replaces the earlier one in its place
    session.removed.discard(value["id"])


def texts_of(content: Any) -> tuple[str, ...]:
    """The text parts of a PartListUnion (a string, a part, or a list of them); thoughts are not text."""
    if isinstance(content, str):
        return (content,)
    parts = content if isinstance(content, list) else [content] if isinstance(content, dict) else []
    out = []
    for part in parts:
        if isinstance(part, str):
            out.append(part)
        elif isinstance(part, dict) and isinstance(part.get("text"), str) and not part.get("thought"):
            out.append(part["text"])
    return tuple(out)


def result_texts(result: Any, place: str) -> tuple[str, ...] | None:
    """What reached the model from a tool call's result: text parts, functionResponse output or error."""
    if result is None:
        return None
    if isinstance(result, str):
        return (result,)
    if not isinstance(result, (list, dict)):
        raise NotThisFormat(f"{place} is neither parts nor text")
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
    return tuple(out)


# --- facts ----------------------------------------------------------------------


def _facts(session: Session) -> SourceFacts:
    facts = SourceFacts(format=FORMAT, records_exit_codes=False)
    facts.session_ids = frozenset(session.session_ids)
    facts.times = frozenset(session.times)
    facts.earliest_time = min(session.times, key=_instant) if session.times else None
    stamps = _call_stamps(session)
    permissions: list[NativePermission] = []
    for copy in session.live.values():
        message, where = copy.record, copy.where
        kind = message["type"]
        texts = texts_of(message.get("content"))
        if kind == "user":
            if any(t.strip().startswith(IGNORED_OPENINGS) for t in texts[:1]) or not "".join(texts).strip():
                _count(facts.skipped, "injected or command user messages")
            else:
                facts.messages.append(NativeMessage("user", texts, where, native_id=message["id"],
                                                    ts=message["timestamp"]))
        elif kind == "gemini":
            if any(texts):
                facts.messages.append(NativeMessage("assistant", tuple(t for t in texts if t), where,
                                                    native_id=message["id"], ts=message["timestamp"]))
            if message.get("thoughts"):
                _count(facts.skipped, "thoughts")
            for index, call in enumerate(message.get("toolCalls") or ()):
                place = Where(where.line, where.excerpt, pointer=f"{copy.pointer}/toolCalls/{index}")
                _call(call, place, message, stamps, facts)
                if call["status"] == AWAITING:  # the confirmation shown and not yet answered (ASR-279)
                    permissions.append(NativePermission(place, call["id"], request_recorded=True, status="pending"))
        else:
            _count(facts.skipped, f"{kind} messages" if kind in MESSAGE_TYPES else "other messages")
    facts.transitions = _notices(session)
    facts.hooks = ()  # a session records hooks' injected context at most, never a run's exit code or output
    facts.permissions = tuple(permissions)  # only a pending confirmation; never who decided, nor a decision
    facts.terminals = ()  # a shell's output text at most, never a process's lifecycle (ASR-291)
    facts.subagents = _subagents(session, facts)
    facts.providers = {}  # a tool call records its name (and a display name), never its server apart (ASR-255)
    # No record has a member saying what started a turn or the session: the metadata's kind (main, subagent) is the
    # only value a trigger's native may take (ASR-186). No turn ID is recorded, so no turn link either (ASR-183).
    facts.triggers = frozenset({session.kind[0]}) if session.kind is not None else frozenset()
    facts.turn_links = frozenset()
    if session.removed:
        facts.skipped["rewound or replaced messages"] = len(session.removed)
    for key, count in session.skipped.items():
        facts.skipped[key] = facts.skipped.get(key, 0) + count
    return facts


def _subagents(session: Session, facts: SourceFacts) -> tuple[NativeSubagent, ...]:
    """A session whose metadata says ``kind: subagent`` is that subagent's own file; in any session a call that
    records an ``agentId`` delegated to that subagent (its records are in the subagent's own file, not here)."""
    found: list[NativeSubagent] = []
    if session.kind is not None and session.kind[0] == "subagent":
        ids = session.session_ids[:1]
        found.append(NativeSubagent(Where(session.kind[1], "kind: subagent"), ids[0] if ids else None, whole_input=True))
    places = {c.call_id: c.where for c in facts.calls}
    for copy in session.live.values():
        for call in copy.record.get("toolCalls") or ():
            agent = call.get("agentId")
            if isinstance(agent, str) and agent and call["id"] in places:
                found.append(NativeSubagent(places[call["id"]], agent, parent_call_id=call["id"]))
    return tuple(found)


def _notices(session: Session) -> tuple[NativeTransition, ...]:
    """Info, warning and error notices, the only places a session records a change of status (which one
    it does not say); a state record anywhere else is synthesized (ASR-169)."""
    return tuple(NativeTransition(where=copy.where, ts=copy.record["timestamp"]) for copy in session.copies
                 if copy.record.get("type") in NOTICE_TYPES)


def _call_stamps(session: Session) -> dict[str, set[str]]:
    """Every time recorded for each call ID and for the message holding it, over all copies."""
    stamps: dict[str, set[str]] = {}
    for copy in session.copies:
        for call in copy.record.get("toolCalls") or ():
            held = stamps.setdefault(call["id"], set())
            held.add(copy.record["timestamp"])
            if call.get("timestamp") is not None:
                held.add(call["timestamp"])
    return stamps


def _call(call: dict[str, Any], where: Where, message: dict[str, Any], stamps: dict[str, set[str]], facts: SourceFacts) -> None:
    args = call.get("args")
    arguments_text = None
    if isinstance(args, dict) and not fits(args):
        arguments_text = json.dumps(args, ensure_ascii=False, separators=(",", ":"))
    ts = call.get("timestamp") or message["timestamp"]
    facts.calls.append(NativeCall(
        call_id=call["id"], name=call["name"], where=where, arguments=args, arguments_text=arguments_text,
        requested_by="model", ts=ts, has_arguments="args" in call,
        other_ts=frozenset(stamps.get(call["id"], set()) | {message["timestamp"]}) - {ts}))
    status = call["status"]
    if status in PENDING:
        return  # no result yet: the call is dangling (ASR-265)
    texts = result_texts(call.get("result"), "")
    facts.results.append(NativeResult(
        where=where, call_id=call["id"], statuses=TERMINAL.get(status, frozenset()),
        model_texts=texts, ts=ts, content_recorded=texts is not None))


def _count(skipped: dict[str, int], key: str) -> None:
    skipped[key] = skipped.get(key, 0) + 1


__all__ = ["FORMAT", "GeminiWitness", "WITNESS", "layout_of", "read_session"]
