"""Turns of a coding session as pre-rendered JSON text: the corpus's scale cases, and the tagged
filler the long shapes once spliced (kept to show what a validator that recognises it gets away with).

Whole turns (prompts, replies, tool calls with their results and outputs, hooks, permissions,
state changes) are drawn once per process from a fixed seed and rendered with holes for seq, IDs,
turn IDs and call IDs; ``filler_lines`` repeats them with fresh values, every ID carrying a tag.
Every record is valid wherever it goes, because a block is self-contained: it declares nothing,
names no root, participant, conversation or terminal, and names only IDs that hold its tag.
``tagged_filler`` is the filler of the long shapes as it was: one tag (three letters and two
digits) in every ID, the same turns in every stream; a validator can recognise and skip it.
"""

from __future__ import annotations

import json
import random
from functools import cache
from typing import Any

WORDS = (
    "the parser fails on empty input because the index is never checked before we read the first "
    "token so I added a guard and a test that covers it then ran the whole suite again and two "
    "tests in the config module still fail with a missing key error which looks unrelated but the "
    "stack trace points at the loader we changed yesterday could you look at the schema and tell "
    "me whether the default should be an empty list or null I think null is safer since callers "
    "already handle it let me check the call sites first there are four of them in the server and "
    "one in the command line tool all of them treat null as absent so the change is safe I will "
    "update the docs and the changelog as well"
).split()
NAMES = ("parser", "loader", "config", "server", "schema", "tokens", "cache", "router", "index", "report")
#: A few words outside ASCII, as real prompts carry them.
UNICODE = ("café", "naïve", "Zürich", "日本語", "résumé", "→", "✓", "Ωmega", "straße", "naïveté")
COMMANDS = ("cargo test -p {n}", "pytest tests/test_{n}.py -q", "npm run build", "git diff --stat",
            "rg -n 'fn {n}' src", "ls -la src/{n}", "go test ./{n}/...", "make lint")
ERRORS = ("error[E0308]: mismatched types", "AssertionError: expected 3, got 2", "KeyError: '{n}'",
          "FAILED tests/test_{n}.py::test_empty - IndexError", "warning: unused variable `{n}`")
#: The holes in a pre-rendered record, filled by ``filler_lines``.
TURN, CALL = "@@turn@@", "@@call@@"


def _prose(rng: random.Random, low: int, high: int) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(low, high))]
    if rng.random() < 0.3:
        words[rng.randrange(len(words))] = rng.choice(UNICODE)
    return " ".join(words).capitalize() + "."


def _code(rng: random.Random) -> str:
    name = rng.choice(NAMES)
    body = "\n".join(f"    let {rng.choice(NAMES)}_{i} = {name}.get({i}).unwrap_or_default();" for i in range(rng.randint(2, 9)))
    return f"```rust\nfn {name}(input: &str) -> Result<(), Error> {{\n{body}\n    Ok(())\n}}\n```"


def _output(rng: random.Random, lines: int) -> str:
    name = rng.choice(NAMES)
    found = []
    for i in range(lines):
        roll = rng.random()
        if roll < 0.15:
            found.append(rng.choice(ERRORS).format(n=name))
        elif roll < 0.5:
            found.append(f"src/{rng.choice(NAMES)}/{rng.choice(NAMES)}.rs:{rng.randint(1, 900)}:{rng.randint(1, 80)}")
        else:
            found.append(f"test {name}::{rng.choice(NAMES)}_{i} ... {rng.choice(('ok', 'ok', 'ok', 'FAILED'))}")
    return "\n".join(found)


