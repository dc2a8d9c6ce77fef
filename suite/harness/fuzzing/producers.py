"""Fuzzing producers: generated native transcripts through the converter, the witness as oracle.

A vendor's own inputs show what the vendor thought of. Here the suite builds native
transcripts itself (``generators.native``), valid by construction and holding the features
converters get wrong (duplicate native IDs, dangling and interrupted calls, orphans, exit
codes only in text...), converts each with the producer under test and holds the stream to
what the format's witness reads from the same bytes:

* the transcript is converted (a refusal of a valid transcript fails, as for a vendor's input);
* the stream conforms (``judging.producer.output_problems``);
* the stream keeps every fact of its source (``judging.fidelity.judge_fidelity``);
* one source edit the witness offers, drawn per example, moves the stream as it must
  (``judging.fidelity.judge_mutation``).

A failure is shrunk by Hypothesis (within the shrink budget of ``harness.fuzzing.profiles``) and
written as a ready producer input: the native file, a ``.case.toml`` beside it that says
what it holds and what broke, and a command that replays it as ``--inputs``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import shlex
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NoReturn

from hypothesis import assume, settings
from hypothesis import strategies as st

from asr_conformance.fidelity.disguise import disguise
from asr_conformance.fidelity.mutations import SourceMutation
from asr_conformance.generators.native.long_sessions import lengthenable, long_transcripts, with_long_sessions
from asr_conformance.harness.adapters.answers import Conversion, Outcome
from asr_conformance.harness.adapters.targets import CASE_SUFFIX
from asr_conformance.harness.fuzzing.profiles import PropertyRunner, ShrinkBudget
from asr_conformance.harness.judging.fidelity import (
    FIDELITY_RULES,
    describe,
    judge_fidelity,
    judge_mutation,
    mutations_of,
    read_facts,
)
from asr_conformance.harness.judging.produced import ProducedStream, produced
from asr_conformance.harness.judging.producer import OUTPUT_RULES, output_problems
from asr_conformance.harness.judging.readings import Readings, Unread
from asr_conformance.packs.guard import PackError
from asr_conformance.packs.pack import Generator, Transcript
from asr_conformance.packs.registry import Installed, Packs, installed
from asr_conformance.packs.selection import SourceInput, sniffed
from asr_conformance.vocabulary.untrusted import no_surrogates

#: How much of an input is read to tell its variant (its format is the pack chosen for it at collection).
SNIFF_BYTES = 256 * 1024
#: How many output problems a failure message lists.
SHOWN = 12
#: How many disguised copies a session keeps (a long session's copy is a MiB or more).
DISGUISES_KEPT = 8


@dataclass(frozen=True)
class GeneratedInput:
    """One producer fuzz property: transcripts of one format holding one feature (in one variant, or any)."""

    format: str
    feature: str
    #: A variant drawn only when asked for (Codex's legacy rollouts); None lets the generator draw one.
    variant: str | None = None
    #: Every transcript of real size (``generators.native.long_sessions``): the long property, which every run
    #: of a lengthened format holds, so that a defect far into a session is met whatever the seed.
    long: bool = False
    #: The seed of the long sessions' pools (the run's: ``ProducerFuzzSession.for_run``), and whether the other
    #: properties lengthen a session now and then (not in the cost benchmark's baseline).  Not part of what the
    #: property is: a run's plan compares and collects properties without them.
    pool: int = field(default=0, compare=False)
    long_sessions: bool = field(default=True, compare=False)

    @property
    def id(self) -> str:
        return "-".join(filter(None, [self.format, self.variant, self.feature, "long" if self.long else None]))

    def strategy(self) -> st.SearchStrategy[Transcript]:
        """The property's transcripts, the long ones' stretches drawn from the pool of ``pool``."""
        module = generator(self.format)
        if module is None:
            raise ValueError(f"no generator for format {self.format!r}; known: {', '.join(formats())}")
        drawn = module.transcripts(self.feature, self.variant)
        value: st.SearchStrategy[Transcript] = (long_transcripts(self.format, drawn, self.pool) if self.long
                                                else with_long_sessions(self.format, drawn, self.long_sessions, self.pool))
        return value

    def examples(self, most: int) -> int:
        """How many examples the property draws when the run's profile draws ``most``: a long transcript costs
        about as much as ``LONG_SHARE`` short ones, so the long property draws that much fewer (one at least)."""
        return max(1, most // LONG_SHARE) if self.long else most


#: How many examples of an ordinary property a long property's one example stands for (the default profile's
#: eight: one long example per lengthened format in a default run).
LONG_SHARE = 8
#: The feature a long property's sessions are drawn with (before their stretch is spliced in).
LONG_FEATURE = "mixed"


def formats(packs: Packs | None = None) -> tuple[str, ...]:
    """The formats a pack (of ``packs``, every installed one by default) has a generator for, in a stable order."""
    return tuple((packs if packs is not None else installed()).generated_formats())


def generator(format: str, packs: Packs | None = None) -> Generator | None:
    """The generator of the pack for a format, or None when the format has no pack or its pack no generator."""
    chosen = (packs if packs is not None else installed()).for_format(format)
    return chosen.pack.generator if chosen is not None else None


def file_name(format: str, digest: str) -> str:
    """The name the agent would give a file (the pack says how), from a digest of its bytes."""
    chosen = installed().for_format(format)
    namer = chosen.pack.file_name if chosen is not None else None
    return namer(digest) if namer is not None else f"{digest[:32]}.json"


def generated_inputs(format: str, variants: Sequence[str] = (), long_shapes: bool = True) -> list[GeneratedInput]:
    """Every property for one format: each feature in the common variants, the long property of a lengthened
    format (unless the run draws no long examples: ``long_shapes`` false, the cost benchmark's baseline), then
    each feature of each rare variant asked for (``variants``: the rare variants a vendor's own inputs follow)."""
    module = generator(format)
    if module is None:
        return []
    found = [GeneratedInput(format, feature) for feature in sorted(module.FEATURES)]
    if long_shapes and lengthenable(format):
        found.append(GeneratedInput(format, LONG_FEATURE, long=True))
    for variant in variants:
        available = getattr(module, "available", None)
        found += [GeneratedInput(format, feature, variant) for feature in sorted(module.FEATURES)
                  if available is None or available(feature, variant)]
    return found


def rare_variants(format: str) -> tuple[str, ...]:
    """The variants of a format drawn only for a vendor whose inputs follow them."""
    module = generator(format)
    if module is None:
        return ()
    common = getattr(module, "DEFAULT_VARIANTS", tuple(module.VARIANTS))
    return tuple(v for v in module.VARIANTS if v not in common)


def sniffed_format(data: bytes, source: SourceInput | None = None) -> tuple[str, str | None] | None:
    """The format an input is in, and its variant: the pack chosen for it (``source``, or ``data`` sniffed now
    among the installed packs), and the variant its generator tells from ``data``."""
    chosen = (source or sniffed(data, installed())).pack
    if chosen is None:
        return None
    module = chosen.pack.generator
    variant_of = getattr(module, "variant_of", None) if module is not None else None
    try:
        return chosen.pack.format, variant_of(data) if variant_of is not None else None
    except Exception:  # a variant the generator cannot tell is no rare variant
        return chosen.pack.format, None


@dataclass(frozen=True)
class FuzzPlan:
    """What one producer is fuzzed with: properties, or why there are none."""

    inputs: tuple[GeneratedInput, ...]
    #: Why the producer is not fuzzed, or not in every format it converts (empty when it is):
    #: "not fuzzed: no generator for <format>".
    reason: str = ""


def fuzz_plan(source_formats: Sequence[str], inputs: Sequence[SourceInput], packs: Packs | None = None,
              long_shapes: bool = True) -> FuzzPlan:
    """The properties for a producer: the formats it names, else the formats its own inputs are in (the packs
    chosen for them at collection); the long properties only when ``long_shapes`` (the run context's).

    A rare variant (Codex's legacy rollouts) is fuzzed only for a producer whose inputs follow it:
    a converter is not asked to read a variant its vendor never claimed."""
    found_in: list[tuple[str, str | None]] = []
    for item in inputs:
        if item.pack is None or item.path is None:
            continue
        try:
            with open(item.path, "rb") as handle:
                head = handle.read(SNIFF_BYTES)
        except OSError:
            continue
        found = sniffed_format(head, item)
        if found is not None:
            found_in.append(found)
    chosen = list(dict.fromkeys(source_formats)) or list(dict.fromkeys(f for f, _ in found_in))
    if not chosen:
        return FuzzPlan((), "not fuzzed: none of the inputs is in a format an installed pack reads "
                            f"(generated: {', '.join(formats(packs)) or 'none'}); install a format pack with a generator "
                            "for the inputs' own format (docs/witnesses.md), or name it with --source-format")
    properties: list[GeneratedInput] = []
    for format in chosen:
        rare = [v for v in rare_variants(format) if (format, v) in found_in]
        properties += generated_inputs(format, rare, long_shapes)
    bare = [f for f in chosen if generator(f, packs) is None]
    reason = (f"not fuzzed: no generator for {', '.join(bare)} (install a pack for that format that has one)"
              if bare else "")
    return FuzzPlan(tuple(properties), reason)


def not_fuzzed(plans: Iterable[FuzzPlan]) -> str | None:
    """Why some producer is not fuzzed, in every format or in some (the plans' reasons, once each), or None.

    The one sentence both the skipping fuzz test shows and its record carries (``TestRecord.not_fuzzed``),
    so the verdict reads the record, never the message."""
    found = list(plans)
    reasons = sorted({plan.reason for plan in found if plan.reason})
    if reasons:
        return "; ".join(reasons)
    return None if any(plan.inputs for plan in found) else "not fuzzed: no implementation plays the producer role"


@functools.cache
def pack_named(format: str) -> Installed | None:
    """The pack of a format, looked up once per process (entry points do not change during a run)."""
    return next((i for i in installed().installed if i.pack.format == format), None)


class ProducerFuzzSession(PropertyRunner):
    """What a producer fuzz test needs: the runner that converts, and judging each generated transcript.

    ``convert`` turns a file into a Conversion (``judging.producer.ProducerRunner.convert``)."""

    def __init__(self, convert: Callable[[Path], Conversion], scratch: Path, counterexamples: Path,
                 replay: list[str], hypothesis_settings: settings, seed: int | None,
                 budget: ShrinkBudget | None = None, database_key: str = "",
                 record: Callable[[str, object], None] | None = None, long_shapes: bool = True) -> None:
        super().__init__(scratch, counterexamples, replay, hypothesis_settings, seed, budget, database_key, record,
                         long_shapes)
        self.convert = convert
        #: Rules the last failure broke (the test records them).
        self.broken: list[str] = []
        #: The pack's own failure, when it raised, hung or gave malformed facts: the suite's error, never a
        #: finding; once set, the remaining examples are not judged.
        self.pack_error: str | None = None
        #: The packs' readings of the transcripts judged here: a transcript's facts serve its fidelity and its edit.
        self.readings = Readings()
        #: The last disguised copies, by the key they were drawn from: Hypothesis runs one transcript several
        #: times (a failure replayed, shrinking), and a copy is a function of the seed and the bytes alone.
        self._disguised: dict[bytes, bytes] = {}

    def for_run(self, generated: GeneratedInput) -> GeneratedInput:
        """``generated`` as this run draws it: long sessions from the pool of ``pool_seed``, and none but the long
        property's without ``with_long_shapes`` (whose plan then holds no long property)."""
        return replace(generated, pool=self.pool_seed, long_sessions=self.with_long_shapes)

    def settings_for(self, generated: GeneratedInput) -> Callable[[Callable[..., None]], Callable[..., None]]:
        """The decorator of ``generated``'s property: the run's settings, with fewer examples for a long one."""
        if not generated.long:
            return self.settings
        return self.settings_with(max_examples=generated.examples(self._settings.max_examples))

    def disguised(self, data: bytes) -> bytes:
        """The transcript with fresh IDs, shifted times and a renamed project (``fidelity.disguise``), drawn from
        the run's seed and the bytes: Hypothesis's simplest examples are the same in every run, the copies sent
        are not, and ``--hypothesis-seed`` sends the same copies again."""
        key = hashlib.sha256(f"{self.seed or 0}:".encode() + hashlib.sha256(data).digest()).digest()
        copy = self._disguised.get(key)
        if copy is None:
            copy = disguise(data, int.from_bytes(key[:8], "big"))
            if len(self._disguised) >= DISGUISES_KEPT:
                del self._disguised[next(iter(self._disguised))]
            self._disguised[key] = copy
        return copy

    def _write(self, failure: dict[str, Any]) -> tuple[Path, str]:
        self.broken = list(failure["rules"])
        return write_producer_counterexample(self.counterexamples, replay=self.replay, **failure)

    def _convert(self, data: bytes, format: str) -> Conversion:
        """Convert ``data``; the implementation gets a staged copy under a random name (``harness.isolation``),
        so the file name here (the counterexample's, as the agent would name it) never reaches it."""
        digest = hashlib.sha256(data).hexdigest()
        self.scratch.mkdir(parents=True, exist_ok=True)
        source = self.scratch / file_name(format, digest)
        source.write_bytes(data)
        self._counted()
        try:
            return self.convert(source)
        finally:
            source.unlink(missing_ok=True)

    def expect_faithful(self, transcript: Transcript, draw: Callable[[st.SearchStrategy[Any]], Any],
                        name: str, edit: bool = True) -> None:
        """Convert one generated transcript and hold the stream, and one edited copy's (unless ``edit`` is
        false: the long property, whose sessions of a MiB or more would cost a second conversion and an
        edit tried on each), to the pack's witness."""
        assume(self.pack_error is None)
        data = self.disguised(transcript.data())
        pack = pack_named(transcript.format)
        if pack is None:
            raise ValueError(f"no pack for format {transcript.format!r}")
        try:
            facts = read_facts(pack, data, self.readings)
            # Drawn before anything is asked, so that the same transcript always draws the same way,
            # whatever the implementation answers (Hypothesis replays and shrinks by what was drawn).
            edits = [m for m in mutations_of(pack) if _applies(pack, m, data)] if edit else []
        except PackError as error:
            self._pack_failed(str(error))
        # A generator slip must not be blamed on the implementation (the project's tests catch those).
        assume(not isinstance(facts, Unread))
        mutation = draw(st.sampled_from(edits)) if edits else None
        if self._from_memory(data):
            return
        failure = dict(name=name, data=data, format=transcript.format, variant=transcript.variant,
                       features=sorted(transcript.features), description=transcript.summary())
        conversion = self._convert(data, transcript.format)
        if conversion.outcome is not Outcome.CONVERTED or conversion.stream is None:
            what = "refused" if conversion.outcome is Outcome.REFUSED else f"gave no stream ({conversion.outcome.value})"
            self._fail(f"{what} on {transcript.summary()}, a valid transcript it must convert",
                       conversion.explain(), {**failure, "rules": list(OUTPUT_RULES), "findings": [what]})
        stream = produced(conversion.stream)  # parsed once: the output check, fidelity and the edit share it
        problems = output_problems(stream)
        if problems:
            rules = sorted({p.rule for p in problems})
            shown = [str(p) for p in problems[:SHOWN]]
            self._fail(f"the stream for {transcript.summary()} breaks {', '.join(rules)}", "\n".join(shown),
                       {**failure, "rules": rules, "findings": shown})
        result = judge_fidelity(data, stream, Packs.of(pack), transcript.summary(), readings=self.readings)
        if result.error is not None:
            self._pack_failed(result.error)
        if result.findings or result.not_checked:
            shown = describe(result.findings) or [result.not_checked or ""]
            rules = result.rules or ["ASR-156"]
            self._fail(f"the stream for {transcript.summary()} does not follow its source (breaks {', '.join(rules)})",
                       "\n".join(shown), {**failure, "rules": rules, "findings": shown})
        if mutation is not None:
            self._follows_edit(mutation, pack, data, stream, transcript, failure)

    def _pack_failed(self, error: str) -> NoReturn:
        """The judge failed, not the implementation: end the property at once, as a skip, which Hypothesis passes
        on without shrinking or drawing more (every later example would meet the same broken pack); the test
        records the error and the run is incomplete."""
        import pytest

        self.pack_error = error
        pytest.skip(error)

    def _follows_edit(self, mutation: SourceMutation, pack: Installed, data: bytes, stream: ProducedStream,
                      transcript: Transcript, failure: dict[str, Any]) -> None:
        def convert(edited: bytes) -> bytes | str:
            conversion = self._convert(edited, transcript.format)
            if conversion.outcome is Outcome.CONVERTED and conversion.stream is not None:
                return conversion.stream
            return f"{conversion.outcome.value}: {conversion.refusal or conversion.explain()}"

        edited = judge_mutation(mutation, pack, data, stream, convert, transcript.summary(), self.readings)
        if edited.error is not None:
            self._pack_failed(edited.error)
        if edited.findings:
            shown = describe(edited.findings)
            self._fail(f"after the {mutation.name} edit ({mutation.description}), the stream for "
                       f"{transcript.summary()} did not follow (breaks {', '.join(edited.rules)})",
                       "\n".join(shown),
                       {**failure, "rules": edited.rules, "findings": shown, "edit": mutation.name})


def _applies(pack: Installed, mutation: SourceMutation, data: bytes) -> bool:
    """Whether an edit has something to change in ``data``; a pack whose edit fails raises ``PackError``."""
    from asr_conformance.packs.guard import bounded

    return bounded(pack.identity, f"the {mutation.name} edit", pack.pack.time_limit, mutation.apply, data) is not None


def _toml_strings(texts: list[str]) -> str:
    """A TOML array of strings: findings may quote what the implementation wrote, and TOML allows
    neither DEL nor lone surrogates in a string, so both are escaped or replaced. Other characters
    stay as they are (JSON's surrogate-pair escapes for astral characters are not TOML)."""
    clean = [no_surrogates(text) for text in texts]
    return json.dumps(clean, ensure_ascii=False).replace("\x7f", "\\u007f")


def write_producer_counterexample(folder: Path, name: str, data: bytes, format: str, variant: str,
                                  features: list[str], rules: list[str], description: str, findings: list[str],
                                  replay: list[str], edit: str = "") -> tuple[Path, str]:
    """Write the native file and its ``.case.toml``; return the file and the command that replays it.

    The file is a producer input like any other (``--inputs`` takes it, or its folder: ``.case.toml``
    files are never inputs). Its name is the one the agent would write, so it can be dropped among
    the agent's own files."""
    folder = folder.resolve()
    digest = hashlib.sha256(data).hexdigest()
    case_dir = folder / "producer" / format
    case_dir.mkdir(parents=True, exist_ok=True)
    source = case_dir / file_name(format, digest)
    source.write_bytes(data)
    metadata = [
        f"description = {json.dumps(f'{name}: {description}')}",
        f"format = {json.dumps(format)}",
        f"variant = {json.dumps(variant)}",
        f"features = {json.dumps(features)}",
        f"rules = {json.dumps(rules or list(FIDELITY_RULES))}",
        *([f"edit = {json.dumps(edit)}"] if edit else []),
        f"findings = {_toml_strings(findings[:SHOWN])}",
        'spec = "Found by the producer fuzz harness (see each rule\'s section in the pages)"',
    ]
    source.with_name(source.name + CASE_SUFFIX).write_text("\n".join(metadata) + "\n", encoding="utf-8")
    command = shlex.join(["pytest", *replay, f"--inputs={source}", "--report-dir=none", "-p", "no:cacheprovider",
                          "-m", "not fuzz"])
    return source, command
