"""One process per case (docs/contract.md §2): ``COMMAND... FILE``.

A validator answers with its exit status, a reader with a view on stdout, a
producer with a stream on stdout (or a refusal: non-zero exit, message on
stderr).  Whatever the role, a signal, a timeout or a flood is never an answer."""

from __future__ import annotations

import shlex
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from asr_conformance.harness.adapters.answers import Conversion, JSONObject, Outcome, ReadAnswer, Verdict, named_rules
from asr_conformance.harness.isolation import policies
from asr_conformance.harness.isolation.boxes import Box
from asr_conformance.harness.isolation.policies import Policy, UsageError
from asr_conformance.harness.isolation.processes import STDOUT_LIMIT, Child, Finished, run_bounded, spawn
from asr_conformance.vocabulary.option_defaults import DEFAULT_MAX_OUTPUT, DEFAULT_TIMEOUT
from asr_conformance.vocabulary.scoring import rule_names
from asr_conformance.vocabulary.strict_json import TooDeep, loads_bounded

#: Largest input suffix kept on a staged copy (a converter may tell formats apart by it).
_SUFFIX_CHARS = 8


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
    pass_env: tuple[str, ...] = ()
    policy: Policy | None = None
    #: Each next case's sandbox started while this one runs (a run's session adapter: ``started_ahead``).
    ahead: Ahead | None = None

    def argv(self, stream: Path) -> list[str]:
        return _argv(self.command, self.placeholder, stream)

    def validate(self, stream: Path) -> Verdict:
        run = _run_once(self.command, self.placeholder, stream, self.timeout, self.cwd, pass_env=self.pass_env,
                        policy=self.policy, ahead=self.ahead)
        finished, common = run.finished, run.common
        failure = _no_answer(finished, run.timeout, run.cut)
        if finished.limit and not failure:
            return Verdict(Outcome.CRASH, message=f"exit status {finished.returncode}: {finished.limit}", **common)
        if failure and failure[0] is Outcome.TIMEOUT:
            return Verdict(Outcome.TIMEOUT, message=failure[1], **common)
        if finished.flooded or finished.failure:
            return Verdict(Outcome.CRASH, message=failure[1] if failure else "", **common)
        code = finished.returncode
        try:
            diagnostics = parse_diagnostics(run.text)
        except TooDeep as error:
            return Verdict(Outcome.CRASH, message=f"a diagnostic is unusable: {error}", **common)
        rules = rule_names(named_rules(diagnostics))
        if code in self.accept_codes:
            return Verdict(Outcome.ACCEPT, rules=rules, diagnostics=diagnostics, **common)
        if code in self.reject_codes:
            if _UNCAUGHT in finished.stderr:  # a Python validator that died exits 1 too: that is no reject
                return Verdict(Outcome.CRASH, message="an uncaught exception (a traceback is not a verdict)", **common)
            return Verdict(Outcome.REJECT, rules=rules, diagnostics=diagnostics, **common)
        how = f"killed by signal {-code}" if code is not None and code < 0 else f"exit status {code}"
        expected = ", ".join(str(c) for c in sorted(self.accept_codes | self.reject_codes))
        return Verdict(Outcome.CRASH, message=f"{how} is not a verdict (expected {expected})", **common)

    def close(self) -> None:
        """Nothing stays running between cases; the next case's held sandbox, if any, is killed."""
        if self.ahead is not None:
            self.ahead.close()


#: Largest stream a one-shot producer may write, unless --max-output says otherwise.
PRODUCER_STDOUT_LIMIT = DEFAULT_MAX_OUTPUT


#: A Python interpreter's dying words: a crash, even though the exit status is 1.
_UNCAUGHT = "Traceback (most recent call last):"


def _argv(command: Sequence[str], placeholder: str | None, path: Path) -> list[str]:
    if placeholder:
        return [part.replace(placeholder, str(path)) for part in command]
    return [*command, str(path)]


def staged_suffix(source: Path) -> str:
    """The suffix a staged copy keeps: the source's, when it is a short plain extension."""
    suffix = Path(source).suffix
    plain = 1 < len(suffix) <= _SUFFIX_CHARS + 1 and suffix[1:].isascii() and suffix[1:].isalnum()
    return suffix if plain else ""


