"""Which witness reads an input: built-ins plus the ``asr_conformance.witnesses`` entry points.

A stream names its source format in the header (``producer.source.format``); the input itself
can be sniffed. The two must agree: a header naming one witness's format for an input that
sniffs as another's is a finding (ASR-156: the input is provably another format). An input no
witness recognises is read by the witness the header names; one it cannot read is *not checked*
("the ... witness cannot read this input: ..."), the suite's limit, never the producer's failure.
With no witness at all, fidelity is *not checked*, with the reason, and never counts as passed.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any

from asr_conformance.fidelity.facts import Finding, Witness

GROUP = "asr_conformance.witnesses"


def builtin_witnesses() -> list[Witness]:
    """The witnesses the suite ships: Claude Code transcripts, Codex rollouts and Gemini CLI sessions."""
    # The mutation modules attach each format's source edits to its witness.
    from asr_conformance.fidelity import (  # noqa: F401
        claude_code,
        claude_code_mutations,
        codex,
        codex_mutations,
        gemini,
        gemini_mutations,
    )

    return [claude_code.WITNESS, codex.WITNESS, gemini.WITNESS]


def _instance(loaded: Any) -> Witness:
    """An entry point may name a witness instance or a class to instantiate without arguments."""
    witness = loaded() if inspect.isclass(loaded) else loaded
    if not isinstance(witness, Witness):
        raise TypeError(f"{loaded!r} does not meet the Witness interface (format, accepts_format_name, sniff, read)")
    return witness


def installed_witnesses(group: str = GROUP) -> tuple[list[Witness], list[str]]:
    """Built-ins first, then each entry point's witness; entry points that fail to load are reported, not fatal."""
    witnesses = builtin_witnesses()
    problems: list[str] = []
    for point in entry_points(group=group):
        try:
            witness = _instance(point.load())
        except Exception as error:  # a broken plugin must not hide the others
            problems.append(f"witness entry point {point.name} ({point.value}) failed to load: {error}")
            continue
        if all(w.format != witness.format for w in witnesses):
            witnesses.append(witness)
    return witnesses, problems


@dataclass
class Selection:
    """The witness chosen for one input, or why there is none."""

    witness: Witness | None
    #: Findings about the choice itself (the header names a format the input is not in).
    findings: list[Finding] = field(default_factory=list)
    #: Why fidelity is not checked, when it is not: "no witness for format X".
    not_checked: str | None = None
    notes: list[str] = field(default_factory=list)


def named_format(header: dict[str, Any] | None) -> str | None:
    producer = header.get("producer") if isinstance(header, dict) else None
    source = producer.get("source") if isinstance(producer, dict) else None
    name = source.get("format") if isinstance(source, dict) else None
    return name if isinstance(name, str) else None


def select_witness(header: dict[str, Any] | None, data: bytes, witnesses: Iterable[Witness] | None = None) -> Selection:
    """Choose by the header's ``producer.source.format`` and by sniffing the input."""
    pool = list(witnesses) if witnesses is not None else installed_witnesses()[0]
    name = named_format(header)
    by_name = [w for w in pool if name is not None and w.accepts_format_name(name)]
    by_sniff = [w for w in pool if _sniffs(w, data)]
    if by_name:
        return _named(name or "", by_name[0], by_sniff, data)
    if by_sniff:
        witness = by_sniff[0]
        note = (f"the header names no source format; the input reads as {witness.format}" if name is None else
                f"no installed witness answers to the header's format {name!r}; the input reads as {witness.format}")
        return Selection(witness, notes=[note])
    label = repr(name) if name is not None else "(none named in the header, and the input matches no witness)"
    return Selection(None, not_checked=f"not checked: no witness for format {label}")


def _named(name: str, witness: Witness, by_sniff: list[Witness], data: bytes) -> Selection:
    if witness in by_sniff:
        return Selection(witness)
    if by_sniff:
        other = by_sniff[0].format
        message = (f"the header's producer.source.format {name!r} names {witness.format}, but the input reads as "
                   f"{other}")
        return Selection(None, [Finding("ASR-156", "format", message)], not_checked=f"not checked: {message}")
    if _is_asr_stream(data):
        message = (f"the header's producer.source.format {name!r} names {witness.format}, but the input is an ASR "
                   "stream, not in that format")
        return Selection(None, [Finding("ASR-156", "format", message)], not_checked=f"not checked: {message}")
    # No witness recognises the input: it is not provably another format, so the named witness reads it,
    # and what it cannot read is fidelity not checked (the suite's limit), never a finding against the producer.
    return Selection(witness, notes=[f"the input does not look like {witness.format} at first sight; read as the "
                                     f"header's producer.source.format {name!r} names it"])


def _is_asr_stream(data: bytes) -> bool:
    """Whether the input's first line is an ASR session header: provably not a native transcript."""
    import json

    first = data.lstrip()[:1 << 16].split(b"\n", 1)[0]
    try:
        value = json.loads(first)
    except (ValueError, RecursionError):
        return False
    return isinstance(value, dict) and value.get("type") == "session" and "formatVersion" in value


def _sniffs(witness: Witness, data: bytes) -> bool:
    try:
        return bool(witness.sniff(data))
    except Exception:  # a witness that cannot even sniff does not claim the input
        return False
