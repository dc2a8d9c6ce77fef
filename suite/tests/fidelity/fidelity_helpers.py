"""Helpers for the fidelity tests: the samples, and converting them by running a producer script."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from pathlib import Path

from in_process import run_in_process

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


def records_of(stream: bytes) -> list[dict]:
    return [json.loads(line) for line in stream.decode("utf-8").split("\n") if line.strip()]


def convert(converter: Path, data: bytes) -> list[dict]:
    return records_of(run_converter(converter, data))
