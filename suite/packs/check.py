"""``asr-conformance pack-check PACK SAMPLES...``: a format pack run on samples, as a vendor's first test.

For each sample it says what the pack's witness read (calls, results, messages, transitions, hooks,
approvals, terminals, subagents and the rest of ``SourceFacts``, each family marked "not reported" where the pack leaves it
``None``), whether the witness sniffs the sample as its format (a run chooses a pack by sniffing),
and what each source edit does to it: not applicable, or an edited input the witness still reads
with changed facts. Then one transcript per generator feature, read back by the witness. Every call
into the pack is bounded in time and its failures are named (``packs.guard``), never a traceback.
"""

from __future__ import annotations

import importlib
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from asr_conformance.fidelity.facts import NotThisFormat, SourceFacts
from asr_conformance.fidelity.mutations import edited_bytes
from asr_conformance.packs.guard import PackError, bounded, malformed
from asr_conformance.packs.identity import PackIdentity, identify
from asr_conformance.packs.pack import FormatPack
from asr_conformance.packs.registry import installed


@dataclass
class CheckReport:
    """What ``pack-check`` found: lines to print and the problems among them."""

    lines: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def say(self, line: str) -> None:
        self.lines.append(line)

    def problem(self, line: str) -> None:
        self.problems.append(line)
        self.lines.append(f"PROBLEM: {line}")


def resolve_pack(spec: str) -> tuple[FormatPack, PackIdentity]:
    """An installed pack by its name or a format name it answers for, or ``module:ATTRIBUTE`` naming a
    ``FormatPack`` (or a callable returning one) not yet installed. ``ValueError`` says why not."""
    if ":" in spec:
        module_name, _, attribute = spec.partition(":")
        try:
            value: Any = getattr(importlib.import_module(module_name), attribute)
            pack = value() if callable(value) and not isinstance(value, FormatPack) else value
        except Exception as error:  # the vendor's own code: any failure is an answer, not a crash
            raise ValueError(f"{spec}: cannot load it: {type(error).__name__}: {error}") from None
        if not isinstance(pack, FormatPack):
            raise ValueError(f"{spec}: gives {type(pack).__name__}, not a FormatPack")
        return pack, identify(pack, "(given)", False)
    packs = installed(builtin_only=False)
    found = next((i for i in packs.installed if i.pack.name == spec), None) or packs.for_format(spec)
    if found is None:
        names = ", ".join(sorted(f"{i.pack.name} ({i.pack.format})" for i in packs.installed)) or "none"
        raise ValueError(f"no installed pack is called {spec} or reads a format of that name (installed: {names}); "
                         f"name a pack not yet installed as module:ATTRIBUTE")
    return found.pack, found.identity


def check_pack(pack: FormatPack, identity: PackIdentity, samples: Iterable[tuple[str, bytes]],
               generator: bool = True) -> CheckReport:
    """Witness, edits and (when asked) generator of one pack over the samples."""
    report = CheckReport()
    report.say(f"pack {identity.label()}: format {pack.format}, {len(pack.edits)} source edit(s), "
               f"{'a generator' if pack.generator is not None else 'no generator'}, kind policy {pack.kind_policy}")
    for name, data in samples:
        _sample(pack, identity, name, data, report)
    if generator and pack.generator is not None:
        _generator(pack, identity, report)
    report.say(f"pack-check: {len(report.problems)} problem(s)" if report.problems else "pack-check: no problems")
    return report


def _call(identity: PackIdentity, pack: FormatPack, action: str, function: Callable[..., Any], *args: Any) -> Any:
    return bounded(identity, action, pack.time_limit, function, *args)


def _sample(pack: FormatPack, identity: PackIdentity, name: str, data: bytes, report: CheckReport) -> None:
    report.say(f"{name}:")
    try:
        sniffed = _call(identity, pack, "sniffing", pack.witness.sniff, data)
        if not sniffed:
            report.problem(f"{name}: the witness does not sniff it as {pack.format}, so a run would not judge it "
                           f"with this pack")
        facts = _call(identity, pack, "reading", pack.witness.read, data)
    except NotThisFormat as error:
        report.problem(f"{name}: the witness does not read it: {error}")
        return
    except (PackError, RecursionError) as error:
        report.problem(f"{name}: {error}")
        return
    problem = malformed(facts)
    if problem is not None:
        report.problem(f"{name}: the witness {problem}")
        return
    for line in describe(facts):
        report.say(f"  {line}")
    for edit in pack.edits:
        _edit(pack, identity, name, data, facts, edit, report)


