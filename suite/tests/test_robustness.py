"""The reference validator never raises, whatever a stream holds."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from asr_conformance.reference.checks import validate_bytes
from asr_conformance.reference.checks.envelope import DEFINED_TYPES, MENTIONED_TYPES

MEMBER_NAMES = sorted(
    {
        "type", "seq", "id", "ts", "turnId", "trigger", "supersedes", "capture", "_meta", "callId",
        "callIdSource", "name", "input", "inputText", "provider", "locations", "linkage", "status", "content",
        "exec", "permission", "subject", "decision", "reviews", "requestId", "mode", "questions", "answers",
        "answerRef", "secret", "response", "terminalId", "exitCode", "processId", "cwd", "event", "state",
        "attempt", "continuationOf", "parentTurn", "rootTurn", "executedBy", "profiles", "contentLevel",
        "roots", "participants", "conversations", "workspace", "producer", "agent", "formatVersion",
        "heads", "continuedIn", "capability", "sandbox", "cause", "target", "store", "op", "kind", "root",
        "path", "parent", "ids", "options", "label", "questionId", "selected", "text", "n", "session",
        "extensions", "source", "format", "lossy", "method", "instance", "version", "model", "tools",
    }
)
scalars = st.none() | st.booleans() | st.integers(-(2**64), 2**64) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8)
values = st.recursive(
    scalars | st.sampled_from(MEMBER_NAMES),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(MEMBER_NAMES), inner, max_size=4),
    max_leaves=12,
)
#: Members beside a record's own: built once, not once per record drawn (a fresh strategy is validated again on
#: its first draw); the same strategy, so the same draws.
extra_members = st.dictionaries(st.sampled_from(MEMBER_NAMES), values, max_size=8)
records = st.fixed_dictionaries(
    {"type": st.sampled_from(sorted(DEFINED_TYPES | MENTIONED_TYPES) + ["x_other"]) | values},
    optional={"seq": st.integers(-1, 5), "id": st.sampled_from(["h", "r1", "r2", "", 5])},
).flatmap(lambda base: extra_members.map(lambda extra: {**extra, **base}))


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(records, min_size=1, max_size=6))
def test_any_records_are_judged_without_raising(stream: list[dict]) -> None:
    data = "".join(json.dumps(record) + "\n" for record in stream).encode()
    outcome = validate_bytes(data)
    assert outcome.records == len(stream)
    for diagnostic in outcome.diagnostics:
        assert diagnostic.rule and diagnostic.message and diagnostic.line >= 1


@settings(max_examples=300)
@given(st.binary(max_size=300))
def test_any_bytes_are_judged_without_raising(data: bytes) -> None:
    outcome = validate_bytes(data)
    if not data:
        assert [d.rule for d in outcome.errors] == ["ASR-003"]
