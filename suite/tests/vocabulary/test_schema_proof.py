"""The compiled proof of a schema (``vocabulary/schema_proof.py``) never calls an invalid document valid.

It is sound where it matters: every document it proves valid, jsonschema finds valid (views of every
corpus stream, and those views broken at a drawn place in drawn ways); it is not idle: it proves the
reference reader's views valid, so that jsonschema is spared them; and ``first_problem`` still names the
problem of every document it cannot prove, word for word as jsonschema alone did."""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asr_conformance import CORPUS_DIR
from asr_conformance.harness.judging.views import view_schema
from asr_conformance.reference.reader import UnreadableStream, read_view
from asr_conformance.vocabulary.cases import iter_cases
from asr_conformance.vocabulary.schema_proof import compile_proof
from asr_conformance.vocabulary.schemas import first_problem, published_schema

SCHEMA = view_schema()
PROOF = compile_proof(SCHEMA)
JSONSCHEMA = jsonschema.Draft202012Validator(SCHEMA)


@cache
def _views() -> list[dict[str, Any]]:
    """The reference reader's view of every corpus stream it can read (read on first use, not at collection)."""
    views = []
    for role in ("reader", "validator"):
        for case in iter_cases(CORPUS_DIR, role=role):
            if "-scale-" in case.id:
                continue  # large and alike: the proof's speed is their point, not its reach
            try:
                views.append(read_view(case.stream))
            except UnreadableStream:
                pass
    return views


def _jsonschema_first_problem(data: Any) -> str | None:
    """What ``first_problem`` said before the proof: jsonschema alone."""
    if JSONSCHEMA.is_valid(data):
        return None
    error = sorted(JSONSCHEMA.iter_errors(data), key=lambda e: list(map(str, e.path)))[0]
    return f"{'/'.join(str(part) for part in error.path) or '(top level)'}: {error.message}"


def test_the_view_schema_is_compiled_and_proves_every_reference_view() -> None:
    assert PROOF is not None and len(_views()) > 300
    assert all(PROOF(view) for view in _views())
    assert all(JSONSCHEMA.is_valid(view) for view in _views())


#: Values a broken view may hold where another was: each JSON type, and the ones jsonschema treats subtly.
ODD = st.sampled_from([None, True, False, 0, 1, -1, 1.0, 0.5, float("nan"), "", "x", "0", "01", "_x", [], [1], ["a", "a"],
                       {}, {"a": 1}, {"_vendor": 1}, [None], {"": None}])


def _places(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path]
    if isinstance(value, dict):
        for key, member in value.items():
            found += _places(member, (*path, key))
    elif isinstance(value, list):
        for index, member in enumerate(value):
            found += _places(member, (*path, index))
    return found


@st.composite
def broken_views(draw: st.DrawFn) -> Any:
    """A reference view with one place replaced, removed, duplicated or given an unknown member."""
    view = copy.deepcopy(draw(st.sampled_from(_views())))
    path = draw(st.sampled_from(_places(view)))
    if not path:
        return draw(ODD)
    parent = view
    for step in path[:-1]:
        parent = parent[step]
    how = draw(st.sampled_from(["replace", "remove", "duplicate", "add"]))
    last = path[-1]
    if how == "replace":
        parent[last] = draw(ODD)
    elif how == "remove":
        del parent[last]
    elif how == "duplicate" and isinstance(parent, list):
        parent.append(copy.deepcopy(parent[last]))
    elif isinstance(parent[last], dict):
        parent[last][draw(st.sampled_from(["unknown", "_vendor", "0", "id"]))] = draw(ODD)
    return view


@settings(max_examples=100, derandomize=True, database=None)
@given(broken_views())
def test_what_the_proof_calls_valid_jsonschema_calls_valid(view: Any) -> None:
    assert PROOF is not None
    if PROOF(view):
        assert JSONSCHEMA.is_valid(view)
    assert first_problem(SCHEMA, view) == _jsonschema_first_problem(view)


@pytest.mark.parametrize("change", [
    lambda view: view.pop("view_version"),
    lambda view: view.__setitem__("view_version", 3),
    lambda view: view.__setitem__("view_version", True),
    lambda view: view.__setitem__("lossy", ["x", "x"]),
    lambda view: view.__setitem__("in_force", {"01": {}}),
    lambda view: view.__setitem__("unknown", 1),
    lambda view: view["problems"].append({"rule": "ASR-001", "message": "m", "line": 0, "seq": None}),
    lambda view: view["problems"].append({"rule": "ASR-001"}),
], ids=["required", "enum", "enum-bool", "unique", "property-name", "additional", "minimum", "required-member"])
def test_a_broken_view_is_not_proven_and_its_problem_is_named(change: Any) -> None:
    view = copy.deepcopy(_views()[0])
    change(view)
    assert PROOF is not None and not PROOF(view)
    problem = first_problem(SCHEMA, view)
    assert problem is not None and problem == _jsonschema_first_problem(view)


@pytest.mark.parametrize("schema", [
    {"oneOf": [{"type": "string"}, {"type": "integer"}]},
    {"not": {"type": "string"}},
    {"properties": {"a": {"$id": "https://elsewhere.example/a", "type": "string"}}},
    {"$ref": "https://elsewhere.example/schema.json"},
    {"prefixItems": [{"type": "string"}]},
    {"type": "nothing"},
], ids=["oneOf", "not", "nested-id", "remote-ref", "prefixItems", "unknown-type"])
def test_a_schema_beyond_the_compiled_keywords_is_left_to_jsonschema(schema: dict[str, Any]) -> None:
    assert compile_proof(schema) is None


def test_the_report_schema_is_left_to_jsonschema_and_still_checked() -> None:
    """It uses ``oneOf``: never compiled, so every report is walked by jsonschema as before."""
    assert compile_proof(published_schema("report.schema.json")) is None
    assert first_problem(published_schema("report.schema.json"), {}) is not None


def test_integers_and_scalars_are_proven_no_more_loosely_than_jsonschema_reads_them() -> None:
    proof = compile_proof({"type": "object", "properties": {"n": {"type": "integer", "minimum": 1},
                                                            "e": {"enum": [1, "a"]}}})
    assert proof is not None
    assert proof({"n": 1, "e": 1}) and proof({"n": 2, "e": "a"})
    assert not proof({"n": True}) and not proof({"e": True}) and not proof({"n": 0})
    assert not proof({"n": 1.0}), "a whole float is left to jsonschema (which takes it), never proven here"
