"""Member types as the spec's field tables give them.

A table cell such as "string or null" becomes a ``Kind``; a record's table
becomes a mapping of member name to kind (and, where a numbered rule governs
the member, that rule).  Type mismatches without a numbered rule are reported
under X-SHAPE: the tables are normative text but carry no rule number.
"""

from __future__ import annotations

import re
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


def _all_of(value: object, kind: type) -> bool:
    """An array whose items are all of one Python type (a loop, not a generator: this runs on most records)."""
    if type(value) is not list:
        return False
    for item in value:
        if type(item) is not kind:
            return False
    return True


STRINGS = Kind("an array of strings", test=lambda v: _all_of(v, str))
OBJECTS = Kind("an array of objects", test=lambda v: _all_of(v, dict))
#: ContentPart[] (the Messages section is not in the pages): an array of objects.
CONTENT_PARTS = OBJECTS
#: Actor references are objects (stated: config_change.actor "is not" one because it is a string).
ACTOR = OBJECT
SAFE_INTEGER = Kind(
    "a safe integer", test=lambda v: is_int(v) and -MAX_SAFE_INTEGER <= v <= MAX_SAFE_INTEGER
)

#: What follows a timestamp's date and hour (``YYYY-MM-DDTHH:``, always 14 characters in the pattern of
#: ``strict_json.TIMESTAMP``): minutes, seconds, fraction and offset.
_AFTER_THE_HOUR = re.compile(r"[0-5]\d:(?:[0-5]\d|60)(?:\.\d+)?(?:[Zz]|[+-](?:[01]\d|2[0-3]):[0-5]\d)")
#: Date-and-hour prefixes already judged (a stream's timestamps share a few); bounded, as a stream's are not: a pure
#: cache.
_HOURS: dict[str, bool] = {}
_HOURS_KEPT = 4096


def is_timestamp_quick(value: object) -> TypeGuard[str]:
    """``strict_json.is_timestamp``, with the date and hour (and the calendar's word on the day) judged once
    per prefix: every record has a timestamp, and the full pattern with its day check cost half the
    envelope. The prefix is judged by ``is_timestamp`` itself, completed with a time that always passes."""
    if type(value) is not str:
        return False
    hour = value[:14]
    known = _HOURS.get(hour)
    if known is None:
        if len(_HOURS) >= _HOURS_KEPT:
            _HOURS.clear()
        known = _HOURS[hour] = is_timestamp(hour + "00:00Z")
    return known and _AFTER_THE_HOUR.fullmatch(value, 14) is not None


TIMESTAMP = Kind("an RFC 3339 timestamp with an offset", test=is_timestamp_quick)

#: Marks a member absent in one dictionary lookup (a JSON value is never this object).
_ABSENT = object()

#: name -> kind, or name -> (kind, rule) when a numbered rule governs the member.
FieldTable = Mapping[str, "Kind | tuple[Kind, str]"]


class MemberTable(dict[str, "Kind | tuple[Kind, str]"]):
    """A field table with what ``check_members`` needs per member taken out once, when the table is made:
    the Python types that pass outright and the test for any other (a member of any JSON value is left out,
    as nothing can fail it)."""

    __slots__ = ("plain", "tests")

    def __init__(self, table: FieldTable) -> None:
        super().__init__(table)
        self.plain: dict[str, frozenset[type]] = {}
        self.tests: dict[str, Callable[[object], bool] | None] = {}
        for name, spec in self.items():
            kind = spec[0] if isinstance(spec, tuple) else spec
            if kind is not ANY:
                self.plain[name] = kind.plain
                self.tests[name] = kind.test


def check_members(ctx: RecordContext, obj: dict[str, Any], table: FieldTable, pointer: str = "") -> None:
    """Report every present member whose value is not of its table's type.

    Walks whichever is shorter, the object's members or the table (in the order of the one walked): this runs
    several times on every record, so it allocates nothing on the happy path, and a ``MemberTable`` spares
    each member the look at how its table entry is written."""
    prepared = table if type(table) is MemberTable else MemberTable(table)
    plain = prepared.plain
    if len(table) < len(obj):
        get = obj.get
        for name, types in plain.items():
            value = get(name, _ABSENT)
            if value is _ABSENT or type(value) in types:
                continue
            test = prepared.tests[name]
            if test is None or not test(value):
                _mismatch(ctx, name, value, table[name], pointer)
    else:
        lookup = plain.get
        for name, value in obj.items():
            allowed = lookup(name)
            if allowed is None or type(value) in allowed:
                continue
            test = prepared.tests[name]
            if test is None or not test(value):
                _mismatch(ctx, name, value, table[name], pointer)


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
