"""Hypothesis strategies for whole ASR streams, valid by construction.

``valid_streams()`` draws a header, then records one at a time in dependency
order, keeping the state a stream's cross-record rules depend on: roots,
participants and conversations declared so far, the content level in force,
calls and their call IDs, permission subjects, terminals and their latest
revision, turns already started.  Every record type of both pages is drawn,
with its optional members, so that every generated stream is accepted by the
reference validator (a property test holds the strategy to that).

``adversarial_streams()`` biases the same construction toward what naive
validators wrongly reject: duplicate native call IDs, records after an
``ended`` state, orphan results, dangling calls, pending permissions, vendor
profiles and ``_meta``, open-enum values nobody listed, boundary numbers and
Unicode in every string.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any, TypeVar

from hypothesis import strategies as st

from asr_conformance.vocabulary.terms import CONTENT_LEVELS

T = TypeVar("T")

# --- small value strategies -------------------------------------------------------

SAFE = 2**53 - 1
ids = st.builds(lambda head, tail: head + tail, st.sampled_from("abcdefgh"), st.text(alphabet="abcdefghij0123456789_-", max_size=7))
words = st.text(alphabet="abcdefghijklmnopqrstuvwxyz -_./", min_size=1, max_size=20)
#: Characters naive readers trip on: line and paragraph separators and NEL do not end a JSON Lines line.
LINE_SEPARATORS = st.sampled_from(["\u2028", "\u2029", "\x85"])
unicode_text = st.text(st.characters(exclude_categories=["Cs"]) | LINE_SEPARATORS, min_size=0, max_size=20)
timestamps = st.builds(
    lambda day, ms: f"2026-{day // 28 % 12 + 1:02d}-{day % 28 + 1:02d}T{ms // 3600000 % 24:02d}:"
    f"{ms // 60000 % 60:02d}:{ms // 1000 % 60:02d}.{ms % 1000:03d}Z",
    st.integers(0, 335), st.integers(0, 86_399_999),
)
#: The ends of the safe integer range (ASR-032), drawn as often as any other integer.
SAFE_ENDS = st.sampled_from([SAFE, -SAFE])
json_scalars = (st.none() | st.booleans() | st.integers(-SAFE, SAFE) | SAFE_ENDS
                | st.floats(allow_nan=False, allow_infinity=False, width=32) | words)
json_values = st.recursive(
    json_scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(words, inner, max_size=3), max_leaves=6
)
@cache
def open_enum(*listed: str) -> st.SearchStrategy[str]:
    """An open enumeration: the listed values, plus values nobody listed."""
    return st.sampled_from(listed) | st.sampled_from(("vendor_value", "x-other", "Zeta"))


@cache
def _index(size: int) -> st.SearchStrategy[int]:
    return st.integers(0, size - 1)


def pick(draw: st.DrawFn, items: Sequence[str] | set[str]) -> str:
    """One of ``items`` (which change as the stream grows, so no strategy is built per draw)."""
    ordered = sorted(items) if isinstance(items, set) else items
    return ordered[draw(_index(len(ordered)))]


@cache
def choice(*items: object) -> st.SearchStrategy:
    return st.sampled_from(items)


def one_value(draw: st.DrawFn, *values: T) -> T:
    """One of ``values`` (objects and arrays, which ``choice`` cannot cache), as a fresh copy."""
    return copy.deepcopy(values[draw(_index(len(values)))])


def only_one(draw: st.DrawFn, state: StreamState, members: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    """With 1/4 odds, just one of ``names`` (those present): the least a record of the type may hold."""
    present = [name for name in names if name in members]
    if present and state.reaches(draw, 4):
        kept = pick(draw, present)
        return {kept: members[kept]}
    return members


def maybe(draw: st.DrawFn, members: dict[str, Any], optional: dict[str, st.SearchStrategy]) -> None:
    """Add each optional member with even odds (so every one is reached, and each shrinks away)."""
    for name, strategy in optional.items():
        if draw(st.booleans()):
            members[name] = draw(strategy)


content_parts = st.lists(st.builds(lambda t: {"type": "text", "text": t}, words), min_size=1, max_size=2)
actors = st.sampled_from([{"address": "exec-auto-review"}, {"device": "dev_8f2c41"}, {"participant": "p1"}])
LOSSY = st.lists(st.sampled_from(["reasoning.signature", "tool_result.raw"]), unique=True)
EXTRA_PROFILES = st.lists(st.sampled_from(["coding", "lineage", "usage", "messaging", "_dev.example/x"]),
                          unique=True, max_size=3)
ROOT_PATHS = st.none() | st.builds(lambda w: "/work/" + w, ids)
TAGS = st.none() | st.lists(words, max_size=2)
COMMANDS = st.sampled_from(["cargo test", ["bash", "-lc", "ls"]])
PROCESS_IDS = st.integers(-SAFE, SAFE) | SAFE_ENDS | ids
TITLE_SOURCES = st.none() | open_enum("model", "user", "harness")
RESULT_OPTIONAL = {
    "displayContent": content_parts,
    "raw": json_values,
    "error": st.builds(lambda m, c: {"message": m, "code": c}, words, st.integers(0, 255) | words),
    "startedAt": timestamps,
    "completedAt": timestamps,
    "provider": st.builds(lambda k, n: {"kind": k, "server": "github", "tool": "get_pull_request", "name": n,
                                        "identity": "exact"}, open_enum("mcp", "plugin", "connector"), words),
}
EXEC_OPTIONAL = {"timedOut": st.booleans(), "stdout": words, "stderr": words, "output": words}
PERMISSION_OPTIONAL = {
    "title": words, "description": words, "selectedOptionId": st.just("allow"), "decider": actors,
    "rule": words, "reason": words, "rationale": words, "feedback": words, "decidedAt": timestamps,
}
PROVIDER_OPTIONAL = {"server": st.just("github"), "tool": st.just("get_pull_request"), "name": words}
MESSAGE_OPTIONAL = {"author": actors, "origin": open_enum("user", "channel", "harness"), "messageId": ids}
QUESTION_OPTIONAL = {"header": words, "multiSelect": st.booleans(), "allowOther": st.booleans()}
CALL_OPTIONAL = {"title": words, "inferenceId": ids}
#: The compact permission on a result: decision, and what else the pages give it.
COMPACT_PERMISSION_OPTIONAL = {"decidedBy": open_enum("user", "policy", "hook"), "rule": st.just("Bash(cargo test:*)")}
TERMINAL_OPTIONAL = {
    "description": words, "signal": st.sampled_from(["SIGKILL", "SIGTERM"]),
    "output": st.builds(lambda t: {"text": t}, words), "startedAt": timestamps, "completedAt": timestamps,
}
HOOK_OPTIONAL = {
    "hookId": ids, "name": words, "timedOut": st.booleans(), "stdout": words, "stderr": words,
    "output": content_parts, "durationMs": st.integers(0, 10**6) | st.floats(0, 1e6),
    "decision": st.sampled_from(["allow", "deny", "ask", "vendor_value"]),
}
INSTRUCTIONS_OPTIONAL = {
    "name": words, "uri": st.just("https://example.invalid/rules"), "truncated": st.booleans(),
    "digest": st.just("sha256:9b1f3c0e"), "scope": st.sampled_from(["session", "turn", "vendor_value"]),
}
DECLARATION_MEMBERS = st.sampled_from(["profiles", "lossy", "contentLevel", "roots", "participants", "conversations",
                                       "environment", "agentVersion", "producer"])
#: One member as often as several: a declaration of one member is the common case.
DECLARATION_CHOICES = st.lists(DECLARATION_MEMBERS, min_size=1, max_size=1) | st.lists(
    DECLARATION_MEMBERS, min_size=1, max_size=3, unique=True)


@dataclass
class StreamState:
    """What later records may refer to, and the numbers they must follow."""

    text: st.SearchStrategy[str] = words
    seq: int = 0
    records: list[dict[str, Any]] = field(default_factory=list)
    content_level: str = "full"
    roots: list[str] = field(default_factory=list)
    participants: list[str] = field(default_factory=list)
    conversations: list[str] = field(default_factory=list)
    #: callId -> callIdSource, for calls recorded once (pairable) or several times.
    calls: dict[str, str] = field(default_factory=dict)
    call_counts: dict[str, int] = field(default_factory=dict)
    permission_calls: set[str] = field(default_factory=set)
    compact_calls: set[str] = field(default_factory=set)
    #: terminalId -> id of its latest record.
    terminals: dict[str, str] = field(default_factory=dict)
    pending_permissions: dict[str, dict[str, Any]] = field(default_factory=dict)
    turn: str | None = None
    turn_started: bool = False
    started_turns: set[str] = field(default_factory=set)
    #: terminalIds an exec names before the terminal is recorded (the stream records them at its end).
    later_terminals: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    counter: int = 0
    #: Draw the shapes added so the fuzzer reaches every corpus case (issue 25); False leaves them out,
    #: the baseline the reach-cost benchmark (suite/benchmarks/test_fuzz_reach_cost.py) compares against.
    reach: bool = True

    def reaches(self, draw: st.DrawFn, odds: int) -> bool:
        """Whether to draw a reach shape, with 1/``odds`` odds (never in the baseline)."""
        return self.reach and draw(st.integers(0, odds - 1)) == 0

    def optional(self, optional: dict[str, st.SearchStrategy]) -> dict[str, st.SearchStrategy]:
        """A reach-only set of optional members: empty in the baseline."""
        return optional if self.reach else {}

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def add(self, draw: st.DrawFn, record_type: str, turn_record: bool = True, **members: object) -> dict[str, Any]:
        """Append a record with the envelope members, maybe in the current turn."""
        self.seq += draw(st.integers(1, 3))
        record: dict[str, Any] = {"type": record_type, "seq": self.seq, "id": self.fresh("r")}
        if draw(st.booleans()):
            record["ts"] = draw(timestamps)
        if turn_record and self.turn is not None and record_type != "session":
            record["turnId"] = self.turn
            if record_type != "compaction" and self.turn not in self.started_turns:
                self.started_turns.add(self.turn)
                if draw(st.booleans()):
                    record["trigger"] = draw(triggers())
        record.update(members)
        if draw(st.integers(0, 9)) == 0:  # a vendor note, or vendor keys each holding an object of its own
            note = draw(self.text)
            record["_meta"] = draw(choice("flat", "nested")) == "flat" and {"dev.example/note": note} or \
                {"dev.example": {"note": note}, "openclaw": {"lane": 2}}
        self.records.append(record)
        return record


@cache
def triggers() -> st.SearchStrategy[dict[str, Any]]:
    kinds = open_enum("schedule", "heartbeat", "event", "webhook", "task_completion", "peer",
                      "auto_continuation", "recovery", "manual")
    return st.one_of(
        st.builds(lambda k: {"kind": k}, kinds),
        st.builds(lambda n: {"native": n}, words),
        st.builds(lambda k, n, r: {"kind": k, "native": n, "runId": r, "schedule": "0 8 * * *"}, kinds, words, ids),
        st.builds(lambda k, a: {"kind": k, "source": a}, kinds, actors),
        st.builds(lambda n, i, why: {"native": n, "id": i, "reason": why}, words, ids, words),
    )


HEADER_OPTIONAL = {
    "authority": open_enum("local", "remote_cache", "remote_export", "mirror"),
    "scope": open_enum("primary", "subagent"),
    "namespace": st.none() | words,
    "environment": st.builds(lambda o, s, more: {"os": o, "shell": s, **more}, st.sampled_from(["linux", "darwin"]),
                             words, st.sampled_from([{}, {"arch": "arm64", "timezone": "Europe/Berlin"}])),
    "client": st.builds(lambda n, v: {"name": n, **v}, words, st.sampled_from([{}, {"version": "1.4.2"}])),
    "lineage": st.just({"root": True}),
    "conversationKey": words,
    "extensions": st.lists(st.builds(lambda i, r: {"id": i, "version": "1", "required": r}, ids, st.booleans()),
                           max_size=2),
    "trigger": triggers(),
}


PARTICIPANT_OPTIONAL = {"displayName": words, "role": open_enum("owner", "member", "guest"), "self": st.booleans()}
CONVERSATION_OPTIONAL = {"kind": open_enum("direct", "group", "channel", "thread"), "nativeId": ids}


# --- the header -----------------------------------------------------------------------


@st.composite
def headers(draw: st.DrawFn, state: StreamState) -> dict[str, Any]:
    method = draw(open_enum("native", "converter", "decoded", "recorder", "observer", "import"))
    producer: dict[str, Any] = {"name": draw(words), "version": "1.0.0", "method": method, "instance": state.fresh("inst-")}
    if method != "native" or draw(st.booleans()):
        producer["source"] = {"format": draw(words)}
        if draw(st.booleans()):
            producer["source"].update(formatVersion="37", agentVersion="2.1.305")
        producer["lossy"] = draw(LOSSY)
    profiles = ["core", *draw(EXTRA_PROFILES)]
    state.content_level = draw(choice(*CONTENT_LEVELS))
    header: dict[str, Any] = {
        "type": "session", "seq": 0, "id": "h", "formatVersion": "0.1",
        "agent": {"name": draw(choice("claude-code", "codex", "openclaw", "dev.example.agent"))},
        "sessionId": draw(ids), "producer": producer, "profiles": profiles, "contentLevel": state.content_level,
    }
    if draw(st.booleans()):
        header["agent"]["version"] = "2.1.305"
    if draw(st.booleans()):
        header["startedAt"] = draw(timestamps)
    if draw(st.booleans()):
        header["workspace"] = {"roots": draw(new_roots(state, min_size=1))}
    if draw(st.booleans()):
        header["participants"] = draw(new_participants(state))
    if draw(st.booleans()):
        header["conversations"] = draw(new_conversations(state))
    for name, strategy in HEADER_OPTIONAL.items():
        if draw(st.integers(0, 3)) == 0:
            header[name] = draw(strategy)
    state.records.append(header)
    return header


@st.composite
def new_roots(draw: st.DrawFn, state: StreamState, min_size: int = 0) -> list[dict[str, Any]]:
    roots = []
    for _ in range(draw(st.integers(min_size, 2))):
        root_id = state.fresh("root")
        root: dict[str, Any] = {"id": root_id, "path": draw(ROOT_PATHS)}
        if draw(st.booleans()):
            root["vcs"] = {"type": draw(open_enum("git", "jj", "hg", "svn", "other")), "branch": "main"}
        roots.append(root)
        state.roots.append(root_id)
    return roots


@st.composite
def new_participants(draw: st.DrawFn, state: StreamState) -> list[dict[str, Any]]:
    people = []
    for _ in range(draw(st.integers(1, 2))):
        person: dict[str, Any] = {"id": state.fresh("p")}
        if draw(st.booleans()):
            person["kind"] = draw(open_enum("human", "agent", "bot", "unknown"))
        if draw(st.booleans()):
            person["ids"] = [{"scheme": "whatsapp", "value": "+15125550147", "basis": draw(words)}]
        maybe(draw, person, state.optional(PARTICIPANT_OPTIONAL))
        people.append(person)
        state.participants.append(person["id"])
    return people


@st.composite
def new_conversations(draw: st.DrawFn, state: StreamState) -> list[dict[str, Any]]:
    conversations = []
    for _ in range(draw(st.integers(1, 2))):
        conversation: dict[str, Any] = {"id": state.fresh("c"), "channel": draw(open_enum("whatsapp", "slack", "web"))}
        if bool(state.conversations) and draw(st.booleans()):
            conversation["parent"] = pick(draw, state.conversations)
        maybe(draw, conversation, state.optional(CONVERSATION_OPTIONAL))
        conversations.append(conversation)
        state.conversations.append(conversation["id"])
    return conversations


def path_ref(draw: st.DrawFn, state: StreamState) -> dict[str, Any]:
    root = pick(draw, state.roots) if bool(state.roots) and draw(st.booleans()) else None
    return {"root": root, "path": draw(choice(".", "src", "web/app"))}


# --- one record builder per record type -------------------------------------------


def add_declaration(draw: st.DrawFn, state: StreamState) -> None:
    members: dict[str, Any] = {}
    stricter = CONTENT_LEVELS[CONTENT_LEVELS.index(state.content_level):]
    choices = draw(DECLARATION_CHOICES)
    for member in choices:
        if member == "profiles":
            members["profiles"] = [draw(choice("coding", "usage", "_dev.example/review"))]
        elif member == "lossy":
            members["lossy"] = one_value(draw, ["tool_result.raw"], [])
        elif member == "contentLevel":  # the strictest, one step stricter, or the same level again
            state.content_level = members["contentLevel"] = draw(choice(*reversed(stricter[1:]), stricter[0]))
        elif member == "roots":
            members["roots"] = draw(new_roots(state, min_size=1))
        elif member == "participants":
            members["participants"] = draw(new_participants(state))
        elif member == "conversations":
            members["conversations"] = draw(new_conversations(state))
        elif member == "environment":
            members["environment"] = {"shell": draw(words)}
        elif member == "producer":  # a writer handover: only what changes
            members["producer"] = {"instance": state.fresh("inst-"), **one_value(draw, {}, {"version": "1.1.0"})}
        else:
            members["agentVersion"] = "2.2.0"
    state.add(draw, "declaration", turn_record=False, **members)


def add_session_info(draw: st.DrawFn, state: StreamState) -> None:
    members: dict[str, Any] = {}
    if draw(st.booleans()):
        members["title"] = None if draw(st.integers(0, 4)) == 0 else draw(state.text)
        if draw(st.booleans()):
            members["titleSource"] = draw(TITLE_SOURCES)
    if bool(state.messages) and draw(st.booleans()):
        head = pick(draw, state.messages)
        # a primary head, a primary and a lane, no primary but lanes, or heads cleared
        members["heads"] = one_value(draw, [head], [head, None], [None, head, state.messages[0]], None)
    if draw(st.booleans()):
        members["tags"] = draw(TAGS)
    if draw(st.booleans()):
        members["flags"] = [draw(open_enum("pinned", "archived", "deleted"))]
    if draw(st.integers(0, 3)) == 0:
        members["continuedIn"] = "claude-code:" + draw(ids)
    if draw(st.integers(0, 3)) == 0:
        members["project"] = draw(st.none() | st.just({"id": "proj-1", "name": "acme"}))
    if "continuedIn" in members and draw(st.booleans()):
        members["continuedIn"] = None  # cleared
    state.add(draw, "session_info", turn_record=False, **only_one(draw, state, members, ("heads", "continuedIn", "title")))


def add_state(draw: st.DrawFn, state: StreamState) -> None:
    value = draw(open_enum("queued", "running", "idle", "requires_action", "error", "resumed", "ended"))
    members: dict[str, Any] = {"state": value}
    # stopReason SHOULD appear only on idle, error or ended (ASR-168): a SHOULD, so any state may carry it.
    if draw(st.integers(0, 1 if value in ("idle", "error", "ended") else 5)) == 0:
        members["stopReason"] = draw(open_enum("end_turn", "max_tokens", "refusal", "cancelled", "error"))
    if value in ("error", "idle") and draw(st.booleans()):
        members["error"] = state_error(draw, state)
    if state.turn is not None and state.reach:
        for link, strategy in TURN_LINKS.items():  # each link on its own, so several may meet on one record
            if draw(st.integers(0, 3)) == 0:
                members[link] = draw(strategy)
    elif state.turn is not None and draw(st.booleans()):  # the baseline: one link at most
        link = draw(choice(*TURN_LINKS))
        members[link] = draw(TURN_LINKS[link])
    state.add(draw, "state", **members)


def state_error(draw: st.DrawFn, state: StreamState) -> dict[str, Any]:
    """A state's error details: message, class, retry; a usage limit may say when it resets."""
    error: dict[str, Any] = {"message": draw(state.text), "class": draw(open_enum("usage_limit", "unknown")),
                   "retryable": draw(st.booleans()), "retry": {"attempt": 1, "maxAttempts": 3}}
    if draw(st.booleans()):
        error["resetAt"] = draw(timestamps)
        error["retry"]["delayMs"] = draw(st.integers(0, 3_600_000))
    return error


