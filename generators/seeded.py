"""Drawing from Hypothesis strategies outside Hypothesis's search: one random source, no shrinking.

The long stretches of generated material (``filler``, the long sessions of ``native``) are made by the
generators' own builders, which draw from strategies; drawn through the example being searched, thousands
of records would cost thousands of choices to make and to shrink.  ``drawing`` gives a ``draw`` backed by a
seeded random source instead: the example holds one choice (the seed), and what is drawn from it is the
same for the same seed.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from hypothesis import strategies as st
from hypothesis.control import BuildContext
from hypothesis.errors import StopTest
from hypothesis.internal.conjecture.data import ConjectureData
from hypothesis.internal.conjecture.providers import HypothesisProvider

#: Raised when a draw runs past Hypothesis's own limits (drawn again by the caller).
Overrun = StopTest


class _OwnChoices(HypothesisProvider):
    """Hypothesis's own provider, without the constants it mixes in now and then: those include literals
    of the modules loaded so far, which differ from one process to another (an xdist worker, a campaign,
    a replay), and the same seed must draw the same everywhere."""

    def _maybe_draw_constant(self, choice_type: Any, constraints: Any, *, p: float = 0.05) -> Any:
        return None


class _Texts(_OwnChoices):
    """``_OwnChoices`` that keeps every string it draws (``strings``), so that a caller can tell the free texts
    of what was drawn (a strategy's text) from the values it picked from lists or built."""

    strings: list[str]

    def draw_string(self, *args: Any, **kwargs: Any) -> str:
        drawn: str = super().draw_string(*args, **kwargs)
        self.strings.append(drawn)
        return drawn


@contextmanager
def drawing(rng: random.Random, strings: list[str] | None = None) -> Iterator[Callable[[st.SearchStrategy[Any]], Any]]:
    """A ``draw`` (as a composite strategy gets) whose choices come from ``rng`` alone; every string drawn as
    text is appended to ``strings`` when it is given."""
    if strings is None:
        data = ConjectureData(random=rng, provider=_OwnChoices)
    else:
        provider = type("_KeptTexts", (_Texts,), {"strings": strings})
        data = ConjectureData(random=rng, provider=provider)
    with BuildContext(data, wrapped_test=lambda: None):
        yield data.draw
