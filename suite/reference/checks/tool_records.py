"""Checks for the tool-records page (ASR-250 ... ASR-291): tool_call,
tool_result and exec, permission and the compact permission, input_request,
terminal and hook."""

from __future__ import annotations

from typing import Any

from asr_conformance.reference.checks.context import CallEntry, Pending, RecordContext, Reporter, StreamIndex
from asr_conformance.reference.checks.envelope import check_path_ref
from asr_conformance.reference.checks.shapes import (
    ACTOR,
    ANY,
    BOOLEAN,
    CONTENT_PARTS,
    INTEGER,
    NUMBER,
    OBJECT,
    OBJECTS,
    SAFE_INTEGER,
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

EXIT_CODE_MIN = -(2**31)
EXIT_CODE_MAX = 2**32 - 1
COMMAND = STRING | STRINGS

TOOL_CALL = MemberTable({
    "callId": (STRING, "ASR-250"),
    "callIdSource": (STRING, "ASR-250"),
    "name": (STRING, "ASR-250"),
    "kind": STRING,
    "title": STRING,
    "input": ANY,
    "inputText": (STRING, "ASR-254"),
    "requestedBy": STRING,
    "parentCallId": STRING,
    "provider": (OBJECT, "ASR-255"),
    "locations": OBJECTS,
})
#: Members that carry an outcome elsewhere in the pages; a call has none (ASR-251).
OUTCOME_MEMBERS = ("status", "exec", "error", "content", "decision", "permission")
PROVIDER = MemberTable({
    "kind": (STRING, "ASR-255"), "server": STRING, "tool": STRING, "name": STRING,
    "identity": (STRING, "ASR-255"),
})
TOOL_RESULT = MemberTable({
    "callId": (STRING, "ASR-257"),
    "nativeCallId": STRING,
    "linkage": (STRING, "ASR-257"),
    "status": (STRING, "ASR-257"),
    "content": CONTENT_PARTS,
    "displayContent": CONTENT_PARTS,
    "raw": ANY,
    "error": OBJECT,
    "exec": OBJECT,
    "startedAt": (TIMESTAMP, "X-TS"),
    "completedAt": (TIMESTAMP, "X-TS"),
    "durationMs": NUMBER,
    "provider": (OBJECT, "ASR-255"),
    "permission": (OBJECT, "ASR-277"),
})
LINKAGES = ("exact", "derived", "ambiguous", "none")
EXEC = MemberTable({
    "command": COMMAND,
    "exitCode": (INTEGER, "ASR-260"),
    "signal": (STRING, "ASR-288"),
    "timedOut": BOOLEAN,
    "stdout": STRING,
    "stderr": STRING,
    "output": STRING,
    "terminalId": (STRING, "ASR-290"),
    "processId": (STRING | SAFE_INTEGER, "ASR-289"),
})
COMPACT_PERMISSION = MemberTable({"decision": (STRING, "ASR-277"), "decidedBy": STRING, "rule": STRING})
PERMISSION = MemberTable({
    "requestId": (STRING, "ASR-268"),
    "subject": (OBJECT, "ASR-268"),
    "title": STRING,
    "description": STRING,
    "options": OBJECTS,
    "status": STRING,
    "decision": STRING,
    "selectedOptionId": STRING,
    "decidedBy": STRING,
    "decider": (ACTOR, "ASR-076"),
    "reviews": (OBJECTS, "ASR-281"),
    "rule": STRING,
    "reason": STRING,
    "rationale": STRING,
    "feedback": STRING,
    "decidedAt": (TIMESTAMP, "X-TS"),
})
OPTION = MemberTable({"optionId": STRING, "name": STRING, "kind": STRING})
INPUT_REQUEST = MemberTable({
    "requestId": (STRING, "ASR-282"),
    "callId": STRING,
    "mode": (STRING, "ASR-282"),
    "message": STRING,
    "questions": (OBJECTS, "ASR-282"),
    "requestedSchema": OBJECT,
    "url": STRING,
    "secret": BOOLEAN,
    "blocking": BOOLEAN,
    "status": STRING,
    "answers": (OBJECTS, "ASR-282"),
    "response": STRING | OBJECT,
    "answerRef": (STRING, "ASR-284"),
    "answeredBy": (ACTOR, "ASR-076"),
})
QUESTION = MemberTable({
    "id": (STRING, "ASR-282"), "header": STRING, "text": (STRING, "ASR-282"), "options": OBJECTS,
    "multiSelect": BOOLEAN, "allowOther": BOOLEAN, "secret": BOOLEAN,
})
ANSWER = MemberTable({"questionId": (STRING, "ASR-282"), "selected": STRINGS, "text": STRING})
TERMINAL = MemberTable({
    "terminalId": (STRING, "ASR-271"),
    "kind": STRING,
    "callId": STRING,
    "command": COMMAND,
    "description": STRING,
    "status": STRING,
    "awaited": BOOLEAN,
    "exitCode": (INTEGER, "ASR-260"),
    "signal": (STRING, "ASR-288"),
    "output": OBJECT,
    "startedAt": (TIMESTAMP, "X-TS"),
    "completedAt": (TIMESTAMP, "X-TS"),
})
HOOK = MemberTable({
    "event": (STRING, "ASR-273"),
    "hookId": STRING,
    "name": STRING,
    "handlerKind": STRING,
    "command": COMMAND,
    "callId": STRING,
    "status": STRING,
    "decision": STRING,
    "exitCode": (INTEGER, "ASR-260"),
    "timedOut": BOOLEAN,
    "stdout": STRING,
    "stderr": STRING,
    "output": CONTENT_PARTS,
    "durationMs": NUMBER,
})
#: tool_result.error.
RESULT_ERROR = MemberTable({"message": STRING, "code": STRING | INTEGER})
#: permission.subject.
SUBJECT = MemberTable({"callId": STRING, "command": COMMAND})
#: Each of permission.reviews.
REVIEW = MemberTable({"verdict": STRING, "rationale": STRING})
#: terminal.output.
TERMINAL_OUTPUT = MemberTable({"text": STRING, "blob": ANY})
#: Integers whose range a numbered rule of these pages states; ASR-032 stays silent on them.
RANGED_MEMBERS = frozenset({"/exec/exitCode", "/exec/processId", "/exitCode"})


# --- tool_call ----------------------------------------------------------------


def check_tool_call(ctx: RecordContext, index: StreamIndex) -> None:
    call = ctx.record
    check_members(ctx, call, TOOL_CALL)
    require(ctx, call, ("callId", "callIdSource"), "ASR-250", "a tool_call")
    capture = call.get("capture")
    if "name" not in call and not (type(capture) is dict and "name" in capture):
        ctx.error("ASR-250", "a tool_call must contain name unless capture.name gives its capture state", "/name")
    one_of_values(ctx, call, "callIdSource", ("native", "derived"), "ASR-250")
    if "input" in call and "inputText" in call:
        ctx.error("ASR-254", "a tool_call must not contain both input and inputText", "/inputText")
    for name in OUTCOME_MEMBERS:
        if name in call:
            ctx.error("ASR-251", f"a tool_call records a request and carries no outcome; {name} belongs on "
                      "a tool_result or permission record", f"/{name}")
    if type(call.get("provider")) is dict:
        check_provider(ctx, call["provider"], "/provider")
    locations = call.get("locations")
    if type(locations) is list:
        for position, location in enumerate(locations):
            where = f"/locations/{position}"
            check_path_ref(ctx, index, location, where, "a location")
            line = location.get("line") if type(location) is dict else None
            if line is not None and (not is_int(line) or line < 1):
                ctx.error("X-SHAPE", f"a location's line is 1-based, not {describe(line)}", f"{where}/line")
    call_id = call.get("callId")
    if type(call_id) is str:
        entry = index.calls.get(call_id)
        if entry is None:
            entry = index.calls[call_id] = CallEntry()
        if "supersedes" not in call:
            entry.entities += 1
        source = call.get("callIdSource")
        if type(source) is str:
            entry.sources.add(source)


def check_provider(ctx: RecordContext, provider: dict[str, Any], pointer: str) -> None:
    """ASR-255."""
    require(ctx, provider, ("kind", "identity"), "ASR-255", "provider", pointer)
    check_members(ctx, provider, PROVIDER, pointer)
    one_of_values(ctx, provider, "identity", ("exact", "parsed", "unknown"), "ASR-255", pointer)


# --- tool_result --------------------------------------------------------------


def check_tool_result(ctx: RecordContext, index: StreamIndex) -> None:
    result = ctx.record
    check_members(ctx, result, TOOL_RESULT)
    require(ctx, result, ("linkage", "status"), "ASR-257", "a tool_result")
    one_of_values(ctx, result, "linkage", LINKAGES, "ASR-257")
    linkage = result.get("linkage")
    call_id = result.get("callId")
    if linkage in ("exact", "derived") and "callId" not in result:
        ctx.error("ASR-257", f"linkage is {linkage!r}, so the tool_result must contain callId", "/callId")
    elif linkage == "none" and "callId" in result:
        ctx.error("ASR-257", "linkage \"none\" means no evidence links the result to a call, so callId "
                  "must be absent", "/callId")
    elif linkage == "ambiguous" and "callId" in result:
        ctx.warn("ASR-262", "linkage is \"ambiguous\" but callId is present; an ambiguous result normally "
                 "leaves callId absent and keeps the native ID in nativeCallId", "/callId")
    if linkage in ("exact", "derived") and type(call_id) is str:
        index.linked_results.append(Pending(ctx.line, ctx.seq, call_id, "/linkage"))
        if linkage == "derived":
            index.derived_results.append(Pending(ctx.line, ctx.seq, call_id, "/linkage"))
    _check_content_capture(ctx, result)
    if type(result.get("exec")) is dict:
        _check_exec(ctx, index, result["exec"])
    if type(result.get("provider")) is dict:
        check_provider(ctx, result["provider"], "/provider")
    error = result.get("error")
    if type(error) is dict:
        check_members(ctx, error, RESULT_ERROR, "/error")
    if type(result.get("permission")) is dict:
        _check_compact_permission(ctx, index, result["permission"], call_id)


def _check_content_capture(ctx: RecordContext, result: dict[str, Any]) -> None:
    """ASR-259: without content, capture.content says why."""
    if "content" in result:
        return
    capture = result.get("capture")
    if not (type(capture) is dict and "content" in capture):
        ctx.error("ASR-259", "the tool_result has no content, so capture.content must give its state "
                  "(for example {\"state\": \"absent\"})", "/content")


def _check_exec(ctx: RecordContext, index: StreamIndex, exec_: dict[str, Any]) -> None:
    check_members(ctx, exec_, EXEC, "/exec")
    check_exit_code(ctx, exec_, "/exec")
    if "cwd" in exec_:
        check_path_ref(ctx, index, exec_["cwd"], "/exec/cwd", "exec.cwd")
    terminal = exec_.get("terminalId")
    if type(terminal) is str:
        index.terminal_references.append(Pending(ctx.line, ctx.seq, terminal, "/exec/terminalId"))


def check_exit_code(ctx: RecordContext, holder: dict[str, Any], pointer: str) -> None:
    """exitCode lies between -2^31 and 2^32-1 (the exec table; filed under ASR-260)."""
    code = holder.get("exitCode")
    if is_int(code) and not EXIT_CODE_MIN <= code <= EXIT_CODE_MAX:
        ctx.error("ASR-260", f"exitCode {code} is outside the range of exit statuses, -2^31 to 2^32-1",
                  f"{pointer}/exitCode")


def _check_compact_permission(ctx: RecordContext, index: StreamIndex, permission: dict[str, Any], call_id: object) -> None:
    """ASR-277, and ASR-278 (no compact form beside a permission record for the same call)."""
    if "decision" not in permission:
        ctx.error("ASR-277", "a tool_result.permission must contain decision", "/permission/decision")
    check_members(ctx, permission, COMPACT_PERMISSION, "/permission")
    if type(call_id) is not str:
        return
    if call_id in index.permission_subjects:
        ctx.error("ASR-278", f"a permission record (line {index.permission_subjects[call_id]}) already has "
                  f"subject.callId {call_id!r}; this result must not also carry a compact permission",
                  "/permission")
    else:
        index.compact_permissions.setdefault(call_id, ctx.line)


# --- permission ---------------------------------------------------------------


def check_permission(ctx: RecordContext, index: StreamIndex) -> None:
    permission = ctx.record
    check_members(ctx, permission, PERMISSION)
    require(ctx, permission, ("requestId",), "ASR-268", "a permission")
    subject = permission.get("subject")
    if type(subject) is dict:
        present = [name for name in ("callId", "command") if name in subject]
        if len(present) != 1:
            found = " and ".join(present) if present else "neither"
            ctx.error("ASR-268", f"subject must contain exactly one of callId or command (found {found})",
                      "/subject")
        check_members(ctx, subject, SUBJECT, "/subject")
        call_id = subject.get("callId")
        if type(call_id) is str and len(present) == 1:
            if call_id in index.compact_permissions:
                ctx.error("ASR-278", f"the tool_result on line {index.compact_permissions[call_id]} carries a "
                          f"compact permission for call {call_id!r}, which this permission record also covers",
                          "/subject/callId")
            index.permission_subjects.setdefault(call_id, ctx.line)
    options = permission.get("options")
    if type(options) is list:
        for position, option in enumerate(options):
            if type(option) is not dict:
                continue
            for name in ("optionId", "name", "kind"):
                if name not in option:
                    ctx.error("X-SHAPE", f"each option must contain {name}", f"/options/{position}/{name}")
            check_members(ctx, option, OPTION, f"/options/{position}")
    status = permission.get("status")
    if status == "resolved" and "decision" not in permission:
        ctx.error("ASR-281", "status is \"resolved\", so decision must be present", "/decision")
    elif status in ("pending", "held") and "decision" in permission:
        ctx.error("ASR-281", f"status is {status!r}, so decision must be absent", "/decision")
    reviews = permission.get("reviews")
    if type(reviews) is list:
        for position, review in enumerate(reviews):
            if type(review) is not dict:
                continue
            if "by" not in review:
                ctx.error("ASR-281", "each review must contain by, an actor reference", f"/reviews/{position}/by")
            elif type(review["by"]) is not dict:
                ctx.error("ASR-281", f"review.by must be an actor reference (an object), not "
                          f"{describe(review['by'])}", f"/reviews/{position}/by")
            check_members(ctx, review, REVIEW, f"/reviews/{position}")


# --- input_request ------------------------------------------------------------


def check_input_request(ctx: RecordContext, index: StreamIndex) -> None:
    request = ctx.record
    check_members(ctx, request, INPUT_REQUEST)
    require(ctx, request, ("requestId", "mode"), "ASR-282", "an input_request")
    if request.get("mode") == "questions" and "questions" not in request:
        ctx.error("ASR-282", "mode is \"questions\", so the input_request must contain questions", "/questions")
    questions = request["questions"] if type(request.get("questions")) is list else []
    secret_questions: set[str] = set()
    question_ids: set[str] = set()
    for position, question in enumerate(questions):
        if type(question) is not dict:
            continue
        where = f"/questions/{position}"
        for name in ("id", "text"):
            if name not in question:
                ctx.error("ASR-282", f"each question must contain {name}", f"{where}/{name}")
        check_members(ctx, question, QUESTION, where)
        question_id = question.get("id")
        if type(question_id) is str:
            if question_id in question_ids:
                ctx.error("ASR-284", f"question ID {question_id!r} is used twice in this input_request",
                          f"{where}/id")
            question_ids.add(question_id)
            if question.get("secret") is True:
                secret_questions.add(question_id)
        options = question.get("options")
        if type(options) is list:
            for number, option in enumerate(options):
                if type(option) is dict and "label" not in option:
                    ctx.error("ASR-282", "each option must contain label", f"{where}/options/{number}/label")
    whole_secret = request.get("secret") is True
    answers = request["answers"] if type(request.get("answers")) is list else []
    for position, answer in enumerate(answers):
        if type(answer) is not dict:
            continue
        where = f"/answers/{position}"
        check_members(ctx, answer, ANSWER, where)
        question_id = answer.get("questionId")
        if "questionId" not in answer:
            ctx.error("ASR-282", "each answer must contain questionId", f"{where}/questionId")
        elif type(question_id) is str and question_id not in question_ids:
            ctx.error("ASR-284", f"answer names question {question_id!r}, which this record does not ask",
                      f"{where}/questionId")
        if whole_secret or question_id in secret_questions:
            for name in ("selected", "text"):
                if name in answer:
                    ctx.error("ASR-283", f"the answer to a secret question must not record the value "
                              f"({name} is present); record only that it was asked and how it ended",
                              f"{where}/{name}")
    if whole_secret and "response" in request:
        ctx.error("ASR-283", "the request asks for a secret, so its response (the value) must not be recorded",
                  "/response")
    answer_ref = request.get("answerRef")
    if type(answer_ref) is str:
        index.answer_references.append(Pending(ctx.line, ctx.seq, answer_ref, "/answerRef"))


# --- terminal and hook ----------------------------------------------------------


def check_terminal(ctx: RecordContext, index: StreamIndex) -> None:
    terminal = ctx.record
    check_members(ctx, terminal, TERMINAL)
    require(ctx, terminal, ("terminalId",), "ASR-271", "a terminal")
    check_exit_code(ctx, terminal, "")
    if "cwd" in terminal:
        check_path_ref(ctx, index, terminal["cwd"], "/cwd", "cwd")
    output = terminal.get("output")
    if type(output) is dict:
        check_members(ctx, output, TERMINAL_OUTPUT, "/output")
    terminal_id = terminal.get("terminalId")
    record_id = terminal.get("id")
    if type(terminal_id) is not str:
        return
    previous = index.terminals.get(terminal_id)
    if previous is not None and terminal.get("supersedes") != previous:
        ctx.error("ASR-271", f"terminal {terminal_id!r} was recorded before (record {previous!r}); a later "
                  "state is a revision that supersedes the previous record", "/supersedes")
    index.terminals[terminal_id] = record_id if type(record_id) is str else ""


def check_hook(ctx: RecordContext, index: StreamIndex) -> None:
    hook = ctx.record
    check_members(ctx, hook, HOOK)
    require(ctx, hook, ("event",), "ASR-273", "a hook")
    check_exit_code(ctx, hook, "")


# --- end of stream ---------------------------------------------------------------


def finish(index: StreamIndex, report: Reporter) -> None:
    """References that the whole stream had a chance to satisfy."""
    for pending in index.terminal_references:
        if pending.key not in index.terminals:
            report(pending, "ASR-290", f"exec.terminalId {pending.key!r} names no terminal record in the stream")
    for pending in index.derived_results:
        entry = index.calls.get(pending.key)
        if entry is not None and "derived" not in entry.sources:
            report(pending, "ASR-257", f"linkage is \"derived\" but the tool_call with callId {pending.key!r} "
                   "has callIdSource \"native\"; a derived link pairs with a derived call ID")
    for pending in index.linked_results:
        entry = index.calls.get(pending.key)
        if entry is not None and entry.entities > 1:
            # Valid: ASR-263 describes this stream (readers leave the result unpaired); whether the source
            # showed which call it answers (ASR-262) is for the producer checks, not the stream.
            report(pending, "ASR-262", f"{entry.entities} tool_calls share callId {pending.key!r}, so readers "
                   "leave this result unpaired (ASR-263); if the source does not show which call it answers, "
                   "the producer should write linkage \"ambiguous\" without callId", warning=True)
    for pending in index.answer_references:
        target = index.record_types.get(pending.key)
        if target is None:
            report(pending, "ASR-284", f"answerRef {pending.key!r} names no record of this stream", warning=True)
        elif target != "message":
            report(pending, "ASR-284", f"answerRef {pending.key!r} names a {target} record; it must resolve "
                   "to a message record")
