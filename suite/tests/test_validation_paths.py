"""The reference validator's fast paths say exactly what its plain paths say.

A whole-stream pass has the reader push each item into the checks
(``validate_path``, ``validate_stream``, ``validate_bytes``) instead of pulling
them from the reader's generator (``validate_items``), and the envelope decides
its common case inline instead of walking the member table.  Each pair must
give the same diagnostics, in the same order, for the corpus, for hostile bytes
and for any record."""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Iterable
from pathlib import Path

import orjson
import pytest
from corpus_cases import corpus_cases
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from asr_conformance.reference import stream as stream_module
from asr_conformance.reference.checks import envelope as envelope_module
from asr_conformance.reference.checks import session_records, tool_records, validate_bytes, validate_items, validate_path, validate_stream
from asr_conformance.reference.checks.context import RecordContext, StreamIndex
from asr_conformance.reference.checks.envelope import ENVELOPE, RECORD_ID, _check_capture, check_envelope
from asr_conformance.reference.checks.shapes import (
    ANY,
    INTEGER,
    OBJECTS,
    STRING,
    FieldTable,
    MemberTable,
    check_members,
    describe,
    is_timestamp_quick,
)
from asr_conformance.reference.diagnostics import Diagnostic, StreamDiagnostics
from asr_conformance.reference.stream import StreamReader
from asr_conformance.vocabulary.strict_json import is_timestamp

STREAMS = sorted({case.stream for case in corpus_cases("validator")})


def _said(outcome: StreamDiagnostics) -> tuple[int, list[Diagnostic]]:
    return outcome.records, list(outcome.diagnostics)


def test_the_corpus_is_judged_alike_pushed_and_pulled() -> None:
    assert len(STREAMS) > 100
    for stream in STREAMS:
        pulled = _said(validate_items(StreamReader().read_path(stream)))
        assert _said(validate_path(stream)) == pulled, stream
        assert _said(validate_stream(io.BytesIO(stream.read_bytes()))) == pulled, stream


@pytest.mark.parametrize("data", [
    b"", b"\n", b"\xef\xbb\xbf", b"\xef\xbb\xbf{}\n", b'{"a":1, "a" :2}\n{"x":"\\" :"}\n', b"[1]\n\xff\n",
    b'{"n":123456789012345678901234,"f":1e400}', b"[" * 300 + b"]" * 300,
], ids=["empty", "blank", "bom-only", "bom", "duplicates", "array-and-bad-utf8", "numbers", "deep"])
def test_hostile_bytes_are_judged_alike_pushed_and_pulled(data: bytes, tmp_path: Path) -> None:
    path = tmp_path / "stream.jsonl"
    path.write_bytes(data)
    pulled = _said(validate_items(StreamReader().read_bytes(data)))
    assert pulled[1], "every one of these streams breaks a rule"
    assert _said(validate_bytes(data)) == pulled
    assert _said(validate_path(path)) == pulled


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=200))
def test_any_bytes_are_judged_alike_pushed_and_pulled(data: bytes) -> None:
    assert _said(validate_bytes(data)) == _said(validate_items(StreamReader().read_bytes(data)))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=6)
    | st.sampled_from(["2026-10-26T14:00:01Z", "2026-02-30T14:00:01Z", "2026-10-26 14:00:01", "state"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["state", "name", "x"]), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from(["ts", "turnId", "capture", "_meta", "other"]), json_values, max_size=5))
def test_the_envelope_inline_check_reports_what_its_table_does(members: dict[str, object]) -> None:
    """With type, seq and id in order, the envelope reports exactly the table walk's diagnostics."""
    record = {"type": "state", "seq": 1, "id": "r1", **members}
    inline: list[Diagnostic] = []
    check_envelope(RecordContext(record, 2, 1, inline), StreamIndex())
    walked: list[Diagnostic] = []
    context = RecordContext(record, 2, 1, walked)
    check_members(context, record, ENVELOPE)
    _check_capture(context)
    assert inline == walked


