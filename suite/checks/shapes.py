"""Member types as the spec's field tables give them.

A table cell such as "string or null" becomes a ``Kind``; a record's table
becomes a mapping of member name to kind (and, where a numbered rule governs
the member, that rule).  Type mismatches without a numbered rule are reported
under X-SHAPE: the tables are normative text but carry no rule number.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Callable, Mapping

from ..stream import MAX_SAFE_INTEGER
from .context import RecordContext

SHAPE = "X-SHAPE"


@dataclass(frozen=True, slots=True)
class Kind:
    """A JSON type as a field table states it, with the words it uses."""

    words: str
    test: Callable[[object], bool]

    def __or__(self, other: "Kind") -> "Kind":
        first, second = self.test, other.test
        return Kind(f"{self.words} or {other.words}", lambda v: first(v) or second(v))


def is_int(value: object) -> bool:
    return type(value) is int or (isinstance(value, int) and not isinstance(value, bool))


def is_number(value: object) -> bool:
    return is_int(value) or type(value) is float


STRING = Kind("a string", lambda v: type(v) is str)
BOOLEAN = Kind("a boolean", lambda v: type(v) is bool)
INTEGER = Kind("an integer", is_int)
NUMBER = Kind("a number", is_number)
OBJECT = Kind("an object", lambda v: type(v) is dict)
ARRAY = Kind("an array", lambda v: type(v) is list)
NULL = Kind("null", lambda v: v is None)
ANY = Kind("any JSON value", lambda v: True)
STRINGS = Kind("an array of strings", lambda v: type(v) is list and all(type(x) is str for x in v))
OBJECTS = Kind("an array of objects", lambda v: type(v) is list and all(type(x) is dict for x in v))
#: ContentPart[] (the Messages section is not in the pages): an array of objects.
CONTENT_PARTS = OBJECTS
#: Actor references are objects (stated: config_change.actor "is not" one because it is a string).
ACTOR = OBJECT
SAFE_INTEGER = Kind(
    "a safe integer", lambda v: is_int(v) and -MAX_SAFE_INTEGER <= v <= MAX_SAFE_INTEGER  # type: ignore[operator]
)

_TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")


def is_timestamp(value: object) -> bool:
    """RFC 3339 date-time with an offset (the Timestamp type; see cases/ASSUMPTIONS.md)."""
    if type(value) is not str or not _TIMESTAMP.match(value):
        return False
    try:
        datetime.fromisoformat(value.upper().replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


TIMESTAMP = Kind("an RFC 3339 timestamp with an offset", is_timestamp)

#: name -> kind, or name -> (kind, rule) when a numbered rule governs the member.
FieldTable = Mapping[str, "Kind | tuple[Kind, str]"]


def check_members(ctx: RecordContext, obj: dict, table: FieldTable, pointer: str = "") -> None:
    """Report every present member whose value is not of its table's type."""
    for name, spec in table.items():
        if name not in obj:
            continue
        kind, rule = spec if isinstance(spec, tuple) else (spec, SHAPE)
        value = obj[name]
        if not kind.test(value):
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


def require(ctx: RecordContext, obj: dict, names: tuple[str, ...], rule: str, what: str, pointer: str = "") -> bool:
    """Report each missing member; True when all are present."""
    missing = [name for name in names if name not in obj]
    for name in missing:
        ctx.error(rule, f"{what} must contain {name}", f"{pointer}/{name}" if pointer else f"/{name}")
    return not missing


def one_of_values(
    ctx: RecordContext, obj: dict, name: str, allowed: tuple[str, ...], rule: str, pointer: str = ""
) -> None:
    """A closed enumeration: any other string is an error."""
    value = obj.get(name)
    if type(value) is str and value not in allowed:
        listed = ", ".join(allowed)
        ctx.error(rule, f"{name} is {value!r}; the only values allowed are {listed}", f"{pointer}/{name}")
