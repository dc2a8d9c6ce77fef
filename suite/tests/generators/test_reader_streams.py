"""The reader fuzz streams: valid by construction, and each holds the construct its feature names."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings

from asr_conformance.generators.mutators import serialize
from asr_conformance.generators.reader_streams import FEATURES, reader_streams
from asr_conformance.reference.checks import validate_bytes

QUICK = settings(max_examples=25, derandomize=True, database=None, deadline=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _of(records: list[dict], kind: str) -> list[dict]:
    return [r for r in records if r["type"] == kind]


#: What each feature must put into every stream it makes.
HOLDS: dict[str, Callable[[list[dict]], bool]] = {
    "client": lambda rs: any("client" in r for r in _of(rs, "declaration")),
    "extensions": lambda rs: any("extensions" in r for r in _of(rs, "declaration")),
    "project": lambda rs: any("project" in r for r in _of(rs, "session_info")),
    "title": lambda rs: any("title" in r and "titleSource" not in r for r in _of(rs, "session_info")),
    "content-level": lambda rs: any("contentLevel" in r for r in _of(rs, "declaration")),
    "heads": lambda rs: any(r.get("heads", [0])[:1] == [None] for r in _of(rs, "session_info")),
    "shared-native-id": lambda rs: any(r.get("linkage") == "ambiguous" and "nativeCallId" in r
                                       for r in _of(rs, "tool_result")),
    "call-revision": lambda rs: any("supersedes" in r for r in _of(rs, "tool_call")),
    "removed": lambda rs: any("removed" in r for r in _of(rs, "instructions")),
    "decision-without-status": lambda rs: any("decision" in r and "status" not in r for r in _of(rs, "permission")),
    "compact-beside-command": lambda rs: any("permission" in r for r in _of(rs, "tool_result"))
    and any("command" in r.get("subject", {}) for r in _of(rs, "permission")),
    "terminal-revisions": lambda rs: any("supersedes" in r for r in _of(rs, "terminal")),
    "terminal-reads": lambda rs: any("exec" in r and "processId" in r["exec"] for r in _of(rs, "tool_result")),
}


def test_every_feature_is_checked() -> None:
    assert sorted(HOLDS) == sorted(FEATURES)


@pytest.mark.parametrize("feature", sorted(FEATURES))
def test_streams_are_valid_and_hold_their_feature(feature: str) -> None:
    @QUICK
    @given(reader_streams(feature))
    def check(records: list[dict]) -> None:
        outcome = validate_bytes(serialize(records))
        assert outcome.valid, [(e.rule, e.message) for e in outcome.errors]
        assert HOLDS[feature](records)

    check()


def test_call_revisions_revise_a_call_with_its_call_id() -> None:
    revisions: list[str] = []

    @QUICK
    @given(reader_streams("call-revision"))
    def check(records: list[dict]) -> None:
        calls = {r["id"]: r for r in _of(records, "tool_call")}
        for record in calls.values():
            if "supersedes" in record:
                assert calls[record["supersedes"]]["callId"] == record["callId"]
                revisions.append(record["id"])

    check()
    assert revisions, "no generated stream revised a call"
