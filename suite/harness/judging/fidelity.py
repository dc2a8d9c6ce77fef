"""Judging a producer against its source: the witness reads the native input, the fidelity
checks hold the converted stream to it, and source edits must move the stream as they say.

A stream that only conforms proves little: a converter that ignores its input can write
the same valid stream for every file. Here the suite reads the input itself (through the
pack chosen for it once, ``packs.selection``) and checks every "comes from the source"
rule it can (``fidelity.compare``); each source edit (``fidelity.mutations``) is converted
again and must change the stream exactly as the edit implies.

Without a pack for the input's format nothing here passes: the result is *not checked*,
with the reason, and the verdict says so.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from asr_conformance.fidelity.compare import Policy, observe_fidelity
from asr_conformance.fidelity.disguise import disguise
from asr_conformance.fidelity.facts import Finding, SourceFacts
from asr_conformance.fidelity.mutations import EditContext, SourceMutation, edited_bytes
from asr_conformance.harness.adapters.targets import ProducerInput
from asr_conformance.harness.judging import readings as reading
from asr_conformance.harness.judging.produced import ProducedStream, produced
from asr_conformance.harness.judging.readings import Readings, Unread
from asr_conformance.harness.judging.steps import StepHung as StepHung
from asr_conformance.harness.judging.steps import step_limit, within
from asr_conformance.packs.guard import PackError, bounded
from asr_conformance.packs.identity import PackIdentity
from asr_conformance.packs.pack import FormatPack
from asr_conformance.packs.registry import Installed, Packs, installed
from asr_conformance.packs.selection import SourceInput, sniffed, source_input

#: The rules fidelity checks can name; every fidelity test is marked with them (-m ASR-252 selects it).
#: A test keeps this list equal to the rules the fidelity modules name.
FIDELITY_RULES = (
    "ASR-051", "ASR-103", "ASR-104", "ASR-150", "ASR-154", "ASR-156", "ASR-157", "ASR-169", "ASR-179", "ASR-187", "ASR-250",
    "ASR-252", "ASR-253", "ASR-254", "ASR-258", "ASR-259", "ASR-260", "ASR-261", "ASR-262", "ASR-265", "ASR-266", "ASR-267",
    "ASR-270", "ASR-274", "ASR-275", "ASR-283", "ASR-285", "ASR-287", "ASR-172", "ASR-279", "ASR-291", "ASR-183",
    "ASR-186", "ASR-255",
)
#: How many findings a failure message lists before "... and N more".
SHOWN = 12
#: Why fidelity is not checked on a stream the reference validator rejects (the output test fails it).
NOT_VALID_REASON = "the stream is not valid ASR"
NOT_VALID = f"not checked: {NOT_VALID_REASON}"


@dataclass(frozen=True)
class SourceEdit:
    """One producer input and one source edit its pack offers (``None``: no pack, nothing to edit); the input
    carries the pack chosen for it at collection, which the test judges with."""

    source: SourceInput
    mutation: str | None

    @property
    def input(self) -> ProducerInput:
        return input_of(self.source)

    @property
    def id(self) -> str:
        return f"{self.source.id}-{self.mutation or 'no-witness'}"


def producer_sources(items: Iterable[ProducerInput], packs: Packs) -> dict[str, SourceInput]:
    """Each input (by test ID, the first of an ID kept) read and sniffed once: made at collection and carried on
    every test of the input, so that its edits, its fidelity and the header check share one choice of pack."""
    found: dict[str, SourceInput] = {}
    for item in items:
        if item.id not in found:
            found[item.id] = source_input(Path(item.path), packs, item.id)
    return found


def input_of(source: SourceInput) -> ProducerInput:
    """The producer input a source input was made of (its test ID and file)."""
    return ProducerInput(source.id, Path(source.path or source.id))


def source_edits(source: SourceInput) -> list[SourceEdit]:
    """The edits to try on one input: the edits of the pack chosen for it (``SourceInput.pack``)."""
    chosen = source.pack
    edits = [SourceEdit(source, m.name) for m in (chosen.pack.edits if chosen is not None else ())]
    return edits or [SourceEdit(source, None)]


#: How long disguising an input may take: a floor, and more per megabyte (it takes about 2 s per MB).
DISGUISE_SECONDS = 120.0
DISGUISE_SECONDS_PER_MB = 30.0


def disguised_input(source: Path, seed: int, folder: Path, seconds: float | None = None) -> Path:
    """A copy of the input that cannot be matched to it (``fidelity.disguise``), drawn from the run's seed and
    the input's path, written once under ``folder`` (so its baseline conversion is made once too).

    Bounded in time (``seconds``, by default in proportion to the input's size): past it, ``StepHung``
    names the input instead of a progress line that stops moving."""
    key = hashlib.sha256(f"{seed}:{Path(source).resolve()}".encode()).hexdigest()
    copy = Path(folder) / "disguised" / f"{key[:16]}{Path(source).suffix}"
    if not copy.is_file():
        data = Path(source).read_bytes()
        limit = seconds if seconds is not None else DISGUISE_SECONDS + DISGUISE_SECONDS_PER_MB * len(data) / 1e6
        disguised = within(limit, f"disguising {Path(source).name} ({len(data):,} bytes)", disguise, data,
                           int(key[16:32], 16))
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_bytes(disguised)
    return copy


def mutation_named(pack: Installed | FormatPack, name: str) -> SourceMutation | None:
    return next((m for m in mutations_of(pack) if m.name == name), None)


@dataclass
class Fidelity:
    """What the fidelity checks found for one stream of one input."""

    #: The witness that read the input (its format name), or None when fidelity was not checked.
    witness: str | None
    findings: list[Finding] = field(default_factory=list)
    #: Why fidelity is not checked ("not checked: no witness for format 'x'"), when it is not: shown to people.
    not_checked: str | None = None
    notes: list[str] = field(default_factory=list)
    #: The pack that judged (or tried to), for reports.
    judge: PackIdentity | None = None
    #: The pack failed (raised, hung, malformed facts): the suite's error, not the converter's.
    error: str | None = None
    #: Disagreements no numbered rule of the pages settles (an approval decision the source lacks): shown
    #: in the result's details, never scored.
    reported: list[Finding] = field(default_factory=list)
    #: Why fidelity was not checked at all ("no witness for format 'x'"), set beside ``not_checked`` by the code
    #: that decides it; None for a mere "not applicable" (an edit with nothing in the input to apply to).
    gap: str | None = None

    @property
    def rules(self) -> list[str]:
        return sorted({f.rule for f in self.findings})

    @property
    def unchecked(self) -> str | None:
        """Why fidelity was not checked at all (no witness reads the input...), the gap a producer's verdict
        names; None when it was checked, or when an edit had nothing in the input to apply to (no gap)."""
        return None if self.findings else self.gap


def not_checked(reason: str, findings: list[Finding] | None = None, notes: list[str] | None = None,
                judge: PackIdentity | None = None) -> Fidelity:
    """A result that checked nothing, carrying its reason as data (``gap``) and in words (``not_checked``)."""
    return Fidelity(None, list(findings or ()), f"not checked: {reason}", list(notes or ()), judge=judge, gap=reason)


def stream_records(stream: bytes | ProducedStream) -> list[dict[str, Any]] | None:
    """The stream's records, or None when it is not JSON Lines of objects (the output test says why).

    Lines end at LF only: U+0085, U+2028 and the other breaks ``str.splitlines`` knows may stand
    unescaped inside a JSON string (``judging.produced``)."""
    return produced(stream).records


def mutations_of(pack: Installed | FormatPack | None) -> tuple[SourceMutation, ...]:
    """The source edits a pack offers."""
    if isinstance(pack, Installed):
        return pack.pack.edits
    return pack.edits if pack is not None else ()


def policy_of(pack: FormatPack) -> Policy:
    return Policy(kind_policy=pack.kind_policy, loss_namespaces=pack.loss_namespaces)


def judge_fidelity(data: bytes, stream: bytes | ProducedStream, packs: Packs | None = None,
                   name: str = "the input", source: SourceInput | None = None,
                   readings: Readings | None = None) -> Fidelity:
    """Choose the pack by the stream's header and the input, read the input, check the stream.

    ``source`` is the input as made at collection: its pack was chosen then, and the header is held to that
    choice without sniffing again (``packs`` is not used). Without it, ``data`` are sniffed now among
    ``packs`` (every installed pack by default). ``readings``: where the input's facts are kept for its
    source edits (``read_facts``).

    Only a valid stream is held to its source (``fidelity.compare`` assumes valid records): an invalid
    one is the output test's failure, and here fidelity is not checked, rather than failed many times over.
    Reading and comparing are bounded in time (``step_limit``): past it, the suite's error names the step
    and ``name`` (the input's file name)."""
    parsed = produced(stream)
    records = parsed.records
    if records is None:
        return not_checked("the output is not a stream of JSON objects")
    if not parsed.valid:
        return not_checked(NOT_VALID_REASON)
    if source is None:
        source = sniffed(data, packs if packs is not None else installed(), name)
    elif source.unreadable is not None:
        return Fidelity(None, error=f"{name} could not be read when it was collected ({source.unreadable}), so no "
                        "pack was chosen for it")
    elif not source.matches(data):
        return Fidelity(None, error=f"{name} changed after it was collected: its pack was chosen on other bytes "
                        "(an input must not change during a run)")
    selection = source.choose(records[0])
    if selection.chosen is None:
        return Fidelity(None, list(selection.findings), selection.not_checked, list(selection.notes),
                        gap=selection.gap)
    chosen = selection.chosen
    judge = chosen.identity
    try:
        facts = read_facts(chosen, data, readings, source.digest)  # hashed once, when the source was sniffed or matched
        if isinstance(facts, Unread):
            return not_checked(facts.reason, selection.findings, selection.notes, judge)
        scored, reported = compared(facts, records, policy_of(chosen.pack), data, stream,
                                    f"comparing the stream with the facts of {name}")
        findings = list(selection.findings) + scored
    except (PackError, StepHung) as error:
        return Fidelity(None, notes=list(selection.notes), judge=judge, error=str(error))
    return Fidelity(chosen.pack.format, findings, None, list(selection.notes), judge=judge, reported=reported)


def compared(facts: SourceFacts, records: list[dict[str, Any]], policy: Policy, data: bytes,
             stream: bytes | ProducedStream, what: str) -> tuple[list[Finding], list[Finding]]:
    """``observe_fidelity`` (scored findings, reported observations) bounded in time by the size of the input and
    the stream (``StepHung`` naming ``what``)."""
    size = len(data) + len(stream.data if isinstance(stream, ProducedStream) else stream)
    found: tuple[list[Finding], list[Finding]] = within(step_limit(size), f"{what} ({len(data):,} bytes)",
                                                        observe_fidelity, facts, records, policy)
    return found


def read_facts(pack: Installed, data: bytes, readings: Readings | None = None,
               digest: str | None = None) -> SourceFacts | Unread:
    """The pack's facts, or why it could not read the input (``judging.readings.read``); kept in ``readings``
    when given, so that the input's fidelity test and every source edit of it share one reading (``digest``: the
    input's SHA-256 when already known)."""
    return readings.facts(pack, data, digest) if readings is not None else reading.read(pack, data)


Convert = Callable[[bytes], "bytes | str"]


def judge_mutation(mutation: SourceMutation, pack: Installed, data: bytes, stream: bytes | ProducedStream,
                   convert: Convert, name: str = "the input", readings: Readings | None = None) -> Fidelity:
    """Edit the input, convert the edited copy, and check the edit's expectation and the whole stream.

    ``convert`` returns the new stream, or a sentence saying why there is none (a refusal or a
    crash on an edited input that is still a valid transcript is itself a failure). A pack whose
    edit or witness fails, or a step past its time (``StepHung``, naming ``name``), gives an error
    result (``Fidelity.error``), never a finding."""
    chosen = pack
    witness, judge, policy = chosen.pack.witness, chosen.identity, policy_of(chosen.pack)
    baseline = produced(stream)
    if not baseline.valid:  # the output test fails it; the edit would only repeat that
        return not_checked(NOT_VALID_REASON, judge=judge)
    try:
        answer = bounded(judge, f"the {mutation.name} edit", chosen.pack.time_limit, mutation.apply, data)
        try:
            unpacked = edited_bytes(answer)
        except TypeError as error:
            raise PackError(judge, f"the {mutation.name} edit {error}") from None
        if unpacked is None:
            return Fidelity(witness.format, judge=judge,
                            not_checked=f"not applicable: the input holds nothing the {mutation.name} edit applies to")
        edited, item = unpacked
        # the edited copy is read once, so only the unedited input's reading is kept
        before_facts, after_facts = read_facts(chosen, data, readings), reading.read(chosen, edited)
    except (PackError, StepHung) as error:
        return Fidelity(None, judge=judge, error=str(error))
    if isinstance(before_facts, Unread):
        return not_checked(before_facts.reason, judge=judge)
    if isinstance(after_facts, Unread):
        return not_checked(after_facts.reason, judge=judge)
    before = baseline.records
    converted = convert(edited)
    if isinstance(converted, str):
        message = f"the input edited by {mutation.name} ({mutation.description}) was not converted: {converted}"
        return Fidelity(witness.format, [Finding(mutation.rule, "completeness", message)], judge=judge)
    edited_stream = produced(converted)
    after = edited_stream.records
    if before is None or after is None:
        message = f"after {mutation.name}, the output is not a stream of JSON objects"
        return Fidelity(witness.format, [Finding(mutation.rule, "completeness", message)], judge=judge)
    if not edited_stream.valid:
        broken = ", ".join(sorted(edited_stream.outcome.rules()))
        message = (f"after {mutation.name} ({mutation.description}), the stream is not valid ASR (breaks {broken}); "
                   "an edited input that is still a valid transcript converts to a valid stream")
        return Fidelity(witness.format, [Finding(mutation.rule, "completeness", message)], judge=judge)
    try:
        context = EditContext(data, edited, item, before_facts, after_facts, before, after)
        findings = list(bounded(judge, f"the {mutation.name} expectation", chosen.pack.time_limit, mutation.findings,
                                context))
        if not all(isinstance(f, Finding) for f in findings):
            raise PackError(judge, f"the {mutation.name} expectation returned something other than Findings")
        whole = compared(after_facts, after, policy, edited, converted,
                         f"comparing the stream with the facts of {name} after the {mutation.name} edit")
    except (PackError, StepHung) as error:
        return Fidelity(None, judge=judge, error=str(error))
    seen = {(f.rule, f.message) for f in findings}
    scored, reported = whole
    findings += [f for f in scored if (f.rule, f.message) not in seen]
    return Fidelity(witness.format, findings, judge=judge, reported=reported)


def describe(findings: Sequence[Finding]) -> list[str]:
    """One paragraph per finding: rule, family, message, the native line and the record's seq."""
    shown = []
    for finding in findings[:SHOWN]:
        text = f"{finding.rule} ({finding.family}): {finding.message}"
        if finding.where is not None:
            excerpt = f": {finding.where.excerpt}" if finding.where.excerpt else ""
            text += f"\n    native {finding.where.place()}{excerpt}"
        if finding.seq is not None:
            text += f"\n    stream record seq {finding.seq}"
        shown.append(text)
    if len(findings) > SHOWN:
        shown.append(f"... and {len(findings) - SHOWN} more")
    return shown

