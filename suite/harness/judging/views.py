"""Reader views: the published schema, and comparing a view with a case's expected view.

An expected view lists the members a case is about; the others are not checked.
How a listed value is compared is said by the view schema's ``comparedAs``
annotation, so that absence can be checked where the pages settle it:

- ``"whole"`` (an object as recorded: client, environment, project, provider,
  a terminal's snapshot): equal as one JSON value, so a member the expected
  object lacks must be absent from the actual one too;
- ``"keys"`` (an entity map: calls, permissions, terminals): exactly the
  expected keys, each entry compared by its own schema, so an invented entity fails;
- any other object: member by member, recursively;
- a list or a scalar: as a whole value (``"dangling": []`` says there are none).

A case may name JSON pointers (its ``partial`` key) where a ``whole`` or
``keys`` object is compared member by member instead.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
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
class ViewDifference:
    """One place where the actual view disagrees with the expected one."""

    #: JSON pointer into the view (RFC 6901).
    path: str
    #: The expected value, or MISSING when the member must be absent.
    expected: Any
    #: The actual value, or MISSING when the view lacks the member.
    actual: Any
    message: str

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"path": self.path}
        if self.expected is not MISSING:
            data["expected"] = self.expected
        if self.actual is not MISSING:
            data["actual"] = self.actual
        data["message"] = self.message
        return data


@cache
def view_schema() -> dict[str, Any]:
    """The published view schema (schemas/view.schema.json)."""
    text = resources.files("asr_conformance").joinpath("schemas", "view.schema.json").read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def check_view(view: Any) -> str | None:
    """``where: what`` for the first way ``view`` breaks the view schema, or None."""
    return first_problem(view_schema(), view)


# --- versions ------------------------------------------------------------------------

#: The members each view version defines (docs/contract.md §5). A change that can fail a reader that passed
#: before (a member a fuzz property compares, a member a case lists) raises the version; a reader is compared
#: on the members of the version its view declares (``view_version``).
VIEW_MEMBERS: dict[int, frozenset[str]] = {
    1: frozenset({"view_version", "records", "session_info", "lossy", "in_force", "instructions", "calls", "pairs",
                  "orphans", "dangling", "permissions", "unresolved", "decisions", "changes", "problems"}),
}
VIEW_MEMBERS[2] = VIEW_MEMBERS[1] | {"terminals", "terminal_reads"}
#: The version the reference reader writes: the latest.
VIEW_VERSION = max(VIEW_MEMBERS)


def declared_version(view: Any) -> int:
    """The view version a reader's view declares (the latest when it declares none the suite knows: the view
    schema then fails it anyway)."""
    version = view.get("view_version") if isinstance(view, dict) else None
    return version if isinstance(version, int) and version in VIEW_MEMBERS else VIEW_VERSION


def at_version(expected: dict[str, Any], version: int) -> tuple[dict[str, Any], list[str]]:
    """The expected view cut to the members of ``version``, and the members it leaves out (later versions').

    ``view_version`` itself is the reader's to declare (the view schema checks it), never compared."""
    members = VIEW_MEMBERS.get(version, VIEW_MEMBERS[VIEW_VERSION])
    left = sorted(name for name in expected if name not in members and not name.startswith("_"))
    return {k: v for k, v in expected.items() if k not in left and k != "view_version"}, left


def not_checked_at(version: int, left: Iterable[str]) -> str:
    """Why part of a view was not compared: the reader's view version predates those members."""
    return (f"view version {version}: {', '.join(left)} not compared (members of view version "
            f"{min(v for v in VIEW_MEMBERS if set(left) <= VIEW_MEMBERS[v])}; the reader declares {version})")


# --- comparing -----------------------------------------------------------------------


#: The schema annotation that says how an object is compared (see the module docstring).
COMPARED_AS = "comparedAs"


def compare_views(expected: dict[str, Any], actual: dict[str, Any], partial: Iterable[str] = ()) -> list[ViewDifference]:
    """Every difference between an expected view and an actual view, in document order.

    ``partial``: JSON pointers into the expected view where an object is compared
    member by member whatever the schema says (a case's ``partial`` key)."""
    found: list[ViewDifference] = []
    _compare(expected, actual, "", view_schema(), frozenset(partial), found)
    return found


def comparison(schema: dict[str, Any] | None) -> str | None:
    """How an object under ``schema`` is compared: "whole", "keys" or None (member by member)."""
    branch = _object_branch(schema) if schema is not None else None
    return branch.get(COMPARED_AS) if branch is not None else None


def _compare(expected: Any, actual: Any, path: str, schema: dict[str, Any] | None, partial: frozenset[str],
             found: list[ViewDifference]) -> None:
    if not isinstance(expected, dict):
        if not same_json(expected, actual):
            found.append(_difference(path, expected, actual))
        return
    if not isinstance(actual, dict):
        found.append(_difference(path, expected, actual))
        return
    how = None if path in partial else comparison(schema)
    if how == "whole":
        if not same_json(expected, actual):
            found.append(_difference(path, expected, actual))
        return
    branch = _object_branch(schema) if schema is not None else None
    for name, value in expected.items():
        where = f"{path}/{_escape(name)}"
        if name not in actual:
            found.append(_difference(where, value, MISSING))
        else:
            member = _member_schema(branch, name) if branch is not None else None
            _compare(value, actual[name], where, member, partial, found)
    if how == "keys":
        for name in actual:
            if name not in expected:
                found.append(_difference(f"{path}/{_escape(name)}", MISSING, actual[name]))


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
    (r"^/calls/(?P<c>[^/]+)$", "call entity {c}"),
    (r"^/permissions/(?P<p>[^/]+)/(?P<m>[^/]+)", "permission {p}: {m}"),
    (r"^/permissions/(?P<p>[^/]+)$", "permission entity {p}"),
    (r"^/terminals/(?P<t>[^/]+)/(?P<m>[^/]+)", "terminal {t}: {m}"),
    (r"^/terminals/(?P<t>[^/]+)$", "terminal entity {t}"),
    (r"^/terminal_reads$", "terminal reads"),
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


def _render(value: Any, path: str, expected: bool = False) -> str:
    if value is MISSING:
        return "nothing (no such member)" if expected else "nothing (the member is missing)"
    text = json.dumps(value, ensure_ascii=False)
    if len(text) > 200:
        text = text[:197] + "..."
    last = path.rsplit("/", 1)[-1]
    return f"unknown ({text})" if value is None and last in _UNKNOWN_WHEN_NULL else text


def _difference(path: str, expected: Any, actual: Any) -> ViewDifference:
    message = f"{describe(path)}: expected {_render(expected, path, expected=True)}, got {_render(actual, path)}"
    return ViewDifference(path, expected, actual, message)


# --- expected views ----------------------------------------------------------------


def check_partial_view(expected: Any, partial: Iterable[str] = ()) -> list[str]:
    """Problems with an expected view: a member the view schema does not define, a value
    compared whole (list, scalar, as-recorded object) the schema does not allow there, or
    a ``partial`` pointer that names no object compared whole or by keys."""
    if not isinstance(expected, dict):
        return ["(top level): an expected view is a JSON object"]
    if "view_version" in expected and expected["view_version"] not in VIEW_MEMBERS:
        return [f"/view_version: this suite reads view versions {', '.join(map(str, VIEW_MEMBERS))}, "
                f"not {expected['view_version']!r}"]
    problems: list[str] = []
    pointers = frozenset(partial)
    reached: set[str] = set()
    _check_partial(expected, view_schema(), "", pointers, reached, problems)
    problems += [f"{pointer}: a partial pointer names no object of the expected view compared whole or by keys"
                 for pointer in sorted(pointers - reached)]
    return problems


def _check_partial(value: Any, schema: dict[str, Any], path: str, partial: frozenset[str], reached: set[str],
                   problems: list[str]) -> None:
    how = comparison(schema) if isinstance(value, dict) else None
    if path in partial and how is not None:
        reached.add(path)
        how = None
    if isinstance(value, dict) and how != "whole":
        branch = _object_branch(schema)
        if branch is not None:
            for name, member in value.items():
                where = f"{path}/{_escape(name)}"
                member_schema = _member_schema(branch, name)
                if member_schema is None:
                    problems.append(f"{where}: the view schema has no member {name!r} here")
                else:
                    _check_partial(member, member_schema, where, partial, reached, problems)
            return
    problem = first_problem({"$defs": view_schema()["$defs"], **(schema or {})}, value)
    if problem:
        problems.append(f"{path}: {problem.removeprefix('(top level): ')}")


def _resolve(schema: dict[str, Any]) -> dict[str, Any]:
    reference = schema.get("$ref")
    if isinstance(reference, str) and reference.startswith("#/$defs/"):
        value: dict[str, Any] = view_schema()["$defs"][reference.rsplit("/", 1)[-1]]
        return value
    return schema


def _object_branch(schema: dict[str, Any]) -> dict[str, Any] | None:
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


def _member_schema(schema: dict[str, Any], name: str) -> dict[str, Any] | None:
    """The schema of member ``name`` of an object schema, or None when it allows no such member."""
    properties = schema.get("properties", {})
    if name in properties:
        value: dict[str, Any] | None = properties[name]
        return value
    for pattern, member in schema.get("patternProperties", {}).items():
        if re.search(pattern, name):
            found: dict[str, Any] | None = member
            return found
    names = schema.get("propertyNames")
    if isinstance(names, dict) and "pattern" in names and not re.search(names["pattern"], name):
        return None
    extra = schema.get("additionalProperties", True)
    if extra is False:
        return None
    return extra if isinstance(extra, dict) else {}
