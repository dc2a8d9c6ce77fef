"""The strict reader: every problem is reported with its line, none raises,
and the fast path never misses what the strict path sees."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asr_conformance.reference.stream import MAX_DEPTH, MAX_SAFE_INTEGER, LineProblem, Record, StreamReader


def read(data: bytes) -> list[Record | LineProblem]:
    return list(StreamReader().read_bytes(data))


def problems(data: bytes) -> list[tuple[int, str]]:
    return [(item.line, item.rule) for item in read(data) if isinstance(item, LineProblem)]


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"", [(1, "ASR-003")]),
        (b'{"a":1}\n\n{"b":2}\n', [(2, "X-BLANK")]),
        (b'{"a":1}\n \r\n', [(2, "X-BLANK")]),
        (b'\xef\xbb\xbf{"a":1}\n', [(1, "X-BOM")]),
        (b'{"a":"\xff"}\n', [(1, "X-UTF8")]),
        (b'{"a":"\xc0\xaf"}\n', [(1, "X-UTF8")]),
        (b'{"a":"\xed\xa0\x80"}\n', [(1, "X-UTF8")]),
        (b'{"a":NaN}\n', [(1, "X-JSON")]),
        (b'{"a":-Infinity}\n', [(1, "X-JSON")]),
        (b'{"a":1}{"b":2}\n', [(1, "X-JSON")]),
        (b'{"a":"x\x01"}\n', [(1, "X-JSON")]),
        (b'{"a":1,"a":2}\n', [(1, "X-DUPKEY")]),
        (b'{"a":{"b":1,"b":1}}\n', [(1, "X-DUPKEY")]),
        (b'{"a":"\\ud800"}\n', [(1, "X-SURROGATE")]),
        (b'{"\\udc00":1}\n', [(1, "X-SURROGATE")]),
        (b'{"a":"\\ud83d\\ude00"}\n', []),
        (b'{"a":"x\\":y","b":1}\n', []),
        (b'{"a" : 1, "b":"c :"}\n', []),
        (b'{"a":1}\r\n', []),
        (b'{"a":1}', []),
        (b'{"a":"trunc', [(1, "X-JSON")]),
    ],
)
def test_reports_each_problem_on_its_line(data: bytes, expected: list[tuple[int, str]]) -> None:
    assert problems(data) == expected


def test_blank_line_does_not_hide_later_records() -> None:
    items = read(b'{"a":1}\n\n{"b":2}\n')
    assert [i.line for i in items if isinstance(i, Record)] == [1, 3]


@pytest.mark.parametrize(
    ("literal", "unsafe"),
    [
        (str(MAX_SAFE_INTEGER), False),
        (str(-MAX_SAFE_INTEGER), False),
        (str(MAX_SAFE_INTEGER + 1), True),
        (str(-MAX_SAFE_INTEGER - 1), True),
        ("18446744073709551616", True),
        ("1" * 40, True),
        ("9007199254740993.0", False),
        ("1e300", False),
    ],
)
def test_integer_range_follows_the_literal(literal: str, unsafe: bool) -> None:
    (record,) = read(f'{{"n":{literal},"m":[{literal}]}}\n'.encode())
    assert isinstance(record, Record)
    assert record.unsafe_integers == (["/m/0", "/n"] if unsafe else [])


def test_float_overflow_is_not_json() -> None:
    assert problems(b'{"n":1e400}\n') == [(1, "X-JSON")]


@pytest.mark.parametrize("depth", [MAX_DEPTH - 1, MAX_DEPTH])
def test_nesting_at_the_limit_is_read(depth: int) -> None:
    nested = "[" * (depth - 1) + "]" * (depth - 1)
    assert problems(f'{{"a":{nested}}}\n'.encode()) == []


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 2000, 100_000])
def test_nesting_past_the_limit_is_reported_without_crashing(depth: int) -> None:
    nested = "[" * (depth - 1) + "]" * (depth - 1)
    assert problems(f'{{"a":{nested}}}\n'.encode()) == [(1, "X-DEPTH")]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300)
@given(value=st.dictionaries(st.text(max_size=5), json_values, max_size=5), spaced=st.booleans())
def test_fast_path_agrees_with_strict_decoding(value: dict, spaced: bool) -> None:
    """Whatever orjson accepts is read exactly as the strict stdlib decoder reads it."""
    separators = (", ", ": ") if spaced else (",", ":")
    line = json.dumps(value, separators=separators, ensure_ascii=False).encode()
    (record,) = read(line + b"\n")
    assert isinstance(record, Record)
    assert record.value == json.loads(line)
    expected_unsafe = any(
        isinstance(v, int) and not isinstance(v, bool) and abs(v) > MAX_SAFE_INTEGER for v in _leaves(value)
    )
    assert bool(record.unsafe_integers) == expected_unsafe


@settings(max_examples=200)
@given(value=st.dictionaries(st.text(max_size=3), json_values, min_size=1, max_size=4), data=st.data(),
       spaced=st.booleans())
def test_duplicate_keys_are_always_found(value: dict, data: st.DataObject, spaced: bool) -> None:
    """Writing any key of any object twice is reported, whatever the spacing (compact lines are the
    ones the reader compares with orjson's own writing)."""
    key = data.draw(st.sampled_from(sorted(value)))
    if spaced:
        line = "{" + json.dumps(value, ensure_ascii=False)[1:-1] + ", " + json.dumps(key) + " : null}"
    else:
        body = json.dumps(value, ensure_ascii=False, separators=(",", ":"))[1:-1]
        line = "{" + body + "," + json.dumps(key, ensure_ascii=False) + ":null}"
    assert (1, "X-DUPKEY") in problems(line.encode() + b"\n")


def _leaves(value: object):
    if isinstance(value, dict):
        for child in value.values():
            yield from _leaves(child)
    elif isinstance(value, list):
        for child in value:
            yield from _leaves(child)
    else:
        yield value
