"""Native transcripts of real size, made cheaply: a long stretch of turns spliced into a drawn session.

Real sessions run to thousands of lines and megabytes; the native generators draw a few dozen.
Drawing thousands of lines with each format's builders costs milliseconds a line, so, as the
stream filler does (``generators.filler``), the long stretch is the generator's own material drawn
once per process and pool seed: ``pool`` draws a few everyday transcripts (prompts, answers, tool calls
and their results) from the shape's pool seed (``LongSession.pool``: the run's seed, which the fuzz
session hands to the strategies; ``generators.seeded``), and ``lengthened`` copies them, re-keyed, into
a drawn session at a turn boundary until it holds the drawn number of extra lines:

* every ID of a copy (line ``uuid``, ``parentUuid``, ``toolu_`` call IDs, ``msg_`` and ``req_``
  IDs) is a fresh one, so nothing repeats across copies or with the session's own;
* the session's ID, folder, version and branch replace the copy's own (the folder also in paths);
* the ``parentUuid`` chain runs through the stretch: its first line hangs on the line the
  session's next prompt hung on, and that prompt on the stretch's last line;
* its timestamps move forward from the line before it, and every later line of the session moves
  on by the stretch's length, so that time still only moves forward.

A long shape (``long_sessions``) is drawn per example: none in most, a stretch of thousands of lines
and at least ``LEAST_BYTES`` in one example in ``TIERS``; it shrinks to none, so a shrunk counterexample is
the drawn session alone.  That rate alone would leave most runs without one, so the producer fuzz also
has one long property per format (``long_transcripts``: every example lengthened, shrinking to the
shortest stretch), which every run holds.  Claude Code sessions, Codex rollouts (but legacy ones, which
record no times) and Gemini CLI sessions are lengthened (``FORMATS``):

* a Codex stretch is whole turns of rollouts of the same variant (``task_started`` or ``turn_context``
  on), with fresh call, turn and message IDs and the session's folder, spliced in before one of the
  rollout's turns or after its last;
* a Gemini CLI stretch is whole sessions (plain turns, tool calls, parallel calls; their metadata line
  left out, so the session's own ``sessionId`` and ``projectHash`` hold), with fresh message IDs and
  call IDs (``<tool>-<epoch ms>-<hex>``, the time moved with the call), each session's times moved on
  as one so that every copy of a re-recorded message keeps one time, and the session's model; spliced
  before a prompt past the last ``$rewindTo`` and checkpoint (which would drop it), or after the last
  message when no call is left pending; as records (JSON Lines) or as messages of the one-object layout,
  whose ``lastUpdated`` moves to the new end.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any, TypeVar

from hypothesis import strategies as st

from asr_conformance.generators.native import claude_code, codex, gemini
from asr_conformance.generators.native.common import NativeTranscript
from asr_conformance.generators.seeded import Overrun, drawing

T = TypeVar("T")
P = TypeVar("P")

#: One example in ``TIERS`` draws a long stretch, of ``SHORTEST`` to ``LONGEST`` lines (Gemini CLI: messages)
#: and at least ``LEAST_BYTES`` (Claude Code: about 1,400 lines, its pool's lines average about 780 bytes;
#: Codex: about 300 to 400 bytes a line, so 2,500 to 3,500 lines).  Rare, because a producer example is
#: converted twice (the session and one source edit) and judged: with the long property of each format, a
#: default certification draws three or four long sessions (the cost benchmark, suite/benchmarks/).
TIERS = 768
SHORTEST, LONGEST = 1_100, 1_400
#: Every stretch holds at least this many bytes as well as its drawn number of lines (Codex's lines are
#: shorter: its stretches run to more of them).
LEAST_BYTES = 2**20
#: Transcripts per pool, and the most bytes one may hold (a drawn tool output can run to megabytes).
POOL_SIZE = 12
POOL_MOST_BYTES = 24 * 1024
#: The formats a stretch can be spliced into (Codex: its envelope variants; a legacy rollout has no times).
FORMATS = frozenset({claude_code.FORMAT, codex.FORMAT, gemini.FORMAT})
CODEX_VARIANTS = ("cli", "desktop", "old")

@dataclass(frozen=True, slots=True)
class LongSession:
    """How many lines to splice into a drawn session, the seed that picks and re-keys them, and the seed
    of the pool they are picked from (the run's seed)."""

    lines: int
    seed: int
    pool: int = 0


NONE = LongSession(0, 0)


def long_sessions(enabled: bool = True, pool: int = 0) -> st.SearchStrategy[LongSession]:
    """None in most examples, ``SHORTEST`` to ``LONGEST`` lines from the pool of ``pool`` (the run's seed) in
    one in ``TIERS``; shrinks to none.  ``enabled=False``: never any (the cost benchmark's baseline)."""
    if not enabled:
        return st.just(NONE)
    # The long tier is a middle value: Hypothesis draws an integer range's ends far more often than the rest.
    counts = st.integers(0, TIERS - 1).flatmap(lambda tier: st.integers(SHORTEST, LONGEST) if tier == TIERS // 2
                                                else st.just(0))
    return st.builds(lambda count, seed: LongSession(count, seed if count else 0, pool if count else 0), counts,
                     st.integers(0, 2**16))


def always_long(pool: int = 0) -> st.SearchStrategy[LongSession]:
    """``SHORTEST`` to ``LONGEST`` lines from the pool of ``pool`` in every example (the long property); shrinks
    to ``SHORTEST``."""
    return st.builds(lambda lines, seed: LongSession(lines, seed, pool), st.integers(SHORTEST, LONGEST),
                     st.integers(0, 2**16))


def lengthenable(format: str) -> bool:
    """Whether the format's sessions are lengthened (and the producer fuzz, unless its run draws no long
    examples, has a long property for it)."""
    return format in FORMATS


def long_transcripts(format: str, transcripts: st.SearchStrategy[Any], pool: int = 0) -> st.SearchStrategy[Any]:
    """``transcripts``, each lengthened from the pool of ``pool`` (those with no place for a stretch are drawn
    again)."""
    if not lengthenable(format):
        raise ValueError(f"sessions of {format!r} are not lengthened (lengthened: {', '.join(sorted(FORMATS))})")
    return st.tuples(transcripts, always_long(pool)).map(
        lambda pair: (pair[0], lengthened(*pair))).filter(lambda pair: pair[1] is not pair[0]).map(lambda pair: pair[1])


def with_long_sessions(format: str, transcripts: st.SearchStrategy[Any], enabled: bool = True,
                       pool: int = 0) -> st.SearchStrategy[Any]:
    """``transcripts``, now and then lengthened from the pool of ``pool`` (formats in ``FORMATS`` only; the
    others as they are, and every format when not ``enabled``: the cost benchmark's baseline)."""
    if format not in FORMATS or not enabled:
        return transcripts
    return st.tuples(transcripts, long_sessions(pool=pool)).map(lambda pair: lengthened(*pair))


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


def _drawn_pool(rng: random.Random, strategy: Callable[[str], st.SearchStrategy[T]],
                keep: Callable[[T], P | None]) -> tuple[P, ...]:
    """``POOL_SIZE`` pieces: transcripts of plain turns, tool calls and parallel calls in turn, drawn from ``rng``,
    each made a piece by ``keep`` or passed over (None), as is a draw that runs out of its bytes."""
    pieces: list[P] = []
    while len(pieces) < POOL_SIZE:
        feature = ("plain", "calls")[len(pieces) % 2] if len(pieces) % 3 else "parallel"
        try:
            with drawing(rng) as draw:
                drawn = draw(strategy(feature))
        except Overrun:
            continue
        piece = keep(drawn)
        if piece is not None:
            pieces.append(piece)
    return tuple(pieces)


@cache
def pool(seed: int) -> tuple[_Piece, ...]:
    """``POOL_SIZE`` everyday Claude Code transcripts (plain turns and tool calls) drawn from ``seed``."""
    return _drawn_pool(random.Random(seed), claude_code.transcripts, _claude_code_piece)


def _claude_code_piece(transcript: NativeTranscript) -> _Piece | None:
    kept = [line for line in transcript.lines if json.loads(line).get("type") in _CONVERSATION]
    if not kept or sum(map(len, kept)) > POOL_MOST_BYTES:
        return None
    first = json.loads(kept[0])
    if first.get("parentUuid") is not None:
        return None
    return _Piece(tuple(kept), first["sessionId"], first["cwd"], first["version"], first["gitBranch"])


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
    if transcript.format == gemini.FORMAT:
        return _lengthened_gemini(transcript, shape)
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
    stretch, last_uuid, end = _stretch(rng, shape.lines, shape.pool, host, hung_on, start)
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


def _stretch(rng: random.Random, count: int, pool_seed: int, host: dict[str, Any], parent: str | None,
             start: datetime) -> tuple[list[str], str, datetime]:
    """``count`` lines (whole pool transcripts, the last one cut after a finished turn when possible),
    re-keyed into the host's session; their last uuid and last time."""
    pieces = pool(pool_seed)
    out: list[str] = []
    now = start
    last_uuid = parent
    size = 0
    while len(out) < count or size < LEAST_BYTES:
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
            size += len(text) + 1
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
    return _drawn_pool(random.Random(f"{seed}:{variant}"), lambda feature: codex.transcripts(feature, variant),
                       lambda rollout: _codex_turns(rollout, variant))


def _codex_turns(rollout: NativeTranscript, variant: str) -> _Turns | None:
    parsed = [json.loads(line) for line in rollout.lines]
    starts = [i for i, line in enumerate(parsed) if _opens_turn(line, variant)]
    cwd = _cwd(rollout.lines)
    if not starts or cwd is None or any(line.get("type") == "session_meta" for line in parsed[starts[0]:]):
        return None
    kept = rollout.lines[starts[0]:]
    if sum(map(len, kept)) > POOL_MOST_BYTES:
        return None
    return _Turns(kept, cwd)


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
    pieces = [p for p in codex_pool(shape.pool, variant) if ("\\" in p.cwd) == windows]
    if not places or not pieces:
        return transcript
    at = places[rng.randrange(len(places))]
    stamps = [s for line in transcript.lines[:at] for s in _STAMP.findall(line)]
    if not stamps:
        return transcript
    start = now = _moment(max(stamps))
    stretch: list[str] = []
    size = 0
    while len(stretch) < shape.lines or size < LEAST_BYTES:
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
            size += len(stretch[-1]) + 1
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


# --- Gemini CLI --------------------------------------------------------------------------------

_GEMINI_IDS = re.compile(rf"{_UUID}|\b[a-z][a-z_]*-(\d{{13}})-[0-9a-f]{{8}}\b")
_GEMINI_POOL_VARIANT = "jsonl"


@dataclass(frozen=True, slots=True)
class _Conversation:
    """One pool session: its records after the metadata line (JSON Lines, each message recorded again as it
    changes), its final messages as the older one-object layout holds them, its model, and its times."""

    records: tuple[str, ...]
    messages: tuple[str, ...]
    model: str | None
    first: datetime
    last: datetime


@cache
def gemini_pool(seed: int) -> tuple[_Conversation, ...]:
    """``POOL_SIZE`` everyday Gemini CLI sessions (plain turns, tool calls, parallel calls) drawn from ``seed``:
    no rewinds, checkpoints or ``$set`` records, which would reach past the session they were drawn in."""
    return _drawn_pool(random.Random(f"{seed}:gemini"),
                       lambda feature: gemini.transcripts(feature, _GEMINI_POOL_VARIANT), _gemini_conversation)


def _gemini_conversation(session: NativeTranscript) -> _Conversation | None:
    records = session.lines[1:]
    parsed = [json.loads(line) for line in records]
    if not records or sum(map(len, records)) > POOL_MOST_BYTES or any("id" not in value for value in parsed):
        return None
    final: dict[str, dict[str, Any]] = {}
    for value in parsed:
        final[value["id"]] = value  # the last copy wins and keeps the place of the first
    stamps = [_moment(s) for line in records for s in _STAMP.findall(line)]
    model = next((v["model"] for v in parsed if isinstance(v.get("model"), str)), None)
    messages = tuple(_indented(json.dumps(m, ensure_ascii=False, indent=2)) for m in final.values())
    return _Conversation(records, messages, model, min(stamps), max(stamps))


def _indented(text: str) -> str:
    """A message as the one-object layout writes it inside ``messages`` (four spaces in)."""
    return "\n".join("    " + line for line in text.split("\n"))


def _message_starts(lines: tuple[str, ...], document: bool) -> tuple[list[tuple[int, dict[str, Any]]], int]:
    """Where each message of a session begins (its first copy) and its value; and the line after the last
    ``$rewindTo`` or checkpoint (0 when there is none), which drop what came before them."""
    if not document:
        seen: set[str] = set()
        found: list[tuple[int, dict[str, Any]]] = []
        barrier = 0
        for index, line in enumerate(lines[1:], 1):
            value = json.loads(line)
            if not isinstance(value, dict):
                continue
            held = value.get("$set")
            if "$rewindTo" in value or (isinstance(held, dict) and "messages" in held):
                barrier = index + 1
            elif isinstance(value.get("id"), str) and value["id"] not in seen:
                seen.add(value["id"])
                found.append((index, value))
        return found, barrier
    messages = json.loads("\n".join(lines)).get("messages") or []
    starts = [i for i, line in enumerate(lines) if line == "    {"]
    return (list(zip(starts, messages, strict=True)) if len(starts) == len(messages) else []), 0


def _lengthened_gemini(transcript: NativeTranscript, shape: LongSession) -> NativeTranscript:
    """Whole pool sessions, re-keyed, spliced before one of the session's prompts (or after its last message
    when no call is left pending at the end), past its last rewind and checkpoint."""
    document = transcript.variant == "json"
    rng = random.Random(shape.seed)
    starts, barrier = _message_starts(transcript.lines, document)
    if not starts:
        return transcript
    first = starts[0][0]
    places = [i for i, value in starts if value.get("type") == "user" and i > max(barrier, first)]
    if "awaiting-approval" not in transcript.features:
        places.append(len(transcript.lines) - 2 if document else len(transcript.lines))
    if not places:
        return transcript
    at = places[rng.randrange(len(places))]
    # The conversation's own times (the header's lastUpdated may be its end), up to the place.
    before = [_moment(s) for line in transcript.lines[first:at] for s in _STAMP.findall(line)]
    if not before:
        return transcript
    model = next((v["model"] for _, v in starts if isinstance(v.get("model"), str)), None)
    start = max(before)
    stretch, end_time = _gemini_stretch(rng, shape.lines, shape.pool, start, model, document)
    shift = end_time - start + timedelta(seconds=1)
    later = [_STAMP.sub(lambda m: _stamp(_moment(m.group()) + shift), line) for line in transcript.lines[at:]]
    lines = list(transcript.lines[:at])
    if document:
        if lines[-1] == "    }":
            lines[-1] = "    },"  # the message before the stretch now has one after it
        if later[0] == "  ]":
            stretch[-1] = stretch[-1].rstrip(",")
        # The header's lastUpdated (written before the messages) is the session's last time.
        last = _stamp(max([end_time, *(_moment(s) for line in later for s in _STAMP.findall(line))]))
        lines = [re.sub(r'^(  "lastUpdated": )"[^"]*"', lambda m: f'{m.group(1)}"{last}"', line) for line in lines]
    features = transcript.features
    if any('"toolCalls"' in line for line in stretch):
        features = (features - {"plain"}) | {"calls"}
    return replace(transcript, lines=(*lines, *stretch, *later), features=features)


def _gemini_stretch(rng: random.Random, count: int, pool_seed: int, start: datetime, model: str | None,
                    document: bool) -> tuple[list[str], datetime]:
    """At least ``count`` messages and ``LEAST_BYTES`` of whole pool sessions, each with fresh message and call IDs
    and its times moved on as one (so every copy of a message keeps one time), one after the other from ``start``;
    records of JSON Lines, or the one-object layout's message lines (each but the last followed by a comma)."""
    pieces = gemini_pool(pool_seed)
    out: list[str] = []
    now = start
    messages = size = 0
    while messages < count or size < LEAST_BYTES:
        piece = pieces[rng.randrange(len(pieces))]
        shift = now - piece.first + timedelta(milliseconds=rng.randint(1, 30_000))
        names: dict[str, str] = {}

        def fresh(match: re.Match[str], names: dict[str, str] = names, shift: timedelta = shift) -> str:
            found = match.group()
            if found not in names:
                if match.group(1) is None:
                    names[found] = _fresh_like(rng, found)
                else:  # <tool name>-<epoch ms>-<8 hex>: the time the call was made, moved on with the rest
                    name, millis, _ = found.rsplit("-", 2)
                    moved = int(millis) + int(shift / timedelta(milliseconds=1))
                    names[found] = f"{name}-{moved}-{rng.getrandbits(32):08x}"
            return names[found]

        def moved(match: re.Match[str], shift: timedelta = shift) -> str:
            return _stamp(_moment(match.group()) + shift)

        texts = piece.messages if document else piece.records
        for text in texts:
            if model is not None and piece.model is not None:
                text = text.replace(f'"model":{json.dumps(piece.model)}', f'"model":{json.dumps(model)}')
                text = text.replace(f'"model": {json.dumps(piece.model)}', f'"model": {json.dumps(model)}')
            text = _GEMINI_IDS.sub(fresh, _STAMP.sub(moved, text))
            out.append(text + ("," if document else ""))
            size += len(text) + 1
        messages += len(piece.messages)
        now = piece.last + shift
    if document:
        out = [line for text in out for line in text.split("\n")]
    return out, now
