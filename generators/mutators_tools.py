"""Mutators for the Tools page: tool_call, tool_result and exec, permission and
the compact permission, input_request, terminal and hook.

Each breaks its rule the way the corpus' ``invalid-`` cases do, on a record of
the stream or on one it adds at a drawn position, and keeps the other rules:
new call, request and terminal IDs are fresh, new results carry content, a
compact permission never sits beside a permission record for the same call,
and no cwd, trigger or turn is added.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from asr_conformance.generators.mutators import NO_MUTATOR, Records, copied, fresh_id, modes, mutator, of_type, pick, serialize

#: Companion rules the reference may name with a mutated rule: none are needed.
ALSO_NAMED: dict[str, set[str]] = {}

TEXT = st.text(st.characters(codec="utf-8"), max_size=12)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=6,
)
TOOL_NAMES = st.sampled_from(["Bash", "Read", "Edit", "shell", "mcp__github__get_pull_request"])
COMMANDS = st.sampled_from(["cargo test -p parser", "npm run dev", "git status", "ls -la"])
STATUSES = st.sampled_from(["completed", "failed", "denied", "cancelled", "interrupted", "unknown"])
DECISIONS = st.sampled_from(["allow_once", "allow_always", "reject_once", "reject_always"])
DECIDERS = st.sampled_from(["user", "policy", "hook", "auto_mode", "agent", "classifier"])
HOOK_EVENTS = st.sampled_from(["pre_tool_use", "post_tool_use", "stop", "session_start", "workspace_setup"])
#: Numbers with a fraction part: never integers, whatever the parser.
FRACTIONS = st.builds(lambda whole, part: whole + part, st.integers(-70000, 70000), st.sampled_from([0.5, 0.25, 0.75]))


# --- finding and adding records ---------------------------------------------------


def _collect_strings(value: object, found: set[str]) -> None:
    if type(value) is str:
        found.add(value)
    elif type(value) is dict:
        for key, member in value.items():
            found.add(key)
            _collect_strings(member, found)
    elif type(value) is list:
        for item in value:
            _collect_strings(item, found)


def fresh_name(records: Records, prefix: str) -> str:
    """A string no record of the stream contains anywhere (for call, request and terminal IDs)."""
    used: set[str] = set()
    _collect_strings(records, used)
    number = 1
    while f"{prefix}{number}" in used:
        number += 1
    return f"{prefix}{number}"


def choose(draw: st.DrawFn, candidates: list[dict[str, Any]]) -> dict[str, Any] | None:
    """One of ``candidates``, or None (meaning: add a new record instead)."""
    if bool(candidates) and draw(st.booleans()):
        return candidates[draw(st.integers(0, len(candidates) - 1))]
    return None


def position_of(records: Records, record: dict[str, Any]) -> int:
    return next(number for number, r in enumerate(records) if r is record)


def insert(records: Records, position: int, record_type: str, **members: object) -> dict[str, Any]:
    """Insert a record at ``position`` (never 0, the header) with the seq after its predecessor's.

    Later records move up by one when there is no gap, so seq keeps increasing."""
    seq = records[position - 1]["seq"] + 1
    if position < len(records) and records[position]["seq"] <= seq:
        for later in records[position:]:
            later["seq"] += 1
    record = {"type": record_type, "seq": seq, "id": fresh_id(records), **members}
    records.insert(position, record)
    return record


def place(draw: st.DrawFn, records: Records, record_type: str, after: int = 1, **members: object) -> dict[str, Any]:
    """Insert a record at a drawn position at or after ``after``."""
    return insert(records, draw(st.integers(max(after, 1), len(records))), record_type, **members)


def new_call(draw: st.DrawFn, records: Records, call_id: str | None = None, source: str = "native") -> dict[str, Any]:
    """A valid tool_call with a fresh callId (unless one is given)."""
    return place(draw, records, "tool_call", callId=call_id or fresh_name(records, "call_m"), callIdSource=source,
                 name=draw(TOOL_NAMES), requestedBy="model", input={"command": draw(COMMANDS)})


def new_result(draw: st.DrawFn, records: Records, call: dict[str, Any] | None = None, linkage: str = "exact",
               **members: object) -> dict[str, Any]:
    """A valid tool_result with content, after ``call`` (a new one when None) and linked to it."""
    if call is None:
        call = new_call(draw, records)
    fields: dict[str, object] = {"callId": call["callId"], "linkage": linkage, "status": draw(STATUSES),
                                 "content": [{"type": "text", "text": draw(TEXT)}]}
    return place(draw, records, "tool_result", after=position_of(records, call) + 1, **{**fields, **members})


def new_terminal(draw: st.DrawFn, records: Records, **members: object) -> dict[str, Any]:
    fields = {"terminalId": fresh_name(records, "term_m"), "kind": "shell", "command": draw(COMMANDS),
              "status": "running", "awaited": False}
    return place(draw, records, "terminal", after=1, **{**fields, **members})


def new_hook(draw: st.DrawFn, records: Records) -> dict[str, Any]:
    return place(draw, records, "hook", event=draw(HOOK_EVENTS), handlerKind="command", command=draw(COMMANDS),
                 status="completed")


def new_permission(draw: st.DrawFn, records: Records) -> dict[str, Any]:
    subject = {"callId": fresh_name(records, "call_m")} if draw(st.booleans()) else {"command": draw(COMMANDS)}
    return place(draw, records, "permission", requestId=fresh_name(records, "perm_m"), subject=subject,
                 status="resolved", decision=draw(DECISIONS), decidedBy=draw(DECIDERS))


def new_input_request(draw: st.DrawFn, records: Records) -> dict[str, Any]:
    question = {"id": "0", "text": "Which fix?", "options": [{"label": "Parser only"}, {"label": "Everything"}]}
    answered = draw(st.booleans())
    return place(draw, records, "input_request", requestId=fresh_name(records, "req_m"), mode="questions",
                 questions=[question], status="answered" if answered else "pending",
                 answers=[{"questionId": "0", "selected": ["Parser only"]}] if answered else [])


def native_calls(records: Records) -> list[dict[str, Any]]:
    return [c for c in of_type(records, "tool_call") if c.get("callIdSource") == "native"]


def results_with_exec(records: Records) -> list[dict[str, Any]]:
    return [r for r in of_type(records, "tool_result") if type(r.get("exec")) is dict]


def exec_of(draw: st.DrawFn, records: Records) -> dict[str, Any]:
    """The exec object of a result of the stream, or of a new result."""
    result = choose(draw, results_with_exec(records)) or new_result(draw, records, exec={"command": draw(COMMANDS)})
    exec_object: dict[str, Any] = result["exec"]
    return exec_object


def call_entities(records: Records, call_id: str) -> list[dict[str, Any]]:
    """The tool_call entities with ``call_id`` (revisions are not new entities)."""
    return [c for c in of_type(records, "tool_call") if c.get("callId") == call_id and "supersedes" not in c]


def permission_subjects(records: Records) -> set[str]:
    """callIds that a permission record covers."""
    return {p["subject"]["callId"] for p in of_type(records, "permission")
            if type(p.get("subject")) is dict and type(p["subject"].get("callId")) is str}


def question_of(draw: st.DrawFn, request: dict[str, Any]) -> dict[str, Any]:
    """A question of the request, or a new one with an ID unique in it."""
    questions = request.get("questions")
    present = [q for q in questions if type(q) is dict and type(q.get("id")) is str] if type(questions) is list else []
    found = choose(draw, present)
    if found is not None:
        return found
    used = {q["id"] for q in present}
    question_id = next(f"q{n}" for n in range(len(used) + 1) if f"q{n}" not in used)
    question = {"id": question_id, "text": "Which token should I use?"}
    request.setdefault("questions", []).append(question)
    return question


# --- tool_call ----------------------------------------------------------------------


@mutator("ASR-250")
def call_without_identity_or_name(draw: st.DrawFn, records: Records) -> bytes:
    """A tool_call lacks callId or callIdSource, has a callIdSource other than native or derived,
    or lacks name without capture.name."""
    records = copied(records)
    breakage = draw(st.sampled_from(["no callId", "no callIdSource", "unlisted callIdSource", "no name"]))
    # Only native calls lose their ID: a derived one may be what makes a derived result valid.
    candidates = of_type(records, "tool_call") if breakage == "no name" else native_calls(records)
    call = choose(draw, candidates) or new_call(draw, records)
    if breakage == "no callId":
        del call["callId"]
    elif breakage == "no callIdSource":
        del call["callIdSource"]
    elif breakage == "unlisted callIdSource":
        call["callIdSource"] = draw(st.sampled_from(["model", "exact", "Native", "synthetic", "parsed", ""]))
    else:
        call.pop("name", None)
        capture = call.get("capture")
        if type(capture) is dict:
            capture.pop("name", None)
        if draw(st.booleans()):
            call.setdefault("capture", {})["inputText"] = {"state": "absent"}
    return serialize(records)


modes("ASR-251", all="decision-on-call")


@mutator("ASR-251")
def call_with_outcome(draw: st.DrawFn, records: Records) -> bytes:
    """A tool_call carries an approval decision, an outcome that belongs on a permission record or the result."""
    records = copied(records)
    call = choose(draw, of_type(records, "tool_call")) or new_call(draw, records)
    permission: dict[str, object] = {"decision": draw(DECISIONS)}
    if draw(st.booleans()):
        permission["decidedBy"] = draw(DECIDERS)
    call["permission"] = permission
    return serialize(records)


@mutator("ASR-254")
def call_with_input_and_input_text(draw: st.DrawFn, records: Records) -> bytes:
    """A tool_call holds its arguments twice, as input and as inputText."""
    records = copied(records)
    call = choose(draw, of_type(records, "tool_call")) or new_call(draw, records)
    if "input" not in call:
        call["input"] = draw(JSON_VALUES)
    if "inputText" not in call:
        call["inputText"] = draw(TEXT)
    return serialize(records)


@mutator("ASR-255")
def provider_without_kind_or_identity(draw: st.DrawFn, records: Records) -> bytes:
    """A provider (on a call or a result) lacks kind or identity, or its identity is not exact, parsed or unknown."""
    records = copied(records)
    holders = of_type(records, "tool_call") + of_type(records, "tool_result")
    holder = choose(draw, holders) or (new_call(draw, records) if draw(st.booleans()) else new_result(draw, records))
    provider: dict[str, object] = {
        "kind": draw(st.sampled_from(["mcp", "plugin", "connector", "builtin"])),
        "server": "github",
        "identity": draw(st.sampled_from(["exact", "parsed", "unknown"])),
    }
    breakage = draw(st.sampled_from(["no kind", "no identity", "unlisted identity"]))
    if breakage == "no kind":
        del provider["kind"]
    elif breakage == "no identity":
        del provider["identity"]
    else:
        provider["identity"] = draw(st.sampled_from(["guessed", "split", "Exact", "inferred", "heuristic", ""]))
    holder["provider"] = provider
    return serialize(records)


# --- tool_result ----------------------------------------------------------------------


#: The linkage table's rows ("callId is absent" for none; "the call then has callIdSource: derived"
#: for derived) settle the verdict; only filing them under ASR-257 is the suite's (A-LINKAGE), so a
#: validator may name the linkage-and-pairing rules beside it.
_LINKAGE_ROWS = {"assumptions": ("A-LINKAGE",), "names": ("ASR-257", "ASR-262", "ASR-263")}
modes("ASR-257", **{
    "no linkage": "result-without-linkage",
    "no status": "result-without-status",
    "unlisted linkage": "linkage-not-listed",
    "no callId": "linked-result-without-callId",
    "derived to native": {"defect": "derived-result-for-native-call", **_LINKAGE_ROWS},
    "none with callId": {"defect": "none-linkage-with-callId", **_LINKAGE_ROWS},
})


@mutator("ASR-257")
def result_without_linkage_status_or_call(draw: st.DrawFn, records: Records) -> bytes:
    """A tool_result lacks linkage or status, has a linkage other than exact, derived, ambiguous or none,
    lacks callId with exact or derived linkage, or claims derived linkage to a native call."""
    records = copied(records)
    breakage = pick(draw, "ASR-257")
    if breakage == "none with callId":
        call = choose(draw, of_type(records, "tool_call")) or new_call(draw, records)
        if type(call.get("callId")) is not str:
            call = new_call(draw, records)
        new_result(draw, records, call, linkage="none")
        return serialize(records)
    if breakage == "derived to native":
        # An existing call qualifies when it is the only entity with its callId and none is derived.
        unique_native = [c for c in native_calls(records) if type(c.get("callId")) is str
                         and len(call_entities(records, c["callId"])) == 1
                         and all(o.get("callIdSource") == "native" for o in of_type(records, "tool_call")
                                 if o.get("callId") == c["callId"])]
        call = choose(draw, unique_native) or new_call(draw, records)
        new_result(draw, records, call, linkage="derived")
        return serialize(records)
    result = choose(draw, of_type(records, "tool_result")) or new_result(draw, records)
    if breakage == "no linkage":
        result.pop("linkage", None)
    elif breakage == "no status":
        result.pop("status", None)
    elif breakage == "unlisted linkage":
        result["linkage"] = draw(st.sampled_from(["positional", "latest", "Exact", "inferred", "guessed", ""]))
    else:
        result["linkage"] = draw(st.sampled_from(["exact", "derived"]))
        result.pop("callId", None)
    return serialize(records)


@mutator("ASR-259")
def result_without_content_or_its_capture_state(draw: st.DrawFn, records: Records) -> bytes:
    """A tool_result has no content and no capture.content saying why."""
    records = copied(records)
    result = choose(draw, of_type(records, "tool_result")) or new_result(draw, records)
    result.pop("content", None)
    capture = result.get("capture")
    if type(capture) is dict:
        capture.pop("content", None)
    if draw(st.booleans()):
        result.setdefault("capture", {})[draw(st.sampled_from(["raw", "displayContent", "exec.stdout"]))] = {
            "state": "absent"}
    return serialize(records)


#: The range is the exec table's; terminal and hook say "As in exec".  Filing it under ASR-260 is the
#: suite's choice (A-EXIT-RANGE); the record's own rule is a fair name too.
modes("ASR-260", **{
    "exec": {"defect": "exit-code-out-of-range", "assumptions": ("A-EXIT-RANGE",)},
    "terminal": {"defect": "terminal-exit-code-out-of-range", "assumptions": ("A-EXIT-RANGE",),
                 "names": ("ASR-260", "ASR-271")},
    "hook": {"defect": "hook-exit-code-out-of-range", "assumptions": ("A-EXIT-RANGE",),
             "names": ("ASR-260", "ASR-273")},
})


@mutator("ASR-260")
def exit_code_outside_range(draw: st.DrawFn, records: Records) -> bytes:
    """exitCode on exec, a terminal or a hook is not an integer between -2^31 and 2^32-1."""
    records = copied(records)
    code = draw(st.one_of(st.integers(2**32, 2**64), st.integers(-(2**63), -(2**31) - 1), FRACTIONS))
    holder = pick(draw, "ASR-260")
    if holder == "exec":
        exec_of(draw, records)["exitCode"] = code
    elif holder == "terminal":
        terminal = choose(draw, of_type(records, "terminal")) or new_terminal(draw, records, status="exited")
        terminal["exitCode"] = code
    else:
        hook = choose(draw, of_type(records, "hook")) or new_hook(draw, records)
        hook["exitCode"] = code
    return serialize(records)


NO_MUTATOR["ASR-262"] = (
    "No stream breaks ASR-262 on its own: it binds producers to the source (leave a result unpaired when "
    "no recorded identifier shows its call). An exact or derived result whose callId several calls share "
    "is a stream ASR-263 describes (readers leave it unpaired), so it is valid; ambiguous linkage with a "
    "callId is only discouraged (a warning)."
)


# --- exec --------------------------------------------------------------------------------


@mutator("ASR-288")
def numeric_signal(draw: st.DrawFn, records: Records) -> bytes:
    """signal (on exec or a terminal) is a number, not the native signal name."""
    records = copied(records)
    signal = draw(st.integers(1, 64))
    if draw(st.booleans()):
        exec_of(draw, records)["signal"] = signal
    else:
        terminal = choose(draw, of_type(records, "terminal")) or new_terminal(draw, records, status="killed")
        terminal["signal"] = signal
    return serialize(records)


@mutator("ASR-289")
def process_id_neither_string_nor_safe_integer(draw: st.DrawFn, records: Records) -> bytes:
    """exec.processId is neither a string nor an integer within ±(2^53-1)."""
    records = copied(records)
    exec_of(draw, records)["processId"] = draw(st.one_of(
        st.integers(2**53, 2**70), st.integers(-(2**70), -(2**53)), FRACTIONS, st.booleans()))
    return serialize(records)


#: A lone stream may belong to a bundle that holds the terminal (A-BUNDLE, open): reported, not scored.
modes("ASR-290", all="terminalId-names-no-terminal")


@mutator("ASR-290")
def terminal_id_naming_no_terminal(draw: st.DrawFn, records: Records) -> bytes:
    """exec.terminalId names no terminal record of the stream."""
    records = copied(records)
    terminal_id = fresh_name(records, draw(st.sampled_from(["term_", "bash_", "shell-"])))
    result = choose(draw, of_type(records, "tool_result")) or new_result(draw, records)
    exec_ = result.get("exec")
    if type(exec_) is not dict:
        exec_ = result["exec"] = {}
    exec_["terminalId"] = terminal_id
    return serialize(records)


# --- permission and the compact permission ------------------------------------------------


@mutator("ASR-268")
def permission_without_request_id_or_single_subject(draw: st.DrawFn, records: Records) -> bytes:
    """A permission lacks requestId, or its subject holds both callId and command, or neither."""
    records = copied(records)
    permission = choose(draw, of_type(records, "permission")) or new_permission(draw, records)
    breakage = draw(st.sampled_from(["no requestId", "both", "neither"]))
    if breakage == "no requestId":
        permission.pop("requestId", None)
    elif breakage == "both":
        subject = permission.get("subject")
        if type(subject) is not dict:
            subject = permission["subject"] = {}
        subject.setdefault("command", draw(COMMANDS))
        subject.setdefault("callId", fresh_name(records, "call_m"))
    else:
        permission["subject"] = {}
    return serialize(records)


@mutator("ASR-281")
def permission_status_contradicts_decision(draw: st.DrawFn, records: Records) -> bytes:
    """A resolved permission has no decision, a pending or held one has a decision, or a review lacks by."""
    records = copied(records)
    permission = choose(draw, of_type(records, "permission")) or new_permission(draw, records)
    breakage = draw(st.sampled_from(["resolved without decision", "open with decision", "review without by"]))
    if breakage == "resolved without decision":
        permission["status"] = "resolved"
        permission.pop("decision", None)
    elif breakage == "open with decision":
        permission["status"] = draw(st.sampled_from(["pending", "held"]))
        permission.setdefault("decision", draw(DECISIONS))
    else:
        review: dict[str, object] = {"verdict": draw(st.sampled_from(["approved", "denied", "escalate"]))}
        if draw(st.booleans()):
            review["rationale"] = draw(TEXT)
        permission.setdefault("reviews", []).append(review)
    return serialize(records)


@mutator("ASR-277")
def compact_permission_without_decision(draw: st.DrawFn, records: Records) -> bytes:
    """A tool_result.permission lacks decision."""
    records = copied(records)
    covered = permission_subjects(records)
    # A result may gain a compact permission only when no permission record covers its call (ASR-278).
    candidates = [r for r in of_type(records, "tool_result")
                  if type(r.get("permission")) is dict or r.get("callId") not in covered]
    result = choose(draw, candidates) or new_result(draw, records)
    permission = result.get("permission")
    if type(permission) is not dict:
        permission = result["permission"] = {}
    permission.pop("decision", None)
    if draw(st.booleans()):
        permission["decidedBy"] = draw(DECIDERS)
    if draw(st.booleans()):
        permission["rule"] = "Bash(cargo test:*)"
    return serialize(records)


@mutator("ASR-278")
def compact_permission_beside_permission_record(draw: st.DrawFn, records: Records) -> bytes:
    """A tool_result carries a compact permission although a permission record has subject.callId equal
    to the result's callId (in either order)."""
    records = copied(records)
    compact = {"decision": draw(DECISIONS), "decidedBy": draw(DECIDERS)}
    covered = permission_subjects(records)
    with_compact = [r for r in of_type(records, "tool_result")
                    if type(r.get("permission")) is dict and type(r.get("callId")) is str]
    covered_results = [r for r in of_type(records, "tool_result") if r.get("callId") in covered]
    way = draw(st.sampled_from(["record beside compact", "compact beside record", "both new"]))
    if way == "record beside compact" and with_compact:
        call_id = with_compact[draw(st.integers(0, len(with_compact) - 1))]["callId"]
    elif way == "compact beside record" and covered_results:
        covered_results[draw(st.integers(0, len(covered_results) - 1))]["permission"] = compact
        return serialize(records)
    else:
        call_id = new_result(draw, records, permission=compact)["callId"]
    place(draw, records, "permission", requestId=fresh_name(records, "perm_m"), subject={"callId": call_id},
          status="resolved", decision=compact["decision"], decidedBy=compact["decidedBy"])
    return serialize(records)


