"""Which pack judged an input: name, version, distribution, a digest of its files, built-in or not.

A certificate is only as good as its judge, so every producer result names the pack that
read its input, and the digest lets a certifier tell that pack's code from any other build
of the same name and version.
"""

from __future__ import annotations

import hashlib
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from asr_conformance.packs.pack import FormatPack

#: The distribution the built-in packs ship in.
SUITE_DISTRIBUTION = "asr-conformance"


@dataclass(frozen=True)
class PackIdentity:
    """What reports say about a judge."""

    name: str
    version: str
    #: The installed distribution the pack came from (``asr-conformance`` for built-ins).
    distribution: str
    #: SHA-256 over the pack's module files (their names and bytes, in name order).
    sha256: str
    builtin: bool
    #: The format the pack reads (``producer.source.format``).
    format: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PackIdentity:
        return cls(**{k: data[k] for k in ("name", "version", "distribution", "sha256", "builtin", "format") if k in data})

    def label(self) -> str:
        """``toy-pack 0.3.0 (third-party, toy-pack-dist)`` or ``claude-code 0.1.0 (built-in)``."""
        origin = "built-in" if self.builtin else f"third-party, {self.distribution}"
        return f"{self.name} {self.version} ({origin})"


def module_files(modules: tuple[str, ...]) -> list[Path]:
    """The source files of the named (already imported) modules; modules without a file are left out."""
    files = []
    for name in modules:
        module = sys.modules.get(name)
        where = getattr(module, "__file__", None)
        if where:
            files.append(Path(where))
    return sorted(set(files))


def digest_of(files: list[Path]) -> str:
    """SHA-256 over each file's name and bytes; an unreadable file counts by its name alone."""
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode("utf-8") + b"\0")
        try:
            digest.update(path.read_bytes())
        except OSError:
            digest.update(b"(unreadable)")
        digest.update(b"\0")
    return digest.hexdigest()


def identify(pack: FormatPack, distribution: str, builtin: bool) -> PackIdentity:
    return PackIdentity(pack.name, pack.version, distribution, digest_of(module_files(pack.member_modules())), builtin,
                        pack.format)
