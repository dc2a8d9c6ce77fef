"""How fast the reference validator is, as ratios within one run (README.md, Speed).

Each benchmark processes the same generated stream; ``extra_info`` keeps the
record and byte counts so records per second can be computed from the
report.  The comparison points: strict parsing alone (the stdlib decoder with
the hooks strictness needs), orjson parsing alone (the fastest parse), the
suite's own strict reader, and a JSON Schema library validating every record
(what a vendor might use instead).

``test_validation_ratios_alternating`` times the parses and the reference
validator in each of its modes (``asr-validate``, the one-shot executable, the
persistent server) round by round, alternating, and keeps the ratios in
``extra_info`` with the machine's load average before and after: the targets
are at most 1.5 times the strict parse and 3 times the orjson parse.

The generated stream is compact (no spaces, no escapes beyond JSON's own), the
form the strict reader takes on sight; ``test_spaced_stream_against_compact``
times the same records written with spaces (``json.dumps``' default), whose
every line takes the reader's proof instead."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import orjson

from asr_conformance.reference.checks import validate_path
from asr_conformance.reference.stream import StreamReader, _PairsCollector, _parse_float, _parse_int, _reject_constant

ROUNDS = 2
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _info(benchmark, big_stream) -> None:
    _, records, size = big_stream
    benchmark.extra_info.update({"records": records, "bytes": size})


def _strict_parse(path: Path) -> None:
    """The stdlib decoder with what strictness needs: duplicate keys seen, NaN refused, integers ranged."""
    with open(path, "rb") as handle:
        for line in handle:
            decoder = json.JSONDecoder(object_pairs_hook=_PairsCollector(), parse_constant=_reject_constant,
                                       parse_int=_parse_int, parse_float=_parse_float)
            decoder.decode(line.decode("utf-8"))


def _orjson_parse(path: Path) -> None:
    with open(path, "rb") as handle:
        for line in handle:
            orjson.loads(line)


def test_strict_parse_only(benchmark, big_stream) -> None:
    _info(benchmark, big_stream)
    benchmark.pedantic(_strict_parse, args=(big_stream[0],), rounds=ROUNDS, iterations=1)


def test_orjson_parse_only(benchmark, big_stream) -> None:
    _info(benchmark, big_stream)
    benchmark.pedantic(_orjson_parse, args=(big_stream[0],), rounds=ROUNDS, iterations=1)


def _asr_validate(path: Path) -> None:
    """``asr-validate --json FILE`` as a user runs it: a fresh process (its start included)."""
    script = shutil.which("asr-validate", path=os.path.dirname(sys.executable))
    command = [script] if script else [sys.executable, "-m", "asr_conformance.reference.cli"]
    result = subprocess.run([*command, "--json", str(path)], capture_output=True, check=False)
    assert result.returncode == 0 and not result.stdout, result.stdout[:500]


def _one_shot(path: Path) -> None:
    """The one-shot executable of docs/contract.md §2 on the stream, uncontained (the validator's own cost)."""
    result = subprocess.run([str(EXAMPLES / "reference-validator"), str(path)], capture_output=True, check=False)
    assert result.returncode == 0 and not result.stdout, result.stdout[:500]


class _Server:
    """The persistent server (docs/contract.md §4), started once; each call is one validate exchange."""

    def __init__(self) -> None:
        from asr_conformance.vocabulary import protocol

        self.protocol = protocol
        self.process = subprocess.Popen([str(EXAMPLES / "reference-validator-persistent")], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True)
        self.seq = 0
        self._ask(protocol.Start())

    def _ask(self, request: object) -> dict[str, object]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(self.protocol.encode(request) + "\n")  # type: ignore[arg-type]
        self.process.stdin.flush()
        return dict(json.loads(self.process.stdout.readline()))

    def cpu_seconds(self) -> float:
        """User and system seconds the server has spent so far (it is not reaped until it ends)."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def __call__(self, path: Path) -> None:
        self.seq += 1
        reply = self._ask(self.protocol.Validate(self.seq, str(path)))
        assert reply.get("verdict") == "valid", reply

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=60)


def test_validation_ratios_alternating(benchmark, big_stream) -> None:
    """Strict parse, orjson parse and the reference validator in every mode, alternating round by round
    (so a load that comes and goes touches each alike); the ratios are of CPU seconds, the fastest round
    of each, and the wall seconds are kept beside them."""
    path = big_stream[0]
    server = _Server()
    contenders: dict[str, Callable[[Path], None]] = {
        "strict_parse": _strict_parse, "orjson_parse": _orjson_parse, "asr_validate": _asr_validate,
        "one_shot": _one_shot, "persistent": server, "in_process": validate_path,
    }
    taken: dict[str, list[float]] = {name: [] for name in contenders}
    wall: dict[str, list[float]] = {name: [] for name in contenders}

    def cpu() -> float:
        """CPU seconds of this process, its reaped children and the server: a loaded machine stretches
        wall seconds by whatever else runs, CPU seconds much less."""
        spent = os.times()
        return spent.user + spent.system + spent.children_user + spent.children_system + server.cpu_seconds()

    def one_round() -> None:
        for name, run in contenders.items():
            started, started_cpu = time.perf_counter(), cpu()
            run(path)
            taken[name].append(cpu() - started_cpu)
            wall[name].append(time.perf_counter() - started)

    load_before = os.getloadavg()
    try:
        benchmark.pedantic(one_round, rounds=ROUNDS, iterations=1)
    finally:
        server.close()
    best = {name: min(times) for name, times in taken.items()}
    _info(benchmark, big_stream)
    benchmark.extra_info["load_average_before"] = [round(value, 2) for value in load_before]
    benchmark.extra_info["load_average_after"] = [round(value, 2) for value in os.getloadavg()]
    benchmark.extra_info.update({f"cpu_seconds_{name}": round(value, 3) for name, value in best.items()})
    benchmark.extra_info.update({f"wall_seconds_{name}": round(min(times), 3) for name, times in wall.items()})
    for name in ("asr_validate", "one_shot", "persistent", "in_process"):
        for parse in ("strict_parse", "orjson_parse"):
            # CPU seconds come in clock ticks: a small stream (ASR_BENCH_BYTES) may parse in none, and has no ratio.
            ratio = round(best[name] / best[parse], 3) if best[parse] else None
            benchmark.extra_info[f"{name}_to_{parse}"] = ratio
    print("\n" + "\n".join(f"{key}: {value}" for key, value in benchmark.extra_info.items()))


def test_spaced_stream_against_compact(benchmark, big_stream, tmp_path: Path) -> None:
    """The reference validator in process on the stream and on the same records written with spaces,
    alternating round by round; CPU seconds, the fastest round of each, and their ratio."""
    compact = big_stream[0]
    spaced = tmp_path / "spaced.jsonl"
    with open(compact, "rb") as source, open(spaced, "w", encoding="utf-8") as target:
        for line in source:
            target.write(json.dumps(orjson.loads(line), ensure_ascii=False) + "\n")
    taken: dict[str, list[float]] = {"compact": [], "spaced": []}

    def one_round() -> None:
        for name, path in (("compact", compact), ("spaced", spaced)):
            started = time.process_time()
            outcome = validate_path(path)
            taken[name].append(time.process_time() - started)
            assert outcome.valid, outcome.errors[:3]

    benchmark.pedantic(one_round, rounds=ROUNDS, iterations=1)
    _info(benchmark, big_stream)
    best = {name: min(times) for name, times in taken.items()}
    benchmark.extra_info.update({f"cpu_seconds_{name}": round(value, 3) for name, value in best.items()})
    benchmark.extra_info["spaced_to_compact"] = round(best["spaced"] / best["compact"], 3)
    print(f"\ncompact {best['compact']:.3f} s, spaced {best['spaced']:.3f} s of CPU")


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
