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

from dataclasses import dataclass, field
from functools import cache

from hypothesis import strategies as st

from asr_conformance.vocabulary.terms import CONTENT_LEVELS

# --- small value strategies -------------------------------------------------------

SAFE = 2**53 - 1
ids = st.builds(lambda head, tail: head + tail, st.sampled_from("abcdefgh"), st.text(alphabet="abcdefghij0123456789_-", max_size=7))
words = st.text(alphabet="abcdefghijklmnopqrstuvwxyz -_./", min_size=1, max_size=20)
unicode_text = st.text(min_size=0, max_size=20).filter(lambda s: all(not 0xD800 <= ord(c) <= 0xDFFF for c in s))
timestamps = st.builds(
    lambda day, ms: f"2026-{day // 28 % 12 + 1:02d}-{day % 28 + 1:02d}T{ms // 3600000 % 24:02d}:"
    f"{ms // 60000 % 60:02d}:{ms // 1000 % 60:02d}.{ms % 1000:03d}Z",
    st.integers(0, 335), st.integers(0, 86_399_999),
)
json_scalars = st.none() | st.booleans() | st.integers(-SAFE, SAFE) | st.floats(allow_nan=False, allow_infinity=False, width=32) | words
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


def pick(draw: st.DrawFn, items: list | tuple | set) -> object:
    """One of ``items`` (which change as the stream grows, so no strategy is built per draw)."""
    ordered = sorted(items) if isinstance(items, set) else items
    return ordered[draw(_index(len(ordered)))]


@cache
def choice(*items: object) -> st.SearchStrategy:
    return st.sampled_from(items)


def maybe(draw: st.DrawFn, members: dict, optional: dict[str, st.SearchStrategy]) -> None:
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
PROCESS_IDS = st.integers(-SAFE, SAFE) | ids
TITLE_SOURCES = st.none() | open_enum("model", "user", "harness")
RESULT_OPTIONAL = {
    "displayContent": content_parts,
    "raw": json_values,
    "error": st.builds(lambda m, c: {"message": m, "code": c}, words, st.integers(0, 255) | words),
    "startedAt": timestamps,
    "completedAt": timestamps,
    "provider": st.builds(lambda k: {"kind": k, "server": "github", "tool": "get_pull_request",
                                     "identity": "exact"}, st.sampled_from(["mcp", "plugin"])),
}
EXEC_OPTIONAL = {"timedOut": st.booleans(), "stdout": words, "stderr": words, "output": words}
PERMISSION_OPTIONAL = {
    "title": words, "description": words, "selectedOptionId": st.just("allow"), "decider": actors,
    "rule": words, "reason": words, "rationale": words, "feedback": words, "decidedAt": timestamps,
}
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
DECLARATION_CHOICES = st.lists(
    st.sampled_from(["profiles", "lossy", "contentLevel", "roots", "participants", "conversations", "environment",
                     "agentVersion"]),
    min_size=1, max_size=3, unique=True,
)


@dataclass
class StreamState:
    """What later records may refer to, and the numbers they must follow."""

    text: st.SearchStrategy[str] = words
    seq: int = 0
    records: list[dict] = field(default_factory=list)
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
    pending_permissions: dict[str, dict] = field(default_factory=dict)
    turn: str | None = None
    turn_started: bool = False
    started_turns: set[str] = field(default_factory=set)
    messages: list[str] = field(default_factory=list)
    counter: int = 0

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def add(self, draw: st.DrawFn, record_type: str, turn_record: bool = True, **members: object) -> dict:
        """Append a record with the envelope members, maybe in the current turn."""
        self.seq += draw(st.integers(1, 3))
        record: dict = {"type": record_type, "seq": self.seq, "id": self.fresh("r")}
        if draw(st.booleans()):
            record["ts"] = draw(timestamps)
        if turn_record and self.turn is not None and record_type != "session":
            record["turnId"] = self.turn
            if record_type != "compaction" and self.turn not in self.started_turns:
                self.started_turns.add(self.turn)
                if draw(st.integers(0, 3)) == 0:
                    record["trigger"] = draw(triggers())
        record.update(members)
        if draw(st.integers(0, 9)) == 0:
            record["_meta"] = {"dev.example/note": draw(self.text)}
        self.records.append(record)
        return record


