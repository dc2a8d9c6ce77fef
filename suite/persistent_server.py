"""The reference validator behind the persistent protocol (HARNESS.md §4.3).

Reads one request per line on stdin and answers one line per request on
stdout, flushed.  Requests it cannot parse get an ``errored`` reply rather than
silence, so a harness never waits for nothing.
"""

from __future__ import annotations

import sys
from typing import TextIO

from typing import Callable

from . import __version__, protocol
from .checks import validate_path

ROLES = ("validator",)
#: A validator as a function: path -> (conforms, [{"rule", "seq"?, "message"?}, ...]).
Judge = Callable[[str], "tuple[bool, list[dict]]"]


def reference_judge(path: str) -> tuple[bool, list[dict]]:
    outcome = validate_path(path)
    violations = [
        {"rule": d.rule, **({"seq": d.seq} if d.seq is not None else {}), "message": d.message}
        for d in outcome.errors
    ]
    return outcome.valid, violations


def serve(stdin: TextIO, stdout: TextIO, judge: Judge = reference_judge,
          name: str = "asr-conformance-reference") -> int:
    def answer(message: protocol.Reply) -> None:
        stdout.write(protocol.encode(message) + "\n")
        stdout.flush()

    started = False
    for line in stdin:
        if not line.strip():
            continue
        try:
            request = protocol.decode_json(line)
        except protocol.ProtocolError as error:
            answer(protocol.Errored(0, f"unreadable request: {error}"))
            continue
        command = request.get("cmd")
        seq = request.get("seq", 0) if isinstance(request.get("seq"), int) else 0
        if command == "start":
            if request.get("version") != protocol.VERSION:
                answer(protocol.Errored(seq, f"only protocol version {protocol.VERSION} is spoken"))
                continue
            started = True
            answer(protocol.Started(protocol.VERSION, name, __version__, ROLES))
        elif command == "stop":
            return 0
        elif not started:
            answer(protocol.Errored(seq, "the first request must be start"))
        elif command == "validate" and isinstance(request.get("path"), str):
            try:
                conforms, violations = judge(request["path"])
            except OSError as error:
                answer(protocol.Errored(seq, f"cannot read {request['path']}: {error.strerror or error}"))
                continue
            answer(protocol.Validated(seq, "valid" if conforms else "invalid", tuple(violations)))
        elif command in ("convert", "read"):
            answer(protocol.Skipped(seq, f"the reference does not take the {command} role yet"))
        else:
            answer(protocol.Errored(seq, f"unknown or malformed request {command!r}"))
    return 0


def main() -> int:
    return serve(sys.stdin, sys.stdout)


def run_either_way(judge: Judge, name: str) -> int:
    """For small example validators: ``NAME STREAM`` is one-shot (exit 0/1, diagnostics
    on stdout); ``NAME`` with no argument speaks the persistent protocol."""
    import json

    if len(sys.argv) < 2:
        return serve(sys.stdin, sys.stdout, judge, name)
    conforms, violations = judge(sys.argv[-1])
    for violation in violations:
        print(json.dumps(violation))
    return 0 if conforms else 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
