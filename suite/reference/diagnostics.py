"""What the reference validator says about a stream: diagnostics and a verdict."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class Level(str, Enum):
    """ERROR breaks a MUST and rejects the stream; WARNING (a SHOULD, or a
    suite-defined caution) is reported and never rejects."""

    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    rule: str
    message: str
    line: int
    seq: int | None = None
    level: Level = Level.ERROR
    #: JSON pointer inside the record, when the problem sits in one member.
    pointer: str | None = None

    def as_json(self) -> dict[str, object]:
        """The one-shot diagnostic shape of docs/contract.md §2.2, plus line, level and pointer."""
        data: dict[str, object] = {"rule": self.rule}
        if self.seq is not None:
            data["seq"] = self.seq
        data["line"] = self.line
        data["level"] = self.level.value
        if self.pointer is not None:
            data["pointer"] = self.pointer
        data["message"] = self.message
        return data

    def as_text(self, path: str) -> str:
        where = f"{path}:{self.line}"
        at = f" (seq {self.seq})" if self.seq is not None else ""
        member = f" at {self.pointer}" if self.pointer else ""
        return f"{where}: {self.rule}: {self.level.value}{at}{member}: {self.message}"


@dataclass(slots=True)
class StreamDiagnostics:
    """All diagnostics for one stream, in line order."""

    diagnostics: list[Diagnostic] = field(default_factory=list)
    records: int = 0

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.level is Level.ERROR]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.level is Level.WARNING]

    @property
    def valid(self) -> bool:
        return not self.errors

    def rules(self, level: Level = Level.ERROR) -> set[str]:
        return {d.rule for d in self.diagnostics if d.level is level}