# --- input_request --------------------------------------------------------------------------


# One mode per missing member, so each is drawn (and its reach checked) as often as a whole mutator.
modes("ASR-282", **{
    "no requestId": "input-request-without-requestId",
    "no mode": "input-request-without-mode",
    "no questions": "questions-mode-without-questions",
    "question without id": "question-without-id",
    "question without text": "question-without-text",
    "option without label": "option-without-label",
    "answer without questionId": "answer-without-questionId",
})


@mutator("ASR-282")
def input_request_missing_required_member(draw: st.DrawFn, records: Records) -> bytes:
    """An input_request lacks requestId or mode, or questions in questions mode; or a question lacks id or
    text, an option lacks label, or an answer lacks questionId."""
    records = copied(records)
    request = choose(draw, of_type(records, "input_request")) or new_input_request(draw, records)
    breakage = pick(draw, "ASR-282")
    if breakage == "no requestId":
        request.pop("requestId", None)
    elif breakage == "no mode":
        request.pop("mode", None)
    elif breakage == "no questions":
        request["mode"] = "questions"
        request.pop("questions", None)
        request.pop("answers", None)  # answers would name questions the record no longer asks (ASR-284)
        capture = request.get("capture")
        if type(capture) is dict:
            capture.pop("questions", None)
    elif breakage == "question without id":
        question = question_of(draw, request)
        question_id = question.pop("id")
        if type(request.get("answers")) is list:
            request["answers"] = [a for a in request["answers"] if not (type(a) is dict
                                                                        and a.get("questionId") == question_id)]
    elif breakage == "question without text":
        question_of(draw, request).pop("text", None)
    elif breakage == "option without label":
        question = question_of(draw, request)
        options = question.get("options")
        labelled = [o for o in options if type(o) is dict and "label" in o] if type(options) is list else []
        option = choose(draw, labelled)
        if option is not None:
            del option["label"]
        else:
            question.setdefault("options", []).append({"value": "other", "description": draw(TEXT)})
    else:
        answer: dict[str, object] = {}
        if request.get("secret") is not True and draw(st.booleans()):
            answer["text"] = draw(TEXT)
        request.setdefault("answers", []).append(answer)
    return serialize(records)


