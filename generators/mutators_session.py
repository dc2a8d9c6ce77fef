"""Mutators for the Session records page, the referenced Format/Records rules and
the suite-defined X- rules.

Each mutator takes any valid stream and breaks exactly one rule: it edits the
header, appends a record built to break the rule (keeping seq, IDs, roots,
turns and the content level consistent), or damages the serialized bytes of a
record it appended.  Byte-level damage goes on a line after the header, so
that line 1 stays a readable session header (ASR-003).
"""

from __future__ import annotations

import copy
import json
import string
from typing import Any

from hypothesis import strategies as st

from asr_conformance.generators.mutators import (
    NO_MUTATOR,
    Records,
    append,
    copied,
    fresh_id,
    header,
    modes,
    mutator,
    next_seq,
    of_type,
    pick,
    serialize,
)
from asr_conformance.vocabulary.terms import CONTENT_LEVELS

#: Rules whose breakage the reference validator reports under a companion rule.
ALSO_NAMED: dict[str, set[str]] = {
    # The only turn ref the pages define is state.continuationOf, and ASR-182 states
    # "continuationOf MUST be a turn ref (ASR-075)": the validator files it there.
    "ASR-075": {"ASR-182"},
}

NO_MUTATOR["ASR-167"] = (
    "ASR-167 is how a validator evaluates records (against the declarations in force at each seq), not a "
    "property of one member: a stream breaks it only by breaking a declaration-dependent rule at a record, "
    "which the ASR-164 (level tightened, then loosened), ASR-166 (root used before its declaration) and "
    "ASR-176 (participant or conversation declared again) mutators already do."
)
NO_MUTATOR["X-UNKNOWN-TYPE"] = (
    "An unknown record type is an extension: the reference validator accepts it with a warning and never "
    "rejects it, so no stream breaks this rule."
)

REQUIRED_HEADER = ("formatVersion", "agent", "sessionId", "producer", "profiles", "contentLevel")
TRIGGER_KINDS = (
    "schedule", "heartbeat", "event", "webhook", "task_completion", "peer", "auto_continuation", "recovery", "manual",
)
#: Placeholder written into a string and replaced in the serialized bytes.
HOLE = "@@asr-fuzz-hole@@"
LETTERS = string.ascii_letters + string.digits
short_words = st.text(alphabet=LETTERS, min_size=0, max_size=8)
non_strings = st.sampled_from([0, 7, -1, 1.5, True, False, None, [], ["x"], {}, {"name": "x"}])
non_objects = st.sampled_from([0, 1.5, True, None, "x", "user", [], ["x"], [{"device": "d"}]])
#: Strings that are not record IDs (empty, or holding whitespace or a control character).
bad_record_ids = st.one_of(
    st.sampled_from(["", " ", "r 1", "r\t1", "\n", "r\x00", "\x7f", "r\u00a0", "\u2028", "a\u3000b"]),
    st.builds(
        lambda left, bad, right: left + bad + right,
        short_words, st.sampled_from([" ", "\t", "\r", "\n", "\x00", "\x1b", "\x7f", "\u00a0", "\u2009"]), short_words,
    ),
)


# --- helpers --------------------------------------------------------------------------


def declared_ids(records: Records, member: str) -> set[str]:
    """IDs of the roots, participants or conversations the header and declarations declare."""
    found: set[str] = set()
    for record in records:
        if record.get("type") == "session":
            holder = record.get("workspace") if member == "roots" else record
            entries = holder.get(member) if isinstance(holder, dict) else None
        elif record.get("type") == "declaration":
            entries = record.get(member)
        else:
            continue
        if isinstance(entries, list):
            found.update(e["id"] for e in entries if isinstance(e, dict) and isinstance(e.get("id"), str))
    return found


def fresh_name(used: set[str], prefix: str) -> str:
    number = len(used)
    while f"{prefix}{number}" in used:
        number += 1
    return f"{prefix}{number}"


def turn_ids(records: Records) -> set[str]:
    return {r["turnId"] for r in records if isinstance(r.get("turnId"), str)}


def started_turns(records: Records) -> list[str]:
    """Turns that already have a first record (compaction records never start a turn)."""
    return sorted(
        {r["turnId"] for r in records[1:] if isinstance(r.get("turnId"), str) and r.get("type") != "compaction"}
    )


def effective_content_level(records: Records) -> str:
    """The content level in force after the last record (header, then each tightening)."""
    level = header(records).get("contentLevel")
    for declaration in of_type(records, "declaration"):
        declared = declaration.get("contentLevel")
        if declared in CONTENT_LEVELS and (
            level not in CONTENT_LEVELS or CONTENT_LEVELS.index(declared) >= CONTENT_LEVELS.index(level)
        ):
            level = declared
    return level if level in CONTENT_LEVELS else "full"


def valid_trigger(draw: st.DrawFn) -> dict[str, Any]:
    trigger: dict[str, Any] = {"kind": draw(st.sampled_from(TRIGGER_KINDS))}
    if draw(st.booleans()):
        trigger["native"] = draw(st.sampled_from(["scheduled", "cron", "heartbeat"]))
    return trigger


def line_of(record: dict[str, Any]) -> bytes:
    return serialize([record])


def compact_json(value: object) -> str:
    """JSON text written as ``serialize`` writes it."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def fill(line: bytes, raw: bytes, quoted: bool = False) -> bytes:
    """Replace the placeholder (with its quotes when ``quoted``) by raw bytes."""
    hole = json.dumps(HOLE).encode() if quoted else HOLE.encode()
    assert line.count(hole) == 1
    return line.replace(hole, raw)


def append_carrier(draw: st.DrawFn, records: Records, text: str) -> dict[str, Any]:
    """Append a valid record whose one free string is ``text`` (ASCII around the placeholder)."""
    shape = draw(st.sampled_from(["state", "session_info", "config_change"]))
    if shape == "state":
        return append(records, "state", state="running", _meta={"note": text})
    if shape == "session_info":
        return append(records, "session_info", title=text)
    return append(records, "config_change", mode=text)


SIMPLE_RECORDS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("state", {"state": "running"}),
    ("session_info", {"title": "Fix failing parser test"}),
    ("config_change", {"effort": "high"}),
    ("memory_change", {"store": "auto_memory", "op": "add", "cause": {"actor": "agent"}}),
)


def simple_record(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    """A record type and members (a fresh copy) that are valid on their own, anywhere in a stream."""
    kind, members = draw(st.sampled_from(SIMPLE_RECORDS))
    return kind, copy.deepcopy(members)


def with_meta(record: dict[str, Any], value: object) -> None:
    """Add one member to the record's _meta (creating it)."""
    meta = record.setdefault("_meta", {})
    meta[fresh_name(set(meta), "asr.fuzz")] = value


# --- Format and Records (referenced rules) ---------------------------------------------


