"""The rule catalog (cases/rules.toml) as typed data."""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from asr_conformance import CORPUS_DIR
from asr_conformance.vocabulary.errors import UserError
from asr_conformance.vocabulary.schemas import first_problem


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    page: str
    section: str
    level: str
    binds: tuple[str, ...]
    tested: str
    provenance: str
    summary: str
    reason: str | None = None
    checked_by: tuple[str, ...] = ()

    @property
    def suite_defined(self) -> bool:
        """X- rules: names the suite gives to facts the pages do not number."""
        return self.id.startswith("X-")


class CatalogError(UserError):
    """The catalog file is unreadable or does not match its schema."""


@cache
def load_catalog(corpus: Path = CORPUS_DIR) -> dict[str, Rule]:
    path = corpus / "rules.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise CatalogError(f"{path}: {error}") from None
    schema = json.loads((corpus / "schema" / "rules.schema.json").read_text(encoding="utf-8"))
    problem = first_problem(schema, data)
    if problem:
        raise CatalogError(f"{path}: {problem}")
    rules: dict[str, Rule] = {}
    for entry in data["rule"]:
        if entry["id"] in rules:
            raise CatalogError(f"{path}: rule {entry['id']} is listed twice")
        rules[entry["id"]] = Rule(
            **{**entry, "binds": tuple(entry["binds"]), "checked_by": tuple(entry.get("checked_by", ()))}
        )
    return rules