def test_the_envelope_check_reports_each_kind_of_mismatch() -> None:
    """The inline check lets nothing through: each member of the wrong type is reported (the test above
    compares against the table walk; this one shows there is something to compare)."""
    record = {"type": "state", "seq": 1, "id": "r1", "ts": "yesterday", "turnId": 3, "capture": [], "_meta": "m"}
    found: list[Diagnostic] = []
    check_envelope(RecordContext(record, 2, 1, found), StreamIndex())
    assert sorted((d.rule, d.pointer) for d in found) == [
        ("X-SHAPE", "/_meta"), ("X-SHAPE", "/capture"), ("X-SHAPE", "/turnId"), ("X-TS", "/ts")]
    assert json.dumps([d.message for d in found])


class _LinesOnly(io.BytesIO):
    """Standard input that may be read a line at a time but not whole."""

    def read(self, size: int | None = -1) -> bytes:
        raise AssertionError("standard input was read whole")


def test_asr_validate_reads_standard_input_a_line_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Memory holds one record, not the stream: ``asr-validate -`` never reads standard input whole."""
    from asr_conformance.reference import cli

    stream = next(s.read_bytes() for s in STREAMS if validate_path(s).diagnostics)
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(_LinesOnly(stream)))
    out = io.StringIO()
    status = cli.main(["--json", "-"], out=out)
    expected = validate_bytes(stream)
    assert expected.diagnostics and status == (0 if expected.valid else 1)
    assert [json.loads(line)["rule"] for line in out.getvalue().splitlines()] == [d.rule for d in expected.diagnostics]


class _NoFastParse:
    """Stands in for orjson in the reader: every line is refused, so each goes through the blank check
    and the strict decoder, the reader's plain path."""

    JSONDecodeError = orjson.JSONDecodeError

    @staticmethod
    def loads(_data: bytes) -> object:
        raise orjson.JSONDecodeError("refused", "", 0)


def _read_both(data: bytes, monkeypatch: pytest.MonkeyPatch) -> tuple[list[object], list[object]]:
    fast = list(StreamReader().read_bytes(data))
    with monkeypatch.context() as patched:
        patched.setattr(stream_module, "orjson", _NoFastParse)
        strict = list(StreamReader().read_bytes(data))
    return fast, strict


def test_the_fast_parse_reads_the_corpus_as_the_strict_decoder_does(monkeypatch: pytest.MonkeyPatch) -> None:
    for stream in STREAMS:
        fast, strict = _read_both(stream.read_bytes(), monkeypatch)
        assert fast == strict, stream


@pytest.mark.parametrize("data", [
    b"{}\r\n", b" \t\r\n{}\n", b'{"a":1}\n\n', b'{"a":1, "a" :2}\n', b'{"a":1,"b":{"a":2,"a"\n', b'{"x":"\\" :"}',
    b'{"n":9007199254740993}\n', b'{"f":1e16}\n', b'{"s":"\\ud800"}\n', b'{"v":NaN}\n', b"[" * 300 + b"]" * 300,
], ids=["crlf", "blank-first", "blank-last", "duplicate", "cut-at-lf", "escaped-quote-colon", "unsafe-integer",
        "large-float", "lone-surrogate", "nan", "deep"])