modes("ASR-003", **{
    "empty": "empty-stream",
    # Only "the header is line 1" is stated; whether a later session record is an error is A-HEADER-ONCE.
    "second-header": {"defect": "second-session-record", "assumptions": ("A-HEADER-ONCE",)},
    "record-before-header": "header-not-on-line-1",
})
modes("ASR-018", all="id-not-a-record-id")
modes("ASR-032", all="integer-outside-safe-range")
modes("ASR-075", ("ASR-075", "ASR-182"), all="continuation-not-a-turn-ref")
modes("ASR-076", **{
    "decider": "actor-not-an-object",
    "answeredBy": "actor-not-an-object",
    # The reference files review.by under the permission rule that requires it (ASR-281).
    "review-by": {"defect": "actor-not-an-object", "names": ("ASR-076", "ASR-281")},
})


@mutator("ASR-003")
def header_not_on_line_one(draw: st.DrawFn, records: Records) -> bytes:
    """Line 1 is not the session header: an empty stream, a second header, or a record before the header."""
    stream = copied(records)
    how = pick(draw, "ASR-003")
    if how == "empty":
        return b""
    if how == "second-header":
        first = header(stream)
        append(stream, "session", **{m: copy.deepcopy(first[m]) for m in REQUIRED_HEADER if m in first})
        return serialize(stream)
    kind, members = simple_record(draw)
    for record in stream:
        record["seq"] += 1
    stream.insert(0, {"type": kind, "seq": 0, "id": fresh_id(stream), **members})
    return serialize(stream)


@mutator("ASR-018")
def id_not_a_record_id(draw: st.DrawFn, records: Records) -> bytes:
    """A record, root, participant or conversation ID does not match the record ID pattern."""
    stream = copied(records)
    bad = draw(st.one_of(bad_record_ids, st.sampled_from([0, 12, None, True, ["r1"], {"id": "r1"}])))
    where = draw(st.sampled_from(["record", "root", "participant", "conversation", "header-root"]))
    if where == "record":
        kind, members = simple_record(draw)
        stream.append({"type": kind, "seq": next_seq(stream), "id": bad, **members})
    elif where == "root":
        append(stream, "declaration", roots=[{"id": bad, "path": "/work/lib"}])
    elif where == "header-root":
        workspace = header(stream).setdefault("workspace", {})
        workspace.setdefault("roots", []).append({"id": bad, "path": None})
    elif where == "participant":
        append(stream, "declaration", participants=[{"id": bad, "kind": "human"}])
    else:
        append(stream, "declaration", conversations=[{"id": bad, "channel": "slack"}])
    return serialize(stream)


@mutator("ASR-032")
def integer_outside_safe_range(draw: st.DrawFn, records: Records) -> bytes:
    """An integer lies outside ±(2^53−1)."""
    stream = copied(records)
    magnitude = draw(st.one_of(st.integers(2**53, 2**53 + 1000), st.integers(2**53, 2**70), st.just(10**30)))
    number = magnitude if draw(st.booleans()) else -magnitude
    value = draw(st.sampled_from(["bare", "array", "object"]))
    wrapped = number if value == "bare" else [1, number] if value == "array" else {"count": number}
    if draw(st.booleans()):
        target = stream[draw(st.integers(0, len(stream) - 1))]
    else:
        kind, members = simple_record(draw)
        target = append(stream, kind, **members)
    with_meta(target, wrapped)
    return serialize(stream)


def _not_a_turn_ref(text: str) -> bool:
    return not text.startswith("turnId=") or text == "turnId="


@mutator("ASR-075")
def continuation_not_a_turn_ref(draw: st.DrawFn, records: Records) -> bytes:
    """state.continuationOf is not a turn ref of the form turnId=<id>."""
    stream = copied(records)
    earlier = draw(st.sampled_from(sorted(turn_ids(stream)) or ["t12"]))
    bad = draw(
        st.one_of(
            st.sampled_from([earlier, "", "turnId=", "turnid=" + earlier, "turn=" + earlier, " turnId=" + earlier,
                             "turnId:" + earlier, "#turnId=" + earlier]),
            st.text(alphabet=LETTERS + "=:#/ ", max_size=12).filter(_not_a_turn_ref),
        )
    )
    turn = fresh_name(turn_ids(stream), "turn-fuzz-")
    append(stream, "state", turnId=turn, state="running", continuationOf=bad)
    return serialize(stream)


@mutator("ASR-076")
def actor_not_an_object(draw: st.DrawFn, records: Records) -> bytes:
    """An actor reference (permission.decider, a permission review's by, input_request.answeredBy) is not an object."""
    stream = copied(records)
    bad = draw(st.one_of(non_objects, st.sampled_from(["dev_8f2c41", "exec-auto-review"])))
    request_id = fresh_name({str(r.get("requestId")) for r in stream}, "req_fuzz_")
    how = pick(draw, "ASR-076")
    if how == "review-by":
        append(stream, "permission", requestId=request_id, subject={"command": "git push origin main"},
               reviews=[{"by": bad, "verdict": draw(st.sampled_from(["denied", "approved"]))}])
    elif how == "decider":
        members: dict[str, Any] = {"requestId": request_id, "subject": {"command": "git push origin main"}, "decider": bad}
        if draw(st.booleans()):
            members.update(status="resolved", decision="allow_once", decidedBy="user")
        append(stream, "permission", **members)
    else:
        append(stream, "input_request", requestId=request_id, mode="url",
               url="https://example.invalid/authorize", answeredBy=bad)
    return serialize(stream)


# --- session header ----------------------------------------------------------------------


modes("ASR-150", **{
    "formatVersion": {"defect": "header-without-formatVersion", "names": ("ASR-150", "ASR-151")},
    "agent": "header-without-agent",
    "sessionId": "header-without-sessionId",
    "producer": {"defect": "header-without-producer", "names": ("ASR-150", "ASR-155")},
    "profiles": {"defect": "header-without-profiles", "names": ("ASR-150", "ASR-152")},
    "contentLevel": {"defect": "header-without-contentLevel", "names": ("ASR-150", "ASR-153")},
    "agent.name": "agent-without-name",
    "agent-not-object": "agent-not-an-object",
    # agent is {name, version?}: the pages give name no type (A-UNTYPED).
    "name-not-string": {"defect": "agent-name-not-a-string", "assumptions": ("A-UNTYPED",)},
    "sessionId-not-string": "sessionId-not-a-string",
})


@mutator("ASR-150")
def header_lacks_required_member(draw: st.DrawFn, records: Records) -> bytes:
    """The header lacks formatVersion, agent (with name), sessionId, producer, profiles or contentLevel."""
    stream = copied(records)
    first = header(stream)
    how = pick(draw, "ASR-150")
    if how == "agent.name":
        first["agent"].pop("name")
    elif how == "agent-not-object":
        first["agent"] = draw(st.sampled_from(["claude-code", None, ["claude-code"], 1]))
    elif how == "name-not-string":
        first["agent"]["name"] = draw(non_strings)
    elif how == "sessionId-not-string":
        first["sessionId"] = draw(st.sampled_from([None, 1234, ["s-1"], {"id": "s-1"}]))
    else:
        first.pop(how)
    return serialize(stream)


