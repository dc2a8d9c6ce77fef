"""What streams of real size cost a default certification, in one run: with the long shapes and the
scale cases (``generators.long_streams``, ``generators.scale_cases``) against without them.

``test_the_default_certification_grows_by_at_most_a_third``: the default certification itself
(``pytest`` in the checkout: the bundled reference in its three roles, corpus and fuzz), started as
a vendor starts it, twice per seed, the baseline loading ``without_long_shapes`` (no long shapes)
and deselecting the scale cases.  The ratio is the CPU time of the runs (the pytest process and
every process it started and waited for) with the long shapes over without; the budget is 1.3.

Measured when it was added, on a loaded 2-core machine: 1.17 (65.8 s of CPU against 56.2 s, two
seeds); with the generator's own records as filler (``generators.filler``) and the sizes of
``long_streams`` now: 1.27 (94.6 s against 74.3 s, two seeds, a more loaded machine); with long native sessions in the producer fuzz as well
(``generators.native.long_sessions``, the baseline drawing none): 1.50 at one example in twenty-four
and up to 3,000 lines (116.8 s against 77.6 s), 1.16 at one in ninety-six and up to 2,000 lines
(86.8 s against 74.7 s, two seeds, a loaded machine).  With Gemini CLI sessions lengthened too, every stretch a
MiB or more and one long property per format in every run: 2.31 (168.5 s against 72.9 s) while the other
properties' long tier, the end of its range, came up about one example in fifty and each long example was
converted twice; 1.32 (93.3 s against 70.8 s) with the long property converted once, without a source edit,
and the tier a middle value of 384; 1.21 (96.4 s against 79.6 s) with the tier one example in 768 (two seeds
each, a loaded machine: the baseline itself moved from 70.8 s to 79.6 s between the two).

``test_long_shapes_cost_in_the_fuzz_and_corpus_alone``: only the part the long shapes change, the
validator and reader fuzz properties and the corpus, judged in process by the reference, so the
ratio is far above the whole certification's (it is here to show where the cost goes): 1.54 for one
seed when it was added (11.4 s against 7.4 s; 58 MiB judged against 22 MiB); 1.58 with the generated
filler (39.1 s against 24.7 s, three seeds).

Each property draws ``EXAMPLES`` examples (the default profile) under each of ``SEEDS``, the two
settings taking turns seed by seed so that a change in machine load falls on both.  Every example
is judged as a certification judges it: the harness's own reference check, then the implementation's
answer (the reference again: a validation, or a view sent as JSON and compared with the settled
members of the harness's view).  The corpus part reads every validator and reader case once per
seed (with the long shapes: the scale cases too).  The ratio is the CPU time with the long shapes
over the time without; the budget is 1.3.  ``extra_info`` records it (no timed assertion: the
numbers are for the report, the verdicts are asserted).

This measure leaves out what a certification spends on neither side of the ratio (starting
processes, the protocol's round trips, the producer role, the report).

    pytest -p no:xdist --benchmark-only suite/benchmarks/test_long_shapes_cost.py
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from asr_conformance import CORPUS_DIR
from asr_conformance.generators.changes import explain, mutate
from asr_conformance.generators.damage import DAMAGES
from asr_conformance.generators.long_streams import long_shapes
from asr_conformance.generators.mutators import drawn_mode, serialize
from asr_conformance.generators.reader_streams import FEATURES, reader_streams
from asr_conformance.generators.registry import registry
from asr_conformance.generators.streams import adversarial_streams, valid_streams
from asr_conformance.harness.fuzzing.readers import settled_view
from asr_conformance.harness.judging.views import compare_views
from asr_conformance.reference.checks import validate_bytes
from asr_conformance.reference.reader import build_view, read_records, read_view
from asr_conformance.reference.stream import StreamReader
from asr_conformance.vocabulary.cases import iter_cases

EXAMPLES, SEEDS = 8, (0, 1, 2)


def _run(strategy: st.SearchStrategy, number: int, body: Callable[[tuple], None]) -> None:
    """``EXAMPLES`` examples of one property under a fixed seed, generation only (no shrinking)."""

    @seed(number)
    @settings(max_examples=EXAMPLES, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def prop(drawn: tuple) -> None:
        body(drawn)

    prop()


class Judged:
    """What was judged: streams accepted and rejected, views compared, bytes seen."""

    def __init__(self) -> None:
        self.accepted = self.rejected = self.views = self.bytes = self.largest = 0

    def validate(self, data: bytes) -> None:
        self.bytes += len(data)
        self.largest = max(self.largest, len(data))
        validate_bytes(data)  # the harness's own check of what it generated
        if validate_bytes(data).errors:  # the implementation's answer
            self.rejected += 1
        else:
            self.accepted += 1

    def view(self, records: list[dict[str, Any]], data: bytes) -> None:
        self.bytes += len(data)
        self.largest = max(self.largest, len(data))
        expected = settled_view(build_view(*read_records(StreamReader().read_bytes(data))), records)
        answer = json.loads(json.dumps(build_view(*read_records(StreamReader().read_bytes(data)))))
        assert not compare_views(expected, answer), "the reference reader must agree with itself"
        self.views += 1


def certification(long: bool, number: int) -> Judged:
    """The validator and reader fuzz properties of a default run (suite/conformance/test_*_fuzz.py),
    and the corpus, with the reference in process."""
    judged = Judged()
    shapes = long_shapes(long)

    def valid(drawn: tuple) -> None:
        records, shape, data = drawn
        judged.validate(shape.splice(data.draw, serialize(shape.spread(records))).data)

    _run(st.tuples(valid_streams(), shapes, st.data()), number, valid)
    _run(st.tuples(adversarial_streams(), shapes, st.data()), number, valid)
    for rule, mutator in sorted(registry().items()):
        def mutated(drawn: tuple, rule: str = rule, mutator: Any = mutator) -> None:
            records, shape, data = drawn
            mutation = mutate(mutator, data.draw, shape.spread(records), rule)
            drawn_mode(rule)
            judged.validate(shape.splice(data.draw, mutation.data).data)

        _run(st.tuples(valid_streams(max_steps=12), shapes, st.data()), number, mutated)
    for kind, damage in sorted(DAMAGES.items()):
        def damaged(drawn: tuple, kind: str = kind, damage: Any = damage) -> None:
            records, shape, data = drawn
            records = shape.spread(records)
            raw = explain(records, damage(data.draw, serialize(records)), "damage", kind).data
            judged.validate(shape.splice(data.draw, raw).data)

        _run(st.tuples(valid_streams(max_steps=6), shapes, st.data()), number, damaged)

    def viewed(drawn: tuple) -> None:
        records, shape, data = drawn
        spread = shape.spread(records)
        judged.view(spread, shape.splice(data.draw, serialize(spread)).data)

    for feature in sorted(FEATURES):
        _run(st.tuples(reader_streams(feature), shapes, st.data()), number, viewed)
    _run(st.tuples(valid_streams(max_steps=15), shapes, st.data()), number, viewed)
    _run(st.tuples(adversarial_streams(max_steps=15), shapes, st.data()), number, viewed)
    for case in iter_cases(CORPUS_DIR):
        if not long and "-scale-" in case.id:
            continue
        if case.role == "validator":
            judged.validate(case.data())
        else:
            view = read_view(case.stream)
            assert not compare_views(case.view(), json.loads(json.dumps(view)), case.partial)
            judged.views += 1
    return judged


def _both() -> tuple[dict[bool, float], dict[bool, Judged]]:
    """CPU seconds of each setting, taking turns seed by seed."""
    taken = {True: 0.0, False: 0.0}
    last: dict[bool, Judged] = {}
    for number in SEEDS:
        for long in (False, True):
            start = time.process_time()
            last[long] = certification(long, number)
            taken[long] += time.process_time() - start
            assert last[long].rejected > 0 and last[long].accepted > 0 and last[long].views > 0
    return taken, last


def test_long_shapes_cost_in_the_fuzz_and_corpus_alone(benchmark) -> None:
    taken, last = benchmark.pedantic(_both, rounds=1, iterations=1)
    ratio = taken[True] / taken[False]
    benchmark.extra_info.update(long_seconds=round(taken[True], 2), baseline_seconds=round(taken[False], 2),
                                ratio_to_baseline=round(ratio, 3), seeds=len(SEEDS), examples=EXAMPLES,
                                long_mib_judged=round(last[True].bytes / 2**20, 1),
                                baseline_mib_judged=round(last[False].bytes / 2**20, 1),
                                largest_stream_mib=round(last[True].largest / 2**20, 2))
    print(f"\nwith long shapes: {taken[True]:.1f} s CPU, {ratio:.2f}x the baseline {taken[False]:.1f} s; "
          f"largest stream {last[True].largest / 2**20:.2f} MiB")


ROOT = Path(__file__).resolve().parents[2]
#: Seeds of the whole-certification runs (each seed: one run with, one without the long shapes).
CERTIFICATION_SEEDS = (11, 12)


def _certify(long: bool, number: int, folder: Path) -> float:
    """CPU seconds of one default certification of the bundled reference (it must conform)."""
    env = {k: v for k, v in os.environ.items() if k not in ("ASR_HYPOTHESIS_PROFILE", "PYTEST_ADDOPTS")}
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--report-dir={folder}",
            f"--hypothesis-seed={number}"]
    if not long:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(__file__).parent), env.get("PYTHONPATH")]))
        args += ["-p", "without_long_shapes", "-k", "not scale"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert "verdict: CONFORMS" in run.stdout, run.stdout[-3000:]
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def test_the_default_certification_grows_by_at_most_a_third(benchmark, tmp_path: Path) -> None:
    def both() -> dict[bool, float]:
        taken = {True: 0.0, False: 0.0}
        for number in CERTIFICATION_SEEDS:
            for long in (False, True):
                taken[long] += _certify(long, number, tmp_path / f"{number}-{long}")
        return taken

    taken = benchmark.pedantic(both, rounds=1, iterations=1)
    ratio = taken[True] / taken[False]
    benchmark.extra_info.update(long_seconds=round(taken[True], 2), baseline_seconds=round(taken[False], 2),
                                ratio_to_baseline=round(ratio, 3), runs=len(CERTIFICATION_SEEDS))
    print(f"\ndefault certification with long shapes: {taken[True]:.1f} s CPU, {ratio:.2f}x the baseline "
          f"{taken[False]:.1f} s")
