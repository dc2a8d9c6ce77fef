"""``asr-conformance``: the suite's own command, beside ``pytest``.

    asr-conformance summary reports/out/report.json          # the verdict again; exit 0 only when it conforms
    asr-conformance summary report.json --out DIR             # and summary.md, report.html, badges into DIR
    asr-conformance smoke ./my-validator                      # does it start and answer at all?
    asr-conformance smoke acme.toml --role reader
    asr-conformance pack-check codex rollouts/                # what a format pack reads of each sample
    asr-conformance pack-check asr_toy_pack:PACK samples/*.json
    asr-conformance campaign --implementation=./my-validator -n 4 --time 3600   # a HypoFuzz campaign
    asr-conformance summary reports/campaign                   # what a campaign found (no verdict)
    asr-conformance --version

``summary`` reads a saved report alone (nothing is run); ``smoke`` is the start-up check a
certification run makes before its first case, with what was sent and received; ``pack-check``
runs a format pack's witness, source edits and generator on samples and says what it read;
``campaign`` runs the fuzz properties under HypoFuzz for a time (``plugin/campaign_run.py``), and
``summary`` of a campaign's report folder says what it found, never a verdict.
Exit status: 0 conforms / started / no problem / found nothing, 1 does not conform / does not start /
a problem / found a failing example, 2 usage error.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from asr_conformance import __version__
from asr_conformance.harness.adapters.targets import TargetError, resolve_targets
from asr_conformance.vocabulary.option_defaults import DEFAULT_TIMEOUT, ROLES
from asr_conformance.vocabulary.untrusted import terminal_line

EXIT_OK = 0
EXIT_NO = 1
EXIT_USAGE = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="asr-conformance", description="Re-read a saved report, check that an "
                                     "implementation starts, or check a format pack on samples.",
                                     epilog="Exit status: 0 conforms (summary), starts (smoke) or no problem "
                                     "(pack-check), 1 does not, 2 usage error.")
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
    check = commands.add_parser("pack-check", help="run a format pack's witness, edits and generator on samples")
    check.add_argument("pack", metavar="PACK", help="an installed pack's name or format, or module:ATTRIBUTE")
    check.add_argument("samples", nargs="+", type=Path, metavar="SAMPLE", help="native input files or folders")
    check.add_argument("--no-generator", action="store_true", help="do not draw a transcript per generator feature")
    campaign = commands.add_parser("campaign", help="fuzz an implementation under HypoFuzz for a time (-- PYTEST-ARGS "
                                   "pass on to each HypoFuzz process's pytest session)")
    campaign.add_argument("--implementation", action="append", required=True, metavar="IMPLEMENTATION",
                          help="an executable or a .toml manifest, as pytest --implementation")
    campaign.add_argument("-n", "--workers", type=int, default=1, metavar="WORKERS", help="HypoFuzz processes (default 1)")
    campaign.add_argument("--time", type=float, default=None, metavar="SECONDS",
                          help="stop after this many seconds (default: run until Ctrl-C)")
    campaign.add_argument("--report-dir", type=Path, default=Path("reports/campaign"), metavar="DIR",
                          help="where the campaign's records, counterexamples and log go (default reports/campaign)")
    campaign.add_argument("--dashboard", type=int, default=None, metavar="PORT",
                          help="serve HypoFuzz's dashboard on 127.0.0.1:PORT")
    return parser


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    arguments = list(sys.argv[1:] if argv is None else argv)
    passed: list[str] = []
    if "--" in arguments:
        at = arguments.index("--")
        arguments, passed = arguments[:at], arguments[at + 1:]
    try:
        options = build_parser().parse_args(arguments)
    except SystemExit as exit_:
        return EXIT_USAGE if exit_.code else EXIT_OK
    if passed and options.command != "campaign":
        return _fail("arguments after -- are for campaign only")
    try:
        if options.command == "summary":
            return _summary(options, out)
        if options.command == "pack-check":
            return _pack_check(options, out)
        if options.command == "campaign":
            return _campaign(options, passed, out)
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
    from asr_conformance.plugin.campaign_record import is_campaign
    from asr_conformance.reports import ReportFolderError, write_reports
    from asr_conformance.reports.html_page import render_html
    from asr_conformance.reports.markdown import render_markdown
    from asr_conformance.reports.terminal import conforms, partial, render_terminal

    if is_campaign(options.report):
        return _campaign_summary(options.report, out)
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
    from asr_conformance.harness.adapters.startup import check_start

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


def _pack_check(options: argparse.Namespace, out: TextIO) -> int:
    from asr_conformance.packs.check import check_pack, read_samples, resolve_pack

    try:
        pack, identity = resolve_pack(options.pack)
        samples = read_samples(options.samples)
    except ValueError as error:
        return _fail(str(error))
    report = check_pack(pack, identity, samples, generator=not options.no_generator)
    for line in report.lines:  # a pack's messages quote the samples: untrusted text
        out.write(terminal_line(line) + "\n")
    out.flush()
    return EXIT_NO if report.problems else EXIT_OK


def _campaign_summary(where: Path, out: TextIO) -> int:
    """A campaign's records merged: properties, examples, failing examples with rules; exit 1 when any failed."""
    from asr_conformance.plugin.campaign_record import CampaignRecordError, load_records, render_summary, summarize

    try:
        summary = summarize(load_records(where))
    except CampaignRecordError as error:
        return _fail(str(error))
    for line in render_summary(summary):
        out.write(terminal_line(line) + "\n")
    out.flush()
    return EXIT_NO if summary.failures else EXIT_OK


def _campaign(options: argparse.Namespace, passed: list[str], out: TextIO) -> int:
    """Run a HypoFuzz campaign until --time (or Ctrl-C), then say what it found."""
    from asr_conformance.plugin.campaign_run import CampaignError, CampaignPlan, check_installed, run_campaign

    if options.workers < 1:
        return _fail("campaign: -n needs at least one worker")
    if options.time is not None and options.time <= 0:
        return _fail("campaign: --time needs a positive number of seconds")
    try:
        check_installed()
    except CampaignError as error:
        return _fail(str(error))
    report_dir = options.report_dir.resolve()
    plan = CampaignPlan(options.implementation, options.workers, options.time, report_dir, options.dashboard, passed)
    log = report_dir / "campaign.log"
    limit = f"for {options.time:g} s" if options.time is not None else "until Ctrl-C"
    out.write(f"campaign: {options.workers} HypoFuzz process(es) {limit}; log {log}\n")
    if options.dashboard is not None:
        out.write(f"campaign: dashboard at http://127.0.0.1:{options.dashboard}/\n")
    out.flush()
    end = run_campaign(plan, log)
    out.write(f"campaign: stopped ({end.by}) after {end.seconds:.0f} s\n")
    from asr_conformance.plugin.campaign_record import is_campaign

    if not is_campaign(report_dir):
        tail = log.read_text(encoding="utf-8", errors="replace")[-3000:] if log.is_file() else ""
        out.write(terminal_line(f"campaign: no property ran; the end of {log}:") + "\n")
        for line in tail.splitlines():
            out.write(terminal_line(line) + "\n")
        out.flush()
        return EXIT_USAGE
    return _campaign_summary(report_dir, out)


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
