"""Which pack judges one input, decided once: the input is sniffed by every pack when it is collected
(``source_input``), and the stream's header is then held to that reading (``SourceInput.choose``).

A stream names its source format in the header (``producer.source.format``); the input itself
can be sniffed. The two must agree: a header naming one pack's format for an input that sniffs
as another's is a finding (ASR-156: the input is provably another format), and so is a header
naming a format for an input that is itself an ASR stream. An input no pack recognises is read by
the pack the header names; one it cannot read is *not checked* ("the ... witness cannot read this
input: ..."), the suite's limit, never the producer's failure. With no pack at all, fidelity is
*not checked*, with the reason, and never counts as passed.

The sniffing happens in ``SourceInput`` alone, so the source edits offered at collection, the
fidelity judgement and the header check all rest on one reading of the same bytes.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from asr_conformance.fidelity.facts import Finding
from asr_conformance.packs.registry import Installed, Packs


@dataclass
class PackSelection:
    """The pack chosen for one input and stream, or why there is none."""

    chosen: Installed | None
    #: Findings about the choice itself (the header names a format the input is not in).
    findings: list[Finding] = field(default_factory=list)
    #: Why fidelity is not checked, when it is not ("no witness for format X"): the reason as data.
    gap: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def not_checked(self) -> str | None:
        """The reason as the result says it: "not checked: no witness for format X"."""
        return None if self.gap is None else f"not checked: {self.gap}"


@dataclass(frozen=True)
class SourceInput:
    """One native input as the suite judges it, made once (at collection for a file): what every pack's
    sniff said of its bytes, and its digest, so that judging later uses that reading and never sniffs again."""

    #: The test ID of the input (the path under the --inputs root), or a label for bytes judged in memory.
    id: str
    #: The file, or ``None`` for bytes judged in memory (a generated transcript).
    path: Path | None
    #: SHA-256 of the bytes that were sniffed ("" when the file could not be read).
    digest: str
    #: The packs whose witness claims the input, in the order packs are tried; the first is the input's pack.
    claimed: tuple[Installed, ...] = ()
    #: Whether the input is itself an ASR stream (provably no native transcript).
    asr_stream: bool = False
    #: The packs the choice was made among (a header may name one that did not claim the input).
    pool: tuple[Installed, ...] = field(default=(), compare=False, repr=False)
    #: Installed third-party packs left out under ``--builtin-packs-only`` (their labels).
    ignored: tuple[str, ...] = ()
    #: Why the file could not be read, when it could not.
    unreadable: str | None = None

    @property
    def pack(self) -> Installed | None:
        """The pack chosen before any conversion (by sniffing alone): the one whose edits are tried."""
        return self.claimed[0] if self.claimed else None

    @property
    def reason(self) -> str | None:
        """Why no pack reads the input by sniffing (``None`` when one does)."""
        if self.unreadable is not None:
            return f"not checked: the input cannot be read: {self.unreadable}"
        return None if self.claimed else "not checked: " + self._no_pack(
            "(none named in the header, and the input matches no witness)")

    def matches(self, data: bytes) -> bool:
        """Whether ``data`` are the bytes this input was sniffed on."""
        return not self.unreadable and hashlib.sha256(data).hexdigest() == self.digest

    def choose(self, header: dict[str, Any] | None) -> PackSelection:
        """The pack for a stream of this input: by the header's ``producer.source.format``, held to what the
        input sniffed as. Calls no pack: the sniffing was done when the input was made."""
        name = named_format(header)
        by_name = [i for i in self.pool if name is not None and _accepts(i, name)]
        if by_name:
            return self._named(name or "", by_name[0])
        if self.claimed:
            chosen = self.claimed[0]
            note = (f"the header names no source format; the input reads as {chosen.pack.format}" if name is None else
                    f"no installed witness answers to the header's format {name!r}; the input reads as "
                    f"{chosen.pack.format}")
            return PackSelection(chosen, notes=[note])
        label = repr(name) if name is not None else "(none named in the header, and the input matches no witness)"
        return PackSelection(None, gap=self._no_pack(label))

    def _named(self, name: str, chosen: Installed) -> PackSelection:
        if chosen in self.claimed:
            return PackSelection(chosen)
        format = chosen.pack.format
        if self.claimed:
            message = (f"the header's producer.source.format {name!r} names {format}, but the input reads as "
                       f"{self.claimed[0].pack.format}")
            return PackSelection(None, [Finding("ASR-156", "format", message)], message)
        if self.asr_stream:
            message = (f"the header's producer.source.format {name!r} names {format}, but the input is an ASR "
                       "stream, not in that format")
            return PackSelection(None, [Finding("ASR-156", "format", message)], message)
        # No pack recognises the input: it is not provably another format, so the named pack reads it, and
        # what it cannot read is fidelity not checked (the suite's limit), never a finding against the producer.
        return PackSelection(chosen, notes=[f"the input does not look like {format} at first sight; read as the "
                                            f"header's producer.source.format {name!r} names it"])

    def _no_pack(self, label: str) -> str:
        reason = f"no witness for format {label}"
        if self.ignored:
            # The certifier's choice, not the suite's limit: say which installed packs could have judged.
            reason += f" (--builtin-packs-only ignored the installed pack(s) {', '.join(self.ignored)})"
        return reason


def sniffed(data: bytes, packs: Packs, id: str = "the input", path: Path | None = None) -> SourceInput:
    """An input of these bytes: each pack's witness sniffs them once (a sniff that raises claims nothing)."""
    claimed = tuple(i for i in packs.installed if _sniffs(i, data))
    return SourceInput(id, path, hashlib.sha256(data).hexdigest(), claimed, _is_asr_stream(data),
                       tuple(packs.installed), tuple(packs.ignored))


def source_input(path: Path, packs: Packs, id: str | None = None) -> SourceInput:
    """The input of one file, read once; a file that cannot be read is an input no pack reads, with the reason."""
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        return SourceInput(id or str(path), Path(path), "", pool=tuple(packs.installed), ignored=tuple(packs.ignored),
                           unreadable=error.strerror or str(error))
    return sniffed(data, packs, id or str(path), Path(path))


def select_pack(header: dict[str, Any] | None, data: bytes, packs: Packs) -> PackSelection:
    """The pack for a stream of ``data`` in one step (sniffing and the header check); judging an input made at
    collection uses its ``SourceInput.choose`` instead, so that it is not sniffed again."""
    return sniffed(data, packs).choose(header)


def named_format(header: dict[str, Any] | None) -> str | None:
    """The header's ``producer.source.format``, when it is a string."""
    producer = header.get("producer") if isinstance(header, dict) else None
    source = producer.get("source") if isinstance(producer, dict) else None
    name = source.get("format") if isinstance(source, dict) else None
    return name if isinstance(name, str) else None


def _accepts(chosen: Installed, name: str) -> bool:
    try:
        return chosen.pack.accepts_format_name(name)
    except Exception:  # a pack that cannot even compare names does not claim the format
        return False


def _is_asr_stream(data: bytes) -> bool:
    """Whether the input's first line is an ASR session header: provably not a native transcript."""
    first = data.lstrip()[:1 << 16].split(b"\n", 1)[0]
    try:
        value = json.loads(first)
    except (ValueError, RecursionError):
        return False
    return isinstance(value, dict) and value.get("type") == "session" and "formatVersion" in value


def _sniffs(chosen: Installed, data: bytes) -> bool:
    try:
        return bool(chosen.pack.witness.sniff(data))
    except Exception:  # a witness that cannot even sniff does not claim the input
        return False
