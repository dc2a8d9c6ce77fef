"""``asr-conformance``: the suite's own command, beside ``pytest``.

    asr-conformance summary reports/out/report.json          # the verdict again; exit 0 only when it conforms
    asr-conformance summary report.json --out DIR             # and summary.md, report.html, badges into DIR
    asr-conformance smoke ./my-validator                      # does it start and answer at all?
    asr-conformance smoke acme.toml --role reader
    asr-conformance --version

``summary`` reads a saved report alone (nothing is run); ``smoke`` is the start-up check a
certification run makes before its first case, with what was sent and received.
Exit status: 0 conforms / started, 1 does not conform / does not start, 2 usage error.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from asr_conformance import __version__
from asr_conformance.harness.targets import TargetError, resolve_targets
from asr_conformance.vocabulary.option_defaults import DEFAULT_TIMEOUT, ROLES
from asr_conformance.vocabulary.untrusted import terminal_line

EXIT_OK = 0
EXIT_NO = 1
EXIT_USAGE = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="asr-conformance", description="Re-read a saved report, or check that an "
                                     "implementation starts.", epilog="Exit status: 0 conforms (summary) or starts "
                                     "(smoke), 1 does not, 2 usage error.")
    parser.add_argument("--version", action="version", version=f"asr-conformance {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    summary = commands.add_parser("summary", help="print a saved report's summary and exit by its verdict")
    summary.add_argument("report", type=Path, metavar="REPORT", help="a report.json a certification run wrote")
    summary.add_argument("--format", choices=("text", "markdown", "html"), default="text",
                         help="what to print: the terminal summary (default), summary.md or report.html")
    summary.add_argument("--out", type=Path, metavar="DIR",
                         help="also write summary.md, report.html and the badges into DIR")
    smoke = commands.add_parser("smoke", help="start an implementation once, as a run would, and show the exchange")
    smoke.add_argument("implementation", metavar="IMPLEMENTATION", help="an executable or a .toml manifest")
    smoke.add_argument("--role", choices=ROLES, default=None, help="the role (default: as pytest would choose it)")
    smoke.add_argument("--persistent", action="store_true", help="an executable that speaks the persistent protocol")
    smoke.add_argument("--inputs", action="append", default=[], metavar="PATH", help="producer inputs (repeatable)")
    smoke.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                       help=f"seconds to wait (default: the manifest's, else {DEFAULT_TIMEOUT:g})")
    smoke.add_argument("--pass-env", action="append", default=[], metavar="NAME", dest="pass_env",
                       help="pass this environment variable to the implementation (repeatable)")
    return parser


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    try:
        options = build_parser().parse_args(argv)
    except SystemExit as exit_:
        return EXIT_USAGE if exit_.code else EXIT_OK
    try:
        if options.command == "summary":
            return _summary(options, out)
        return _smoke(options, out)
    except BrokenPipeError:
        _quiet_broken_pipe()
        return EXIT_OK


def _fail(message: str) -> int:
    print(f"asr-conformance: {message}", file=sys.stderr)
    return EXIT_USAGE


def load_report(path: Path) -> dict[str, Any]:
    """A saved report, checked against its schema; ValueError says what is wrong with it, naming the file."""
    from asr_conformance.vocabulary.schemas import check_report

    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ValueError(f"{path}: cannot read: {error.strerror or error}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path}: not a JSON report: {error}") from None
    problem = check_report(report)
    if problem:
        raise ValueError(f"{path}: not a report this suite wrote: {problem}")
    checked: dict[str, Any] = report
    return checked


def _summary(options: argparse.Namespace, out: TextIO) -> int:
    from asr_conformance.gate.verdict import EXIT_PARTIAL
    from asr_conformance.reports import ReportFolderError, write_reports
    from asr_conformance.reports.html_page import render_html
    from asr_conformance.reports.markdown import render_markdown
    from asr_conformance.reports.terminal import conforms, partial, render_terminal

    try:
        report = load_report(options.report)
    except ValueError as error:
        return _fail(str(error))
    if options.format == "markdown":
        out.write(render_markdown(report))
    elif options.format == "html":
        out.write(render_html(report))
    else:
        for line in render_terminal(report):
            out.write(terminal_line(line) + "\n")
    if options.out is not None:
        try:
            written = write_reports(report, options.out)
        except ReportFolderError as error:
            return _fail(str(error))
        if options.format == "text":
            out.write(f"written: {', '.join(str(p) for p in written.values())}\n")
    out.flush()
    return EXIT_OK if conforms(report) else EXIT_PARTIAL if partial(report) else EXIT_NO


def _smoke(options: argparse.Namespace, out: TextIO) -> int:
    from asr_conformance.harness.startup import check_start

    try:
        (target,) = resolve_targets([options.implementation], options.role, options.inputs, options.persistent,
                                    options.timeout, None)
    except TargetError as error:
        return _fail(str(error))
    if options.pass_env:
        from dataclasses import replace

        target = replace(target, pass_env=tuple(dict.fromkeys([*target.pass_env, *options.pass_env])))
    check = check_start(target)
    def write(line: str) -> None:  # what the implementation said is untrusted
        out.write(terminal_line(line) + "\n")

    write(f"implementation: {target.label} ({target.protocol}), roles {', '.join(target.roles)}")
    for way, line in check.traffic:
        write(f"{way}: {line[:2000]}")
    if check.said:
        write(f"started: {check.said}" if target.protocol == "persistent" else f"ended: {check.said}")
    if check.stderr.strip():
        write("stderr ends: " + check.stderr.strip()[-1000:])
    if check.ok:
        write("smoke: it starts and answers (the conformance run judges what it answers)")
        return EXIT_OK
    write(f"smoke: it does not start: {check.problem}")
    return EXIT_NO


def _quiet_broken_pipe() -> None:
    """The reader of stdout went away (``| head``): end without a traceback, as a command line tool should."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
