"""Valid streams for fuzzing readers: the generated streams of ``streams``, with the constructs
reader rules turn on forced in, one *feature* at a time.

``streams.valid_streams`` reaches every record type, but rarely the combinations where a reader
can go wrong while the stream stays valid: a new title without a source, a tightened content
level, a declared client that lacks a member the old one had,
an extension declared required and then not, a null primary head, a revision of a call, tools
taken out of force by ``removed``, a decision without a status, a compact decision beside a
permission for a command, terminal revisions and process IDs. Each feature below adds one such
construct (more than once, at drawn places) to an otherwise generated stream, so that a property
per feature finds a reader's mistake within a few examples. Every stream is valid by
construction; the project's tests check it with the reference validator.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from asr_conformance.generators import streams
from asr_conformance.generators.streams import StreamState, choice, headers, pick, words
from asr_conformance.vocabulary.terms import CONTENT_LEVELS

Builder = Callable[[st.DrawFn, StreamState], None]

CLIENTS = ({"name": "terminal-ui", "version": "2.1.305"}, {"name": "vscode-extension"},
           {"name": "web", "version": "1.4.0", "surface": "browser"})
PROJECTS = ({"id": "acme-app", "name": "Acme app"}, {"id": "acme-web"}, {"id": "acme-db", "name": "Acme database"})
EXTENSIONS = (("dev.example.audit", "1"), ("dev.example.cost", "2"))
#: Projects that lack a member the earlier ones have, or hold one they lack.
REPLACEMENTS = ({"id": "acme-web"}, {"id": "acme-web", "team": "web"})
ENVIRONMENTS = ({"os": "linux"}, {"vcs": {"type": "git"}}, {"shell": "zsh", "os": "darwin"})
TOOL_NAMES = ("mcp__github__create_issue", "mcp__github__list_issues", "WebSearch")


def _header_extras(draw: st.DrawFn, header: dict[str, Any]) -> None:
    """Members of the header later declarations amend: a client and extensions."""
    if draw(st.booleans()):
        header["client"] = dict(draw(st.sampled_from(CLIENTS)))
    if draw(st.booleans()):
        header["extensions"] = [{"id": ext_id, "version": version, "required": draw(st.booleans())}
                                for ext_id, version in EXTENSIONS[: draw(st.integers(1, 2))]]


def add_client(draw: st.DrawFn, state: StreamState) -> None:
    """A declared client (replaces the old one whole) and maybe an environment patch (ASR-179)."""
    members: dict[str, Any] = {"client": dict(draw(st.sampled_from(CLIENTS)))}
    if draw(st.booleans()):
        members["environment"] = copy.deepcopy(draw(st.sampled_from(ENVIRONMENTS)))
    state.add(draw, "declaration", turn_record=False, **members)


def add_extensions(draw: st.DrawFn, state: StreamState) -> None:
    """Extensions declared again, required or not: required holds once declared (ASR-163)."""
    chosen = draw(st.lists(st.sampled_from(EXTENSIONS), min_size=1, max_size=2, unique=True))
    state.add(draw, "declaration", turn_record=False,
              extensions=[{"id": i, "version": v, "required": draw(st.booleans())} for i, v in chosen])


def add_project(draw: st.DrawFn, state: StreamState) -> None:
    """A session_info project, then maybe messages, then another project with other members, or
    none: each replaces the one before whole (ASR-160)."""
    state.add(draw, "session_info", turn_record=False, project=copy.deepcopy(draw(st.sampled_from(PROJECTS))))
    if draw(st.booleans()):
        streams.add_message(draw, state)
    state.add(draw, "session_info", turn_record=False,
              project=copy.deepcopy(draw(st.sampled_from(REPLACEMENTS) | st.none())))


def add_titles(draw: st.DrawFn, state: StreamState) -> None:
    """A title with its source, then a new title without one: the source is unknown (ASR-181)."""
    state.add(draw, "session_info", turn_record=False, title=draw(words),
              titleSource=draw(choice("user", "model", "harness")))
    if draw(st.booleans()):
        streams.add_message(draw, state)
    members: dict[str, Any] = {"title": draw(words)}
    if draw(st.booleans()):
        members["tags"] = [draw(words)]
    state.add(draw, "session_info", turn_record=False, **members)


def add_content_level(draw: st.DrawFn, state: StreamState) -> None:
    """A record, then a declaration that tightens contentLevel: later records only (ASR-165)."""
    streams.add_message(draw, state)
    stricter = CONTENT_LEVELS[CONTENT_LEVELS.index(state.content_level):]
    state.content_level = draw(st.sampled_from(stricter[1:] or stricter))
    state.add(draw, "declaration", turn_record=False, contentLevel=state.content_level)
    streams.add_message(draw, state)


def add_heads(draw: st.DrawFn, state: StreamState) -> None:
    """heads with a null first element: no primary head, the rest lane heads (ASR-160)."""
    if not state.messages:
        streams.add_message(draw, state)
    lanes = draw(st.lists(st.sampled_from(state.messages), max_size=2, unique=True))
    state.add(draw, "session_info", turn_record=False, heads=[None, *lanes])


def add_call_revision(draw: st.DrawFn, state: StreamState) -> None:
    """A call revised by a record that supersedes it, same callId: one call entity (ASR-263)."""
    single = [call_id for call_id, count in state.call_counts.items() if count == 1]
    call_id = pick(draw, sorted(single)) if single else streams.add_call(draw, state)
    previous = next(r for r in reversed(state.records) if r["type"] == "tool_call" and r.get("callId") == call_id)
    revised = {k: v for k, v in previous.items() if k not in ("type", "seq", "id", "ts", "turnId", "trigger",
                                                             "_meta", "supersedes")}
    revised["input"] = {"revised": draw(words)}
    revised.pop("inputText", None)
    state.add(draw, "tool_call", supersedes=previous["id"], **revised)


def add_shared_native_id(draw: st.DrawFn, state: StreamState) -> None:
    """Two calls sharing one native callId and a result that cannot say which it answers: linkage
    ambiguous, the native ID kept in nativeCallId, which readers must not pair by (ASR-262)."""
    call_id = streams.add_call(draw, state, state.fresh("shared_"))
    state.calls[call_id] = "native"
    streams.add_call(draw, state, call_id)
    streams.add_result(draw, state, call_id)
    result = state.records[-1]
    result.pop("callId", None)
    result.update(linkage="ambiguous", nativeCallId=call_id)


def add_removed(draw: st.DrawFn, state: StreamState) -> None:
    """Tool definitions, then a record that removes one of the tools by name (ASR-174)."""
    tools = draw(st.lists(st.sampled_from(TOOL_NAMES), min_size=1, max_size=3, unique=True))
    state.add(draw, "instructions", kind="tool_definitions", scope="session", tools=[{"name": n} for n in tools])
    if draw(st.booleans()):
        streams.add_message(draw, state)
    state.add(draw, "instructions", kind="tool_definitions", scope="session", removed=[pick(draw, tools)])


def add_decision_without_status(draw: st.DrawFn, state: StreamState) -> None:
    """A permission with a decision and no status: resolved, not unresolved (ASR-269)."""
    members: dict[str, Any] = {"requestId": state.fresh("perm_"), "subject": {"command": "git push origin main"},
                     "decision": draw(choice("allow_once", "reject_once", "allow_session"))}
    if draw(st.booleans()):
        members["decidedBy"] = draw(choice("user", "policy"))
    state.add(draw, "permission", **members)


def add_compact_beside_command(draw: st.DrawFn, state: StreamState) -> None:
    """A permission for a command, then a call whose result carries a compact decision (ASR-279)."""
    members: dict[str, Any] = {"requestId": state.fresh("perm_"), "subject": {"command": draw(choice("git push", "rm -rf build"))}}
    if draw(st.booleans()):
        members.update(status="resolved", decision=draw(choice("allow_once", "reject_once")))
    else:
        members["status"] = "pending"
    state.add(draw, "permission", **members)
    call_id = streams.add_call(draw, state)
    state.add(draw, "tool_result", callId=call_id,
              linkage="derived" if state.calls[call_id] == "derived" else "exact",
              status="completed", content=[{"type": "text", "text": draw(words)}],
              permission={"decision": draw(choice("allow_once", "allow_always")), "decidedBy": "policy"})
    state.compact_calls.add(call_id)


def add_terminal_revisions(draw: st.DrawFn, state: StreamState) -> None:
    """A terminal with output, then revisions that drop it: each record a complete snapshot (ASR-271)."""
    terminal_id = state.fresh("term_")
    first = state.add(draw, "terminal", terminalId=terminal_id, kind="shell", command="npm run dev",
                      status="running", output={"text": draw(words)})
    state.terminals[terminal_id] = first["id"]
    for _ in range(draw(st.integers(1, 2))):
        members: dict[str, Any] = {"terminalId": terminal_id, "supersedes": state.terminals[terminal_id], "kind": "shell",
                         "command": "npm run dev", "status": draw(choice("running", "exited", "stopped"))}
        if draw(st.booleans()):
            members["exitCode"] = draw(choice(0, 1))
        state.terminals[terminal_id] = state.add(draw, "terminal", **members)["id"]


def add_terminal_reads(draw: st.DrawFn, state: StreamState) -> None:
    """Results that read a terminal through exec.terminalId, or only record a processId that
    equals some terminal's terminalId: provenance, never a reference (ASR-290, ASR-291)."""
    if not state.terminals:
        add_terminal_revisions(draw, state)
    terminal_id = pick(draw, sorted(state.terminals))
    call_id = streams.add_call(draw, state)
    execution: dict[str, Any] = {"processId": terminal_id}
    if draw(st.booleans()):
        execution = {"terminalId": terminal_id, "processId": draw(st.integers(1, 99999))}
    state.add(draw, "tool_result", callId=call_id,
              linkage="derived" if state.calls[call_id] == "derived" else "exact",
              status="completed", content=[{"type": "text", "text": draw(words)}], exec=execution)