TURN_LINKS = {
    "attempt": st.builds(lambda n, r: {"n": n, "reason": r}, st.integers(1, SAFE), open_enum("initial", "retry")),
    "continuationOf": st.builds(lambda t: "turnId=" + t, ids),
    "parentTurn": st.builds(lambda t: {"turnId": t}, ids),
    "rootTurn": st.builds(lambda s, t: {"session": "codex:" + s, "turnId": t}, ids, ids),
    "executedBy": st.builds(lambda s, t: {"session": "codex:" + s, **t}, ids,
                            st.sampled_from([{}, {"turnId": "t9"}])),
}


def add_config_change(draw: st.DrawFn, state: StreamState) -> None:
    member = draw(choice("model", "effort", "mode", "permissionMode", "sandbox", "agent", "options",
                                   "capability"))
    value = {
        "model": {"provider": "anthropic", "id": "claude-sonnet-5-5"},
        "effort": "high", "mode": "plan", "permissionMode": "acceptEdits", "agent": "reviewer",
        "sandbox": {"mode": "workspace-write", "network": False, "writableRoots": [path_ref(draw, state)]},
        "options": one_value(draw, {"approvals_reviewer": "user"}, {}),
        "capability": {"kind": draw(open_enum("skill", "plugin", "mcp_server", "connector", "tool")),
                       "name": "github", "op": draw(open_enum("install", "remove", "connect", "needs_auth"))},
    }[member]
    members: dict[str, Any] = {member: value}
    if draw(st.booleans()):
        members["actor"] = draw(open_enum("user", "harness", "model", "policy"))
    if draw(st.booleans()):
        members["snapshot"] = True
        if draw(st.booleans()):  # how a snapshot was put together, and when it was seen
            members.update(assembly={"mode": "capture_tail"}, observedAt=draw(timestamps))
    state.add(draw, "config_change", **only_one(draw, state, members, (member,)))


