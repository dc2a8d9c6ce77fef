"""The one module of limits and strict JSON: its depth policy holds together and its readers refuse what they must."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import asr_conformance
from asr_conformance.vocabulary import strict_json
from asr_conformance.vocabulary.strict_json import (
    COPY_DEPTH,
    FILE_DEPTH,
    MAX_DEPTH,
    REPLY_DEPTH,
    SAFE_INTEGER,
    TooDeep,
    fits,
    is_safe_integer,
    is_timestamp,
    loads,
    loads_bounded,
)

#: Levels a copied value sits inside its record at most (record -> input -> value, with room for wrappers).
RECORD_ENVELOPE = 8


def test_the_derived_depths_keep_their_reasons() -> None:
    # A converter never writes a record the reader refuses, and a reply can echo the deepest record.
    assert COPY_DEPTH + RECORD_ENVELOPE <= MAX_DEPTH < REPLY_DEPTH
    assert FILE_DEPTH < COPY_DEPTH


def test_no_other_module_defines_a_limit_of_its_own() -> None:
    """MAX_DEPTH, SAFE_INTEGER and the timestamp pattern are assigned here only (imports may rename them)."""
    names = {"MAX_DEPTH", "SAFE_INTEGER", "MAX_SAFE_INTEGER", "TIMESTAMP", "_TIMESTAMP"}
    root = Path(asr_conformance.__file__).parent
    roots = [root, Path(asr_conformance.__file__).parents[1] / "generators", Path(asr_conformance.__file__).parents[1] / "reports"]
    offenders = []
    for folder in roots:
        for path in folder.rglob("*.py"):
            if path.name == "strict_json.py" or "tests" in path.parts or "benchmarks" in path.parts:
                continue
            for node in ast.parse(path.read_text(encoding="utf-8")).body:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
                for target in targets:
                    if isinstance(target, ast.Name) and target.id in names:
                        value = ast.unparse(node.value) if node.value is not None else ""
                        if "Kind(" not in value:  # shapes.TIMESTAMP / SAFE_INTEGER are member kinds built on these
                            offenders.append(f"{path.name}:{node.lineno} {target.id}")
    assert offenders == []


@pytest.mark.parametrize(
    "text",
    ["NaN", "[Infinity]", '{"a": -Infinity}', "1e999", "[-1e400]"],
)
def test_loads_refuses_what_json_does_not_allow(text: str) -> None:
    with pytest.raises(ValueError):
        loads(text)


def test_loads_refuses_duplicate_keys_only_when_asked() -> None:
    assert loads('{"a": 1, "a": 2}') == {"a": 2}
    with pytest.raises(ValueError, match="duplicate key"):
        loads('{"a": 1, "a": 2}', no_duplicates=True)
    assert loads('{"a": 1, "b": {"a": 2}}', no_duplicates=True) == {"a": 1, "b": {"a": 2}}


def test_lone_surrogates_are_found() -> None:
    assert strict_json.has_lone_surrogate(loads('["\\ud800"]'))
    assert not strict_json.has_lone_surrogate(loads('["\\ud83d\\ude00"]'))


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-02-29T00:00:00Z", False),  # not a leap year
        ("2024-02-29T00:00:00Z", True),
        ("2026-04-31T00:00:00+02:00", False),
        ("2026-12-31T23:59:60.123456789-05:30", True),  # a leap second, nanoseconds
        ("2026-01-01T00:00:00", False),  # no offset
        ("2026-01-01 00:00:00Z", False),
        (20260101, False),
    ],
)
def test_is_timestamp(value: object, expected: bool) -> None:
    assert is_timestamp(value) is expected


def test_safe_integers_and_fits() -> None:
    assert is_safe_integer(SAFE_INTEGER) and is_safe_integer(-SAFE_INTEGER)
    assert not is_safe_integer(SAFE_INTEGER + 1) and not is_safe_integer(True) and not is_safe_integer(1.0)
    assert fits({"a": [1, "x", None, 2.5]})
    assert not fits({"a": [SAFE_INTEGER + 1]})
    nested: object = 0
    for _ in range(COPY_DEPTH):
        nested = [nested]
    assert fits(nested)
    assert not fits([nested])


def test_loads_bounded_refuses_depth_beyond_its_limit() -> None:
    assert loads_bounded("[" * REPLY_DEPTH + "]" * REPLY_DEPTH)
    with pytest.raises(TooDeep):
        loads_bounded("[" * (REPLY_DEPTH + 1) + "]" * (REPLY_DEPTH + 1))
    with pytest.raises(TooDeep):
        loads_bounded("[[[]]]", max_depth=2)
