"""Certification runs of validators that several test modules read: each runs once per test session
(``shared_certification``), whichever module's test asks first, and every test reads its own
implementation's column of it (the results carrying its name, its failed tests, its verdict line).

A pytest start-up, a collection and a report cost as much as a small certification: implementations that
take the same arguments and differ only in what they get wrong are certified side by side here, and runs
that differ only in what is read afterwards are one run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from certifying import PLUGIN_DEFAULT_REPORT_DIR, Certification, shared_certification, shared_folder

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
MISBEHAVING = EXAMPLES / "misbehaving"
REFERENCE = EXAMPLES / "reference.toml"

#: The content-level and exitCode cases, valid and invalid: a slice for tests of one mechanism.
SIDE_BY_SIDE_SLICE = ("-m", "corpus", "-k", "ASR-164 or ASR-260")
#: The reference beside accept-all and reject-all: one column that conforms, one failing every invalid case,
#: one failing every valid case (test_reports.py reads the columns, test_harness.py each program's failures).
SIDE_BY_SIDE = (f"--implementation={REFERENCE}", f"--implementation={MISBEHAVING / 'accept-all'}",
                f"--implementation={MISBEHAVING / 'reject-all'}", *SIDE_BY_SIDE_SLICE)

#: The reference's slice for xdist: the ASR-25x rules and ASR-260, fifty cases over two workers.
XDIST_SLICE = ("-m", "corpus", "-k", "ASR-25 or ASR-260")

#: Seeded-bug validators that speak both protocols, over the persistent one (the judging, not the transport,
#: is under test), in two groups by the rules each is tested on: a bug shows on its own rules, and the other
#: rules of its group only widen where it must not fail.  names-every-rule is held to its reasons by its
#: manifest (``strict_reasons``), the others are not.
STRICT_MANIFEST = Path(__file__).resolve().parent / "validators" / "names-every-rule-strict.toml"
STRICT_NAME = "names-every-rule"
SEEDED_GROUPS: dict[str, tuple[tuple[str, ...], str]] = {
    # The ASR-26x rules and the content-level ones.
    "seeded-validators-26x": (("lenient-exit-code", "rejects-duplicate-call-ids", "rejects-two-results-for-one-call",
                               str(STRICT_MANIFEST)), "ASR-26 or ASR-164"),
    # Stop reasons, attempts and their turns, long integers.
    "seeded-validators-other": (("rejects-stop-reason-beside-error", "lenient-attempt-zero",
                                 "crashes-on-long-integers"), "ASR-168 or ASR-182 or ASR-075 or ASR-032 or ASR-254"),
}


def side_by_side(factory: pytest.TempPathFactory) -> Certification:
    """The reference, accept-all and reject-all in one run over SIDE_BY_SIDE_SLICE (the sandbox as shipped)."""
    return shared_certification(factory, "validators-side-by-side", *SIDE_BY_SIDE)


def seeded_validators(factory: pytest.TempPathFactory, name: str) -> Certification:
    """The seeded-bug validator ``name`` (a program of examples/misbehaving/, or names-every-rule) and the others of
    its group (SEEDED_GROUPS) side by side over the persistent protocol, on the group's rules."""
    group, (members, rules) = next((group, found) for group, found in SEEDED_GROUPS.items()
                                   if name in found[0] or (name == STRICT_NAME and str(STRICT_MANIFEST) in found[0]))
    programs = [f"--implementation={member if member.endswith('.toml') else MISBEHAVING / member}" for member in members]
    return shared_certification(factory, group, *programs, "-m", "corpus", "--persistent", "-k", rules)


def accept_all_with_junit(factory: pytest.TempPathFactory) -> Certification:
    """accept-all on ASR-164's cases, writing JUnit XML (``junit.xml``) and its report where the plugin puts it by
    default (``reports/out``): test_junit_properties.py reads the XML, test_console.py the terminal and the report."""
    return shared_certification(factory, "accept-all-junit", f"--implementation={MISBEHAVING / 'accept-all'}",
                                "-m", "corpus", "-k", "ASR-164", "--junitxml=junit.xml",
                                report_dir=PLUGIN_DEFAULT_REPORT_DIR)


def column_failed(result: Certification, name: str, test: str = "test_validator_case") -> set[str]:
    """The cases ``name`` failed in a side-by-side run (a side-by-side test ID ends in ``-name``)."""
    suffix = f"-{name}"
    return {case[: -len(suffix)] for case in result.failed(test) if case.endswith(suffix)}


def column_results(result: Certification, name: str) -> list[dict]:
    """The report's results of implementation ``name``."""
    return [r for r in result.report["results"] if r["implementation"] == name]


def place(factory: pytest.TempPathFactory, run: str, name: str, text: str) -> Path:
    """Put a file named ``name`` in the folder of the shared run ``run`` before it starts, whole: every xdist worker
    that asks for the run writes the same text, and a run already under way never reads half of it."""
    folder = shared_folder(factory, run)
    folder.mkdir(parents=True, exist_ok=True)
    staged = folder / f".{name}.{os.getpid()}"
    staged.write_text(text, encoding="utf-8")
    os.replace(staged, folder / name)
    return folder / name