@mutator("ASR-283")
def secret_value_recorded(draw: st.DrawFn, records: Records) -> bytes:
    """The value given for a secret is recorded: the answer to a secret question, or the response or an
    answer of a request marked secret."""
    records = copied(records)
    request = choose(draw, of_type(records, "input_request")) or new_input_request(draw, records)
    value = draw(st.sampled_from(["ghp_R8x2kQ7vN1mZ4tY9wL3pB6cD0fH5jA2sE8uK", "hunter2", "npm_4f8Kq2Lx9Vb7"]))
    breakage = draw(st.sampled_from(["secret question answered", "secret request response",
                                     "secret request answered"]))
    if breakage == "secret request response":
        request["secret"] = True
        request["response"] = value if draw(st.booleans()) else {"token": value}
        return serialize(records)
    question = question_of(draw, request)
    if breakage == "secret question answered":
        question["secret"] = True
    else:
        request["secret"] = True
    answer: dict[str, object] = {"questionId": question["id"]}
    if draw(st.booleans()):
        answer["text"] = value
    else:
        answer["selected"] = [value]
    request.setdefault("answers", []).append(answer)
    return serialize(records)


@mutator("ASR-284")
def question_ids_not_unique_or_unknown(draw: st.DrawFn, records: Records) -> bytes:
    """Two questions of an input_request share an ID, or an answer names a question the record does not ask."""
    records = copied(records)
    request = choose(draw, of_type(records, "input_request")) or new_input_request(draw, records)
    if draw(st.booleans()):
        question = question_of(draw, request)
        request["questions"].append({"id": question["id"], "text": "Add a regression test?"})
    else:
        questions = request.get("questions")
        asked = {q.get("id") for q in questions if type(q) is dict} if type(questions) is list else set()
        unknown = next(f"unasked{n}" for n in range(len(asked) + 1) if f"unasked{n}" not in asked)
        answer: dict[str, object] = {"questionId": unknown}
        if request.get("secret") is not True and draw(st.booleans()):
            answer["text"] = draw(TEXT)
        request.setdefault("answers", []).append(answer)
    return serialize(records)


