"""Checks for the session-records page (ASR-150 ... ASR-192): session,
session_info, declaration, state, trigger, config_change, instructions and
memory_change."""

from __future__ import annotations

import re
from typing import Any

from asr_conformance.reference.checks.context import Pending, RecordContext, Reporter, StreamIndex
from asr_conformance.reference.checks.envelope import check_path_ref, check_session_ref, is_record_id
from asr_conformance.reference.checks.shapes import (
    ACTOR,
    ANY,
    ARRAY,
    BOOLEAN,
    CONTENT_PARTS,
    INTEGER,
    NULL,
    NUMBER,
    OBJECT,
    OBJECTS,
    STRING,
    STRINGS,
    TIMESTAMP,
    MemberTable,
    check_members,
    describe,
    is_int,
    one_of_values,
    require,
)
from asr_conformance.vocabulary.terms import CONTENT_LEVELS

#: Profiles the pages use in examples or name; Extensibility, which lists them
#: all, is not in the pages (A-PROFILES in ASSUMPTIONS.md).
KNOWN_PROFILES = frozenset({"core", "coding", "lineage", "usage", "messaging"})
FORMAT_VERSION = re.compile(r"[0-9]+\.[0-9]+")
TURN_REF = re.compile(r"turnId=.+", re.DOTALL)
#: Absolute path with / separators: POSIX, or a drive letter (A-PATHS).
ABSOLUTE_PATH = re.compile(r"^(/|[A-Za-z]:/)")
#: Record types the pages call audit-only: not in the context view, so never a head (ASR-161).
AUDIT_ONLY_TYPES = frozenset({"instructions", "input_request"})

