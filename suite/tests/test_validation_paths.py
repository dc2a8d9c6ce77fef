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
from pathlib import Path

import orjson
import pytest
from corpus_cases import corpus_cases
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from asr_conformance.reference import stream as stream_module
from asr_conformance.reference.checks import validate_bytes, validate_items, validate_path, validate_stream
from asr_conformance.reference.checks.context import RecordContext, StreamIndex
from asr_conformance.reference.checks.envelope import ENVELOPE, _check_capture, check_envelope
from asr_conformance.reference.checks.shapes import check_members
from asr_conformance.reference.diagnostics import Diagnostic, StreamDiagnostics
from asr_conformance.reference.stream import StreamReader

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


@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(chunks=st.lists(json_values.map(lambda v: json.dumps(v).encode()) | st.binary(max_size=40), min_size=1,
                      max_size=4),
       end=st.sampled_from([b"\n", b"\r\n", b" \n"]), last_end=st.booleans())
def test_the_fast_parse_reads_any_line_as_the_strict_decoder_does(chunks: list[bytes], end: bytes, last_end: bool,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Duplicates come from objects spliced together (``{"x": 1}`` and ``{"x": 2}`` make ``{"x": 1,"x": 2}``)."""
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
