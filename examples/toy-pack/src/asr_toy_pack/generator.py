"""Hypothesis strategies of toy transcripts, one per named feature (the pack's ``generator``)."""

from __future__ import annotations

import json

from hypothesis import strategies as st

from asr_conformance.generators.native.common import NativeTranscript, awkward_text, clock, words
from asr_toy_pack.witness import FORMAT

FEATURES = {
    "plain": "messages only",
    "calls": "several calls, each with a result",
    "dangling": "a call without a result",
    "exit-codes": "results with exit codes, some of them failures",
    "result-times": "results with their own time, later than their call's",
}
VARIANTS = ("v1",)


@st.composite
def _transcript(draw: st.DrawFn, feature: str) -> NativeTranscript:
    time = clock(draw)
    events: list[dict] = [{"at": time.tick(draw), "user": draw(awkward_text)}]
    calls = 0 if feature == "plain" else draw(st.integers(2, 5))
    for number in range(calls):
        event: dict = {"at": time.tick(draw), "call": {"id": f"c{number}-{draw(words)}", "tool": draw(words),
                                                        "args": {"cmd": draw(awkward_text)}}}
        if not (feature == "dangling" and number == calls - 1):
            result: dict = {"ok": draw(st.booleans()), "out": draw(awkward_text)}
            if feature == "exit-codes":
                result["exit"] = draw(st.integers(0, 255))
            if feature == "result-times":
                result["at"] = time.tick(draw)
            event["result"] = result
        events.append(event)
    events.append({"at": time.tick(draw), "agent": draw(awkward_text)})
    document = {"toy": 1, "session": f"t-{draw(words)}", "agent": "0.3.0", "events": events}
    return NativeTranscript(FORMAT, "v1", (json.dumps(document, ensure_ascii=False),), frozenset({feature}))


def transcripts(feature: str, variant: str | None = None) -> st.SearchStrategy[NativeTranscript]:
    """Toy transcripts holding ``feature``; valid by construction."""
    if feature not in FEATURES:
        raise ValueError(f"unknown toy feature {feature!r}")
    return _transcript(feature)