HEADER = MemberTable({
    "formatVersion": (STRING, "ASR-151"),
    "agent": (OBJECT, "ASR-150"),
    "namespace": STRING | NULL,
    "sessionId": (STRING, "ASR-150"),
    "producer": (OBJECT, "ASR-155"),
    "authority": STRING,
    "startedAt": (TIMESTAMP, "X-TS"),
    "trigger": (OBJECT, "ASR-185"),
    "client": OBJECT,
    "lineage": OBJECT,
    "scope": STRING,
    "workspace": OBJECT,
    "environment": OBJECT,
    "participants": ARRAY,
    "conversations": ARRAY,
    "conversationKey": STRING,
    "profiles": (STRINGS, "ASR-152"),
    "contentLevel": (STRING, "ASR-153"),
    "extensions": OBJECTS,
    "derivedFrom": OBJECT,
})
PRODUCER = MemberTable({
    "name": (STRING, "ASR-155"),
    "version": (STRING, "ASR-155"),
    "method": (STRING, "ASR-155"),
    "instance": (STRING, "ASR-155"),
    "source": (OBJECT, "ASR-156"),
    "lossy": (STRINGS, "ASR-156"),
})
ROOT = MemberTable({"nativePath": STRING, "vcs": OBJECT, "pathDigest": ANY})
PARTICIPANT = MemberTable({
    "kind": STRING, "role": STRING, "displayName": STRING, "ids": OBJECTS, "self": BOOLEAN,
})
CONVERSATION = MemberTable({"kind": STRING, "nativeId": STRING, "parent": (STRING, "ASR-176")})
EXTENSION = MemberTable({"id": STRING, "version": STRING, "required": BOOLEAN})
NAMED = MemberTable({"name": STRING, "version": STRING})
DECLARATION_MEMBERS = (
    "profiles", "extensions", "lossy", "contentLevel", "roots", "participants", "conversations",
    "executedBy", "agentVersion", "client", "environment", "producer",
)
DECLARATION = MemberTable({
    "profiles": (STRINGS, "ASR-152"),
    "extensions": OBJECTS,
    "lossy": STRINGS,
    "contentLevel": (STRING, "ASR-153"),
    "roots": OBJECTS,
    "participants": ARRAY,
    "conversations": ARRAY,
    "executedBy": ARRAY,
    "agentVersion": STRING,
    "client": OBJECT,
    "environment": OBJECT,
    "producer": OBJECT,
})
SESSION_INFO = MemberTable({
    "title": STRING | NULL,
    "titleSource": STRING | NULL,
    "heads": (ARRAY | NULL, "ASR-161"),
    "tags": STRINGS | NULL,
    "flags": STRINGS | NULL,
    "project": OBJECT | NULL,
})
STATE = MemberTable({
    "state": (STRING, "ASR-168"),
    "stopReason": STRING,
    "error": OBJECT,
    "attempt": (OBJECT, "ASR-182"),
    "continuationOf": (STRING, "ASR-182"),
    "parentTurn": (OBJECT, "ASR-182"),
    "rootTurn": (OBJECT, "ASR-182"),
    "executedBy": (OBJECT, "ASR-182"),
})
STATE_ERROR = MemberTable({
    "message": STRING,
    "code": STRING | INTEGER,
    "class": STRING,
    "retryable": BOOLEAN,
    "resetAt": (TIMESTAMP, "X-TS"),
    "retry": OBJECT,
})
TURN_LINKS = ("attempt", "continuationOf", "parentTurn", "rootTurn", "executedBy")
STOPPED_STATES = ("idle", "error", "ended")
TRIGGER = MemberTable({
    "kind": STRING, "native": STRING, "id": STRING, "runId": STRING,
    "schedule": STRING | OBJECT, "reason": STRING, "source": (ACTOR, "ASR-185"),
})
CONFIG_MEMBERS = ("model", "effort", "mode", "permissionMode", "sandbox", "agent", "options", "capability")
CONFIG_CHANGE = MemberTable({
    "model": OBJECT, "effort": STRING, "mode": STRING, "permissionMode": STRING,
    "sandbox": OBJECT, "agent": STRING, "options": OBJECT, "capability": (OBJECT, "ASR-188"),
    "snapshot": BOOLEAN, "actor": STRING,
})
SANDBOX = MemberTable({"mode": STRING, "network": BOOLEAN, "writableRoots": ARRAY})
CAPABILITY = MemberTable({"kind": (STRING, "ASR-188"), "name": (STRING, "ASR-188"), "op": (STRING, "ASR-188")})
INSTRUCTIONS = MemberTable({
    "kind": (STRING, "ASR-173"), "name": STRING, "uri": STRING, "content": CONTENT_PARTS,
    "tools": OBJECTS, "removed": STRINGS, "truncated": BOOLEAN, "scope": STRING,
})
INSTRUCTIONS_BODY = ("content", "tools", "removed", "digest")
MEMORY_CHANGE = MemberTable({
    "store": (STRING, "ASR-190"), "scope": STRING, "op": (STRING, "ASR-190"),
    "target": OBJECT, "cause": (OBJECT, "ASR-190"), "status": STRING,
})
#: The header's agent.
AGENT = MemberTable({"name": (STRING, "ASR-150"), "version": STRING})
#: A root's vcs.
VCS = MemberTable({"type": STRING, "remote": STRING, "head": STRING, "branch": STRING, "dirty": BOOLEAN})
#: Each of a participant's ids.
IDENTITY = MemberTable({"scheme": (STRING, "ASR-175"), "value": (STRING, "ASR-175"), "basis": STRING})
#: session_info.project.
PROJECT = MemberTable({"id": STRING, "name": STRING})
#: A declaration's producer (a writer handover).
DECLARED_PRODUCER = MemberTable({"instance": STRING, "name": STRING, "version": STRING})
#: state.error.retry.
RETRY = MemberTable({"attempt": INTEGER, "maxAttempts": INTEGER, "delayMs": NUMBER})
#: state.attempt (n is checked on its own).
ATTEMPT = MemberTable({"reason": STRING})
#: state.executedBy (session is checked on its own).
EXECUTED_BY = MemberTable({"turnId": STRING})
#: config_change.model.
MODEL = MemberTable({"provider": STRING, "id": STRING})
#: memory_change.cause.
CAUSE = MemberTable({"callId": STRING, "actor": STRING})
#: memory_change.target (path is checked on its own).
TARGET = MemberTable({"key": STRING})


