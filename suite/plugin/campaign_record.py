"""What a fuzz campaign found, one file per campaign process, and the account ``asr-conformance summary`` gives of it.

Each HypoFuzz worker is a pytest session of its own, so each writes its own record
(``campaign/<host>-<pid>.json`` under the campaign's report folder): the properties it fuzzed,
how many examples each ran in that process, and the last (shrunk) failing example of each, with
its rules, its counterexample case and the command that replays it.  Nothing here is a verdict:
a campaign runs for as long as it is let run, on whatever properties the scheduler favoured, so
it can show that an implementation is wrong, never that it conforms.
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from asr_conformance.vocabulary.errors import UserError

#: The folder of process records under a campaign's report folder.
RECORDS = "campaign"
#: Marks a record file as this suite's (``summary`` refuses anything else).
KIND = "asr-conformance fuzz campaign"
#: A record is rewritten at most this often (and at once on every failure).
WRITE_INTERVAL = 1.0


@dataclass(slots=True)
class PropertyRecord:
    """One property in one process: examples run, and the last failing example (shrunk once HypoFuzz is done)."""

    node: str
    role: str
    rules: list[str]
    examples: int = 0
    failure: dict[str, Any] | None = None
    #: The example (counted in this process) that first failed and the sha256 of what it sent: a failure
    #: replayed from the shared database is this process's first example of the property.
    first_failure: dict[str, Any] | None = None
    #: The database key and entry this process saved for an ordinary run to replay (not in the record).
    saved: tuple[bytes, bytes] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"node": self.node, "role": self.role, "rules": self.rules, "examples": self.examples,
                "failure": self.failure, "first_failure": self.first_failure}


@dataclass(slots=True)
class ProcessRecord:
    """The record one campaign process keeps and rewrites (atomically) as it runs."""

    folder: Path
    implementation: str
    started: float = field(default_factory=time.time)
    #: When the process ran its first example (after its collection and its first fixtures).
    first_example: float | None = None
    properties: dict[str, PropertyRecord] = field(default_factory=dict)
    _written: float = 0.0

    @property
    def path(self) -> Path:
        return self.folder / RECORDS / f"{socket.gethostname()}-{os.getpid()}.json"

    def to_json(self) -> dict[str, Any]:
        return {"kind": KIND, "implementation": self.implementation, "host": socket.gethostname(),
                "pid": os.getpid(), "started": self.started, "first_example": self.first_example, "updated": time.time(),
                "properties": {name: p.to_json() for name, p in sorted(self.properties.items())}}

    def write(self, force: bool = False) -> None:
        """Rewrite the record, at most once a ``WRITE_INTERVAL`` unless ``force``; a reader never sees half a file."""
        now = time.monotonic()
        if not force and now - self._written < WRITE_INTERVAL:
            return
        self._written = now
        target = self.path
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f".{target.name}.partial")
        partial.write_text(json.dumps(self.to_json(), indent=1) + "\n", encoding="utf-8")
        os.replace(partial, target)


class CampaignRecordError(UserError, ValueError):
    """A campaign folder or record that cannot be read; the message names the file."""


def campaign_records(where: Path) -> list[Path]:
    """The process records of a campaign: ``where`` is its report folder, its ``campaign/`` folder or one record."""
    if where.is_file():
        return [where]
    folder = where / RECORDS if (where / RECORDS).is_dir() else where
    return sorted(p for p in folder.glob("*.json") if not p.name.startswith("."))


def is_campaign(where: Path) -> bool:
    """Whether ``where`` holds campaign records rather than a certification's report.json."""
    if where.is_dir():
        return bool(campaign_records(where))
    return where.suffix == ".json" and where.parent.name == RECORDS


def load_records(where: Path) -> list[dict[str, Any]]:
    records = []
    for path in campaign_records(where):
        try:
            loaded = json.loads(path.read_text(encoding="utf-8"))
        except OSError as error:
            raise CampaignRecordError(f"{path}: cannot read: {error.strerror or error}") from None
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise CampaignRecordError(f"{path}: not a campaign record: {error}") from None
        if not isinstance(loaded, dict) or loaded.get("kind") != KIND or not isinstance(loaded.get("properties"), dict):
            raise CampaignRecordError(f"{path}: not a campaign record this suite wrote (no \"kind\": \"{KIND}\")")
        records.append(loaded)
    if not records:
        raise CampaignRecordError(f"{where}: no campaign records (campaign/*.json) in it")
    return records


@dataclass(slots=True)
class CampaignSummary:
    """Every process's record merged: examples per property, and each distinct failing example once."""

    processes: int
    hosts: list[str]
    implementations: list[str]
    examples: dict[str, int]
    roles: dict[str, str]
    failures: dict[str, list[dict[str, Any]]]

    @property
    def total_examples(self) -> int:
        return sum(self.examples.values())


def summarize(records: Iterable[dict[str, Any]]) -> CampaignSummary:
    examples: dict[str, int] = {}
    roles: dict[str, str] = {}
    failures: dict[str, dict[str, dict[str, Any]]] = {}
    hosts, implementations, count = set(), set(), 0
    for record in records:
        count += 1
        hosts.add(str(record.get("host")))
        implementations.add(str(record.get("implementation")))
        for name, prop in record["properties"].items():
            examples[name] = examples.get(name, 0) + int(prop.get("examples", 0))
            roles[name] = str(prop.get("role", ""))
            failure = prop.get("failure")
            if isinstance(failure, dict):
                failures.setdefault(name, {})[str(failure.get("sha256"))] = failure
    return CampaignSummary(count, sorted(hosts), sorted(implementations), dict(sorted(examples.items())), roles,
                           {name: list(found.values()) for name, found in sorted(failures.items())})


def render_summary(summary: CampaignSummary) -> list[str]:
    """The terminal account of a campaign; it names no verdict, since a campaign certifies nothing."""
    lines = [f"fuzz campaign of {', '.join(summary.implementations)}: {summary.processes} process record(s) on "
             f"{len(summary.hosts)} host(s), {len(summary.examples)} properties, {summary.total_examples} examples",
             "a campaign certifies nothing (no verdict, no badge): certify with pytest --implementation=..."]
    for name, count in summary.examples.items():
        found = summary.failures.get(name, [])
        lines.append(f"  {name}: {count} examples" + (f", {len(found)} failing example(s)" if found else ""))
        for failure in found:
            lines.append(f"    FAILED ({', '.join(failure.get('rules') or [])}): {failure.get('message', '')}")
            lines.append(f"      counterexample: {failure.get('counterexample')}")
            lines.append(f"      replay: {failure.get('replay')}")
    failing = sum(len(found) for found in summary.failures.values())
    lines.append(f"{failing} failing example(s) in {len(summary.failures)} of {len(summary.examples)} properties")
    return lines
