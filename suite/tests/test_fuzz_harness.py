"""The fuzz harness finds seeded bugs on its own (the fuzz tests' own bodies, called in process with each seeded-bug
validator), writes shrunk counterexamples that replay, and honours the profiles (whole runs: the profile's seed
printed and replayed, the counterexample file written, the certification profile's seed)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from certifying import PLUGIN_DEFAULT_REPORT_DIR, Certification, Certify, shared_certification
from hypothesis import Phase, settings
from miniatures import fuzz_failure, fuzz_session

from asr_conformance.conformance import test_validator_fuzz as validator_fuzz
from asr_conformance.harness.adapters.persistent import PersistentImplementation
from asr_conformance.harness.fuzzing.profiles import ensure_profiles

ROOT = Path(__file__).resolve().parents[2]
MISBEHAVING = ROOT / "examples" / "misbehaving"


#: The fuzz part of the conformance suite alone (the corpus switched off).
FUZZ = ("-m", "fuzz")


def _report(folder: Path) -> dict:
    import json

    return json.loads((folder / "reports" / "out" / "report.json").read_text())


def fuzz(certify: Certify, folder: Path, implementation: Path, *args: str) -> Certification:
    """The fuzz part, in ``folder``, with the plugin's default report folder (reports/out)."""
    return certify(f"--implementation={implementation}", *FUZZ, *args, cwd=folder, report_dir=PLUGIN_DEFAULT_REPORT_DIR)


def quick_catch() -> settings:
    """Whether the fuzz harness catches a bug, not how small the counterexample gets: ``asr-fast`` (a fresh seed,
    eight examples) without shrinking."""
    ensure_profiles()
    return settings(settings.get_profile("asr-fast"), phases=[Phase.explicit, Phase.reuse, Phase.generate])


#: What ``-m fuzz -k SELECTION`` runs of a validator: the fuzz tests' own bodies and their parameters.
SELECTIONS = {
    "ASR-260": [(validator_fuzz.test_rejects_mutated_streams, "ASR-260")],
    "ASR-164": [(validator_fuzz.test_rejects_mutated_streams, "ASR-164")],
    "ASR-182": [(validator_fuzz.test_rejects_mutated_streams, "ASR-182")],
    "adversarial": [(validator_fuzz.test_accepts_adversarial_valid_streams, None)],
    "damaged and utf8": [(validator_fuzz.test_survives_damaged_bytes, "invalid-utf8")],
}


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
def test_fuzzing_alone_catches_seeded_bugs(tmp_path: Path, validator: str, selection: str, expected: str) -> None:
    """The seeded-bug program over the persistent protocol, asked by the fuzz tests a ``-m fuzz -k SELECTION`` run
    holds: a property fails, saying what the bug got wrong (a failing fuzz test making the verdict DOES NOT CONFORM
    is shown by the certification runs of accept-all below)."""
    adapter = PersistentImplementation([str(MISBEHAVING / validator)], timeout=60)
    failures = []
    try:
        for test, parameter in SELECTIONS[selection]:
            session, _ = fuzz_session(adapter, tmp_path / test.__name__, quick_catch(),
                                      replay=(f"--implementation={MISBEHAVING / validator}", "--persistent"))
            failures.append(fuzz_failure(test, session, *filter(None, [parameter])))
    finally:
        adapter.close()
    assert failures and any(failures), f"{validator}: no fuzz test failed"
    assert any(expected in failure for failure in failures if failure), failures


@pytest.mark.e2e
def test_the_reference_passes_the_fuzz_properties(reference_whole_run: Certification) -> None:
    """Read from the session's one whole run of the reference (conftest.py), which holds every fuzz property
    of every role: the valid-stream, ASR-16x mutation and damaged-bytes properties among them, each passing."""
    assert reference_whole_run.ret == 0, reference_whole_run.stdout.str()[-3000:]
    results = [r for r in reference_whole_run.report["results"] if r["kind"] == "fuzz"]
    for selected in ("valid_streams", "ASR-16", "damaged"):
        assert any(selected in r["id"] for r in results), selected
    assert results and all(r["outcome"] == "pass" for r in results)


def test_a_counterexample_is_written_shrunk(accept_all_found: Certification) -> None:
    """Read from the session's failing accept-all run (conftest.py); its replay, from another folder, is
    test_first_run.py's ``test_counterexamples_go_under_the_report_folder_and_replay_from_anywhere``."""
    result = accept_all_found
    match = re.search(r"counterexample \(shrunk\): (.+\.jsonl)\nreplay: (.+)", result.stdout.str())
    assert match, result.stdout.str()[-3000:]
    stream = result.folder / match.group(1)
    assert stream.is_file() and stream.with_suffix(".toml").is_file()
    assert 'verdict = "invalid"' in stream.with_suffix(".toml").read_text()
    assert len(stream.read_bytes().splitlines()) <= 3, "shrinking should leave a small stream"
    listed = result.report["counterexamples"]
    assert [(c["path"], c["replay"]) for c in listed] == [(match.group(1), match.group(2).strip())]
    result.stdout.fnmatch_lines(["*verdict: DOES NOT CONFORM*"])


