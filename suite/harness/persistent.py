"""The persistent protocol, version 1 (HARNESS.md §4.3): one long-lived
process, one JSON line per request and per reply.

A reply that is not valid protocol JSON, no reply within the timeout, or a
dead process is a crash for that case: the process group is killed and the
next case starts a fresh process (after a few failed starts in a row the
adapter stops trying, so a broken implementation fails fast).
"""

from __future__ import annotations

import queue
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from asr_conformance.harness.answers import Conversion, Outcome, ReadAnswer, Verdict
from asr_conformance.harness.oneshot import DEFAULT_TIMEOUT
from asr_conformance.harness.processes import TailBuffer, drain_into, kill_group, spawn
from asr_conformance.vocabulary import protocol

#: Longest reply line the harness reads; longer is a flood.
LINE_LIMIT = 8 * 1024 * 1024
#: Largest stream a producer may name in a convert reply.
STREAM_LIMIT = 256 * 1024 * 1024
#: Failed starts in a row after which the adapter stops restarting.
MAX_FAILED_STARTS = 3
_EOF = object()


class _Dead(Exception):
    """The process is gone or unusable; the message says why."""


@dataclass
class _Session:
    process: subprocess.Popen[bytes]
    lines: queue.Queue[object]
    stderr: TailBuffer
    started: protocol.Started | None = None


