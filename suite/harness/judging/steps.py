"""Steps of the suite's own, each bounded in time: past its limit, a step raises ``StepHung`` naming
what it was doing and on which input, rather than holding the run with its progress line frozen.

A producer certification disguises each input, reads it with a witness, edits it, and compares
streams with the input's facts and with each other.  Each is linear in the input's size, but a slip
(or an input of a shape nobody foresaw) must fail that case with a sentence, never hang the run.
The step runs in a thread of its own; past the limit the thread is left behind (a daemon) and the
case is the suite's error (the run is incomplete), never a verdict on the implementation.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

#: How long another step of the suite's own may take on an input (a witness reading it, a stream compared
#: with its facts or with another stream): a floor, and more per megabyte of what the step reads.
STEP_SECONDS = 120.0
STEP_SECONDS_PER_MB = 30.0


class StepHung(Exception):
    """A step of the suite's own (disguising an input, reading it, comparing a stream) outlived its time:
    the run is incomplete, and the message names the step and the input."""


def step_limit(size: int) -> float:
    """The time a step of the suite's own may take over ``size`` bytes."""
    return STEP_SECONDS + STEP_SECONDS_PER_MB * size / 1e6


def within(seconds: float, what: str, function: Callable[..., Any], *args: Any) -> Any:
    """``function(*args)`` in a thread of its own, or ``StepHung`` naming ``what`` when it outlives ``seconds``."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = function(*args)
        except BaseException as error:  # noqa: BLE001  (raised again below, in the caller's thread)
            box["error"] = error

    worker = threading.Thread(target=run, name=f"suite-{what[:40]}", daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        raise StepHung(f"the suite's own step did not finish: {what} took over {seconds:g} s")
    if "error" in box:
        raise box["error"]
    return box["value"]
