"""Neutralizing text an implementation controls before it reaches a report, the terminal or a CI log.

Names and versions from manifests and handshakes, rule IDs it named, diagnostics and stderr are
all the implementation's words.  Each sink has its own dangers, so each has its own function:

* JSON (and xdist's wire): lone surrogates cannot be encoded as UTF-8; ``no_surrogates``.
* The terminal and CI logs: ANSI escapes and control characters repaint the screen, and a line
  starting with ``::`` is a GitHub Actions workflow command; ``terminal_line``, ``terminal_block``.
* Markdown (GitHub job summaries): newlines, tables, HTML and ``<!--``; ``markdown_text``,
  ``code_span``.
"""

from __future__ import annotations

import re
from typing import Any

#: ANSI escape sequences: CSI (ESC [ ... final), OSC (ESC ] ... BEL or ST), and two-byte ESC sequences.
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]|\x9b[0-?]*[ -/]*[@-~]")
#: C0 and C1 controls, DEL, and the Unicode bidirectional overrides that reorder what a reader sees.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")
#: A GitHub Actions workflow command: a line whose first non-blank characters are "::".
_WORKFLOW_COMMAND = re.compile(r"^(\s*)::", re.MULTILINE)
#: Inline Markdown punctuation (the text is always inline: after "| ", "- " or "# ", so no block can start).
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|~])")


def no_surrogates(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD, so it can be encoded as UTF-8."""
    return _SURROGATE.sub("\ufffd", text)


def clean_value(value: Any, depth: int = 0, limit: int = 64) -> Any:
    """A JSON-like value with every string (keys too) free of lone surrogates; deeper than ``limit`` is cut."""
    if isinstance(value, str):
        return no_surrogates(value)
    if depth >= limit:
        return "(nested too deeply)"
    if isinstance(value, dict):
        return {no_surrogates(str(k)): clean_value(v, depth + 1, limit) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean_value(v, depth + 1, limit) for v in value]
    return value


def _visible(match: re.Match[str]) -> str:
    char = match.group(0)
    return f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"


def visible_controls(text: str) -> str:
    """``text`` with every control character (newlines and tabs aside) shown as ``\\xNN``, for a page."""
    return _CONTROL.sub(_visible, no_surrogates(text).replace("\r\n", "\n"))


def terminal_block(text: str) -> str:
    """Several lines for a terminal or log: escapes removed, controls shown as ``\\xNN``, workflow commands defused.

    Newlines and tabs stay; carriage returns do not (they overwrite what came before on a terminal)."""
    text = _ANSI.sub("", no_surrogates(text))
    text = _CONTROL.sub(_visible, text.replace("\r\n", "\n"))
    return _WORKFLOW_COMMAND.sub(r"\1\\::", text)


def terminal_line(text: str) -> str:
    """One line for a terminal or log: like ``terminal_block``, newlines shown as ``\\n``."""
    return terminal_block(text.replace("\r\n", "\n").replace("\n", "\\n").replace("\t", " "))


def needs_terminal_cleaning(text: str) -> bool:
    """Whether ``terminal_block`` would change ``text``."""
    return terminal_block(text) != text.replace("\r\n", "\n")


def markdown_text(text: str, limit: int = 300) -> str:
    """Inline Markdown text (a table cell, a list item, a heading) that renders as the characters given.

    One line, no HTML (so no ``<!--`` hiding what follows), Markdown punctuation escaped, clipped."""
    text = terminal_line(text)
    text = " ".join(text.replace("\\n", " ").split())
    if len(text) > limit:
        text = text[:limit] + "…"
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def code_span(text: str, limit: int = 500) -> str:
    """A Markdown code span holding ``text`` on one line, its fence longer than any backtick run inside."""
    text = " ".join(terminal_line(text).replace("\\n", " ").split())
    if len(text) > limit:
        text = text[:limit] + "…"
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text else ""
    return f"{fence}{pad}{text}{pad}{fence}"
