"""Verdicts and reasons, two figures: a validator's warnings name nothing, and the rules it names are scored
only under --strict-reasons.

The seed below makes the ASR-076 mutator draw a stream that also holds a SHOULD-breaking shape (ASR-168's
``stopReason`` beside ``state: "queued"``), on which the reference validator warns."""

from __future__ import annotations

from pathlib import Path

import pytest
from certifying import Certification, Certify, shared_certification
from validator_runs import column_results, place

from asr_conformance.harness.adapters.answers import named_rules
from asr_conformance.harness.adapters.oneshot import parse_diagnostics
from asr_conformance.harness.adapters.targets import resolve_targets

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
#: A fuzz seed on which the ASR-076 property draws a stream the reference also warns about.
WARNING_SEED = "3829557616"
#: One shrink step: what these tests read is the failure's reason, not how small its example gets (shrinking
#: a failure of a one-shot validator costs a process per step).
PROPERTY = ("-m", "fuzz", "-k", "test_rejects_mutated_streams and ASR-076", f"--hypothesis-seed={WARNING_SEED}",
            "--asr-shrink-steps=1")


def test_a_warning_or_an_info_names_no_rule() -> None:
    stdout = "\n".join([
        '{"rule": "ASR-076", "level": "error"}', '{"rule": "ASR-168", "level": "warning"}',
        '{"rule": "ASR-169", "level": "INFO"}', '{"rule": "ASR-170"}', '{"rule": "ASR-171", "level": "fatal"}',
        '{"rule": "ASR-172", "level": 3}',
    ])
    assert named_rules(parse_diagnostics(stdout)) == {"ASR-076", "ASR-170", "ASR-171", "ASR-172"}


def test_the_one_shot_reference_conforms_with_its_warnings_even_under_strict_reasons(certify: Certify) -> None:
    result = certify(f"--implementation={EXAMPLES / 'reference-validator'}", *PROPERTY, "--strict-reasons")
    assert result.ret == 0, result.stdout.str()
    (verdict,) = result.report["verdicts"]
    figure = verdict["reasons"]
    assert figure["rejections"] > 0 and figure["naming_only_broken_rules"] == figure["rejections"]


#: The manifest of test_a_manifest_asks_for_strict_reasons: warnings-without-level held to its reasons on its own.
STRICT_MANIFEST = (f'name = "strict"\ncommand = ["{EXAMPLES / "misbehaving" / "warnings-without-level"}"]\n'
                   'protocol = "persistent"\nstrict_reasons = true\n')


@pytest.fixture(scope="module")
def without_levels(tmp_path_factory: pytest.TempPathFactory) -> Certification:
    """warnings-without-level twice side by side, one column each: as given (its reasons a figure beside the
    verdict) and through a manifest that asks for strict reasons; over the persistent protocol (it speaks both):
    one process for the property's examples, not one each.  The same seed draws the same examples for both."""
    place(tmp_path_factory, "warnings-without-level", "strict.toml", STRICT_MANIFEST)
    return shared_certification(tmp_path_factory, "warnings-without-level",
                                f"--implementation={EXAMPLES / 'misbehaving' / 'warnings-without-level'}",
                                "--implementation=strict.toml", *PROPERTY, "--persistent")


def _verdict(result: Certification, name: str) -> dict:
    (verdict,) = [v for v in result.report["verdicts"] if v["implementation"] == name]
    return verdict


def test_warnings_written_without_their_level_name_rules(without_levels: Certification) -> None:
    """The same diagnostics with ``level`` left out name ASR-168: the reason fails when reasons are held strictly
    (so the test above would fail if levels were not read), and does not fail otherwise.  Holding every
    implementation strictly (``--strict-reasons``) is the same to the judge as a manifest's ``strict_reasons``
    (``resolve_targets``; test_harness.py's names-wrong-rules run fails only under the option)."""
    (failed,) = [r for r in column_results(without_levels, "strict") if r["outcome"] == "fail"]
    assert "for the wrong reason" in failed["message"]
    assert _verdict(without_levels, "strict")["verdict"] == "does-not-conform"
    lenient = column_results(without_levels, "warnings-without-level")
    assert lenient and not any(r["outcome"] == "fail" for r in lenient), without_levels.stdout.str()
    verdict = _verdict(without_levels, "warnings-without-level")
    assert verdict["verdict"] == "conforms"
    without_levels.stdout.fnmatch_lines(["  warnings-without-level validator: CONFORMS*"])
    assert verdict["reasons"]["naming_a_broken_rule"] == verdict["reasons"]["rejections"] > \
        verdict["reasons"]["naming_only_broken_rules"]


def test_the_strict_reasons_option_holds_every_implementation() -> None:
    targets = resolve_targets([str(EXAMPLES / "misbehaving" / "warnings-without-level"), str(EXAMPLES / "reference.toml")],
                              None, [], True, None, None, strict_reasons=True)
    assert [t.strict_reasons for t in targets] == [True, True]
    assert not any(t.strict_reasons for t in resolve_targets([str(EXAMPLES / "reference.toml")], None, [], True,
                                                             None, None))


def test_a_manifest_asks_for_strict_reasons(without_levels: Certification) -> None:
    assert without_levels.ret == 1
    assert any("for the wrong reason" in r["message"] for r in column_results(without_levels, "strict")
               if r["outcome"] == "fail")