def add_instructions(draw: st.DrawFn, state: StreamState) -> None:
    members: dict[str, Any] = {"kind": draw(open_enum("system_prompt", "project", "user", "rules", "skill", "memory",
                                            "tool_definitions", "other"))}
    body = draw(choice("content", "tools", "removed", "capture"))
    if body == "content":
        members["content"] = draw(content_parts)
    elif body == "tools":
        members["tools"] = [{"name": draw(words), **one_value(draw, {}, {"description": "Run a shell command"})}]
    elif body == "removed":
        members["removed"] = [draw(words)]
    else:
        members["capture"] = {"content": {"state": "absent"}}
    if draw(st.booleans()):
        members["source"] = path_ref(draw, state)
    maybe(draw, members, INSTRUCTIONS_OPTIONAL)
    state.add(draw, "instructions", **members)


def add_memory_change(draw: st.DrawFn, state: StreamState) -> None:
    cause = {"callId": pick(draw, sorted(state.calls))} if bool(state.calls) and draw(st.booleans()) else \
        {"actor": draw(open_enum("human", "harness", "hook", "agent"))}
    members: dict[str, Any] = {"store": "auto_memory", "op": draw(open_enum("add", "update", "delete", "forget", "consolidate")),
                     "cause": cause}
    if draw(st.booleans()):
        members["target"] = draw(choice("path", "key")) == "path" and {"path": path_ref(draw, state)} or \
            {"key": draw(words)}
    if draw(st.booleans()):
        members["status"] = draw(open_enum("applied", "rejected"))
    if draw(st.booleans()):
        members["scope"] = draw(open_enum("session", "user", "agent", "project"))
    state.add(draw, "memory_change", **members)


