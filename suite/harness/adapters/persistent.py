"""The persistent protocol, version 1 (docs/contract.md §4): one long-lived
process, one JSON line per request and per reply.

A reply that is not valid protocol JSON, no reply within the timeout, or a
dead process is a crash for that case: the process group is killed and the
next case starts a fresh process (after a few failed starts in a row the
adapter stops trying, so a broken implementation fails fast).
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from asr_conformance.harness.adapters.answers import Conversion, Outcome, ReadAnswer, Verdict, named_rules
from asr_conformance.harness.adapters.oneshot import staged_suffix
from asr_conformance.harness.isolation import named_files, policies, sandbox
from asr_conformance.harness.isolation.boxes import Box
from asr_conformance.harness.isolation.named_files import UnsafeOutput
from asr_conformance.harness.isolation.policies import Policy
from asr_conformance.harness.isolation.processes import Child, TailBuffer, spawn, vanished_mount_point, wait_readable
from asr_conformance.vocabulary import protocol
from asr_conformance.vocabulary.option_defaults import DEFAULT_TIMEOUT
from asr_conformance.vocabulary.scoring import rule_names

#: The answer a request comes back as, when no usable reply does.
AnswerT = TypeVar("AnswerT", Verdict, ReadAnswer, Conversion)

#: Longest reply line the harness reads; longer is a flood.
LINE_LIMIT = 8 * 1024 * 1024
#: Failed starts in a row after which the adapter stops restarting.
MAX_FAILED_STARTS = 3
#: Longest wait for the process to exit after stop.
STOP_GRACE = 5.0


class _Dead(Exception):
    """The process is gone or unusable; the message says why."""


class HandshakeFailed(Exception):
    """The process did not complete the start handshake (the start-up check); the message says why."""


@dataclass
class _Session:
    child: Child
    #: Bytes read from stdout that are not a whole line yet.
    pending: bytearray = field(default_factory=bytearray)
    started: protocol.Started | None = None

    @property
    def process(self) -> subprocess.Popen[bytes]:
        return self.child.process

    @property
    def stderr(self) -> TailBuffer:
        return self.child.stderr


@dataclass
class PersistentImplementation:
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
    pass_env: tuple[str, ...] = ()
    #: Folders the variant made for the process (a fresh working directory), writable in the sandbox.
    writable: tuple[str, ...] = ()
    #: Largest stream a convert reply may name (None: --max-output).
    max_output: int | None = None
    policy: Policy | None = None
    _session: _Session | None = None
    #: The box the next process starts in (inputs may be staged in it before it starts).
    _next_box: Box | None = None
    _seq: int = 0
    _failed_starts: int = 0
    restarts: int = 0

    @property
    def implementation(self) -> protocol.Started | None:
        return self._session.started if self._session else None

    # -- lifecycle ---------------------------------------------------------

    def _start(self, deadline: float, again: bool = True) -> _Session:
        """Start the process and complete the handshake; a start the machine's own churn spoiled (a root-only
        entry removed between the sandbox's listing and bubblewrap's start, ``vanished_mount_point``) is made
        once more on a fresh listing, as a one-shot case's is, and is not counted as a failed start."""
        if self._failed_starts >= MAX_FAILED_STARTS:
            raise _Dead(f"gave up after {MAX_FAILED_STARTS} failed starts in a row")
        box, self._next_box = self._next_box or Box(policies.settings_of(self.policy)), None
        try:
            child = spawn(self.command, self.cwd, subprocess.PIPE, self.env, box, self.writable, self.pass_env,
                          self.policy)
        except OSError:
            box.close()
            raise
        session = _Session(child)
        self._session = session
        try:
            self._send(protocol.Start(), deadline)
            line = self._receive(session, deadline)
            started = protocol.decode_started(line)
        except (_Dead, protocol.ProtocolError) as error:
            self._discard()
            said = session.stderr.text().strip()
            if again and child.sandboxed and vanished_mount_point(said) and time.monotonic() < deadline:
                sandbox.forget_root_only()
                return self._start(deadline, again=False)
            self._failed_starts += 1
            raise _Dead(f"handshake failed: {error}" + (f"; its stderr ends: {said[-500:]}" if said else "")) from None
        if self.role not in started.roles:
            self._failed_starts = MAX_FAILED_STARTS
            self._discard()
            raise _Dead(f"the implementation's roles are {list(started.roles)}; it does not play the {self.role} role")
        session.started = started
        self._failed_starts = 0
        return session

    def handshake(self, wait: float | None = None) -> protocol.Started:
        """Start the process and complete the handshake now (the start-up check), not on the first request,
        waiting ``wait`` seconds for it (the case timeout when not given).

        Raises ``HandshakeFailed`` with the reason, or ``OSError`` when the command cannot be started."""
        if self._session is not None and self._session.started is not None:
            return self._session.started
        try:
            started = self._start(time.monotonic() + (self.timeout if wait is None else wait)).started
            assert started is not None
            return started
        except _Dead as error:
            raise HandshakeFailed(str(error)) from None

    def _discard(self) -> None:
        if self._session is not None:
            session, self._session = self._session, None
            session.child.owns_box = True
            session.child.close()
        if self._next_box is not None:
            self._next_box.close()
            self._next_box = None

    def close(self) -> None:
        """Ask the implementation to stop (it may take STOP_GRACE seconds), then make sure its tree is gone.
        Its stdin is closed after the stop (no request follows: end of file says so to a process that
        reads on without looking at ``cmd``), and its stdout too: whatever it writes after stop is
        neither read nor kept."""
        session = self._session
        if session is None:
            self._discard()
            return
        try:
            self._send(protocol.Stop(), time.monotonic() + min(self.timeout, STOP_GRACE))
            for pipe in (session.process.stdin, session.process.stdout):
                if pipe is not None:
                    try:
                        pipe.close()
                    except OSError:
                        pass
            deadline = time.monotonic() + min(self.timeout, STOP_GRACE)
            while session.process.poll() is None and time.monotonic() < deadline:
                wait_readable(session.child, [], deadline)
        except _Dead:
            pass
        self._discard()

    # -- one exchange ------------------------------------------------------

    def _send(self, message: protocol.Request, deadline: float) -> None:
        assert self._session is not None
        line = protocol.encode(message)
        if self.check_schemas:
            protocol.check(message.schema, message.to_json())
        if self.record_traffic:
            self.traffic.append(("->", line))
        stdin = self._session.process.stdin
        assert stdin is not None
        data = memoryview(line.encode("utf-8") + b"\n")
        while data:
            try:
                written = os.write(stdin.fileno(), data)
            except BlockingIOError:
                written = 0
            except (OSError, ValueError):
                raise _Dead(self._death_notice()) from None
            data = data[written:]
            if data and not self._wait_writable(stdin.fileno(), deadline):
                raise _Dead(f"the process did not read its request within {self.timeout:g} s")

    def _wait_writable(self, fd: int, deadline: float) -> bool:
        import selectors

        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_WRITE)
            remaining = deadline - time.monotonic()
            return remaining > 0 and bool(selector.select(remaining))

    def _check_idle(self, session: _Session) -> None:
        """Nothing may arrive while no request is outstanding: a reply nobody asked for fails the process."""
        fd = session.child.stdout_fd
        extra = len(session.pending)
        if fd is not None and not extra:
            try:
                data = os.read(fd, 4096)
            except BlockingIOError:
                data = None
            except OSError:
                data = b""
            if data == b"":
                raise _Dead(self._death_notice())
            extra = len(data or b"")
        if extra:
            raise _Dead("it wrote to stdout with no request outstanding (an unsolicited reply or a flood)")

    def _receive(self, session: _Session, deadline: float) -> str:
        """One reply line, read by the deadline loop; the bytes after it stay pending (and are unsolicited)."""
        fd = session.child.stdout_fd
        assert fd is not None
        while True:
            newline = session.pending.find(b"\n")
            if newline >= 0:
                raw = bytes(session.pending[:newline])
                del session.pending[: newline + 1]
                break
            if len(session.pending) > LINE_LIMIT:
                raise _Dead(f"a reply line longer than {LINE_LIMIT} bytes (flood)")
            ready = wait_readable(session.child, [fd], deadline)
            if not ready and session.process.poll() is None:
                raise _Dead(f"no reply within {self.timeout:g} s")
            try:
                data = os.read(fd, 1 << 16)
            except BlockingIOError:
                if ready:
                    continue
                data = b""  # it exited with nothing more written (a daemon of its may hold stdout open)
            except OSError:
                data = b""
            if not data:
                raise _Dead(self._death_notice())
            session.pending.extend(data)
        line = raw.decode("utf-8", "replace").rstrip("\r")
        if self.record_traffic:
            self.traffic.append(("<-", line))
        return line

    def _death_notice(self) -> str:
        session = self._session
        if session is None:
            return "the process is not running"
        code = session.child.returncode()
        if code is None:
            try:
                session.process.wait(timeout=1)
            except subprocess.TimeoutExpired:
                return "the process closed its stdout but is still running"
            code = session.child.returncode()
            assert code is not None
        return f"the process exited ({'signal ' + str(-code) if code < 0 else 'status ' + str(code)})"

    def _exchange(self, request: protocol.Validate | protocol.Convert | protocol.Read,
                  allowed: float) -> tuple[protocol.Reply, str, float] | _Failure:
        """Send one request; return (reply, line, seconds) or a failure (outcome, message, line, stderr, seconds)."""
        started_at = time.monotonic()
        line = ""
        try:
            session = self._session or self._start(time.monotonic() + allowed)
            self._check_idle(session)
            deadline = time.monotonic() + allowed
            self._send(request, deadline)
            line = self._receive(session, deadline)
            reply = protocol.decode_reply(line, request, strict=self.check_schemas)
        except (_Dead, protocol.ProtocolError) as error:
            stderr = self._session.stderr.text() if self._session else ""
            had_session = self._session is not None
            if had_session and self._session is not None and self._session.child.process.poll() is not None:
                hit = self._session.child.limit_hit()
                if hit:
                    error = _Dead(f"{error}: {hit}")
            self._discard()
            if had_session:
                self.restarts += 1
            outcome = Outcome.TIMEOUT if "no reply within" in str(error) else Outcome.CRASH
            return _Failure(outcome, f"{error}; process group killed, restarting for the next case",
                            line[:4000], stderr, time.monotonic() - started_at)
        return reply, line, time.monotonic() - started_at

    def _ask(self, request_for: Callable[[int], protocol.Validate | protocol.Convert | protocol.Read],
             answer_type: type[AnswerT]) -> tuple[protocol.Reply, dict[str, Any]] | tuple[None, AnswerT]:
        """Send one request.  A usable reply comes back as (reply, common fields of the answer);
        no reply, or an errored or skipped one, as (None, the finished answer of ``answer_type``)."""
        self._seq += 1
        request = request_for(self._seq)
        sent = protocol.encode(request)
        allowed, cut = policies.case_timeout(self.timeout, policies.settings_of(self.policy))
        if allowed <= 0:
            return None, answer_type(Outcome.TIMEOUT, message=policies.RUN_LIMIT_MESSAGE, sent=sent)
        answer = self._exchange(request, allowed)
        if isinstance(answer, _Failure):
            message = policies.RUN_LIMIT_MESSAGE if cut and answer.outcome is Outcome.TIMEOUT else answer.message
            return None, answer_type(answer.outcome, message=message, sent=sent, received=answer.line,
                                     stderr_tail=answer.stderr, seconds=answer.seconds)
        reply, line, seconds = answer
        common: dict[str, Any] = dict(sent=sent, received=line[:4000], seconds=seconds)
        if isinstance(reply, (protocol.Errored, protocol.Skipped)):
            declined = Outcome.ERRORED if isinstance(reply, protocol.Errored) else Outcome.SKIPPED
            return None, answer_type(declined, message=reply.message, **common)
        return reply, common

    def _box(self) -> Box:
        """The box of the running process, or of the one the next request starts."""
        if self._session is not None:
            return self._session.child.box
        if self._next_box is None:
            self._next_box = Box(policies.settings_of(self.policy))
        return self._next_box

    def _blind(self, source: Path, suffix: str = ".jsonl") -> tuple[Box, Path]:
        box = self._box()
        return box, box.stage(source, suffix)

    def validate(self, stream: Path) -> Verdict:
        box, staged = self._blind(stream)
        try:
            asked = self._ask(lambda seq: protocol.Validate(seq, str(staged)), Verdict)
        finally:
            self._release(box, staged)
        if asked[0] is None:
            return asked[1]
        reply, common = asked
        assert isinstance(reply, protocol.Validated)
        violations = list(reply.violations)
        outcome = Outcome.ACCEPT if reply.verdict == "valid" else Outcome.REJECT
        return Verdict(outcome, rules=rule_names(named_rules(violations)), diagnostics=violations, **common)

    def read(self, stream: Path) -> ReadAnswer:
        box, staged = self._blind(stream)
        try:
            asked = self._ask(lambda seq: protocol.Read(seq, str(staged)), ReadAnswer)
        finally:
            self._release(box, staged)
        if asked[0] is None:
            return asked[1]
        reply, common = asked
        assert isinstance(reply, protocol.Viewed)
        return ReadAnswer(Outcome.VIEWED, view=reply.view, **common)

    def convert(self, source: Path) -> Conversion:
        """Ask for a conversion into a fresh output folder; the stream is read back from it at once,
        as a regular file inside it, bounded in size and time."""
        box, staged = self._blind(source, staged_suffix(source))
        output = box.output_dir()
        try:
            asked = self._ask(lambda seq: protocol.Convert(seq, str(staged), str(output)), Conversion)
            if asked[0] is None:
                return asked[1]
            reply, common = asked
            assert isinstance(reply, protocol.Converted)
            if reply.refused is not None:
                return Conversion(Outcome.REFUSED, refusal=reply.refused, **common)
            limit = self.max_output or policies.settings_of(self.policy).max_output
            try:
                stream = named_files.read_output(str(reply.stream_path), output, box.output_identity(output), limit,
                                                 self.timeout)
            except UnsafeOutput as error:
                return Conversion(Outcome.CRASH, message=f"the stream it named is refused: {error}", **common)
            return Conversion(Outcome.CONVERTED, stream=stream, **common)
        finally:
            self._release(box, staged)
            self._release(box, output)

    def _release(self, box: Box, path: Path) -> None:
        """Remove a case's staged input or output folder; a box no process owns any more goes too."""
        box.discard(path)
        if box is not self._next_box and (self._session is None or self._session.child.box is not box):
            box.close()


@dataclass(slots=True)
class _Failure:
    """No usable reply: the case fails, the process is gone."""

    outcome: Outcome
    message: str
    line: str
    stderr: str
    seconds: float
