"""State the checks share: the record being checked, and the index of the
entities seen so far (the only memory that grows with a stream)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from asr_conformance.reference.diagnostics import Diagnostic, Level


@dataclass(slots=True)
class RecordContext:
    """One record under check, and where its diagnostics go."""

    record: dict[str, Any]
    line: int
    seq: int | None
    sink: list[Diagnostic]

    @property
    def type(self) -> object:
        return self.record.get("type")

    def error(self, rule: str, message: str, pointer: str | None = None) -> None:
        self.sink.append(Diagnostic(rule, message, self.line, self.seq, Level.ERROR, pointer))

    def warn(self, rule: str, message: str, pointer: str | None = None) -> None:
        self.sink.append(Diagnostic(rule, message, self.line, self.seq, Level.WARNING, pointer))


@dataclass(slots=True)
class Pending:
    """A reference that a later record may still satisfy."""

    line: int
    seq: int | None
    key: str
    pointer: str


@dataclass(slots=True)
class CallEntry:
    """What is known of one callId across tool_call records."""

    entities: int = 0
    sources: set[str] = field(default_factory=set)


@dataclass(slots=True)
class StreamIndex:
    """Effective declarations at the current seq, and entity indexes (ASR-167)."""

    # effective declarations
    content_level: str | None = None
    roots: set[str] = field(default_factory=set)
    participants: set[str] = field(default_factory=set)
    conversations: set[str] = field(default_factory=set)
    #: Line 1 held no readable header: what it declared is unknown, so references to declared roots and
    #: conversations cannot be judged (reporting them would blame the stream twice for one broken line).
    header_lost: bool = False
    # envelope
    last_seq: int | None = None
    record_types: dict[str, str] = field(default_factory=dict)
    started_turns: set[str] = field(default_factory=set)
    # tool entities
    calls: dict[str, CallEntry] = field(default_factory=dict)
    permission_subjects: dict[str, int] = field(default_factory=dict)
    compact_permissions: dict[str, int] = field(default_factory=dict)
    terminals: dict[str, str] = field(default_factory=dict)
    # references resolved at the end of the stream
    terminal_references: list[Pending] = field(default_factory=list)
    derived_results: list[Pending] = field(default_factory=list)
    linked_results: list[Pending] = field(default_factory=list)
    answer_references: list[Pending] = field(default_factory=list)
    head_references: list[Pending] = field(default_factory=list)


class Reporter(Protocol):
    """Where end-of-stream checks send what they find."""

    def __call__(self, pending: Pending, rule: str, message: str, warning: bool = False) -> None: ...
