"""pytest plugin of asr-conformance (entry point ``asr_conformance.plugin``)."""

from __future__ import annotations

import pytest

MARKERS = {
    "corpus": "a test that runs one case of the case corpus",
    "fuzz": "a property-based test driven by Hypothesis strategies",
    "slow": "a long-running test, excluded from the default run",
}


def pytest_configure(config: pytest.Config) -> None:
    for name, description in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {description}")
