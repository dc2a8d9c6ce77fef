"""Fuzz campaigns across machines: ``ASR_HYPOTHESIS_REDIS`` gives ``asr-deep`` a shared Redis example
database.  Tested against a real ``redis-server`` started here on a free localhost port: a failure
one run finds is the first example a second run (another folder, sharing only the database) sends,
and two runs with two xdist workers each, at the same time, both leave their failures in it.

Why the ``redis`` extra earns its place: a directory database cannot be shared between machines
without a network file system, and Hypothesis' own Redis database is the supported way to pool
examples; the client is only imported when ``ASR_HYPOTHESIS_REDIS`` is set."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from certifying import PLUGIN_DEFAULT_REPORT_DIR, run_certification
from local_redis import local_redis

ROOT = Path(__file__).resolve().parents[2]
MISBEHAVING = ROOT / "examples" / "misbehaving"


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A private redis-server for this module's tests (no persistence), stopped by its process ID afterwards.
    Each test keeps to its own numbered databases: ``{redis_server}/0`` and so on."""
    with local_redis(tmp_path_factory.mktemp("redis")) as url:
        yield url


def _arguments(implementation: str, selection: str, *extra: str) -> list[str]:
    """An asr-deep run of the fuzz part on one property, persistent, its shrinking bounded."""
    return [f"--implementation={MISBEHAVING / implementation}", "--persistent", "--hypothesis-profile=asr-deep",
            "-m", "fuzz", "-k", selection, "--asr-shrink-steps=40", *extra]


def _environment(folder: Path, url: str) -> dict[str, str]:
    """The shared Redis database, and a folder database of the run's own that it must not use."""
    return {"ASR_HYPOTHESIS_REDIS": url, "ASR_HYPOTHESIS_DB": str(folder / "unused-db")}


def _campaign(folder: Path, url: str, implementation: str, selection: str, *extra: str) -> subprocess.Popen:
    """An asr-deep run in its own folder (its own .hypothesis, reports), sharing only the Redis database; started
    as a process of its own, so that several run at once."""
    folder.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen(
        [sys.executable, "-m", "pytest", *_arguments(implementation, selection, *extra), "-p", "no:cacheprovider",
         "-p", "no:anyio"],
        cwd=folder, env={**os.environ, **_environment(folder, url)}, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True,
    )


def _finish(process: subprocess.Popen) -> str:
    output, _ = process.communicate(timeout=600)
    return output


def _run(folder: Path, url: str, implementation: str, selection: str) -> str:
    """One such run to its end, forked from the preloaded pytest (``run_certification``); its output."""
    result = run_certification(*_arguments(implementation, selection), cwd=folder, env=_environment(folder, url),
                               report_dir=PLUGIN_DEFAULT_REPORT_DIR)
    return result.stdout.str() + result.stderr.str()


def _failures(folder: Path) -> dict[str, dict]:
    report = json.loads((folder / "reports" / "out" / "report.json").read_text())
    return {r["id"]: r for r in report["results"] if r["outcome"] == "fail"}


def _counterexample_digests(folder: Path) -> set[str]:
    found = (folder / "reports" / "out" / "counterexamples").rglob("*.jsonl")
    return {hashlib.sha256(path.read_bytes()).hexdigest() for path in found}


#: A seeded bug the simplest example does not show: the over-strict validator rejects valid streams
#: with two tool_calls sharing a callId, which a valid stream has only now and then.  A run that
#: starts from scratch meets it after some examples; a run that reuses the database, at once.
RARE = ("rejects-duplicate-call-ids", "accepts_valid_streams")
RARE_TEST = "validator/test_accepts_valid_streams"
#: A seeded bug every mutated example shows.
COMMON = ("lenient-exit-code", "ASR-260")
COMMON_TEST = "validator/test_rejects_mutated_streams[ASR-260]"