@dataclass(slots=True)
class _Run:
    finished: Finished
    #: stdout as text (validators and readers; a producer's stream stays bytes).
    text: str
    common: dict[str, Any]
    timeout: float
    cut: bool


def _run_once(command: Sequence[str], placeholder: str | None, source: Path, timeout: float, cwd: str | None,
              env: Mapping[str, str] | None = None, limit: int = STDOUT_LIMIT, suffix: str = ".jsonl",
              decode: bool = True, pass_env: Sequence[str] = (), writable: Sequence[str] = (),
              policy: Policy | None = None, ahead: Ahead | None = None) -> _Run:
    """Run one case on a blind copy of ``source``; return the process's end, its stdout as text, and
    what every answer shows (what was sent, what came back, the stderr tail, how long it took).  With
    ``ahead``, the case runs in the sandbox started for it while the case before ran, when it fits, and the
    next case's is started while this one runs."""
    started = time.monotonic()
    settings = policies.settings_of(policy)
    allowed, cut = policies.case_timeout(timeout, settings)
    start = _Start(tuple(command), placeholder, suffix, cwd, tuple(sorted((env or {}).items())), tuple(pass_env),
                   tuple(writable), policy)
    held = ahead.take(start) if ahead else None
    box = held.box if held else Box(settings)
    unreleased = held.child if held else None
    try:
        staged = box.stage(source, suffix, held.staged if held else None)
        argv = held.argv if held else _argv(command, placeholder, staged)
        if allowed <= 0:
            finished = Finished(None, b"", "", timed_out=True)
        else:
            unreleased = None  # run_bounded releases it and ends it
            then = (lambda: ahead.prepare(start)) if ahead else None
            finished = run_bounded(argv, allowed, cwd, env, limit, box=box, writable=writable, pass_env=pass_env,
                                   policy=policy, held=held.child if held else None, then=then,
                                   later=ahead.defer if ahead else None)
    finally:
        if unreleased is not None:
            unreleased.close()
        if ahead is None:
            box.close()
        else:
            ahead.defer(box.close)  # after what is left of the case's processes: done while the next case runs
    text = finished.stdout.decode("utf-8", "replace") if decode else ""
    shown = text if decode else finished.stdout[:8000].decode("utf-8", "replace")
    common = dict(sent=shlex.join(argv), received=_clip(shown), stderr_tail=finished.stderr,
                  seconds=time.monotonic() - started)
    return _Run(finished, text, common, allowed, cut)


@dataclass(frozen=True, slots=True)
class _Start:
    """Everything a case's start depends on but its input: a held sandbox serves a case with the same."""

    command: tuple[str, ...]
    placeholder: str | None
    suffix: str
    cwd: str | None
    env: tuple[tuple[str, str], ...]
    pass_env: tuple[str, ...]
    writable: tuple[str, ...]
    policy: Policy | None


@dataclass(slots=True)
class _Held:
    start: _Start
    box: Box
    #: The name the case's input will be staged under (already on the held command line).
    staged: Path
    argv: list[str]
    child: Child


