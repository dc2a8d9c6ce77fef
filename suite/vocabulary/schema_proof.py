"""A quick proof that a JSON document meets one of the package's schemas, for the documents checked
by the thousand (a reader's view per case and per fuzz example, a large view of tens of thousands of
members): the schema is compiled once into nested Python checks, about ten times faster than walking it
with jsonschema.

It only ever proves validity. A check answers True when the document surely meets the schema, and False
when it cannot tell; jsonschema then decides and names the problem (``schemas.first_problem``), so a
False here never fails anything by itself. Each check is as strict as jsonschema or stricter (an integer
is an ``int``, never a whole ``float``; ``enum`` and ``const`` compare scalars of the same type only;
``uniqueItems`` is proven for strings only), and a schema with a keyword outside the compiled set is not
compiled at all (``compile_proof`` returns None): everything then goes to jsonschema, as before."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

Check = Callable[[Any], bool]

#: Keywords that never change validity (annotations), under Draft 2020-12 without a format checker.
_ANNOTATIONS = frozenset({"$schema", "$id", "$comment", "$defs", "definitions", "title", "description", "default",
                          "examples", "format", "comparedAs", "readOnly", "writeOnly", "deprecated"})
_SCALARS = (str, int, float, bool, type(None))


class _Unsupported(Exception):
    """The schema uses something the compiled checks do not cover."""


def _is_type(name: str) -> Check:
    checks: dict[str, Check] = {
        "object": lambda value: type(value) is dict,
        "array": lambda value: type(value) is list,
        "string": lambda value: type(value) is str,
        "null": lambda value: value is None,
        "boolean": lambda value: type(value) is bool,
        "integer": lambda value: type(value) is int,
        "number": lambda value: type(value) is int or type(value) is float,
    }
    if name not in checks:
        raise _Unsupported(f"type {name!r}")
    return checks[name]


def _same_scalar(value: Any, allowed: list[Any]) -> bool:
    return type(value) in _SCALARS and any(type(value) is type(one) and value == one for one in allowed)


class _Compiler:
    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root
        self.refs: dict[str, Check] = {}

    def ref(self, pointer: str) -> Check:
        """A check of a local ``#/$defs/...`` reference, compiled once (and lazily, so a reference may recur)."""
        if not pointer.startswith("#/"):
            raise _Unsupported(f"$ref {pointer!r}")
        if pointer not in self.refs:
            target: Any = self.root
            for part in pointer[2:].split("/"):
                part = part.replace("~1", "/").replace("~0", "~")
                if not isinstance(target, dict) or part not in target:
                    raise _Unsupported(f"$ref {pointer!r}")
                target = target[part]
            slot: list[Check] = []
            self.refs[pointer] = lambda value: slot[0](value)
            slot.append(self.compile(target))
        return self.refs[pointer]

    def compile(self, schema: Any) -> Check:
        if schema is True or schema == {}:
            return lambda value: True
        if schema is False:
            return lambda value: False
        if not isinstance(schema, dict):
            raise _Unsupported("a schema that is not an object")
        if "$id" in schema and schema is not self.root:
            raise _Unsupported("a nested $id")
        checks: list[Check] = []
        for keyword, argument in schema.items():
            if keyword in _ANNOTATIONS or keyword in ("properties", "patternProperties", "additionalProperties"):
                continue
            checks.append(self.keyword(keyword, argument, schema))
        if any(key in schema for key in ("properties", "patternProperties", "additionalProperties")):
            checks.append(self.members(schema))
        if len(checks) == 1:
            return checks[0]
        return lambda value: all(check(value) for check in checks)

    def keyword(self, keyword: str, argument: Any, schema: dict[str, Any]) -> Check:
        if keyword == "type":
            names = [argument] if isinstance(argument, str) else list(argument)
            kinds = [_is_type(name) for name in names]
            return lambda value: any(kind(value) for kind in kinds)
        if keyword == "enum":
            allowed = list(argument)
            return lambda value: _same_scalar(value, allowed)
        if keyword == "const":
            return lambda value: _same_scalar(value, [argument])
        if keyword == "required":
            names = list(argument)
            return lambda value: type(value) is not dict or all(name in value for name in names)
        if keyword == "dependentRequired":
            needs = {key: list(names) for key, names in argument.items()}
            return lambda value: type(value) is not dict or all(
                name in value for key, names in needs.items() if key in value for name in names)
        if keyword == "items":
            item = self.compile(argument)
            return lambda value: type(value) is not list or all(item(one) for one in value)
        if keyword == "minItems":
            return lambda value: type(value) is not list or len(value) >= argument
        if keyword == "uniqueItems":
            if not argument:
                return lambda value: True
            return lambda value: type(value) is not list or (
                all(type(one) is str for one in value) and len(set(value)) == len(value))
        if keyword == "minLength":
            return lambda value: type(value) is not str or len(value) >= argument
        if keyword == "pattern":
            pattern = re.compile(argument)
            return lambda value: type(value) is not str or pattern.search(value) is not None
        if keyword in ("minimum", "maximum"):
            if type(argument) not in (int, float):
                raise _Unsupported(f"{keyword} {argument!r}")
            if keyword == "minimum":
                return lambda value: type(value) not in (int, float) or value >= argument
            return lambda value: type(value) not in (int, float) or value <= argument
        if keyword == "propertyNames":
            name = self.compile(argument)
            return lambda value: type(value) is not dict or all(name(key) for key in value)
        if keyword == "anyOf":
            options = [self.compile(one) for one in argument]
            return lambda value: any(option(value) for option in options)
        if keyword == "allOf":
            parts = [self.compile(one) for one in argument]
            return lambda value: all(part(value) for part in parts)
        if keyword == "$ref":
            return self.ref(argument)
        raise _Unsupported(keyword)

    def members(self, schema: dict[str, Any]) -> Check:
        """``properties``, ``patternProperties`` and ``additionalProperties`` together (the last applies to the
        members neither of the others names)."""
        named = {key: self.compile(sub) for key, sub in schema.get("properties", {}).items()}
        patterns = [(re.compile(key), self.compile(sub)) for key, sub in schema.get("patternProperties", {}).items()]
        other = self.compile(schema["additionalProperties"]) if "additionalProperties" in schema else None

        def check(value: Any) -> bool:
            if type(value) is not dict:
                return True
            for key, member in value.items():
                if type(key) is not str:
                    return False
                known = named.get(key)
                if known is not None and not known(member):
                    return False
                matched = False
                for pattern, sub in patterns:
                    if pattern.search(key):
                        matched = True
                        if not sub(member):
                            return False
                if known is None and not matched and other is not None and not other(member):
                    return False
            return True

        return check


def compile_proof(schema: dict[str, Any]) -> Check | None:
    """The compiled proof of ``schema`` (True: the document surely meets it), or None when the schema uses a
    keyword the proof does not cover."""
    try:
        return _Compiler(schema).compile(schema)
    except (_Unsupported, re.error, TypeError, AttributeError):
        return None
