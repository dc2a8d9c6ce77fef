"""The fuzz harness finds seeded bugs on its own (corpus switched off with
-m fuzz), writes shrunk counterexamples that replay, and honours the profiles."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from certifying import PLUGIN_DEFAULT_REPORT_DIR, Certification, Certify

ROOT = Path(__file__).resolve().parents[2]
MISBEHAVING = ROOT / "examples" / "misbehaving"


QUICK_CATCH = """
from hypothesis import Phase, settings
from asr_conformance.harness.fuzzing.profiles import register_profiles

register_profiles()
# Whether the fuzz harness catches a bug, not how small the counterexample gets: no shrinking.
settings.register_profile("quick-catch", settings.get_profile("asr-fast"),
                          phases=[Phase.explicit, Phase.reuse, Phase.generate])
"""


#: The fuzz part of the conformance suite alone (the corpus switched off).
FUZZ = ("-m", "fuzz")


def _report(folder: Path) -> dict:
    import json

    return json.loads((folder / "reports" / "out" / "report.json").read_text())


def fuzz_quickly(certify: Certify, folder: Path, implementation: Path, *args: str) -> Certification:
    (folder / "conftest.py").write_text(QUICK_CATCH)
    return certify(f"--implementation={implementation}", *FUZZ, "--hypothesis-profile=quick-catch", *args, cwd=folder,
                   report_dir=PLUGIN_DEFAULT_REPORT_DIR)


def fuzz(certify: Certify, folder: Path, implementation: Path, *args: str) -> Certification:
    """The fuzz part, in ``folder``, with the plugin's default report folder (reports/out)."""
    return certify(f"--implementation={implementation}", *FUZZ, *args, cwd=folder, report_dir=PLUGIN_DEFAULT_REPORT_DIR)


@pytest.mark.parametrize(
    ("validator", "selection", "expected"),
    [
        ("lenient-exit-code", "ASR-260", "accepted a valid stream broken by the ASR-260 mutator"),
        ("lenient-content-level", "ASR-164", "accepted a valid stream broken by the ASR-164 mutator"),
        ("rejects-duplicate-call-ids", "adversarial", "rejected a valid stream with duplicate native call IDs"),
        ("rejects-two-results-for-one-call", "adversarial", "rejected a valid stream with duplicate native call IDs"),
        ("rejects-stop-reason-beside-error", "adversarial", "rejected a valid stream with duplicate native call IDs"),
        ("lenient-attempt-zero", "ASR-182", "accepted a valid stream broken by the ASR-182 mutator (attempt-n-zero"),
        ("crashes-on-bad-bytes", "damaged and utf8", "no verdict on a valid stream with invalid-utf8 damage"),
    ],
)
def test_fuzzing_alone_catches_seeded_bugs(certify: Certify, tmp_path: Path, validator: str, selection: str,
                                           expected: str) -> None:
    result = fuzz_quickly(certify, tmp_path, MISBEHAVING / validator, "--persistent", "-k", selection)
    assert result.ret == 1
    assert expected in result.stdout.str()
    result.stdout.fnmatch_lines(["*verdict: DOES NOT CONFORM*"])


@pytest.mark.e2e
def test_the_reference_passes_the_fuzz_properties(reference_whole_run: Certification) -> None:
    """Read from the session's one whole run of the reference (conftest.py), which holds every fuzz property
    of every role: the valid-stream, ASR-16x mutation and damaged-bytes properties among them, each passing."""
    assert reference_whole_run.ret == 0, reference_whole_run.stdout.str()[-3000:]
    results = [r for r in reference_whole_run.report["results"] if r["kind"] == "fuzz"]
    for selected in ("valid_streams", "ASR-16", "damaged"):
        assert any(selected in r["id"] for r in results), selected
    assert results and all(r["outcome"] == "pass" for r in results)


def test_a_counterexample_is_written_shrunk_and_replays(certify: Certify, tmp_path: Path) -> None:
    result = fuzz(certify, tmp_path, MISBEHAVING / "accept-all", "-k", "ASR-289")
    match = re.search(r"counterexample \(shrunk\): (\S+)\nreplay: (.+)", result.stdout.str())
    assert match, result.stdout.str()[-3000:]
    stream = tmp_path / match.group(1)
    assert stream.is_file() and stream.with_suffix(".toml").is_file()
    assert 'verdict = "invalid"' in stream.with_suffix(".toml").read_text()
    assert len(stream.read_bytes().splitlines()) <= 3, "shrinking should leave a small stream"
    listed = _report(tmp_path)["counterexamples"]
    assert [(c["path"], c["replay"]) for c in listed] == [(match.group(1), match.group(2).strip())]
    replay = certify(*shlex.split(match.group(2))[1:], cwd=tmp_path, report_dir=PLUGIN_DEFAULT_REPORT_DIR)
    replay.assert_outcomes(failed=1)
    assert "accepted an invalid stream; it breaks ASR-289" in replay.stdout.str()


