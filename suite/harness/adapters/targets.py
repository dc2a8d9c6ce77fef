"""The implementations under test, as the command line describes them.

``--implementation`` may be given several times (a side-by-side run, one
report column each).  Each becomes a :class:`Target`: how to start it, which
roles it is certified in, its producer inputs and its expectations file.
Without ``--implementation`` the target is the bundled reference, which plays
all three roles through one persistent process.
"""

from __future__ import annotations

import glob
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from asr_conformance.harness.adapters.manifest import ManifestError, load_manifest
from asr_conformance.harness.adapters.oneshot import OneShotProducer, OneShotReader, OneShotValidator
from asr_conformance.harness.adapters.persistent import PersistentImplementation
from asr_conformance.harness.adapters.roles import PROTOCOLS, ProducerAdapter, ReaderAdapter, RoleAdapter, ValidatorAdapter
from asr_conformance.harness.isolation.policies import Policy
from asr_conformance.vocabulary.errors import UserError
from asr_conformance.vocabulary.option_defaults import DEFAULT_TIMEOUT, ROLES

if TYPE_CHECKING:  # loading the packs is deferred until a format is named
    from asr_conformance.packs.registry import Packs

#: The example producer's samples: the bundled reference's producer inputs (in a checkout).
REFERENCE_SAMPLES = tuple(
    Path(__file__).resolve().parents[3] / "examples" / name / "samples"
    for name in ("claude-code-converter", "codex-converter", "gemini-converter")
)


#: The description beside a producer counterexample (``harness.fuzzing.producers``): never an input.
CASE_SUFFIX = ".case.toml"


class TargetError(UserError):
    """An --implementation or --inputs the harness cannot use; the message says which and why."""


@dataclass(frozen=True)
class ProducerInput:
    """One native input: its test ID (the path under the --inputs root) and its file."""

    id: str
    path: Path


@dataclass(frozen=True)
class Target:
    """One implementation under test."""

    #: Unique among the run's targets: the report column and the test-ID prefix.
    key: str
    name: str
    version: str | None
    command: tuple[str, ...]
    protocol: str
    timeout: float
    roles: tuple[str, ...]
    cwd: str | None = None
    accept_codes: frozenset[int] = frozenset({0})
    reject_codes: frozenset[int] = frozenset({1})
    placeholder: str | None = None
    inputs: tuple[ProducerInput, ...] = ()
    expectations: Path | None = None
    #: False for the bundled reference (no --implementation given).
    given: bool = True
    source: str = ""
    #: Environment variables passed through to the implementation (a manifest's pass_env, --pass-env).
    pass_env: tuple[str, ...] = ()
    #: Native formats the producer is fuzzed in (--source-format, a manifest's source_formats); empty:
    #: the formats its inputs are in.
    source_formats: tuple[str, ...] = ()
    #: Its containment choices (a manifest's network, limits and allow_read).
    policy: Policy | None = None
    #: Whether a rejection naming a rule outside the case's naming set fails (``--strict-reasons``, a
    #: manifest's ``strict_reasons``); otherwise reasons are a figure beside the verdict.
    strict_reasons: bool = False

    @property
    def label(self) -> str:
        return " ".join(filter(None, [self.name, self.version]))

    def adapter(self, role: str, check_protocol: bool = False) -> RoleAdapter:
        """The adapter for one role: a persistent process (which serves every role) or a one-shot runner."""
        if role == "validator":
            return self.validator_adapter(check_protocol)
        if role == "reader":
            return self.reader_adapter(check_protocol)
        if role == "producer":
            return self.producer_adapter(check_protocol)
        raise TargetError(f"unknown role {role!r}; the roles are {', '.join(PROTOCOLS)}")

    def validator_adapter(self, check_protocol: bool = False) -> ValidatorAdapter:
        if self.protocol == "persistent":
            return self._persistent("validator", check_protocol)
        return OneShotValidator(self.command, self.timeout, self.accept_codes, self.reject_codes,
                                self.placeholder, self.cwd, self.pass_env, self.policy)

    def reader_adapter(self, check_protocol: bool = False) -> ReaderAdapter:
        if self.protocol == "persistent":
            return self._persistent("reader", check_protocol)
        return OneShotReader(self.command, self.timeout, self.placeholder, self.cwd, self.pass_env, self.policy)

    def producer_adapter(self, check_protocol: bool = False) -> ProducerAdapter:
        if self.protocol == "persistent":
            return self._persistent("producer", check_protocol)
        return OneShotProducer(self.command, self.timeout, self.placeholder, self.cwd, pass_env=self.pass_env,
                               policy=self.policy)

    def _persistent(self, role: str, check_protocol: bool) -> PersistentImplementation:
        """One process in one role (a persistent implementation serves every role it announces)."""
        return PersistentImplementation(self.command, self.timeout, self.cwd, check_schemas=check_protocol,
                                        role=role, pass_env=self.pass_env, policy=self.policy)


