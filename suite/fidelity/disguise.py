"""Disguise a native transcript so that it cannot be matched to the file it came from.

A converter that recognises the suite's inputs (the SHA-256 of a vendor sample, a session ID
it has seen) could behave only on those and pass. ``disguise`` rewrites a transcript's bytes
so that none of that survives, while every fact the witness reads stays the same up to the
renaming itself:

* every identifier (values of ID-named members such as ``uuid``, ``parentUuid``, ``sessionId``,
  ``tool_use_id``, ``call_id``, ``agentId``, ``id``; every UUID; every 40- or 64-digit hex digest)
  gets a fresh value of the same shape and length, the same new value for the same old one
  everywhere in the file, inside other strings too (``agent-<agentId>``, text that quotes an ID);
* every RFC 3339 time, and the epoch-millisecond times Codex records, moves by one drawn
  offset in whole seconds (order, gaps, precision and offset notation kept); a UUIDv7 keeps
  its time prefix in step;
* each project path (``cwd``) with at least two components after its root is renamed, letter
  for letter and digit for digit, the same way everywhere (its home folder too).

The rewrite is textual and keeps every length, so byte offsets, key orders, spacing and
integers past 2**53 stay as the source wrote them. The same ``Disguise.rename`` applies to
any string, which is how a test proves the facts survive: the witness's facts of the disguised
copy equal the renamed facts of the original.
"""

from __future__ import annotations

import random
import re
import string
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from asr_conformance.fidelity.disguise_text import Words, draw_words

#: Members whose string values are identifiers: ``uuid``, ``parentUuid``, ``sessionId``, ``call_id``, ``id``...
_ID_MEMBER = re.compile(r'"((?:[A-Za-z_]*(?:[iI]d|ID|[uU]uid|UUID))|id)"\s*:\s*"([A-Za-z0-9_.:-]{6,200})"')
#: A member naming a working directory (Claude Code's and Codex's ``cwd``).
_CWD_MEMBER = re.compile(r'"cwd"\s*:\s*"(/[A-Za-z0-9_./-]+)"')
_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_DIGEST = r"[0-9a-f]{64}|[0-9a-f]{40}"
#: Before a token: not a letter or digit, or a JSON escape (``\n`` precedes text inside a string).
_BEFORE = r'(?:(?<=\\[nrtbf"/\\])|(?<![0-9A-Za-z]))'
_AFTER = r"(?![0-9A-Za-z])"
_SHAPES = re.compile(_BEFORE + f"(?:{_UUID}|{_DIGEST})" + _AFTER)
#: A maximal run of the characters IDs are made of: every ID in a text lies inside one.
_RUN = r"[A-Za-z0-9_.:-]++"
_TIME = re.compile(r"(?<!\d)(\d{4}-\d{2}-\d{2})([Tt ])(\d{2}:\d{2}:\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})(?!\d)")
_EPOCH_MS = re.compile(r'("(?:started_at_ms|completed_at_ms)"\s*:\s*)(\d{13})(?!\d)')
#: Roots a project path starts under; the component after one is a user or a project name.
_ROOTS = ("home", "Users", "srv", "workspaces", "workspace", "opt", "var", "tmp", "mnt", "root", "data")
#: Offsets of the time shift: between one day and four years, either way.
SHIFT_SECONDS = (86_400, 4 * 365 * 86_400)


