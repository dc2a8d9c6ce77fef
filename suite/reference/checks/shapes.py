"""Member types as the spec's field tables give them.

A table cell such as "string or null" becomes a ``Kind``; a record's table
becomes a mapping of member name to kind (and, where a numbered rule governs
the member, that rule).  Type mismatches without a numbered rule are reported
under X-SHAPE: the tables are normative text but carry no rule number.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeGuard

from asr_conformance.reference.checks.context import RecordContext
from asr_conformance.vocabulary.strict_json import SAFE_INTEGER as MAX_SAFE_INTEGER
from asr_conformance.vocabulary.strict_json import is_timestamp

SHAPE = "X-SHAPE"


@dataclass(frozen=True, slots=True)
class Kind:
    """A JSON type as a field table states it, with the words it uses.

    Values whose Python type is in ``plain`` pass outright (the common case,
    checked without a call); others pass when ``test`` says so."""

    words: str
    plain: frozenset[type] = frozenset()
    test: Callable[[object], bool] | None = None

    def accepts(self, value: object) -> bool:
        return type(value) in self.plain or (self.test is not None and self.test(value))

    def __or__(self, other: Kind) -> Kind:
        first, second = self, other
        test = None
        if first.test is not None or second.test is not None:
            test = lambda v: first.accepts(v) or second.accepts(v)  # noqa: E731
        return Kind(f"{self.words} or {other.words}", self.plain | other.plain, test)


def is_int(value: object) -> TypeGuard[int]:
    return type(value) is int or (isinstance(value, int) and not isinstance(value, bool))


def is_number(value: object) -> bool:
    return is_int(value) or type(value) is float


STRING = Kind("a string", frozenset({str}))
BOOLEAN = Kind("a boolean", frozenset({bool}))
#: int subclasses other than bool: the strict reader marks unsafe integers with one.
INTEGER = Kind("an integer", frozenset({int}), is_int)
NUMBER = Kind("a number", frozenset({int, float}), is_int)
OBJECT = Kind("an object", frozenset({dict}))
ARRAY = Kind("an array", frozenset({list}))
NULL = Kind("null", frozenset({type(None)}))
ANY = Kind("any JSON value", test=lambda v: True)
STRINGS = Kind("an array of strings", test=lambda v: type(v) is list and all(type(x) is str for x in v))
OBJECTS = Kind("an array of objects", test=lambda v: type(v) is list and all(type(x) is dict for x in v))
#: ContentPart[] (the Messages section is not in the pages): an array of objects.
CONTENT_PARTS = OBJECTS
#: Actor references are objects (stated: config_change.actor "is not" one because it is a string).
ACTOR = OBJECT
SAFE_INTEGER = Kind(
    "a safe integer", test=lambda v: is_int(v) and -MAX_SAFE_INTEGER <= v <= MAX_SAFE_INTEGER
)

TIMESTAMP = Kind("an RFC 3339 timestamp with an offset", test=is_timestamp)

#: Marks a member absent in one dictionary lookup (a JSON value is never this object).
_ABSENT = object()

#: name -> kind, or name -> (kind, rule) when a numbered rule governs the member.
FieldTable = Mapping[str, "Kind | tuple[Kind, str]"]


def check_members(ctx: RecordContext, obj: dict[str, Any], table: FieldTable, pointer: str = "") -> None:
    """Report every present member whose value is not of its table's type.

    Walks whichever is shorter, the object's members or the table: this runs
    several times on every record, so it allocates nothing on the happy path."""
    if len(table) < len(obj):
        get = obj.get
        for name, spec in table.items():
            value = get(name, _ABSENT)
            if value is _ABSENT:
                continue
            kind = spec[0] if isinstance(spec, tuple) else spec
            if type(value) not in kind.plain and (kind.test is None or not kind.test(value)):
                _mismatch(ctx, name, value, spec, pointer)
    else:
        lookup = table.get
        for name, value in obj.items():
            entry = lookup(name)
            if entry is None:
                continue
            kind = entry[0] if isinstance(entry, tuple) else entry
            if type(value) not in kind.plain and (kind.test is None or not kind.test(value)):
                _mismatch(ctx, name, value, entry, pointer)


def _mismatch(ctx: RecordContext, name: str, value: object, spec: Kind | tuple[Kind, str], pointer: str) -> None:
    kind, rule = spec if isinstance(spec, tuple) else (spec, SHAPE)
    ctx.error(rule, f"{name} must be {kind.words}, not {describe(value)}", f"{pointer}/{name}")


def describe(value: object) -> str:
    """A short phrase for a JSON value, for messages."""
    if value is None:
        return "null"
    if type(value) is bool:
        return "a boolean"
    if is_int(value):
        return f"the integer {value}"
    if type(value) is float:
        return f"the number {value!r}"
    if type(value) is str:
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"the string {shown!r}"
    if type(value) is list:
        return "an array"
    return "an object"


def require(ctx: RecordContext, obj: dict[str, Any], names: tuple[str, ...], rule: str, what: str, pointer: str = "") -> bool:
    """Report each missing member; True when all are present."""
    missing = [name for name in names if name not in obj]
    for name in missing:
        ctx.error(rule, f"{what} must contain {name}", f"{pointer}/{name}" if pointer else f"/{name}")
    return not missing


def one_of_values(
    ctx: RecordContext, obj: dict[str, Any], name: str, allowed: tuple[str, ...], rule: str, pointer: str = ""
) -> None:
    """A closed enumeration: any other string is an error."""
    value = obj.get(name)
    if type(value) is str and value not in allowed:
        listed = ", ".join(allowed)
        ctx.error(rule, f"{name} is {value!r}; the only values allowed are {listed}", f"{pointer}/{name}")
