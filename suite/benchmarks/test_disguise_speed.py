"""How disguising a producer input grows with its size: a Claude Code transcript of N copies of one session,
each with fresh IDs, against one of 2N copies. No timed assertions; ``extra_info`` holds
``ratio_2x`` (the time for twice the input over the time for the input: near 2 when the cost is linear;
it was over 10 when each ID compiled a pattern of its own) and the seconds per megabyte.

    pytest -p no:xdist --benchmark-only suite/benchmarks/test_disguise_speed.py

ASR_DISGUISE_BENCH_COPIES sets N (default 150 copies, about 1 MB, 3,000 IDs).
"""

from __future__ import annotations

import os
import random
import re
import time
from pathlib import Path

from asr_conformance.fidelity.disguise import disguise

COPIES = int(os.environ.get("ASR_DISGUISE_BENCH_COPIES", 150))
SESSION = Path(__file__).resolve().parents[2] / "examples" / "claude-code-converter" / "samples" / "fix-parser-test.jsonl"
IDS = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|(?:toolu|msg|req)_[0-9A-Za-z]{24}")


def transcript(copies: int) -> bytes:
    """The session repeated, each copy's IDs renamed (the same old ID to the same new one within a copy)."""
    data = SESSION.read_bytes()
    rng = random.Random(copies)
    parts = []
    for _ in range(copies):
        fresh: dict[bytes, bytes] = {}
        parts.append(IDS.sub(lambda m, fresh=fresh: fresh.setdefault(m.group(0), bytes(  # type: ignore[misc]
            rng.choice(b"0123456789abcdef") if c in b"0123456789abcdef" else c for c in m.group(0))), data))
    return b"".join(parts)


def test_disguise_grows_linearly(benchmark) -> None:
    small, large = transcript(COPIES), transcript(2 * COPIES)
    benchmark.pedantic(disguise, args=(large, 1), rounds=3, iterations=1)
    started = time.perf_counter()
    disguise(small, 1)
    once = time.perf_counter() - started
    twice = benchmark.stats.stats.min
    benchmark.extra_info.update({"input_bytes": len(small), "seconds": once, "seconds_2x": twice,
                                 "ratio_2x": twice / once, "seconds_per_mb": twice / (len(large) / 1e6)})
