"""Byte-level damage to a serialized stream.

Each damage is ``(draw, data) -> bytes``.  Some make a stream invalid under
rules the pages state or the format plainly requires (a cut line, invalid
UTF-8, NaN, a NUL byte); others touch points the pages leave open (a BOM,
CRLF, blank lines, duplicate keys, lone surrogates, huge integers, deep
nesting).  Either way an implementation must answer with a verdict: never a
crash, never a hang.  Which verdict is required is decided by the reference
(see ``DEFINITE_RULES``).
"""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import strategies as st

Damage = Callable[[st.DrawFn, bytes], bytes]

#: When the reference rejects a damaged stream under one of these rules, a
#: conforming implementation must reject it too; otherwise either verdict is allowed.
DEFINITE_RULES = frozenset({"X-UTF8", "X-JSON", "X-RECORD", "ASR-003"})

DAMAGES: dict[str, Damage] = {}

#: What each damage kind's verdict rests on (cases/ASSUMPTIONS.md).  A kind resting on an ``open``
#: assumption never yields a definite rule with the reference, so any verdict is reported; the audit
#: test (suite/tests/test_scoring_policy.py) checks this and lists the kinds beside the cases.
ASSUMPTIONS: dict[str, tuple[str, ...]] = {
    "truncated": ("A-FORMAT",), "invalid-utf8": ("A-FORMAT",), "nul-byte": ("A-FORMAT",),
    "nan-or-infinity": ("A-FORMAT",), "lone-surrogate": ("A-SURROGATE",), "huge-integer": ("A-NUMBERS",),
    "integer-over-4300-digits": ("A-NUMBERS",), "duplicate-key": ("A-DUPKEY",), "deep-nesting": ("A-DEPTH",),
    "long-line": (), "bom": ("A-BOM",), "crlf": ("A-CRLF",), "blank-lines": ("A-BLANK",),
}


def damage(name: str) -> Callable[[Damage], Damage]:
    def register(function: Damage) -> Damage:
        DAMAGES[name] = function
        return function

    return register


def _line_starts(data: bytes) -> list[int]:
    starts = [0]
    starts.extend(i + 1 for i, byte in enumerate(data) if byte == 0x0A and i + 1 < len(data))
    return starts


def _insert_member(draw: st.DrawFn, data: bytes, member: bytes) -> bytes:
    """Insert ``member,`` right after the opening brace of one line's object."""
    starts = [s for s in _line_starts(data) if data[s : s + 1] == b"{"]
    if not starts:
        return data
    at = draw(st.sampled_from(starts)) + 1
    return data[:at] + member + b"," + data[at:]


@damage("truncated")
def truncated(draw: st.DrawFn, data: bytes) -> bytes:
    """Cut the stream at any byte."""
    return data[: draw(st.integers(0, max(len(data) - 1, 0)))]


@damage("invalid-utf8")
def invalid_utf8(draw: st.DrawFn, data: bytes) -> bytes:
    """Put a byte sequence that is not UTF-8 anywhere."""
    bad = draw(st.sampled_from([b"\xff", b"\xc0\xaf", b"\xed\xa0\x80", b"\xe2\x82", b"\x80"]))
    at = draw(st.integers(0, len(data)))
    return data[:at] + bad + data[at:]


@damage("nul-byte")
def nul_byte(draw: st.DrawFn, data: bytes) -> bytes:
    """Put a raw NUL byte inside a line."""
    starts = _line_starts(data)
    at = draw(st.sampled_from(starts)) + 1
    return data[:at] + b"\x00" + data[at:]


@damage("nan-or-infinity")
def nan_or_infinity(draw: st.DrawFn, data: bytes) -> bytes:
    """A member whose value is NaN or Infinity, which JSON does not have."""
    return _insert_member(draw, data, b'"_n":' + draw(st.sampled_from([b"NaN", b"Infinity", b"-Infinity"])))


@damage("lone-surrogate")
def lone_surrogate(draw: st.DrawFn, data: bytes) -> bytes:
    """A string holding an unpaired surrogate escape."""
    return _insert_member(draw, data, b'"_s":"x' + draw(st.sampled_from([b"\\ud800", b"\\udfff"])) + b'"')


@damage("huge-integer")
def huge_integer(draw: st.DrawFn, data: bytes) -> bytes:
    """An integer far outside the safe range."""
    digits = str(draw(st.integers(2**53, 10**40))).encode()
    return _insert_member(draw, data, b'"_n":' + draw(st.sampled_from([b"", b"-"])) + digits)


@damage("integer-over-4300-digits")
def integer_over_4300_digits(draw: st.DrawFn, data: bytes) -> bytes:
    """An integer literal longer than the 4300 digits Python's int() accepts by default: a validator
    that parses it naively crashes instead of answering."""
    digits = draw(st.sampled_from([4301, 5000, 100_000]))
    literal = draw(st.sampled_from([b"1", b"9"])) + b"0" * (digits - 1)
    return _insert_member(draw, data, b'"_n":' + draw(st.sampled_from([b"", b"-"])) + literal)


@damage("duplicate-key")
def duplicate_key(draw: st.DrawFn, data: bytes) -> bytes:
    """Write one key twice in an object."""
    key = draw(st.sampled_from([b'"_k":1,"_k":2', b'"_k":{"a":1,"a":1}']))
    return _insert_member(draw, data, key)


@damage("deep-nesting")
def deep_nesting(draw: st.DrawFn, data: bytes) -> bytes:
    """Arrays nested hundreds to tens of thousands of levels deep."""
    depth = draw(st.sampled_from([300, 1100, 20_000]))
    return _insert_member(draw, data, b'"_d":' + b"[" * depth + b"]" * depth)


@damage("long-line")
def long_line(draw: st.DrawFn, data: bytes) -> bytes:
    """A member holding a string of a megabyte or more."""
    size = draw(st.sampled_from([1 << 20, 3 << 20]))
    return _insert_member(draw, data, b'"_l":"' + b"a" * size + b'"')


@damage("bom")
def bom(draw: st.DrawFn, data: bytes) -> bytes:
    """A UTF-8 byte order mark before the header."""
    return b"\xef\xbb\xbf" + data


@damage("crlf")
def crlf(draw: st.DrawFn, data: bytes) -> bytes:
    """CRLF line ends."""
    return data.replace(b"\n", b"\r\n")


@damage("blank-lines")
def blank_lines(draw: st.DrawFn, data: bytes) -> bytes:
    """An empty line between records or at the end."""
    starts = _line_starts(data) + [len(data)]
    at = draw(st.sampled_from(starts[1:]))
    return data[:at] + draw(st.sampled_from([b"\n", b"  \n", b"\r\n"])) + data[at:]
