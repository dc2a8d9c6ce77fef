"""The reference reader, the view schema, view comparison and reader judging, tested directly."""

from __future__ import annotations

import copy
import functools
import io
import json
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import jsonschema
import pytest
from corpus_cases import corpus_cases

from asr_conformance import CORPUS_DIR
from asr_conformance.harness.adapters.answers import Outcome, ReadAnswer
from asr_conformance.harness.judging.corpus_check import main as corpus_main
from asr_conformance.harness.judging.corpus_check import reader_disagreement
from asr_conformance.harness.judging.reader import clip_json, judge_read
from asr_conformance.harness.judging.views import MISSING, check_partial_view, check_view, compare_views, view_schema
from asr_conformance.reference.reader import UnreadableStream, read_view
from asr_conformance.reference.server import ROLES, serve
from asr_conformance.vocabulary import protocol
from asr_conformance.vocabulary.cases import CorpusError, iter_cases, load_case
from asr_conformance.vocabulary.rules import load_catalog

ROOT = Path(__file__).resolve().parents[2]
MISBEHAVING = ROOT / "examples" / "misbehaving"
READER_CASES = corpus_cases("reader")
CASES_BY_ID = {case.id: case for case in READER_CASES}
HEADER = ('{"type":"session","seq":0,"id":"h","formatVersion":"0.1","agent":{"name":"a"},"sessionId":"s",'
          '"producer":{"name":"p","version":"1","method":"native","instance":"i"},"profiles":["core"],'
          '"contentLevel":"full"}\n')


def stream(tmp_path: Path, *lines: str, name: str = "s.jsonl") -> Path:
    path = tmp_path / name
    path.write_text(HEADER + "".join(line + "\n" for line in lines), encoding="utf-8")
    return path


# --- the schema -------------------------------------------------------------------------