def test_the_certification_profile_prints_and_uses_its_seed(certify: Certify, tmp_path: Path) -> None:
    result = fuzz(certify, tmp_path, ROOT / "examples" / "reference.toml", "--hypothesis-profile=asr-certify",
                  "-k", "ASR-162")
    header = re.search(r"Hypothesis profile asr-certify, seed (\d+) \(replay with --hypothesis-seed=\1\)",
                       result.stdout.str())
    assert header and result.ret == 0
    report = _report(tmp_path)
    assert report["hypothesis"] == {"profile": "asr-certify", "seed": int(header.group(1)), "fixed_examples": False}
    fuzzed = [r for r in report["results"] if r["kind"] == "fuzz"]
    assert fuzzed and all(r["details"]["hypothesis_seed"] == int(header.group(1)) for r in fuzzed), fuzzed


@pytest.mark.e2e
def test_under_xdist_every_worker_fuzzes_with_the_seed_the_controller_printed(reference_whole_run: Certification) -> None:
    """Read from the session's one whole run of the reference (conftest.py: two workers, a fresh seed): every
    property ran on a worker, with the seed the controller chose and printed, or the replay would differ."""
    header = re.search(r"Hypothesis profile asr-fast, seed (\d+) \(replay with --hypothesis-seed=\1\)",
                       reference_whole_run.stdout.str())
    assert header and reference_whole_run.ret == 0, reference_whole_run.stdout.str()[-3000:]
    report = reference_whole_run.report
    assert report["options"]["workers"] == 2
    assert report["hypothesis"] == {"profile": "asr-fast", "seed": int(header.group(1)), "fixed_examples": False}
    fuzzed = [r for r in report["results"] if r["kind"] == "fuzz"]
    assert fuzzed and all(r["details"]["hypothesis_seed"] == int(header.group(1)) for r in fuzzed)


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
    # The replay's sessions hold the seed as the first run's did (it also seeds their long examples' pools): the
    # option's text is read as the number it spells.
    replayed = _report(tmp_path)
    assert replayed["hypothesis"] == {"profile": "asr-fast", "seed": _seed(first), "fixed_examples": False}
    fuzzed = [r for r in replayed["results"] if r["kind"] == "fuzz"]
    assert fuzzed and all(r["details"]["hypothesis_seed"] == _seed(first) for r in fuzzed), fuzzed


def test_the_profile_variable_chooses_the_profile(accept_all_found: Certification) -> None:
    """The session's failing accept-all run names no profile on its command line; ASR_HYPOTHESIS_PROFILE does."""
    assert "Hypothesis profile asr-fixed" in accept_all_found.stdout.str()
    assert accept_all_found.report["hypothesis"]["profile"] == "asr-fixed"


def test_the_fixed_profile_is_a_regression_gate_without_badges(certify: Certify, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("ASR_HYPOTHESIS_PROFILE", raising=False)
    result = fuzz(certify, tmp_path, ROOT / "examples" / "reference.toml", "-k", "ASR-162", "--hypothesis-profile=asr-fixed")
    assert result.ret == 0
    assert "seed" not in result.stdout.str().split("collected")[0]
    assert "fixed fuzz examples (asr-fixed), the same every run: a regression gate that certifies nothing new; no badge" \
        in result.stdout.str()
    assert _report(tmp_path)["hypothesis"]["fixed_examples"] is True
    assert not list((tmp_path / "reports" / "out").glob("badge-*.json"))
    monkeypatch.setenv("ASR_HYPOTHESIS_PROFILE", "no-such-profile")
    wrong = fuzz(certify, tmp_path, ROOT / "examples" / "reference.toml", "-k", "ASR-162")
    assert wrong.ret == pytest.ExitCode.USAGE_ERROR
    assert "ASR_HYPOTHESIS_PROFILE=no-such-profile: no such Hypothesis profile" in wrong.stderr.str()


@pytest.fixture(scope="module")
def deep_elsewhere(tmp_path_factory: pytest.TempPathFactory) -> tuple[Certification, Path]:
    """accept-all under ``asr-deep`` with its example database in a folder of its own (``ASR_HYPOTHESIS_DB``) and
    its counterexamples in another (``--counterexamples``): one failing run, each test reading what it is about.
    Both folders are named relative to the run's folder, where every xdist worker finds them."""
    run = shared_certification(tmp_path_factory, "accept-all-deep", f"--implementation={MISBEHAVING / 'accept-all'}",
                               *FUZZ, "--hypothesis-profile=asr-deep", "-k", "ASR-289", "--counterexamples=found",
                               report_dir=PLUGIN_DEFAULT_REPORT_DIR, env={"ASR_HYPOTHESIS_DB": "shared-db"})
    return run, run.folder / "shared-db"


def test_the_deep_profile_keeps_an_example_database(deep_elsewhere: tuple[Certification, Path]) -> None:
    result, database = deep_elsewhere
    assert result.ret == 1
    assert database.is_dir() and any(database.rglob("*"))


def test_counterexamples_option_overrides_the_folder(deep_elsewhere: tuple[Certification, Path]) -> None:
    result, _ = deep_elsewhere
    assert result.ret == 1
    assert list((result.folder / "found" / "validator").rglob("*.jsonl"))
    assert not (result.folder / "reports" / "out" / "counterexamples").exists()