# --- session header -----------------------------------------------------------


def check_session(ctx: RecordContext, index: StreamIndex) -> None:
    header = ctx.record
    if ctx.line != 1:
        ctx.error("ASR-003", "a session header may only be line 1 of a stream", "/type")
    check_members(ctx, header, HEADER)
    require(ctx, header, ("formatVersion", "agent", "sessionId", "producer", "profiles", "contentLevel"),
            "ASR-150", "the session header")
    agent = header.get("agent")
    if type(agent) is dict:
        if "name" not in agent:
            ctx.error("ASR-150", "agent must contain name", "/agent/name")
        check_members(ctx, agent, AGENT, "/agent")
    _check_format_version(ctx, header.get("formatVersion"))
    profiles = header.get("profiles")
    if type(profiles) is list and "core" not in profiles:
        ctx.error("ASR-152", "profiles must include \"core\"", "/profiles")
    _check_profile_names(ctx, profiles)
    one_of_values(ctx, header, "contentLevel", CONTENT_LEVELS, "ASR-153")
    if header.get("contentLevel") in CONTENT_LEVELS:
        index.content_level = header["contentLevel"]
    producer = header.get("producer")
    if type(producer) is dict:
        _check_producer(ctx, producer)
    _check_named(ctx, header, "client")
    _check_extensions(ctx, header.get("extensions"))
    workspace = header.get("workspace")
    if type(workspace) is dict and "roots" in workspace:
        roots = workspace["roots"]
        if type(roots) is list:
            _declare_roots(ctx, index, roots, "/workspace/roots", "ASR-158")
        else:
            ctx.error("X-SHAPE", f"workspace.roots must be an array of roots, not {describe(roots)}",
                      "/workspace/roots")
    _declare_people(ctx, index, header)
    if type(header.get("trigger")) is dict:
        check_trigger_shape(ctx, header["trigger"], "/trigger")


def _check_format_version(ctx: RecordContext, version: object) -> None:
    if type(version) is not str:
        return
    if not FORMAT_VERSION.fullmatch(version):
        ctx.error("ASR-151", f"formatVersion {version!r} is not MAJOR.MINOR (for example \"0.1\")",
                  "/formatVersion")
    elif version != "0.1":
        ctx.warn("ASR-151", f"formatVersion {version!r}: the pages under test define \"0.1\" only",
                 "/formatVersion")


def _check_profile_names(ctx: RecordContext, profiles: object) -> None:
    if type(profiles) is not list:
        return
    for position, name in enumerate(profiles):
        if type(name) is str and name not in KNOWN_PROFILES and not name.startswith("_"):
            ctx.warn(
                "ASR-152",
                f"profile {name!r} is neither one the suite knows nor a vendor profile (starting with _); "
                "Extensibility, which lists the defined profiles, is not in the pages",
                f"/profiles/{position}",
            )


def _check_producer(ctx: RecordContext, producer: dict[str, Any]) -> None:
    check_members(ctx, producer, PRODUCER, "/producer")
    require(ctx, producer, ("name", "version", "method", "instance"), "ASR-155", "producer", "/producer")
    method = producer.get("method")
    if type(method) is str and method != "native":
        source = producer.get("source")
        if type(source) is not dict or "format" not in source:
            ctx.error("ASR-156", f"producer.method is {method!r}, so producer must contain source.format",
                      "/producer/source/format")
        elif type(source["format"]) is not str:
            ctx.error("ASR-156", f"producer.source.format must be a string, not {describe(source['format'])}",
                      "/producer/source/format")
        if "lossy" not in producer:
            ctx.error("ASR-156", f"producer.method is {method!r}, so producer must contain lossy "
                      "([] when the producer knows of no loss)", "/producer/lossy")


