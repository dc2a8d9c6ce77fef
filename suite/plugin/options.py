"""The command-line options of the suite, declared in every pytest run of the environment.

Only pytest, the standard library and ``vocabulary.option_defaults`` are imported here: the
entry point declares the options of a run that may certify nothing, and such a run must not
pay for the harness.  A value is checked by the harness's own rule when it is given
(``parse_limit``, ``check_timeout``), which is loaded only then.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from pathlib import Path

import pytest

from asr_conformance import CORPUS_DIR
from asr_conformance.vocabulary.option_defaults import (
    COUNTEREXAMPLES,
    DEFAULT_MAX_OUTPUT,
    DEFAULT_SHRINK_SECONDS,
    DEFAULT_SHRINK_STEPS,
    DEFAULT_TIMEOUT,
    LIMIT_DEFAULTS,
    LIMIT_NAMES,
    LIMIT_SIZES,
    MAX_OUTPUT_CAP,
    MAX_TIMEOUT,
    ROLES,
    SANDBOXES,
)

DEFAULT_REPORT_DIR = Path("reports") / "out"


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("asr-conformance", "ASR conformance suite")
    group.addoption(
        "--implementation", action="append", default=[], metavar="PATH",
        help="the implementation under test: an executable (one-shot, docs/contract.md §2) or a TOML manifest (§3); "
        "give it several times for a side-by-side run; runs the conformance suite only",
    )
    group.addoption("--role", choices=ROLES, default=None,
                    help="role to certify (default: a manifest's roles; else producer with --inputs, else validator)")
    group.addoption("--inputs", action="append", default=[], metavar="PATH",
                    help="producer inputs: files, folders or globs (repeatable)")
    group.addoption("--source-format", action="append", default=[], metavar="FORMAT", dest="source_formats",
                    help="a native format the producer converts, fuzzed with generated transcripts under -m fuzz "
                    "(repeatable; any installed format pack's format: claude-code-jsonl, codex-rollout-jsonl, gemini-cli-session, ...; "
                    "default: the formats of its inputs)")
    group.addoption("--strict-reasons", action="store_true", default=False, dest="strict_reasons",
                    help="a validator's rejection naming a rule the stream does not break fails its case (default: "
                    "only the verdict is scored; the rules named are a figure beside it); a manifest's "
                    "strict_reasons = true asks the same")
    group.addoption("--builtin-packs-only", action="store_true", default=False, dest="builtin_packs_only",
                    help="judge producer fidelity with the suite's built-in format packs only; third-party packs "
                    "(asr_conformance.format_packs entry points) are not used, and inputs only they read are not checked")
    group.addoption("--asr-timeout", type=_timeout_option, default=None, metavar="SECONDS", dest="asr_timeout",
                    help=f"seconds per case before the implementation is killed (default {DEFAULT_TIMEOUT:g}, "
                    f"at most {MAX_TIMEOUT:g})")
    try:  # --timeout as the brief names it, unless another plugin (pytest-timeout) owns it
        group.addoption("--timeout", type=_timeout_option, default=None, metavar="SECONDS", dest="asr_timeout",
                        help="same as --asr-timeout")
    except ValueError:
        pass
    group.addoption("--persistent", action="store_true",
                    help="talk to the executable with the persistent protocol (docs/contract.md §4) instead of one process per case")
    group.addoption("--check-protocol", action="store_true",
                    help="check every persistent-protocol message against its published JSON Schema")
    group.addoption("--cases", default=None, metavar="DIR", help=f"case corpus folder (default {CORPUS_DIR})")
    group.addoption("--counterexamples", default=None, metavar="DIR",
                    help=f"where shrunk fuzz failures are written as case files (default: {COUNTEREXAMPLES}/ "
                    "under the report folder)")
    group.addoption("--asr-shrink-time", type=float, default=DEFAULT_SHRINK_SECONDS, metavar="SECONDS",
                    dest="asr_shrink_time",
                    help="seconds one failing fuzz property may spend shrinking before the smallest example "
                    "found so far is reported (default %(default)s)")
    group.addoption("--asr-shrink-steps", type=int, default=DEFAULT_SHRINK_STEPS, metavar="N",
                    dest="asr_shrink_steps",
                    help="calls to the implementation one failing fuzz property may make while shrinking "
                    "(default %(default)s)")
    group.addoption("--asr-progress", type=float, default=5.0, metavar="SECONDS", dest="asr_progress",
                    help="seconds between progress lines per role (cases done, failures, phase); 0 for none "
                    "(default %(default)s)")
    group.addoption("--report-dir", default=str(DEFAULT_REPORT_DIR), metavar="DIR",
                    help="where report.json, summary.md, report.html and the badges go (default %(default)s; "
                    "'none' writes no files)")
    group.addoption("--expectations", default=None, metavar="FILE",
                    help="known failures (TOML); overrides a manifest's expectations file")
    group.addoption("--write-expectations", default=None, metavar="FILE",
                    help="write this run's failures as an expectations file to edit")
    group.addoption("--baseline", default=None, metavar="REPORT",
                    help="an earlier report.json: fail on results that passed there and fail now, list fixes")
    group.addoption("--pass-env", action="append", default=[], metavar="NAME", dest="pass_env",
                    help="pass this environment variable to the implementation (repeatable); it gets only an "
                    "allow-list otherwise (PATH, LANG, LC_*, TZ; a fresh HOME and TMPDIR)")
    group.addoption("--sandbox", choices=SANDBOXES, default="auto",
                    help="contain each implementation process in bubblewrap where the machine allows it, else run "
                    "it uncontained with a warning (auto, the default); refuse to run without the sandbox (strict, "
                    "or its older name bwrap); or never sandbox (none)")
    group.addoption("--network", choices=("none", "host"), default=None,
                    help="the sandbox's network: none (the default, or a manifest's network key) or host")
    group.addoption("--allow-read", action="append", default=[], metavar="FOLDER", dest="allow_read",
                    help="show this folder read-only in the sandbox too (repeatable)")
    for name, (option, unit) in LIMIT_NAMES.items():
        group.addoption(option, default=None, metavar=unit.upper(), dest=f"limit_{name}",
                        type=_limit_option(name, option),
                        help=f"per-process limit: {name.replace('_', ' ')} in {unit} (default {LIMIT_DEFAULTS[name]}"
                        + (", suffixes K, M, G" if name in LIMIT_SIZES else "") + "; over a manifest's limits)")
    group.addoption("--max-output", type=_size_option, default=DEFAULT_MAX_OUTPUT, metavar="BYTES", dest="max_output",
                    help=f"largest stream a producer may hand over (default {DEFAULT_MAX_OUTPUT // 2**20} MiB; "
                    "suffixes K, M, G)")
    group.addoption("--run-timeout", type=_run_timeout_option, default=None, metavar="SECONDS", dest="run_timeout",
                    help="a limit for the whole run: cases still to run after it fail as timeouts, and the run is "
                    "incomplete")


def _limit_option(name: str, option: str) -> Callable[[str], int]:
    def parse(text: str) -> int:
        from asr_conformance.harness.isolation.limits import LimitError, parse_limit

        try:
            return parse_limit(name, text if name in LIMIT_SIZES else _whole(text, option), option)
        except LimitError as error:
            raise argparse.ArgumentTypeError(str(error)) from None
    return parse


def _whole(text: str, option: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{option}: a whole number, not {text!r}") from None


def _timeout_option(text: str) -> float:
    from asr_conformance.harness.isolation.policies import check_timeout

    try:
        return check_timeout(float(text), "--asr-timeout")
    except ValueError as error:  # UsageError is a ValueError
        raise argparse.ArgumentTypeError(str(error)) from None


def _run_timeout_option(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--run-timeout: a number of seconds, not {text!r}") from None
    if not math.isfinite(seconds) or seconds <= 0:
        raise argparse.ArgumentTypeError(f"--run-timeout: a finite number of seconds above 0, not {text!r}")
    return seconds


def _size_option(text: str) -> int:
    units = {"K": 2**10, "M": 2**20, "G": 2**30}
    factor = units.get(text[-1:].upper(), 1)
    try:
        size = int(float(text[:-1] if factor > 1 else text) * factor)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--max-output: a size in bytes (suffix K, M or G), not {text!r}") from None
    if not 0 < size <= MAX_OUTPUT_CAP:
        raise argparse.ArgumentTypeError(f"--max-output: above 0 and at most {MAX_OUTPUT_CAP // 2**20} MiB")
    return size
