"""Long shapes (generators/long_streams.py): the filler is valid and self-contained, splicing it in
keeps every mutator's and damage's verdict and rules and every view member of the records around it,
the defect lands anywhere (the last line after thousands of records, or the middle), the sizes reach
a MiB, and shrinking ends at the short stream (or at the fewest lines a failure needs)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st

from asr_conformance.generators.changes import mutate
from asr_conformance.generators.damage import DAMAGES
from asr_conformance.generators.filler import first_free_number, generated_filler
from asr_conformance.generators.long_streams import (
    LONG_RECORDS,
    MIB_RECORDS,
    LongShape,
    Splice,
    boundaries,
    defect_lines,
    long_shapes,
    spliced,
)
from asr_conformance.generators.mutators import drawn_mode, serialize
from asr_conformance.generators.registry import registry
from asr_conformance.generators.streams import adversarial_streams, valid_streams
from asr_conformance.reference.checks import validate_bytes
from asr_conformance.reference.reader import build_view, read_records
from asr_conformance.reference.stream import StreamReader

QUICK = settings(max_examples=50, derandomize=True, database=None, deadline=None, phases=[Phase.generate],
                 suppress_health_check=list(HealthCheck))
HEADER = serialize([{"type": "session", "seq": 0, "id": "h", "formatVersion": "0.1", "agent": {"name": "codex"},
                     "sessionId": "s", "producer": {"name": "p", "version": "1", "method": "native", "instance": "i"},
                     "profiles": ["core"], "contentLevel": "full"}])
#: Small shapes: enough filler to land between records, cheap enough for many examples.
small_shapes = st.builds(LongShape, st.integers(1, 20), st.integers(0, 999))


def _rules(data: bytes) -> list[str]:
    return sorted(d.rule for d in validate_bytes(data).errors)


def _filler(data: bytes, count: int, seed: int, pool: int = 0) -> tuple[list[str], frozenset[str]]:
    (lines,), names = generated_filler(data, [(1, count)], seed, pool)
    return lines, names


def test_filler_is_valid_unique_and_a_mib_past_its_threshold() -> None:
    lines, names = _filler(HEADER, MIB_RECORDS, seed=5)
    data = HEADER + "".join(lines).encode()
    assert len(lines) == MIB_RECORDS and len(data) >= 2**20
    assert validate_bytes(data).valid
    ids = [json.loads(line)["id"] for line in lines]
    assert len(set(ids)) == len(ids) and set(ids) <= names
    assert _filler(HEADER, 50, seed=5)[0] == lines[:50], "the same seed gives the same records"


def test_filler_looks_like_the_generated_stream() -> None:
    """No tag and no fixed template: names of the generator's own shapes (``r12``, ``call_13``), many
    record types, texts of the generator's alphabets (plain words beside an ASCII stream), another
    pool under another run seed, and names numbered past every name of those shapes the stream holds."""
    import re

    data = HEADER + b'{"type":"state","seq":1,"id":"r40","state":"running","_meta":{"x":"call_77"}}\n'
    lines, names = _filler(data, 400, seed=1)
    records = [json.loads(line) for line in lines]
    assert all(re.fullmatch(r"(r|call_|turn-|perm_|req_|term_|term_later_|unknown_call_)\d+", name) for name in names)
    assert min(int(re.sub(r"\D", "", name)) for name in names) >= first_free_number(data) == 78
    assert len({r["type"] for r in records}) >= 8
    assert b"".join(line.encode() for line in lines).isascii(), "plain-word chunks beside an ASCII stream"
    assert not set(_filler(data, 400, seed=2)[0]) & set(lines) - {""}, "another seed, other records"
    other = _filler(data, 400, seed=1, pool=1)[0]
    texts = {json.dumps(r["content"]) for r in records if r["type"] == "message"}
    shared = texts & {json.dumps(json.loads(line).get("content")) for line in other}
    assert len(texts) >= 5 and len(shared) < len(texts) / 4, "another run, other texts (a one-letter text may recur)"


def test_filler_cut_anywhere_is_still_valid() -> None:
    for count in (1, 2, 3, 7, 13, 40, 101):
        for data in (HEADER, HEADER + "é".encode()):
            assert validate_bytes(HEADER + "".join(_filler(data, count, seed=count)[0]).encode()).valid


@QUICK
@given(st.sampled_from(sorted(registry())), valid_streams(max_steps=12), small_shapes, st.data())
def test_splicing_keeps_each_mutators_verdict_and_rules(rule: str, records: list[dict[str, Any]],
                                                       shape: LongShape, data: st.DataObject) -> None:
    mutation = mutate(registry()[rule], data.draw, shape.spread(records), rule)  # type: ignore[arg-type]
    drawn_mode(rule)
    splice = shape.splice(data.draw, mutation.data)  # type: ignore[arg-type]
    assert _rules(splice.data) == _rules(mutation.data)
    moved = spliced(mutation, splice)
    new_lines = splice.data.split(b"\n")
    for old, new in zip(mutation.changes, moved.changes, strict=True):
        assert mutation.data.split(b"\n")[old.line - 1] == new_lines[new.line - 1], "a change points at its line"


@QUICK
@given(st.sampled_from(sorted(DAMAGES)), valid_streams(max_steps=6), small_shapes, st.data())
def test_splicing_keeps_each_damages_rules(kind: str, records: list[dict[str, Any]], shape: LongShape,
                                           data: st.DataObject) -> None:
    damaged = DAMAGES[kind](data.draw, serialize(shape.spread(records)))  # type: ignore[arg-type]
    assert _rules(shape.splice(data.draw, damaged).data) == _rules(damaged)  # type: ignore[arg-type]


def _view(data: bytes) -> dict[str, Any]:
    records, problems = read_records(StreamReader().read_bytes(data))
    return build_view(records, problems)


def _without(view: dict[str, Any], splice: Splice) -> dict[str, Any]:
    """The view with every filler entity, entry and seq left out."""
    lines = splice.data.split(b"\n")
    filler_seqs = {str(json.loads(lines[first + i])["seq"]) for first, count in splice.blocks for i in range(count)}
    names = re.compile('"(' + "|".join(map(re.escape, splice.names)) + ')"') if splice.names else None

    def keep(value: Any) -> bool:
        return names is None or not names.search(json.dumps(value, ensure_ascii=False))

    kept: dict[str, Any] = {}
    for name, value in view.items():
        if name == "in_force":
            kept[name] = {seq: entry for seq, entry in value.items() if seq not in filler_seqs}
        elif isinstance(value, dict) and name in ("calls", "permissions", "terminals"):
            kept[name] = {key: entry for key, entry in value.items() if keep(key) and keep(entry)}
        elif isinstance(value, list):
            kept[name] = [entry for entry in value if keep(entry)]
        else:
            kept[name] = value
    return kept


@settings(QUICK, max_examples=25)
@given(st.one_of(valid_streams(max_steps=15), adversarial_streams(max_steps=10)), small_shapes, st.data())
def test_filler_changes_no_view_member_of_the_records_around_it(records: list[dict[str, Any]], shape: LongShape,
                                                                 data: st.DataObject) -> None:
    short = serialize(shape.spread(records))
    splice = shape.splice(data.draw, short)  # type: ignore[arg-type]
    assert validate_bytes(splice.data).valid
    if splice.filler:
        assert _without(_view(splice.data), splice) == _view(short)


#: A filler record with its seq and every name of the filler's shapes masked: what is left to tell it by.
MASKED = re.compile(r'"seq":-?\d+|(?:term_later_|unknown_call_|call_|turn-|perm_|req_|term_|r)\d+')


def _distinct_share(lines: list[str]) -> float:
    return len({MASKED.sub("#", line) for line in lines}) / len(lines)


def test_filler_repeats_no_record_of_its_pool_word_for_word(monkeypatch: pytest.MonkeyPatch) -> None:
    """A MiB of filler is some hundreds of pool records used again and again: each use re-letters the
    texts the builders drew and moves the chunk's times, so that most records, names and seq masked,
    occur once (a validator that skips repeated records skips little: examples/hostile/
    skips-repeated-records).  Used word for word, as the pool once was, nearly every record repeats."""
    from asr_conformance.generators import filler

    lines, _ = _filler(HEADER, MIB_RECORDS, seed=9)
    assert _distinct_share(lines) > 0.7
    texts = [json.loads(line).get("title") for line in lines]
    assert len({t for t in texts if isinstance(t, str) and len(t) > 3}) > 100
    monkeypatch.setattr(filler, "relettered", lambda text, letters: text)
    kept_times = filler.moved
    monkeypatch.setattr(filler, "moved", lambda stamps, span: kept_times(stamps, span * 0))
    verbatim, _ = _filler(HEADER, MIB_RECORDS, seed=9)
    assert validate_bytes(HEADER + "".join(verbatim).encode()).valid
    assert _distinct_share(verbatim) < 0.15


def test_the_defect_lands_last_after_thousands_of_records_and_in_the_middle() -> None:
    """ASR-171's mutator appends its broken config_change: spliced, it is the last line after the
    filler in some examples, and has filler after it in others.  (Filler goes only where seqs leave
    room: never between the header and a record the mutator appended right after it.)"""
    where: list[tuple[int, int]] = []

    @settings(QUICK, max_examples=12)
    @given(valid_streams(max_steps=6, min_steps=2), st.integers(2100, 3000), st.data())
    def place(records: list[dict[str, Any]], count: int, data: st.DataObject) -> None:
        shape = LongShape(count, 3)
        mutation = mutate(registry()["ASR-171"], data.draw, shape.spread(records), "ASR-171")  # type: ignore[arg-type]
        splice = shape.splice(data.draw, mutation.data, defect_lines(mutation))  # type: ignore[arg-type]
        moved = spliced(mutation, splice)
        assert _rules(splice.data) == ["ASR-171"]
        where.append((moved.changes[0].line, splice.data.count(b"\n")))

    place()
    assert any(line == total and line > 1000 for line, total in where), "the defect on the last line"
    assert any(1000 < line < total for line, total in where), "the defect in the middle, past line 1000"


def test_shapes_reach_a_mib_in_a_default_run_and_none_in_most_examples() -> None:
    counts: list[int] = []

    @settings(QUICK, max_examples=400)
    @given(long_shapes())
    def draw(shape: LongShape) -> None:
        counts.append(shape.count)

    draw()
    assert max(counts) <= LONG_RECORDS
    assert sum(c == 0 for c in counts) > len(counts) / 2
    # A default run draws about nine hundred examples: at about one in a hundred, a MiB is reached in every run.
    assert sum(c >= MIB_RECORDS for c in counts) >= len(counts) / 100
    assert find(long_shapes(False), lambda shape: True) == LongShape()


#: A short valid stream: a header and two records, seqs 0, 1, 2.
SHORT = HEADER + serialize([{"type": "state", "seq": 1, "id": "a", "state": "running"},
                            {"type": "state", "seq": 2, "id": "b", "state": "idle"}])


@st.composite
def _spliced(draw: st.DrawFn) -> bytes:
    shape = draw(long_shapes())
    records = [json.loads(line) for line in SHORT.splitlines()]
    return shape.splice(draw, serialize(shape.spread(records))).data


def test_shrinking_ends_at_the_short_stream_or_the_fewest_lines_a_failure_needs() -> None:
    quick = settings(database=None, max_examples=400, suppress_health_check=list(HealthCheck), deadline=None)
    assert find(_spliced(), lambda data: True, settings=quick) == SHORT
    long = find(_spliced(), lambda data: data.count(b"\n") > 60, settings=quick)
    assert 60 < long.count(b"\n") <= 64


def test_boundaries_skip_damaged_lines_and_respect_every_seq() -> None:
    data = HEADER + b'{"type":"state","seq":40,"id":"a","state":"running"}\n{"type":"state","seq":9,"id"\n' \
        b'{"type":"state","seq":80,"id":"b","state":"idle"}\n'
    _, found = boundaries(data)
    assert [(b.index, b.after_seq) for b in found] == [(1, 0), (4, 80)]
    assert found[0].room == 8, "below the damaged line's seq 9"


def test_a_certification_draws_the_filler_from_its_seed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The plugin gives its fuzz sessions the run's seed (``fuzz_seed``), and the validator fuzz's properties
    splice filler from the pool of that seed (``pool_seed``): ``--hypothesis-seed`` replays the filler too.
    Without a seed (a derandomized profile), from pool 0; a baseline session (``long_shapes`` false) none."""
    from types import SimpleNamespace

    from miniatures import accept_all, fuzz_session

    from asr_conformance.conformance import test_validator_fuzz as validator_fuzz
    from asr_conformance.generators import long_streams
    from asr_conformance.plugin import hooks
    from asr_conformance.plugin.run_config import fuzz_seed

    options = {"hypothesis_seed": 4242}
    config = SimpleNamespace(getoption=lambda name, default=None: options.get(name, default), stash=pytest.Stash(),
                             pluginmanager=SimpleNamespace(hasplugin=lambda name: False))
    profile = settings.get_current_profile_name()
    try:
        hooks._configure_hypothesis(config)  # type: ignore[arg-type]
    finally:
        settings.load_profile(profile)  # this process's profile stays
    assert fuzz_seed(config) == 4242  # type: ignore[arg-type]
    pools: list[int] = []

    def no_filler(data: bytes, blocks: list[tuple[int, int]], seed: int, pool: int) -> tuple[list[list[str]], frozenset[str]]:
        pools.append(pool)
        return [[] for _ in blocks], frozenset()  # the pool asked for, and nothing spliced: cheap examples

    monkeypatch.setattr(long_streams, "FILLER", no_filler)
    drawn = {}
    for seed, long in ((4242, True), (None, True), (4242, False)):
        pools.clear()
        chosen = settings(max_examples=30, database=None, deadline=None, derandomize=seed is None, phases=[Phase.generate],
                          suppress_health_check=list(HealthCheck))
        session, _ = fuzz_session(accept_all(), tmp_path / f"{seed}-{long}", chosen, seed=seed, long_shapes=long)
        validator_fuzz.test_accepts_valid_streams(session)
        drawn[seed, long] = set(pools)
    assert drawn == {(4242, True): {4242}, (None, True): {0}, (4242, False): set()}


def test_the_pool_is_the_same_in_every_process_whatever_it_loaded() -> None:
    """Hypothesis mixes literals of the loaded modules into its draws; the pool's draws leave them out, so
    an xdist worker, a campaign and a replay splice the same filler for the same seed (here: a process
    that loaded nothing else, and this one, which loaded the project's tests)."""
    import hashlib
    import subprocess
    import sys

    from asr_conformance.generators.filler import pool

    script = ("import hashlib, sys\nfrom asr_conformance.generators.filler import pool\n"
              "sys.stdout.write(hashlib.sha256(repr(pool(7)).encode()).hexdigest())")
    alone = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120).stdout
    assert alone == hashlib.sha256(repr(pool(7)).encode()).hexdigest()
