"""Skip marks of the containment tests: those that need the bubblewrap sandbox, and the attacks only
root can make (CI runs as root, with bubblewrap installed)."""

from __future__ import annotations

import os

import pytest

from asr_conformance.harness import sandbox

#: Why there is no sandbox here ("" when there is one).
PROBLEM = sandbox.problem()
needs_sandbox = pytest.mark.skipif(bool(PROBLEM), reason=f"no bubblewrap sandbox here: {PROBLEM}")
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="the attack is root's: run as root (CI does)")