@dataclass
class PersistentValidator:
    """An implementation that speaks the persistent protocol, in any of its roles
    (validate, read, convert); one process serves every request of a worker."""

    command: Sequence[str]
    timeout: float = DEFAULT_TIMEOUT
    cwd: str | None = None
    #: Check every message both ways against its published schema.
    check_schemas: bool = False
    #: The role the process must announce in its handshake.
    role: str = "validator"
    #: Environment overrides for the process (a producer's metamorphic variant).
    env: Mapping[str, str] | None = None
    #: Every message sent and received, when ``record_traffic`` is set (for tests and reports).
    record_traffic: bool = False
    traffic: list[tuple[str, str]] = field(default_factory=list)
    _session: _Session | None = None
    _seq: int = 0
    _failed_starts: int = 0
    restarts: int = 0

    @property
    def implementation(self) -> protocol.Started | None:
        return self._session.started if self._session else None

    # -- lifecycle ---------------------------------------------------------

    def _start(self) -> _Session:
        if self._failed_starts >= MAX_FAILED_STARTS:
            raise _Dead(f"gave up after {MAX_FAILED_STARTS} failed starts in a row")
        process = spawn(self.command, self.cwd, subprocess.PIPE, self.env)
        lines: queue.Queue[object] = queue.Queue()
        stderr = TailBuffer()
        drain_into(process.stderr, stderr)  # type: ignore[arg-type]
        threading.Thread(target=_read_lines, args=(process.stdout, lines), daemon=True).start()
        session = _Session(process, lines, stderr)
        self._session = session
        try:
            self._send(protocol.Start())
            line = self._receive(session)
            started = protocol.decode_started(line)
        except (_Dead, protocol.ProtocolError) as error:
            self._failed_starts += 1
            self._discard()
            said = session.stderr.text().strip()
            raise _Dead(f"handshake failed: {error}" + (f"; its stderr ends: {said[-500:]}" if said else "")) from None
        if self.role not in started.roles:
            self._failed_starts = MAX_FAILED_STARTS
            self._discard()
            raise _Dead(f"the implementation's roles are {list(started.roles)}; it does not play the {self.role} role")
        session.started = started
        self._failed_starts = 0
        return session

    def _discard(self) -> None:
        if self._session is not None:
            kill_group(self._session.process)
            for pipe in (self._session.process.stdin, self._session.process.stdout, self._session.process.stderr):
                if pipe is not None:
                    try:
                        pipe.close()
                    except OSError:
                        pass
            self._session = None

    def close(self) -> None:
        """Ask the implementation to stop, then make sure its group is gone."""
        session = self._session
        if session is None:
            return
        try:
            self._send(protocol.Stop())
            session.process.wait(timeout=min(self.timeout, 5))
        except (_Dead, subprocess.TimeoutExpired):
            pass
        self._discard()

    # -- one exchange ------------------------------------------------------

    def _send(self, message: protocol.Request) -> None:
        assert self._session is not None
        line = protocol.encode(message)
        if self.check_schemas:
            protocol.check(message.schema, message.to_json())
        if self.record_traffic:
            self.traffic.append(("->", line))
        stdin = self._session.process.stdin
        assert stdin is not None
        try:
            stdin.write(line.encode("utf-8") + b"\n")
            stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise _Dead(self._death_notice()) from None

    def _receive(self, session: _Session) -> str:
        try:
            item = session.lines.get(timeout=self.timeout)
        except queue.Empty:
            raise _Dead(f"no reply within {self.timeout:g} s") from None
        if item is _EOF:
            raise _Dead(self._death_notice())
        if isinstance(item, bytes):
            raise _Dead(f"a reply line longer than {LINE_LIMIT} bytes (flood)")
        line = str(item)
        if self.record_traffic:
            self.traffic.append(("<-", line))
        return line

    def _death_notice(self) -> str:
        session = self._session
        if session is None:
            return "the process is not running"
        code = session.process.poll()
        if code is None:
            try:
                code = session.process.wait(timeout=1)
            except subprocess.TimeoutExpired:
                return "the process closed its stdout but is still running"
        return f"the process exited ({'signal ' + str(-code) if code < 0 else 'status ' + str(code)})"

    def _exchange(self, request: protocol.Validate | protocol.Convert | protocol.Read):
        """Send one request; return (reply, line, seconds) or a failure (outcome, message, line, stderr, seconds)."""
        started_at = time.monotonic()
        line = ""
        try:
            session = self._session or self._start()
            self._send(request)
            line = self._receive(session)
            reply = protocol.decode_reply(line, request, strict=self.check_schemas)
        except (_Dead, protocol.ProtocolError) as error:
            stderr = self._session.stderr.text() if self._session else ""
            had_session = self._session is not None
            self._discard()
            if had_session:
                self.restarts += 1
            outcome = Outcome.TIMEOUT if "no reply within" in str(error) else Outcome.CRASH
            return _Failure(outcome, f"{error}; process group killed, restarting for the next case",
                            line[:4000], stderr, time.monotonic() - started_at)
        return reply, line, time.monotonic() - started_at

    def _ask(self, kind: type, path: Path, answer_type: type):
        """Send one request.  A usable reply comes back as (reply, common fields of the answer);
        no reply, or an errored or skipped one, as (None, the finished answer of ``answer_type``)."""
        self._seq += 1
        request = kind(self._seq, str(path))
        sent = protocol.encode(request)
        answer = self._exchange(request)
        if isinstance(answer, _Failure):
            return None, answer_type(answer.outcome, message=answer.message, sent=sent, received=answer.line,
                                     stderr_tail=answer.stderr, seconds=answer.seconds)
        reply, line, seconds = answer
        common = dict(sent=sent, received=line[:4000], seconds=seconds)
        if isinstance(reply, (protocol.Errored, protocol.Skipped)):
            declined = Outcome.ERRORED if isinstance(reply, protocol.Errored) else Outcome.SKIPPED
            return None, answer_type(declined, message=reply.message, **common)
        return reply, common

    def validate(self, stream: Path) -> Verdict:
        reply, common = self._ask(protocol.Validate, stream, Verdict)
        if reply is None:
            return common
        assert isinstance(reply, protocol.Validated)
        violations = list(reply.violations)
        outcome = Outcome.ACCEPT if reply.verdict == "valid" else Outcome.REJECT
        return Verdict(outcome, frozenset(v["rule"] for v in violations), violations, **common)

    def read(self, stream: Path) -> ReadAnswer:
        reply, common = self._ask(protocol.Read, stream, ReadAnswer)
        if reply is None:
            return common
        assert isinstance(reply, protocol.Viewed)
        return ReadAnswer(Outcome.VIEWED, view=reply.view, **common)

    def convert(self, source: Path) -> Conversion:
        """Ask for a conversion; the stream the implementation wrote is read back (bounded) at once."""
        reply, common = self._ask(protocol.Convert, source, Conversion)
        if reply is None:
            return common
        assert isinstance(reply, protocol.Converted)
        if reply.refused is not None:
            return Conversion(Outcome.REFUSED, refusal=reply.refused, **common)
        try:
            with open(str(reply.stream_path), "rb") as written:
                stream = written.read(STREAM_LIMIT + 1)
        except OSError as error:
            return Conversion(Outcome.CRASH, message=f"cannot read the stream_path it named: {error}", **common)
        if len(stream) > STREAM_LIMIT:
            return Conversion(Outcome.CRASH, message=f"the stream is larger than {STREAM_LIMIT} bytes (flood)",
                              **common)
        return Conversion(Outcome.CONVERTED, stream=stream, **common)


@dataclass(slots=True)
class _Failure:
    """No usable reply: the case fails, the process is gone."""

    outcome: Outcome
    message: str
    line: str
    stderr: str
    seconds: float


def _read_lines(stream, lines: queue.Queue[object]) -> None:
    """Reader thread: one queue item per line; bytes for an overlong line; _EOF at the end."""
    try:
        while True:
            raw = stream.readline(LINE_LIMIT + 1)
            if not raw:
                break
            if len(raw) > LINE_LIMIT and not raw.endswith(b"\n"):
                lines.put(b"overlong")
                break
            lines.put(raw.decode("utf-8", "replace").rstrip("\r\n"))
    except (OSError, ValueError):
        pass
    lines.put(_EOF)