class Ahead:
    """The next case's sandbox, started while the current case runs and is judged.

    Making a sandbox (namespaces, some forty mounts, limits, a pids cgroup) is mostly waiting, tens of
    milliseconds on a loaded machine, once per case.  So once a case's process runs, the next case's is
    started: a box of its own, the random name its input will have, and bubblewrap, which builds the whole
    sandbox and then waits, before it runs the command, on a pipe (``spawn(hold=True)``).  The next case
    stages its input under that name and releases it.  Every case keeps its own box, view, PID namespace,
    cgroup and limits; no code of the implementation runs before its input is in place; a held sandbox that
    does not fit the next case (another command, policy, environment...), or that died, is killed and the case
    started as before; ``close`` kills the one held (an adapter's close, at the end of the session)."""

    def __init__(self) -> None:
        self._held: _Held | None = None
        #: What is left of ending the cases before (``Child.close(later=...)``): done by the next ``prepare``,
        #: so while the next case runs, or by ``close``.
        self._left: list[Callable[[], None]] = []

    def defer(self, work: Callable[[], None]) -> None:
        """Keep ``work`` (waiting for a finished case's last processes to be gone) for the next ``prepare``."""
        self._left.append(work)

    def _finish_left(self) -> None:
        while self._left:
            self._left.pop(0)()

    @property
    def waiting(self) -> Child | None:
        """The held sandbox's process, waiting for its case (None when none is held)."""
        return self._held.child if self._held else None

    def take(self, start: _Start) -> _Held | None:
        """The held sandbox when it was made for ``start`` and still waits, else None (it is killed)."""
        held, self._held = self._held, None
        if held is not None and (held.start != start or held.child.process.poll() is not None):
            _discard(held)
            return None
        return held

    def prepare(self, start: _Start) -> None:
        """End what is left of the case before, then start and hold the sandbox of a case started as ``start``; a
        failure is left to that case's own start."""
        self.close()
        settings = policies.settings_of(start.policy)
        try:
            if policies.sandbox_mode(settings.sandbox)[0] != "bwrap" or policies.run_limit_reached(settings):
                return
        except UsageError:
            return
        box = Box(settings)
        try:
            staged = box.reserve(start.suffix)
            argv = _argv(start.command, start.placeholder, staged)
            child = spawn(argv, start.cwd, subprocess.DEVNULL, dict(start.env) if start.env else None, box,
                          start.writable, start.pass_env, start.policy, hold=True)
        except Exception:  # noqa: BLE001 - the case itself meets (and reports) what failed here
            box.close()
            return
        self._held = _Held(start, box, staged, argv, child)

    def close(self) -> None:
        """End what is left of the cases before, kill the held sandbox, if any, and take its box away."""
        self._finish_left()
        held, self._held = self._held, None
        if held is not None:
            _discard(held)


def _discard(held: _Held) -> None:
    held.child.close()
    held.box.close()


Adapter = TypeVar("Adapter")


def started_ahead(adapter: Adapter) -> Adapter:
    """``adapter`` with each next case's sandbox started ahead (``Ahead``), when it is a one-shot validator or
    reader; any other adapter as it is.  For a run's session adapters, which are closed at the session's end."""
    if isinstance(adapter, (OneShotValidator, OneShotReader)) and adapter.ahead is None:
        adapter.ahead = Ahead()
    return adapter


def trial_run(command: Sequence[str], placeholder: str | None, source: Path, timeout: float, cwd: str | None,
              pass_env: Sequence[str] = (), policy: Policy | None = None) -> tuple[Finished, dict[str, Any]]:
    """Run the command once on ``source`` as a case would run it; return how it ended and what was sent
    and received (the start-up check; spawning errors are raised, as ``OSError``)."""
    run = _run_once(command, placeholder, source, timeout, cwd, pass_env=pass_env, policy=policy)
    return run.finished, run.common


def _no_answer(finished: Finished, timeout: float, cut: bool = False) -> tuple[Outcome, str] | None:
    """Why a finished process gave no answer at all (timeout, flood, signal, no sandbox)."""
    if finished.timed_out:
        if cut:
            return Outcome.TIMEOUT, policies.RUN_LIMIT_MESSAGE
        return Outcome.TIMEOUT, f"no exit within {timeout:g} s; process group killed"
    if finished.flooded:
        return Outcome.CRASH, "stdout flooded past the read limit; process group killed"
    if finished.failure:
        return Outcome.CRASH, finished.failure
    code = finished.returncode
    if code is not None and code < 0:
        return Outcome.CRASH, f"killed by signal {-code}" + (f": {finished.limit}" if finished.limit else "")
    return None