def add_call(draw: st.DrawFn, state: StreamState, call_id: str | None = None) -> str:
    """A tool_call; with ``call_id``, a duplicate native ID (valid, ASR-262)."""
    source = "native" if call_id else draw(choice("native", "derived"))
    call_id = call_id or state.fresh("call_")
    members: dict[str, Any] = {"callId": call_id, "callIdSource": source}
    if draw(st.integers(0, 5)) == 0:
        members["capture"] = {"name": {"state": "absent"}}
    else:
        members["name"] = draw(choice("Bash", "Edit", "mcp__github__get_pull_request", "shell"))
    arguments = draw(choice("input", "inputText", "none"))
    if arguments == "input":
        members["input"] = draw(json_values)
    elif arguments == "inputText":
        members["inputText"] = '{"n": 9007199254740993}'
    if draw(st.booleans()):
        members["kind"] = draw(open_enum("read", "edit", "execute", "search", "other", "unknown"))
    if draw(st.booleans()):
        members["requestedBy"] = draw(open_enum("model", "user", "harness", "code"))
    if draw(st.integers(0, 3)) == 0:
        members["provider"] = {"kind": draw(open_enum("mcp", "plugin", "connector", "builtin")),
                               "identity": draw(choice("exact", "parsed", "unknown"))}
        maybe(draw, members["provider"], state.optional(PROVIDER_OPTIONAL))
    if draw(st.integers(0, 3)) == 0:
        members["locations"] = [{**path_ref(draw, state), "line": draw(st.integers(1, 5000))}]
    if state.calls and state.reaches(draw, 6):
        members["parentCallId"] = pick(draw, sorted(state.calls))  # a call made from within another
    maybe(draw, members, state.optional(CALL_OPTIONAL))
    state.add(draw, "tool_call", **members)
    state.call_counts[call_id] = state.call_counts.get(call_id, 0) + 1
    state.calls[call_id] = source
    return call_id