modes("ASR-151", **{
    "not-major-minor": "formatVersion-not-major-minor",
    # A present but null or non-string formatVersion: "formatVersion, string, yes" (ASR-150's list) as well.
    "not-a-string": {"defect": "formatVersion-not-a-string", "names": ("ASR-151", "ASR-150")},
})


@mutator("ASR-151")
def format_version_not_major_minor(draw: st.DrawFn, records: Records) -> bytes:
    """formatVersion is not of the form MAJOR.MINOR."""
    stream = copied(records)
    if pick(draw, "ASR-151") == "not-a-string":
        bad: object = draw(st.sampled_from([0.1, 1, None, ["0.1"], {"major": 0}]))
    else:
        bad = draw(
            st.one_of(
                st.sampled_from(["0.1.0", "1", "v0.1", "0.1 ", " 0.1", "0.1\n", "", "0,1", "0.", ".1", "a.b",
                                 "\u0660.1"]),
                st.text(alphabet="0123456789.v- ", max_size=8).filter(lambda s: not _is_major_minor(s)),
            )
        )
    header(stream)["formatVersion"] = bad
    return serialize(stream)


def _is_major_minor(text: str) -> bool:
    major, dot, minor = text.partition(".")
    return bool(dot) and major.isascii() and minor.isascii() and major.isdigit() and minor.isdigit()


modes("ASR-152", **{
    "drop-core": "profiles-without-core",
    "not-array": {"defect": "profiles-not-an-array", "names": ("ASR-152", "ASR-150")},
    "non-string-item": {"defect": "profile-not-a-string", "names": ("ASR-152", "ASR-150")},
    "declaration-non-string": "declared-profile-not-a-string",
})


@mutator("ASR-152")
def profiles_without_core(draw: st.DrawFn, records: Records) -> bytes:
    """profiles does not include "core" (or is not an array of strings)."""
    stream = copied(records)
    first = header(stream)
    how = pick(draw, "ASR-152")
    if how == "drop-core":
        kept = [p for p in first["profiles"] if p != "core"]
        replacement = draw(st.sampled_from([None, "Core", "CORE", "core ", "_core", "coding"]))
        first["profiles"] = kept + ([replacement] if replacement else [])
    elif how == "not-array":
        first["profiles"] = draw(st.sampled_from(["core", None, {"core": True}, 1]))
    elif how == "non-string-item":
        first["profiles"].insert(draw(st.integers(0, len(first["profiles"]))), draw(non_strings))
    else:
        append(stream, "declaration", profiles=["_dev.example/review", draw(non_strings)])
    return serialize(stream)


modes("ASR-153", **{
    "header": {"defect": "contentLevel-not-listed", "names": ("ASR-153", "ASR-150")},
    "declaration": {"defect": "declared-contentLevel-not-listed", "names": ("ASR-153", "ASR-164")},
})


@mutator("ASR-153")
def content_level_not_listed(draw: st.DrawFn, records: Records) -> bytes:
    """contentLevel is not full, redacted or metadata."""
    stream = copied(records)
    bad = draw(
        st.one_of(
            st.sampled_from(["Full", "FULL", "none", "partial", "", "redact", "metadata ", "public"]),
            st.sampled_from([None, 0, ["full"], {"level": "full"}]),
        )
    )
    if pick(draw, "ASR-153") == "header":
        header(stream)["contentLevel"] = bad
    else:
        append(stream, "declaration", contentLevel=bad)
    return serialize(stream)


@mutator("ASR-155")
def producer_lacks_required_member(draw: st.DrawFn, records: Records) -> bytes:
    """producer lacks name, version, method or instance (or one is not a string)."""
    stream = copied(records)
    producer = header(stream)["producer"]
    member = draw(st.sampled_from(["name", "version", "method", "instance"]))
    if draw(st.booleans()):
        producer.pop(member)
    else:
        producer[member] = draw(non_strings)
    return serialize(stream)


modes("ASR-156", **{
    "no-lossy": "non-native-without-lossy",
    "no-source": "non-native-without-source",
    "no-format": "non-native-source-without-format",
    # source is {format, formatVersion?, agentVersion?}: the pages give format no type (A-UNTYPED).
    "format-not-string": {"defect": "source-format-not-a-string", "assumptions": ("A-UNTYPED",)},
    "source-not-object": "source-not-an-object",
    "lossy-not-strings": {"defect": "lossy-not-strings", "names": ("ASR-156", "ASR-150", "ASR-157")},
})


@mutator("ASR-156")
def non_native_producer_lacks_source(draw: st.DrawFn, records: Records) -> bytes:
    """A producer whose method is not native lacks source.format or lossy."""
    stream = copied(records)
    producer = header(stream)["producer"]
    producer["method"] = draw(st.sampled_from(["converter", "decoded", "recorder", "observer", "import", "x-sync"]))
    source = producer.get("source")
    if not isinstance(source, dict) or not isinstance(source.get("format"), str):
        producer["source"] = {"format": "claude-code-jsonl"}
    producer.setdefault("lossy", [])
    how = pick(draw, "ASR-156")
    if how == "no-lossy":
        producer.pop("lossy")
    elif how == "no-source":
        producer.pop("source")
    elif how == "no-format":
        producer["source"] = {"formatVersion": "37"} if draw(st.booleans()) else {}
    elif how == "format-not-string":
        producer["source"]["format"] = draw(non_strings)
    elif how == "source-not-object":
        producer["source"] = draw(st.sampled_from(["claude-code-jsonl", None, ["claude-code-jsonl"], 1]))
    else:
        producer["lossy"] = draw(st.sampled_from(["reasoning.signature", None, [1], {"a": "b"}]))
    return serialize(stream)


modes("ASR-158", **{
    "header-path": "root-path-not-absolute",
    "declaration-path": {"defect": "declared-root-path-not-absolute", "names": ("ASR-158", "ASR-166")},
    "no-path": {"defect": "root-without-path", "names": ("ASR-158", "ASR-166")},
    "no-id": {"defect": "root-without-id", "names": ("ASR-158", "ASR-166")},
    "header-duplicate": "root-id-twice-in-header",
})


@mutator("ASR-158")
def root_path_not_absolute(draw: st.DrawFn, records: Records) -> bytes:
    """A root lacks id or path, has a path neither null nor absolute with /, or repeats a header root ID."""
    stream = copied(records)
    root_id = fresh_name(declared_ids(stream, "roots"), "root")
    bad_path = draw(
        st.one_of(
            st.sampled_from(["relative/dir", "./app", "~/work", "C:\\work\\app", "/work\\app", "", "work", "C:work",
                             "\\\\server\\share", "../up", 0, ["/work"], {"path": "/work"}]),
            st.text(alphabet=LETTERS + "._-", min_size=1, max_size=10),
        )
    )
    how = pick(draw, "ASR-158")
    in_header = how in ("header-path", "header-duplicate") or draw(st.booleans())
    header_roots = header(stream).setdefault("workspace", {}).setdefault("roots", []) if in_header else []
    if how == "header-duplicate" and header_roots:
        header_roots.append({"id": draw(st.sampled_from([r["id"] for r in header_roots])), "path": None})
    elif how == "declaration-path":
        append(stream, "declaration", roots=[{"id": root_id, "path": bad_path}])
    elif how in ("no-path", "no-id"):
        root = {"id": root_id, "path": "/work/lib"}
        root.pop("path" if how == "no-path" else "id")
        if in_header:
            header_roots.append(root)
        else:
            append(stream, "declaration", roots=[root])
    else:
        header_roots.append({"id": root_id, "path": bad_path})
    return serialize(stream)