@cache
def triggers() -> st.SearchStrategy[dict]:
    kinds = open_enum("schedule", "heartbeat", "event", "webhook", "task_completion", "peer",
                      "auto_continuation", "recovery", "manual")
    return st.one_of(
        st.builds(lambda k: {"kind": k}, kinds),
        st.builds(lambda n: {"native": n}, words),
        st.builds(lambda k, n, r: {"kind": k, "native": n, "runId": r, "schedule": "0 8 * * *"}, kinds, words, ids),
        st.builds(lambda k, a: {"kind": k, "source": a}, kinds, actors),
    )


HEADER_OPTIONAL = {
    "authority": open_enum("local", "remote_cache", "remote_export", "mirror"),
    "scope": open_enum("primary", "subagent"),
    "namespace": st.none() | words,
    "environment": st.builds(lambda o, s: {"os": o, "shell": s}, st.sampled_from(["linux", "darwin"]), words),
    "client": st.builds(lambda n: {"name": n}, words),
    "lineage": st.just({"root": True}),
    "conversationKey": words,
    "extensions": st.lists(st.builds(lambda i, r: {"id": i, "version": "1", "required": r}, ids, st.booleans()),
                           max_size=2),
    "trigger": triggers(),
}


# --- the header -----------------------------------------------------------------------


