"""Draws that depend on the seed alone, not on what else the process has loaded.

Hypothesis mixes constants into what it draws: now and then (one draw in twenty) an integer, float,
string or bytes value is taken from a pool instead of drawn afresh.  Besides its own fixed pool it
keeps one of constants read from every "local" module loaded in the process (any module outside
the standard library and site-packages that is not a test file), and that pool grows as modules are
imported.  So one ``--hypothesis-seed`` drew other examples depending on whether the suite is
installed editable or not, on the certifying project's own ``conftest.py`` files, and on which tests
an xdist worker ran before a property (which harness modules it had imported by then): the printed
replay was not a replay, and derandomized properties drew differently in different test orders.

``seed_alone`` leaves the local pool out while a property runs, so that the same seed draws the same
examples wherever it runs; Hypothesis' own pool of constants stays.  Hypothesis offers no public
switch for this, so it replaces the one internal function that hands out the local pool, for the
duration of the property only, and does nothing where that function is gone (a Hypothesis that
reads no local constants needs nothing done).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


def _providers() -> Any:
    """Hypothesis' providers module, when it hands out local constants as this module expects (else None)."""
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover - every supported Hypothesis has it
        return None
    if not callable(getattr(providers, "_get_local_constants", None)) or not hasattr(providers, "Constants"):
        return None
    return providers


@contextmanager
def seed_alone() -> Iterator[None]:
    """While inside, Hypothesis draws from its own constants only, never from the modules this process loaded."""
    providers = _providers()
    if providers is None:
        yield
        return
    found = providers._get_local_constants
    none = providers.Constants()
    cache = getattr(providers, "CONSTANTS_CACHE", None)
    clear = getattr(getattr(cache, "cache", None), "clear", None)
    providers._get_local_constants = lambda: none
    if callable(clear):
        clear()  # allowed constants computed with the local pool, keyed by a draw's constraints
    try:
        yield
    finally:
        providers._get_local_constants = found
        if callable(clear):
            clear()
