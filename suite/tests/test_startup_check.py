"""The start-up check: each implementation is started once before the first case, and a set-up
that cannot work is one usage error naming the manifest or path, never a failure per case.

Each way of not starting is checked against ``check_start`` in-process (a missing command, a
directory, a file without the execute bit, a shell that finds nothing, a persistent process that
exits before its handshake, one that answers it with garbage, one that announces another role),
beside implementations that start and must pass the check, including ones that crash on every
case (their crashes are the cases' to judge).  One end-to-end run shows what pytest makes of it."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from certifying import run_certification

from asr_conformance.harness.adapters.startup import TINY_STREAM, check_start
from asr_conformance.harness.adapters.targets import Target, resolve_targets
from asr_conformance.reference.checks import validate_path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
MISBEHAVING = EXAMPLES / "misbehaving"


def _manifest(folder: Path, command: list[str], protocol: str = "oneshot", roles: tuple[str, ...] = ("validator",)) -> Path:
    path = folder / "acme.toml"
    path.write_text(f'name = "acme"\ncommand = {json.dumps(command)}\nprotocol = "{protocol}"\n'
                    f'roles = {json.dumps(list(roles))}\ntimeout = 5\n')
    return path


def _target(given: Path | str, persistent: bool = False) -> Target:
    (target,) = resolve_targets([str(given)], None, [], persistent, None, None)
    return target


def _script(folder: Path, name: str, body: str, executable: bool = True) -> Path:
    path = folder / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755 if executable else 0o644)
    return path


def test_the_tiny_stream_is_valid(tmp_path: Path) -> None:
    stream = tmp_path / "tiny.jsonl"
    stream.write_bytes(TINY_STREAM)
    assert validate_path(stream).valid


@pytest.mark.parametrize("given", [EXAMPLES / "reference-validator", EXAMPLES / "reference.toml",
                                   EXAMPLES / "reference-oneshot.toml", MISBEHAVING / "crashes",
                                   MISBEHAVING / "exits-2", MISBEHAVING / "reject-all"],
                         ids=lambda p: p.name)
def test_an_implementation_that_starts_passes_the_check(given: Path) -> None:
    check = check_start(_target(given))
    assert check.ok, check.problem
    assert check.sent


def test_a_persistent_implementation_passes_with_its_handshake() -> None:
    check = check_start(_target(EXAMPLES / "reference-validator-persistent", persistent=True))
    assert check.ok, check.problem
    assert json.loads(check.sent[0]) == {"cmd": "start", "version": 1}
    assert json.loads(check.received[0])["version"] == 1 and check.said


@pytest.mark.parametrize(("make", "expected"), [
    (lambda d: ["no-such-command-anywhere"], "is not found on PATH"),
    (lambda d: [str((d / "folder").resolve())], "is a directory"),
    (lambda d: [str(_script(d, "plain", "exit 0\n", executable=False))], "is not executable"),
    (lambda d: ["sh", "-c", "no-such-command-anywhere"], "did not find the command (exit status 127)"),
], ids=["missing", "directory", "not-executable", "shell-not-found"])
def test_a_one_shot_command_that_cannot_run_fails_the_check(tmp_path: Path, make, expected: str) -> None:
    (tmp_path / "folder").mkdir()
    manifest = _manifest(tmp_path, make(tmp_path))
    check = check_start(_target(manifest))
    assert not check.ok and expected in check.problem
    assert check.usage_error().startswith(f"{manifest}: the implementation does not start: ")


@pytest.mark.parametrize(("body", "roles", "expected"), [
    ("exit 3\n", ("validator",), "the process exited (status 3)"),
    ("echo 'ready!'\nsleep 5\n", ("validator",), "not JSON"),
    # It stops when asked (the check ends a process that did start with a stop request, and waits for it).
    ('read line\necho \'{"version": 1, "implementation": {"name": "v"}, "roles": ["validator"]}\'\nread line\n',
     ("validator", "reader"), "not reader"),
], ids=["exits-at-once", "garbage-handshake", "missing-role"])
def test_a_persistent_process_without_a_good_handshake_fails_the_check(tmp_path: Path, body: str, roles,
                                                                       expected: str) -> None:
    server = _script(tmp_path, "server", body)
    check = check_start(_target(_manifest(tmp_path, [str(server)], "persistent", roles)))
    assert not check.ok and expected in check.problem, check.problem


def test_a_broken_set_up_is_one_usage_error_and_no_case_runs(pytester: pytest.Pytester) -> None:
    """A manifest whose command does not exist: pytest's usage-error status, one line naming the manifest,
    no failure per case, and an earlier report left as it was."""
    manifest = _manifest(pytester.path, ["bin/not-built-yet"])
    (pytester.path / "out").mkdir()
    (pytester.path / "out" / "report.json").write_text("{}\n")
    result = run_certification(f"--implementation={manifest}", "--report-dir=out", "-p", "no:cacheprovider", cwd=pytester.path)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.stderr.lines if "asr-conformance" in line]
    assert len(errors) == 1 and str(manifest) in errors[0] and "does not exist" in errors[0]
    assert "FAILED" not in result.stdout.str() and "Traceback" not in result.stdout.str() + result.stderr.str()
    assert (pytester.path / "out" / "report.json").read_text() == "{}\n"


def test_a_producer_starts_on_an_input_of_its_own_format() -> None:
    """The tiny stream is an ASR stream, which a converter rightly refuses; its own first input is not."""
    from asr_conformance.harness.adapters.startup import start_input

    sample = EXAMPLES / "codex-converter/samples/cli-exec-exit-codes.jsonl"
    (target,) = resolve_targets([str(EXAMPLES / "codex-converter/asr-from-codex")], "producer", [str(sample)], False,
                                None, None)
    assert start_input(target) == (sample.name, sample.read_bytes())
    check = check_start(target)
    assert check.ok and check.said == "exit status 0", (check.problem, check.said, check.stderr)
    assert check.received and '"type":"session"' in check.received[0]  # it converted the rollout


def test_a_producer_without_inputs_starts_on_a_transcript_its_pack_generates() -> None:
    from dataclasses import replace

    from asr_conformance.fidelity.codex import WITNESS
    from asr_conformance.harness.adapters.startup import start_input

    sample = EXAMPLES / "codex-converter/samples/cli-exec-exit-codes.jsonl"
    (target,) = resolve_targets([str(EXAMPLES / "codex-converter/asr-from-codex")], "producer", [str(sample)], False,
                                None, None)
    bare = replace(target, inputs=(), source_formats=("codex-rollout-jsonl",))
    name, data = start_input(bare)
    assert name.startswith("rollout-") and WITNESS.read(data).session_ids
    assert start_input(replace(bare, source_formats=())) == ("tiny.jsonl", TINY_STREAM)
    assert start_input(replace(target, roles=("validator",))) == ("tiny.jsonl", TINY_STREAM)


def test_a_slow_handshake_is_no_set_up_error_whatever_the_case_timeout(tmp_path: Path) -> None:
    """A persistent process that takes longer to answer its handshake than the case timeout (an interpreter
    starting on a busy machine) passes the start-up check: only cases are timed against --timeout."""
    slow = _script(tmp_path, "slow-start", 'sleep 0.6\nread request\necho \'{"version": 1, "implementation": '
                   '{"name": "slow"}, "roles": ["validator"]}\'\nwhile read request; do :; done\n')
    target = _target(slow, persistent=True)
    check = check_start(replace(target, timeout=0.2))
    assert check.ok, check.problem
