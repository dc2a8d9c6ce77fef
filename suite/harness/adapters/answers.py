"""What an implementation answered for one case, whatever adapter asked it."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import TypeAlias

from asr_conformance.vocabulary.redaction import redact, redact_value

#: A JSON value as an implementation wrote it (parsed, never trusted): what an answer carries to a judge,
#: typed so that a judge narrows it before use.
JSONValue: TypeAlias = "str | int | float | bool | None | list[JSONValue] | dict[str, JSONValue]"
#: One JSON object an implementation wrote (a validator's diagnostic).
JSONObject: TypeAlias = "dict[str, JSONValue]"


class Outcome(str, Enum):
    ACCEPT = "accept"
    REJECT = "reject"
    #: Not a verdict: a signal, an unexpected exit status, a flood, a garbage reply.
    CRASH = "crash"
    TIMEOUT = "timeout"
    #: The implementation said it could not judge the case (protocol "errored").
    ERRORED = "errored"
    #: The implementation declined the case (protocol "skipped").
    SKIPPED = "skipped"
    #: A reader gave a view (read role).
    VIEWED = "viewed"
    #: A producer wrote a stream, or refused its input with a message (producer role).
    CONVERTED = "converted"
    REFUSED = "refused"

    @property
    def is_verdict(self) -> bool:
        return self in (Outcome.ACCEPT, Outcome.REJECT)


class Status(str, Enum):
    """What a judge decided about one case; recorded by its value (the report's ``status`` words)."""

    PASSED = "passed"
    FAILED = "failed"
    #: Implementation-defined: reported beside the verdict, never scored.
    REPORTED = "reported"
    #: A reader case about a view member the reader's declared view version does not have.
    NOT_APPLICABLE = "not-applicable"


@dataclass(slots=True)
class _Exchange:
    """What every answer carries so that a failure can be shown in full."""

    outcome: Outcome
    message: str = ""
    sent: str = ""
    received: str = ""
    stderr_tail: str = ""
    seconds: float = 0.0

    def __post_init__(self) -> None:
        self.sent, self.received = redact(self.sent), redact(self.received)
        self.stderr_tail, self.message = redact(self.stderr_tail), redact(self.message)

    def explain(self) -> str:
        """A block of text for a failure report."""
        return explain(self.outcome, self.message, self.sent, self.received, self.stderr_tail)


@dataclass(slots=True)
class Verdict(_Exchange):
    """One answer, with everything a person needs to see why a case failed."""

    #: Rule IDs the implementation named (empty when it names none).
    rules: frozenset[str] = frozenset()
    #: The diagnostics as the implementation wrote them (parsed JSON objects).
    diagnostics: list[JSONObject] = field(default_factory=list)

    def __post_init__(self) -> None:
        # Nothing of the caller's passed-through variables is kept (vocabulary/redaction.py).
        _Exchange.__post_init__(self)
        self.rules = frozenset(redact_value(self.rules))
        self.diagnostics = redact_value(self.diagnostics)


#: Diagnostic levels that never name a rule (docs/contract.md §2.2): a validator may warn about a SHOULD
#: on a stream it judges by its MUSTs.
NOT_NAMING_LEVELS = frozenset({"warning", "info"})


def named_rules(diagnostics: list[JSONObject]) -> frozenset[str]:
    """The rules a validator's diagnostics name: every ``rule`` but those of a warning or an info.

    ``level`` is compared without regard to case; a missing level, ``error`` or any other value names its rule.
    Only a diagnostic whose ``rule`` is a string is one (``oneshot.parse_diagnostics`` keeps no other)."""
    return frozenset(rule for d in diagnostics
                     if isinstance(rule := d["rule"], str)
                     and not (isinstance(level := d.get("level"), str) and level.lower() in NOT_NAMING_LEVELS))


@dataclass(slots=True)
class ReadAnswer(_Exchange):
    """A reader's answer: a view (outcome VIEWED) or why there is none."""

    view: JSONValue = None


@dataclass(slots=True)
class Conversion(_Exchange):
    """A producer's answer: a stream (CONVERTED), a refusal with its message (REFUSED), or a failure."""

    stream: bytes | None = None
    refusal: str = ""

    def __post_init__(self) -> None:
        _Exchange.__post_init__(self)
        self.refusal = redact(self.refusal)


def explain(outcome: Outcome, message: str, sent: str, received: str, stderr_tail: str) -> str:
    """What was asked, what came back and why it is not an answer: the body of every failure message."""
    parts = [f"outcome: {outcome.value}" + (f" ({message})" if message else "")]
    if sent:
        parts.append(f"sent: {sent}")
    if received:
        parts.append("received:\n" + _indent(received))
    if stderr_tail:
        parts.append("stderr (tail):\n" + _indent(stderr_tail))
    return "\n".join(parts)


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.rstrip("\n").splitlines())
