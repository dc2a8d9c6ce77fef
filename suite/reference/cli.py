"""``asr-validate FILE...``: the reference validator on the command line.

Exit status: 0 when every file conforms, 1 when one does not, 2 on a usage
error (no files, an unreadable file, an unknown option).  ``-`` reads the
stream from standard input; a reader that closes the pipe early (``| head``)
ends the output quietly, with the exit status the files earned.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TextIO

from asr_conformance import __version__
from asr_conformance.reference.checks import validate_path, validate_stream
from asr_conformance.reference.diagnostics import StreamDiagnostics

EXIT_CONFORMS = 0
EXIT_DOES_NOT_CONFORM = 1
EXIT_USAGE = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="asr-validate",
        description="Check ASR streams against every rule decidable from the stream alone.",
        epilog="Exit status: 0 every file conforms, 1 a file does not, 2 usage error.",
    )
    parser.add_argument("--version", action="version", version=f"asr-validate {__version__}")
    parser.add_argument("files", nargs="+", metavar="FILE", help="stream files (.jsonl); - reads standard input")
    parser.add_argument(
        "--json",
        action="store_true",
        help="print diagnostics as JSON lines ({rule, seq, line, level, message, file})",
    )
    parser.add_argument("--no-warnings", action="store_true", help="do not print warnings")
    parser.add_argument("-q", "--quiet", action="store_true", help="print nothing; use the exit status")
    return parser


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    parser = build_parser()
    try:
        options = parser.parse_args(argv)
    except SystemExit as exit_:
        return EXIT_USAGE if exit_.code else EXIT_CONFORMS
    outcomes: list[tuple[str, StreamDiagnostics]] = []
    for name in options.files:
        try:
            outcomes.append((name, validate_stream(sys.stdin.buffer) if name == "-" else validate_path(name)))
        except OSError as error:
            print(f"asr-validate: {name}: cannot read: {error.strerror or error}", file=sys.stderr)
            return EXIT_USAGE
    status = EXIT_CONFORMS if all(o.valid for _, o in outcomes) else EXIT_DOES_NOT_CONFORM
    if not options.quiet:
        try:
            for name, outcome in outcomes:
                _print(out, name, outcome, options.json, not options.no_warnings)
            if not options.json:
                _print_summary(out, outcomes)
            out.flush()
        except BrokenPipeError:
            _stdout_gone()
    return status


def _stdout_gone() -> None:
    """The reader of stdout went away (``| head``): stop writing, and keep Python from complaining at exit."""
    import os

    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _print(out: TextIO, name: str, outcome: StreamDiagnostics, as_json: bool, warnings: bool) -> None:
    for diagnostic in outcome.diagnostics:
        if not warnings and diagnostic.level.value == "warning":
            continue
        if as_json:
            out.write(json.dumps({**diagnostic.as_json(), "file": name}, ensure_ascii=False) + "\n")
        else:
            out.write(diagnostic.as_text(name) + "\n")


def _print_summary(out: TextIO, outcomes: list[tuple[str, StreamDiagnostics]]) -> None:
    failing = 0
    for name, outcome in outcomes:
        errors, warnings = len(outcome.errors), len(outcome.warnings)
        verdict = "conforms" if outcome.valid else "does not conform"
        failing += not outcome.valid
        rules = ", ".join(sorted(outcome.rules())) if errors else ""
        detail = f"{errors} error(s), {warnings} warning(s)" + (f" [{rules}]" if rules else "")
        out.write(f"{name}: {verdict}: {outcome.records} record(s), {detail}\n")
    if len(outcomes) > 1:
        out.write(f"{len(outcomes) - failing} of {len(outcomes)} file(s) conform\n")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