def default_role(inputs: Sequence[str], source_formats: Sequence[str] = ()) -> str:
    """docs/contract.md §1.1: producer when inputs or source formats are given, else validator."""
    return "producer" if inputs or source_formats else "validator"


def resolve_targets(implementations: Sequence[str], role: str | None, inputs: Sequence[str],
                    protocol_flag: bool, timeout: float | None, expectations: str | None,
                    source_formats: Sequence[str] = (), strict_reasons: bool = False,
                    packs: Packs | None = None) -> list[Target]:
    """Every --implementation as a Target (the bundled reference when there is none).

    ``strict_reasons`` (``--strict-reasons``) holds every one to its reasons; a manifest can ask it alone.
    Source formats are named among ``packs`` (the run's; every installed pack by default)."""
    formats = canonical_formats(source_formats, "--source-format", packs)
    if not implementations:
        return [replace(bundled_reference(role, inputs, timeout, expectations), source_formats=formats,
                        strict_reasons=strict_reasons)]
    targets = [
        _target(given, role, inputs, protocol_flag, timeout, expectations, formats, packs) for given in implementations
    ]
    if strict_reasons:
        targets = [replace(t, strict_reasons=True) for t in targets]
    return _unique_keys(targets)


def canonical_formats(names: Sequence[str], origin: str, packs: Packs | None = None) -> tuple[str, ...]:
    """Format names as the packs know them (``codex`` -> ``codex-rollout-jsonl``); a name no installed pack
    answers to is an error that lists the formats available (a format whose pack has no generator is
    accepted: the verdict then says it was not fuzzed)."""
    if not names:
        return ()
    if packs is None:
        from asr_conformance.packs.registry import installed

        packs = installed()
    found = []
    for name in names:
        chosen = packs.for_format(name)
        if chosen is None:
            available = ", ".join(
                f"{i.pack.format}{'' if i.pack.generator is not None else ' (no generator)'}" for i in packs.installed)
            raise TargetError(f"{origin}={name}: no installed format pack reads this format; available: {available}")
        found.append(chosen.pack.format)
    return tuple(dict.fromkeys(found))


def bundled_reference(role: str | None, inputs: Sequence[str], timeout: float | None,
                      expectations: str | None) -> Target:
    """The embedded default: the reference over the persistent protocol, in every role it can play here."""
    from asr_conformance import __version__

    found = expand_inputs(inputs) if inputs else _reference_samples()
    roles = (role,) if role else tuple(r for r in ROLES if r != "producer" or found)
    return Target(
        key="reference", name="asr-conformance-reference", version=__version__,
        command=(sys.executable, "-m", "asr_conformance.reference.server"), protocol="persistent",
        timeout=timeout or DEFAULT_TIMEOUT, roles=roles, inputs=found,
        expectations=Path(expectations) if expectations else None, given=False, source="bundled",
    )


def _reference_samples() -> tuple[ProducerInput, ...]:
    found = [str(folder) for folder in REFERENCE_SAMPLES if folder.is_dir()]
    return expand_inputs(found) if found else ()


