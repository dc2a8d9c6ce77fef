"""A produced stream is parsed once and its records shared by every producer check; an input's witness
facts are read once and reused by every source edit; fidelity is judged on valid streams only."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import producer_runs as runs
import pytest
from certifying import Certification
from hypothesis import given
from hypothesis import strategies as st

from asr_conformance.harness.judging import produced as parsing
from asr_conformance.harness.judging import readings as reading
from asr_conformance.harness.judging.fidelity import (
    NOT_VALID,
    judge_fidelity,
    judge_mutation,
    mutations_of,
    stream_records,
)
from asr_conformance.harness.judging.produced import ProducedStream, produced
from asr_conformance.harness.judging.producer import differences, output_problems
from asr_conformance.harness.judging.readings import Readings
from asr_conformance.packs.registry import installed
from asr_conformance.packs.selection import sniffed
from asr_conformance.reference.checks import validate_bytes
from asr_conformance.reference.claude_code_converter import convert as example_convert

ROOT = Path(__file__).resolve().parents[2]
CONVERTER = ROOT / "examples" / "claude-code-converter" / "asr-from-claude-code"
INVALID = ROOT / "examples" / "misbehaving" / "emits-invalid-stream"
SAMPLES = ROOT / "examples" / "claude-code-converter" / "samples"
#: A sample with tool results: the invalid converter gives each an exitCode past the range (ASR-260).
WITH_TOOLS = SAMPLES / "fix-parser-test.jsonl"


def run(converter: Path, data: bytes, tmp_path: Path) -> bytes:
    """The stream ``converter`` writes for ``data``: the example converter's in this process (the package's
    conversion, which its script runs: generators/test_native_claude_code.py compares the two), another program's
    from a process of its own."""
    if converter == CONVERTER:
        return example_convert(data)
    source = tmp_path / "input.jsonl"
    source.write_bytes(data)
    done = subprocess.run([sys.executable, str(converter), str(source)], capture_output=True, timeout=60, check=True)
    return done.stdout


# --- one parser, one line rule ---------------------------------------------------------


def test_only_lf_ends_a_record() -> None:
    """U+2028, U+0085 and a lone CR inside a string stay in their record; CR before LF is whitespace."""
    record = {"type": "session", "text": "a\u2028b\u0085c\rd"}
    line = json.dumps(record, ensure_ascii=False).encode()
    parsed = ProducedStream.parse(line + b"\r\n" + line + b"\n")
    assert parsed.records == [record, record]
    assert parsed.lines == (line, line)


def test_problems_are_data_and_unreadable_lines_keep_their_text() -> None:
    parsed = ProducedStream.parse(b'{"a": 1}\n\n[1]\nnot json')
    assert [(i.line, i.rule) for i in parsed.items if not hasattr(i, "value")] == [(2, "X-BLANK"), (4, "X-JSON")]
    assert parsed.value_at(3) == [1] and parsed.value_at(4) == "not json"
    assert parsed.records is None  # an array and a line that is not JSON: not a stream of objects
    assert ProducedStream.parse(b'{"a": 1}\n\n{"b": 2}\n').records == [{"a": 1}, {"b": 2}]
    assert ProducedStream.parse(b"").records is None


LINES = st.sampled_from([b'{"type":"session","seq":0}', b"", b"\r", b"[1]", b"nope", b'{"a":1,"a":2}',
                         b'{"x":NaN}', b"\xff", b'{"s":"\xe2\x80\xa8"}', b'{"n":9007199254740993}', b"\xef\xbb\xbf{}"])


@given(st.lists(LINES, max_size=6), st.booleans())
def test_the_parsed_stream_validates_as_the_reference_validator_does(lines: list[bytes], final_lf: bool) -> None:
    data = b"\n".join(lines) + (b"\n" if final_lf and lines else b"")
    assert produced(data).outcome.diagnostics == validate_bytes(data).diagnostics


def test_every_producer_check_shares_one_parse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = WITH_TOOLS.read_bytes()
    stream = run(CONVERTER, data, tmp_path)
    parses: list[bytes] = []
    real = ProducedStream.parse.__func__  # type: ignore[attr-defined]

    def counting(cls: type[ProducedStream], given: bytes) -> ProducedStream:
        parses.append(given)
        return real(cls, given)

    monkeypatch.setattr(ProducedStream, "parse", classmethod(counting))
    before = parsing.PARSES.parsed
    assert output_problems(stream) == []
    assert differences(stream, bytes(stream)) == []
    assert judge_fidelity(data, stream).findings == []
    assert stream_records(stream) is produced(stream).records
    # Parsed at most once (not at all when an earlier test of this process left the parse kept), and
    # only through the kept parses: a check parsing past them would add a parse they did not count.
    assert parses in ([], [stream]) and len(parses) == parsing.PARSES.parsed - before


def test_parses_are_kept_within_a_size_bound() -> None:
    """A parse takes several times its stream's bytes: a stream past the bound is parsed, not kept."""
    kept = parsing.Parses(kept_bytes=100)
    small, large = b'{"a": 1}\n', b'{"a": "' + b"x" * 200 + b'"}\n'
    assert kept.get(small) is kept.get(bytes(small))
    assert kept.get(large) is not kept.get(large)
    assert small in kept  # the large one did not evict it
    others = [b'{"n": %d}\n' % n for n in range(parsing.KEPT)]
    for other in others:
        kept.get(other)
    assert kept.get(others[-1]) is kept.get(others[-1]) and small not in kept
    assert kept.parsed == 3 + len(others)