def _check_named(ctx: RecordContext, record: dict[str, Any], member: str) -> None:
    value = record.get(member)
    if type(value) is dict:
        if "name" not in value:
            ctx.error("X-SHAPE", f"{member} must contain name", f"/{member}/name")
        check_members(ctx, value, NAMED, f"/{member}")
    elif member in record:
        ctx.error("X-SHAPE", f"{member} must be an object {{name, version?}}, not {describe(value)}", f"/{member}")


def _check_extensions(ctx: RecordContext, extensions: object) -> None:
    if type(extensions) is not list:
        return
    for position, extension in enumerate(extensions):
        if type(extension) is not dict:
            continue
        pointer = f"/extensions/{position}"
        for name in ("id", "version", "required"):
            if name not in extension:
                ctx.error("X-SHAPE", f"each extension must contain {name}", f"{pointer}/{name}")
        check_members(ctx, extension, EXTENSION, pointer)


def _declare_roots(ctx: RecordContext, index: StreamIndex, roots: list[Any], pointer: str, rule: str) -> None:
    """ASR-158 / ASR-166: roots have new, well-formed IDs and null-or-absolute paths."""
    for position, root in enumerate(roots):
        where = f"{pointer}/{position}"
        if type(root) is not dict:
            ctx.error("X-SHAPE", f"a root must be an object, not {describe(root)}", where)
            continue
        check_members(ctx, root, ROOT, where)
        root_id = root.get("id")
        if "id" not in root:
            ctx.error("ASR-158", "each root must contain id", f"{where}/id")
        elif not is_record_id(root_id):
            ctx.error("ASR-018", f"root id must match the record ID pattern, not {describe(root_id)}", f"{where}/id")
        elif root_id in index.roots:
            ctx.error(rule, f"root ID {root_id!r} is already declared; root IDs are unique in a stream", f"{where}/id")
        else:
            index.roots.add(root_id)
        if "path" not in root:
            ctx.error("ASR-158", "each root must contain path (null when unknown or redacted)", f"{where}/path")
        else:
            path = root["path"]
            if path is not None and (type(path) is not str or not ABSOLUTE_PATH.match(path) or "\\" in path):
                ctx.error("ASR-158", f"a root's path must be null or an absolute path with / separators, "
                          f"not {describe(path)}", f"{where}/path")
        vcs = root.get("vcs")
        if type(vcs) is dict:
            if "type" not in vcs:
                ctx.error("X-SHAPE", "vcs must contain type", f"{where}/vcs/type")
            check_members(ctx, vcs, VCS, f"{where}/vcs")


def _declare_people(ctx: RecordContext, index: StreamIndex, record: dict[str, Any]) -> None:
    """ASR-175 / ASR-176 for the participants and conversations of a header or declaration."""
    participants = record.get("participants")
    if type(participants) is list:
        for position, participant in enumerate(participants):
            where = f"/participants/{position}"
            if type(participant) is not dict:
                ctx.error("ASR-175", f"a participant must be an object, not {describe(participant)}", where)
                continue
            check_members(ctx, participant, PARTICIPANT, where)
            _declare_id(ctx, participant, index.participants, "participant", where)
            ids = participant.get("ids")
            if type(ids) is list:
                for number, identity in enumerate(ids):
                    if type(identity) is not dict:
                        continue
                    for name in ("scheme", "value"):
                        if name not in identity:
                            ctx.error("ASR-175", f"each identity in ids must contain {name}",
                                      f"{where}/ids/{number}/{name}")
                    check_members(ctx, identity, IDENTITY, f"{where}/ids/{number}")
    conversations = record.get("conversations")
    if type(conversations) is list:
        declared_here = {c.get("id") for c in conversations if type(c) is dict and type(c.get("id")) is str}
        for position, conversation in enumerate(conversations):
            where = f"/conversations/{position}"
            if type(conversation) is not dict:
                ctx.error("ASR-175", f"a conversation must be an object, not {describe(conversation)}", where)
                continue
            check_members(ctx, conversation, CONVERSATION, where)
            if "channel" not in conversation:
                ctx.error("ASR-175", "each conversation must contain channel", f"{where}/channel")
            elif type(conversation["channel"]) is not str:
                ctx.error("ASR-175", f"channel must be a string, not {describe(conversation['channel'])}",
                          f"{where}/channel")
            _declare_id(ctx, conversation, index.conversations, "conversation", where)
            parent = conversation.get("parent")
            if (type(parent) is str and parent not in index.conversations and parent not in declared_here
                    and not index.header_lost):
                ctx.error("ASR-176", f"parent {parent!r} names no conversation declared at or before this record",
                          f"{where}/parent")


