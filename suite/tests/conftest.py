"""Fixtures and settings for the project's own tests.

The installed plugin stays out of runs that certify nothing (this one included), so the
project's tests choose their own Hypothesis profile here: the fixed-example one the suite
registers (``asr-fixed``), unless ``--hypothesis-profile`` names another.  The certification
runs these tests start in subprocesses use it too (through ``ASR_HYPOTHESIS_PROFILE``), so
that what a test expects of fuzzing does not hang on a random seed; the tests of the default
profile's randomness clear the variable.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

from asr_conformance.harness.fuzzing import ensure_profiles

pytest_plugins = ["pytester"]

os.environ.setdefault("ASR_HYPOTHESIS_PROFILE", "asr-fixed")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "fuzz: a property-based test driven by Hypothesis strategies")
    ensure_profiles()  # the suite's plugin registers them only in certification runs
    if not config.getoption("hypothesis_profile", None):
        settings.load_profile("asr-fixed")
