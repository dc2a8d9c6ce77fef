"""Verdicts and reasons, two figures: a validator's warnings name nothing, and the rules it names are scored
only under --strict-reasons.

The seed below makes the ASR-076 mutator draw a stream that also holds a SHOULD-breaking shape (ASR-168's
``stopReason`` beside ``state: "queued"``), on which the reference validator warns."""

from __future__ import annotations

from pathlib import Path

from certifying import Certify

from asr_conformance.harness.adapters.answers import named_rules
from asr_conformance.harness.adapters.oneshot import parse_diagnostics

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


def test_warnings_written_without_their_level_name_rules(certify: Certify) -> None:
    """The same diagnostics with ``level`` left out name ASR-168: the reason fails under --strict-reasons (so
    the test above would fail if levels were not read), and does not fail without it."""
    implementation = f"--implementation={EXAMPLES / 'misbehaving' / 'warnings-without-level'}"
    # Over the persistent protocol (it speaks both): one process for the property's examples, not one each.
    strict = certify(implementation, *PROPERTY, "--persistent", "--strict-reasons")
    assert strict.ret == 1
    (failed,) = [r for r in strict.report["results"] if r["outcome"] == "fail"]
    assert "for the wrong reason" in failed["message"]
    lenient = certify(implementation, *PROPERTY, "--persistent")
    assert lenient.ret == 0, lenient.stdout.str()
    (verdict,) = lenient.report["verdicts"]
    assert verdict["verdict"] == "conforms"
    assert verdict["reasons"]["naming_a_broken_rule"] == verdict["reasons"]["rejections"] > \
        verdict["reasons"]["naming_only_broken_rules"]


def test_a_manifest_asks_for_strict_reasons(certify: Certify, tmp_path: Path) -> None:
    manifest = tmp_path / "strict.toml"
    manifest.write_text(f'name = "strict"\ncommand = ["{EXAMPLES / "misbehaving" / "warnings-without-level"}"]\n'
                        'protocol = "persistent"\nstrict_reasons = true\n')
    result = certify(f"--implementation={manifest}", *PROPERTY)
    assert result.ret == 1
    assert any("for the wrong reason" in r["message"] for r in result.report["results"] if r["outcome"] == "fail")