def _declare_id(ctx: RecordContext, entry: dict[str, Any], known: set[str], what: str, where: str) -> None:
    if "id" not in entry:
        ctx.error("ASR-175", f"each {what} must contain id", f"{where}/id")
        return
    value = entry["id"]
    if not is_record_id(value):
        ctx.error("ASR-018", f"{what} id must match the record ID pattern, not {describe(value)}", f"{where}/id")
    elif value in known:
        ctx.error("ASR-176", f"{what} ID {value!r} is already declared; {what} IDs are unique in a stream",
                  f"{where}/id")
    else:
        known.add(value)


# --- session_info and declaration ---------------------------------------------


def check_session_info(ctx: RecordContext, index: StreamIndex) -> None:
    info = ctx.record
    check_members(ctx, info, SESSION_INFO)
    heads = info.get("heads")
    if type(heads) is list:
        for position, head in enumerate(heads):
            if head is not None and type(head) is not str:
                ctx.error("ASR-161", f"each head must be a reference or null, not {describe(head)}",
                          f"/heads/{position}")
            elif type(head) is str:
                index.head_references.append(Pending(ctx.line, ctx.seq, head, f"/heads/{position}"))
    project = info.get("project")
    if type(project) is dict:
        if "id" not in project:
            ctx.error("X-SHAPE", "project must contain id", "/project/id")
        check_members(ctx, project, PROJECT, "/project")
    if "continuedIn" in info and info["continuedIn"] is not None:
        check_session_ref(ctx, info["continuedIn"], "/continuedIn", "continuedIn", "ASR-180")


def check_declaration(ctx: RecordContext, index: StreamIndex) -> None:
    declaration = ctx.record
    if not any(name in declaration for name in DECLARATION_MEMBERS):
        ctx.error("ASR-162", "a declaration must contain at least one of " + ", ".join(DECLARATION_MEMBERS))
    check_members(ctx, declaration, DECLARATION)
    _check_profile_names(ctx, declaration.get("profiles"))
    _check_extensions(ctx, declaration.get("extensions"))
    _check_content_level(ctx, index, declaration)
    if type(declaration.get("roots")) is list:
        _declare_roots(ctx, index, declaration["roots"], "/roots", "ASR-166")
    _declare_people(ctx, index, declaration)
    if "client" in declaration:
        _check_named(ctx, declaration, "client")
    producer = declaration.get("producer")
    if type(producer) is dict:
        if "instance" not in producer:
            ctx.error("X-SHAPE", "a declared producer (a writer handover) must contain instance (ASR-006)",
                      "/producer/instance")
        check_members(ctx, producer, DECLARED_PRODUCER, "/producer")


def _check_content_level(ctx: RecordContext, index: StreamIndex, declaration: dict[str, Any]) -> None:
    """ASR-164: judged against the level in force at this declaration's seq (ASR-167)."""
    level = declaration.get("contentLevel")
    if type(level) is not str:
        return
    if level not in CONTENT_LEVELS:
        one_of_values(ctx, declaration, "contentLevel", CONTENT_LEVELS, "ASR-153")
        return
    current = index.content_level
    if current is not None and CONTENT_LEVELS.index(level) < CONTENT_LEVELS.index(current):
        ctx.error("ASR-164", f"contentLevel {level!r} would loosen the content level in force ({current!r}); "
                  "a declaration may only keep or tighten it", "/contentLevel")
        return
    index.content_level = level


