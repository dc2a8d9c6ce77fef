"""Fuzz campaigns under HypoFuzz (``asr-conformance campaign``, ``plugin/campaign*.py``).

The end-to-end test runs the real thing: a ``redis-server`` on a free loopback port, two campaign
processes one after the other against a seeded lenient validator (``lenient-exit-code``, which
never checks the exitCode range of ASR-260), sharing only the Redis database.  The first finds
and shrinks a failure and writes it as a counterexample case; the second's first example of that
property is that very counterexample (replayed from the database, not found again: shrunk
counterexamples differ from campaign to campaign); an ordinary ``pytest --implementation=...``
run on the same database fails with it at its first call, and on another database (the control)
does not start from it; the counterexample's replay command fails as a corpus case.  Afterwards
no campaign or implementation process is left.  The cheap tests check the summary's merging,
the plan's arguments, the console's refusals and the group stop on a process that ignores SIGTERM.
"""

from __future__ import annotations

import inspect
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
from local_redis import local_redis

from asr_conformance.plugin.campaign import hypofuzz_compatibility
from asr_conformance.plugin.campaign_record import KIND, load_records, render_summary, summarize
from asr_conformance.plugin.campaign_run import CampaignPlan, stop_group
from asr_conformance.plugin.console import main

ROOT = Path(__file__).resolve().parents[2]
LENIENT = ROOT / "examples" / "misbehaving" / "lenient-exit-code"
PROPERTY = "validator/test_rejects_mutated_streams[ASR-260]"


def _record(pid: int, examples: int, failure: dict | None) -> dict:
    return {"kind": KIND, "implementation": "x", "host": "h", "pid": pid, "started": 0, "updated": 0,
            "properties": {PROPERTY: {"node": "n", "role": "validator", "rules": ["ASR-260"], "examples": examples,
                                      "failure": failure, "first_failure": None}}}


def _failure(sha: str) -> dict:
    return {"rules": ["ASR-260"], "message": "accepted", "counterexample": f"/c/{sha}.jsonl", "replay": "pytest ...",
            "sha256": sha, "at_example": 3}


