"""The reference's producer role: the example Claude Code converter.

The converter is one standard-library file meant to be copied; it lives in the
package (``reference/claude_code_converter.py``) so that an installed suite keeps
its producer role, and ``examples/claude-code-converter/asr-from-claude-code`` is
a link to it.
"""

from __future__ import annotations

from pathlib import Path

from asr_conformance.reference import claude_code_converter as converter


class Refusal(Exception):
    """The input is not a transcript the converter can read; the message says why."""


def available() -> bool:
    """Always true now that the converter ships in the package; kept for the server's handshake."""
    return True


def reference_convert(path: str) -> bytes:
    """The stream for one native input; OSError when it cannot be read, Refusal when it is not a transcript."""
    data = Path(path).read_bytes()
    try:
        return converter.convert(data)
    except converter.Refused as refused:
        raise Refusal(str(refused)) from None
