"""What the fuzzer's reach costs (issue 25): the validator fuzz properties of a default certification,
drawn and judged in process by the reference, with the stream generators as they are and with their
reach-only shapes switched off (``reach=False``: no two results for one call or stopReason beside
state error forced into adversarial streams, no later terminals, input-request revisions, turns
opened by a compaction, mentioned record types, minimal records or the optional members added for
reach), in one run.

Each property draws ``EXAMPLES`` examples (the default profile) under each of ``SEEDS``, the two
generators taking turns seed by seed so that a change in machine load falls on both.  The ratio is the
reach generators' CPU time over the baseline's; the target is at most 1.2.  ``extra_info`` records it
(no timed assertion: the numbers are for the report, the verdicts are asserted).  Measured when it
was added, on a loaded 2-core machine: 1.19 and 1.16 in two runs (about 21 s of CPU for the baseline).
The baseline is not the generators before the reach work, only the nearest in-run stand-in: measured
against those, the whole ``-m fuzz --role=validator`` certification of the persistent reference took
1.09 times the CPU time (1.11 without start-up; six runs each, interleaved, X-JSON left out).

    pytest -p no:xdist --benchmark-only suite/benchmarks/test_fuzz_reach_cost.py
"""

from __future__ import annotations

import time
from collections.abc import Callable

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from asr_conformance.generators.changes import explain, mutate
from asr_conformance.generators.damage import DAMAGES
from asr_conformance.generators.mutators import serialize
from asr_conformance.generators.registry import registry
from asr_conformance.generators.streams import adversarial_streams, valid_streams
from asr_conformance.reference.checks import validate_bytes

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


def certification_fuzz(reach: bool, number: int) -> dict[str, int]:
    """The validator fuzz properties (suite/conformance/test_validator_fuzz.py) with the reference in
    process: how many streams it accepted and rejected."""
    judged = {"accepted": 0, "rejected": 0}

    def judge(data: bytes) -> bool:
        accepted = not validate_bytes(data).errors
        judged["accepted" if accepted else "rejected"] += 1
        return accepted

    def accepts(drawn: tuple) -> None:
        assert judge(serialize(drawn[0])), "the reference must accept every valid stream"

    _run(st.tuples(valid_streams(reach=reach)), number, accepts)
    _run(st.tuples(adversarial_streams(reach=reach)), number, accepts)
    for rule, mutator in sorted(registry().items()):
        _run(st.tuples(valid_streams(max_steps=12, reach=reach), st.data()), number,
             lambda drawn, rule=rule, mutator=mutator: judge(mutate(mutator, drawn[1].draw, drawn[0], rule).data))
    for kind, damage in sorted(DAMAGES.items()):
        _run(st.tuples(valid_streams(max_steps=6, reach=reach), st.data()), number,
             lambda drawn, kind=kind, damage=damage: judge(
                 explain(drawn[0], damage(drawn[1].draw, serialize(drawn[0])), "damage", kind).data))
    return judged


def _both() -> dict[bool, float]:
    """CPU seconds of each generator set, taking turns seed by seed."""
    taken = {True: 0.0, False: 0.0}
    for number in SEEDS:
        for reach in (False, True):
            start = time.process_time()
            judged = certification_fuzz(reach, number)
            taken[reach] += time.process_time() - start
            assert judged["rejected"] > 0, "mutated streams must be rejected"
    return taken


def test_fuzz_reach_costs_little_beside_the_baseline(benchmark) -> None:
    taken = benchmark.pedantic(_both, rounds=1, iterations=1)
    ratio = taken[True] / taken[False]
    benchmark.extra_info.update(reach_seconds=round(taken[True], 2), baseline_seconds=round(taken[False], 2),
                                ratio_to_baseline=round(ratio, 3), seeds=len(SEEDS), examples=EXAMPLES)
    print(f"\nfuzz with reach: {taken[True]:.1f} s CPU, {ratio:.2f}x the baseline {taken[False]:.1f} s")
