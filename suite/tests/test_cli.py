"""asr-validate and the one-shot reference executable keep their contracts."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from asr_conformance.reference.cli import main

ROOT = Path(__file__).resolve().parents[2]
HEADER = (
    '{"type":"session","seq":0,"id":"h","formatVersion":"0.1","agent":{"name":"a"},"sessionId":"s",'
    '"producer":{"name":"p","version":"1","method":"native","instance":"i"},"profiles":["core"],'
    '"contentLevel":"full"}\n'
)
BAD_EXIT = '{"type":"hook","seq":1,"id":"r1","event":"stop","exitCode":4294967296}\n'


@pytest.fixture
def good(tmp_path: Path) -> Path:
    path = tmp_path / "good.jsonl"
    path.write_text(HEADER)
    return path


@pytest.fixture
def bad(tmp_path: Path) -> Path:
    path = tmp_path / "bad.jsonl"
    path.write_text(HEADER + BAD_EXIT)
    return path


def run(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(list(args), out), out.getvalue()


def test_conforming_file_exits_0(good: Path) -> None:
    status, text = run(str(good))
    assert status == 0
    assert "conforms" in text and "does not" not in text


def test_nonconforming_file_exits_1_and_names_file_line_and_rule(bad: Path) -> None:
    status, text = run(str(bad))
    assert status == 1
    assert f"{bad}:2: ASR-260: error (seq 1) at /exitCode:" in text
    assert text.rstrip().endswith("1 error(s), 0 warning(s) [ASR-260]")


def test_one_bad_file_among_several_exits_1(good: Path, bad: Path) -> None:
    status, text = run(str(good), str(bad))
    assert status == 1
    assert "1 of 2 file(s) conform" in text


def test_json_output_has_the_one_shot_shape(bad: Path) -> None:
    status, text = run("--json", str(bad))
    assert status == 1
    (line,) = text.splitlines()
    diagnostic = json.loads(line)
    assert diagnostic == {
        "rule": "ASR-260", "seq": 1, "line": 2, "level": "error", "pointer": "/exitCode",
        "message": diagnostic["message"], "file": str(bad),
    }
    assert "2^32-1" in diagnostic["message"]


@pytest.mark.parametrize("args", [[], ["--no-such-option", "x"]])
def test_usage_errors_exit_2(args: list[str]) -> None:
    assert run(*args)[0] == 2


def test_missing_file_exits_2_with_a_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(str(tmp_path / "absent.jsonl"))[0] == 2
    assert "absent.jsonl: cannot read" in capsys.readouterr().err


def test_warnings_do_not_reject(tmp_path: Path) -> None:
    path = tmp_path / "warn.jsonl"
    path.write_text(HEADER + '{"type":"state","seq":1,"id":"r1","state":"running","stopReason":"end_turn"}\n')
    status, text = run(str(path))
    assert status == 0
    assert "ASR-168: warning" in text
    assert "ASR-168" not in run("--no-warnings", str(path))[1]


def reference(path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run(
        [str(ROOT / "examples" / "reference-validator"), str(path)],
        capture_output=True, text=True, timeout=60, env=env, stdin=subprocess.DEVNULL,
    )


def test_reference_executable_accepts_with_exit_0(good: Path) -> None:
    result = reference(good)
    assert (result.returncode, result.stdout) == (0, "")


def test_reference_executable_rejects_with_exit_1_and_json_diagnostics(bad: Path) -> None:
    result = reference(bad)
    assert result.returncode == 1
    diagnostics = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(d["rule"], d["seq"]) for d in diagnostics] == [("ASR-260", 1)]


def test_reference_executable_without_a_file_is_not_a_verdict(tmp_path: Path) -> None:
    assert reference(tmp_path / "absent.jsonl").returncode not in (0, 1)


def test_a_dash_reads_the_stream_from_stdin(good: Path, bad: Path) -> None:
    for stream, status in ((good, 0), (bad, 1)):
        found = subprocess.run([sys.executable, "-m", "asr_conformance.reference.cli", "-"], input=stream.read_bytes(),
                               capture_output=True, timeout=60)
        assert found.returncode == status and found.stdout.decode().splitlines()[-1].startswith("-: ")


def test_version() -> None:
    found = subprocess.run([sys.executable, "-m", "asr_conformance.reference.cli", "--version"], capture_output=True,
                           text=True, timeout=60)
    assert found.returncode == 0 and found.stdout.startswith("asr-validate ")


def test_a_closed_pipe_ends_the_output_quietly(tmp_path: Path) -> None:
    """``asr-validate --json many.jsonl | head -1``: no BrokenPipeError traceback, the verdict's exit status."""
    many = tmp_path / "many.jsonl"
    many.write_text("not json\n" * 20_000)
    validate = subprocess.Popen([sys.executable, "-m", "asr_conformance.reference.cli", "--json", str(many)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert validate.stdout is not None and validate.stdout.readline()
    validate.stdout.close()  # what head does after its first line
    stderr = validate.stderr.read() if validate.stderr else b""
    assert validate.wait(timeout=60) == 1
    assert b"Traceback" not in stderr and b"BrokenPipeError" not in stderr, stderr
