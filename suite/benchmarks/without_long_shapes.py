"""A pytest plugin for the long-shape cost benchmark only: the certification it is loaded into
draws no long shapes (``generators.long_streams``), no long native sessions
(``generators.native.long_sessions``) and has no long producer property, the baseline the benchmark
compares with.

    pytest -p without_long_shapes -k "not scale"     (with suite/benchmarks on PYTHONPATH)

It says so on the run's context (``RunContext.long_shapes``), which the fuzz sessions and the producer
fuzz plan read; nothing is set on a module.
"""

from __future__ import annotations

import dataclasses

import pytest

from asr_conformance.plugin.run_config import RUN_CONTEXT_KEY


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    """After the harness plugin made the run's context (every process, xdist workers included, loads this
    plugin and makes its own), before collection works out the producer fuzz plan."""
    context = config.stash.get(RUN_CONTEXT_KEY, None)
    if context is None:
        raise pytest.UsageError("without_long_shapes: not a certification run (no run context to change)")
    config.stash[RUN_CONTEXT_KEY] = dataclasses.replace(context, long_shapes=False)
