"""Fixtures and settings for the project's own tests.

The installed plugin stays out of runs that certify nothing (this one included), so the
project's tests choose their own Hypothesis profile here: the fast derandomized one the
suite registers, unless ``--hypothesis-profile`` names another.
"""

from __future__ import annotations

import pytest
from hypothesis import settings

pytest_plugins = ["pytester"]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "fuzz: a property-based test driven by Hypothesis strategies")
    if not config.getoption("hypothesis_profile", None):
        settings.load_profile("asr-fast")
