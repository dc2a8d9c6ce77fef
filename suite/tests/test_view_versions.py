"""The reader view is versioned: a reader is compared on the members of the version it declares, so a reader
that conformed at view version 1 conforms still, and one that declares version 2 is held to its members.

``readers/view-version-1`` is the reference reader as it was before version 2 (no ``terminals`` nor
``terminal_reads``); started as ``claims-view-version-2`` it declares version 2 without them, and then fails."""

from __future__ import annotations

from pathlib import Path

import pytest
from certifying import Certification, shared_certification

from asr_conformance.harness.judging.views import VIEW_MEMBERS, VIEW_VERSION, at_version, declared_version
from asr_conformance.reference import reader

READER = Path(__file__).resolve().parent / "readers" / "view-version-1"
CLAIMS = READER.with_name("claims-view-version-2")
#: Reader cases about terminals (version 2 members; some list version 1 members too) and the fuzz property that reads
#: terminals; every reader property compares terminals of the reference's view.
SLICE = ("--role=reader", "--persistent", "-k", "ASR-290 or ASR-271 or terminal-reads")


def test_the_reference_reader_writes_the_latest_version_and_each_version_adds_members() -> None:
    assert reader.VIEW_VERSION == VIEW_VERSION == 2
    assert VIEW_MEMBERS[2] - VIEW_MEMBERS[1] == {"terminals", "terminal_reads"}
    expected = {"view_version": 2, "pairs": [], "terminals": {}, "terminal_reads": []}
    assert at_version(expected, 1) == ({"pairs": []}, ["terminal_reads", "terminals"])
    assert at_version(expected, 2) == ({"pairs": [], "terminals": {}, "terminal_reads": []}, [])
    assert declared_version({"view_version": 1}) == 1 and declared_version({}) == 2


@pytest.fixture(scope="module")
def both_versions(tmp_path_factory: pytest.TempPathFactory) -> Certification:
    """Both readers side by side on SLICE in one run, one report column each (a fuzz property that fails shrinks
    one step)."""
    return shared_certification(tmp_path_factory, "view-versions", f"--implementation={READER}",
                                f"--implementation={CLAIMS}", *SLICE, "--asr-shrink-steps=1")


def test_a_reader_of_view_version_1_conforms(both_versions: Certification) -> None:
    results = [r for r in both_versions.report["results"] if r["implementation"] == READER.name]
    assert results and {r["outcome"] for r in results} <= {"pass", "skipped"}, results
    both_versions.stdout.fnmatch_lines([f"  {READER.name} reader: CONFORMS*"])
    skipped = [r.get("message", "") for r in results if r["outcome"] == "skipped"]
    assert any(m.startswith("not applicable: view version 1: ") and "terminals" in m for m in skipped), skipped


def test_a_reader_that_declares_version_2_is_held_to_its_members(both_versions: Certification) -> None:
    assert both_versions.ret == 1
    suffix = f"-{CLAIMS.name}"
    cases = {c.removesuffix(suffix) for c in both_versions.failed("test_reader_case") if c.endswith(suffix)}
    assert any(name.startswith(("reader/ASR-271/", "reader/ASR-290/")) for name in cases), cases
    views = both_versions.failed("test_reader_views_of_streams_with")
    assert f"{CLAIMS.name}-terminal-reads" in views, views  # a property's ID starts with the implementation
    both_versions.stdout.fnmatch_lines([f"  {CLAIMS.name} reader: DOES NOT CONFORM*"])
