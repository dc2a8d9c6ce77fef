"""Reader views: the published schema, and comparing a view with a case's expected view.

A case's expected view is *partial*: every member it lists must be present in
the actual view and equal to it; members it leaves out are not checked.
Objects are compared member by member, recursively; a list or a scalar is
compared as a whole value, element by element, so a list in an expected view
states the complete list (``"dangling": []`` says there are none).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from asr_conformance.vocabulary.schemas import first_problem


class _Missing:
    """Stands for a member the actual view does not have (distinct from null)."""

    def __repr__(self) -> str:
        return "(missing)"


MISSING: Any = _Missing()


@dataclass(frozen=True, slots=True)
class Difference:
    """One place where the actual view disagrees with the expected one."""

    #: JSON pointer into the view (RFC 6901).
    path: str
    expected: Any
    #: The actual value, or MISSING when the view lacks the member.
    actual: Any
    message: str

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"path": self.path, "expected": self.expected}
        if self.actual is not MISSING:
            data["actual"] = self.actual
        data["message"] = self.message
        return data


@cache
def view_schema() -> dict[str, Any]:
    """The published view schema (schemas/view.schema.json)."""
    text = resources.files("asr_conformance").joinpath("schemas", "view.schema.json").read_text(encoding="utf-8")
    return json.loads(text)


def check_view(view: Any) -> str | None:
    """``where: what`` for the first way ``view`` breaks the view schema, or None."""
    return first_problem(view_schema(), view)


# --- comparing -----------------------------------------------------------------------


def compare_views(expected: dict, actual: dict) -> list[Difference]:
    """Every difference between a partial expected view and an actual view, in document order."""
    found: list[Difference] = []
    _compare(expected, actual, "", found)
    return found


def _compare(expected: Any, actual: Any, path: str, found: list[Difference]) -> None:
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            found.append(_difference(path, expected, actual))
            return
        for name, value in expected.items():
            where = f"{path}/{_escape(name)}"
            if name not in actual:
                found.append(_difference(where, value, MISSING))
            else:
                _compare(value, actual[name], where, found)
    elif not same_json(expected, actual):
        found.append(_difference(path, expected, actual))


def same_json(a: Any, b: Any) -> bool:
    """Equality of JSON values: true and 1 differ, 1 and 1.0 are the same number."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _escape(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")


#: Members where null means "unknown" rather than "none", for messages.
_UNKNOWN_WHEN_NULL = {"titleSource", "requestedBy", "status", "decision", "provider", "result", "contentLevel"}
#: A few view members in words, for messages: (pointer pattern, label).
_LABELS: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(p), label) for p, label in (
    (r"^/session_info/(?P<m>[^/]+)$", "effective {m}"),
    (r"^/in_force/(?P<s>[^/]+)/(?P<m>[^/]+)", "{m} in force at seq {s}"),
    (r"^/in_force/(?P<s>[^/]+)$", "what is in force at seq {s}"),
    (r"^/calls/(?P<c>[^/]+)/(?P<m>[^/]+)", "call {c}: {m}"),
    (r"^/permissions/(?P<p>[^/]+)/(?P<m>[^/]+)", "permission {p}: {m}"),
    (r"^/pairs$", "pairings"),
    (r"^/orphans$", "unpaired results"),
    (r"^/dangling$", "dangling calls"),
    (r"^/unresolved$", "unresolved permissions"),
    (r"^/decisions$", "approval decisions"),
    (r"^/changes$", "changes"),
    (r"^/lossy$", "effective loss categories"),
    (r"^/records$", "records"),
    (r"^/instructions$", "instructions records"),
))


def describe(path: str) -> str:
    """The view member at ``path`` in words ("effective titleSource")."""
    for pattern, label in _LABELS:
        match = pattern.match(path)
        if match:
            return label.format(**match.groupdict())
    return path or "the view"


def _render(value: Any, path: str) -> str:
    if value is MISSING:
        return "nothing (the member is missing)"
    text = json.dumps(value, ensure_ascii=False)
    if len(text) > 200:
        text = text[:197] + "..."
    last = path.rsplit("/", 1)[-1]
    return f"unknown ({text})" if value is None and last in _UNKNOWN_WHEN_NULL else text


def _difference(path: str, expected: Any, actual: Any) -> Difference:
    message = f"{describe(path)}: expected {_render(expected, path)}, got {_render(actual, path)}"
    return Difference(path, expected, actual, message)


# --- expected views ----------------------------------------------------------------


def check_partial_view(expected: Any) -> list[str]:
    """Problems with an expected (partial) view: a member the view schema does not
    define, or a compared-whole value (list, scalar) the schema does not allow there."""
    if not isinstance(expected, dict):
        return ["(top level): an expected view is a JSON object"]
    if "view_version" in expected and expected["view_version"] != 1:
        return [f"/view_version: this suite reads view_version 1, not {expected['view_version']!r}"]
    problems: list[str] = []
    _check_partial(expected, view_schema(), "", problems)
    return problems


def _check_partial(value: Any, schema: dict, path: str, problems: list[str]) -> None:
    schema = _object_branch(schema) if isinstance(value, dict) else schema
    if isinstance(value, dict) and schema is not None:
        for name, member in value.items():
            where = f"{path}/{_escape(name)}"
            member_schema = _member_schema(schema, name)
            if member_schema is None:
                problems.append(f"{where}: the view schema has no member {name!r} here")
            else:
                _check_partial(member, member_schema, where, problems)
        return
    problem = first_problem({"$defs": view_schema()["$defs"], **(schema or {})}, value)
    if problem:
        problems.append(f"{path}: {problem.removeprefix('(top level): ')}")


def _resolve(schema: dict) -> dict:
    reference = schema.get("$ref")
    if isinstance(reference, str) and reference.startswith("#/$defs/"):
        return view_schema()["$defs"][reference.rsplit("/", 1)[-1]]
    return schema


def _object_branch(schema: dict) -> dict | None:
    """The part of ``schema`` that describes an object (through $ref and anyOf), if any."""
    schema = _resolve(schema)
    for branch in schema.get("anyOf", ()):
        branch = _resolve(branch)
        if branch.get("type") == "object" or "object" in (branch.get("type") or ()):
            return branch
    kind = schema.get("type")
    if kind == "object" or (isinstance(kind, list) and "object" in kind):
        return schema
    return None


def _member_schema(schema: dict, name: str) -> dict | None:
    """The schema of member ``name`` of an object schema, or None when it allows no such member."""
    properties = schema.get("properties", {})
    if name in properties:
        return properties[name]
    for pattern, member in schema.get("patternProperties", {}).items():
        if re.search(pattern, name):
            return member
    names = schema.get("propertyNames")
    if isinstance(names, dict) and "pattern" in names and not re.search(names["pattern"], name):
        return None
    extra = schema.get("additionalProperties", True)
    if extra is False:
        return None
    return extra if isinstance(extra, dict) else {}
