"""What containment costs: the one-shot corpus through the reference validator with the full sandbox
and limits, and without the sandbox, in one run.  The target is at most 1.3 times the uncontained
time; ``extra_info`` records the ratio (no timed assertion: the numbers are for the report, the
verdicts are asserted).

    pytest -p no:xdist --benchmark-only suite/benchmarks/test_containment_cost.py
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from asr_conformance import CORPUS_DIR
from asr_conformance.harness import containment, sandbox
from asr_conformance.harness.oneshot import OneShotValidator
from asr_conformance.vocabulary.cases import iter_cases

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
STREAMS = [case.stream for case in iter_cases(CORPUS_DIR, role="validator")]
#: Seconds each mode took in this run.
TAKEN: dict[str, float] = {}


@pytest.fixture
def mode(request: pytest.FixtureRequest) -> Iterator[str]:
    if request.param == "strict" and sandbox.problem():
        pytest.skip(f"no sandbox here: {sandbox.problem()}")
    previous = containment.settings().sandbox
    containment.configure(sandbox=request.param)
    yield request.param
    containment.configure(sandbox=previous)


def _run_all() -> int:
    adapter = OneShotValidator([str(EXAMPLES / "reference-validator")])
    return sum(adapter.validate(stream).outcome.is_verdict for stream in STREAMS)


@pytest.mark.parametrize("mode", ["none", "strict"], indirect=True)
def test_one_shot_corpus_with_and_without_the_sandbox(benchmark, mode: str) -> None:
    assert benchmark.pedantic(_run_all, rounds=1, iterations=1) == len(STREAMS)
    TAKEN[mode] = benchmark.stats.stats.total
    benchmark.extra_info["cases"] = len(STREAMS)
    if mode == "strict" and "none" in TAKEN:
        ratio = TAKEN["strict"] / TAKEN["none"]
        benchmark.extra_info["ratio_to_uncontained"] = round(ratio, 3)
        print(f"\ncontained: {TAKEN['strict']:.1f} s, {ratio:.2f}x the uncontained {TAKEN['none']:.1f} s")


#: Seconds one command line took to build, with and without the check of the finished line.
BUILT: dict[str, float] = {}


@pytest.mark.parametrize("checked", [False, True], ids=["unchecked", "checked"])
def test_building_a_sandbox_command_line_with_and_without_its_check(benchmark, checked: bool,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """What the canonical path decisions and ``visibility.violations`` add to each start (the walk for hidden
    entries is reused between starts, as in a run)."""
    if sandbox.problem():
        pytest.skip(f"no sandbox here: {sandbox.problem()}")
    from asr_conformance.harness import visibility
    from asr_conformance.harness.containment import Box

    if not checked:
        monkeypatch.setattr(visibility, "violations", lambda *_: [])
    previous = containment.settings().sandbox
    containment.configure(sandbox="strict")
    box = Box()
    try:
        line = benchmark(containment.wrap, [str(EXAMPLES / "reference-validator")], box, None)
    finally:
        box.close()
        containment.configure(sandbox=previous)
    assert line[0].endswith("bwrap")
    BUILT["checked" if checked else "unchecked"] = benchmark.stats.stats.mean
    if checked and "unchecked" in BUILT:
        ratio = BUILT["checked"] / BUILT["unchecked"]
        benchmark.extra_info["ratio_to_unchecked"] = round(ratio, 3)
        print(f"\nchecked: {BUILT['checked'] * 1000:.2f} ms, {ratio:.2f}x the unchecked {BUILT['unchecked'] * 1000:.2f} ms")
