"""What both native-transcript generators share: the transcript value and text strategies.

A generated transcript is kept as serialized lines, not objects, so that a generator can write
what ``json.dumps`` would not choose on its own (integers past 2**53, key orders, spacing), as
real agents do."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import strategies as st


@dataclass(frozen=True)
class NativeTranscript:
    """One generated native input: its format, its variant, its lines and the features it holds."""

    #: The witness format name (``producer.source.format``): ``claude-code-jsonl``, ``codex-rollout-jsonl``.
    format: str
    #: Which variant of the format the lines follow (``session``; ``cli``, ``desktop``, ``old``, ``legacy``).
    variant: str
    #: Each line's JSON text, without its newline.
    lines: tuple[str, ...]
    #: The adversarial features the lines hold (a subset of the format's ``FEATURES``).
    features: frozenset[str]

    def data(self) -> bytes:
        """The file's bytes: UTF-8, one line each, a final newline."""
        return ("\n".join(self.lines) + "\n").encode("utf-8")

    def summary(self) -> str:
        """One line for failure messages: format, variant, size and features."""
        held = ", ".join(sorted(self.features)) or "none"
        return f"a generated {self.format} transcript ({self.variant}, {len(self.lines)} lines; features: {held})"


def dumps(value: Any) -> str:
    """Compact JSON as the agents write it (non-ASCII kept as is)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


#: Text of any Unicode code point a JSON string can carry in UTF-8 (no lone surrogates).
unicode_text = st.text(st.characters(exclude_categories=["Cs"]), max_size=40)
#: Text with what converters like to "clean": runs of spaces, tabs, blank lines, trailing newlines, NUL.
awkward_text = st.lists(
    st.sampled_from(["  ", "\t", "\n\n", "\r\n", " \n", "\u00a0", "\u200b", "\x00", "é", "🦀", "e\u0301"])
    | st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=12),
    min_size=1, max_size=8,
).map("".join)
#: Plain words, for names and commands a person would read.
words = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=10)

EPOCH = datetime(2026, 3, 1, tzinfo=UTC)


def clock(draw: st.DrawFn, start_days: int = 300) -> Clock:
    """A clock at a drawn start time, for timestamps that only move forward."""
    start = EPOCH + timedelta(days=draw(st.integers(0, start_days)), milliseconds=draw(st.integers(0, 86_399_999)))
    return Clock(start)


class Clock:
    """Timestamps that move forward by drawn steps, written as the agents write them (UTC, milliseconds, Z)."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def tick(self, draw: st.DrawFn, most_ms: int = 30_000) -> str:
        self.now += timedelta(milliseconds=draw(st.integers(1, most_ms)))
        return self.stamp()

    def stamp(self) -> str:
        return self.now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{self.now.microsecond // 1000:03d}Z"


def feature_names(features: Mapping[str, str]) -> tuple[str, ...]:
    """The features in a stable order, for parametrizing tests."""
    return tuple(sorted(features))