def _turn(rng: random.Random) -> list[tuple[str, dict[str, Any]]]:
    """One turn of a coding session as (type, members) pairs, with the turn and call IDs as holes."""
    prompt = _prose(rng, 8, 60) + (("\n\n" + _code(rng)) if rng.random() < 0.3 else "")
    records: list[tuple[str, dict[str, Any]]] = [
        ("message", {"turnId": TURN, "role": "user", "content": [{"type": "text", "text": prompt}]}),
        ("state", {"turnId": TURN, "state": "running"}),
    ]
    for call in range(rng.randint(1, 4)):
        call_id = f"{CALL}{call}"
        command = rng.choice(COMMANDS).format(n=rng.choice(NAMES))
        records.append(("tool_call", {"turnId": TURN, "callId": call_id, "callIdSource": "native", "name": "Bash",
                                      "kind": "execute", "requestedBy": "model",
                                      "input": {"command": command, "timeout": 120000}}))
        compact: dict[str, Any] = {}
        if rng.random() < 0.2:
            records.append(("permission", {"turnId": TURN, "requestId": f"{CALL}{call}p", "subject": {"callId": call_id},
                                           "status": "resolved", "decision": "allow_once", "decidedBy": "user"}))
        else:
            compact = {"permission": {"decision": "allow_once", "decidedBy": "policy"}}
        output = _output(rng, rng.randint(1, 12) if rng.random() < 0.97 else rng.randint(200, 600))
        code = rng.choice((0, 0, 1, 101))
        records.append(("tool_result", {
            "turnId": TURN, "callId": call_id, "linkage": "exact", "status": "completed" if code == 0 else "failed",
            "content": [{"type": "text", "text": output}],
            "exec": {"command": command, "cwd": {"root": None, "path": "/work/acme-app"}, "exitCode": code,
                     "stdout": output, "stderr": ""},
            "durationMs": rng.randint(5, 90000), **compact}))
        if rng.random() < 0.3:
            records.append(("hook", {"turnId": TURN, "event": "post_tool_use", "handlerKind": "command",
                                     "command": "cargo fmt --check", "callId": call_id, "status": "completed",
                                     "exitCode": 0, "durationMs": rng.randint(50, 900)}))
    if rng.random() < 0.2:
        records.append(("reasoning", {"turnId": TURN, "content": [{"type": "text", "text": _prose(rng, 10, 40)}]}))
    reply = _prose(rng, 15, 120) + (("\n\n" + _code(rng)) if rng.random() < 0.4 else "")
    records.append(("message", {"turnId": TURN, "role": "assistant", "content": [{"type": "text", "text": reply}]}))
    records.append(("state", {"turnId": TURN, "state": "idle", "stopReason": "end_turn"}))
    return records


@cache
def _turns() -> tuple[tuple[tuple[str, str], ...], ...]:
    """Turns pre-rendered once per process: each record as (type, the JSON text after its id)."""
    rng = random.Random(20261026)
    rendered = []
    for _ in range(48):
        turn = []
        for kind, members in _turn(rng):
            tail = json.dumps(members, ensure_ascii=False, separators=(",", ":"))
            turn.append((kind, tail[1:]))  # without the opening brace
        rendered.append(tuple(turn))
    return tuple(rendered)


def filler_lines(tag: str, first_seq: int, count: int, seed: int, first_turn: int = 0) -> list[str]:
    """``count`` valid records, as lines, with seqs from ``first_seq`` and IDs carrying ``tag``.

    Whole turns drawn (by ``seed``) from the pre-rendered ones; the last may be cut short (a call
    left without its result is a dangling call, which is valid).  Turns are numbered from
    ``first_turn``, so two blocks of one stream share no turn or call ID."""
    rng = random.Random(seed)
    turns = _turns()
    lines: list[str] = []
    seq = first_seq
    turn_number = first_turn
    while len(lines) < count:
        turn_number += 1
        turn_id, call_prefix = f"{tag}-t{turn_number}", f"{tag}-c{turn_number}-"
        for kind, tail in turns[rng.randrange(len(turns))]:
            if len(lines) == count:
                break
            body = tail.replace(TURN, turn_id).replace(CALL, call_prefix)
            lines.append(f'{{"type":"{kind}","seq":{seq},"id":"{tag}-{seq}",{body}\n')
            seq += 1
    return lines


def _tag(data: bytes, seed: int) -> str:
    """A short tag that occurs nowhere in ``data``: every filler ID holds it, so none can clash."""
    rng = random.Random(seed)
    while True:
        tag = "".join(rng.choice("bcdfghjkmnpqrstvwxz") for _ in range(3)) + str(rng.randrange(10, 100))
        if tag.encode() not in data:
            return tag


def tagged_filler(data: bytes, blocks: list[tuple[int, int]], seed: int,
                  pool_seed: int = 0) -> tuple[list[list[str]], frozenset[str]]:
    """The tagged filler (a ``long_streams.Filler``): each block ``(first_seq, count)`` as lines, and
    the tag as the one name to leave out of a view (every filler ID holds it).  It has no pool: its
    records are made from ``seed`` alone, whatever ``pool_seed``."""
    tag = _tag(data, seed)
    found, turns = [], 0
    for first_seq, count in blocks:
        found.append(filler_lines(tag, first_seq, count, seed + first_seq, turns))
        turns += count  # more than the turns used: the next block's turn numbers are all new
    return found, frozenset({tag})