# --- session_info and declaration ------------------------------------------------------------


modes("ASR-161", **{
    # What a Ref is comes from the reference-resolution table, which is not in the pages (A-REFS).
    "item": {"defect": "head-not-a-reference", "assumptions": ("A-REFS",)},
    "not-array": "heads-not-an-array",
    "audit-only": {"defect": "head-names-audit-only-record", "assumptions": ("A-REFS",)},
})


@mutator("ASR-161")
def head_not_a_context_reference(draw: st.DrawFn, records: Records) -> bytes:
    """A head is not a reference or null, heads is not an array, or a head names an audit-only record."""
    stream = copied(records)
    how = pick(draw, "ASR-161")
    if how == "not-array":
        heads: object = draw(st.sampled_from(["r1", 5, {"primary": "r1"}, True]))
    elif how == "item":
        heads = [draw(st.sampled_from([1, 0.5, True, {}, {"id": "r1"}, ["r1"]]))]
    else:
        audit_only = [r["id"] for r in stream if r.get("type") in ("instructions", "input_request")]
        if not audit_only or draw(st.booleans()):
            added = append(stream, "instructions", kind="tool_definitions", removed=["mcp__github__create_issue"])
            audit_only = [added["id"]]
        heads = [draw(st.sampled_from(audit_only))]
    if isinstance(heads, list) and draw(st.booleans()):
        heads.insert(0, None)
    append(stream, "session_info", heads=heads)
    return serialize(stream)


@mutator("ASR-162")
def declaration_declares_nothing(draw: st.DrawFn, records: Records) -> bytes:
    """A declaration contains none of its defined members."""
    stream = copied(records)
    extra: dict[str, Any] = draw(
        st.sampled_from([{}, {"ts": "2026-10-26T14:10:19.006Z"}, {"_meta": {"dev.example": {"note": "x"}}},
                         {"note": "new root"}, {"root": {"id": "lib", "path": "/work/lib"}}, {"level": "metadata"}])
    )
    append(stream, "declaration", **extra)
    return serialize(stream)


@mutator("ASR-164")
def declaration_loosens_content_level(draw: st.DrawFn, records: Records) -> bytes:
    """A declaration's contentLevel is less strict than the level in force before it."""
    stream = copied(records)
    level = effective_content_level(stream)
    if level == "full":
        level = draw(st.sampled_from(["redacted", "metadata"]))
        append(stream, "declaration", contentLevel=level)
    looser = draw(st.sampled_from(CONTENT_LEVELS[: CONTENT_LEVELS.index(level)]))
    append(stream, "declaration", contentLevel=looser)
    return serialize(stream)


def _root_reference(draw: st.DrawFn, stream: Records, root: str) -> None:
    """Append a record whose PathRef names ``root``."""
    carrier = draw(st.sampled_from(["config_change", "instructions", "memory_change"]))
    ref = {"root": root, "path": draw(st.sampled_from([".", "src", "AGENTS.md"]))}
    if carrier == "config_change":
        append(stream, "config_change", sandbox={"mode": "workspace-write", "writableRoots": [ref]})
    elif carrier == "instructions":
        append(stream, "instructions", kind="project", source=ref, capture={"content": {"state": "absent"}})
    else:
        append(stream, "memory_change", store="auto_memory", op="update", target={"path": ref},
               cause={"actor": "agent"})


modes("ASR-166", **{
    # ASR-158 states the same uniqueness ("across the header and all declaration records").
    "redeclare": {"defect": "root-redeclared", "names": ("ASR-166", "ASR-158")},
    "never-declared": "root-never-declared",
    "declared-later": {"defect": "root-used-before-declaration", "names": ("ASR-166", "ASR-167")},
})


@mutator("ASR-166")
def root_redeclared_or_used_before_declaration(draw: st.DrawFn, records: Records) -> bytes:
    """A declaration reuses a root ID, or a record refers to a root before (or without) its declaration."""
    stream = copied(records)
    declared = sorted(declared_ids(stream, "roots"))
    root = fresh_name(set(declared), "root")
    how = pick(draw, "ASR-166")
    if how == "redeclare":
        if not declared or draw(st.booleans()):
            append(stream, "declaration", roots=[{"id": root, "path": "/work/lib"}])
            declared = [root]
        append(stream, "declaration", roots=[{"id": draw(st.sampled_from(declared)), "path": "/work/other"}])
    else:
        _root_reference(draw, stream, root)
        if how == "declared-later":
            append(stream, "declaration", roots=[{"id": root, "path": "/work/lib"}])
    return serialize(stream)


# --- state, turns and triggers ----------------------------------------------------------------


@mutator("ASR-168")
def state_without_state(draw: st.DrawFn, records: Records) -> bytes:
    """A state record lacks state (or its state is not a string)."""
    stream = copied(records)
    members: dict[str, Any] = {}
    if draw(st.booleans()):
        members["state"] = draw(st.sampled_from([None, 1, ["idle"], {"value": "idle"}, True]))
    if draw(st.booleans()):
        members["ts"] = "2026-10-26T14:31:07.552Z"
    if draw(st.booleans()):
        members["stopReason"] = "end_turn"
    append(stream, "state", **members)
    return serialize(stream)


modes("ASR-182", **{
    # First, so the simplest draw (the one Hypothesis tries first) is the boundary: n is 0, one below the least.
    "attempt-n-zero": "attempt-n-zero",
    "no-turnId": "turn-link-without-turnId",
    "attempt-n": "attempt-n-not-a-positive-integer",
    "attempt-shape": "attempt-without-n",
    "turn-missing": "turn-link-without-turnId-member",
    "turn-not-object": "turn-link-not-an-object",
    # parentTurn and rootTurn are {session?, turnId}: the pages give turnId no type (A-UNTYPED).
    "turnId-not-string": {"defect": "turn-link-turnId-not-a-string", "assumptions": ("A-UNTYPED",)},
    "turn-session": "turn-link-session-with-fragment",
    # A session reference is defined in Identity; the pages do not say it is a string (A-UNTYPED).
    "turn-session-not-string": {"defect": "turn-link-session-not-a-string", "assumptions": ("A-UNTYPED",)},
    "executedBy-session": "executedBy-without-session",
    "executedBy-session-not-string": {"defect": "executedBy-session-not-a-string", "assumptions": ("A-UNTYPED",)},
})


