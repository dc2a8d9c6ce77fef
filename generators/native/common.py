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

#: The earliest start a generated session is drawn from, and how many days after it the latest lies:
#: sessions start at any time over years, so no date or hour marks a generated input.
EPOCH = datetime(2025, 6, 1, tzinfo=UTC)
START_DAYS = 3 * 365
#: Pauses a person takes between turns: mostly seconds, sometimes hours, now and then days.
LONG_PAUSE_MS = 3 * 86_400_000

#: People's login names and project names, drawn apart so that a path is never one of a few.
user_names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=2, max_size=12) | st.builds(
    "{}.{}".format, words, words)
project_names = st.builds(lambda head, tail, digits: head + tail + digits, words,
                          st.sampled_from(["", "-app", "-api", "_cli", "-web", "-core", ".rs", "-service"]),
                          st.sampled_from(["", "2", "-v3", "-2026"]))


def clock(draw: st.DrawFn, start_days: int = START_DAYS, first: datetime = EPOCH) -> Clock:
    """A clock at a start drawn over years (to the millisecond), for timestamps that only move forward."""
    start = first + timedelta(days=draw(st.integers(0, start_days)), milliseconds=draw(st.integers(0, 86_399_999)))
    return Clock(start)


def project_path(draw: st.DrawFn, roots: tuple[str, ...] = ("home", "Users", "srv", "workspaces")) -> str:
    """A POSIX project folder under one of the roots, with a drawn user and project: ``/home/ana/ledger-api``."""
    root, user, project = draw(st.sampled_from(roots)), draw(user_names), draw(project_names)
    middle = draw(st.sampled_from(["", "src/", "code/", "work/", "projects/", "git/"]))
    if root == "home":
        return f"/home/{user}/{middle}{project}"
    if root == "Users":
        return f"/Users/{user}/{middle or 'Developer/'}{project}"
    if root == "srv":
        return f"/srv/{middle}{project}"
    return f"/{root}/{project}"


def version(draw: st.DrawFn, ranges: tuple[tuple[int, int, int, int], ...]) -> str:
    """``major.minor.patch`` with the patch drawn within one (major, minor, lowest patch, highest patch) range."""
    major, minor, low, high = draw(st.sampled_from(ranges))
    return f"{major}.{minor}.{draw(st.integers(low, high))}"


class Clock:
    """Timestamps that move forward by drawn steps, written as the agents write them (UTC, milliseconds, Z)."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def tick(self, draw: st.DrawFn, most_ms: int = 30_000) -> str:
        """A later time: up to ``most_ms`` on; between turns (``most_ms`` of 30 s or more) now and then a pause of
        up to days, which shrinks away."""
        long = most_ms >= 30_000 and draw(st.integers(0, 11)) == 11
        step = draw(st.integers(most_ms, LONG_PAUSE_MS) if long else st.integers(1, most_ms))
        self.now += timedelta(milliseconds=step)
        return self.stamp()

    def stamp(self) -> str:
        return self.now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{self.now.microsecond // 1000:03d}Z"


def feature_names(features: Mapping[str, str]) -> tuple[str, ...]:
    """The features in a stable order, for parametrizing tests."""
    return tuple(sorted(features))