def test_the_view_schema_is_a_valid_2020_12_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(view_schema())
    assert view_schema()["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def _members(schema: object, where: str = "") -> list[tuple[str, dict]]:
    """Every named member (properties) of every object schema, recursively."""
    found: list[tuple[str, dict]] = []
    if isinstance(schema, dict):
        for name, member in schema.get("properties", {}).items():
            found.append((f"{where}/{name}", member))
        for key, value in schema.items():
            if key != "description":
                found += _members(value, f"{where}/{key}")
    elif isinstance(schema, list):
        for index, item in enumerate(schema):
            found += _members(item, f"{where}/{index}")
    return found


def test_every_member_of_the_view_schema_has_a_description() -> None:
    members = _members(view_schema())
    assert len(members) > 50
    assert [where for where, member in members if not member.get("description")] == []


def test_a_view_carries_its_version_and_nothing_unknown() -> None:
    assert check_view({"view_version": 1}) is None
    assert "view_version" in (check_view({}) or "")
    assert check_view({"view_version": 2}) is None  # version 2 adds terminals and terminal_reads
    assert check_view({"view_version": 3})
    assert check_view({"view_version": 1, "pairings": []})
    assert check_view({"view_version": 1, "_acme": {"anything": True}}) is None


# --- the reference reader on the reader cases -----------------------------------------------


def test_every_reader_rule_has_at_least_two_reader_cases() -> None:
    reader_rules = {rule.id for rule in load_catalog().values() if rule.tested == "reader"}
    assert len(reader_rules) >= 18
    per_group = Counter(case.id.split("/")[1] for case in READER_CASES)
    assert {rule: per_group[rule] for rule in reader_rules if per_group[rule] < 2} == {}


@pytest.mark.parametrize("case", READER_CASES, ids=[c.id for c in READER_CASES])
def test_reference_reader_matches_the_expected_view(case) -> None:
    assert case.verdict in ("valid", "implementation-defined") and case.expected_view is not None
    assert case.id.split("/")[1] in case.rules, "a reader case's group is the rule it is about"
    assert check_partial_view(case.view()) == []
    view = read_view(case.stream)
    assert check_view(view) is None
    differences = compare_views(case.view(), view)
    assert not differences, "\n".join(d.message for d in differences)
    assert reader_disagreement(case) is None


def test_the_view_is_deterministic() -> None:
    case = CASES_BY_ID["reader/ASR-279/valid-each-decision-counted-once"]
    assert json.dumps(read_view(case.stream)) == json.dumps(read_view(str(case.stream)))


def test_reader_never_raises_on_the_validator_corpus() -> None:
    """A rejected stream still gets a view, with problems; only bytes with no record raise."""
    unreadable = []
    for case in corpus_cases("validator"):
        try:
            view = read_view(case.stream)
        except UnreadableStream:
            unreadable.append(case.id)
            continue
        assert check_view(view) is None, case.id
        json.dumps(view, ensure_ascii=False).encode("utf-8")  # a view is UTF-8 text, even for X-SURROGATE
        assert bool(view["problems"]) == (case.verdict == "invalid"
                                          or (case.verdict != "valid" and case.reference == "reject")), case.id
    assert unreadable == ["validator/ASR-003/invalid-empty-file"]


def test_unreadable_bytes_and_missing_files(tmp_path: Path) -> None:
    (tmp_path / "garbage.jsonl").write_bytes(b"\xff\xfe not json\n[1, 2]\n")
    with pytest.raises(UnreadableStream):
        read_view(tmp_path / "garbage.jsonl")
    with pytest.raises(OSError):
        read_view(tmp_path / "missing.jsonl")


def test_best_view_of_a_rejected_stream(tmp_path: Path) -> None:
    path = stream(
        tmp_path,
        '{"type":"tool_call","seq":1,"callId":"c1","callIdSource":"native","name":"Bash"}',
        'not json',
        '{"type":"tool_result","seq":-3,"id":"r3","callId":"c1","linkage":"exact","status":"completed",'
        '"content":[]}',
    )
    view = read_view(path)
    assert check_view(view) is None
    assert view["pairs"] == [{"call": "@2", "result": "r3"}]
    assert {p["rule"] for p in view["problems"]} >= {"X-ID", "X-JSON"}
    assert view["records"][2] == {"seq": None, "id": "r3", "type": "tool_result"}


def test_loosening_declaration_is_not_applied(tmp_path: Path) -> None:
    path = stream(tmp_path, '{"type":"declaration","seq":1,"id":"r1","contentLevel":"metadata"}',
                  '{"type":"declaration","seq":2,"id":"r2","contentLevel":"full"}',
                  '{"type":"state","seq":3,"id":"r3","state":"running"}')
    view = read_view(path)
    assert view["in_force"]["3"]["contentLevel"] == "metadata"
    assert [p["rule"] for p in view["problems"]] == ["ASR-164"]


# --- comparing views -----------------------------------------------------------------------


def test_expected_objects_are_partial_and_lists_whole() -> None:
    actual = {"session_info": {"title": "T", "titleSource": None, "tags": ["a", "b"]}, "dangling": ["r1", "r2"]}
    assert compare_views({"session_info": {"title": "T"}}, actual) == []
    assert compare_views({}, actual) == []
    [difference] = compare_views({"session_info": {"tags": ["a"]}}, actual)
    assert difference.path == "/session_info/tags" and difference.actual == ["a", "b"]
    [difference] = compare_views({"dangling": ["r2", "r1"]}, actual)
    assert difference.message == 'dangling calls: expected ["r2", "r1"], got ["r1", "r2"]'


def test_recorded_objects_are_compared_whole() -> None:
    """A client, environment, project or provider is one value: a member the expected one lacks must be absent."""
    actual = {"in_force": {"3": {"client": {"name": "ide", "version": "2"}, "environment": {"os": "linux"},
                                 "profiles": ["core"]}},
              "session_info": {"project": {"id": "b", "name": "A"}}}
    [client] = compare_views({"in_force": {"3": {"client": {"name": "ide"}}}}, actual)
    assert client.path == "/in_force/3/client" and client.actual == {"name": "ide", "version": "2"}
    assert client.message == 'client in force at seq 3: expected {"name": "ide"}, got {"name": "ide", "version": "2"}'
    [project] = compare_views({"session_info": {"project": {"id": "b"}}}, actual)
    assert project.path == "/session_info/project"
    assert compare_views({"in_force": {"3": {"environment": {"os": "linux"}}}}, actual) == []
    provider = {"kind": "mcp", "server": None, "tool": None, "name": None, "identity": "unknown"}
    call = {"callId": "c", "provider": {**provider, "server": "gh"}}
    [difference] = compare_views({"calls": {"r1": {"provider": provider}}}, {"calls": {"r1": call}})
    assert difference.path == "/calls/r1/provider"


def test_entity_maps_have_exactly_the_expected_keys() -> None:
    """An entity the expected view does not list is one the reader invented; its entries stay member by member."""
    actual = {"calls": {"r1": {"status": None, "name": "Bash"}, "r3": {"status": "completed"}},
              "permissions": {"r2": {"decision": None}}}
    [extra] = compare_views({"calls": {"r1": {"status": None}}, "permissions": {"r2": {"decision": None}}}, actual)
    assert extra.path == "/calls/r3" and extra.expected is MISSING
    assert extra.as_json() == {"path": "/calls/r3", "actual": {"status": "completed"}, "message": extra.message}
    assert extra.message == 'call entity r3: expected nothing (no such member), got {"status": "completed"}'
    assert compare_views({"calls": {"r1": {"status": None}, "r3": {}}}, actual) == []
    [missing] = compare_views({"permissions": {"r2": {}, "r4": {}}}, actual)
    assert missing.path == "/permissions/r4" and missing.actual is MISSING


def test_a_case_names_where_comparison_is_partial() -> None:
    actual = {"calls": {"r1": {"status": None}, "r3": {}}, "in_force": {"1": {"client": {"name": "a", "v": "1"}}}}
    expected = {"calls": {"r1": {"status": None}}, "in_force": {"1": {"client": {"name": "a"}}}}
    assert len(compare_views(expected, actual)) == 2
    assert compare_views(expected, actual, ["/calls", "/in_force/1/client"]) == []
    assert len(compare_views(expected, actual, ["/calls"])) == 1
    assert check_partial_view(expected, ["/calls", "/in_force/1/client"]) == []
    problems = check_partial_view(expected, ["/in_force/1", "/dangling"])
    assert problems == [f"{p}: a partial pointer names no object of the expected view compared whole or by keys"
                        for p in ("/dangling", "/in_force/1")]


def test_whole_objects_in_an_expected_view_are_checked_whole() -> None:
    """A provider compared whole must be a complete provider; a partial pointer lets a case list part of it."""
    expected = {"calls": {"r1": {"provider": {"server": None}}}}
    assert any(p.startswith("/calls/r1/provider:") for p in check_partial_view(expected))
    assert check_partial_view(expected, ["/calls/r1/provider"]) == []


def test_missing_differs_from_null() -> None:
    [difference] = compare_views({"session_info": {"heads": None}}, {"session_info": {}})
    assert difference.actual is MISSING and "missing" in difference.message
    assert difference.as_json() == {"path": "/session_info/heads", "expected": None, "message": difference.message}
    [difference] = compare_views({"session_info": {"titleSource": None}}, {"session_info": {"titleSource": "user"}})
    assert difference.message == 'effective titleSource: expected unknown (null), got "user"'


def test_json_equality_is_strict_about_types() -> None:
    assert compare_views({"a": [1]}, {"a": [1.0]}) == []
    assert len(compare_views({"a": [1]}, {"a": [True]})) == 1
    assert len(compare_views({"a": {"b": 1}}, {"a": [1]})) == 1
    assert len(compare_views({"a": [{"x": 1}]}, {"a": [{"x": 1, "y": 2}]})) == 1, "list elements are whole values"


def test_pointers_are_escaped() -> None:
    [difference] = compare_views({"calls": {"a/b~c": {"status": "x"}}}, {"calls": {"a/b~c": {"status": "y"}}})
    assert difference.path == "/calls/a~1b~0c/status"


def test_partial_view_check_names_unknown_members_and_bad_values() -> None:
    problems = check_partial_view({"calls": {"r1": {"status": None, "outcome": "ok"}}, "dangling": "r1",
                                   "in_force": {"x": {}}, "pairings": []})
    assert any("/calls/r1/outcome" in p for p in problems)
    assert any(p.startswith("/dangling:") for p in problems)
    assert any("/in_force/x" in p for p in problems)
    assert any("/pairings" in p for p in problems)
    assert check_partial_view({"calls": {"r1": {"provider": None}}, "in_force": {"3": {}}}) == []
    assert check_partial_view([]) != []


# --- judging ---------------------------------------------------------------------------------


def test_a_view_resting_on_an_open_assumption_is_reported_not_scored() -> None:
    case = CASES_BY_ID["reader/ASR-174/valid-turn-scope-without-turn-id"]
    assert case.assumptions == ("A-INSTRUCTIONS-TURN",)
    view = read_view(case.stream)
    agrees = judge_read(case, ReadAnswer(Outcome.VIEWED, view=view))
    assert agrees.status == "reported" and "agrees with the reference reader's" in agrees.message
    view["in_force"]["4"]["instructions"] = ["r1", "r3"]
    differs = judge_read(case, ReadAnswer(Outcome.VIEWED, view=view))
    assert differs.status == "reported" and "differs from the reference reader's at /in_force/4/instructions" \
        in differs.message and "not scored" in differs.message
    crash = judge_read(case, ReadAnswer(Outcome.CRASH, message="exit status 3", sent="reader x"))
    assert crash.status == "failed", "an unscored case still needs a view"
    broken = judge_read(case, ReadAnswer(Outcome.VIEWED, view={"view_version": 1, "calls": []}))
    assert broken.status == "failed"


def test_judging_passes_fails_and_explains() -> None:
    case = CASES_BY_ID["reader/ASR-181/valid-new-title-without-source-is-unknown"]
    view = read_view(case.stream)
    assert judge_read(case, ReadAnswer(Outcome.VIEWED, view=view)).status == "passed"
    view["session_info"]["titleSource"] = "user"
    judgement = judge_read(case, ReadAnswer(Outcome.VIEWED, view=view))
    assert judgement.status == "failed"
    assert 'ASR-181: effective titleSource: expected unknown (null), got "user"' in judgement.message
    assert "/session_info/titleSource" in judgement.message and case.id in judgement.message
    crash = judge_read(case, ReadAnswer(Outcome.CRASH, message="exit status 3", sent="reader x"))
    assert crash.status == "failed" and "exit status 3" in crash.message and "ASR-181" in crash.message
    broken = judge_read(case, ReadAnswer(Outcome.VIEWED, view={"view_version": 1, "calls": []}))
    assert broken.status == "failed" and "view schema" in broken.message


def test_recorded_json_is_clipped() -> None:
    assert clip_json({"a": 1}) == '{"a": 1}'
    clipped = clip_json({"a": "x" * 100}, limit=40)
    assert len(clipped) == 40 and clipped.endswith("more characters]")


# --- the corpus format -------------------------------------------------------------------------


def _reader_case(tmp_path: Path, view: object, toml_extra: str = 'view = "valid-x.view.json"\n') -> Path:
    folder = tmp_path / "reader" / "ASR-265"
    folder.mkdir(parents=True)
    stream(folder, '{"type":"tool_call","seq":1,"id":"r1","callId":"c","callIdSource":"native","name":"B"}',
           name="valid-x.jsonl")
    (folder / "valid-x.view.json").write_text(json.dumps(view))
    (folder / "valid-x.toml").write_text('description = "A call without a result."\nverdict = "valid"\n'
                                         'rules = ["ASR-265"]\nspec = "Tool records"\n' + toml_extra)
    (tmp_path / "schema").mkdir()
    return folder / "valid-x.toml"


def test_reader_cases_load_with_their_view(tmp_path: Path) -> None:
    metadata = _reader_case(tmp_path, {"dangling": ["r1"]})
    [case] = iter_cases(tmp_path, role="reader")
    assert case.expected_view == metadata.with_name("valid-x.view.json") and case.view() == {"dangling": ["r1"]}
    assert all(c.expected_view is None for c in iter_cases(CORPUS_DIR, role="validator"))
    assert reader_disagreement(case) is None
    metadata.with_name("valid-x.view.json").write_text('{"dangling": []}')
    assert "dangling calls" in (reader_disagreement(case) or "")
    metadata.with_name("valid-x.view.json").write_text('{"dangling": [], "outcomes": {}}')
    assert "no member 'outcomes'" in (reader_disagreement(case) or "")


def test_a_reader_case_may_compare_an_entity_map_partially(tmp_path: Path) -> None:
    metadata = _reader_case(tmp_path, {"calls": {}}, 'view = "valid-x.view.json"\npartial = ["/calls"]\n')
    [case] = iter_cases(tmp_path, role="reader")
    assert case.partial == ("/calls",) and reader_disagreement(case) is None
    metadata.write_text(metadata.read_text().replace('partial = ["/calls"]', ""))
    [case] = iter_cases(tmp_path, role="reader")
    assert "/calls/r1: call entity r1: expected nothing" in (reader_disagreement(case) or "")
    metadata.write_text(metadata.read_text() + 'partial = ["/dangling"]\n')
    [case] = iter_cases(tmp_path, role="reader")
    assert "/dangling: a partial pointer names no object" in (reader_disagreement(case) or "")


def test_corpus_check_reports_a_wrong_expected_view(tmp_path: Path, capsys) -> None:
    metadata = _reader_case(tmp_path, {"dangling": []})
    shutil.copy(CORPUS_DIR / "schema" / "case.schema.json", tmp_path / "schema")
    (tmp_path / "reader" / "ASR-265" / "stray.view.json").write_text("{}")
    assert corpus_main(["check", "--corpus", str(tmp_path)]) == 1
    output = capsys.readouterr().out
    assert "reader/ASR-265/valid-x: the reference reader disagrees: /dangling" in output
    assert "stray.view.json: expected view without a case" in output
    assert metadata.is_file()


@pytest.mark.parametrize(("toml_extra", "view", "expected"), [
    ("", {}, "names its expected view"),
    ('view = "other.view.json"\n', {}, "names its expected view"),
    ('view = "valid-x.view.json"\n', [1], "must be a JSON object"),
])
def test_bad_reader_case_metadata(tmp_path: Path, toml_extra: str, view: object, expected: str) -> None:
    metadata = _reader_case(tmp_path, view, toml_extra)
    with pytest.raises(CorpusError, match=expected):
        load_case(metadata, tmp_path)


def test_validator_cases_have_no_view(tmp_path: Path) -> None:
    folder = tmp_path / "validator" / "ASR-265"
    folder.mkdir(parents=True)
    stream(folder, name="valid-x.jsonl")
    (folder / "valid-x.toml").write_text('description = "Only a header."\nverdict = "valid"\nrules = ["ASR-150"]\n'
                                         'spec = "Session records"\nview = "valid-x.view.json"\n')
    with pytest.raises(CorpusError, match="only reader cases"):
        load_case(folder / "valid-x.toml", tmp_path)
    (folder / "valid-x.toml").write_text('description = "Only a header."\nverdict = "valid"\nrules = ["ASR-150"]\n'
                                         'spec = "Session records"\npartial = ["/calls"]\n')
    with pytest.raises(CorpusError, match="only reader cases"):
        load_case(folder / "valid-x.toml", tmp_path)


# --- the reference through the persistent protocol -----------------------------------------------


def test_persistent_server_answers_read_with_a_view(tmp_path: Path) -> None:
    case = CASES_BY_ID["reader/ASR-265/valid-call-without-result-is-dangling"]
    (tmp_path / "empty.jsonl").write_bytes(b"")
    requests = [protocol.Start(), protocol.Read(3, str(case.stream)), protocol.Read(4, str(tmp_path / "empty.jsonl")),
                protocol.Read(5, str(tmp_path / "missing.jsonl")), protocol.Validate(6, str(case.stream)),
                protocol.Stop()]
    out = io.StringIO()
    serve(io.StringIO("".join(protocol.encode(r) + "\n" for r in requests)), out)
    started, viewed, empty, missing, validated = (json.loads(line) for line in out.getvalue().splitlines())
    assert "reader" in started["roles"] and "reader" in ROLES
    protocol.check("viewed", viewed)
    assert viewed["seq"] == 3 and viewed["view"] == read_view(case.stream)
    assert empty["errored"] and missing["errored"] and empty["seq"] == 4 and missing["seq"] == 5
    assert validated == {"seq": 6, "verdict": "valid", "violations": []}


def test_persistent_server_takes_another_reader() -> None:
    case = CASES_BY_ID["reader/ASR-265/valid-call-without-result-is-dangling"]
    out = io.StringIO()
    requests = [protocol.Start(), protocol.Read(1, str(case.stream)), protocol.Stop()]
    serve(io.StringIO("".join(protocol.encode(r) + "\n" for r in requests)), out,
          reader=lambda path: {"view_version": 1, "read": path})
    assert json.loads(out.getvalue().splitlines()[1])["view"] == {"view_version": 1, "read": str(case.stream)}


# --- one-shot executables ---------------------------------------------------------------------------


def run_oneshot(executable: Path, stream_path: Path) -> dict:
    """The view a one-shot reader prints for a corpus stream (a copy: each test may change its own)."""
    return copy.deepcopy(_printed_view(executable, stream_path))


@functools.cache
def _printed_view(executable: Path, stream_path: Path) -> dict:
    """One process per reader and corpus file in a test process: the seeded-bug tests below read the same
    reader on the same case more than once."""
    finished = subprocess.run([sys.executable, str(executable), str(stream_path)], capture_output=True, text=True,
                              timeout=60, check=False)
    assert finished.returncode == 0, finished.stderr
    view: dict = json.loads(finished.stdout)
    return view


def test_reference_reader_executable(tmp_path: Path) -> None:
    case = CASES_BY_ID["reader/ASR-264/valid-revision-is-the-same-result"]
    assert run_oneshot(ROOT / "examples" / "reference-reader", case.stream) == read_view(case.stream)
    (tmp_path / "empty.jsonl").write_bytes(b"")
    finished = subprocess.run([str(ROOT / "examples" / "reference-reader"), str(tmp_path / "empty.jsonl")],
                              capture_output=True, text=True, timeout=60, check=False)
    assert finished.returncode == 2 and "no record" in finished.stderr and finished.stdout == ""


#: Each seeded-bug reader and the cases it must fail (and, by its group, the rule it breaks).
SEEDED = {
    "pairs-by-position": ["reader/ASR-263/valid-duplicate-call-ids-no-positional-pairing",
                          "reader/ASR-264/valid-two-results-for-one-call"],
    "falls-back-to-native-call-id": ["reader/ASR-263/valid-native-call-id-never-pairs"],
    "keeps-old-title-source": ["reader/ASR-181/valid-new-title-without-source-is-unknown",
                               "reader/ASR-181/valid-source-stays-unknown-until-recorded-again"],
    "dangling-as-completed": ["reader/ASR-265/valid-call-without-result-is-dangling",
                              "reader/ASR-265/valid-refused-call-without-result"],
    "reclassifies-content-level": ["reader/ASR-165/valid-declaration-applies-to-later-records-only",
                                   "reader/ASR-165/valid-tightened-twice"],
    # Caught only because an object as recorded is compared whole, or an entity map by its keys.
    "merges-client-members": ["reader/ASR-179/valid-client-replaced-whole"],
    "merges-project": ["reader/ASR-160/valid-project-replaced-whole"],
    "counts-call-revisions-as-calls": ["reader/ASR-263/valid-call-revision-is-the-same-call"],
    "required-from-latest-declaration": ["reader/ASR-163/valid-required-holds-once-declared"],
    "drops-null-primary-head": ["reader/ASR-160/valid-heads-with-null-primary"],
    "removed-takes-records-out": ["reader/ASR-174/valid-removed-names-items-not-records"],
    "decision-without-status-unresolved": ["reader/ASR-269/valid-decision-without-status-is-resolved"],
    "drops-compact-beside-permission": ["reader/ASR-279/valid-compact-beside-a-permission-for-another-command"],
    "merges-terminal-revisions": ["reader/ASR-271/valid-terminal-revision-is-a-complete-snapshot",
                                  "reader/ASR-271/valid-revision-chain-of-two-terminals"],
    "process-id-as-terminal-fallback": ["reader/ASR-291/valid-process-id-is-never-a-terminal-reference"],
}
#: Seeded-bug readers a per-member comparison (every object member by member) lets through.
NEEDS_WHOLE_COMPARISON = ("merges-client-members", "merges-project", "counts-call-revisions-as-calls",
                          "merges-terminal-revisions")


@pytest.mark.parametrize("name", sorted(SEEDED))
def test_each_seeded_bug_reader_fails_its_cases(name: str) -> None:
    assert SEEDED[name]
    for case_id in SEEDED[name]:
        case = CASES_BY_ID[case_id]
        view = run_oneshot(MISBEHAVING / name, case.stream)
        assert check_view(view) is None
        judgement = judge_read(case, ReadAnswer(Outcome.VIEWED, view=view))
        assert judgement.status == "failed", f"{name} passes {case_id}"
        rule = case.id.split("/")[1]
        assert re.search(rf"^(ASR-\d+, )*{rule}(, ASR-\d+)*: ", judgement.message, re.MULTILINE), judgement.message


@pytest.mark.parametrize("name", NEEDS_WHOLE_COMPARISON)
def test_absence_is_what_catches_some_seeded_bugs(name: str) -> None:
    """Compared member by member everywhere (every whole or by-keys object named partial), the view passes."""
    case_id = SEEDED[name][0]
    case = CASES_BY_ID[case_id]
    view = run_oneshot(MISBEHAVING / name, case.stream)
    assert compare_views(case.view(), view) != []
    everywhere = [pointer for pointer in _object_pointers(case.view()) if check_partial_view(case.view(), [pointer])
                  == []]
    assert everywhere and compare_views(case.view(), view, everywhere) == []


def _object_pointers(value: object, path: str = "") -> list[str]:
    if not isinstance(value, dict):
        return []
    return [path] + [p for name, member in value.items() for p in _object_pointers(member, f"{path}/{name}")]


@pytest.mark.parametrize("name", sorted(SEEDED))
def test_each_seeded_bug_reader_is_otherwise_the_reference(name: str) -> None:
    """It breaks one thing: on a case about something else it gives the reference's view."""
    case = CASES_BY_ID["reader/ASR-163/valid-extensions-merged-by-id-and-version"]
    assert run_oneshot(MISBEHAVING / name, case.stream) == read_view(case.stream)
