"""Native transcripts of real size, made cheaply: a long stretch of turns spliced into a drawn session.

Real sessions run to thousands of lines and megabytes; the native generators draw a few dozen.
Drawing thousands of lines with each format's builders costs milliseconds a line, so, as the
stream filler does (``generators.filler``), the long stretch is the generator's own material drawn
once per process: ``pool`` draws a few everyday transcripts (prompts, answers, tool calls and their
results) from the run's seed (``generators.seeded``), and ``lengthened`` copies them, re-keyed, into
a drawn session at a turn boundary until it holds the drawn number of extra lines:

* every ID of a copy (line ``uuid``, ``parentUuid``, ``toolu_`` call IDs, ``msg_`` and ``req_``
  IDs) is a fresh one, so nothing repeats across copies or with the session's own;
* the session's ID, folder, version and branch replace the copy's own (the folder also in paths);
* the ``parentUuid`` chain runs through the stretch: its first line hangs on the line the
  session's next prompt hung on, and that prompt on the stretch's last line;
* its timestamps move forward from the line before it, and every later line of the session moves
  on by the stretch's length, so that time still only moves forward.

A long shape (``long_sessions``) is drawn per example: none in most, a stretch of thousands of lines
(past a MiB) in one example in ``TIERS``; it shrinks to none, so a shrunk counterexample is the
drawn session alone.  Claude Code sessions and Codex rollouts (but legacy ones, which record no
times) are lengthened (``FORMATS``); a Codex stretch is whole turns of rollouts of the same variant
(``task_started`` or ``turn_context`` on), with fresh call, turn and message IDs and the session's
folder, spliced in before one of the rollout's turns or after its last.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any

from hypothesis import strategies as st

from asr_conformance.generators import filler
from asr_conformance.generators.native import claude_code, codex
from asr_conformance.generators.native.common import NativeTranscript
from asr_conformance.generators.seeded import Overrun, drawing

#: One example in ``TIERS`` draws a long stretch, of ``SHORTEST`` to ``LONGEST`` lines (Claude Code: a MiB
#: or more from about 1,400 lines, its pool's lines average about 780 bytes; Codex: about 300 to 400 bytes a
#: line).  Rare, because a producer example is converted twice (the session and one source edit) and judged:
#: a default certification draws about four long sessions (the cost benchmark, suite/benchmarks/).
TIERS = 96
SHORTEST, LONGEST = 1_100, 2_000
#: Transcripts per pool, and the most bytes one may hold (a drawn tool output can run to megabytes).
POOL_SIZE = 12
POOL_MOST_BYTES = 24 * 1024
#: The formats a stretch can be spliced into (Codex: its envelope variants; a legacy rollout has no times).
FORMATS = frozenset({claude_code.FORMAT, codex.FORMAT})
CODEX_VARIANTS = ("cli", "desktop", "old")

_enabled = [True]


def enable(on: bool) -> None:
    """Draw long stretches (``True``, the default) or never (the cost benchmark's baseline)."""
    _enabled[0] = on


@dataclass(frozen=True, slots=True)
class LongSession:
    """How many lines to splice into a drawn session, and the seed that picks and re-keys them."""

    lines: int
    seed: int


NONE = LongSession(0, 0)


def long_sessions() -> st.SearchStrategy[LongSession]:
    """None in most examples, ``SHORTEST`` to ``LONGEST`` lines in one in ``TIERS``; shrinks to none."""
    if not _enabled[0]:
        return st.just(NONE)
    counts = st.integers(0, TIERS - 1).flatmap(lambda tier: st.integers(SHORTEST, LONGEST) if tier == TIERS - 1
                                                else st.just(0))
    return st.builds(lambda count, seed: LongSession(count, seed if count else 0), counts, st.integers(0, 2**16))


def with_long_sessions(format: str, transcripts: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``transcripts``, now and then lengthened (formats in ``FORMATS`` only; the others as they are)."""
    if format not in FORMATS or not _enabled[0]:
        return transcripts
    return st.tuples(transcripts, long_sessions()).map(lambda pair: lengthened(*pair))


# --- Claude Code -------------------------------------------------------------------------------

_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"
_IDS = re.compile(rf"{_UUID}|(?:srvtoolu_01|toolu_01|msg_01)[0-9A-Za-z]{{22}}|req_011C[0-9A-Za-z]{{20}}")
_STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
_CONVERSATION = ("user", "assistant")


@dataclass(frozen=True, slots=True)
class _Piece:
    """One pool transcript: its conversation lines and what names its own session."""

    lines: tuple[str, ...]
    session_id: str
    cwd: str
    version: str
    branch: str


@cache
def pool(seed: int) -> tuple[_Piece, ...]:
    """``POOL_SIZE`` everyday Claude Code transcripts (plain turns and tool calls) drawn from ``seed``."""
    rng = random.Random(seed)
    pieces: list[_Piece] = []
    while len(pieces) < POOL_SIZE:
        feature = ("plain", "calls")[len(pieces) % 2] if len(pieces) % 3 else "parallel"
        try:
            with drawing(rng) as draw:
                transcript = draw(claude_code.transcripts(feature))
        except Overrun:
            continue
        kept = [line for line in transcript.lines if json.loads(line).get("type") in _CONVERSATION]
        if not kept or sum(map(len, kept)) > POOL_MOST_BYTES:
            continue
        first = json.loads(kept[0])
        if first.get("parentUuid") is not None:
            continue
        pieces.append(_Piece(tuple(kept), first["sessionId"], first["cwd"], first["version"], first["gitBranch"]))
    return tuple(pieces)


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _moment(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ")


def _is_prompt(line: dict[str, Any]) -> bool:
    message = line.get("message")
    return (line.get("type") == "user" and isinstance(message, dict) and isinstance(message.get("content"), str)
            and not line.get("isMeta") and not line.get("isCompactSummary") and not line.get("isSidechain"))


def lengthened(transcript: NativeTranscript, shape: LongSession) -> NativeTranscript:
    """``transcript`` with ``shape.lines`` re-keyed pool lines spliced in before one of its prompts (or
    after its last line, when it ends on a finished turn); as it is when the shape is none or there
    is no such place."""
    if shape.lines <= 0 or transcript.format not in FORMATS:
        return transcript
    if transcript.format == codex.FORMAT:
        return _lengthened_rollout(transcript, shape)
    rng = random.Random(shape.seed)
    parsed = [json.loads(line) for line in transcript.lines]
    places = [i for i, line in enumerate(parsed) if i and _is_prompt(line)]
    if "dangling" not in transcript.features:
        places.append(len(parsed))
    chained = [i for i, line in enumerate(parsed) if line.get("type") in _CONVERSATION and "uuid" in line]
    if not places or not chained:
        return transcript
    at = places[rng.randrange(len(places))]
    before = [i for i in chained if i < at]
    host = parsed[before[-1] if before else chained[0]]
    if at < len(parsed):
        hung_on = parsed[at].get("parentUuid")
    else:
        hung_on = parsed[before[-1]]["uuid"] if before else None
    stamps = [s for line in transcript.lines[:at] for s in _STAMP.findall(line)]
    start = _moment(max(stamps)) if stamps else _moment(_STAMP.findall(transcript.lines[at])[0])
    stretch, last_uuid, end = _stretch(rng, shape.lines, host, hung_on, start)
    later = list(transcript.lines[at:])
    if later:
        shift = end - start + timedelta(seconds=1)
        later = [_STAMP.sub(lambda m: _stamp(_moment(m.group()) + shift), line) for line in later]
        old = f'"parentUuid":{json.dumps(hung_on)}'
        if old in later[0]:
            later[0] = later[0].replace(old, f'"parentUuid":{json.dumps(last_uuid)}', 1)
    lines = (*transcript.lines[:at], *stretch, *later)
    features = transcript.features
    if any('"tool_use"' in line for line in stretch):  # no longer text only
        features = (features - {"plain"}) | {"calls"}
    return replace(transcript, lines=lines, features=features)


def _stretch(rng: random.Random, count: int, host: dict[str, Any], parent: str | None,
             start: datetime) -> tuple[list[str], str, datetime]:
    """``count`` lines (whole pool transcripts, the last one cut after a finished turn when possible),
    re-keyed into the host's session; their last uuid and last time."""
    pieces = pool(filler.run_seed())
    out: list[str] = []
    now = start
    last_uuid = parent
    while len(out) < count:
        piece = pieces[rng.randrange(len(pieces))]
        names: dict[str, str] = {piece.session_id: host["sessionId"]}

        def fresh(match: re.Match[str], names: dict[str, str] = names) -> str:
            found = match.group()
            if found not in names:
                names[found] = _fresh_like(rng, found)
            return names[found]

        def tick(_: re.Match[str]) -> str:
            nonlocal now
            now += timedelta(milliseconds=rng.randint(1, 20_000))
            return _stamp(now)

        for index, line in enumerate(piece.lines):
            text = line.replace(piece.cwd, host["cwd"])
            text = text.replace(f'"version":"{piece.version}"', f'"version":"{host["version"]}"')
            text = text.replace(f'"gitBranch":{json.dumps(piece.branch)}', f'"gitBranch":{json.dumps(host["gitBranch"])}')
            text = _STAMP.sub(tick, _IDS.sub(fresh, text))
            if index == 0:
                text = text.replace('"parentUuid":null', f'"parentUuid":{json.dumps(last_uuid)}', 1)
            out.append(text)
        last_uuid = json.loads(out[-1])["uuid"]
    return out, last_uuid or "", now


_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _fresh_like(rng: random.Random, found: str) -> str:
    """A random ID of the same shape as ``found`` (a uuid v4, or a prefix and base62 letters)."""
    if found[8:9] == "-" and "_" not in found:
        hexed = f"{rng.getrandbits(128):032x}"
        return f"{hexed[:8]}-{hexed[8:12]}-4{hexed[13:16]}-{'89ab'[rng.randrange(4)]}{hexed[17:20]}-{hexed[20:32]}"
    head, width = ("req_011C", 20) if found.startswith("req_") else (found[:found.index("_01") + 3], 22)
    return head + "".join(rng.choice(_BASE62) for _ in range(width))



# --- Codex -------------------------------------------------------------------------------------

_CODEX_IDS = re.compile(r"call_[0-9A-Za-z]{24,}|msg_[0-9a-f]{12}|[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")


@dataclass(frozen=True, slots=True)
class _Turns:
    """The turns of one pool rollout (from its first turn's opening line on), and its folder."""

    lines: tuple[str, ...]
    cwd: str


def _opens_turn(line: dict[str, Any], variant: str) -> bool:
    """Whether a rollout line is the first of a turn: task_started (cli, desktop), turn_context (old)."""
    if variant == "old":
        return line.get("type") == "turn_context"
    payload = line.get("payload")
    return line.get("type") == "event_msg" and isinstance(payload, dict) and payload.get("type") == "task_started"


def _cwd(lines: tuple[str, ...]) -> str | None:
    first = json.loads(lines[0]) if lines else {}
    payload = first.get("payload") if isinstance(first, dict) else None
    cwd = payload.get("cwd") if isinstance(payload, dict) and first.get("type") == "session_meta" else None
    return cwd if isinstance(cwd, str) else None


@cache
def codex_pool(seed: int, variant: str) -> tuple[_Turns, ...]:
    """``POOL_SIZE`` one-turn rollouts of ``variant`` (plain, calls, parallel calls) drawn from ``seed``."""
    rng = random.Random(f"{seed}:{variant}")
    pieces: list[_Turns] = []
    while len(pieces) < POOL_SIZE:
        feature = ("plain", "calls")[len(pieces) % 2] if len(pieces) % 3 else "parallel"
        try:
            with drawing(rng) as draw:
                rollout = draw(codex.transcripts(feature, variant))
        except Overrun:
            continue
        parsed = [json.loads(line) for line in rollout.lines]
        starts = [i for i, line in enumerate(parsed) if _opens_turn(line, variant)]
        cwd = _cwd(rollout.lines)
        if not starts or cwd is None or any(line.get("type") == "session_meta" for line in parsed[starts[0]:]):
            continue
        kept = rollout.lines[starts[0]:]
        if sum(map(len, kept)) > POOL_MOST_BYTES:
            continue
        pieces.append(_Turns(kept, cwd))
    return tuple(pieces)


def _lengthened_rollout(transcript: NativeTranscript, shape: LongSession) -> NativeTranscript:
    variant = transcript.variant
    cwd = _cwd(transcript.lines)
    if variant not in CODEX_VARIANTS or cwd is None:
        return transcript
    rng = random.Random(shape.seed)
    parsed = [json.loads(line) for line in transcript.lines]
    places = [i for i, line in enumerate(parsed) if _opens_turn(line, variant)]
    if "dangling" not in transcript.features:
        places.append(len(parsed))
    windows = "\\" in cwd
    pieces = [p for p in codex_pool(filler.run_seed(), variant) if ("\\" in p.cwd) == windows]
    if not places or not pieces:
        return transcript
    at = places[rng.randrange(len(places))]
    stamps = [s for line in transcript.lines[:at] for s in _STAMP.findall(line)]
    if not stamps:
        return transcript
    start = now = _moment(max(stamps))
    stretch: list[str] = []
    while len(stretch) < shape.lines:
        piece = pieces[rng.randrange(len(pieces))]
        names: dict[str, str] = {}

        def fresh(match: re.Match[str], names: dict[str, str] = names) -> str:
            found = match.group()
            if found not in names:
                names[found] = _fresh_codex(rng, found, now)
            return names[found]

        def tick(_: re.Match[str]) -> str:
            nonlocal now
            now += timedelta(milliseconds=rng.randint(1, 20_000))
            return _stamp(now)

        own, host = json.dumps(piece.cwd)[1:-1], json.dumps(cwd)[1:-1]
        for line in piece.lines:
            stretch.append(_CODEX_IDS.sub(fresh, _STAMP.sub(tick, line.replace(own, host))))
    shift = now - start + timedelta(seconds=1)
    later = [_STAMP.sub(lambda m: _stamp(_moment(m.group()) + shift), line) for line in transcript.lines[at:]]
    features = transcript.features
    if any('"function_call"' in line or '"custom_tool_call"' in line for line in stretch):
        features = (features - {"plain"}) | {"calls"}
    return replace(transcript, lines=(*transcript.lines[:at], *stretch, *later), features=features)


def _fresh_codex(rng: random.Random, found: str, now: datetime) -> str:
    """A random Codex ID of ``found``'s shape; a UUIDv7 carries ``now`` in its first 48 bits."""
    if found.startswith("call_"):
        return "call_" + "".join(rng.choice(_BASE62) for _ in range(len(found) - 5))
    if found.startswith("msg_"):
        return f"msg_{rng.getrandbits(48):012x}"
    millis = f"{int(now.replace(tzinfo=UTC).timestamp() * 1000) % 16**12:012x}"
    rest = f"{rng.getrandbits(80):020x}"
    return f"{millis[:8]}-{millis[8:]}-7{rest[:3]}-{'89ab'[rng.randrange(4)]}{rest[3:6]}-{rest[8:20]}"