def test_the_fast_parse_reads_hostile_lines_as_the_strict_decoder_does(
        data: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    fast, strict = _read_both(data, monkeypatch)
    assert fast == strict


def _compact(value: object) -> bytes:
    """A value as a compact writer puts it (orjson's own form for most values: the reader's first path)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass")


@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(chunks=st.lists(json_values.map(lambda v: json.dumps(v).encode()) | json_values.map(_compact)
                      | st.binary(max_size=40), min_size=1, max_size=4),
       end=st.sampled_from([b"\n", b"\r\n", b" \n"]), last_end=st.booleans())
def test_the_fast_parse_reads_any_line_as_the_strict_decoder_does(chunks: list[bytes], end: bytes, last_end: bool,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Duplicates come from objects spliced together (``{"x": 1}`` and ``{"x": 2}`` make ``{"x": 1,"x": 2}``,
    and compact ones ``{"x":1,"x":2}``)."""
    spliced = [line[:-1] + b"," + chunks[0][1:] if line[:1] == chunks[0][:1] == b"{" and line[-1:] == b"}"
               and len(chunks[0]) > 2 else line for line in chunks]
    data = end.join(spliced) + (end if last_end else b"")
    fast, strict = _read_both(data, monkeypatch)
    assert fast == strict


def test_without_its_proof_the_fast_parse_loses_a_duplicate_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """orjson keeps the last of two equal keys silently: were the raw line's key ends not counted against the
    parsed keys, the duplicate would go unreported, and the comparisons above would fail."""

    class AgreesWithTheTree:
        @staticmethod
        def findall(raw: bytes) -> list[int]:
            return [0] * stream_module._shape(orjson.loads(raw))[0]

    data = b'{"a":1, "a" :2}\n'
    monkeypatch.setattr(stream_module, "_KEY_END", AgreesWithTheTree())
    fast, strict = _read_both(data, monkeypatch)
    assert [type(item).__name__ for item in fast] == ["Record"]
    assert [getattr(item, "rule", None) for item in strict] == ["X-DUPKEY", None]


# --- lines in orjson's own form ---------------------------------------------------------------------------------

#: Lines the comparison with orjson's writing cannot decide, each in compact form: every one must take the proof or
#: the strict decoder, and be read as the strict decoder alone reads it.
UNDECIDED = {
    "duplicate-key": b'{"a":1,"a":2}',
    "nested-duplicate": b'{"a":{"b":1,"b":1}}',
    "duplicate-same-value": b'{"a":1,"a":1}',
    "nan": b'{"v":NaN}',
    "infinity": b'{"v":-Infinity}',
    "float-overflow": b'{"v":1e400}',
    "lone-high-surrogate": b'{"s":"\\ud800"}',
    "lone-low-surrogate-key": b'{"\\udc00":1}',
    "depth-at-limit": b'{"a":' + b"[" * 255 + b"]" * 255 + b"}",
    "depth-past-limit": b'{"a":' + b"[" * 256 + b"]" * 256 + b"}",
    "depth-far-past": b"[" * 2000 + b"]" * 2000,
    "unsafe-integer": b'{"n":9007199254740992}',
    "unsafe-negative": b'{"n":-9007199254740992}',
    "past-64-bits": b'{"n":18446744073709551616}',
    "past-64-bits-negative": b'{"n":-9223372036854775809}',
    "huge-integer": b'{"n":' + b"9" * 400 + b"}",
    "huge-integer-in-array": b'[1,' + b"1" * 30 + b"]",
}


def _paths_taken(data: bytes, monkeypatch: pytest.MonkeyPatch) -> tuple[list[object], int]:
    """The reader's items and how many times it went past the comparison (to the proof or the strict decoder)."""
    beyond = 0
    shape, strictly = stream_module._shape, StreamReader._read_strictly

    def counted_shape(value: object) -> tuple[int, int, bool]:
        nonlocal beyond
        beyond += 1
        return shape(value)

    def counted_strictly(self: StreamReader, number: int, body: bytes) -> list[object]:
        nonlocal beyond
        beyond += 1
        return strictly(self, number, body)  # type: ignore[return-value]

    with monkeypatch.context() as patched:
        patched.setattr(stream_module, "_shape", counted_shape)
        patched.setattr(StreamReader, "_read_strictly", counted_strictly)
        items = list(StreamReader().read_bytes(data))
    return items, beyond


@pytest.mark.parametrize("line", list(UNDECIDED.values()), ids=list(UNDECIDED))
@pytest.mark.parametrize("end", [b"\n", b""], ids=["lf", "last-line"])
def test_the_comparison_leaves_what_it_cannot_decide_to_the_proof(
        line: bytes, end: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    assert StreamReader().canonical_path, "orjson refuses to write past the suite's depth limit"
    items, beyond = _paths_taken(line + end, monkeypatch)
    assert beyond >= 1
    fast, strict = _read_both(line + end, monkeypatch)
    assert fast == strict == items


@pytest.mark.parametrize("line", [
    b'{"type":"state","seq":2,"id":"r2","ts":"2026-10-26T14:00:02.002Z","state":"running"}',
    b'{"s":"caf\xc3\xa9 \\\" : \\n \xf0\x9f\x98\x80","n":[9007199254740991,-9007199254740991,1.5,null,true]}',
    b'{"a":' + b"[" * 253 + b"]" * 253 + b"}",
], ids=["record", "strings-and-numbers", "deep-within-writer"])
def test_a_line_in_orjsons_own_form_needs_no_proof(line: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    """The other side: the comparison does decide the common line, so the tests above compare two paths."""
    items, beyond = _paths_taken(line + b"\n", monkeypatch)
    assert beyond == 0
    assert items == _read_both(line + b"\n", monkeypatch)[1]


class _WriterWithoutChecks:
    """orjson as the reader uses it, but writing whatever it parsed: any depth, any integer."""

    JSONDecodeError = orjson.JSONDecodeError
    JSONEncodeError = orjson.JSONEncodeError
    OPT_STRICT_INTEGER = orjson.OPT_STRICT_INTEGER
    loads = staticmethod(orjson.loads)

    @staticmethod
    def dumps(value: object, option: int = 0) -> bytes:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


@pytest.mark.parametrize(("line", "rule"), [
    (b'{"n":9007199254740992}\n', "ASR-032"), (b'{"a":' + b"[" * 300 + b"]" * 300 + b"}\n", "X-DEPTH")])
def test_without_the_writers_refusals_the_comparison_loses_a_problem(
        line: bytes, rule: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """orjson's writer refuses unsafe integers (OPT_STRICT_INTEGER) and deep nesting; the reader takes its
    depth limit from a probe of the writer, not on trust. A writer that refused neither would let a line
    through the comparison unexamined: the probe turns the comparison off for it, and forced on, the
    problem goes unreported."""
    said = _said(validate_bytes(line))
    assert rule in {d.rule for d in said[1]}
    monkeypatch.setattr(stream_module, "orjson", _WriterWithoutChecks)
    stream_module._writer_refuses_depth.cache_clear()
    try:
        reader = StreamReader()
        if rule == "X-DEPTH":
            assert not reader.canonical_path
            assert _said(validate_bytes(line, reader)) == said
        reader.canonical_path = True
        assert rule not in {d.rule for d in validate_bytes(line, reader).diagnostics}
    finally:
        stream_module._writer_refuses_depth.cache_clear()


def test_the_depth_probe_asks_of_arrays_and_of_objects(monkeypatch: pytest.MonkeyPatch) -> None:
    """A writer that refused deep arrays but wrote deep objects would not bound a line's depth."""

    class ArraysOnly(_WriterWithoutChecks):
        @staticmethod
        def dumps(value: object, option: int = 0) -> bytes:
            if type(value) is list:
                raise orjson.JSONEncodeError("nested too deeply")
            return _WriterWithoutChecks.dumps(value)

    assert StreamReader().canonical_path
    monkeypatch.setattr(stream_module, "orjson", ArraysOnly)
    stream_module._writer_refuses_depth.cache_clear()
    try:
        assert not StreamReader().canonical_path
    finally:
        stream_module._writer_refuses_depth.cache_clear()


def test_without_the_byte_comparison_a_duplicate_key_is_lost(monkeypatch: pytest.MonkeyPatch) -> None:
    """Were any line orjson could write back taken as it stands, the duplicate would go unreported."""
    data = b'{"a":1,"a":2}\n'
    assert [item.rule for item in StreamReader().read_bytes(data) if isinstance(item, stream_module.LineProblem)] \
        == ["X-DUPKEY"]

    class Trusting(StreamReader):
        def _read_line(self, number: int, raw: bytes) -> list[stream_module.Record | stream_module.LineProblem]:
            return [stream_module.Record(number, orjson.loads(raw))]

    assert all(isinstance(item, stream_module.Record) for item in Trusting().read_bytes(data))


def test_a_smaller_depth_limit_turns_the_comparison_off() -> None:
    """orjson writes 254 levels: a reader allowing fewer cannot learn the depth from the comparison."""
    reader = StreamReader(max_depth=10)
    assert not reader.canonical_path
    line = b'{"a":' + b"[" * 10 + b"]" * 10 + b"}\n"
    assert [item.rule for item in reader.read_bytes(line) if isinstance(item, stream_module.LineProblem)] \
        == ["X-DEPTH"]


def test_a_stream_in_another_form_stops_being_compared(monkeypatch: pytest.MonkeyPatch) -> None:
    """A spaced writer's lines never match orjson's: after a run of misses the pass stops writing each value
    back (only speed changes); a line in orjson's form resets the run."""
    dumped = 0
    dumps = orjson.dumps

    class Counting(_WriterWithoutChecks):
        @staticmethod
        def dumps(value: object, option: int = 0) -> bytes:
            nonlocal dumped
            dumped += 1
            return dumps(value, option=option)

    spaced = b"".join(b'{"seq": %d}\n' % n for n in range(200))
    monkeypatch.setattr(stream_module, "orjson", Counting)
    items = list(StreamReader().read_bytes(spaced))
    assert dumped == stream_module._CANONICAL_GIVE_UP
    assert len(items) == 200
    dumped = 0
    mixed = b"".join(b'{"seq": %d}\n{"seq":%d}\n' % (n, n) for n in range(100))
    list(StreamReader().read_bytes(mixed))
    assert dumped == 200


# --- member tables and timestamps, prepared once -----------------------------------------------------------------

def _walked_as_written(obj: dict[str, object], table: FieldTable, pointer: str = "") -> list[Diagnostic]:
    """check_members' plain form: each entry read as written, ``Kind.accepts`` asked of every member."""
    found: list[Diagnostic] = []
    ctx = RecordContext(obj, 3, 2, found)
    walk: Iterable[tuple[str, object]] = (
        ((name, obj[name]) for name in table if name in obj) if len(table) < len(obj) else obj.items())
    for name, value in walk:
        if name not in table:
            continue
        spec = table[name]
        kind, rule = spec if isinstance(spec, tuple) else (spec, "X-SHAPE")
        if not kind.accepts(value):
            ctx.error(rule, f"{name} must be {kind.words}, not {describe(value)}", f"{pointer}/{name}")
    return found


TABLES = {name: table for module in (envelope_module, session_records, tool_records)
          for name, table in vars(module).items() if isinstance(table, MemberTable)}


@pytest.mark.parametrize("value", [1.5, "s", True, None, [1], [{}], ["s"], {}, 2**60], ids=repr)
def test_every_prepared_table_reports_a_value_of_each_type_as_the_table_as_written_does(value: object) -> None:
    """Each table with every member holding the value, alone and beside two members no table has."""
    assert len(TABLES) > 25
    for table in TABLES.values():
        for obj in ({name: value for name in table}, {"other": 1, **{name: value for name in table}, "more": 2}):
            found: list[Diagnostic] = []
            check_members(RecordContext(obj, 3, 2, found), obj, table, "/at")
            assert found == _walked_as_written(obj, table, "/at")


@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_prepared_table_reports_what_the_table_as_written_does(data: st.DataObject) -> None:
    """Every MemberTable of the checks, against objects holding its members (and others) with any values."""
    name = data.draw(st.sampled_from(sorted(TABLES)))
    table = TABLES[name]
    members = st.sampled_from(sorted(table) + ["other", "more"])
    obj = data.draw(st.dictionaries(members, json_values | st.integers(), max_size=len(table) + 2))
    found: list[Diagnostic] = []
    check_members(RecordContext(obj, 3, 2, found), obj, table, "/at")
    assert found == _walked_as_written(obj, table, "/at")
    plain: list[Diagnostic] = []
    check_members(RecordContext(obj, 3, 2, plain), obj, dict(table), "/at")
    assert plain == found


def test_a_prepared_table_reports_each_mismatch_in_walk_order() -> None:
    """The comparison above has something to compare: mismatches are found, in the table's order when the
    table is shorter, in the object's otherwise."""
    table = MemberTable({"a": STRING, "b": (INTEGER, "ASR-001"), "c": ANY, "d": OBJECTS})
    short = {"d": [1], "b": True, "a": 1}
    long = {**short, "x": 1, "y": 2}
    for obj, order in ((short, ["/d", "/b", "/a"]), (long, ["/a", "/b", "/d"])):
        found: list[Diagnostic] = []
        check_members(RecordContext(obj, 3, 2, found), obj, table)
        assert [d.pointer for d in found] == order
        assert found == _walked_as_written(obj, table)
    assert [d.rule for d in found] == ["X-SHAPE", "ASR-001", "X-SHAPE"]


#: Each part of a timestamp: forms the pattern accepts (digits of other scripts among them), then forms it refuses.
_PARTS: list[tuple[list[str], list[str]]] = [
    (["2026", "2024", "1900", "\u0662\u0660\u0662\u0666", "\uff12\uff10\uff12\uff14"], ["202", "20266", "2O26"]),
    (["-"], ["/", ""]),
    (["01", "02", "04", "12", "1\u0660"], ["00", "13", "\u06601", "1"]),
    (["-"], ["/"]),
    (["01", "09", "28", "29", "30", "31", "2\uff11"], ["00", "32", "3\u0660", "1"]),
    (["T", "t"], [" ", "_"]),
    (["00", "09", "19", "23", "1\u0663"], ["24", "29", "3", "\u06631"]),
    ([":"], ["."]),
    (["00", "59", "0\u0665"], ["60", "6"]),
    ([":"], [""]),
    (["00", "59", "60"], ["61", "5", "6\u0660"]),
    (["", ".1", ".123456789", ".\u0661"], [".", ",1"]),
    (["Z", "z", "+01:00", "-23:59", "+00:00"], ["", "+24:00", "+0100", "+01:60", "Zz"]),
]


@st.composite
def timestamp_like(draw: st.DrawFn) -> str:
    """A timestamp with no part, or one part, in a form the pattern refuses (so that each refusal is tried)."""
    broken = draw(st.integers(-1, len(_PARTS) - 1))
    return "".join(draw(st.sampled_from(refused if index == broken else accepted))
                   for index, (accepted, refused) in enumerate(_PARTS))


@settings(max_examples=300)
@given(st.one_of(timestamp_like(), timestamp_like().map(lambda ts: ts[:-1]), st.text(max_size=30),
                 st.integers(), st.none()))
def test_the_quick_timestamp_check_agrees_with_the_strict_one(value: object) -> None:
    """Leap days, days past a month's end, digits of other scripts, cut and odd forms, non-strings."""
    assert is_timestamp_quick(value) == is_timestamp(value)
    assert is_timestamp_quick(value) == is_timestamp(value), "asked again, from the prefixes judged"


@pytest.mark.parametrize(("value", "valid"), [
    ("2024-02-29T10:00:00Z", True), ("2023-02-29T10:00:00Z", False), ("2023-02-29T10:00:00Z", False),
    ("2026-04-31T10:00:00Z", False), ("2026-10-26T14:00:01.001Z", True), ("2026-10-26T14:00:01.001", False),
    ("2026-10-26T14:", False), ("2026-10-26T14:61:00Z", False), ("2026-10-26T24:00:00Z", False),
    ("2026-10-26T1\u0663:00:00Z", True),
])
def test_the_quick_timestamp_check_judges_each_case(value: str, valid: bool) -> None:
    assert is_timestamp_quick(value) is valid


def test_every_letter_or_digit_may_stand_in_a_record_id() -> None:
    """The envelope takes an ID of letters and digits (``str.isalnum``) without the ID pattern: that holds only
    if every such character of every script is one the pattern allows."""
    refused = [character for character in map(chr, range(sys.maxunicode + 1))
               if character.isalnum() and not RECORD_ID.fullmatch(character)]
    assert refused == []
    assert not RECORD_ID.fullmatch("r\u00a01") and not "r\u00a01".isalnum(), "the pattern refuses a no-break space"


@pytest.mark.parametrize("data", [
    b'{"a":1}\n{"a": 1}\n\n{"a":1,"a":2}\n{"n":9007199254740992}\n[1]\n\xff\n{"a":1}',
    b'\xef\xbb\xbf{"type":"session"}\n{"b":2}\r\n',
    b"",
], ids=["mixed", "bom-and-crlf", "empty"])
def test_values_pushed_alone_are_the_records_read_lines_yields(data: bytes) -> None:
    """push_values hands a line taken on sight as its number and value, and everything else as items: made
    into records in place, that is what read_lines yields, in its order, and the sight path was taken."""
    pushed: list[object] = []
    alone: list[int] = []

    def take_value(number: int, value: object) -> None:
        alone.append(number)
        pushed.append(stream_module.Record(number, value))

    StreamReader().push_values(io.BytesIO(data), take_value, pushed.append)
    assert pushed == list(StreamReader().read_bytes(data))
    assert alone == ([1, 6, 8] if data.startswith(b'{"a":1}') else [1] if data else [])