def test_the_certification_profile_prints_and_uses_its_seed(certify: Certify, tmp_path: Path) -> None:
    result = fuzz(certify, tmp_path, ROOT / "examples" / "reference.toml", "--hypothesis-profile=asr-certify",
                  "-k", "ASR-162", "-n", "2")
    header = re.search(r"Hypothesis profile asr-certify, seed (\d+) \(replay with --hypothesis-seed=\1\)",
                       result.stdout.str())
    assert header and result.ret == 0
    assert _report(tmp_path)["hypothesis"] == {"profile": "asr-certify", "seed": int(header.group(1)),
                                               "fixed_examples": False}


def _seed(result: Certification) -> int:
    found = re.search(r"Hypothesis profile asr-fast, seed (\d+) \(replay with --hypothesis-seed=\1\)",
                      result.stdout.str())
    assert found, result.stdout.str()[-3000:]
    return int(found.group(1))


def test_the_default_profile_draws_a_fresh_seed_even_under_ci(certify: Certify, tmp_path: Path, monkeypatch) -> None:
    """A validator that memorised one run's examples meets others in the next: every run has its own seed,
    printed, recorded and replayable; and it earns its badges."""
    monkeypatch.setenv("CI", "true")
    monkeypatch.delenv("ASR_HYPOTHESIS_PROFILE", raising=False)
    first = fuzz(certify, tmp_path, ROOT / "examples" / "reference.toml", "-k", "ASR-162")
    report = _report(tmp_path)
    second = fuzz(certify, tmp_path, ROOT / "examples" / "reference.toml", "-k", "ASR-162")
    assert first.ret == second.ret == 0
    assert _seed(first) != _seed(second)
    assert report["hypothesis"] == {"profile": "asr-fast", "seed": _seed(first), "fixed_examples": False}
    assert list((tmp_path / "reports" / "out").glob("badge-*.json"))
    replay = fuzz(certify, tmp_path, ROOT / "examples" / "reference.toml", "-k", "ASR-162", f"--hypothesis-seed={_seed(first)}")
    assert _seed(replay) == _seed(first)


def test_the_fixed_profile_is_a_regression_gate_without_badges(certify: Certify, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("ASR_HYPOTHESIS_PROFILE", raising=False)
    result = fuzz(certify, tmp_path, ROOT / "examples" / "reference.toml", "-k", "ASR-162", "--hypothesis-profile=asr-fixed")
    assert result.ret == 0
    assert "seed" not in result.stdout.str().split("collected")[0]
    assert "fixed fuzz examples (asr-fixed), the same every run: a regression gate that certifies nothing new; no badge" \
        in result.stdout.str()
    assert _report(tmp_path)["hypothesis"]["fixed_examples"] is True
    assert not list((tmp_path / "reports" / "out").glob("badge-*.json"))
    monkeypatch.setenv("ASR_HYPOTHESIS_PROFILE", "asr-fixed")
    assert "Hypothesis profile asr-fixed" in fuzz(certify, tmp_path, ROOT / "examples" / "reference.toml", "-k",
                                                   "ASR-162").stdout.str()
    monkeypatch.setenv("ASR_HYPOTHESIS_PROFILE", "no-such-profile")
    wrong = fuzz(certify, tmp_path, ROOT / "examples" / "reference.toml", "-k", "ASR-162")
    assert wrong.ret == pytest.ExitCode.USAGE_ERROR
    assert "ASR_HYPOTHESIS_PROFILE=no-such-profile: no such Hypothesis profile" in wrong.stderr.str()


def test_the_deep_profile_keeps_an_example_database(certify: Certify, tmp_path: Path, monkeypatch) -> None:
    database = tmp_path / "shared-db"
    monkeypatch.setenv("ASR_HYPOTHESIS_DB", str(database))
    result = fuzz(certify, tmp_path, MISBEHAVING / "accept-all", "--hypothesis-profile=asr-deep", "-k", "ASR-289")
    assert result.ret == 1
    assert database.is_dir() and any(database.rglob("*"))
