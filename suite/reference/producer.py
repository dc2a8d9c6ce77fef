"""The reference's producer role: the example converters for Claude Code, Codex and Gemini CLI.

Each converter is one standard-library file meant to be copied with the two it imports
(``converter_cli.py``, the shared command-line shell, and ``vocabulary/strict_json.py``); all live in the package
(``reference/claude_code_converter.py``, ``reference/codex_converter.py``,
``reference/gemini_converter.py``) so that an installed suite keeps its producer role, and the
``examples/`` paths link to them. The reference picks one by the input's first line: a Codex
rollout line is an envelope (``session_meta``, ``response_item``, ...) or the old header without
``type``; a Gemini CLI session opens with its metadata (``sessionId`` and ``projectHash``) or, in
the older one-object layout, with a lone ``{``.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

from asr_conformance.reference import claude_code_converter, codex_converter, gemini_converter


class Refusal(Exception):
    """The input is not a transcript the converter can read; the message says why."""


def available() -> bool:
    """Always true now that the converters ship in the package; kept for the server's handshake."""
    return True


def converter_for(data: bytes) -> ModuleType:
    """The Gemini converter for a session, the Codex one for a rollout, else the Claude Code converter (which
    refuses what it cannot read)."""
    first = next((line for line in data[:1 << 20].splitlines() if line.strip()), b"")
    if gemini_converter.is_session_start(first):
        return gemini_converter
    try:
        value = json.loads(first)
    except ValueError:
        return claude_code_converter
    if isinstance(value, dict) and (
        (value.get("type") in codex_converter.ENVELOPE_TYPES and isinstance(value.get("payload"), dict))
        or ("type" not in value and isinstance(value.get("id"), str))
    ):
        return codex_converter
    return claude_code_converter


def reference_convert(path: str) -> bytes:
    """The stream for one native input; OSError when it cannot be read, Refusal when it is not a transcript."""
    data = Path(path).read_bytes()
    converter = converter_for(data)
    try:
        value: bytes = converter.convert(data)
        return value
    except converter.Refused as refused:
        raise Refusal(str(refused)) from None