@mutator("ASR-182")
def turn_link_malformed(draw: st.DrawFn, records: Records) -> bytes:
    """A turn link sits on a state without turnId, attempt.n is not an integer >= 1, or a link lacks turnId/session."""
    stream = copied(records)
    members: dict[str, Any] = {"state": draw(st.sampled_from(["running", "queued", "idle"]))}
    how = pick(draw, "ASR-182")
    if how == "no-turnId":
        link = draw(st.sampled_from(["attempt", "continuationOf", "parentTurn", "rootTurn", "executedBy"]))
        members[link] = {"attempt": {"n": 1}, "continuationOf": "turnId=t12", "parentTurn": {"turnId": "t0"},
                         "rootTurn": {"turnId": "t0"}, "executedBy": {"session": "codex:019a3c2e"}}[link]
        append(stream, "state", **members)
        return serialize(stream)
    members["turnId"] = fresh_name(turn_ids(stream), "turn-fuzz-")
    if how == "attempt-n-zero":
        members["attempt"] = {"n": 0, **draw(st.sampled_from([{}, {"reason": "retry"}]))}
    elif how == "attempt-n":
        members["attempt"] = {"n": draw(st.one_of(st.integers(-5, -1), st.sampled_from([1.5, 0.5, "1", True, None, [1]]))),
                              "reason": "retry"}
    elif how == "attempt-shape":
        members["attempt"] = draw(st.sampled_from([{}, {"reason": "retry"}, 1, "1", [1]]))
    elif how == "turn-missing":
        link = draw(st.sampled_from(["parentTurn", "rootTurn"]))
        members[link] = draw(st.sampled_from([{}, {"session": "codex:019a3c2e"}]))
    elif how == "turn-not-object":
        members[draw(st.sampled_from(["parentTurn", "rootTurn"]))] = draw(st.sampled_from(["t0", ["t0"]]))
    elif how == "turnId-not-string":
        members[draw(st.sampled_from(["parentTurn", "rootTurn"]))] = {"turnId": draw(st.sampled_from([7, True, ["t0"]]))}
    elif how == "turn-session":
        link = draw(st.sampled_from(["parentTurn", "rootTurn"]))
        members[link] = {"turnId": "t0", "session": draw(st.sampled_from(["codex:019a3c2e#r5", "#t0"]))}
    elif how == "turn-session-not-string":
        link = draw(st.sampled_from(["parentTurn", "rootTurn"]))
        members[link] = {"turnId": "t0", "session": draw(st.sampled_from([5, None, {}]))}
    elif how == "executedBy-session":
        members["executedBy"] = draw(st.sampled_from([{}, {"turnId": "t9"}, "codex:x"]))
    else:
        members["executedBy"] = draw(st.sampled_from([{"session": 5}, {"session": None}]))
    append(stream, "state", **members)
    return serialize(stream)


@mutator("ASR-184")
def trigger_not_on_turns_first_record(draw: st.DrawFn, records: Records) -> bytes:
    """A trigger sits on a record without turnId, or on a record that is not its turn's first."""
    stream = copied(records)
    trigger = valid_trigger(draw)
    kind, members = simple_record(draw)
    how = draw(st.sampled_from(["no-turnId", "existing-turn", "second-record"]))
    if how == "no-turnId":
        append(stream, kind, trigger=trigger, **members)
        return serialize(stream)
    started = started_turns(stream)
    if how == "existing-turn" and started:
        turn = draw(st.sampled_from(started))
    else:
        turn = fresh_name(turn_ids(stream), "turn-fuzz-")
        if draw(st.booleans()):
            append(stream, "compaction", turnId=turn)
        first: dict[str, Any] = {"turnId": turn, "state": "running"}
        if draw(st.booleans()):
            first["trigger"] = valid_trigger(draw)
        append(stream, "state", **first)
    append(stream, kind, turnId=turn, trigger=trigger, **members)
    return serialize(stream)


modes("ASR-185", **{
    "no-kind-or-native": "trigger-without-kind-or-native",
    "not-object": "trigger-not-an-object",
    # "the actor-reference objects defined in Identity" (config_change section): settled by the pages.
    "source-not-actor": {"defect": "actor-not-an-object", "assumptions": ("A-ACTOR",),
                         "names": ("ASR-185", "ASR-076")},
})


@mutator("ASR-185")
def trigger_without_kind_or_native(draw: st.DrawFn, records: Records) -> bytes:
    """A trigger lacks both kind and native, is not an object, or its source is not an actor reference."""
    stream = copied(records)
    how = pick(draw, "ASR-185")
    if how == "no-kind-or-native":
        bad: object = draw(st.sampled_from([{}, {"id": "8c41d2e7"}, {"runId": "8c41d2e7-1761570000"},
                                            {"reason": "nightly", "schedule": "0 8 * * *"},
                                            {"source": {"device": "dev_8f2c41"}}]))
    elif how == "not-object":
        bad = draw(st.sampled_from(["schedule", None, 1, ["schedule"], True]))
    else:
        bad = {**valid_trigger(draw), "source": draw(non_objects)}
    if draw(st.booleans()):
        header(stream)["trigger"] = bad
    else:
        turn = fresh_name(turn_ids(stream), "turn-fuzz-")
        kind, members = simple_record(draw)
        append(stream, kind, turnId=turn, trigger=bad, **members)
    return serialize(stream)


# --- config_change, instructions, memory_change --------------------------------------------------


@mutator("ASR-171")
def config_change_changes_nothing(draw: st.DrawFn, records: Records) -> bytes:
    """A config_change contains none of model, effort, mode, permissionMode, sandbox, agent, options, capability."""
    stream = copied(records)
    members: dict[str, Any] = {}
    if draw(st.booleans()):
        members["actor"] = draw(st.sampled_from(["user", "harness", "model", "policy"]))
    if draw(st.booleans()):
        members["snapshot"] = draw(st.booleans())
    if draw(st.booleans()):
        members["ts"] = "2026-10-26T14:08:40.117Z"
    if draw(st.booleans()):
        members["models"] = {"id": "claude-sonnet-5-5"}
    append(stream, "config_change", **members)
    return serialize(stream)


@mutator("ASR-173")
def instructions_without_kind_or_body(draw: st.DrawFn, records: Records) -> bytes:
    """An instructions record lacks kind, or has none of content, tools, removed, digest or a capture.content state."""
    stream = copied(records)
    body: dict[str, Any] = draw(st.sampled_from([{"removed": ["mcp__github__list_issues"]}, {"tools": [{"name": "Bash"}]},
                                 {"capture": {"content": {"state": "absent"}}}]))
    how = draw(st.sampled_from(["no-kind", "kind-not-string", "no-body"]))
    if how == "no-kind":
        append(stream, "instructions", **body)
    elif how == "kind-not-string":
        append(stream, "instructions", kind=draw(non_strings), **body)
    else:
        extra: dict[str, Any] = draw(st.sampled_from([{}, {"name": "CLAUDE.md"}, {"scope": "session", "truncated": True},
                                      {"capture": {"tools": {"state": "absent"}}}]))
        append(stream, "instructions", kind=draw(st.sampled_from(["project", "system_prompt", "skill"])), **extra)
    return serialize(stream)


