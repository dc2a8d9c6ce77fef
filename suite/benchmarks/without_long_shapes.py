"""A pytest plugin for the long-shape cost benchmark only: the certification it is loaded into
draws no long shapes (``generators.long_streams``) and no long native sessions
(``generators.native.long_sessions``), the baseline the benchmark compares with.

    pytest -p without_long_shapes -k "not scale"     (with suite/benchmarks on PYTHONPATH)
"""

from __future__ import annotations

import pytest
from hypothesis import strategies as st

from asr_conformance.generators import long_streams
from asr_conformance.generators.native import long_sessions


def pytest_configure(config: pytest.Config) -> None:
    """Before the conformance modules are collected (they import ``long_shapes`` by name)."""

    def none(enabled: bool = True) -> st.SearchStrategy[long_streams.LongShape]:
        return st.just(long_streams.NO_SHAPE)

    long_streams.long_shapes = none  # type: ignore[assignment]
    long_sessions.enable(False)
