"""The fuzz harness finds seeded bugs on its own (corpus switched off with
-m fuzz), writes shrunk counterexamples that replay, and honours the profiles."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MISBEHAVING = ROOT / "examples" / "misbehaving"


QUICK_CATCH = """
from hypothesis import Phase, settings
from asr_conformance.harness.fuzzing import register_profiles

register_profiles()
# Whether the fuzz harness catches a bug, not how small the counterexample gets: no shrinking.
settings.register_profile("quick-catch", settings.get_profile("asr-fast"),
                          phases=[Phase.explicit, Phase.reuse, Phase.generate])
"""


def fuzz(pytester: pytest.Pytester, implementation: Path | str, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        f"--implementation={implementation}", "-p", "no:cacheprovider", "-m", "fuzz", *args
    )


def _report(pytester: pytest.Pytester) -> dict:
    import json

    return json.loads((pytester.path / "reports" / "out" / "report.json").read_text())


def fuzz_quickly(pytester: pytest.Pytester, implementation: Path | str, *args: str) -> pytest.RunResult:
    pytester.makeconftest(QUICK_CATCH)
    return fuzz(pytester, implementation, "--hypothesis-profile=quick-catch", *args)


@pytest.mark.parametrize(
    ("validator", "selection", "expected"),
    [
        ("lenient-exit-code", "ASR-260", "accepted a valid stream broken by the ASR-260 mutator"),
        ("lenient-content-level", "ASR-164", "accepted a valid stream broken by the ASR-164 mutator"),
        ("rejects-duplicate-call-ids", "adversarial", "rejected a valid stream with duplicate native call IDs"),
        ("crashes-on-bad-bytes", "damaged and utf8", "no verdict on a valid stream with invalid-utf8 damage"),
    ],
)
def test_fuzzing_alone_catches_seeded_bugs(pytester: pytest.Pytester, validator: str, selection: str,
                                           expected: str) -> None:
    result = fuzz_quickly(pytester, MISBEHAVING / validator, "--persistent", "-k", selection)
    assert result.ret == 1
    assert expected in result.stdout.str()
    result.stdout.fnmatch_lines(["*verdict: DOES NOT CONFORM*"])


def test_the_reference_passes_the_fuzz_properties(pytester: pytest.Pytester) -> None:
    result = fuzz(pytester, ROOT / "examples" / "reference.toml", "-k", "valid_streams or ASR-16 or damaged")
    assert result.ret == 0, result.stdout.str()[-3000:]
    results = _report(pytester)["results"]
    assert results and all(r["kind"] == "fuzz" and r["outcome"] == "pass" for r in results)


def test_a_counterexample_is_written_shrunk_and_replays(pytester: pytest.Pytester) -> None:
    result = fuzz(pytester, MISBEHAVING / "accept-all", "-k", "ASR-289")
    match = re.search(r"counterexample \(shrunk\): (\S+)\nreplay: (.+)", result.stdout.str())
    assert match, result.stdout.str()[-3000:]
    stream = pytester.path / match.group(1)
    assert stream.is_file() and stream.with_suffix(".toml").is_file()
    assert 'verdict = "invalid"' in stream.with_suffix(".toml").read_text()
    assert len(stream.read_bytes().splitlines()) <= 3, "shrinking should leave a small stream"
    listed = _report(pytester)["counterexamples"]
    assert [(c["path"], c["replay"]) for c in listed] == [(match.group(1), match.group(2).strip())]
    replay = pytester.runpytest_subprocess(*shlex.split(match.group(2))[1:], "-p", "no:cacheprovider")
    replay.assert_outcomes(failed=1)
    assert "accepted an invalid stream; it breaks ASR-289" in replay.stdout.str()


def test_the_certification_profile_prints_and_uses_its_seed(pytester: pytest.Pytester) -> None:
    result = fuzz(pytester, ROOT / "examples" / "reference.toml", "--hypothesis-profile=asr-certify",
                  "-k", "ASR-162", "-n", "2")
    header = re.search(r"Hypothesis profile asr-certify, seed (\d+) \(replay with --hypothesis-seed=\1\)",
                       result.stdout.str())
    assert header and result.ret == 0
    assert _report(pytester)["hypothesis"] == {"profile": "asr-certify", "seed": int(header.group(1)),
                                               "fixed_examples": False}


def _seed(result: pytest.RunResult) -> int:
    found = re.search(r"Hypothesis profile asr-fast, seed (\d+) \(replay with --hypothesis-seed=\1\)",
                      result.stdout.str())
    assert found, result.stdout.str()[-3000:]
    return int(found.group(1))


def test_the_default_profile_draws_a_fresh_seed_even_under_ci(pytester: pytest.Pytester, monkeypatch) -> None:
    """A validator that memorised one run's examples meets others in the next: every run has its own seed,
    printed, recorded and replayable; and it earns its badges."""
    monkeypatch.setenv("CI", "true")
    monkeypatch.delenv("ASR_HYPOTHESIS_PROFILE", raising=False)
    first = fuzz(pytester, ROOT / "examples" / "reference.toml", "-k", "ASR-162")
    report = _report(pytester)
    second = fuzz(pytester, ROOT / "examples" / "reference.toml", "-k", "ASR-162")
    assert first.ret == second.ret == 0
    assert _seed(first) != _seed(second)
    assert report["hypothesis"] == {"profile": "asr-fast", "seed": _seed(first), "fixed_examples": False}
    assert list((pytester.path / "reports" / "out").glob("badge-*.json"))
    replay = fuzz(pytester, ROOT / "examples" / "reference.toml", "-k", "ASR-162", f"--hypothesis-seed={_seed(first)}")
    assert _seed(replay) == _seed(first)


def test_the_fixed_profile_is_a_regression_gate_without_badges(pytester: pytest.Pytester, monkeypatch) -> None:
    monkeypatch.delenv("ASR_HYPOTHESIS_PROFILE", raising=False)
    result = fuzz(pytester, ROOT / "examples" / "reference.toml", "-k", "ASR-162", "--hypothesis-profile=asr-fixed")
    assert result.ret == 0
    assert "seed" not in result.stdout.str().split("collected")[0]
    assert "fixed fuzz examples (asr-fixed), the same every run: a regression gate that certifies nothing new; no badge" \
        in result.stdout.str()
    assert _report(pytester)["hypothesis"]["fixed_examples"] is True
    assert not list((pytester.path / "reports" / "out").glob("badge-*.json"))
    monkeypatch.setenv("ASR_HYPOTHESIS_PROFILE", "asr-fixed")
    assert "Hypothesis profile asr-fixed" in fuzz(pytester, ROOT / "examples" / "reference.toml", "-k",
                                                   "ASR-162").stdout.str()
    monkeypatch.setenv("ASR_HYPOTHESIS_PROFILE", "no-such-profile")
    wrong = fuzz(pytester, ROOT / "examples" / "reference.toml", "-k", "ASR-162")
    assert wrong.ret == pytest.ExitCode.USAGE_ERROR
    assert "ASR_HYPOTHESIS_PROFILE=no-such-profile: no such Hypothesis profile" in wrong.stderr.str()


def test_the_deep_profile_keeps_an_example_database(pytester: pytest.Pytester, monkeypatch) -> None:
    database = pytester.path / "shared-db"
    monkeypatch.setenv("ASR_HYPOTHESIS_DB", str(database))
    result = fuzz(pytester, MISBEHAVING / "accept-all", "--hypothesis-profile=asr-deep", "-k", "ASR-289")
    assert result.ret == 1
    assert database.is_dir() and any(database.rglob("*"))