def describe(facts: SourceFacts) -> list[str]:
    """One line per family of facts, saying which the pack leaves unreported."""
    dangling, orphans = facts.dangling(), facts.orphans()
    optional = [r for r in facts.results if r.optional]
    roles = Counter(m.role for m in facts.messages)
    lines = [
        f"format {facts.format}; session IDs {', '.join(sorted(facts.session_ids)) or 'none'}; "
        f"agent versions {', '.join(facts.agent_versions) or 'none'}",
        f"calls {len(facts.calls)} ({len(dangling)} dangling, {sum(1 for c in facts.calls if c.parent_call_id)} with a "
        f"parent link, {len(facts.duplicate_ids())} shared IDs)",
        f"results {len(facts.results)} ({len(orphans)} orphans, {len(optional)} optional, "
        f"{sum(1 for r in facts.results if r.exit_code is not None)} with an exit code)",
        "messages " + (", ".join(f"{role} {count}" for role, count in sorted(roles.items())) or "none"),
        f"questions {len(facts.questions)}; times {len(facts.times)} (earliest {facts.earliest_time or 'none'})",
        _family("transitions", facts.transitions),
        _family("hook runs", facts.hooks),
        _family("approvals", facts.permissions),
        _family("terminals", facts.terminals),
        _family("subagents", facts.subagents),
        _family("trigger values", None if facts.triggers is None else tuple(facts.triggers)),
        _family("turn links", None if facts.turn_links is None else tuple(facts.turn_links)),
        _family("tool identities in separate fields", None if facts.providers is None else tuple(facts.providers)),
    ]
    if facts.skipped:
        lines.append("not demanded: " + ", ".join(f"{k} {v}" for k, v in sorted(facts.skipped.items())))
    return lines


def _family(name: str, values: tuple[Any, ...] | None) -> str:
    if values is None:
        return f"{name}: not reported (not checked)"
    return f"{name}: {len(values)}" if values else f"{name}: none recorded (any in a stream is invented)"


def _edit(pack: FormatPack, identity: PackIdentity, name: str, data: bytes, facts: SourceFacts, edit: Any,
          report: CheckReport) -> None:
    label = f"edit {edit.name} ({edit.rule})"
    try:
        answer = _call(identity, pack, f"applying {edit.name}", edit.apply, data)
        try:
            unpacked = edited_bytes(answer)
        except TypeError as error:
            report.problem(f"{name}: {label} {error}")
            return
        if unpacked is None:
            report.say(f"  {label}: not applicable")
            return
        edited = unpacked[0]
        after = _call(identity, pack, f"reading the input {edit.name} edited", pack.witness.read, edited)
    except NotThisFormat as error:
        report.problem(f"{name}: {label} writes an input the witness does not read: {error}")
        return
    except (PackError, RecursionError) as error:
        report.problem(f"{name}: {label}: {error}")
        return
    if malformed(after) is not None or after == facts:
        report.problem(f"{name}: {label} changes no fact the witness reads" if after == facts
                       else f"{name}: {label}: the witness {malformed(after)}")
        return
    report.say(f"  {label}: applies")


def _generator(pack: FormatPack, identity: PackIdentity, report: CheckReport) -> None:
    generator = pack.generator
    assert generator is not None
    features = list(generator.FEATURES)
    report.say(f"generator: {len(features)} feature(s)")
    for feature in features:
        try:
            transcript = _call(identity, pack, f"generating {feature}", first_example, generator.transcripts(feature))
            facts = _call(identity, pack, f"reading a generated {feature} transcript", pack.witness.read,
                          transcript.data())
        except NotThisFormat as error:
            report.problem(f"generator feature {feature}: the witness does not read its transcript: {error}")
            continue
        except (PackError, RecursionError) as error:
            report.problem(f"generator feature {feature}: {error}")
            continue
        report.say(f"  {feature}: {len(facts.calls)} calls, {len(facts.results)} results, {len(facts.messages)} messages")


def first_example(strategy: Any) -> Any:
    """One example of a strategy, drawn without shrinking and without an example database."""
    from hypothesis import HealthCheck, Phase, given, settings

    drawn: list[Any] = []

    @settings(max_examples=1, phases=[Phase.generate], database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def draw(value: Any) -> None:
        drawn.append(value)

    draw()
    if not drawn:
        raise ValueError("the strategy drew no example")
    return drawn[0]


def read_samples(paths: Iterable[Path]) -> list[tuple[str, bytes]]:
    """Each sample's name and bytes; a folder stands for the files in it. ``ValueError`` names an unreadable one."""
    found: list[tuple[str, bytes]] = []
    for path in paths:
        files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        for file in files:
            try:
                found.append((str(file), file.read_bytes()))
            except OSError as error:
                raise ValueError(f"{file}: cannot read: {error.strerror or error}") from None
    return found