@dataclass
class Disguise:
    """One drawn renaming: the ID and path map, the time shift and the word map, for one file."""

    ids: dict[str, str]
    shift: timedelta
    paths: dict[str, str]
    #: Words of the file's texts and their replacements (``disguise_text``); empty: texts are kept.
    words: Words = field(default_factory=Words)

    def rename(self, text: str) -> str:
        """The text with every mapped ID and path renamed, every time shifted and every mapped word swapped,
        as in the disguised file (a whole decoded string: a fact the witness read)."""
        return self.words.swap(self._rename(text))

    def rename_bytes(self, data: bytes) -> bytes:
        text = self._rename(_EPOCH_MS.sub(self._epoch, data.decode("utf-8")))
        return self.words.swap_json(text).encode("utf-8")

    def _rename(self, text: str) -> str:
        """IDs, paths and times, in one pass over the text (each token is looked up, none searched for)."""
        text = _TIME.sub(self._time, text)
        if not self.ids and not self.paths:
            return text
        return self._scanner().sub(self._token, text)

    def _scanner(self) -> re.Pattern[str]:
        """Project paths (few, one alternation) or maximal runs of ID characters."""
        if not hasattr(self, "_compiled"):
            paths = "|".join(re.escape(k) for k in sorted(self.paths, key=len, reverse=True))
            path = f"(?P<path>(?<![A-Za-z0-9_.-])(?:{paths})(?![A-Za-z0-9_.-]))|" if paths else ""
            self._compiled = re.compile(path + _RUN)
            self._lengths = sorted({len(k) for k in self.ids}, reverse=True)
            self._shortest = min(self._lengths, default=0)
        return self._compiled

    def _token(self, match: re.Match[str]) -> str:
        if match.lastgroup == "path":
            return self.paths[match.group(0)]
        run = match.group(0)
        if len(run) < self._shortest or not self.ids or run.isalpha():
            return run
        start = match.start()
        escaped = start > 0 and match.string[start - 1] == "\\" and run[0] in "nrtbf"
        return _swap_ids(run, self.ids, self._lengths, escaped)

    def _time(self, match: re.Match[str]) -> str:
        day, sep, clock, fraction, offset = match.groups()
        zone = "+00:00" if offset in ("Z", "z") else offset
        try:
            moment = datetime.fromisoformat(f"{day}T{clock}{zone}") + self.shift
        except (ValueError, OverflowError):
            return match.group(0)
        return f"{moment.strftime('%Y-%m-%d')}{sep}{moment.strftime('%H:%M:%S')}{fraction or ''}{offset}"

    def _epoch(self, match: re.Match[str]) -> str:
        moved = int(match.group(2)) + int(self.shift.total_seconds()) * 1000
        return match.group(1) + (str(moved) if len(str(moved)) == 13 else match.group(2))


def draw(data: bytes, seed: int, texts: bool = True) -> Disguise:
    """A renaming for this file, drawn from the seed (the same seed and file give the same renaming).

    ``texts=False`` keeps every text as written (IDs, times and paths only): how the suite disguised
    inputs before it swapped words, kept to show what a text-matching converter gets away with."""
    return _drawn(data.decode("utf-8"), seed, texts)[0]


def disguise(data: bytes, seed: int, texts: bool = True) -> bytes:
    """The transcript rewritten by a renaming drawn from the seed; a file that is not UTF-8 is returned as is."""
    try:
        key, renamed = _drawn(data.decode("utf-8"), seed, texts)
    except UnicodeDecodeError:
        return data
    return key.words.swap_json(renamed).encode("utf-8")


def _drawn(text: str, seed: int, texts: bool) -> tuple[Disguise, str]:
    """The renaming, and the text with its IDs, times and paths renamed (words are drawn from that text and
    swapped in it: one pass of each, whatever the file's size)."""
    rng = random.Random(seed)
    shift = timedelta(seconds=rng.randint(*SHIFT_SECONDS) * rng.choice((-1, 1)))
    found = {m.group(2) for m in _ID_MEMBER.finditer(text)} | {m.group(0) for m in _SHAPES.finditer(text)}
    ids: dict[str, str] = {}
    for old in sorted(found, key=lambda v: (len(v), v)):
        # An ID that holds a shorter one (``agent_msg_<id>``) is renamed through it, so both stay in step.
        if _is_identifier(old) and not _holds_one_of(old, ids):
            ids[old] = _fresh(old, rng, shift)
    paths: dict[str, str] = {}
    for cwd in sorted({m.group(1) for m in _CWD_MEMBER.finditer(text)}):
        _rename_path(cwd, rng, paths)
    key = Disguise(ids, shift, paths)
    renamed = key._rename(_EPOCH_MS.sub(key._epoch, text))
    if texts:
        key.words = draw_words(renamed, rng)
    return key, renamed


def _boundaries(run: str) -> tuple[list[int], set[int]]:
    """Where an ID may start and end inside a run of ID characters: next to a character that is not a letter
    or digit, or at the run's ends (the ``_BEFORE`` and ``_AFTER`` of a token)."""
    starts = [0] + [i + 1 for i, c in enumerate(run) if not c.isalnum()]
    ends = {len(run)} | {i for i, c in enumerate(run) if not c.isalnum()}
    return starts, ends


