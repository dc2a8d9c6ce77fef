"""Helpers for the fidelity tests: the samples, and converting them by running a producer script."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SAMPLES_DIR = ROOT / "examples" / "claude-code-converter" / "samples"
SAMPLES = sorted(SAMPLES_DIR.rglob("*.jsonl"))
EXAMPLE = ROOT / "examples" / "claude-code-converter" / "asr-from-claude-code"
MISBEHAVING = ROOT / "examples" / "misbehaving"


def sample_id(path: Path) -> str:
    return str(path.relative_to(SAMPLES_DIR))


@functools.cache
def run_converter(converter: Path, data: bytes) -> bytes:
    """The stream a one-shot producer writes for these input bytes (it must exit 0).

    The seeded-bug producers (``cc-*`` in examples/misbehaving) run in this process, as their command
    line would run them; the others in a process of their own."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "session.jsonl"
        source.write_bytes(data)
        if converter.parent == MISBEHAVING and converter.name.startswith("cc-"):
            returncode, stdout, stderr = run_in_process(converter, source)
        else:
            done = subprocess.run([sys.executable, str(converter), str(source)], capture_output=True, timeout=60)
            returncode, stdout, stderr = done.returncode, done.stdout, done.stderr
    assert returncode == 0, f"{converter.name} exited {returncode}: {stderr.decode(errors='replace')}"
    return stdout


def run_in_process(script: Path, source: Path) -> tuple[int, bytes, bytes]:
    """``script source`` run as ``__main__`` in this process: its exit status, standard output and error.

    For the seeded-bug producers that are the example's conversion (imported from the package) and a change
    to its records (``cc-*`` and ``gemini-*``, through their wrappers), or that start the example and change
    its output (``codex-*``: one interpreter a conversion instead of two): a process of their own would add
    only an interpreter's start-up to each of some hundreds of conversions. Its folder is on the path while
    it runs, as it is for the script."""
    import contextlib
    import io
    import runpy

    written, said = io.BytesIO(), io.BytesIO()
    out, err = io.TextIOWrapper(written, encoding="utf-8"), io.TextIOWrapper(said, encoding="utf-8")
    saved_argv, saved_path = sys.argv, sys.path[:]
    sys.argv, sys.path[:0] = [str(script), str(source)], [str(script.parent)]
    code: int = 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            runpy.run_path(str(script), run_name="__main__")
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
    out.flush()
    err.flush()
    return code, written.getvalue(), said.getvalue()


def records_of(stream: bytes) -> list[dict]:
    return [json.loads(line) for line in stream.decode("utf-8").split("\n") if line.strip()]


def convert(converter: Path, data: bytes) -> list[dict]:
    return records_of(run_converter(converter, data))
