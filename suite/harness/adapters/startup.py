"""The start-up check: each implementation is started once before the first case.

A set-up that cannot work (a command that does not exist, a file that is not executable, a
directory, a process that exits before its handshake or answers it with garbage) would
otherwise fail every case of the run with the same internal error and blame spec rules for
it.  Started here once, it fails once, as a usage error naming the manifest or path.

One-shot implementations are run on a tiny valid stream (one header record), a producer on an
input of its own format (its first input, or a transcript of its source format's pack); whatever they
answer is theirs to answer (the cases judge it), except what only a command that never ran
gives: an error starting it, the sandbox's own refusal, or the shell's 126/127 ("cannot
execute", "not found").  Persistent implementations complete the handshake and must announce
every role they are certified in.
"""

from __future__ import annotations

import os
import shlex
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from asr_conformance.harness.adapters.oneshot import trial_run
from asr_conformance.harness.adapters.persistent import HandshakeFailed, PersistentImplementation
from asr_conformance.harness.adapters.targets import Target
from asr_conformance.harness.isolation import boxes, policies

if TYPE_CHECKING:  # loading the packs is deferred until a start needs a generated input
    from asr_conformance.packs.registry import Packs

#: A valid ASR stream of one record: the smallest a validator can be asked about.
TINY_STREAM = (
    b'{"type":"session","seq":0,"id":"h","formatVersion":"0.1","agent":{"name":"example-agent"},'
    b'"sessionId":"s-1","producer":{"name":"example-producer","version":"1.0","method":"native",'
    b'"instance":"i-1"},"profiles":["core"],"contentLevel":"full"}\n'
)
#: Longest wait for a one-shot answer to the tiny stream: a slow answer is no set-up error, and the
#: cases time it against --timeout anyway.
ONESHOT_WAIT = 10.0
#: Longest wait for a persistent process's handshake at start-up: an interpreter that starts slowly on a busy
#: machine is no set-up error, whatever the case timeout (cases that restart it time the handshake with the case).
HANDSHAKE_WAIT = 10.0
#: Exit statuses with which a POSIX shell says the command never ran (cannot execute, not found).
_SHELL_NEVER_RAN = {126: "the shell could not execute the command (exit status 126)",
                    127: "the shell did not find the command (exit status 127)"}


@dataclass(frozen=True)
class StartCheck:
    """How one implementation's start went: what was sent and received, and the problem, if any."""

    source: str
    protocol: str
    problem: str = ""
    #: The exchange in order: ("sent", line) and ("received", line) pairs.
    traffic: tuple[tuple[str, str], ...] = ()
    stderr: str = ""
    #: What it said of itself (the handshake's name and version), or how the one-shot run ended.
    said: str = ""

    @property
    def ok(self) -> bool:
        return not self.problem

    @property
    def sent(self) -> tuple[str, ...]:
        return tuple(line for way, line in self.traffic if way == "sent")

    @property
    def received(self) -> tuple[str, ...]:
        return tuple(line for way, line in self.traffic if way == "received")

    def usage_error(self) -> str:
        """The one line a failed check gives as pytest's usage error."""
        tail = self.stderr.strip()[-300:]
        return f"{self.source}: the implementation does not start: {self.problem}" + (
            f"; its stderr ends: {tail}" if tail and tail not in self.problem else "") + " (nothing was run; `asr-conformance smoke` shows more)"


def check_start(target: Target, packs: Packs | None = None) -> StartCheck:
    """Start ``target`` once as the run would (its protocol, folder, environment and sandbox); a producer's
    generated start input comes from ``packs`` (the run's; every installed pack by default)."""
    source = target.source or "the bundled reference"
    if target.protocol == "persistent":
        return _check_persistent(target, source)
    return _check_oneshot(target, source, packs)


