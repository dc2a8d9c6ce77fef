"""The reader fuzz session, in process: the reference's views pass; a view that differs on a
settled member fails naming that member's rules and leaves a reader case that replays; members
the pages leave open are never compared."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings

from asr_conformance.generators.mutators import serialize
from asr_conformance.generators.reader_streams import reader_streams
from asr_conformance.harness.adapters.answers import Outcome, ReadAnswer
from asr_conformance.harness.fuzzing.profiles import ShrinkBudget
from asr_conformance.harness.fuzzing.readers import (
    ReaderFuzzSession,
    instructions_settled,
    rules_of,
    settled_view,
)
from asr_conformance.harness.judging.corpus_check import reader_disagreement
from asr_conformance.reference.reader import read_view
from asr_conformance.vocabulary.cases import iter_cases

QUICK = settings(max_examples=6, derandomize=True, database=None, deadline=None)


class InProcessReader:
    """A reader adapter that gives the reference view, changed by ``bug``."""

    def __init__(self, bug: Callable[[dict], object] = lambda view: view) -> None:
        self.bug = bug
        self.calls = 0

    def read(self, path: Path) -> ReadAnswer:
        self.calls += 1
        view = read_view(path)
        changed = self.bug(view)
        if isinstance(changed, ReadAnswer):
            return changed
        return ReadAnswer(Outcome.VIEWED, view=view if changed is None else changed)


def _session(tmp_path: Path, adapter: InProcessReader) -> ReaderFuzzSession:
    return ReaderFuzzSession(adapter, tmp_path / "scratch", tmp_path / "counterexamples", ["--implementation=x"],
                             QUICK, None, ShrinkBudget(seconds=2.0, steps=10))


def _run(session: ReaderFuzzSession, feature: str) -> None:
    @session.settings
    @given(reader_streams(feature))
    def agrees(records: list[dict]) -> None:
        session.expect_view(records, serialize(records), f"fuzz-{feature}", "a stream", ("ASR-160",))

    session.run(agrees)


def test_the_reference_view_passes(tmp_path: Path) -> None:
    adapter = InProcessReader()
    _run(_session(tmp_path, adapter), "client")
    assert adapter.calls == QUICK.max_examples
    assert not (tmp_path / "counterexamples").exists()


def _merge_clients(view: dict) -> None:
    for entry in view["in_force"].values():
        if entry["client"] is not None:
            entry["client"] = {**entry["client"], "merged": "yes"}


def test_a_difference_fails_naming_its_rule_and_leaves_a_replayable_case(tmp_path: Path) -> None:
    session = _session(tmp_path, InProcessReader(_merge_clients))
    with pytest.raises(pytest.fail.Exception) as failure:
        _run(session, "client")
    message = str(failure.value)
    assert message.startswith("ASR-179: the view of a stream differs from the reference reader's")
    assert "client in force at seq" in message and "replay: pytest --implementation=x --cases=" in message
    assert session.broken == ["ASR-179"]
    path, command = session.counterexample
    assert path.parent.name == "ASR-179" and path.parent.parent.name == "reader" and f"-k {path.stem}" in command
    [case] = iter_cases(tmp_path / "counterexamples", role="reader")
    assert case.rules == ("ASR-179",) and case.verdict == "valid"
    assert reader_disagreement(case) is None, "the reference reader gives the expected view it wrote"


@pytest.mark.parametrize(("bug", "expected"), [
    (lambda view: ReadAnswer(Outcome.CRASH, message="exit status 3"), "no view of a stream"),
    (lambda view: {**view, "calls": []}, "breaks the view schema"),
])
def test_no_view_or_a_broken_view_fails(tmp_path: Path, bug, expected: str) -> None:
    with pytest.raises(pytest.fail.Exception, match=expected):
        _run(_session(tmp_path, InProcessReader(bug)), "project")


def test_members_left_open_are_not_compared(tmp_path: Path) -> None:
    def change_the_open_members(view: dict) -> None:
        view["changes"] = [{"memory_change": "x", "file_change": None, "status": None}]
        view["problems"] = [{"rule": "ASR-999", "message": "invented"}]
        view["_vendor"] = {"anything": True}

    _run(_session(tmp_path, InProcessReader(change_the_open_members)), "terminal-reads")


def test_instructions_are_compared_only_where_the_pages_settle_them() -> None:
    session = {"type": "instructions", "scope": "session", "kind": "rules"}
    assert instructions_settled([session, {**session, "scope": "turn", "turnId": "t1"}])
    for open_point in ({**session, "scope": None}, {"type": "instructions", "kind": "rules"},
                       {**session, "scope": "turn"}, {**session, "supersedes": "r1"}, {**session, "scope": "x"}):
        assert not instructions_settled([session, open_point])
    view = {"instructions": [], "in_force": {"1": {"instructions": ["r1"], "profiles": ["core"]}}, "changes": [],
            "problems": [], "pairs": []}
    assert settled_view(view, [session]) == {"instructions": [], "in_force": view["in_force"], "pairs": []}
    assert settled_view(view, [{**session, "scope": "turn"}]) == {"in_force": {"1": {"profiles": ["core"]}},
                                                                   "pairs": []}


def test_differences_name_the_rules_of_their_members() -> None:
    assert rules_of(["/session_info/titleSource"]) == ["ASR-181"]
    assert rules_of(["/session_info/project", "/in_force/3/extensions"]) == ["ASR-160", "ASR-163"]
    assert rules_of(["/in_force/3/client", "/in_force/3/contentLevel"]) == ["ASR-179", "ASR-165"]
    assert rules_of(["/calls/r9"]) == ["ASR-263"]
    assert rules_of(["/pairs", "/dangling"]) == ["ASR-263", "ASR-264", "ASR-262", "ASR-265"]
    assert rules_of(["/unresolved", "/decisions"]) == ["ASR-269", "ASR-279"]
    assert rules_of(["/terminals/r2/snapshot"]) == ["ASR-271"]
    assert rules_of(["/terminals/r2/readBy"]) == ["ASR-290", "ASR-291"]
    assert rules_of(["/view_version"]) == []
