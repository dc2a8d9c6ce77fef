"""One run's context: what the plugin decides once in ``pytest_configure`` and hands to what needs it.

The plugin makes one ``RunContext`` per process (the controller and each xdist worker alike, from the
same options and the values the controller sends) and keeps it on ``config.stash``; nothing of a run is
set on a module.  Implementations get the run's containment settings through their targets
(``contained``): every adapter a target builds starts its processes under them.  The fuzz sessions get
``long_shapes`` from it, and their seed (which seeds the long examples' pools) from the run's seed, and
hand both to the strategies they draw from.

What stays process-wide, and why: the registry of live implementation processes, the staging folders
this process made and the signal handlers that use both (``harness.isolation``) — a signal handler
reaches nothing but a module — and the redaction of passed-through variables' values
(``vocabulary.redaction``), which must cover every text the process writes, pytest's own included.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from asr_conformance.harness.adapters.targets import Target
from asr_conformance.harness.isolation.policies import DEFAULT_SETTINGS, Policy, Settings, settings_of


@dataclass(frozen=True)
class RunContext:
    """The run's containment settings and what its fuzz examples may be (frozen), made once and passed on."""

    settings: Settings = DEFAULT_SETTINGS
    #: Whether fuzz examples may be long (long shapes of streams, long native sessions and the producer's long
    #: properties); false only in the cost benchmark's baseline (``suite/benchmarks/without_long_shapes.py``).
    long_shapes: bool = True

    @property
    def policy(self) -> Policy:
        """The containment of a start that has no manifest of its own (the run header's, the report's)."""
        return Policy(settings=self.settings)

    def contained(self, target: Target) -> Target:
        """``target`` with the run's settings in its policy: every adapter it builds starts under them."""
        policy = target.policy or Policy()
        if settings_of(policy) is self.settings:
            return target
        return dataclasses.replace(target, policy=dataclasses.replace(policy, settings=self.settings))
