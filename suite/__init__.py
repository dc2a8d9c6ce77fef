"""asr-conformance: conformance test suite and fuzz harness for ASR streams."""

from __future__ import annotations

from pathlib import Path

__version__ = "0.1.0"

#: The case corpus: cases/ beside suite/ in a checkout, or the copy a plain install carries.
_CHECKOUT_CASES = Path(__file__).resolve().parent.parent / "cases"
CORPUS_DIR = _CHECKOUT_CASES if (_CHECKOUT_CASES / "rules.toml").is_file() else Path(__file__).resolve().parent / "cases"