def add_result(draw: st.DrawFn, state: StreamState, call_id: str | None) -> None:
    """A tool_result for ``call_id`` (exact or derived linkage), or an orphan when None."""
    members: dict[str, Any] = {"status": draw(open_enum("completed", "failed", "denied", "cancelled", "interrupted", "unknown"))}
    pairable = call_id is not None and state.call_counts.get(call_id) == 1
    if pairable and call_id is not None:
        members["callId"] = call_id
        members["linkage"] = "derived" if state.calls[call_id] == "derived" else "exact"
    elif call_id is not None and draw(st.integers(0, 2)) == 0:
        # Exact linkage may rest on a callId several calls share: readers leave it unpaired (ASR-263).
        members["callId"] = call_id
        members["linkage"] = "exact"
    elif call_id is not None:  # shared native ID: the result cannot say which call it answers
        members["linkage"] = "ambiguous"
        members["nativeCallId"] = call_id
    else:
        members["linkage"] = draw(choice("none", "exact"))
        if members["linkage"] == "exact":
            members["callId"] = state.fresh("unknown_call_")  # an orphan: no call has it
    content = draw(choice("parts", "absent", "parts", "empty", "truncated"))
    if content == "absent":
        members["capture"] = {"content": {"state": "absent"}}
    else:
        members["content"] = [] if content == "empty" else draw(content_parts)
    if content == "truncated":  # the model saw a cut copy; the full output is in a blob
        members["capture"] = {"content": {"state": "truncated", "originalBytes": draw(st.integers(1, 10**9)),
                                          "blob": "sha256:4f2a9c"}}
    if draw(st.booleans()):
        exec_: dict[str, Any] = {"command": draw(COMMANDS)}
        if draw(st.booleans()):
            exec_["exitCode"] = draw(choice(0, 1, 101, -(2**31), 2**32 - 1))
        if draw(st.booleans()):
            exec_["processId"] = draw(PROCESS_IDS)
        if draw(st.booleans()):
            exec_["cwd"] = path_ref(draw, state)
        if draw(st.booleans()):
            exec_["signal"] = "SIGKILL"
        if state.reaches(draw, 8):  # a terminal the stream records later
            exec_["terminalId"] = state.fresh("term_later_")
            state.later_terminals.append(exec_["terminalId"])
        elif bool(state.terminals) and draw(st.booleans()):
            exec_["terminalId"] = pick(draw, sorted(state.terminals))
        members["exec"] = exec_
    if draw(st.booleans()):
        members["durationMs"] = draw(st.integers(0, 10**7))
    maybe(draw, members, RESULT_OPTIONAL)
    if "exec" in members:
        maybe(draw, members["exec"], EXEC_OPTIONAL)
    if pairable and call_id not in state.permission_calls and draw(st.integers(0, 2)) == 0:
        members["permission"] = {"decision": draw(open_enum("allow_once", "allow_always", "reject_once"))}
        maybe(draw, members["permission"], COMPACT_PERMISSION_OPTIONAL)
        state.compact_calls.add(call_id)  # type: ignore[arg-type]
    state.add(draw, "tool_result", **members)


