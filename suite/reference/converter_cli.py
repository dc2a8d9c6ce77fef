"""The command-line shell of the example converters: one-shot and persistent contracts, exit codes.

Each converter (``claude_code_converter.py``, ``codex_converter.py``, ``gemini_converter.py``)
keeps only its mapping, a function from native bytes to stream bytes, and hands it to ``Shell``:

    asr-from-X INPUT > STREAM.jsonl    one-shot (docs/contract.md §2): exit 0, 1 refused, 2 usage, 70 bug
    asr-from-X                         persistent protocol (docs/contract.md §4): start, convert, stop

Standard library only, Python 3.11, like the converters: they import this file as a sibling when
run as scripts (``examples/*-converter`` link to them) and as part of the package otherwise.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

PROTOCOL_VERSION = 1
#: Exit statuses of the one-shot contract.
EXIT_OK, EXIT_REFUSED, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 70


class Refused(Exception):
    """The input is not one this converter can read; the message says why (one line on stderr)."""


def first_line(error: BaseException) -> str:
    """The first line of an error's message, so every refusal or bug report stays one line."""
    return (str(error).splitlines() or [type(error).__name__])[0]


def encode_stream(records: Iterable[dict[str, Any]], what: str) -> bytes:
    """Records as JSON Lines; a lone surrogate the input smuggled in is a refusal, not a crash."""
    text = "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise Refused(f"the {what} holds a string with an unpaired surrogate escape") from None


def read_input(path: str) -> bytes:
    """The input file's bytes; an unreadable path is a refusal naming the file."""
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise Refused(f"cannot read {path}: {error.strerror or error}") from None


@dataclass(frozen=True)
class Shell:
    """One converter's command line: its name, version, argument name and conversion."""

    name: str
    version: str
    #: How the usage line names the input (``ROLLOUT.jsonl``).
    argument: str
    convert: Callable[[bytes], bytes]

    def main(self, argv: list[str]) -> int:
        """One argument: one-shot; none: the persistent protocol on stdin/stdout; more: usage."""
        if len(argv) > 1:
            sys.stderr.write(f"usage: {self.name} [{self.argument}]\n")
            return EXIT_USAGE
        if argv:
            return self.one_shot(argv[0])
        return self.serve(sys.stdin, sys.stdout)

    def one_shot(self, path: str) -> int:
        """Convert one file to stdout; a refusal or a bug ends with one line on stderr, never a traceback."""
        try:
            stream = self.convert(read_input(path))
        except Refused as why:
            sys.stderr.write(f"{self.name}: refused: {why}\n")
            return EXIT_REFUSED
        except Exception as error:  # a converter bug still ends with one line, never a traceback
            sys.stderr.write(f"{self.name}: internal error: {type(error).__name__}: {first_line(error)}\n")
            return EXIT_INTERNAL
        sys.stdout.buffer.write(stream)
        sys.stdout.flush()
        return EXIT_OK

    def serve(self, stdin: TextIO, stdout: TextIO) -> int:
        """start / convert / stop; each stream goes to a file in a private folder."""
        folder = Path(tempfile.mkdtemp(prefix=f"{self.name}-"))
        previous: Path | None = None

        def reply(message: dict[str, Any]) -> None:
            stdout.write(json.dumps(message) + "\n")
            stdout.flush()

        try:
            for line in stdin:
                if not line.strip():
                    continue
                try:
                    request = json.loads(line)
                except ValueError:
                    request = None
                if not isinstance(request, dict):
                    reply({"seq": 0, "errored": True, "message": "unreadable request"})
                    continue
                command, seq = request.get("cmd"), request.get("seq")
                seq = seq if isinstance(seq, int) and not isinstance(seq, bool) and seq >= 0 else 0
                if command == "start":
                    if request.get("version") != PROTOCOL_VERSION:
                        reply({"seq": seq, "errored": True, "message": f"only protocol version {PROTOCOL_VERSION}"})
                        continue
                    reply({"version": PROTOCOL_VERSION, "implementation": {"name": self.name, "version": self.version},
                           "roles": ["producer"]})
                elif command == "stop":
                    return 0
                elif command == "convert" and isinstance(request.get("path"), str):
                    if previous is not None:  # the harness has read it by now
                        previous.unlink(missing_ok=True)
                    try:
                        stream = self.convert(read_input(request["path"]))
                    except Refused as why:
                        reply({"seq": seq, "refused": str(why)})
                        continue
                    except Exception as error:
                        reply({"seq": seq, "errored": True, "message": f"internal error: {first_line(error)}"})
                        continue
                    given = request.get("output_dir")  # the harness's fresh folder for this stream, when it gives one
                    previous = (Path(given) if isinstance(given, str) else folder) / f"stream-{seq}.jsonl"
                    previous.write_bytes(stream)
                    reply({"seq": seq, "stream_path": str(previous)})
                else:
                    reply({"seq": seq, "errored": True, "message": f"unknown or malformed request {command!r}"})
            return 0
        finally:
            shutil.rmtree(folder, ignore_errors=True)
