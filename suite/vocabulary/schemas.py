"""The package's published schemas (``schemas/``), one loader for them, and one way to turn a
JSON Schema failure into a message a person can act on."""

from __future__ import annotations

import json
import tomllib
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from asr_conformance.vocabulary.bounded_files import InputFileError, check_depth, read_regular_file
from asr_conformance.vocabulary.errors import UserError
from asr_conformance.vocabulary.schema_proof import Check, compile_proof


def first_problem(schema: dict[str, Any], data: Any, separator: str = "/") -> str | None:
    """``where: what`` for the first problem (in document order), or None when ``data`` is valid.

    ``separator`` joins the path: "/" for JSON documents, "." for TOML keys. A document the schema's compiled
    proof (``schema_proof.py``) shows valid is not walked again; any other is judged by jsonschema."""
    validator, proof = _validator(schema)
    if (proof is not None and proof(data)) or validator.is_valid(data):
        return None
    errors = sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.path)))
    if not errors:
        return None
    where = separator.join(str(part) for part in errors[0].path) or "(top level)"
    return f"{where}: {errors[0].message}"


#: Validators by the identity of their schema (the schemas are loaded once and kept), so that a corpus of
#: hundreds of cases does not build one validator per case: a pure cache.
_VALIDATORS: dict[int, tuple[dict[str, Any], jsonschema.Draft202012Validator, Check | None]] = {}


def _validator(schema: dict[str, Any]) -> tuple[jsonschema.Draft202012Validator, Check | None]:
    """The schema's jsonschema validator and its compiled proof (None where the proof cannot be compiled)."""
    kept = _VALIDATORS.get(id(schema))
    if kept is None or kept[0] is not schema:
        kept = (schema, jsonschema.Draft202012Validator(schema), compile_proof(schema))
        _VALIDATORS[id(schema)] = kept
    return kept[1], kept[2]


@cache
def published_schema(name: str) -> dict[str, Any]:
    """One of the schemas under ``schemas/`` (``"report.schema.json"``, ``"protocol/start.schema.json"``)."""
    loaded: dict[str, Any] = json.loads(resources.files("asr_conformance").joinpath("schemas", *name.split("/")).read_text(encoding="utf-8"))
    return loaded


def check_report(data: Any) -> str | None:
    """The first way ``data`` differs from the report schema, or None."""
    return first_problem(published_schema("report.schema.json"), data, separator=".")


class FileProblem(UserError):
    """A file the suite cannot use; the message names the file (and the key, for a schema problem)."""


def load_checked_toml(path: Path, schema_name: str, what: str) -> dict[str, Any]:
    """Read a TOML file and check it against one of the package's schemas (``schemas/<schema_name>``).

    Manifests and expectations files fail the same way: the file, then what is wrong, then where.
    The file must be a regular file under the input size limit, nested no deeper than the limit."""
    try:
        text = read_regular_file(path, what).decode("utf-8")
        check_depth(text, path, what)
        data = tomllib.loads(text)
    except InputFileError as error:
        raise FileProblem(str(error)) from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, RecursionError) as error:
        raise FileProblem(f"{path}: not valid TOML: {error}") from None
    problem = first_problem(published_schema(schema_name), data, separator=".")
    if problem:
        raise FileProblem(f"{path}: {problem}")
    return data
