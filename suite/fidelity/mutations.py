"""Source mutations: edit a native input in a known way, convert again, expect a precise change.

A converter that ignores its input, or hard-codes what it saw in the samples, passes every
check on an unchanged input. A mutation changes one fact of the source (a result deleted, a
flag flipped, a name changed) and its expectation says what must change in the stream as a
result, naming the rule.

``SourceMutation.apply`` returns ``None`` when the input has nothing to mutate (no call, no result).
``SourceMutation.expect`` looks at the facts and streams before and after and returns Findings; an
empty list means the stream followed the source.

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
class SourceMutation:
    """One edit of a native input and what it must do to the stream."""

    name: str
    #: The rule the expectation checks.
    rule: str
    #: One sentence for reports: what was changed and what the stream must show.
    description: str
    apply: Callable[[bytes], bytes | None]
    expect: Expectation


def records_of(stream: list[dict[str, Any]], kind: str, call_id: str) -> list[dict[str, Any]]:
    """Records of one type whose callId (or nativeCallId) is the given native ID."""
    return [r for r in stream if r.get("type") == kind and call_id in (r.get("callId"), r.get("nativeCallId"))]


#: The former name, kept so that format packs written against it still load (deprecated).
Mutation = SourceMutation
