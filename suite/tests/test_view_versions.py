"""The reader view is versioned: a reader is compared on the members of the version it declares, so a reader
that conformed at view version 1 conforms still, and one that declares version 2 is held to its members.

``readers/view-version-1`` is the reference reader as it was before version 2 (no ``terminals`` nor
``terminal_reads``); started as ``claims-view-version-2`` it declares version 2 without them, and then fails."""

from __future__ import annotations

from pathlib import Path

from certifying import Certify

from asr_conformance.harness.judging.views import VIEW_MEMBERS, VIEW_VERSION, at_version, declared_version
from asr_conformance.reference import reader

READER = Path(__file__).resolve().parent / "readers" / "view-version-1"
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


def test_a_reader_of_view_version_1_conforms(certify: Certify) -> None:
    result = certify(f"--implementation={READER}", *SLICE, report_dir=None)
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert "not applicable: view version 1: terminals" in result.stdout.str() or result.parseoutcomes().get("skipped")


def test_a_reader_that_declares_version_2_is_held_to_its_members(certify: Certify) -> None:
    result = certify(f"--implementation={READER.with_name('claims-view-version-2')}", *SLICE, "--asr-shrink-steps=1",
                     report_dir=None)
    assert result.ret == 1
    cases = result.failed("test_reader_case")
    assert any(name.startswith(("reader/ASR-271/", "reader/ASR-290/")) for name in cases), cases
    assert "terminal-reads" in result.failed("test_reader_views_of_streams_with")
