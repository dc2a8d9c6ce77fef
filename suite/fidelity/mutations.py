"""Source mutations: edit a native input in a known way, convert again, expect a precise change.

A converter that ignores its input, or hard-codes what it saw in the samples, passes every
check on an unchanged input. A mutation changes one fact of the source (a result deleted, a
flag flipped, a name changed) and its expectation says what must change in the stream as a
result, naming the rule.

``SourceMutation.apply`` returns ``None`` when the input has nothing to mutate (no call, no result),
else the edited bytes, or ``Edited(data, item)`` to name the native item it changed (a call ID, a
line, the value it wrote). ``SourceMutation.expect`` looks at the facts and streams before and after
and returns Findings; an empty list means the stream followed the source. An edit whose check also
needs what was edited gives ``expect_edit`` instead: it receives one ``EditContext`` (the input
before and after, the item, the facts and streams before and after).

The mutations here are format-neutral in their expectations; editing bytes is format-specific,
so each witness module offers its own list (``claude_code_mutations.MUTATIONS``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from asr_conformance.fidelity.facts import Finding, SourceFacts

Expectation = Callable[[SourceFacts, SourceFacts, list[dict[str, Any]], list[dict[str, Any]]], list[Finding]]


@dataclass(frozen=True)
class Edited:
    """An edit's result when it names what it changed: the edited input and the native item."""

    data: bytes
    #: What the edit changed, as the edit names it (a call ID, a line number, a value); read by ``expect_edit``.
    item: Any = None


@dataclass(frozen=True)
class EditContext:
    """Everything an ``expect_edit`` check may use: what was edited, and the facts and streams around it."""

    original: bytes
    edited: bytes
    item: Any
    before_facts: SourceFacts
    after_facts: SourceFacts
    before_stream: list[dict[str, Any]]
    after_stream: list[dict[str, Any]]


EditExpectation = Callable[[EditContext], list[Finding]]


@dataclass(frozen=True)
class SourceMutation:
    """One edit of a native input and what it must do to the stream (``expect`` or ``expect_edit``, one of them)."""

    name: str
    #: The rule the expectation checks.
    rule: str
    #: One sentence for reports: what was changed and what the stream must show.
    description: str
    #: The edited input (bytes, or ``Edited`` naming the item), or ``None`` when nothing applies.
    apply: Callable[[bytes], bytes | Edited | None]
    expect: Expectation | None = None
    #: The check, when it needs what was edited (the bytes and the item) besides the facts and streams.
    expect_edit: EditExpectation | None = None

    def __post_init__(self) -> None:
        if (self.expect is None) == (self.expect_edit is None):
            raise ValueError(f"source edit {self.name}: give exactly one of expect and expect_edit")

    def findings(self, context: EditContext) -> list[Finding]:
        """The expectation's findings, whichever form the edit gives."""
        if self.expect_edit is not None:
            return self.expect_edit(context)
        assert self.expect is not None  # __post_init__: one of the two
        return self.expect(context.before_facts, context.after_facts, context.before_stream, context.after_stream)


def edited_bytes(result: object) -> tuple[bytes, Any] | None:
    """An edit's answer as (bytes, item), ``None`` for nothing to edit; ``TypeError`` for anything else."""
    if result is None:
        return None
    if isinstance(result, bytes):
        return result, None
    if isinstance(result, Edited) and isinstance(result.data, bytes):
        return result.data, result.item
    raise TypeError(f"returned {type(result).__name__}, not bytes, Edited or None")


def records_of(stream: list[dict[str, Any]], kind: str, call_id: str) -> list[dict[str, Any]]:
    """Records of one type whose callId (or nativeCallId) is the given native ID."""
    return [r for r in stream if r.get("type") == kind and call_id in (r.get("callId"), r.get("nativeCallId"))]


#: The former name, kept so that format packs written against it still load (deprecated).
Mutation = SourceMutation