def add_call_and_maybe_result(draw: st.DrawFn, state: StreamState) -> None:
    call_id = add_call(draw, state)
    shape = draw(choice("paired", "paired", "dangling", "duplicate-native-ids"))
    if shape == "paired":
        if draw(st.integers(0, 2)) == 0 and call_id not in state.compact_calls:
            add_permission(draw, state, call_id)
        add_result(draw, state, call_id)
    elif shape == "duplicate-native-ids":
        state.calls[call_id] = "native"
        state.records[-1]["callIdSource"] = "native"
        add_call(draw, state, call_id)
        add_result(draw, state, call_id)


def add_two_results(draw: st.DrawFn, state: StreamState, call_id: str) -> None:
    """Two results with one call's callId, neither superseding the other: valid, and readers treat the
    pairing as ambiguous (ASR-264)."""
    add_result(draw, state, call_id)
    add_result(draw, state, call_id)


def add_orphan_result(draw: st.DrawFn, state: StreamState) -> None:
    add_result(draw, state, None)


def add_permission(draw: st.DrawFn, state: StreamState, call_id: str | None = None) -> None:
    members: dict[str, Any] = {"requestId": state.fresh("perm_")}
    if call_id is not None and call_id not in state.compact_calls:
        members["subject"] = {"callId": call_id}
        state.permission_calls.add(call_id)
    elif draw(st.booleans()):
        members["subject"] = {"command": "git push origin main"}
    status = draw(choice("pending", "held", "resolved", "expired", None, "escalated"))
    if status is not None:
        members["status"] = status
    if status == "resolved" or (status in ("expired", None, "escalated") and draw(st.booleans())):
        members["decision"] = draw(open_enum("allow_once", "allow_session", "reject_once", "cancelled"))
        if draw(st.booleans()):
            members["decidedBy"] = draw(open_enum("user", "policy", "hook", "auto_mode", "agent", "classifier"))
    if draw(st.booleans()):
        members["options"] = [{"optionId": "allow", "name": "Allow once",
                               "kind": draw(open_enum("allow_once", "allow_always", "reject_once"))}]
    if draw(st.integers(0, 3)) == 0:
        members["reviews"] = [{"by": draw(actors), **one_value(draw, {"verdict": "denied"}, {},
                                                               {"verdict": "approved", "rationale": "tests pass"})}]
    maybe(draw, members, PERMISSION_OPTIONAL)
    if status is None:
        members = only_one(draw, state, members, ("requestId",))
    record = state.add(draw, "permission", **members)
    if status == "pending":
        state.pending_permissions[record["requestId"]] = record


def add_permission_revision(draw: st.DrawFn, state: StreamState) -> None:
    """A pending permission resolved by a revision that supersedes it."""
    if not state.pending_permissions:
        return add_permission(draw, state)
    request_id = pick(draw, sorted(state.pending_permissions))
    previous = state.pending_permissions.pop(request_id)
    revised = {k: v for k, v in previous.items() if k not in ("type", "seq", "id", "ts", "turnId", "trigger", "_meta")}
    if draw(st.integers(0, 3)) == 0:  # waiting for another resolver: still no decision
        revised.update(status="held")
    else:
        revised.update(status="resolved", decision=draw(open_enum("allow_once", "reject_once")))
    state.add(draw, "permission", supersedes=previous["id"], **revised)