@st.composite
def headers(draw: st.DrawFn, state: StreamState) -> dict:
    method = draw(open_enum("native", "converter", "decoded", "recorder", "observer", "import"))
    producer: dict = {"name": draw(words), "version": "1.0.0", "method": method, "instance": state.fresh("inst-")}
    if method != "native" or draw(st.booleans()):
        producer["source"] = {"format": draw(words)}
        producer["lossy"] = draw(LOSSY)
    profiles = ["core", *draw(EXTRA_PROFILES)]
    state.content_level = draw(choice(*CONTENT_LEVELS))
    header: dict = {
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
def new_roots(draw: st.DrawFn, state: StreamState, min_size: int = 0) -> list[dict]:
    roots = []
    for _ in range(draw(st.integers(min_size, 2))):
        root_id = state.fresh("root")
        root: dict = {"id": root_id, "path": draw(ROOT_PATHS)}
        if draw(st.booleans()):
            root["vcs"] = {"type": draw(open_enum("git", "jj", "hg", "svn", "other")), "branch": "main"}
        roots.append(root)
        state.roots.append(root_id)
    return roots


@st.composite
def new_participants(draw: st.DrawFn, state: StreamState) -> list[dict]:
    people = []
    for _ in range(draw(st.integers(1, 2))):
        person: dict = {"id": state.fresh("p")}
        if draw(st.booleans()):
            person["kind"] = draw(open_enum("human", "agent", "bot", "unknown"))
        if draw(st.booleans()):
            person["ids"] = [{"scheme": "whatsapp", "value": "+15125550147", "basis": draw(words)}]
        people.append(person)
        state.participants.append(person["id"])
    return people


@st.composite
def new_conversations(draw: st.DrawFn, state: StreamState) -> list[dict]:
    conversations = []
    for _ in range(draw(st.integers(1, 2))):
        conversation: dict = {"id": state.fresh("c"), "channel": draw(open_enum("whatsapp", "slack", "web"))}
        if state.conversations and draw(st.booleans()):
            conversation["parent"] = pick(draw, state.conversations)
        conversations.append(conversation)
        state.conversations.append(conversation["id"])
    return conversations


def path_ref(draw: st.DrawFn, state: StreamState) -> dict:
    root = pick(draw, state.roots) if state.roots and draw(st.booleans()) else None
    return {"root": root, "path": draw(choice(".", "src", "web/app"))}


# --- one record builder per record type -------------------------------------------


def add_declaration(draw: st.DrawFn, state: StreamState) -> None:
    members: dict = {}
    stricter = CONTENT_LEVELS[CONTENT_LEVELS.index(state.content_level):]
    choices = draw(DECLARATION_CHOICES)
    for member in choices:
        if member == "profiles":
            members["profiles"] = [draw(choice("coding", "usage", "_dev.example/review"))]
        elif member == "lossy":
            members["lossy"] = ["tool_result.raw"]
        elif member == "contentLevel":
            state.content_level = members["contentLevel"] = draw(choice(*stricter))
        elif member == "roots":
            members["roots"] = draw(new_roots(state, min_size=1))
        elif member == "participants":
            members["participants"] = draw(new_participants(state))
        elif member == "conversations":
            members["conversations"] = draw(new_conversations(state))
        elif member == "environment":
            members["environment"] = {"shell": draw(words)}
        else:
            members["agentVersion"] = "2.2.0"
    state.add(draw, "declaration", turn_record=False, **members)


def add_session_info(draw: st.DrawFn, state: StreamState) -> None:
    members: dict = {}
    if draw(st.booleans()):
        members["title"] = None if draw(st.integers(0, 4)) == 0 else draw(state.text)
        if draw(st.booleans()):
            members["titleSource"] = draw(TITLE_SOURCES)
    if state.messages and draw(st.booleans()):
        members["heads"] = [pick(draw, state.messages), None][: draw(st.integers(1, 2))]
    if draw(st.booleans()):
        members["tags"] = draw(TAGS)
    if draw(st.booleans()):
        members["flags"] = [draw(open_enum("pinned", "archived", "deleted"))]
    if draw(st.integers(0, 3)) == 0:
        members["continuedIn"] = "claude-code:" + draw(ids)
    if draw(st.integers(0, 3)) == 0:
        members["project"] = draw(st.none() | st.just({"id": "proj-1", "name": "acme"}))
    state.add(draw, "session_info", turn_record=False, **members)


def add_state(draw: st.DrawFn, state: StreamState) -> None:
    value = draw(open_enum("queued", "running", "idle", "requires_action", "error", "resumed", "ended"))
    members: dict = {"state": value}
    if value in ("idle", "error", "ended") and draw(st.booleans()):
        members["stopReason"] = draw(open_enum("end_turn", "max_tokens", "refusal", "cancelled", "error"))
    if value == "error" and draw(st.booleans()):
        members["error"] = {"message": draw(state.text), "class": draw(open_enum("usage_limit", "unknown")),
                            "retryable": draw(st.booleans()), "retry": {"attempt": 1, "maxAttempts": 3}}
    if state.turn is not None and draw(st.booleans()):
        link = draw(choice("attempt", "continuationOf", "parentTurn", "rootTurn", "executedBy"))
        members[link] = {
            "attempt": {"n": draw(st.integers(1, SAFE)), "reason": draw(open_enum("initial", "retry"))},
            "continuationOf": "turnId=" + draw(ids),
            "parentTurn": {"turnId": draw(ids)},
            "rootTurn": {"session": "codex:" + draw(ids), "turnId": draw(ids)},
            "executedBy": {"session": "codex:" + draw(ids)},
        }[link]
    state.add(draw, "state", **members)


def add_config_change(draw: st.DrawFn, state: StreamState) -> None:
    member = draw(choice("model", "effort", "mode", "permissionMode", "sandbox", "agent", "options",
                                   "capability"))
    value = {
        "model": {"provider": "anthropic", "id": "claude-sonnet-5-5"},
        "effort": "high", "mode": "plan", "permissionMode": "acceptEdits", "agent": "reviewer",
        "sandbox": {"mode": "workspace-write", "network": False, "writableRoots": [path_ref(draw, state)]},
        "options": {"approvals_reviewer": "user"},
        "capability": {"kind": draw(open_enum("skill", "plugin", "mcp_server", "connector", "tool")),
                       "name": "github", "op": draw(open_enum("install", "remove", "connect", "needs_auth"))},
    }[member]
    members: dict = {member: value}
    if draw(st.booleans()):
        members["actor"] = draw(open_enum("user", "harness", "model", "policy"))
    if draw(st.booleans()):
        members["snapshot"] = True
    state.add(draw, "config_change", **members)


def add_instructions(draw: st.DrawFn, state: StreamState) -> None:
    members: dict = {"kind": draw(open_enum("system_prompt", "project", "user", "rules", "skill", "memory",
                                            "tool_definitions", "other"))}
    body = draw(choice("content", "tools", "removed", "capture"))
    if body == "content":
        members["content"] = draw(content_parts)
    elif body == "tools":
        members["tools"] = [{"name": draw(words)}]
    elif body == "removed":
        members["removed"] = [draw(words)]
    else:
        members["capture"] = {"content": {"state": "absent"}}
    if draw(st.booleans()):
        members["source"] = path_ref(draw, state)
    maybe(draw, members, INSTRUCTIONS_OPTIONAL)
    state.add(draw, "instructions", **members)


def add_memory_change(draw: st.DrawFn, state: StreamState) -> None:
    cause = {"callId": pick(draw, sorted(state.calls))} if state.calls and draw(st.booleans()) else \
        {"actor": draw(open_enum("human", "harness", "hook", "agent"))}
    members: dict = {"store": "auto_memory", "op": draw(open_enum("add", "update", "delete", "forget", "consolidate")),
                     "cause": cause}
    if draw(st.booleans()):
        members["target"] = {"path": path_ref(draw, state)}
    if draw(st.booleans()):
        members["status"] = draw(open_enum("applied", "rejected"))
    state.add(draw, "memory_change", **members)


def add_call(draw: st.DrawFn, state: StreamState, call_id: str | None = None) -> str:
    """A tool_call; with ``call_id``, a duplicate native ID (valid, ASR-262)."""
    source = "native" if call_id else draw(choice("native", "derived"))
    call_id = call_id or state.fresh("call_")
    members: dict = {"callId": call_id, "callIdSource": source}
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
    if draw(st.integers(0, 3)) == 0:
        members["locations"] = [{**path_ref(draw, state), "line": draw(st.integers(1, 5000))}]
    state.add(draw, "tool_call", **members)
    state.call_counts[call_id] = state.call_counts.get(call_id, 0) + 1
    state.calls[call_id] = source
    return call_id


def add_result(draw: st.DrawFn, state: StreamState, call_id: str | None) -> None:
    """A tool_result for ``call_id`` (exact or derived linkage), or an orphan when None."""
    members: dict = {"status": draw(open_enum("completed", "failed", "denied", "cancelled", "interrupted", "unknown"))}
    pairable = call_id is not None and state.call_counts.get(call_id) == 1
    if pairable:
        members["callId"] = call_id
        members["linkage"] = "derived" if state.calls[call_id] == "derived" else "exact"
    elif call_id is not None:  # shared native ID: the result cannot say which call it answers
        members["linkage"] = "ambiguous"
        members["nativeCallId"] = call_id
    else:
        members["linkage"] = draw(choice("none", "exact"))
        if members["linkage"] == "exact":
            members["callId"] = state.fresh("unknown_call_")  # an orphan: no call has it
    if draw(st.integers(0, 3)) == 0:
        members["capture"] = {"content": {"state": "absent"}}
    else:
        members["content"] = draw(content_parts)
    if draw(st.booleans()):
        exec_: dict = {"command": draw(COMMANDS)}
        if draw(st.booleans()):
            exec_["exitCode"] = draw(choice(0, 1, 101, -(2**31), 2**32 - 1))
        if draw(st.booleans()):
            exec_["processId"] = draw(PROCESS_IDS)
        if draw(st.booleans()):
            exec_["cwd"] = path_ref(draw, state)
        if draw(st.booleans()):
            exec_["signal"] = "SIGKILL"
        if state.terminals and draw(st.booleans()):
            exec_["terminalId"] = pick(draw, sorted(state.terminals))
        members["exec"] = exec_
    if draw(st.booleans()):
        members["durationMs"] = draw(st.integers(0, 10**7))
    maybe(draw, members, RESULT_OPTIONAL)
    if "exec" in members:
        maybe(draw, members["exec"], EXEC_OPTIONAL)
    if pairable and call_id not in state.permission_calls and draw(st.integers(0, 2)) == 0:
        members["permission"] = {"decision": draw(open_enum("allow_once", "allow_always", "reject_once")),
                                 "decidedBy": draw(open_enum("user", "policy", "hook"))}
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


def add_orphan_result(draw: st.DrawFn, state: StreamState) -> None:
    add_result(draw, state, None)


def add_permission(draw: st.DrawFn, state: StreamState, call_id: str | None = None) -> None:
    members: dict = {"requestId": state.fresh("perm_")}
    if call_id is not None and call_id not in state.compact_calls:
        members["subject"] = {"callId": call_id}
        state.permission_calls.add(call_id)
    elif draw(st.booleans()):
        members["subject"] = {"command": "git push origin main"}
    status = draw(choice("pending", "held", "resolved", "expired", None))
    if status is not None:
        members["status"] = status
    if status == "resolved" or (status in ("expired", None) and draw(st.booleans())):
        members["decision"] = draw(open_enum("allow_once", "allow_session", "reject_once", "cancelled"))
        if draw(st.booleans()):
            members["decidedBy"] = draw(open_enum("user", "policy", "hook", "auto_mode", "agent", "classifier"))
    if draw(st.booleans()):
        members["options"] = [{"optionId": "allow", "name": "Allow once", "kind": "allow_once"}]
    if draw(st.integers(0, 3)) == 0:
        members["reviews"] = [{"by": draw(actors), "verdict": "denied"}]
    maybe(draw, members, PERMISSION_OPTIONAL)
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
    revised.update(status="resolved", decision=draw(open_enum("allow_once", "reject_once")))
    state.add(draw, "permission", supersedes=previous["id"], **revised)


def add_input_request(draw: st.DrawFn, state: StreamState) -> None:
    mode = draw(open_enum("questions", "form", "url"))
    members: dict = {"requestId": state.fresh("req_"), "mode": mode}
    if mode == "questions" or draw(st.booleans()):
        secret = draw(st.booleans())
        members["questions"] = [{"id": "0", "text": draw(state.text),
                                 "options": [{"label": "Yes"}, {"label": "No"}], "secret": secret},
                                {"id": "1", "text": draw(state.text)}]
        answers = [] if secret else [{"questionId": "0", "selected": ["Yes"]}]
        answers.append({"questionId": "1", "text": draw(state.text)})
        members["answers"] = answers
        members["status"] = "answered"
    elif mode == "url":
        members["url"] = "https://example.invalid/authorize"
    elif mode == "form":
        members["requestedSchema"] = {"type": "object", "properties": {"name": {"type": "string"}}}
        if draw(st.booleans()):
            members["response"] = {"name": draw(state.text)}
    if draw(st.booleans()):
        members["message"] = draw(state.text)
    if draw(st.booleans()):
        members["blocking"] = draw(st.booleans())
    if state.messages and draw(st.booleans()):
        members["answerRef"] = pick(draw, state.messages)
    if draw(st.booleans()):
        members["answeredBy"] = draw(actors)
    state.add(draw, "input_request", **members)


def add_terminal(draw: st.DrawFn, state: StreamState) -> None:
    if state.terminals and draw(st.booleans()):
        terminal_id = pick(draw, sorted(state.terminals))
        members: dict = {"terminalId": terminal_id, "supersedes": state.terminals[terminal_id],
                         "status": draw(open_enum("exited", "killed", "stopped", "unknown"))}
        if draw(st.booleans()):
            members["exitCode"] = draw(choice(0, 1, -(2**31), 2**32 - 1))
    else:
        terminal_id = state.fresh("term_")
        members = {"terminalId": terminal_id, "kind": draw(open_enum("shell", "monitor")), "status": "running",
                   "command": "npm run dev", "awaited": draw(st.booleans())}
        if draw(st.booleans()):
            members["cwd"] = path_ref(draw, state)
    maybe(draw, members, TERMINAL_OPTIONAL)
    record = state.add(draw, "terminal", **members)
    state.terminals[terminal_id] = record["id"]


def add_hook(draw: st.DrawFn, state: StreamState) -> None:
    members: dict = {"event": draw(open_enum("pre_tool_use", "post_tool_use", "stop", "session_start",
                                             "workspace_setup"))}
    if draw(st.booleans()):
        members.update(handlerKind=draw(open_enum("command", "prompt", "http")), command="cargo fmt --check",
                       status=draw(open_enum("completed", "failed", "blocked")))
    if draw(st.booleans()):
        members["exitCode"] = draw(choice(0, 2, 2**32 - 1))
    if state.calls and draw(st.booleans()):
        members["callId"] = pick(draw, sorted(state.calls))
    maybe(draw, members, HOOK_OPTIONAL)
    state.add(draw, "hook", **members)


def add_message(draw: st.DrawFn, state: StreamState) -> None:
    record = state.add(draw, "message", role=draw(choice("user", "assistant")),
                       content=draw(content_parts))
    state.messages.append(record["id"])


def add_compaction(draw: st.DrawFn, state: StreamState) -> None:
    members: dict = {}
    if draw(st.booleans()):
        members["trigger"] = "auto"  # compaction.trigger: what caused the compaction
    state.add(draw, "compaction", **members)


def start_turn(draw: st.DrawFn, state: StreamState) -> None:
    state.turn = state.fresh("turn-")


def end_turn(draw: st.DrawFn, state: StreamState) -> None:
    state.turn = None


BUILDERS = {
    "declaration": add_declaration, "session_info": add_session_info, "state": add_state,
    "config_change": add_config_change, "instructions": add_instructions, "memory_change": add_memory_change,
    "call": add_call_and_maybe_result, "orphan_result": add_orphan_result, "permission": add_permission,
    "permission_revision": add_permission_revision, "input_request": add_input_request,
    "terminal": add_terminal, "hook": add_hook, "message": add_message, "compaction": add_compaction,
    "start_turn": start_turn, "end_turn": end_turn,
}


@cache
def steps(max_steps: int) -> st.SearchStrategy[list[str]]:
    return st.lists(st.sampled_from(sorted(BUILDERS)), max_size=max_steps)


@st.composite
def valid_streams(draw: st.DrawFn, max_steps: int = 25, text: st.SearchStrategy[str] = words) -> list[dict]:
    """A valid stream as a list of records (header first)."""
    state = StreamState(text=text)
    draw(headers(state))
    for step in draw(steps(max_steps)):
        BUILDERS[step](draw, state)
    return state.records


@st.composite
def adversarial_streams(draw: st.DrawFn, max_steps: int = 25) -> list[dict]:
    """Valid streams that naive validators reject: every string Unicode, and the
    constructs above forced in (duplicate native IDs, records after ended, orphans,
    dangling calls, pending permissions, vendor profiles and _meta)."""
    state = StreamState(text=unicode_text)
    header = draw(headers(state))
    header["profiles"].append("_vendor.example/extra")
    header["_meta"] = {"vendor.example/raw": draw(json_values)}
    forced = ["call", "orphan_result", "permission", "state", "message"]
    order = draw(st.permutations(forced + draw(steps(max_steps))))
    for step in order:
        BUILDERS[step](draw, state)
    duplicate = add_call(draw, state)
    state.records[-1]["callIdSource"] = "native"
    state.calls[duplicate] = "native"
    add_call(draw, state, duplicate)
    state.add(draw, "state", turn_record=False, state="ended", stopReason="end_turn")
    state.add(draw, "state", turn_record=False, state="resumed")
    add_call(draw, state)  # dangling, after the session ended and resumed
    return state.records
