"""Hypothesis strategies that build native agent transcripts (Claude Code, Codex, Gemini CLI), for fuzzing producers.

Each format module offers ``transcripts(feature)``: a strategy of ``NativeTranscript`` that is a
valid transcript of that format by construction, with the named adversarial feature present.
The conformance suite converts each one with the producer under test and holds the stream to
the format's witness (``asr_conformance.fidelity``), which reads the same bytes independently.
"""

from __future__ import annotations

from importlib import import_module
from types import ModuleType

#: Each native format a generator exists for (the witness's format name) and its module under this package.
#: A module offers FORMAT, VARIANTS, FEATURES, ``transcripts(feature, variant)`` and ``variant_of(data)``;
#: it may also offer ``DEFAULT_VARIANTS`` (drawn when no variant is asked for; the other variants are
#: fuzzed only for a vendor whose inputs follow them) and ``available(feature, variant)``.
MODULES = {"claude-code-jsonl": "claude_code", "codex-rollout-jsonl": "codex", "gemini-cli-session": "gemini"}


def formats() -> tuple[str, ...]:
    """The formats the suite can generate transcripts of, in a stable order."""
    return tuple(sorted(MODULES))


def generator(format: str) -> ModuleType | None:
    """The generator module for a witness format, or None when the suite has none."""
    name = MODULES.get(format)
    return import_module(f"{__name__}.{name}") if name is not None else None


def file_name(format: str, digest: str) -> str:
    """A file name the agent itself could have written for a transcript, built from a digest of its bytes.

    Claude Code names a session ``<session-uuid>.jsonl``; Codex names a rollout
    ``rollout-<local time>-<uuid>.jsonl``; Gemini CLI names a session ``session-<UTC minute>-<8 hex>.jsonl``.
    A converter may look at the name; it must never learn from it what the harness expects, so the
    name says nothing but the digest."""
    hexed = (digest * 2)[:32]
    uuid = f"{hexed[:8]}-{hexed[8:12]}-4{hexed[13:16]}-8{hexed[17:20]}-{hexed[20:32]}"
    if format == "codex-rollout-jsonl":
        return f"rollout-2026-03-01T09-00-00-{uuid}.jsonl"
    if format == "gemini-cli-session":
        return f"session-2026-03-01T09-00-{hexed[:8]}.jsonl"
    return f"{uuid}.jsonl"