def add_input_request(draw: st.DrawFn, state: StreamState) -> None:
    mode = draw(open_enum("questions", "form", "url"))
    members: dict[str, Any] = {"requestId": state.fresh("req_"), "mode": mode}
    whole_secret = state.reaches(draw, 5)  # the request as a whole asks for a secret: no value recorded
    if whole_secret:
        members.update(secret=True, status=draw(choice("answered", "declined")))
    if mode == "questions" or draw(st.booleans()):
        secret = draw(st.booleans())
        members["questions"] = [{"id": "0", "text": draw(state.text),
                                 "options": [{"label": "Yes"}, {"label": "No"}], "secret": secret},
                                {"id": "1", "text": draw(state.text)}]
        maybe(draw, members["questions"][1], state.optional(QUESTION_OPTIONAL))
        answers = [] if secret else [{"questionId": "0", "selected": ["Yes"]}]
        answers.append({"questionId": "1", "text": draw(state.text)})
        members["answers"] = [] if whole_secret or draw(st.integers(0, 4)) == 0 else answers
        members.setdefault("status", draw(open_enum("answered", "pending")))
    elif mode == "url":
        members["url"] = "https://example.invalid/authorize"
    elif mode == "form":
        members["requestedSchema"] = {"type": "object", "properties": {"name": {"type": "string"}}}
        if not whole_secret and draw(st.booleans()):
            members["response"] = {"name": draw(state.text)}
    if draw(st.booleans()):
        members["message"] = draw(state.text)
    if state.calls and state.reaches(draw, 4):  # asked by a tool call
        members.update(callId=pick(draw, sorted(state.calls)), idSource=draw(choice("native", "derived")))
    if draw(st.booleans()):
        members["blocking"] = draw(st.booleans())
    if bool(state.messages) and draw(st.booleans()):
        members["answerRef"] = pick(draw, state.messages)
    if draw(st.booleans()):
        members["answeredBy"] = draw(actors)
    record = state.add(draw, "input_request", **members)
    if state.reaches(draw, 8):  # a later revision of the same request
        revised = {k: v for k, v in record.items() if k not in ("type", "seq", "id", "ts", "turnId", "trigger", "_meta")}
        revised["status"] = draw(open_enum("answered", "cancelled", "timed_out"))
        state.add(draw, "input_request", supersedes=record["id"], **revised)


def add_terminal(draw: st.DrawFn, state: StreamState) -> None:
    if bool(state.terminals) and draw(st.booleans()):
        terminal_id = pick(draw, sorted(state.terminals))
        members: dict[str, Any] = {"terminalId": terminal_id, "supersedes": state.terminals[terminal_id],
                         "status": draw(open_enum("exited", "killed", "stopped", "unknown"))}
        if draw(st.booleans()):
            members["exitCode"] = draw(choice(0, 1, -(2**31), 2**32 - 1))
        maybe(draw, members, TERMINAL_OPTIONAL)
    else:  # a new terminal
        terminal_id = state.fresh("term_")
        members = {"terminalId": terminal_id, "kind": draw(open_enum("shell", "monitor")), "status": "running",
                   "command": "npm run dev", "awaited": draw(st.booleans())}
        if draw(st.booleans()):
            members["cwd"] = path_ref(draw, state)
        if state.calls and state.reaches(draw, 4):  # the call that started it
            members["callId"] = pick(draw, sorted(state.calls))
        maybe(draw, members, TERMINAL_OPTIONAL)
        members = only_one(draw, state, members, ("terminalId",))
    record = state.add(draw, "terminal", **members)
    state.terminals[terminal_id] = record["id"]


def record_later_terminals(draw: st.DrawFn, state: StreamState) -> None:
    """The terminals an exec named before they were recorded: a stream may record a terminal after a
    result refers to it (ASR-290 asks only that the stream records it)."""
    for terminal_id in state.later_terminals:
        record = state.add(draw, "terminal", turn_record=False, terminalId=terminal_id, kind="shell",
                           status=draw(open_enum("running", "exited")), command="npm run dev", awaited=False)
        state.terminals[terminal_id] = record["id"]
    state.later_terminals.clear()


def add_hook(draw: st.DrawFn, state: StreamState) -> None:
    members: dict[str, Any] = {"event": draw(open_enum("pre_tool_use", "post_tool_use", "stop", "session_start",
                                             "workspace_setup"))}
    if draw(st.booleans()):
        members.update(handlerKind=draw(open_enum("command", "prompt", "http")), command="cargo fmt --check",
                       status=draw(open_enum("completed", "failed", "blocked")))
    if draw(st.booleans()):
        members["exitCode"] = draw(choice(0, 2, 2**32 - 1))
    if bool(state.calls) and draw(st.booleans()):
        members["callId"] = pick(draw, sorted(state.calls))
    maybe(draw, members, HOOK_OPTIONAL)
    state.add(draw, "hook", **only_one(draw, state, members, ("event",)))


def add_message(draw: st.DrawFn, state: StreamState) -> None:
    members: dict[str, Any] = {"role": draw(choice("user", "assistant")), "content": draw(content_parts)}
    maybe(draw, members, state.optional(MESSAGE_OPTIONAL))
    record = state.add(draw, "message", **members)
    state.messages.append(record["id"])


def add_compaction(draw: st.DrawFn, state: StreamState) -> None:
    members: dict[str, Any] = {}
    if draw(st.booleans()):
        members["trigger"] = "auto"  # compaction.trigger: what caused the compaction
    if state.reaches(draw, 2):
        members.update(summary=draw(content_parts), tokensBefore=draw(st.integers(0, 10**6)))
    state.add(draw, "compaction", **members)


