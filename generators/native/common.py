"""What both native-transcript generators share: the transcript value and text strategies.

A generated transcript is kept as serialized lines, not objects, so that a generator can write
what ``json.dumps`` would not choose on its own (integers past 2**53, key orders, spacing), as
real agents do."""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import strategies as st

from asr_conformance.vocabulary.words import CONTENT


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
#: Plain words, for names and commands a person would read (``vocabulary.words``: real words, not letters).
words = st.sampled_from(CONTENT)

# --- text as people, models and tools write it --------------------------------------------------

#: Glue words, in the order a sentence needs them.
_OPENERS = ("Can you", "Please", "I think we should", "Let's", "Could you", "Now", "Next,", "I'll", "We need to",
            "Then", "First,", "It looks like we should", "Why does it", "When I", "Help me")
_LINKS = ("the", "a", "this", "that", "our", "my", "every", "each", "the new", "the old", "one")
_JOINS = ("and", "but", "so", "because", "when", "after", "before", "while", "then", "if")
_TAILS = (".", ".", ".", "?", "!", ":")
_LANGS = ("python", "rust", "ts", "go", "bash", "")
_TOOLS = ("git", "cargo", "npm", "pytest", "python", "go", "make", "rg", "sed", "ls", "cat", "docker")
_FLAGS = ("-q", "-n", "-v", "--all", "-p", "-la", "--release", "-x", "--short", "-k")
_EXTENSIONS = (".py", ".rs", ".ts", ".go", ".md", ".toml", ".json", ".sh", ".txt", ".yaml")


def _sentence(rng: random.Random, most: int = 14) -> str:
    """A sentence a person or a model writes: an opener, content words with articles, a join, an end."""
    parts = [rng.choice(_OPENERS)]
    for index in range(rng.randint(1, max(1, most // 3))):
        if index:
            parts.append(rng.choice(_JOINS))
        parts += [rng.choice(CONTENT), rng.choice(_LINKS), rng.choice(CONTENT)]
    return " ".join(parts) + rng.choice(_TAILS)


def _path(rng: random.Random) -> str:
    """A source file's path: ``src/ledger/parse_lines.rs``."""
    folders = [rng.choice(CONTENT) for _ in range(rng.randint(0, 3))]
    name = "_".join(rng.choice(CONTENT) for _ in range(rng.randint(1, 2)))
    return "/".join(["src", *folders, name + rng.choice(_EXTENSIONS)])


def _command(rng: random.Random) -> str:
    """A command line: a tool, flags, a path or a word."""
    tool = rng.choice(_TOOLS)
    parts = [tool, *(rng.choice(_FLAGS) for _ in range(rng.randint(0, 2))), rng.choice((_path(rng), rng.choice(CONTENT)))]
    return " ".join(parts) + rng.choice(("", "", " | head -20", " 2>&1", f" && {tool} {rng.choice(CONTENT)}"))


def _code(rng: random.Random) -> str:
    """A few lines of a program: a function with a condition, a call and a return."""
    def word() -> str:
        return rng.choice(CONTENT)

    argument, field = word(), word()
    body = [f"def {word()}_{word()}({argument}):", f"    if not {argument}.{field}:",
            f"        raise ValueError(\"{word()} is empty\")",
            f"    {word()} = {argument}.{word()}({rng.randint(0, 99)})", f"    return {argument}.{field}"]
    return "\n".join(body[:rng.randint(2, len(body))])


def _error(rng: random.Random) -> str:
    """An error a tool prints: a file, a line, what was expected."""
    where = f"{_path(rng)}:{rng.randint(1, 900)}:{rng.randint(1, 80)}"
    return rng.choice((
        f"error: expected `{rng.choice(CONTENT)}`, found `{rng.choice(CONTENT)}`\n  --> {where}",
        f"Traceback (most recent call last):\n  File \"{_path(rng)}\", line {rng.randint(1, 900)}\n"
        f"KeyError: '{rng.choice(CONTENT)}'",
        f"FAILED tests/test_{rng.choice(CONTENT)}.py::test_{rng.choice(CONTENT)} - AssertionError",
        f"{where}: {rng.choice(CONTENT)} is not defined",
    ))


def _prompt(rng: random.Random) -> str:
    """What a person types: one to three sentences, now and then with a path, a command or an error."""
    parts = [_sentence(rng) for _ in range(rng.randint(1, 3))]
    extra = rng.randint(0, 5)
    if extra == 1:
        parts.append(f"Look at {_path(rng)}.")
    elif extra == 2:
        parts.append(f"Run `{_command(rng)}` first.")
    elif extra == 3:
        parts.append("I get this:\n" + _error(rng))
    return " ".join(parts)


def _reply(rng: random.Random) -> str:
    """What a model writes back: sentences, at times a code block or a list of steps."""
    parts = [" ".join(_sentence(rng) for _ in range(rng.randint(1, 3)))]
    shape = rng.randint(0, 4)
    if shape == 1:
        parts.append(f"```{rng.choice(_LANGS)}\n{_code(rng)}\n```")
    elif shape == 2:
        parts.append("\n".join(f"{n}. {_sentence(rng, 6)}" for n in range(1, rng.randint(2, 4) + 1)))
    return "\n\n".join(parts)


def _output(rng: random.Random, most_bytes: int) -> str:
    """What a tool prints: a few lines, an error; in one draw in sixteen a long numbered file (up to
    ``most_bytes``, its drawn lines repeated, so it costs little to make)."""
    shape = rng.randint(0, 15)
    if shape == 1:
        return _error(rng)
    lines = [rng.choice((_sentence, _code, _command))(rng) for _ in range(rng.randint(1, 5))]
    if shape == 15:
        body = "\n".join(lines).split("\n")
        count = rng.randint(1, max(1, most_bytes // sum(len(b) + 8 for b in body))) * len(body)
        return "\n".join(f"{n + 1:6}\t{body[n % len(body)]}" for n in range(count))
    return "\n".join(lines)


#: Each text strategy draws one seed and writes the text from it: one choice for Hypothesis, however long the
#: text (cheap to draw and to shrink; seed 0 is the simplest text).
_SEED = st.integers(0, 2**32 - 1)


def sentence(most: int = 14) -> st.SearchStrategy[str]:
    return _SEED.map(lambda seed: _sentence(random.Random(seed), most))


def file_path() -> st.SearchStrategy[str]:
    return _SEED.map(lambda seed: _path(random.Random(seed)))


def shell_command() -> st.SearchStrategy[str]:
    return _SEED.map(lambda seed: _command(random.Random(seed)))


def error_message() -> st.SearchStrategy[str]:
    return _SEED.map(lambda seed: _error(random.Random(seed)))


def prompt_text() -> st.SearchStrategy[str]:
    return _SEED.map(lambda seed: _prompt(random.Random(seed)))


def reply_text() -> st.SearchStrategy[str]:
    return _SEED.map(lambda seed: _reply(random.Random(seed)))


def code_text() -> st.SearchStrategy[str]:
    return _SEED.map(lambda seed: _code(random.Random(seed)))


def tool_output(most_bytes: int = 2 * 1024 * 1024) -> st.SearchStrategy[str]:
    return _SEED.map(lambda seed: _output(random.Random(seed), most_bytes))


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
