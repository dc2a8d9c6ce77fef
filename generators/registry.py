"""Every mutator, gathered: the one place that imports the per-page mutator modules.

The per-page modules register their mutators into ``mutators.MUTATORS`` with the
``@mutator`` decorator; importing them here (and nowhere in ``mutators``) keeps the
imports one way: ``mutators`` <- ``mutators_session``/``mutators_tools`` <- ``registry``.
"""

from __future__ import annotations

from asr_conformance.generators import mutators_session, mutators_tools
from asr_conformance.generators.mutators import MUTATORS, NO_MUTATOR, Mode, Mutator, declared_modes

#: Rule IDs a validator may name besides a mutator's own rule, by rule (each page module's ALSO_NAMED).
ALSO_NAMED: dict[str, frozenset[str]] = {
    rule: frozenset().union(*(getattr(m, "ALSO_NAMED", {}).get(rule, ()) for m in (mutators_session, mutators_tools)))
    for rule in {r for m in (mutators_session, mutators_tools) for r in getattr(m, "ALSO_NAMED", {})}
}


def registry() -> dict[str, Mutator]:
    """Every registered mutator by rule ID."""
    return MUTATORS


def reasons() -> dict[str, str]:
    """Why each stream rule without a mutator has none."""
    return NO_MUTATOR


def all_modes() -> list[Mode]:
    """Every mode of every registered mutator, by rule."""
    return [mode for rule in sorted(MUTATORS) for mode in declared_modes(rule).values()]
