"""One way to turn a JSON Schema failure into a message a person can act on."""

from __future__ import annotations

from typing import Any

import jsonschema


def first_problem(schema: dict[str, Any], data: Any, separator: str = "/") -> str | None:
    """``where: what`` for the first problem (in document order), or None when ``data`` is valid.

    ``separator`` joins the path: "/" for JSON documents, "." for TOML keys."""
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(data), key=lambda e: list(map(str, e.path)))
    if not errors:
        return None
    where = separator.join(str(part) for part in errors[0].path) or "(top level)"
    return f"{where}: {errors[0].message}"
