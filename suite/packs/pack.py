"""The ``FormatPack`` type: a native format's witness, source edits, generator and policies, in one object.

A pack is data: the suite never looks for a format's parts anywhere but in its pack, so a
built-in format and a vendor's are judged through exactly the same members.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from asr_conformance.fidelity.facts import Witness
from asr_conformance.fidelity.mutations import SourceMutation

#: ``any``: kind may come from a published mapping of exact names (ASR-253 is checked as consistency: one
#: name, one kind). ``source-only``: the agent has no published kind mapping, so a stream's ``kind`` must be
#: absent or one the source itself records for that call (``NativeCall.kind``).
KIND_POLICIES = ("any", "source-only")


@runtime_checkable
class Transcript(Protocol):
    """One generated native input (``generators.native.common.NativeTranscript`` meets it)."""

    format: str
    variant: str
    features: frozenset[str]

    def data(self) -> bytes:
        """The file's bytes, exactly as the agent would write them."""
        ...

    def summary(self) -> str:
        """One line for failure messages: format, variant, size and features."""
        ...


@runtime_checkable
class Generator(Protocol):
    """Hypothesis strategies of native transcripts, one per named feature (and variant).

    Optional members, read with ``getattr``: ``DEFAULT_VARIANTS`` (drawn when no variant is asked for),
    ``available(feature, variant)`` and ``variant_of(data)`` (the variant an input follows)."""

    #: The features a transcript can be asked to hold (names -> one-line descriptions, or names).
    FEATURES: Mapping[str, str] | Sequence[str]
    VARIANTS: Sequence[str]

    def transcripts(self, feature: str, variant: str | None = None) -> Any:
        """A strategy of ``Transcript`` holding ``feature`` (in ``variant``, or any common one)."""
        ...


@dataclass(frozen=True)
class FormatPack:
    """Everything the suite knows about one native format, registered under ``asr_conformance.format_packs``."""

    #: The pack's own name (``claude-code``, ``toy-pack``), shown as "fidelity judged by <name> <version>".
    name: str
    version: str
    witness: Witness
    #: The source edits the pack offers (``SourceMutation``); each names the rule its expectation checks.
    edits: tuple[SourceMutation, ...] = ()
    #: Transcripts to fuzz converters with; ``None``: the format is not fuzzed, and verdicts say so.
    generator: Generator | None = None
    #: See ``KIND_POLICIES``.
    kind_policy: str = "any"
    #: Prefixes a ``producer.lossy`` entry may carry for this format (``claude-code.tool_result``).
    loss_namespaces: tuple[str, ...] = ()
    #: Names a counterexample file the way the agent would (from a hex digest), or ``None`` for ``<digest>.json``.
    file_name: Callable[[str], str] | None = None
    #: Most seconds one call into the pack (``sniff``, ``read``, an edit) may take before it counts as hung.
    time_limit: float = 20.0
    #: Other format names than the witness's own that the pack answers for (usually none).
    also_formats: tuple[str, ...] = ()
    #: Modules whose files make up the pack, for its digest; found from its members when empty.
    modules: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if self.kind_policy not in KIND_POLICIES:
            raise ValueError(f"pack {self.name}: kind_policy {self.kind_policy!r} is not one of {', '.join(KIND_POLICIES)}")
        if not isinstance(self.witness, Witness):
            raise TypeError(f"pack {self.name}: {self.witness!r} does not meet the Witness interface "
                            "(format, accepts_format_name, sniff, read)")

    @property
    def format(self) -> str:
        """The format name the pack's witness answers for (``producer.source.format``)."""
        return self.witness.format

    @property
    def formats(self) -> tuple[str, ...]:
        return (self.format, *self.also_formats)

    def accepts_format_name(self, name: str) -> bool:
        return name in self.also_formats or bool(self.witness.accepts_format_name(name))

    def member_modules(self) -> tuple[str, ...]:
        """The modules the pack's code lives in: declared, or those of its witness, edits and generator."""
        if self.modules:
            return self.modules
        found = [type(self.witness).__module__]
        found += [getattr(edit.apply, "__module__", None) or "" for edit in self.edits]
        found += [getattr(edit.expect or edit.expect_edit, "__module__", None) or "" for edit in self.edits]
        if self.generator is not None:
            found.append(getattr(self.generator, "__name__", None) or type(self.generator).__module__)
        return tuple(dict.fromkeys(m for m in found if m and m != "builtins"))


def witness_only(witness: Witness, version: str, name: str | None = None) -> FormatPack:
    """A pack around a bare witness (the deprecated ``asr_conformance.witnesses`` group): its edits come from
    the witness's optional ``mutations`` attribute, and it has no generator."""
    edits = tuple(getattr(witness, "mutations", ()) or ())
    return FormatPack(name=name or witness.format, version=version, witness=witness, edits=edits)
