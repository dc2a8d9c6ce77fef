"""The example converters' shared command-line shell: exit statuses and one-line messages naming the input.

Each converter runs as its ``examples/`` link does (a script, by path), so the sibling imports that
keep it standard-library-only are exercised too; the shell's own failure paths run in process.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from asr_conformance.reference.converter_cli import EXIT_INTERNAL, EXIT_OK, EXIT_REFUSED, EXIT_USAGE, Refused, Shell

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CONVERTERS = {
    "asr-from-claude-code": EXAMPLES / "claude-code-converter" / "asr-from-claude-code",
    "asr-from-codex": EXAMPLES / "codex-converter" / "asr-from-codex",
    "asr-from-gemini": EXAMPLES / "gemini-converter" / "asr-from-gemini",
}


def _run(script: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    # -I: no site packages and no script folder on sys.path, as on a machine without the suite installed
    return subprocess.run([sys.executable, "-I", str(script), *args], input=stdin, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("name", sorted(CONVERTERS))
def test_a_missing_input_is_refused_naming_the_file(name: str, tmp_path: Path) -> None:
    missing = tmp_path / "no-such-session.jsonl"
    done = _run(CONVERTERS[name], str(missing))
    assert done.returncode == EXIT_REFUSED
    assert done.stdout == ""
    assert done.stderr.splitlines() == [f"{name}: refused: cannot read {missing}: No such file or directory"]


@pytest.mark.parametrize("name", sorted(CONVERTERS))
def test_an_unreadable_input_is_refused_with_one_line(name: str, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"\xff\xfe not text\n")
    done = _run(CONVERTERS[name], str(bad))
    assert done.returncode == EXIT_REFUSED
    assert len(done.stderr.splitlines()) == 1 and "UTF-8" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("name", sorted(CONVERTERS))
def test_two_arguments_are_a_usage_error(name: str) -> None:
    done = _run(CONVERTERS[name], "a", "b")
    assert done.returncode == EXIT_USAGE
    assert done.stderr.startswith(f"usage: {name} [")


@pytest.mark.parametrize("name", sorted(CONVERTERS))
def test_the_persistent_protocol_refuses_a_missing_input(name: str, tmp_path: Path) -> None:
    missing = tmp_path / "gone.jsonl"
    requests = [{"cmd": "start", "seq": 0, "version": 1}, {"cmd": "convert", "seq": 1, "path": str(missing)}, {"cmd": "stop", "seq": 2}]
    done = _run(CONVERTERS[name], stdin="".join(json.dumps(r) + "\n" for r in requests))
    assert done.returncode == EXIT_OK
    started, refused = (json.loads(line) for line in done.stdout.splitlines())
    assert started["implementation"]["name"] == name and started["roles"] == ["producer"]
    assert refused == {"seq": 1, "refused": f"cannot read {missing}: No such file or directory"}


def _shell(convert: object) -> Shell:
    return Shell("asr-from-test", "0.0.1", "INPUT.jsonl", convert)  # type: ignore[arg-type]


def test_a_converter_that_works_writes_its_stream(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    source = tmp_path / "in.jsonl"
    source.write_bytes(b"native")
    assert _shell(lambda data: data.upper() + b"\n").main([str(source)]) == EXIT_OK
    assert capsysbinary.readouterr().out == b"NATIVE\n"


def test_a_converter_bug_is_one_line_and_status_70(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "in.jsonl"
    source.write_bytes(b"native")

    def broken(data: bytes) -> bytes:
        raise KeyError("payload\nsecond line")

    assert _shell(broken).main([str(source)]) == EXIT_INTERNAL
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("asr-from-test: internal error: KeyError:")


def test_a_refusal_from_the_mapping_is_status_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "in.jsonl"
    source.write_bytes(b"native")

    def refuses(data: bytes) -> bytes:
        raise Refused("line 1 is not a JSON object")

    assert _shell(refuses).main([str(source)]) == EXIT_REFUSED
    assert capsys.readouterr().err == "asr-from-test: refused: line 1 is not a JSON object\n"


def test_serve_answers_a_malformed_request_and_keeps_going() -> None:
    out = io.StringIO()
    lines = ['{"cmd": "start", "seq": 0, "version": 2}\n', "not json\n", '{"cmd": "stop", "seq": 1}\n']
    assert _shell(lambda data: data).serve(io.StringIO("".join(lines)), out) == 0
    replies = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [r.get("errored") for r in replies] == [True, True]
    assert "only protocol version 1" in replies[0]["message"]
