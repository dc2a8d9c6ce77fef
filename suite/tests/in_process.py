"""Producer scripts run in the test process, as their command line would run them.

The seeded-bug producers of ``examples/misbehaving`` are the example's conversion and a change to its
records: ``cc-*`` and ``gemini-*`` import the conversion (through their wrappers), ``codex-*`` start the
example Codex converter on their argument and change its output.  A process of their own would add only an
interpreter's start-up to each of some hundreds of conversions, and a ``codex-*`` one two.  The example
converters still run as processes: ``codex_example_run`` runs ``asr-from-codex`` once per distinct input,
and ``run_seeded_codex`` answers a ``codex-*`` script's start of it from there."""

from __future__ import annotations

import contextlib
import functools
import io
import runpy
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any
from unittest import mock

ROOT = Path(__file__).resolve().parents[2]
CODEX_CONVERTER = ROOT / "examples" / "codex-converter" / "asr-from-codex"


def run_in_process(script: Path, source: Path) -> tuple[int, bytes, bytes]:
    """``script source`` run as ``__main__`` in this process: its exit status, standard output and error.

    Its folder is on the path while it runs, as it is for the script."""
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


@functools.cache
def codex_example_run(data: bytes) -> subprocess.CompletedProcess[bytes]:
    """``asr-from-codex FILE`` as a process, once per distinct input in a test process.

    Its one-shot answer is a function of the file's bytes alone: it reads the file and converts the
    bytes, with no clock, folder or environment (``fidelity/test_codex_converter.py`` runs it under
    another clock, folder and environment and compares), so a second run on the same bytes would
    start an interpreter to say the same again."""
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "rollout.jsonl"
        source.write_bytes(data)
        return subprocess.run([sys.executable, str(CODEX_CONVERTER), str(source)], capture_output=True, timeout=60)


def run_seeded_codex(script: Path, source: Path) -> tuple[int, bytes, bytes]:
    """A ``codex-*`` seeded-bug script on ``source`` in this process (``run_in_process``), its start of the
    example converter on ``source`` answered by ``codex_example_run``: the script's own code runs whole
    on the example's real exit status, output and error.  Any other start is made as asked."""
    started = subprocess.run
    asked = [sys.executable, str(CODEX_CONVERTER), str(source)]

    def answered(command: Any, *args: Any, **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
        if not args and kwargs == {"capture_output": True} and list(command) == asked:
            done = codex_example_run(source.read_bytes())
            return subprocess.CompletedProcess(command, done.returncode, done.stdout, done.stderr)
        return started(command, *args, **kwargs)

    with mock.patch.object(subprocess, "run", answered):
        return run_in_process(script, source)