# --- terminal and hook ---------------------------------------------------------------------


@mutator("ASR-271")
def terminal_without_id_or_supersession(draw: st.DrawFn, records: Records) -> bytes:
    """A terminal lacks terminalId, or records a terminal again without superseding its latest snapshot."""
    records = copied(records)
    terminals = of_type(records, "terminal")
    latest: dict[str, dict[str, Any]] = {}  # terminalId -> its latest snapshot
    snapshots: dict[str, int] = {}  # terminalId -> how many records carry it
    revisions: list[dict[str, Any]] = []  # later snapshots that supersede an earlier one
    for terminal in terminals:
        terminal_id = terminal.get("terminalId")
        if type(terminal_id) is str:
            if terminal_id in latest and "supersedes" in terminal:
                revisions.append(terminal)
            latest[terminal_id] = terminal
            snapshots[terminal_id] = snapshots.get(terminal_id, 0) + 1
    referenced = {r["exec"]["terminalId"] for r in results_with_exec(records) if "terminalId" in r["exec"]}
    breakage = draw(st.sampled_from(["no terminalId", "revision without supersedes", "revision of a stale snapshot",
                                     "revision loses supersedes"]))
    if breakage == "no terminalId":
        # An existing snapshot may lose it only when its terminal stays resolvable (ASR-290).
        removable = [t for t in terminals if type(t.get("terminalId")) is str
                     and (t["terminalId"] not in referenced or snapshots[t["terminalId"]] > 1)]
        terminal = choose(draw, removable) or new_terminal(draw, records)
        del terminal["terminalId"]
        return serialize(records)
    if breakage == "revision loses supersedes" and revisions:
        del revisions[draw(st.integers(0, len(revisions) - 1))]["supersedes"]
        return serialize(records)
    previous = choose(draw, list(latest.values())) or new_terminal(draw, records)
    position = draw(st.integers(position_of(records, previous) + 1, len(records)))
    stale = [t["id"] for t in of_type(records[:position], "terminal") if t is not previous]
    snapshot = {k: v for k, v in previous.items() if k not in ("type", "seq", "id", "supersedes", "trigger")}
    snapshot["status"] = draw(st.sampled_from(["exited", "killed", "stopped", "unknown", "running"]))
    if breakage == "revision of a stale snapshot" and stale:
        snapshot["supersedes"] = stale[draw(st.integers(0, len(stale) - 1))]
    insert(records, position, "terminal", **snapshot)
    return serialize(records)


@mutator("ASR-273")
def hook_without_event(draw: st.DrawFn, records: Records) -> bytes:
    """A hook lacks event."""
    records = copied(records)
    hook = choose(draw, of_type(records, "hook")) or new_hook(draw, records)
    hook.pop("event", None)
    return serialize(records)