@pytest.fixture(scope="module")
def first_campaign(redis_server: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A campaign on RARE in database 0 from scratch, shared by the two tests that start from it."""
    folder = tmp_path_factory.mktemp("first")
    output = _run(folder, f"{redis_server}/0", *RARE)
    assert RARE_TEST in _failures(folder), output[-3000:]
    return folder


def test_a_second_run_replays_the_first_runs_failure_first(redis_server: str, first_campaign: Path,
                                                           tmp_path: Path) -> None:
    shrunk = _counterexample_digests(first_campaign)
    assert len(shrunk) == 1

    second = _run(tmp_path / "second", f"{redis_server}/0", *RARE)
    details = _failures(tmp_path / "second")[RARE_TEST]["details"]
    # The first stream the second run sent is the first run's shrunk counterexample, from the database.
    assert details["fuzz_first_failure_call"] == 1, second[-3000:]
    assert {details["fuzz_first_failure_sha256"]} == shrunk


def test_a_run_on_another_database_starts_from_scratch(redis_server: str, first_campaign: Path, tmp_path: Path) -> None:
    """The control: database 1 of the same server shares nothing with database 0."""
    shrunk = _counterexample_digests(first_campaign)
    assert shrunk
    output = _run(tmp_path / "other", f"{redis_server}/1", *RARE)
    details = _failures(tmp_path / "other")[RARE_TEST]["details"]
    assert details["fuzz_first_failure_call"] > 1, output[-2000:]
    assert details["fuzz_first_failure_sha256"] not in shrunk


@pytest.mark.campaign
def test_two_parallel_xdist_runs_share_the_database_without_losing_examples(redis_server: str, tmp_path: Path) -> None:
    redis_url = f"{redis_server}/2"  # a database of its own: the tests above fill 0 and 1
    runs = {"rare": (RARE, RARE_TEST), "common": (COMMON, COMMON_TEST)}
    started = {name: _campaign(tmp_path / name, redis_url, *selection, "-n", "2")
               for name, (selection, _) in runs.items()}
    outputs = {name: _finish(process) for name, process in started.items()}
    assert runs
    for name, (_, test) in runs.items():
        assert test in _failures(tmp_path / name), outputs[name][-3000:]

    # Both runs' failures are in the database: a run of each replays its failure first (in one process:
    # what is read back does not depend on xdist, what the parallel runs wrote does).
    replays = {name: _campaign(tmp_path / f"replay-{name}", redis_url, *selection)
               for name, (selection, _) in runs.items()}
    for name, (_, test) in runs.items():
        output = _finish(replays[name])
        details = _failures(tmp_path / f"replay-{name}")[test]["details"]
        assert details["fuzz_first_failure_call"] == 1, output[-3000:]
        assert details["fuzz_first_failure_sha256"] in _counterexample_digests(tmp_path / name)


def test_the_redis_variable_selects_a_redis_database(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from hypothesis.database import DirectoryBasedExampleDatabase

    from asr_conformance.harness.fuzzing.profiles import FuzzSetupError, deep_database

    monkeypatch.delenv("ASR_HYPOTHESIS_REDIS", raising=False)
    monkeypatch.setenv("ASR_HYPOTHESIS_DB", str(tmp_path / "db"))
    assert isinstance(deep_database(), DirectoryBasedExampleDatabase)
    monkeypatch.setenv("ASR_HYPOTHESIS_REDIS", "redis://127.0.0.1:1/0")
    monkeypatch.setitem(__import__("sys").modules, "redis", None)  # as if the client were not installed
    with pytest.raises(FuzzSetupError, match=r"pip install 'asr-conformance\[redis\]'"):
        deep_database()


def test_the_redis_variable_makes_a_redis_database(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("redis", reason="the redis client is not installed: pip install -e '.[redis]'")
    from hypothesis.extra.redis import RedisExampleDatabase

    from asr_conformance.harness.fuzzing.profiles import deep_database

    monkeypatch.setenv("ASR_HYPOTHESIS_REDIS", "redis://127.0.0.1:1/0")
    assert isinstance(deep_database(), RedisExampleDatabase)  # connecting waits for the first command
