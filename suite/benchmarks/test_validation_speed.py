"""How fast the reference validator is, as ratios within one run (HARNESS.md §7).

Each benchmark processes the same generated stream; ``extra_info`` keeps the
record and byte counts so records per second can be computed from the
report.  The comparison points: strict parsing alone (the stdlib decoder with
the hooks strictness needs), orjson parsing alone (the fastest parse), the
suite's own strict reader, and a JSON Schema library validating every record
(what a vendor might use instead)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import orjson

from asr_conformance.reference.checks import validate_path
from asr_conformance.reference.stream import StreamReader, _PairsCollector, _parse_float, _parse_int, _reject_constant

ROUNDS = 2


def _info(benchmark, big_stream) -> None:
    _, records, size = big_stream
    benchmark.extra_info.update({"records": records, "bytes": size})


def test_strict_parse_only(benchmark, big_stream) -> None:
    path = big_stream[0]

    def parse() -> None:
        with open(path, "rb") as handle:
            for line in handle:
                decoder = json.JSONDecoder(object_pairs_hook=_PairsCollector(), parse_constant=_reject_constant,
                                           parse_int=_parse_int, parse_float=_parse_float)
                decoder.decode(line.decode("utf-8"))

    _info(benchmark, big_stream)
    benchmark.pedantic(parse, rounds=ROUNDS, iterations=1)


def test_orjson_parse_only(benchmark, big_stream) -> None:
    path = big_stream[0]

    def parse() -> None:
        with open(path, "rb") as handle:
            for line in handle:
                orjson.loads(line)

    _info(benchmark, big_stream)
    benchmark.pedantic(parse, rounds=ROUNDS, iterations=1)


def test_strict_reader_only(benchmark, big_stream) -> None:
    path = big_stream[0]
    reader = StreamReader()

    def read() -> None:
        for _ in reader.read_path(path):
            pass

    _info(benchmark, big_stream)
    benchmark.pedantic(read, rounds=ROUNDS, iterations=1)


def test_reference_validation(benchmark, big_stream) -> None:
    path = big_stream[0]
    _info(benchmark, big_stream)
    outcome = benchmark.pedantic(validate_path, args=(path,), rounds=ROUNDS, iterations=1)
    assert outcome.valid, outcome.errors[:3]


def test_jsonschema_validation(benchmark, big_stream) -> None:
    """Every record against the shipped per-record schemas (draft-07), with the jsonschema library."""
    from asr_conformance.vocabulary.record_schemas import record_validator

    validator = record_validator()
    path = big_stream[0]

    def check() -> int:
        failures = 0
        with open(path, "rb") as handle:
            for line in handle:
                record = orjson.loads(line)
                if record.get("type") in validator.types and not validator.is_valid(record):
                    failures += 1
        return failures

    _info(benchmark, big_stream)
    assert benchmark.pedantic(check, rounds=1, iterations=1) == 0


def _peak_rss_kib(path: Path) -> int:
    """VmHWM of a fresh process (ru_maxrss would include the forking parent's pages)."""
    code = (
        "import sys\n"
        "from asr_conformance.reference.checks import validate_path\n"
        "validate_path(sys.argv[1])\n"
        "print(next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM:')))\n"
    )
    result = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True)
    return int(result.stdout.strip())


def test_peak_memory_against_stream_length(benchmark, big_stream, tmp_path: Path) -> None:
    """Peak resident memory for a quarter of the stream and for all of it.

    Memory may grow with the index of live entities (record IDs, call IDs,
    turns) but not with the bytes of the records themselves."""
    from asr_conformance.generators.realistic import write_realistic_stream

    quarter = tmp_path / "quarter.jsonl"
    write_realistic_stream(quarter, big_stream[2] // 4)
    small = _peak_rss_kib(quarter)
    large = benchmark.pedantic(_peak_rss_kib, args=(big_stream[0],), rounds=1, iterations=1)
    benchmark.extra_info.update({"peak_rss_kib_quarter": small, "peak_rss_kib_full": large, "bytes": big_stream[2]})
    print(f"\npeak RSS: {small} KiB for {big_stream[2] // 4} bytes, {large} KiB for {big_stream[2]} bytes")
