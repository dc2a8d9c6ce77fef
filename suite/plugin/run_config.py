"""What this run's options mean, read from the pytest config: the implementations under test,
the corpus, the Hypothesis facts and the options recorded in the report.

Shared by the hooks and the session object, so that neither imports the other's module.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from asr_conformance import CORPUS_DIR
from asr_conformance.harness.targets import Target

TARGETS_KEY = pytest.StashKey[list[Target]]()
SEED_KEY = pytest.StashKey[object]()


def hypothesis_facts(config: pytest.Config) -> dict[str, Any]:
    from hypothesis import settings

    seed = config.stash.get(SEED_KEY, None)
    return {"profile": settings._current_profile,  # type: ignore[attr-defined]
            "seed": seed if isinstance(seed, int) else None}


def run_options(config: pytest.Config) -> dict[str, Any]:
    """The options that shape a run, for the report."""
    return {
        "roles": {t.key: list(t.roles) for t in targets_of(config)},
        "partial": bool(partial_selection(config)),
        "markers": config.getoption("markexpr") or None,
        "keywords": config.getoption("keyword") or None,
        "timeout": config.getoption("asr_timeout"),
        "persistent": config.getoption("persistent"),
        "check_protocol": config.getoption("check_protocol"),
        "workers": getattr(config.option, "numprocesses", None),
        "expectations": config.getoption("expectations"),
        "baseline": config.getoption("baseline"),
        "arguments": list(config.invocation_params.args),
    }


def corpus_of(config: pytest.Config) -> Path:
    given = config.getoption("cases")
    return Path(given).resolve() if given else CORPUS_DIR


def targets_of(config: pytest.Config) -> list[Target]:
    return config.stash[TARGETS_KEY]


def target_of(config: pytest.Config) -> Target:
    """The first (usually the only) implementation under test."""
    return targets_of(config)[0]


def partial_selection(config: pytest.Config) -> str:
    """The -m / -k selection that narrowed the run, or '' for a full run."""
    parts = []
    if config.getoption("markexpr"):
        parts.append(f"-m {config.getoption('markexpr')!r}")
    if config.getoption("keyword"):
        parts.append(f"-k {config.getoption('keyword')!r}")
    return ", ".join(parts)