modes("ASR-188", **{
    "missing": "capability-without-kind-name-or-op",
    # capability is {kind, name, op}: the pages give its members no type (A-UNTYPED).
    "not-string": {"defect": "capability-member-not-a-string", "assumptions": ("A-UNTYPED",)},
    "not-object": "capability-not-an-object",
})


@mutator("ASR-188")
def capability_incomplete(draw: st.DrawFn, records: Records) -> bytes:
    """A config_change capability lacks kind, name or op (or one is not a string)."""
    stream = copied(records)
    members: dict[str, object] = {"kind": "mcp_server", "name": "github", "op": "needs_auth"}
    capability: object = members
    how = pick(draw, "ASR-188")
    member = draw(st.sampled_from(["kind", "name", "op"]))
    if how == "missing":
        members.pop(member)
    elif how == "not-string":
        members[member] = draw(non_strings)
    else:
        capability = draw(st.sampled_from(["github", None, 1, ["mcp_server", "github", "install"]]))
    append(stream, "config_change", capability=capability, actor="harness")
    return serialize(stream)


@mutator("ASR-190")
def memory_change_incomplete(draw: st.DrawFn, records: Records) -> bytes:
    """A memory_change lacks store, op or cause, or its cause has not exactly one of callId or actor."""
    stream = copied(records)
    members: dict[str, Any] = {"store": "auto_memory", "op": "update", "cause": {"actor": "agent"}}
    how = draw(st.sampled_from(["missing", "not-string", "cause-both", "cause-neither", "cause-not-object"]))
    if how == "missing":
        members.pop(draw(st.sampled_from(["store", "op", "cause"])))
    elif how == "not-string":
        members[draw(st.sampled_from(["store", "op"]))] = draw(non_strings)
    elif how == "cause-both":
        members["cause"] = {"callId": "toolu_01M", "actor": "agent"}
    elif how == "cause-neither":
        members["cause"] = draw(st.sampled_from([{}, {"note": "agent"}]))
    else:
        members["cause"] = draw(st.sampled_from(["agent", None, ["toolu_01M"], 1]))
    append(stream, "memory_change", **members)
    return serialize(stream)


# --- participants, conversations, session references ------------------------------------------------


modes("ASR-175", **{
    "participant-id": "participant-without-id",
    "participant-shape": "participant-not-an-object",
    "identity": "identity-without-scheme-or-value",
    # ids is [{scheme, value, basis?}]: the pages give scheme and value no type (A-UNTYPED).
    "identity-not-string": {"defect": "identity-member-not-a-string", "assumptions": ("A-UNTYPED",)},
    "conversation-id": "conversation-without-id",
    "conversation-channel": "conversation-without-channel",
    "conversation-shape": "conversation-not-an-object",
})


@mutator("ASR-175")
def participant_or_conversation_incomplete(draw: st.DrawFn, records: Records) -> bytes:
    """A participant lacks id, a conversation lacks id or channel, or an identity lacks scheme or value."""
    stream = copied(records)
    participant_id = fresh_name(declared_ids(stream, "participants"), "p")
    conversation_id = fresh_name(declared_ids(stream, "conversations"), "c")
    how = pick(draw, "ASR-175")
    member = "conversations" if how.startswith("conversation") else "participants"
    if how == "participant-id":
        entry: object = {"kind": "human", "displayName": "Dana"}
    elif how == "participant-shape":
        entry = draw(st.sampled_from(["p9", None, 1, ["p9"]]))
    elif how in ("identity", "identity-not-string"):
        identity: dict[str, Any] = {"scheme": "whatsapp", "value": "+15125550147", "basis": "profile"}
        if how == "identity":
            identity.pop(draw(st.sampled_from(["scheme", "value"])))
        else:
            identity[draw(st.sampled_from(["scheme", "value"]))] = draw(non_strings)
        entry = {"id": participant_id, "ids": [identity]}
    elif how == "conversation-id":
        entry = {"channel": "whatsapp", "kind": "group"}
    elif how == "conversation-channel":
        conversation: dict[str, object] = {"id": conversation_id, "kind": "direct"}
        if draw(st.booleans()):
            conversation["channel"] = draw(non_strings)
        entry = conversation
    else:
        entry = draw(st.sampled_from(["c9", None, 1, ["c9"]]))
    if draw(st.booleans()):
        header(stream).setdefault(member, []).append(entry)
    else:
        append(stream, "declaration", **{member: [entry]})
    return serialize(stream)


def _people_entry(member: str, ident: str) -> dict[str, Any]:
    """A minimal valid participant or conversation."""
    return {"id": ident, "channel": "slack"} if member == "conversations" else {"id": ident}


@mutator("ASR-176")
def participant_or_conversation_redeclared(draw: st.DrawFn, records: Records) -> bytes:
    """A participant or conversation ID is declared twice, or a conversation's parent is not declared."""
    stream = copied(records)
    how = draw(st.sampled_from(["participant-again", "conversation-again", "parent-undeclared", "parent-not-string"]))
    if how in ("participant-again", "conversation-again"):
        member = how.split("-")[0] + "s"
        known = sorted(declared_ids(stream, member))
        if bool(known) and draw(st.booleans()):
            append(stream, "declaration", **{member: [_people_entry(member, draw(st.sampled_from(known)))]})
        else:
            twice = _people_entry(member, fresh_name(set(known), member[0]))
            if draw(st.booleans()):
                append(stream, "declaration", **{member: [twice, dict(twice)]})
            else:
                append(stream, "declaration", **{member: [twice]})
                append(stream, "declaration", **{member: [dict(twice)]})
        return serialize(stream)
    declared = declared_ids(stream, "conversations")
    conversation_id = fresh_name(declared, "c")
    if how == "parent-undeclared":
        parent: object = fresh_name(declared | {conversation_id}, "parent")
    else:
        parent = draw(non_strings)
    append(stream, "declaration", conversations=[{"id": conversation_id, "channel": "slack", "kind": "thread",
                                                  "parent": parent}])
    return serialize(stream)


modes("ASR-180", **{
    "fragment": "continuedIn-with-fragment",
    # "SessionRef or null": a SessionRef is defined in Identity, not in the pages (A-UNTYPED).
    "not-a-string": {"defect": "continuedIn-not-a-string", "assumptions": ("A-UNTYPED",)},
})


@mutator("ASR-180")
def continued_in_not_a_session_ref(draw: st.DrawFn, records: Records) -> bytes:
    """session_info.continuedIn is not a session reference without a # part."""
    stream = copied(records)
    fragment = draw(short_words)
    if pick(draw, "ASR-180") == "fragment":
        bad: object = draw(st.sampled_from([f"claude-code:6e1b0d4a-2f7c-4a39-8d5e-1c9b7a3f0e28#{fragment}",
                                            f"#{fragment}", f"codex:019a3c2e#turnId={fragment}"]))
    else:
        bad = draw(st.sampled_from([1, True, ["claude-code:6e1b"], {"session": "claude-code:6e1b"}]))
    append(stream, "session_info", continuedIn=bad)
    return serialize(stream)