# --- witness facts read once per input ---------------------------------------------------


def test_the_unedited_input_is_read_once_for_every_edit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = WITH_TOOLS.read_bytes()
    pack = sniffed(data, installed()).pack
    assert pack is not None
    edits = mutations_of(pack)
    assert len(edits) >= 3
    stream = run(CONVERTER, data, tmp_path)
    reads: list[bytes] = []
    real = reading.read

    def counting(chosen, given: bytes):
        reads.append(given)
        return real(chosen, given)

    monkeypatch.setattr(reading, "read", counting)
    kept = Readings()  # the runner's: passed to every judge of the input
    assert judge_fidelity(data, stream, readings=kept).findings == []
    judged = [judge_mutation(m, pack, data, stream, lambda edited: run(CONVERTER, edited, tmp_path), readings=kept)
              for m in edits]
    assert [j.findings for j in judged] == [[] for _ in edits]
    assert reads.count(data) == 1
    # each edited copy is read once too (the edits that apply to this input)
    assert len(reads) == 1 + sum(j.not_checked is None for j in judged)
    # Nothing is kept but in the Readings passed in: judges given none read afresh, each time.
    reads.clear()
    assert judge_fidelity(data, stream).findings == [] and judge_fidelity(data, stream).findings == []
    assert reads.count(data) == 2


def test_judging_an_input_hashes_it_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Sniffing or matching the input hashes it; the reading kept for its edits reuses that digest."""
    data = WITH_TOOLS.read_bytes()
    stream = run(CONVERTER, data, tmp_path)
    source = sniffed(data, installed())
    hashed: list[int] = []
    real = hashlib.sha256

    def counting(value: bytes = b"") -> Any:
        if value == data:
            hashed.append(len(value))
        return real(value)

    monkeypatch.setattr(hashlib, "sha256", counting)  # the module judging, readings and selection all use
    assert judge_fidelity(data, stream, source=source, readings=Readings()).findings == []
    assert len(hashed) == 1  # source.matches(data); before, the kept reading hashed the input again


# --- fidelity only on valid streams --------------------------------------------------


def test_an_invalid_stream_is_not_held_to_its_source(tmp_path: Path) -> None:
    data = WITH_TOOLS.read_bytes()
    invalid = run(INVALID, data, tmp_path)
    assert "ASR-260" in {p.rule for p in output_problems(invalid)}
    judged = judge_fidelity(data, invalid)
    assert (judged.findings, judged.not_checked, judged.unchecked) == ([], NOT_VALID, "the stream is not valid ASR")
    pack = sniffed(data, installed()).pack
    assert pack is not None
    edit = mutations_of(pack)[0]
    edited = judge_mutation(edit, pack, data, invalid, lambda _: pytest.fail("an invalid baseline is not edited"))
    assert (edited.findings, edited.not_checked) == ([], NOT_VALID)
    honest = judge_fidelity(data, run(CONVERTER, data, tmp_path))
    assert (honest.findings, honest.not_checked, honest.witness) == ([], None, "claude-code-jsonl")


def test_an_invalid_stream_after_an_edit_is_one_finding(tmp_path: Path) -> None:
    data = WITH_TOOLS.read_bytes()
    pack = sniffed(data, installed()).pack
    assert pack is not None
    edit = next(m for m in mutations_of(pack) if m.apply(data) is not None)
    judged = judge_mutation(edit, pack, data, run(CONVERTER, data, tmp_path), lambda e: run(INVALID, e, tmp_path))
    assert len(judged.findings) == 1 and "the stream is not valid ASR (breaks ASR-260)" in judged.findings[0].message


@pytest.fixture(scope="module")
def seeded_producers(tmp_path_factory: pytest.TempPathFactory) -> Certification:
    """``producer_runs.stream_and_environment`` (test_producer_role.py reads it too): the invalid stream's program
    beside another on three samples, its output and fidelity tests among them, skip reasons shown."""
    return runs.stream_and_environment(tmp_path_factory)


@pytest.mark.e2e
def test_the_fidelity_test_names_an_invalid_stream_not_checked(seeded_producers: Certification) -> None:
    """On the sample with tool results, of its output and fidelity tests only the output test fails; the fidelity
    test is not checked and says why."""
    assert WITH_TOOLS in runs.SEEDED_SAMPLES and "test_fidelity" in " ".join(runs.WIRING_SLICE)
    text = seeded_producers.text
    ids = f"{WITH_TOOLS.name}-{INVALID.name}"
    failed = re.findall(rf"FAILED \S*::(test_\w+)\[{re.escape(ids)}\]", text)
    assert failed == ["test_output_conforms"]
    skipped = [r for r in seeded_producers.report["results"]
               if r["implementation"] == INVALID.name and r["id"] == f"producer/test_fidelity[{WITH_TOOLS.name}]"]
    assert [r["outcome"] for r in skipped] == ["skipped"], skipped
    assert re.search(r"(?m)^SKIPPED .*fidelity not checked: the stream is not valid ASR", text)
