"""The one registry of format packs: loading them from the ``asr_conformance.format_packs`` entry points (the
suite's own first, then every other distribution's), then (deprecated) bare witnesses under
``asr_conformance.witnesses`` as witness-only packs. Choosing the pack for one input is
``packs.selection``'s, over the ``Packs`` loaded here.

The built-in packs are registered under the same group by the suite's own distribution, and load
through the same code as a vendor's; only where the suite is not installed as a distribution (run
from a source tree) are they taken from ``packs.builtin`` directly, and the run's notes say so.
An entry point names a ``FormatPack``, or a callable without arguments that returns one. A
plugin that fails to load is a problem reported beside the verdict, never a crash of the run
and never a reason to hide the other packs.
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from asr_conformance.fidelity.facts import Witness
from asr_conformance.packs.builtin import builtin_packs
from asr_conformance.packs.identity import SUITE_DISTRIBUTION, PackIdentity, identify
from asr_conformance.packs.pack import FormatPack, witness_only

GROUP = "asr_conformance.format_packs"
#: The deprecated group of bare witnesses, each loaded as a pack without edits or generator.
WITNESS_GROUP = "asr_conformance.witnesses"
DEPRECATED = (f"the {WITNESS_GROUP} entry-point group is deprecated: register a FormatPack under {GROUP} "
              "(docs/witnesses.md)")


@dataclass(frozen=True)
class Installed:
    """A loaded pack and what reports say about it."""

    pack: FormatPack
    identity: PackIdentity

    @property
    def builtin(self) -> bool:
        return self.identity.builtin


@dataclass
class Packs:
    """Every pack this process can judge with, in the order they are tried, and what failed to load."""

    installed: list[Installed] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: Installed third-party packs left out under ``--builtin-packs-only`` (their labels).
    ignored: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, *packs: FormatPack | Installed) -> Packs:
        """A pool of these packs, in this order: the one pool type judging takes (a pack that is installed keeps
        its installed identity; another is named "(given)")."""
        everything = _loaded_once()
        chosen = [p if isinstance(p, Installed) else
                  next((i for i in everything.installed if i.pack is p), None) or Installed(p, identify(p, "(given)", False))
                  for p in packs]
        return cls(chosen)

    @property
    def packs(self) -> list[FormatPack]:
        return [i.pack for i in self.installed]

    def for_format(self, name: str) -> Installed | None:
        """The pack whose witness answers to a format name (``codex`` -> the Codex pack)."""
        return next((i for i in self.installed if i.pack.format == name), None) or \
            next((i for i in self.installed if _accepts(i.pack, name)), None)

    def formats(self) -> list[str]:
        return [i.pack.format for i in self.installed]

    def generated_formats(self) -> list[str]:
        """The formats whose pack has a generator (``-m fuzz`` fuzzes them)."""
        return sorted(i.pack.format for i in self.installed if i.pack.generator is not None)

    def only_builtin(self) -> Packs:
        dropped = [i.identity.label() for i in self.installed if not i.builtin]
        notes = list(self.notes) + ([f"third-party packs not used (built-in packs only): {', '.join(dropped)}"]
                                    if dropped else [])
        return Packs([i for i in self.installed if i.builtin], list(self.problems), notes, dropped)


def _accepts(pack: FormatPack, name: str) -> bool:
    try:
        return pack.accepts_format_name(name)
    except Exception:  # a pack that cannot even compare names does not claim the format
        return False


def _loaded(point: EntryPoint) -> Any:
    value = point.load()
    if isinstance(value, FormatPack):
        return value
    if callable(value) and not inspect.isclass(value):
        return value()
    return value


def _distribution(point: EntryPoint) -> str:
    dist = getattr(point, "dist", None)
    name = getattr(dist, "name", None) if dist is not None else None
    return str(name) if name else "(unknown distribution)"


#: Where the suite's own distribution points its built-in entry points.
BUILTIN_MODULE = "asr_conformance.packs.builtin"


def _is_builtin(point: EntryPoint) -> bool:
    """An entry point of the suite's own distribution naming one of its built-in packs."""
    return _distribution(point) == SUITE_DISTRIBUTION and point.value.partition(":")[0].strip() == BUILTIN_MODULE


def load_packs(builtin_only: bool = False) -> Packs:
    """The suite's own entry points first; then every other distribution's; a format already served keeps its
    first pack."""
    points = list(entry_points(group=GROUP))
    own = [p for p in points if _is_builtin(p)]
    found = Packs()
    if own:
        for point in own:
            _load_point(found, point, builtin=True)
    else:
        found.installed += [Installed(p, identify(p, SUITE_DISTRIBUTION, True)) for p in builtin_packs()]
        found.notes.append(f"the suite is not installed as a distribution (no {GROUP} entry points of "
                           f"{SUITE_DISTRIBUTION}): built-in packs taken from {BUILTIN_MODULE}")
    if builtin_only:
        return found
    for point in points:
        if not _is_builtin(point):
            _load_point(found, point, builtin=False)
    for point in entry_points(group=WITNESS_GROUP):
        try:
            loaded = point.load()
            witness = loaded() if inspect.isclass(loaded) else loaded
            if not isinstance(witness, Witness):
                raise TypeError(f"{loaded!r} does not meet the Witness interface (format, accepts_format_name, sniff, read)")
            dist = getattr(point, "dist", None)
            pack = witness_only(witness, str(getattr(dist, "version", None) or "unknown"), name=point.name)
        except Exception as error:
            found.problems.append(f"witness entry point {point.name} ({point.value}) failed to load: {error}")
            continue
        if _add(found, pack, _distribution(point)):
            found.notes.append(f"{DEPRECATED}; {point.name} ({point.value}) loaded as a witness-only pack")
    return found


def _load_point(found: Packs, point: EntryPoint, builtin: bool) -> None:
    try:
        pack = _loaded(point)
        if not isinstance(pack, FormatPack):
            raise TypeError(f"{point.value} gives {type(pack).__name__}, not a FormatPack")
    except Exception as error:  # a broken plugin must not hide the others
        found.problems.append(f"format pack entry point {point.name} ({point.value}) failed to load: {error}")
        return
    _add(found, pack, _distribution(point), builtin)


def _add(found: Packs, pack: FormatPack, distribution: str, builtin: bool = False) -> bool:
    if any(i.pack.format == pack.format for i in found.installed):
        found.notes.append(f"pack {pack.name} {pack.version} ({distribution}) not used: format {pack.format} "
                           "already has a pack")
        return False
    found.installed.append(Installed(pack, identify(pack, distribution, builtin)))
    return True


def installed(builtin_only: bool = False) -> Packs:
    """The packs of this process, loaded once per process; ``builtin_only`` (a certifier's
    ``--builtin-packs-only``): the suite's own packs only, third-party ones listed as not used. A run keeps
    the ``Packs`` its options give and passes it to whatever chooses a pack."""
    everything = _loaded_once()
    return everything.only_builtin() if builtin_only else everything


@functools.cache
def _loaded_once() -> Packs:
    """Entry points do not change during a run, so they are read once."""
    return load_packs()