def _holds_one_of(old: str, ids: dict[str, str]) -> bool:
    """Whether a shorter kept ID stands as a token inside ``old`` (looked up, not searched for)."""
    starts, ends = _boundaries(old)
    return any(old[s:e] in ids for s in starts for e in ends if e > s and e - s < len(old))


def _swap_ids(run: str, ids: dict[str, str], lengths: list[int], escaped: bool) -> str:
    """The run with each ID in it renamed: at each place an ID may start, the longest one that ends at a
    boundary, left to right, as one alternation of every ID would match."""
    starts, ends = _boundaries(run)
    if escaped:  # after ``\n`` the escape's letter is part of the run, and text starts after it
        starts.insert(1, 1)
    out: list[str] = []
    done = 0
    for start in starts:
        if start < done:
            continue
        for length in lengths:
            end = start + length
            if end in ends and run[start:end] in ids:
                out += [run[done:start], ids[run[start:end]]]
                done = end
                break
    return "".join(out) + run[done:] if out else run


def _is_identifier(value: str) -> bool:
    """Worth renaming: long enough, not a plain number or word (a number elsewhere must not change)."""
    if _TIME.fullmatch(value) or value.isdigit() or value.isalpha():
        return False
    return sum(c.isalnum() for c in value) >= 6


def _fresh(old: str, rng: random.Random, shift: timedelta) -> str:
    """A new ID of the old one's shape: UUIDs keep version and variant; prefixes (``toolu_``) and separators stay."""
    if re.fullmatch(_UUID, old):
        return _fresh_uuid(old, rng, shift)
    prefix = re.match(r"[A-Za-z]+(?:_[A-Za-z]+)*(?:_|-(?=\d))", old)
    keep = prefix.group(0) if prefix else ""
    rest = old[len(keep):]
    hexed = all(c in string.hexdigits for c in rest.replace("-", "").replace("_", ""))
    return keep + "".join(_like(c, rng, hexed and c.islower() or (hexed and c.isdigit())) for c in rest)


def _fresh_uuid(old: str, rng: random.Random, shift: timedelta) -> str:
    digits = [_like(c, rng, True) if c != "-" else c for c in old]
    digits[14] = old[14]  # the version
    digits[19] = rng.choice("89ab") if old[19].lower() in "89ab" else old[19]  # the variant
    if old[14] == "7":  # a UUIDv7 starts with its creation time in milliseconds
        moved = int(old[:8] + old[9:13], 16) + int(shift.total_seconds()) * 1000
        if 0 <= moved < 16**12:
            hexed = f"{moved:012x}"
            digits[:8], digits[9:13] = list(hexed[:8]), list(hexed[8:])
    new = "".join(digits)
    return new.upper() if old.isupper() else new


def _like(char: str, rng: random.Random, hexed: bool) -> str:
    """A random character of the same class: hex digit, digit, lower or upper letter; others stay."""
    if hexed and (char.isdigit() or char in "abcdef"):
        return rng.choice("0123456789abcdef")
    if hexed and char in "ABCDEF":
        return rng.choice("0123456789ABCDEF")
    pools: tuple[tuple[Callable[[], bool], str], ...] = (
        (char.isdigit, string.digits), (char.islower, string.ascii_lowercase), (char.isupper, string.ascii_uppercase))
    for test, pool in pools:
        if test() and char.isascii():
            return rng.choice(pool)
    return char


def _rename_path(cwd: str, rng: random.Random, paths: dict[str, str]) -> None:
    """Rename the components after the root, letter for letter; the user's home folder maps the same way."""
    parts = cwd.strip("/").split("/")
    if len(parts) < 3 or parts[0] not in _ROOTS or any(p in ("", ".", "..") for p in parts):
        return
    renamed = [parts[0]]
    for depth, part in enumerate(parts[1:], start=1):
        prefix = "/" + "/".join(parts[:depth + 1])
        if prefix not in paths:
            new_part = "".join(_like(c, rng, False) for c in part)
            paths[prefix] = "/" + "/".join(renamed + [new_part])
        renamed = paths[prefix].strip("/").split("/")
