"""What installing the suite costs a pytest run that certifies nothing: loading the ``pytest11`` entry point.

Each figure comes from fresh interpreters that import pytest first (as pytest itself has when it loads
entry points): the milliseconds the entry module's import adds, against the same for the harness plugin
the entry point defers, and each child's whole wall time against a child that imports pytest alone.
``extra_info`` records the figures and their ratios (no timed assertion: what is asserted is that the
entry point is the one pytest loads).  Target: the entry point adds at most 30 ms.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from importlib.metadata import entry_points

ROUNDS = 5
CHILD = '''
import time
import pytest
started = time.perf_counter()
{imports}
print((time.perf_counter() - started) * 1000)
'''


def _entry_module() -> str:
    (entry,) = [e for e in entry_points(group="pytest11") if e.name == "asr_conformance.plugin"]
    return entry.value


def _child(imports: str) -> tuple[float, float]:
    """(milliseconds the imports took after pytest, the child's whole wall time in milliseconds)."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", CHILD.format(imports=imports)], capture_output=True, text=True,
                          check=True)
    return float(done.stdout.strip()), (time.perf_counter() - started) * 1000


def _measure() -> dict[str, tuple[float, float]]:
    """Median over ROUNDS of each child, the children interleaved so that a busy machine hits them alike."""
    kinds = {"pytest-only": "pass", "entry-point": f"import {_entry_module()}",
             "harness-plugin": "import asr_conformance.plugin.hooks"}
    seen: dict[str, list[tuple[float, float]]] = {kind: [] for kind in kinds}
    for _ in range(ROUNDS):
        for kind, imports in kinds.items():
            seen[kind].append(_child(imports))
    return {kind: (statistics.median(i for i, _ in found), statistics.median(w for _, w in found))
            for kind, found in seen.items()}


def test_entry_point_load_cost(benchmark) -> None:
    assert _entry_module() == "asr_conformance.plugin.entry"
    figures = benchmark.pedantic(_measure, rounds=1, iterations=1)
    entry_ms, entry_wall = figures["entry-point"]
    harness_ms, harness_wall = figures["harness-plugin"]
    _, baseline_wall = figures["pytest-only"]
    benchmark.extra_info.update({
        "entry_import_ms": round(entry_ms, 2), "harness_import_ms": round(harness_ms, 2),
        "pytest_only_wall_ms": round(baseline_wall, 1), "entry_wall_ms": round(entry_wall, 1),
        "harness_wall_ms": round(harness_wall, 1),
        "entry_wall_ratio_to_pytest_only": round(entry_wall / baseline_wall, 3),
        "harness_wall_ratio_to_pytest_only": round(harness_wall / baseline_wall, 3),
        "entry_import_ratio_to_harness": round(entry_ms / harness_ms, 4) if harness_ms else None,
    })
    print(f"\nentry point: +{entry_ms:.1f} ms after pytest (wall {entry_wall / baseline_wall:.2f}x pytest alone); "
          f"the deferred harness plugin: +{harness_ms:.1f} ms (wall {harness_wall / baseline_wall:.2f}x)")
