"""One process per case (HARNESS.md §4.1): ``COMMAND... FILE``.

A validator answers with its exit status, a reader with a view on stdout, a
producer with a stream on stdout (or a refusal: non-zero exit, message on
stderr).  Whatever the role, a signal, a timeout or a flood is never an answer."""

from __future__ import annotations

import json
import shlex
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from asr_conformance.harness.answers import Conversion, Outcome, ReadAnswer, Verdict
from asr_conformance.harness.processes import STDOUT_LIMIT, Finished, run_bounded

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
        return _argv(self.command, self.placeholder, stream)

    def validate(self, stream: Path) -> Verdict:
        finished, received, common = _run_once(self.argv(stream), self.timeout, self.cwd)
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
            if _UNCAUGHT in finished.stderr:  # a Python validator that died exits 1 too: that is no reject
                return Verdict(Outcome.CRASH, message="an uncaught exception (a traceback is not a verdict)", **common)
            return Verdict(Outcome.REJECT, rules, diagnostics, **common)
        how = f"killed by signal {-code}" if code is not None and code < 0 else f"exit status {code}"
        expected = ", ".join(str(c) for c in sorted(self.accept_codes | self.reject_codes))
        return Verdict(Outcome.CRASH, message=f"{how} is not a verdict (expected {expected})", **common)

    def close(self) -> None:
        """Nothing stays running between cases."""


#: Largest stream a one-shot producer may write (streams are bigger than verdicts).
PRODUCER_STDOUT_LIMIT = 256 * 1024 * 1024


#: A Python interpreter's dying words: a crash, even though the exit status is 1.
_UNCAUGHT = "Traceback (most recent call last):"


def _argv(command: Sequence[str], placeholder: str | None, path: Path) -> list[str]:
    if placeholder:
        return [part.replace(placeholder, str(path)) for part in command]
    return [*command, str(path)]


def _run_once(argv: list[str], timeout: float, cwd: str | None, env: Mapping[str, str] | None = None,
              limit: int = STDOUT_LIMIT) -> tuple[Finished, str, dict]:
    """Run one case; return the process's end, its stdout as text, and what every answer shows
    (what was sent, what came back, the stderr tail, how long it took)."""
    started = time.monotonic()
    finished = run_bounded(argv, timeout, cwd, env, limit)
    received = finished.stdout.decode("utf-8", "replace")
    common = dict(sent=shlex.join(argv), received=_clip(received), stderr_tail=finished.stderr,
                  seconds=time.monotonic() - started)
    return finished, received, common


def _no_answer(finished: Finished, timeout: float) -> tuple[Outcome, str] | None:
    """Why a finished process gave no answer at all (timeout, flood, signal)."""
    if finished.timed_out:
        return Outcome.TIMEOUT, f"no exit within {timeout:g} s; process group killed"
    if finished.flooded:
        return Outcome.CRASH, "stdout flooded past the read limit; process group killed"
    code = finished.returncode
    if code is not None and code < 0:
        return Outcome.CRASH, f"killed by signal {-code}"
    return None


@dataclass(slots=True)
class OneShotReader:
    """A reader run once per stream: exit 0 with the view JSON on stdout."""

    command: Sequence[str]
    timeout: float = DEFAULT_TIMEOUT
    placeholder: str | None = None
    cwd: str | None = None

    def read(self, stream: Path) -> ReadAnswer:
        finished, received, common = _run_once(_argv(self.command, self.placeholder, stream), self.timeout,
                                               self.cwd)
        failure = _no_answer(finished, self.timeout)
        if failure:
            return ReadAnswer(failure[0], message=failure[1], **common)
        if finished.returncode != 0:
            return ReadAnswer(Outcome.CRASH, message=f"exit status {finished.returncode} (a reader exits 0 with a view)",
                              **common)
        try:
            view = json.loads(received)
        except ValueError as error:
            return ReadAnswer(Outcome.CRASH, message=f"stdout is not one JSON document: {error}", **common)
        if not isinstance(view, dict):
            return ReadAnswer(Outcome.CRASH, message="the view must be a JSON object", **common)
        return ReadAnswer(Outcome.VIEWED, view=view, **common)

    def close(self) -> None:
        """Nothing stays running between cases."""


@dataclass(slots=True)
class OneShotProducer:
    """A producer run once per input: exit 0 with the stream on stdout; non-zero with a message is a refusal."""

    command: Sequence[str]
    timeout: float = DEFAULT_TIMEOUT
    placeholder: str | None = None
    cwd: str | None = None
    #: Environment overrides (a metamorphic variant: another clock, timezone, HOME...).
    env: Mapping[str, str] | None = None

    def convert(self, source: Path) -> Conversion:
        finished, _, common = _run_once(_argv(self.command, self.placeholder, source), self.timeout, self.cwd,
                                        self.env, PRODUCER_STDOUT_LIMIT)
        failure = _no_answer(finished, self.timeout)
        if failure:
            return Conversion(failure[0], message=failure[1], **common)
        if finished.returncode != 0:
            message = finished.stderr.strip()
            if _UNCAUGHT in finished.stderr:
                return Conversion(Outcome.CRASH, message="an uncaught exception (a traceback is not a refusal)",
                                  **common)
            return Conversion(Outcome.REFUSED, refusal=message,
                              message=f"exit status {finished.returncode}" + ("" if message else ", nothing on stderr"),
                              **common)
        return Conversion(Outcome.CONVERTED, stream=finished.stdout, **common)

    def close(self) -> None:
        """Nothing stays running between inputs."""


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