@dataclass(frozen=True, slots=True)
class Feature:
    """One construct reader rules turn on, the builder that adds it, and the rules it exercises."""

    name: str
    build: Builder
    rules: tuple[str, ...]
    description: str


FEATURES: dict[str, Feature] = {f.name: f for f in (
    Feature("client", add_client, ("ASR-179",), "declared clients and environment patches"),
    Feature("extensions", add_extensions, ("ASR-163",), "extensions declared again, required or not"),
    Feature("project", add_project, ("ASR-160",), "session_info projects replaced and cleared"),
    Feature("title", add_titles, ("ASR-181",), "new titles without a title source"),
    Feature("content-level", add_content_level, ("ASR-165",), "content levels tightened by declarations"),
    Feature("heads", add_heads, ("ASR-160",), "heads with a null primary head"),
    Feature("call-revision", add_call_revision, ("ASR-263",), "tool_call revisions"),
    Feature("shared-native-id", add_shared_native_id, ("ASR-262",),
            "calls sharing a native ID, with an ambiguous result"),
    Feature("removed", add_removed, ("ASR-174",), "tool definitions and removed tools"),
    Feature("decision-without-status", add_decision_without_status, ("ASR-269",),
            "permissions decided without a status"),
    Feature("compact-beside-command", add_compact_beside_command, ("ASR-279",),
            "compact decisions beside permissions for commands"),
    Feature("terminal-revisions", add_terminal_revisions, ("ASR-271",), "terminals and their revisions"),
    Feature("terminal-reads", add_terminal_reads, ("ASR-290", "ASR-291"),
            "results reading terminals, and process IDs"),
)}


@st.composite
def reader_streams(draw: st.DrawFn, feature: str, max_steps: int = 10) -> list[dict[str, Any]]:
    """A valid stream of generated records with ``feature`` added one to three times at drawn places."""
    chosen = FEATURES[feature]
    state = StreamState()
    _header_extras(draw, draw(headers(state)))
    plan = draw(streams.steps(max_steps))
    plan += [feature] * draw(st.integers(1, 3))
    for step in draw(st.permutations(plan)):
        (chosen.build if step == feature else streams.BUILDERS[step])(draw, state)
    streams.record_later_terminals(draw, state)
    return state.records