# --- state and turns ----------------------------------------------------------


def check_state(ctx: RecordContext, index: StreamIndex) -> None:
    state = ctx.record
    check_members(ctx, state, STATE)
    if "state" not in state:
        ctx.error("ASR-168", "a state record must contain state")
    value = state.get("state")
    if "stopReason" in state and type(value) is str and value not in STOPPED_STATES:
        ctx.warn("ASR-168", f"stopReason should appear only when state is idle, error or ended, not {value!r}",
                 "/stopReason")
    error = state.get("error")
    if type(error) is dict:
        check_members(ctx, error, STATE_ERROR, "/error")
        retry = error.get("retry")
        if type(retry) is dict:
            if "attempt" not in retry:
                ctx.error("X-SHAPE", "error.retry must contain attempt", "/error/retry/attempt")
            check_members(ctx, retry, RETRY,
                          "/error/retry")
    _check_turn_links(ctx, state)


def _check_turn_links(ctx: RecordContext, state: dict[str, Any]) -> None:
    """ASR-182."""
    if "turnId" not in state:
        for name in TURN_LINKS:
            if name in state:
                ctx.error("ASR-182", f"{name} may appear only on a state record that has turnId", f"/{name}")
    attempt = state.get("attempt")
    if type(attempt) is dict:
        n = attempt.get("n")
        if "n" not in attempt:
            ctx.error("ASR-182", "attempt must contain n", "/attempt/n")
        elif not is_int(n) or n < 1:
            ctx.error("ASR-182", f"attempt.n must be an integer of at least 1, not {describe(n)}", "/attempt/n")
        check_members(ctx, attempt, ATTEMPT, "/attempt")
    link = state.get("continuationOf")
    if type(link) is str and not TURN_REF.fullmatch(link):
        ctx.error("ASR-182", f"continuationOf must be a turn ref of the form turnId=<id> (ASR-075), not {link!r}",
                  "/continuationOf")
    for name in ("parentTurn", "rootTurn"):
        turn = state.get(name)
        if type(turn) is not dict:
            continue
        if type(turn.get("turnId")) is not str:
            ctx.error("ASR-182", f"{name} must contain turnId, a string", f"/{name}/turnId")
        if "session" in turn:
            check_session_ref(ctx, turn["session"], f"/{name}/session", f"{name}.session", "ASR-182")
    executed_by = state.get("executedBy")
    if type(executed_by) is dict:
        if type(executed_by.get("session")) is not str:
            ctx.error("ASR-182", "executedBy must contain session, a session reference", "/executedBy/session")
        check_members(ctx, executed_by, EXECUTED_BY, "/executedBy")


def check_turn_placement(ctx: RecordContext, index: StreamIndex) -> None:
    """ASR-184: a turn's trigger sits on its first record other than a compaction."""
    record = ctx.record
    kind = record.get("type")
    if kind == "session":
        return
    turn = record.get("turnId")
    if kind == "compaction":
        # compaction.trigger is the compaction's own member (what caused it),
        # defined by Structure; a compaction never carries a turn's trigger
        # and never counts as a turn's first record.
        return
    has_trigger = "trigger" in record
    if has_trigger:
        if type(record["trigger"]) is dict:
            check_trigger_shape(ctx, record["trigger"], "/trigger")
        else:
            ctx.error("ASR-185", f"trigger must be an object, not {describe(record['trigger'])}", "/trigger")
    if type(turn) is not str:
        if has_trigger:
            ctx.error("ASR-184", "a trigger may appear only on a record that has turnId", "/trigger")
        return
    if turn in index.started_turns:
        if has_trigger:
            ctx.error("ASR-184", f"turn {turn!r} already has an earlier record; its trigger may appear only on "
                      "the turn's first record other than a compaction", "/trigger")
        return
    index.started_turns.add(turn)