@dataclass(slots=True)
class OneShotReader:
    """A reader run once per stream: exit 0 with the view JSON on stdout."""

    command: Sequence[str]
    timeout: float = DEFAULT_TIMEOUT
    placeholder: str | None = None
    cwd: str | None = None
    pass_env: tuple[str, ...] = ()
    policy: Policy | None = None
    #: Each next case's sandbox started while this one runs (a run's session adapter: ``started_ahead``).
    ahead: Ahead | None = None

    def read(self, stream: Path) -> ReadAnswer:
        run = _run_once(self.command, self.placeholder, stream, self.timeout, self.cwd, pass_env=self.pass_env,
                        policy=self.policy, ahead=self.ahead)
        finished, common = run.finished, run.common
        failure = _no_answer(finished, run.timeout, run.cut)
        if failure:
            return ReadAnswer(failure[0], message=failure[1], **common)
        if finished.returncode != 0:
            why = f": {finished.limit}" if finished.limit else " (a reader exits 0 with a view)"
            return ReadAnswer(Outcome.CRASH, message=f"exit status {finished.returncode}{why}", **common)
        try:
            view = loads_bounded(run.text)
        except ValueError as error:
            return ReadAnswer(Outcome.CRASH, message=f"stdout is not one JSON document (or is nested too deeply): {error}", **common)
        if not isinstance(view, dict):
            return ReadAnswer(Outcome.CRASH, message="the view must be a JSON object", **common)
        return ReadAnswer(Outcome.VIEWED, view=view, **common)

    def close(self) -> None:
        """Nothing stays running between cases; the next case's held sandbox, if any, is killed."""
        if self.ahead is not None:
            self.ahead.close()


@dataclass(slots=True)
class OneShotProducer:
    """A producer run once per input: exit 0 with the stream on stdout; non-zero with a message is a refusal."""

    command: Sequence[str]
    timeout: float = DEFAULT_TIMEOUT
    placeholder: str | None = None
    cwd: str | None = None
    #: Environment overrides (a metamorphic variant: another clock, timezone, HOME...).
    env: Mapping[str, str] | None = None
    pass_env: tuple[str, ...] = ()
    #: Folders the variant made for the process (a fresh working directory), writable in the sandbox.
    writable: tuple[str, ...] = ()
    #: Largest stream on stdout (None: --max-output).
    limit: int | None = None
    policy: Policy | None = None

    def convert(self, source: Path) -> Conversion:
        limit = self.limit or policies.settings_of(self.policy).max_output
        run = _run_once(self.command, self.placeholder, source, self.timeout, self.cwd, self.env, limit,
                        staged_suffix(source), decode=False, pass_env=self.pass_env, writable=self.writable,
                        policy=self.policy)
        finished, common = run.finished, run.common
        failure = _no_answer(finished, run.timeout, run.cut)
        if failure:
            message = failure[1]
            if finished.flooded:
                message = f"stdout passed the output limit of {limit} bytes (--max-output); process group killed"
            return Conversion(failure[0], message=message, **common)
        if finished.returncode != 0:
            message = finished.stderr.strip()
            if finished.limit:
                return Conversion(Outcome.CRASH, message=f"exit status {finished.returncode}: {finished.limit}", **common)
            if _UNCAUGHT in finished.stderr:
                return Conversion(Outcome.CRASH, message="an uncaught exception (a traceback is not a refusal)",
                                  **common)
            return Conversion(Outcome.REFUSED, refusal=message,
                              message=f"exit status {finished.returncode}" + ("" if message else ", nothing on stderr"),
                              **common)
        return Conversion(Outcome.CONVERTED, stream=finished.stdout, **common)

    def close(self) -> None:
        """Nothing stays running between inputs."""


def parse_diagnostics(stdout: str) -> list[JSONObject]:
    """Lines of stdout that are diagnostics ({"rule": ...}); other lines are ignored (docs/contract.md §2.2).
    A line nested too deeply to judge raises TooDeep (the answer is unusable, not ignorable)."""
    found: list[JSONObject] = []
    # Lines end at LF (CR LF too, by the strip): a message may quote the stream, and U+2028 or U+0085
    # inside its JSON string must not cut the diagnostic in two (str.splitlines would).
    for line in stdout.split("\n"):
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            value = loads_bounded(line)
        except TooDeep:
            raise
        except ValueError:
            continue
        if isinstance(value, dict) and isinstance(value.get("rule"), str):
            found.append(value)
    return found


def _clip(text: str, limit: int = 4000) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n... ({len(text) - limit} more characters)"