# --- suite-defined: bytes and JSON -------------------------------------------------------------------


def _stream_with_damaged_carrier(draw: st.DrawFn, records: Records, damage: bytes, quoted: bool) -> bytes:
    stream = copied(records)
    prefix, suffix = draw(short_words), draw(short_words)
    carrier = append_carrier(draw, stream, HOLE if quoted else prefix + HOLE + suffix)
    return serialize(stream[:-1]) + fill(line_of(carrier), damage, quoted)


@mutator("X-UTF8")
def invalid_utf8(draw: st.DrawFn, records: Records) -> bytes:
    """A string of a record holds bytes that are not UTF-8."""
    bad = draw(st.sampled_from([b"\xff", b"\xfe", b"\x80", b"\xbf\xbf", b"\xc0\xaf", b"\xc1\x81", b"\xed\xa0\x80",
                                b"\xe2\x82", b"\xf0\x9f\x98", b"\xf4\x90\x80\x80", b"\xf8\x88\x80\x80\x80"]))
    return _stream_with_damaged_carrier(draw, records, bad, quoted=False)


modes("X-JSON", **{
    "non-finite": "non-finite-number",
    "value": "value-not-json",
    "in-string": "bad-character-in-string",
    "truncated": "truncated-line",
    "trailing-comma": "trailing-comma",
    "extra-text": "text-after-the-value",
    # Line 1 itself: the header is unreadable too, which the reference also reports under ASR-003.
    "header": {"defect": "header-line-not-json", "names": ("X-JSON", "ASR-003")},
})


@mutator("X-JSON")
def line_not_json(draw: st.DrawFn, records: Records) -> bytes:
    """A line is not exactly one JSON value (bad token, bad string, truncation, trailing text)."""
    how = pick(draw, "X-JSON")
    if how == "header":
        lines = [line_of(r) for r in records]
        lines[0] = draw(st.sampled_from([b"x", b"'", b"#", b"session "])) + lines[0]
        return b"".join(lines)
    if how in ("value", "non-finite"):
        token = draw(st.sampled_from([b"NaN", b"Infinity", b"-Infinity"] if how == "non-finite" else
                                     [b"012", b"'x'", b".5", b"1.", b"+1", b"tru", b"undefined", b"0x1F", b"None",
                                      b"[1,]", b"{\"a\"}"]))
        return _stream_with_damaged_carrier(draw, records, token, quoted=True)
    if how == "in-string":
        raw = draw(st.sampled_from([b"\t", b"\x00", b"\x01", b"\r", b"\x1f", b"\\q", b"\\u12", b"\\x41", b"\\"]))
        return _stream_with_damaged_carrier(draw, records, raw + b"z", quoted=False)
    stream = copied(records)
    carrier = append_carrier(draw, stream, draw(short_words))
    body = line_of(carrier)[:-1]
    if how == "truncated":
        body = body[: draw(st.integers(1, len(body) - 1))]
    elif how == "trailing-comma":
        body = body[:-1] + b",}"
    else:
        body += draw(st.sampled_from([b" x", b"}", b",", b" " + body, body, b"]"]))
    return serialize(stream[:-1]) + body + b"\n"


@mutator("X-RECORD")
def line_not_an_object(draw: st.DrawFn, records: Records) -> bytes:
    """A line holds a JSON value that is not an object."""
    value = draw(st.sampled_from([b"[]", b"[1,2]", b'[{"type":"state"}]', b'"state"', b"42", b"-0.5", b"null",
                                  b"true", b"false", b'""']))
    return serialize(records) + value + b"\n"


@mutator("X-BOM")
def byte_order_mark(draw: st.DrawFn, records: Records) -> bytes:
    """The stream starts with a UTF-8 byte order mark."""
    stream = copied(records)
    if draw(st.booleans()):
        kind, members = simple_record(draw)
        append(stream, kind, **members)
    return b"\xef\xbb\xbf" + serialize(stream)


@mutator("X-BLANK")
def blank_line(draw: st.DrawFn, records: Records) -> bytes:
    """A line of the stream is blank."""
    lines = [line_of(r) for r in records]
    blank = draw(st.sampled_from([b"\n", b" \n", b"\t\n", b"\r\n", b"  \t \n"]))
    lines.insert(draw(st.integers(1, len(lines))), blank)
    return b"".join(lines)


@mutator("X-DUPKEY")
def duplicate_key(draw: st.DrawFn, records: Records) -> bytes:
    """An object of a record writes the same key twice (same value both times)."""
    stream = copied(records)
    position = draw(st.integers(0, len(stream) - 1))
    record = stream[position]
    owner, member = record, None
    nested = [k for k, v in record.items() if isinstance(v, dict) and v]
    if bool(nested) and draw(st.booleans()):
        member = draw(st.sampled_from(sorted(nested)))
        owner = record[member]
    key = draw(st.sampled_from(sorted(owner)))
    text = compact_json(owner)
    duplicated = (text[:-1] + "," + compact_json(key) + ":" + compact_json(owner[key]) + "}").encode()
    if member is None:
        line = duplicated + b"\n"
    else:
        record[member] = HOLE
        line = fill(line_of(record), duplicated, quoted=True)
    lines = [line_of(r) for r in stream]
    lines[position] = line
    return b"".join(lines)


@mutator("X-SURROGATE")
def lone_surrogate_escape(draw: st.DrawFn, records: Records) -> bytes:
    """A string (value or key) holds an unpaired surrogate escape such as \\ud800."""
    stream = copied(records)
    position = draw(st.integers(0, len(stream) - 1))
    code = draw(st.integers(0xD800, 0xDFFF))
    escape = (f"\\u{code:04x}" if draw(st.booleans()) else f"\\u{code:04X}").encode()
    text = draw(short_words) + HOLE + draw(short_words)
    if draw(st.booleans()):
        with_meta(stream[position], text)
    else:
        stream[position].setdefault("_meta", {})[text] = "x"
    lines = [line_of(r) for r in stream]
    lines[position] = fill(lines[position], escape)
    return b"".join(lines)


@mutator("X-DEPTH")
def nesting_too_deep(draw: st.DrawFn, records: Records) -> bytes:
    """A _meta value nests arrays deeper than 256 levels."""
    stream = copied(records)
    position = draw(st.integers(0, len(stream) - 1))
    levels = draw(st.one_of(st.just(300), st.integers(255, 700)))
    leaf = draw(st.sampled_from([b"", b"0", b'"x"', b"{}"]))
    with_meta(stream[position], HOLE)
    lines = [line_of(r) for r in stream]
    lines[position] = fill(lines[position], b"[" * levels + leaf + b"]" * levels, quoted=True)
    return b"".join(lines)


# --- suite-defined: envelope ------------------------------------------------------------------------


