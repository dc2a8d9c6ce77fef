"""One process per case (HARNESS.md §4.1): ``COMMAND... STREAM_FILE``."""

from __future__ import annotations

import json
import shlex
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from .processes import run_bounded
from .verdicts import Outcome, Verdict

DEFAULT_TIMEOUT = 30.0


@dataclass(slots=True)
class OneShotValidator:
    """A validator run once per stream; exit statuses map to verdicts."""

    command: Sequence[str]
    timeout: float = DEFAULT_TIMEOUT
    accept_codes: frozenset[int] = frozenset({0})
    reject_codes: frozenset[int] = frozenset({1})
    #: A manifest's {stream} placeholder; without one, the path is the last argument.
    placeholder: str | None = None
    cwd: str | None = None

    def argv(self, stream: Path) -> list[str]:
        if self.placeholder:
            return [part.replace(self.placeholder, str(stream)) for part in self.command]
        return [*self.command, str(stream)]

    def validate(self, stream: Path) -> Verdict:
        argv = self.argv(stream)
        started = time.monotonic()
        finished = run_bounded(argv, self.timeout, self.cwd)
        seconds = time.monotonic() - started
        received = finished.stdout.decode("utf-8", "replace")
        common = dict(sent=shlex.join(argv), received=_clip(received), stderr_tail=finished.stderr, seconds=seconds)
        if finished.timed_out:
            return Verdict(Outcome.TIMEOUT, message=f"no exit within {self.timeout:g} s; process group killed", **common)
        if finished.flooded:
            return Verdict(Outcome.CRASH, message="stdout flooded past the read limit; process group killed", **common)
        code = finished.returncode
        diagnostics = parse_diagnostics(received)
        rules = frozenset(d["rule"] for d in diagnostics)
        if code in self.accept_codes:
            return Verdict(Outcome.ACCEPT, rules, diagnostics, **common)
        if code in self.reject_codes:
            return Verdict(Outcome.REJECT, rules, diagnostics, **common)
        how = f"killed by signal {-code}" if code is not None and code < 0 else f"exit status {code}"
        expected = ", ".join(str(c) for c in sorted(self.accept_codes | self.reject_codes))
        return Verdict(Outcome.CRASH, message=f"{how} is not a verdict (expected {expected})", **common)

    def close(self) -> None:
        """Nothing stays running between cases."""


def parse_diagnostics(stdout: str) -> list[dict]:
    """Lines of stdout that are diagnostics ({"rule": ...}); other lines are ignored (§4.1)."""
    found = []
    for line in stdout.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict) and isinstance(value.get("rule"), str):
            found.append(value)
    return found


def _clip(text: str, limit: int = 4000) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n... ({len(text) - limit} more characters)"
