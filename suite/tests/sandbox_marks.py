"""Skip marks of the containment tests: those that need the bubblewrap sandbox, and the attacks only
root can make (CI runs as root, with bubblewrap installed); and the containment a test's run would have
(``contained``), built as the plugin builds it."""

from __future__ import annotations

import os

import pytest

from asr_conformance.harness.isolation import policies, sandbox
from asr_conformance.harness.run_context import RunContext

#: Why there is no sandbox here ("" when there is one).
PROBLEM = sandbox.problem()
needs_sandbox = pytest.mark.skipif(bool(PROBLEM), reason=f"no bubblewrap sandbox here: {PROBLEM}")
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="the attack is root's: run as root (CI does)")


def contained(**settings: object) -> policies.Policy:
    """The containment a run with these settings gives an implementation without a manifest (what the plugin's
    ``RunContext.contained`` puts in a target's policy); nothing is set on a module."""
    return RunContext(policies.settings_for(**settings)).policy
