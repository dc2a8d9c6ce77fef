"""Source edits of toy transcripts: each changes one fact and says what the stream must show after it.

Every edit picks the first call with a result (so the expected change is unambiguous), rewrites
the document with ``json.dumps`` and returns ``None`` when the document holds nothing to edit. The
exit-code edit names the call it changed (``Edited``), and its check reads that call from what was
edited (``expect_edit``) instead of finding it again in the facts.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from asr_conformance.fidelity.facts import Finding, SourceFacts
from asr_conformance.fidelity.mutations import EditContext, Edited, SourceMutation, records_of

RENAMED_SUFFIX = "_v2"
#: An exit code no converter writes by accident.
ALTERED_EXIT = 113


def _edit(change: Callable[[dict[str, Any]], bool]) -> Callable[[bytes], bytes | None]:
    """An edit of the first event whose call has a result; ``change`` returns False when it has nothing to change."""
    def apply(data: bytes) -> bytes | None:
        try:
            document = json.loads(data)
        except ValueError:
            return None
        for event in document.get("events", []) if isinstance(document, dict) else []:
            if isinstance(event, dict) and isinstance(event.get("call"), dict) and isinstance(event.get("result"), dict):
                if not change(event):
                    return None
                return json.dumps(document, ensure_ascii=False).encode("utf-8") + b"\n"
        return None
    return apply


def _edit_naming_call(change: Callable[[dict[str, Any]], bool]) -> Callable[[bytes], Edited | None]:
    """Like ``_edit``, and the answer names the call it changed (its ``id``) for the check."""
    plain = _edit(change)

    def apply(data: bytes) -> Edited | None:
        edited = plain(data)
        if edited is None:
            return None
        events = json.loads(edited)["events"]
        call = next(e["call"] for e in events if isinstance(e, dict) and isinstance(e.get("call"), dict)
                    and isinstance(e.get("result"), dict))
        return Edited(edited, item=call.get("id"))
    return apply


def _drop_result(event: dict[str, Any]) -> bool:
    del event["result"]
    return True


def _rename(event: dict[str, Any]) -> bool:
    event["call"]["tool"] = f"{event['call']['tool']}{RENAMED_SUFFIX}"
    return True


def _exit(event: dict[str, Any]) -> bool:
    event["result"]["exit"] = ALTERED_EXIT
    return True


def _changed(before: SourceFacts, after: SourceFacts) -> str | None:
    """The call the edit touched: the first one with a result before the edit."""
    answered = {r.call_id for r in before.results}
    return next((c.call_id for c in before.calls if c.call_id in answered), None)


def expect_no_result(before: SourceFacts, after: SourceFacts, _: list[dict], stream: list[dict]) -> list[Finding]:
    call_id = _changed(before, after)
    if call_id is None:
        return []
    written = records_of(stream, "tool_result", call_id)
    if written:
        return [Finding("ASR-265", "identity", f"after the result of {call_id} was removed from the source, the stream "
                        "still gives it a result", seq=written[0].get("seq"))]
    return []


def expect_renamed(before: SourceFacts, after: SourceFacts, _: list[dict], stream: list[dict]) -> list[Finding]:
    call_id = _changed(before, after)
    renamed = next((c for c in after.calls if c.call_id == call_id), None)
    if renamed is None:
        return []
    written = records_of(stream, "tool_call", renamed.call_id)
    if not written or written[0].get("name") != renamed.name:
        said = written[0].get("name") if written else "no call"
        return [Finding("ASR-252", "exact-values", f"after the tool was renamed to {renamed.name!r} in the source, the "
                        f"stream says {said!r}", renamed.where)]
    return []


def expect_exit(edit: EditContext) -> list[Finding]:
    call_id = edit.item  # the call the edit names
    if not isinstance(call_id, str) or f'"exit": {ALTERED_EXIT}'.encode() not in edit.edited:
        return []
    written = records_of(edit.after_stream, "tool_result", call_id)
    code = (written[0].get("exec") or {}).get("exitCode") if written else None
    if code != ALTERED_EXIT:
        return [Finding("ASR-260", "exact-values", f"after the exit code of {call_id} became {ALTERED_EXIT} in the source, "
                        f"the stream says {code!r}")]
    return []


EDITS: tuple[SourceMutation, ...] = (
    SourceMutation("toy-drop-result", "ASR-265", "the first answered call's result removed: the stream must give it none",
             _edit(_drop_result), expect_no_result),
    SourceMutation("toy-rename-tool", "ASR-252", "the first answered call's tool renamed: the stream must use the new name",
             _edit(_rename), expect_renamed),
    SourceMutation("toy-exit-code", "ASR-260", f"the first answered call's exit code set to {ALTERED_EXIT}: the stream must say so",
             _edit_naming_call(_exit), expect_edit=expect_exit),
)
