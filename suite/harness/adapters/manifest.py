"""Implementation manifests (docs/contract.md §3): any command line, described in TOML.

    name = "acme-validator"
    version = "2.3.0"
    roles = ["validator"]
    command = ["bin/acme", "check", "{stream}"]   # or one string, split like a shell
    protocol = "oneshot"                           # or "persistent"
    timeout = 20                                   # seconds per case
    inputs = ["samples/*.log"]                     # producer inputs (globs)
    source_formats = ["codex-rollout-jsonl"]       # native formats to fuzz (default: the inputs' formats)
    expectations = "acme-expectations.toml"
    pass_env = ["ACME_LICENSE_FILE"]               # variables passed through (default: none)
    network = "none"                               # or "host" (a licence server); the sandbox's network
    allow_read = ["/opt/acme-runtime"]             # more folders the sandbox shows read-only
    strict_reasons = true                          # a rejection naming the wrong rule fails its case

    [limits]                                       # per process (docs/contract.md §9)
    memory = "4G"
    cpu = 120

    [exit-codes]
    accept = [0]
    reject = [1]

Relative paths (the command's program, inputs, expectations) are relative to the
manifest's folder, and commands run there.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

from asr_conformance.harness.isolation.limits import LimitError, parse_limit
from asr_conformance.harness.isolation.policies import Policy, UsageError, check_allow_read, check_timeout
from asr_conformance.vocabulary.errors import UserError
from asr_conformance.vocabulary.schemas import FileProblem, load_checked_toml


class ManifestError(UserError):
    """A manifest the harness cannot use; the message names the file and key."""


@dataclass(frozen=True, slots=True)
class Manifest:
    path: Path
    name: str
    version: str | None
    roles: tuple[str, ...]
    command: tuple[str, ...]
    protocol: str
    timeout: float | None
    accept_codes: frozenset[int]
    reject_codes: frozenset[int]
    inputs: tuple[str, ...]
    expectations: Path | None
    pass_env: tuple[str, ...] = ()
    source_formats: tuple[str, ...] = ()
    policy: Policy | None = None
    strict_reasons: bool = False

    @property
    def folder(self) -> Path:
        return self.path.parent

    @property
    def placeholder(self) -> str | None:
        """The placeholder the command uses for the file it is given, if any."""
        for candidate in ("{stream}", "{input}"):
            if any(candidate in part for part in self.command):
                return candidate
        return None


def load_manifest(path: Path) -> Manifest:
    try:
        data = load_checked_toml(path, "manifest.schema.json", "manifest")
    except FileProblem as problem:
        raise ManifestError(str(problem)) from None
    folder = path.resolve().parent
    command = data["command"]
    parts = shlex.split(command) if isinstance(command, str) else list(command)
    if not parts:
        raise ManifestError(f"{path}: command: is empty")
    program = Path(parts[0])
    if not program.is_absolute() and ("/" in parts[0]) and (folder / program).exists():
        parts[0] = str(folder / program)
    timeout = data.get("timeout")
    if timeout is not None:
        try:
            timeout = check_timeout(timeout, f"{path}: timeout")
        except UsageError as error:
            raise ManifestError(str(error)) from None
    try:
        limits = tuple((name, parse_limit(name, value, f"{path}: limits.{name}"))
                       for name, value in data.get("limits", {}).items())
    except LimitError as error:
        raise ManifestError(str(error)) from None
    read_only = tuple(str(folder / p) for p in data.get("allow_read", ()))
    try:
        check_allow_read(read_only, f"{path}: allow_read")
    except UsageError as error:
        raise ManifestError(str(error)) from None
    policy = Policy(network=data.get("network"), limits=limits, read_only=read_only)
    codes = data.get("exit-codes", {})
    expectations = data.get("expectations")
    return Manifest(
        path=path.resolve(),
        name=data["name"],
        version=data.get("version"),
        roles=tuple(data.get("roles", ["validator"])),
        command=tuple(parts),
        protocol=data.get("protocol", "oneshot"),
        timeout=timeout,
        accept_codes=frozenset(codes.get("accept", [0])),
        reject_codes=frozenset(codes.get("reject", [1])),
        inputs=tuple(str(folder / pattern) for pattern in data.get("inputs", [])),
        expectations=(folder / expectations) if expectations else None,
        pass_env=tuple(data.get("pass_env", ())),
        source_formats=tuple(data.get("source_formats", ())),
        policy=policy,
        strict_reasons=bool(data.get("strict_reasons", False)),
    )