def check_trigger_shape(ctx: RecordContext, trigger: dict[str, Any], pointer: str) -> None:
    """ASR-185."""
    if "kind" not in trigger and "native" not in trigger:
        ctx.error("ASR-185", "a trigger must contain kind or native, or both", pointer)
    check_members(ctx, trigger, TRIGGER, pointer)


# --- config, instructions, memory ---------------------------------------------


def check_config_change(ctx: RecordContext, index: StreamIndex) -> None:
    change = ctx.record
    if not any(name in change for name in CONFIG_MEMBERS):
        ctx.error("ASR-171", "a config_change must contain at least one of " + ", ".join(CONFIG_MEMBERS))
    check_members(ctx, change, CONFIG_CHANGE)
    model = change.get("model")
    if type(model) is dict:
        if "id" not in model:
            ctx.error("X-SHAPE", "model must contain id", "/model/id")
        check_members(ctx, model, MODEL, "/model")
    sandbox = change.get("sandbox")
    if type(sandbox) is dict:
        check_members(ctx, sandbox, SANDBOX, "/sandbox")
        roots = sandbox.get("writableRoots")
        if type(roots) is list:
            for position, ref in enumerate(roots):
                check_path_ref(ctx, index, ref, f"/sandbox/writableRoots/{position}", "a writable root")
    capability = change.get("capability")
    if type(capability) is dict:
        require(ctx, capability, ("kind", "name", "op"), "ASR-188", "capability", "/capability")
        check_members(ctx, capability, CAPABILITY, "/capability")


def check_instructions(ctx: RecordContext, index: StreamIndex) -> None:
    record = ctx.record
    check_members(ctx, record, INSTRUCTIONS)
    if "kind" not in record:
        ctx.error("ASR-173", "an instructions record must contain kind")
    capture = record.get("capture")
    captured = type(capture) is dict and "content" in capture
    if not captured and not any(name in record for name in INSTRUCTIONS_BODY):
        ctx.error("ASR-173", "an instructions record must contain at least one of content, tools, removed, "
                  "digest, or a capture.content state")
    if "source" in record:
        check_path_ref(ctx, index, record["source"], "/source", "source")
    tools = record.get("tools")
    if type(tools) is list:
        for position, tool in enumerate(tools):
            if type(tool) is dict and "name" not in tool:
                ctx.error("X-SHAPE", "each tool definition must contain name", f"/tools/{position}/name")


def check_memory_change(ctx: RecordContext, index: StreamIndex) -> None:
    record = ctx.record
    check_members(ctx, record, MEMORY_CHANGE)
    require(ctx, record, ("store", "op", "cause"), "ASR-190", "a memory_change")
    cause = record.get("cause")
    if type(cause) is dict:
        present = [name for name in ("callId", "actor") if name in cause]
        if len(present) != 1:
            found = " and ".join(present) if present else "neither"
            ctx.error("ASR-190", f"cause must contain exactly one of callId or actor (found {found})", "/cause")
        check_members(ctx, cause, CAUSE, "/cause")
    target = record.get("target")
    if type(target) is dict:
        if "path" in target:
            check_path_ref(ctx, index, target["path"], "/target/path", "target.path")
        check_members(ctx, target, TARGET, "/target")


def finish(index: StreamIndex, report: Reporter) -> None:
    """ASR-161: a head that names a record of this stream names a context-participating one (A-REFS)."""
    for pending in index.head_references:
        target = index.record_types.get(pending.key)
        if target in AUDIT_ONLY_TYPES:
            report(pending, "ASR-161", f"head {pending.key!r} names a {target} record, which is audit-only and "
                   "not part of the context view; a head must be a context-participating record")