def test_summary_merges_process_records(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "campaign"
    folder.mkdir()
    (folder / "h-1.json").write_text(json.dumps(_record(1, 10, _failure("aa"))))
    (folder / "h-2.json").write_text(json.dumps(_record(2, 5, _failure("aa"))))
    (folder / "h-3.json").write_text(json.dumps(_record(3, 7, _failure("bb"))))
    summary = summarize(load_records(tmp_path))
    assert summary.examples == {PROPERTY: 22}
    assert sorted(f["sha256"] for f in summary.failures[PROPERTY]) == ["aa", "bb"]  # one entry per distinct example
    assert main(["summary", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "22 examples, 2 failing example(s)" in out and "FAILED (ASR-260)" in out
    assert "certifies nothing" in out and "CONFORMS" not in out


def test_summary_of_a_campaign_that_found_nothing_exits_0(tmp_path: Path) -> None:
    (tmp_path / "campaign").mkdir()
    (tmp_path / "campaign" / "h-1.json").write_text(json.dumps(_record(1, 10, None)))
    assert main(["summary", str(tmp_path)]) == 0
    assert "0 failing example(s)" in "\n".join(render_summary(summarize(load_records(tmp_path))))


def test_summary_refuses_a_record_it_did_not_write(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "campaign").mkdir()
    bad = tmp_path / "campaign" / "h-1.json"
    bad.write_text('{"properties": {}}')
    assert main(["summary", str(tmp_path)]) == 2
    assert str(bad) in capsys.readouterr().err
    bad.write_text("{not json")
    assert main(["summary", str(tmp_path)]) == 2
    assert f"{bad}: not a campaign record" in capsys.readouterr().err


def test_the_plan_runs_the_fuzz_properties_on_the_deep_database(tmp_path: Path) -> None:
    plan = CampaignPlan(["./v"], 4, 60, tmp_path, None, ["--persistent", "-k", "ASR-260"])
    arguments = plan.pytest_arguments()
    assert arguments[:3] == ["--implementation=./v", "-m", "fuzz"]
    assert "--hypothesis-profile=asr-deep" in arguments and "asr_conformance.plugin.campaign" in arguments
    assert arguments[-3:] == ["--persistent", "-k", "ASR-260"]
    assert plan.command()[3:7] == ["-n", "4", "--no-dashboard", "--"]
    chosen = CampaignPlan(["./v"], 1, None, tmp_path, 8123, ["--hypothesis-profile=mine"]).command()
    assert "--hypothesis-profile=asr-deep" not in chosen and ["--port", "8123"] == chosen[8:10]


@pytest.mark.parametrize("arguments", [["-n", "0"], ["--time", "0"], ["--time", "-3"]])
def test_the_console_refuses_a_campaign_it_cannot_run(arguments: list[str]) -> None:
    assert main(["campaign", "--implementation=./v", *arguments]) == 2


def test_arguments_after_the_separator_are_for_a_campaign_only() -> None:
    assert main(["smoke", "./v", "--", "-k", "x"]) == 2


def test_the_stop_kills_a_group_that_ignores_sigterm(tmp_path: Path) -> None:
    stubborn = subprocess.Popen(["sh", "-c", "trap '' TERM; sleep 60 & sleep 60 & wait"], start_new_session=True)
    time.sleep(0.2)
    os.killpg(stubborn.pid, signal.SIGTERM)
    time.sleep(0.3)
    assert stubborn.poll() is None  # the control: SIGTERM alone does not end it
    assert len(_living_in_group(stubborn.pid)) == 3
    stop_group(stubborn, grace=0.5)
    assert stubborn.poll() is not None
    # SIGKILL is delivered, not awaited: the group's last members may take a moment to die.
    deadline = time.monotonic() + 5
    while _living_in_group(stubborn.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _living_in_group(stubborn.pid) == []


def _living_in_group(group: int) -> list[int]:
    """Processes of a process group that are not zombies (a killed child waits for its reaper as a zombie)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != "Z" and int(fields[2]) == group:
            found.append(int(entry.name))
    return found


def test_hypofuzz_reads_a_name_hypothesis_renamed_and_the_campaign_gives_it_back() -> None:
    hypofuzz = pytest.importorskip("hypofuzz.hypofuzz", reason="HypoFuzz is not installed: pip install -e '.[campaign]'")
    from hypothesis.internal.conjecture.data import ConjectureResult

    # What the alias is for (when this fails, HypoFuzz reads the new name and the alias can go).
    assert "shrink_target.slice_comments" in inspect.getsource(hypofuzz.FuzzTarget.run_one)
    assert not hasattr(ConjectureResult, "slice_comments")  # without the alias, a campaign process dies after a shrink
    hypofuzz_compatibility()
    try:
        alias = ConjectureResult.__dict__["slice_comments"]
        assert alias.fget(SimpleNamespace(span_comments={None: "a comment"})) == {None: "a comment"}
    finally:
        del ConjectureResult.slice_comments  # type: ignore[attr-defined]


# --- the real thing ---------------------------------------------------------------------------


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    """A private redis-server (no persistence) on a free loopback port, stopped by its process afterwards."""
    pytest.importorskip("hypofuzz", reason="HypoFuzz is not installed: pip install -e '.[campaign]'")
    with local_redis(tmp_path) as url:
        yield url


#: The longest a campaign of the end-to-end test may run (it is stopped as soon as it has done its part;
#: on an idle machine that is seconds, on a loaded one start-up alone can take half a minute).
CAMPAIGN_LIMIT = 240


def _campaign(folder: Path, url: str | None, implementation: Path, done: Callable[[], bool],
              arguments: tuple[str, ...] = ("--persistent", "-k", "ASR-260", "--asr-shrink-steps=10")) -> tuple[int, str]:
    """A campaign in its own folder sharing only the Redis database, stopped by Ctrl-C (SIGINT to the command, as
    in a terminal) once ``done()`` holds, else by its --time; returns its exit status and output."""
    folder.mkdir(parents=True, exist_ok=True)
    environment = {**os.environ, "ASR_HYPOTHESIS_DB": str(folder / "db")}
    environment.pop("ASR_HYPOTHESIS_REDIS", None)
    if url is not None:
        environment["ASR_HYPOTHESIS_REDIS"] = url
    process = subprocess.Popen(
        [sys.executable, "-m", "asr_conformance.plugin.console", "campaign", f"--implementation={implementation}",
         "-n", "1", "--time", str(CAMPAIGN_LIMIT), "--report-dir", str(folder / "out"), "--", *arguments],
        cwd=folder, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        while process.poll() is None and not done():
            time.sleep(0.2)
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=60)
    finally:
        _end(process)
    return process.returncode, output


def _end(process: subprocess.Popen[str]) -> None:
    """A campaign command the test gives up on: SIGTERM (it stops its HypoFuzz group as on Ctrl-C), then SIGKILL."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _records(folder: Path) -> list[dict]:
    try:
        return load_records(folder / "out")
    except ValueError:
        return []


def _plain_run(folder: Path, url: str, implementation: Path) -> dict:
    """An ordinary asr-deep certification of the property; returns its failure's details."""
    folder.mkdir(parents=True, exist_ok=True)
    environment = {**os.environ, "ASR_HYPOTHESIS_REDIS": url, "ASR_HYPOTHESIS_DB": str(folder / "unused-db")}
    done = subprocess.run([sys.executable, "-m", "pytest", f"--implementation={implementation}", "--persistent",
                           "--hypothesis-profile=asr-deep", "-m", "fuzz", "-k", "ASR-260", "-p", "no:cacheprovider", "-p", "no:anyio",
                           "--asr-shrink-steps=20", "--report-dir=out"],
                          cwd=folder, env=environment, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout[-3000:]
    report = json.loads((folder / "out" / "report.json").read_text())
    (failed,) = [r for r in report["results"] if r["outcome"] == "fail"]
    assert failed["id"] == PROPERTY
    details: dict = failed["details"]
    return details


def _left_running(marker: str) -> list[str]:
    """Processes whose command line names ``marker`` (this test's own folder), other than this one."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in command:
            found.append(f"{entry.name}: {command[:200]}")
    return found


@pytest.mark.e2e
@pytest.mark.campaign
def test_two_campaigns_share_their_finds_through_redis_and_pytest_replays_them(redis_url: str, tmp_path: Path) -> None:
    # A copy of the seeded validator under this test's folder: processes left running are found by its path.
    implementation = tmp_path / "impl" / "lenient-exit-code"
    implementation.parent.mkdir()
    shutil.copy2(LENIENT, implementation)
    shared = f"{redis_url}/0"

    redis = pytest.importorskip("redis").Redis.from_url(shared)

    def shrunk_in_database() -> bool:
        """HypoFuzz has shrunk a failure and saved it for other processes (its observation of the shrunk example)."""
        return bool(redis.keys(b"*.hypofuzz.failures.shrunk.*"))

    _, first = _campaign(tmp_path / "first", shared, implementation, shrunk_in_database)
    assert "stopped (interrupt)" in first, first[-3000:]
    (record,) = load_records(tmp_path / "first" / "out")
    found = record["properties"][PROPERTY]["failure"]
    assert found is not None and "ASR-260" in found["rules"], first[-3000:]
    counterexample = Path(found["counterexample"])
    assert counterexample.is_file() and counterexample.with_suffix(".toml").is_file()
    assert found["counterexample"] in first and "certifies nothing" in first
    # A campaign writes no certification: no report, no summary, no badge.
    written = {p.name for p in (tmp_path / "first" / "out").rglob("*") if p.is_file()}
    assert not written & {"report.json", "summary.md", "report.html"} and not any(n.endswith(".svg") for n in written)

    def replayed() -> bool:
        return any(r["properties"].get(PROPERTY, {}).get("first_failure") for r in _records(tmp_path / "second"))

    _, second = _campaign(tmp_path / "second", shared, implementation, replayed)
    (again,) = load_records(tmp_path / "second" / "out")
    # The second campaign's first example of the property was the first campaign's shrunk counterexample.
    assert again["properties"][PROPERTY]["first_failure"] == {"example": 1, "sha256": found["sha256"]}, second[-3000:]
    shrunk_again = again["properties"][PROPERTY]["failure"]["sha256"]

    details = _plain_run(tmp_path / "plain", shared, implementation)
    assert details["fuzz_first_failure_call"] == 1
    assert details["fuzz_first_failure_sha256"] in {found["sha256"], shrunk_again}
    control = _plain_run(tmp_path / "control", f"{redis_url}/1", implementation)
    # On an empty database the replayed example is not drawn first, unless it is Hypothesis's simplest example,
    # which every fresh run tries first: then the two runs cannot be told apart by their first failure, and the
    # replay is shown by the second campaign alone (its first example, above).
    simplest = (control["fuzz_first_failure_call"] == 1
                and control["fuzz_first_failure_sha256"] in {found["sha256"], shrunk_again})
    if not simplest:
        assert control["fuzz_first_failure_sha256"] not in {found["sha256"], shrunk_again}

    command = shlex.split(found["replay"])
    assert command[0] == "pytest"
    replay = subprocess.run([sys.executable, "-m", *command], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert replay.returncode == 1 and counterexample.stem in replay.stdout, replay.stdout[-3000:]

    assert _left_running(str(implementation.parent)) == []


#: One property of each role the bundled reference plays (its manifest names all three).
ONE_PER_ROLE = {"validator": "test_accepts_valid_streams", "reader": "test_reader_views_of_valid_streams",
                "producer": "claude-code-jsonl-arguments"}


@pytest.mark.e2e
@pytest.mark.campaign
def test_a_campaign_runs_every_role_and_the_reference_fails_none(tmp_path: Path) -> None:
    """Three campaigns at once, one property of one role each (a process fuzzes one property a hundred examples
    at a time, so one campaign would take minutes to reach all three), each stopped once it has run examples."""
    pytest.importorskip("hypofuzz", reason="HypoFuzz is not installed: pip install -e '.[campaign]'")
    environment = {**os.environ, "ASR_HYPOTHESIS_DB": str(tmp_path / "db")}
    environment.pop("ASR_HYPOTHESIS_REDIS", None)
    started = {role: subprocess.Popen(
        [sys.executable, "-m", "asr_conformance.plugin.console", "campaign",
         f"--implementation={ROOT / 'examples' / 'reference.toml'}", "--time", str(CAMPAIGN_LIMIT),
         "--report-dir", str(tmp_path / role / "out"), "--", "-k", selection],
        cwd=tmp_path, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for role, selection in ONE_PER_ROLE.items()}
    outputs = {}
    try:
        for role, process in started.items():
            while process.poll() is None and not any(p["examples"] >= 2 for r in _records(tmp_path / role)
                                                      for p in r["properties"].values()):
                time.sleep(0.2)
            if process.poll() is None:
                process.send_signal(signal.SIGINT)
            outputs[role] = process.communicate(timeout=180)[0]  # three campaigns at once stop slowly under load
    finally:
        for process in started.values():
            _end(process)
    for role, output in outputs.items():
        assert "stopped (interrupt)" in output, output[-3000:]
        summary = summarize(_records(tmp_path / role))
        assert [summary.roles[name] for name in summary.examples] == [role], output[-3000:]
        assert summary.total_examples >= 2 and summary.failures == {}, output[-3000:]
        assert started[role].returncode == 0, output[-3000:]