@mutator("X-TYPE")
def record_without_type(draw: st.DrawFn, records: Records) -> bytes:
    """A record has no type, or a type that is not a string."""
    stream = copied(records)
    _, members = simple_record(draw)
    record: dict[str, Any] = {"seq": next_seq(stream), "id": fresh_id(stream), **members}
    how = draw(st.sampled_from(["missing", 1, None, True, 2.5]))
    if how != "missing":
        record["type"] = how
    stream.append(record)
    return serialize(stream)


@mutator("X-SEQ")
def seq_missing_or_not_increasing(draw: st.DrawFn, records: Records) -> bytes:
    """A record's seq is missing, not a non-negative integer, or not greater than the seq before it."""
    stream = copied(records)
    how = draw(st.sampled_from(["missing", "negative", "not-integer", "not-increasing", "earlier-record"]))
    if how == "earlier-record" and len(stream) > 1:
        position = draw(st.integers(1, len(stream) - 1))
        stream[position]["seq"] = draw(st.integers(0, stream[position - 1]["seq"]))
        return serialize(stream)
    kind, members = simple_record(draw)
    record = append(stream, kind, **members)
    if how == "missing":
        record.pop("seq")
    elif how == "negative":
        record["seq"] = draw(st.integers(-(2**31), -1))
    elif how == "not-integer":
        record["seq"] = draw(st.sampled_from([float(record["seq"]), str(record["seq"]), True, None, [1], 0.5]))
    else:
        record["seq"] = draw(st.integers(0, stream[-2]["seq"]))
    return serialize(stream)


@mutator("X-ID")
def id_missing_or_repeated(draw: st.DrawFn, records: Records) -> bytes:
    """A record has no id, or the id of an earlier record."""
    stream = copied(records)
    kind, members = simple_record(draw)
    record = append(stream, kind, **members)
    if draw(st.booleans()):
        record.pop("id")
    else:
        record["id"] = draw(st.sampled_from([r["id"] for r in stream[:-1]]))
    return serialize(stream)


@mutator("X-TS")
def timestamp_not_rfc3339(draw: st.DrawFn, records: Records) -> bytes:
    """ts (or another Timestamp: startedAt, error.resetAt) is not an RFC 3339 date-time with an offset."""
    stream = copied(records)
    bad: object = draw(
        st.sampled_from([
            "2026-10-26T14:02:11.204", "2026-10-26 14:02:11Z", "2026-02-29T10:00:00Z", "2026-04-31T00:00:00Z",
            "2026-13-01T00:00:00Z", "2026-10-26T24:00:00Z", "2026-10-26T14:02:11+0100", "2026-10-26T14:61:00Z",
            "26-10-26T14:02:11Z", "2026-10-26", "yesterday", "", " 2026-10-26T14:02:11Z", 1761487331, None, [],
        ])
    )
    how = draw(st.sampled_from(["ts", "startedAt", "resetAt"]))
    if how == "ts":
        stream[draw(st.integers(0, len(stream) - 1))]["ts"] = bad
    elif how == "startedAt":
        header(stream)["startedAt"] = bad
    else:
        append(stream, "state", state="error", error={"message": "Usage limit reached", "class": "usage_limit",
                                                      "resetAt": bad})
    return serialize(stream)


@mutator("X-SUPERSEDES")
def supersedes_other_type(draw: st.DrawFn, records: Records) -> bytes:
    """supersedes names an earlier record of another type."""
    stream = copied(records)
    kind, members = simple_record(draw)
    target = draw(st.sampled_from([r["id"] for r in stream if r.get("type") != kind]))
    append(stream, kind, supersedes=target, **members)
    return serialize(stream)


modes("X-SHAPE", **{
    "meta": {"defect": "meta-not-an-object", "assumptions": ("A-META",)},
    "turnId": {"defect": "turnId-not-a-string", "assumptions": ("A-ENVELOPE",)},
    "capture": {"defect": "capture-not-an-object", "assumptions": ("A-CAPTURE",)},
    "capture-state": {"defect": "capture-state-not-an-object", "assumptions": ("A-CAPTURE",)},
    "supersedes": {"defect": "supersedes-not-a-string", "assumptions": ("A-SUPERSEDES",)},
    "stopReason": "stopReason-not-a-string",
    "title": "title-not-a-string",
    "tags": "tags-not-strings",
    "effort": "effort-not-a-string",
    "model-id": "model-without-id",
    # model is {provider?, id}: the pages give id no type (A-UNTYPED).
    "model-id-type": {"defect": "model-id-not-a-string", "assumptions": ("A-UNTYPED",)},
    "namespace": "namespace-not-a-string",
    "client": "client-not-an-object",
    "client-without-name": "client-without-name",
    # client is {name, version?}: the pages give name no type (A-UNTYPED).
    "client-name": {"defect": "client-name-not-a-string", "assumptions": ("A-UNTYPED",)},
})


@mutator("X-SHAPE")
def member_of_wrong_type(draw: st.DrawFn, records: Records) -> bytes:
    """A member's value is not of the type its field table gives."""
    stream = copied(records)
    how = pick(draw, "X-SHAPE")
    if how == "namespace":
        header(stream)["namespace"] = draw(st.sampled_from([1, True, ["ns"], {"ns": 1}]))
        return serialize(stream)
    if how.startswith("client"):
        clients: dict[str, list[object]] = {"client": ["vscode", []], "client-without-name": [{"version": "1.0"}],
                                            "client-name": [{"name": 1}]}
        header(stream)["client"] = draw(st.sampled_from(clients[how]))
        return serialize(stream)
    kind, members = simple_record(draw)
    if how == "meta":
        members["_meta"] = draw(st.sampled_from(["x", 1, ["dev.example"], True]))
    elif how == "turnId":
        members["turnId"] = draw(st.sampled_from([5, True, ["turn_7"], {"id": "turn_7"}]))
    elif how == "capture":
        members["capture"] = draw(st.sampled_from(["absent", 1, [{"state": "absent"}]]))
    elif how == "capture-state":
        members["capture"] = {"content": draw(st.sampled_from(["absent", {}, {"state": 1}, {"reason": "x"}]))}
    elif how == "supersedes":
        members["supersedes"] = draw(st.sampled_from([5, True, ["r1"], {"id": "r1"}]))
    elif how == "stopReason":
        kind, members = "state", {"state": "idle", "stopReason": draw(st.sampled_from([1, True, ["end_turn"]]))}
    elif how in ("title", "tags"):
        bad = draw(st.sampled_from([5, True, {"text": "x"}]) if how == "title" else st.sampled_from(["x", [1], {}]))
        kind, members = "session_info", {how: bad}
    elif how == "effort":
        kind, members = "config_change", {"effort": draw(st.sampled_from([3, True, ["high"]]))}
    elif how == "model-id":
        kind, members = "config_change", {"model": draw(st.sampled_from([{}, {"provider": "anthropic"}]))}
    else:
        kind, members = "config_change", {"model": {"id": draw(st.sampled_from([5, True, ["x"]]))}}
    append(stream, kind, **members)
    return serialize(stream)

