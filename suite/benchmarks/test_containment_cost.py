"""What containment costs: the one-shot corpus through the reference validator with the full sandbox
and limits, and without the sandbox, in one run.  The target is at most 1.3 times the uncontained
time; ``extra_info`` records the ratio (no timed assertion: the numbers are for the report, the
verdicts are asserted).

    pytest -p no:xdist --benchmark-only suite/benchmarks/test_containment_cost.py

``test_certification_against_a_bare_loop`` puts the whole one-shot certification (pytest, the
plugin, staging, judging, recording) beside a plain loop that runs the same program on each corpus
file: the loop, then the certification with ``--sandbox none``, then with the default sandbox, one
round each in one run; ``extra_info`` keeps each one's ratio to the loop (the target with the
default sandbox is 1.2).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from asr_conformance import CORPUS_DIR
from asr_conformance.gate.verdict import EXIT_PARTIAL
from asr_conformance.harness.adapters.oneshot import OneShotValidator
from asr_conformance.harness.isolation import policies, sandbox, wrapping
from asr_conformance.harness.run_context import RunContext
from asr_conformance.vocabulary.cases import iter_cases

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
STREAMS = [case.stream for case in iter_cases(CORPUS_DIR, role="validator")]
#: Seconds each mode took in this run.
TAKEN: dict[str, float] = {}


@pytest.fixture
def mode(request: pytest.FixtureRequest) -> str:
    if request.param == "strict" and sandbox.problem():
        pytest.skip(f"no sandbox here: {sandbox.problem()}")
    return str(request.param)


def _policy(mode: str) -> policies.Policy:
    """The containment a run with ``--sandbox=mode`` gives an implementation (its run context's settings)."""
    return RunContext(policies.settings_for(sandbox=mode)).policy


def _run_all(mode: str) -> int:
    adapter = OneShotValidator([str(EXAMPLES / "reference-validator")], policy=_policy(mode))
    return sum(adapter.validate(stream).outcome.is_verdict for stream in STREAMS)


@pytest.mark.parametrize("mode", ["none", "strict"], indirect=True)
def test_one_shot_corpus_with_and_without_the_sandbox(benchmark, mode: str) -> None:
    assert benchmark.pedantic(_run_all, args=(mode,), rounds=1, iterations=1) == len(STREAMS)
    TAKEN[mode] = benchmark.stats.stats.total
    benchmark.extra_info["cases"] = len(STREAMS)
    if mode == "strict" and "none" in TAKEN:
        ratio = TAKEN["strict"] / TAKEN["none"]
        benchmark.extra_info["ratio_to_uncontained"] = round(ratio, 3)
        print(f"\ncontained: {TAKEN['strict']:.1f} s, {ratio:.2f}x the uncontained {TAKEN['none']:.1f} s")


#: Seconds (wall, CPU) each way of running the corpus took in this run.
LOOPED: dict[str, tuple[float, float]] = {}


def _children_cpu() -> float:
    spent = os.times()
    return spent.children_user + spent.children_system


def _bare_loop() -> int:
    """What a shell loop does: start the program on each file, wait, read its status."""
    answered = 0
    for stream in STREAMS:
        result = subprocess.run([str(EXAMPLES / "reference-validator"), str(stream)], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, check=False)
        answered += result.returncode in (0, 1)
    return answered


def _certify(sandbox_mode: str, report_dir: Path) -> int:
    """A vendor's certification of the reference, one process per case, as the README gives it."""
    command = [sys.executable, "-m", "pytest", f"--implementation={EXAMPLES / 'reference-validator'}",
               "-p", "no:cacheprovider", "-p", "no:benchmark", "-m", "not fuzz", "-q",
               f"--report-dir={report_dir}", *([] if sandbox_mode == "default" else [f"--sandbox={sandbox_mode}"])]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    # Without the sandbox the verdict is partial (its own exit status: a widened sandbox), conforming on what
    # was checked; with it, it conforms (on a partial run: without the fuzz properties).
    if sandbox_mode == "none":
        assert result.returncode == EXIT_PARTIAL, result.stdout[-3000:]
        assert "conforms on what was checked" in result.stdout, result.stdout[-3000:]
    else:
        assert result.returncode == 0 and "verdict: CONFORMS" in result.stdout, result.stdout[-3000:]
    return len(STREAMS)


@pytest.mark.parametrize("way", ["bare", "none", "default"])
def test_certification_against_a_bare_loop(benchmark, way: str, tmp_path: Path) -> None:
    if way == "default" and sandbox.problem():
        pytest.skip(f"no sandbox here: {sandbox.problem()}")
    cpu_before, started = _children_cpu(), time.perf_counter()
    if way == "bare":
        answered = benchmark.pedantic(_bare_loop, rounds=1, iterations=1)
    else:
        answered = benchmark.pedantic(_certify, args=(way, tmp_path / "report"), rounds=1, iterations=1)
    assert answered == len(STREAMS)
    LOOPED[way] = (time.perf_counter() - started, _children_cpu() - cpu_before)
    wall, cpu = LOOPED[way]
    benchmark.extra_info.update({"cases": len(STREAMS), "wall_seconds": round(wall, 2), "cpu_seconds": round(cpu, 2),
                                 "ms_per_case": round(1000 * wall / len(STREAMS), 1)})
    if way != "bare" and "bare" in LOOPED:
        bare_wall, bare_cpu = LOOPED["bare"]
        benchmark.extra_info["ratio_to_bare_loop"] = round(wall / bare_wall, 3)
        if way == "none":
            # Inside the sandbox's PID namespace the validators are not this process's reaped children,
            # so their CPU seconds are not counted: only the uncontained run has a CPU ratio.
            benchmark.extra_info["cpu_ratio_to_bare_loop"] = round(cpu / bare_cpu, 3)
        print(f"\n{way}: {wall:.1f} s, {wall / bare_wall:.2f}x the bare loop's {bare_wall:.1f} s (CPU {cpu:.1f} s)")


#: Seconds one command line took to build, with and without the check of the finished line.
BUILT: dict[str, float] = {}


@pytest.mark.parametrize("checked", [False, True], ids=["unchecked", "checked"])
def test_building_a_sandbox_command_line_with_and_without_its_check(benchmark, checked: bool,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """What the canonical path decisions and ``visibility.violations`` add to each start (the walk for hidden
    entries is reused between starts, as in a run)."""
    if sandbox.problem():
        pytest.skip(f"no sandbox here: {sandbox.problem()}")
    from asr_conformance.harness.isolation import visibility
    from asr_conformance.harness.isolation.boxes import Box

    if not checked:
        monkeypatch.setattr(visibility, "violations", lambda *_: [])
    policy = _policy("strict")
    box = Box(policy.settings)
    try:
        line = benchmark(wrapping.wrap, [str(EXAMPLES / "reference-validator")], box, None, (), policy)
    finally:
        box.close()
    assert line[0].endswith("bwrap")
    BUILT["checked" if checked else "unchecked"] = benchmark.stats.stats.mean
    if checked and "unchecked" in BUILT:
        ratio = BUILT["checked"] / BUILT["unchecked"]
        benchmark.extra_info["ratio_to_unchecked"] = round(ratio, 3)
        print(f"\nchecked: {BUILT['checked'] * 1000:.2f} ms, {ratio:.2f}x the unchecked {BUILT['unchecked'] * 1000:.2f} ms")