def _target(given: str, role: str | None, inputs: Sequence[str], protocol_flag: bool,
            timeout: float | None, expectations: str | None, source_formats: tuple[str, ...] = (),
            packs: Packs | None = None) -> Target:
    path = Path(given)
    if path.suffix == ".toml":
        try:
            manifest = load_manifest(path)
        except ManifestError as error:
            raise TargetError(str(error)) from None
        if role and role not in manifest.roles:
            raise TargetError(f"{path}: roles {list(manifest.roles)} do not include {role}")
        roles = (role,) if role else manifest.roles
        patterns = inputs or manifest.inputs
        found = expand_inputs(patterns, origin=f"{path}: inputs" if not inputs else "--inputs") if patterns else ()
        formats = source_formats or canonical_formats(manifest.source_formats, f"{path}: source_formats", packs)
        if "producer" in roles and not found and not formats:
            raise TargetError(f"{path}: the producer role needs inputs (--inputs, or inputs in the manifest) "
                              "or the source formats to fuzz (--source-format, or source_formats)")
        chosen = Path(expectations) if expectations else manifest.expectations
        return Target(
            key=manifest.name, name=manifest.name, version=manifest.version, command=manifest.command,
            protocol=manifest.protocol, timeout=timeout or manifest.timeout or DEFAULT_TIMEOUT, roles=roles,
            cwd=str(manifest.folder), accept_codes=manifest.accept_codes, reject_codes=manifest.reject_codes,
            placeholder=manifest.placeholder, inputs=found, expectations=chosen, source=str(path),
            pass_env=manifest.pass_env, source_formats=formats, policy=manifest.policy,
            strict_reasons=manifest.strict_reasons,
        )
    if not path.exists():
        raise TargetError(f"--implementation={given}: no such file")
    if path.is_dir():
        raise TargetError(f"--implementation={given}: is a directory; give the executable inside it, "
                          "or describe it with a .toml manifest")
    if not os.access(path, os.X_OK):
        raise TargetError(f"--implementation={given}: not an executable file "
                          "(chmod +x it, or describe it with a .toml manifest)")
    chosen_role = role or default_role(inputs, source_formats)
    found = expand_inputs(inputs) if inputs else ()
    if chosen_role == "producer" and not found and not source_formats:
        raise TargetError(f"--implementation={given}: the producer role needs --inputs (or --source-format, to "
                          "fuzz it with generated transcripts only)")
    return Target(
        key=path.name, name=path.name, version=None, command=(str(path.resolve()),),
        protocol="persistent" if protocol_flag else "oneshot", timeout=timeout or DEFAULT_TIMEOUT,
        roles=(chosen_role,), inputs=found, expectations=Path(expectations) if expectations else None,
        source=given, source_formats=source_formats,
    )


def _unique_keys(targets: list[Target]) -> list[Target]:
    """Two implementations with the same name get -2, -3... so report columns stay apart."""
    seen: dict[str, int] = {}
    unique = []
    for target in targets:
        key = re.sub(r"[^A-Za-z0-9._-]+", "-", target.key) or "implementation"
        seen[key] = seen.get(key, 0) + 1
        unique.append(replace(target, key=key if seen[key] == 1 else f"{key}-{seen[key]}"))
    return unique


_GLOB = re.compile(r"[*?\[]")


def expand_inputs(patterns: Sequence[str], origin: str = "--inputs") -> tuple[ProducerInput, ...]:
    """Files, folders (every file below, hidden ones left out) and globs, in a stable order.

    A fuzz counterexample's ``.case.toml`` (what the file beside it holds) is never an input, so a
    folder of counterexamples can be given as it is.

    A pattern that matches nothing is an error: a producer certified on no
    input would be certified on nothing."""
    found: dict[Path, ProducerInput] = {}
    for pattern in patterns:
        path = Path(pattern)
        if _GLOB.search(pattern):
            prefix = _GLOB.split(pattern, 1)[0]  # the folder part before the first wildcard
            base = Path(prefix) if prefix.endswith(("/", os.sep)) else Path(prefix).parent
            matches = [Path(m) for m in sorted(glob.glob(pattern, recursive=True))
                       if Path(m).is_file() and not m.endswith(CASE_SUFFIX)]
        elif path.is_dir():
            base = path
            matches = sorted(p for p in path.rglob("*") if p.is_file() and not p.name.endswith(CASE_SUFFIX)
                             and not any(part.startswith(".") for part in p.relative_to(path).parts))
        elif path.is_file():
            base, matches = path.parent, [path]
        else:
            raise TargetError(f"{origin}={pattern}: no such file or folder")
        if not matches:
            raise TargetError(f"{origin}={pattern}: matches no file")
        for match in matches:
            resolved = match.resolve()
            if resolved not in found:
                found[resolved] = ProducerInput(match.relative_to(base).as_posix(), resolved)
    return _unique_input_ids(list(found.values()))


def _unique_input_ids(inputs: list[ProducerInput]) -> tuple[ProducerInput, ...]:
    counts: dict[str, int] = {}
    unique = []
    for item in inputs:
        counts[item.id] = counts.get(item.id, 0) + 1
        unique.append(item if counts[item.id] == 1 else ProducerInput(f"{item.id}~{counts[item.id]}", item.path))
    return tuple(unique)