#: Record types the pages mention but define elsewhere, each with a member of its own: accepted as they are.
MENTIONED_TYPES: dict[str, dict[str, Any]] = {
    "file_change": {"path": {"root": None, "path": "src/lib.rs"}, "change": "modified"},
    "inference": {"model": "claude-sonnet-5-5", "usage": {"inputTokens": 1200}},
    "plan": {"entries": [{"content": "fix the parser", "status": "pending"}]},
    "reasoning": {"content": [{"type": "text", "text": "check the parser first"}]},
    "subagent": {"agent": "reviewer", "session": "claude-code:9b1f3c0e"},
}


def add_mentioned_record(draw: st.DrawFn, state: StreamState) -> None:
    record_type = draw(choice(*sorted(MENTIONED_TYPES)))
    state.add(draw, record_type, **MENTIONED_TYPES[record_type])


def start_turn(draw: st.DrawFn, state: StreamState) -> None:
    state.turn = state.fresh("turn-")
    if state.reaches(draw, 8):  # a turn may open with a compaction, which is not its first record
        add_compaction(draw, state)


def end_turn(draw: st.DrawFn, state: StreamState) -> None:
    state.turn = None


BUILDERS = {
    "declaration": add_declaration, "session_info": add_session_info, "state": add_state,
    "config_change": add_config_change, "instructions": add_instructions, "memory_change": add_memory_change,
    "call": add_call_and_maybe_result, "orphan_result": add_orphan_result, "permission": add_permission,
    "permission_revision": add_permission_revision, "input_request": add_input_request,
    "terminal": add_terminal, "hook": add_hook, "message": add_message, "compaction": add_compaction,
    "start_turn": start_turn, "end_turn": end_turn, "mentioned_record": add_mentioned_record,
}


#: Builders of reach-only record types, left out of the baseline.
REACH_BUILDERS = frozenset({"mentioned_record"})


@cache
def steps(max_steps: int, min_steps: int = 0, reach: bool = True) -> st.SearchStrategy[list[str]]:
    names = sorted(name for name in BUILDERS if reach or name not in REACH_BUILDERS)
    return st.lists(st.sampled_from(names), min_size=min_steps, max_size=max_steps)


@st.composite
def valid_streams(draw: st.DrawFn, max_steps: int = 25, text: st.SearchStrategy[str] = words,
                  min_steps: int = 0, reach: bool = True) -> list[dict[str, Any]]:
    """A valid stream as a list of records (header first); ``min_steps`` only for measuring what the
    strategy reaches (long streams hold more in fewer draws, and are within its reach); ``reach=False``
    only for the baseline of the reach-cost benchmark (``StreamState.reach``)."""
    state = StreamState(text=text, reach=reach)
    draw(headers(state))
    for step in draw(steps(max_steps, min_steps, reach)):
        BUILDERS[step](draw, state)
    record_later_terminals(draw, state)
    return state.records


def add_call_with_two_results(draw: st.DrawFn, state: StreamState) -> None:
    add_two_results(draw, state, add_call(draw, state))


def add_error_state(draw: st.DrawFn, state: StreamState) -> None:
    """state error with a stopReason beside it (and maybe the error's details): what ASR-168's SHOULD allows."""
    members: dict[str, Any] = {"state": "error", "stopReason": draw(open_enum("error", "max_tokens", "refusal"))}
    if draw(st.booleans()):
        members["error"] = state_error(draw, state)
    state.add(draw, "state", **members)


#: Steps every adversarial stream takes, in a drawn order among the others.
FORCED = {"call": add_call_and_maybe_result, "orphan_result": add_orphan_result, "permission": add_permission,
          "state": add_state, "message": add_message, "two_results": add_call_with_two_results,
          "error_state": add_error_state}
#: Forced steps only the reach work added, left out of the baseline.
REACH_FORCED = frozenset({"two_results", "error_state"})
#: Features (``generators.reach``) every adversarial stream holds; a test checks each draw for them.
ADVERSARIAL_FEATURES = frozenset({
    "calls:one-callId-on-two-calls", "results:two-results-for-one-call", "state:error+stopReason",
    "session:records-after-ended", "session:resumed-after-ended", "calls:dangling", "member:session._meta",
    "type:permission", "type:message",
})


@st.composite
def adversarial_streams(draw: st.DrawFn, max_steps: int = 25, min_steps: int = 0, reach: bool = True) -> list[dict[str, Any]]:
    """Valid streams that naive validators reject: every string Unicode, and the
    constructs above forced in (duplicate native IDs, two results for one call, stopReason
    beside state error, records after ended, orphans, dangling calls, pending permissions,
    vendor profiles and _meta): ``ADVERSARIAL_FEATURES`` (``reach=False``: the benchmark's baseline)."""
    state = StreamState(text=unicode_text, reach=reach)
    header = draw(headers(state))
    header["profiles"].append("_vendor.example/extra")
    header["_meta"] = {"vendor.example/raw": draw(json_values)}
    forced = [f"forced:{name}" for name in FORCED if reach or name not in REACH_FORCED]
    order = draw(st.permutations(forced + draw(steps(max_steps, min_steps, reach))))
    for step in order:
        (FORCED[step.removeprefix("forced:")] if step.startswith("forced:") else BUILDERS[step])(draw, state)
    record_later_terminals(draw, state)
    duplicate = add_call(draw, state)
    state.records[-1]["callIdSource"] = "native"
    state.calls[duplicate] = "native"
    add_call(draw, state, duplicate)
    state.add(draw, "state", turn_record=False, state="ended", stopReason="end_turn")
    state.add(draw, "state", turn_record=False, state="resumed")
    add_call(draw, state)  # dangling, after the session ended and resumed
    return state.records
