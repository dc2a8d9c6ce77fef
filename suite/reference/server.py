"""The reference validator behind the persistent protocol (docs/contract.md §4).

Reads one request per line on stdin and answers one line per request on
stdout, flushed.  Requests it cannot parse get an ``errored`` reply rather than
silence, so a harness never waits for nothing.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable
from typing import Any, TextIO

from asr_conformance import __version__
from asr_conformance.reference.checks import validate_path
from asr_conformance.reference.diagnostics import Level
from asr_conformance.reference.producer import Refusal, available, reference_convert
from asr_conformance.reference.reader import UnreadableStream, read_view
from asr_conformance.vocabulary import protocol

ROLES = ("validator", "reader") + (("producer",) if available() else ())
#: A validator as a function: path -> (conforms, [{"rule", "seq"?, "message"?}, ...]).
Judge = Callable[[str], "tuple[bool, list[dict[str, Any]]]"]
#: A reader as a function: path -> view (raises OSError or UnreadableStream when there is none).
Reader = Callable[[str], dict[str, Any]]
#: A producer as a function: path -> stream bytes (raises Refusal for input it will not convert).
Producer = Callable[[str], bytes]


def reference_judge(path: str) -> tuple[bool, list[dict[str, Any]]]:
    outcome = validate_path(path)
    violations = [
        {"rule": d.rule, **({"seq": d.seq} if d.seq is not None else {}), "message": d.message}
        for d in outcome.errors
    ]
    return outcome.valid, violations


def reference_judge_with_warnings(path: str) -> tuple[bool, list[dict[str, Any]]]:
    """The bundled persistent reference's answer: errors, then its SHOULD warnings marked ``"level": "warning"``,
    which name no rule (docs/contract.md §2.2), as the one-shot reference writes them."""
    outcome = validate_path(path)
    violations = [
        {"rule": d.rule, **({"seq": d.seq} if d.seq is not None else {}), "message": d.message,
         **({} if d.level is Level.ERROR else {"level": d.level.value})}
        for d in (*outcome.errors, *outcome.warnings)
    ]
    return outcome.valid, violations


def serve(stdin: TextIO, stdout: TextIO, judge: Judge = reference_judge_with_warnings,
          name: str = "asr-conformance-reference", reader: Reader = read_view,
          producer: Producer | None = reference_convert) -> int:
    def answer(message: protocol.Reply) -> None:
        stdout.write(protocol.encode(message) + "\n")
        stdout.flush()

    started = False
    written: list[str] = []
    try:
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
            elif command == "read" and isinstance(request.get("path"), str):
                try:
                    view = reader(request["path"])
                except OSError as error:
                    answer(protocol.Errored(seq, f"cannot read {request['path']}: {error.strerror or error}"))
                    continue
                except UnreadableStream as error:
                    answer(protocol.Errored(seq, f"no view of {request['path']}: {error}"))
                    continue
                answer(protocol.Viewed(seq, view))
            elif command == "convert" and isinstance(request.get("path"), str) and producer is not None:
                output_dir = request.get("output_dir") if isinstance(request.get("output_dir"), str) else None
                answer(_convert(producer, seq, request["path"], written, output_dir))
            elif command == "convert" and producer is None:
                answer(protocol.Skipped(seq, "this implementation does not take the producer role"))
            else:
                answer(protocol.Errored(seq, f"unknown or malformed request {command!r}"))
        return 0
    finally:
        _remove(written)


def _convert(producer: Producer, seq: int, path: str, written: list[str], output_dir: str | None = None) -> protocol.Reply:
    """Convert one input; the stream goes to a fresh file in the request's output_dir (or, from a
    harness that gives none, a temporary file), which the harness reads back.  The previous one
    is removed: the harness has read it by the time it asks again."""
    _remove(written)

    try:
        stream = producer(path)
    except OSError as error:
        return protocol.Errored(seq, f"cannot read {path}: {error.strerror or error}")
    except Refusal as refusal:
        return protocol.Converted(seq, refused=str(refusal) or "refused")
    handle, name = tempfile.mkstemp(prefix="asr-reference-", suffix=".jsonl", dir=output_dir)
    with os.fdopen(handle, "wb") as out:
        out.write(stream)
    written.append(name)
    return protocol.Converted(seq, stream_path=name)


def _remove(written: list[str]) -> None:
    while written:
        try:
            os.unlink(written.pop())
        except OSError:
            pass


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


def run_reader_either_way(reader: Reader, name: str) -> int:
    """For small example readers: ``NAME STREAM`` is one-shot (the view as JSON on stdout,
    exit 0; exit 2 when there is no view); ``NAME`` with no argument speaks the persistent
    protocol (and validates as the reference does)."""
    import json

    if len(sys.argv) < 2:
        return serve(sys.stdin, sys.stdout, name=name, reader=reader)
    try:
        view = reader(sys.argv[-1])
    except (OSError, UnreadableStream) as error:
        sys.stderr.write(f"{name}: {sys.argv[-1]}: {error}\n")
        return 2
    print(json.dumps(view, ensure_ascii=False))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
