"""asr-conformance: conformance test suite and fuzz harness for ASR streams."""

from __future__ import annotations

from pathlib import Path

__version__ = "0.1.0"

#: The checkout's case corpus (cases/ beside suite/).
CORPUS_DIR = Path(__file__).resolve().parent.parent / "cases"
