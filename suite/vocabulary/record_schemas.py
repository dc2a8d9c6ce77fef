"""The shipped per-record JSON Schemas (draft-07, ``schemas/records/``).

They say what one record can show on its own; cross-record rules are the
reference validator's (see schemas/records/README.md).  Two consumers:
``record_validator`` for the jsonschema library, and ``inlined`` for
hypothesis-jsonschema, which cannot follow references between files.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import jsonschema
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT7

BASE = "https://asr-conformance.invalid/schema/records/"


@cache
def schemas() -> dict[str, dict[str, Any]]:
    """File name -> schema, for every shipped record schema."""
    folder = resources.files("asr_conformance").joinpath("schemas", "records")
    return {
        entry.name: json.loads(entry.read_text(encoding="utf-8"))
        for entry in folder.iterdir()
        if entry.name.endswith(".schema.json")
    }


@cache
def registry() -> Registry:
    resources_ = [(BASE + name, Resource.from_contents(schema, default_specification=DRAFT7))
                  for name, schema in schemas().items()]
    return Registry().with_resources(resources_)


@dataclass(frozen=True)
class RecordValidator:
    validator: jsonschema.Draft7Validator
    #: The record types the schemas cover.
    types: frozenset[str]

    def is_valid(self, record: Any) -> bool:
        return self.validator.is_valid(record)

    def errors(self, record: Any) -> list[str]:
        return [f"{'/'.join(map(str, e.absolute_path)) or '(record)'}: {e.message}"
                for e in self.validator.iter_errors(record)]


@cache
def record_validator(name: str = "record.schema.json") -> RecordValidator:
    schema = schemas()[name]
    types = frozenset(name.removesuffix(".schema.json") for name in schemas()) - {"record", "envelope"}
    return RecordValidator(jsonschema.Draft7Validator(schema, registry=registry()), types)


def inlined(name: str) -> dict[str, Any]:
    """The schema with every $ref replaced by what it points to (for hypothesis-jsonschema)."""
    value: dict[str, Any] = _inline(schemas()[name], BASE + name, 0)
    return value


def _inline(node: Any, base: str, depth: int) -> Any:
    if depth > 50:
        raise ValueError(f"record schemas nest references too deeply near {base}")
    if isinstance(node, list):
        return [_inline(item, base, depth) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        target, resolved_base = _resolve(node["$ref"], base)
        merged = {k: v for k, v in node.items() if k != "$ref"}
        inner = _inline(target, resolved_base, depth + 1)
        if not merged:
            return inner
        return {"allOf": [inner, _inline(merged, base, depth)]}
    return {key: _inline(value, base, depth) for key, value in node.items() if key not in ("$id", "$schema")}


def _resolve(reference: str, base: str) -> tuple[Any, str]:
    document, _, fragment = reference.partition("#")
    url = base.rsplit("/", 1)[0] + "/" + document if document else base
    target: Any = schemas()[url.rsplit("/", 1)[1]]
    for part in filter(None, fragment.split("/")):
        target = target[part]
    return target, url