def _check_oneshot(target: Target, source: str, packs: Packs | None = None) -> StartCheck:
    # In the run's staging, so that a run ended by a signal during the check leaves nothing behind.
    with tempfile.TemporaryDirectory(prefix="start-", dir=boxes.staging_root(policies.settings_of(target.policy))) as folder:
        name, data = start_input(target, packs)
        stream = Path(folder) / name
        stream.write_bytes(data)
        try:
            finished, common = trial_run(target.command, target.placeholder, stream,
                                         min(target.timeout, ONESHOT_WAIT), target.cwd, target.pass_env,
                                         target.policy)
        except OSError as error:
            return StartCheck(source, "oneshot", _cannot_start(target, error), (("sent", shlex.join(target.command)),))
    traffic = (("sent", common["sent"]),) + ((("received", common["received"]),) if common["received"] else ())
    code = finished.returncode
    problem = finished.failure and (_program_problem(target) or finished.failure)
    if not problem and code in _SHELL_NEVER_RAN and code not in target.accept_codes | target.reject_codes:
        problem = _SHELL_NEVER_RAN[code]
    if finished.timed_out:
        said = f"no answer within {min(target.timeout, ONESHOT_WAIT):g} s (the cases will time it)"
    elif code is not None and code < 0:
        said = f"killed by signal {-code}"
    else:
        said = f"exit status {code}"
    return StartCheck(source, "oneshot", problem, traffic, finished.stderr, said)


def start_input(target: Target, packs: Packs | None = None) -> tuple[str, bytes]:
    """What a one-shot start is run on: for a producer, an input of its own format (its first input, else a
    transcript its source format's pack generates); for a validator or a reader, the tiny stream."""
    if target.roles and all(role == "producer" for role in target.roles):
        for given in target.inputs[:1]:
            try:
                return given.path.name, given.path.read_bytes()
            except OSError:
                break  # the cases name an unreadable input; the start is tried on the tiny stream
        for format in target.source_formats:
            generated = _generated(format, packs)
            if generated is not None:
                return generated
    return "tiny.jsonl", TINY_STREAM


def _generated(format: str, packs: Packs | None = None) -> tuple[str, bytes] | None:
    """One transcript of a format from its pack's generator (its first feature), or None."""
    from asr_conformance.packs.check import first_example
    from asr_conformance.packs.registry import installed

    found = (packs if packs is not None else installed()).for_format(format)
    generator = found.pack.generator if found is not None else None
    if generator is None or not list(generator.FEATURES):
        return None
    try:
        transcript = first_example(generator.transcripts(list(generator.FEATURES)[0]))
        data = transcript.data()
    except Exception:  # a pack's failure is judged where the pack is used, not at start-up
        return None
    namer = found.pack.file_name if found is not None else None
    return (namer("0" * 16) if namer is not None else "start.jsonl"), data


def _check_persistent(target: Target, source: str) -> StartCheck:
    adapter = PersistentImplementation(target.command, target.timeout, target.cwd, role=target.roles[0],
                                  record_traffic=True, pass_env=target.pass_env, policy=target.policy)
    problem, said = "", ""
    try:
        started = adapter.handshake(max(target.timeout, HANDSHAKE_WAIT))
        said = " ".join(filter(None, [started.name, started.implementation_version]))
        missing = [role for role in target.roles if role not in started.roles]
        if missing:
            problem = (f"its handshake announces the roles {list(started.roles)}, not "
                       f"{', '.join(missing)}, which the run certifies")
    except HandshakeFailed as error:
        problem = str(error)  # it ends with the stderr tail, when there was one
    except OSError as error:
        problem = _cannot_start(target, error)
    stderr = adapter._session.stderr.text() if adapter._session else ""
    adapter.close()
    traffic = tuple(("sent" if way == "->" else "received", line) for way, line in adapter.traffic)
    return StartCheck(source, "persistent", problem, traffic or (("sent", shlex.join(target.command)),), stderr, said)


def _cannot_start(target: Target, error: OSError) -> str:
    """Why the program cannot be started, in the words of what it is."""
    return _program_problem(target) or f"the command {target.command[0]!r} cannot be started: {error.strerror or error}"


def _program_problem(target: Target) -> str:
    """What is wrong with the program file itself ("" when it looks like an executable)."""
    program = target.command[0]
    if os.sep in program:
        found = program if os.path.isabs(program) else os.path.join(target.cwd or os.getcwd(), program)
    else:
        found = shutil.which(program) or ""
    if not found:
        return f"the command {program!r} is not found on PATH"
    if os.path.isdir(found):
        return f"the command {program!r} is a directory, not an executable"
    if not os.path.exists(found):
        return f"the command {program!r} does not exist"
    if not os.access(found, os.X_OK):
        return f"the command {program!r} is not executable (chmod +x it)"
    return ""
