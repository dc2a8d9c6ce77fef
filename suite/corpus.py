"""The case corpus: byte-exact streams with TOML metadata beside them.

A case is ``cases/<role>/<group>/<name>.jsonl`` with ``<name>.toml`` beside
it; its ID is the path under ``cases/`` without the suffix.  The format is
documented for other languages in cases/README.md and its metadata schema in
cases/schema/case.schema.json.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Iterator

from . import CORPUS_DIR
from .schema_errors import first_problem

VERDICTS = ("valid", "invalid", "implementation-defined")


class CorpusError(Exception):
    """A case file the loader cannot use; the message names the file."""


@dataclass(frozen=True, slots=True)
class Case:
    id: str
    stream: Path
    verdict: str
    rules: tuple[str, ...]
    description: str
    spec: str
    #: For implementation-defined cases: what the reference validator does.
    reference: str | None = None
    assumptions: tuple[str, ...] = ()

    @property
    def role(self) -> str:
        return self.id.split("/", 1)[0]

    @property
    def scored_rules(self) -> tuple[str, ...]:
        """The rules an implementation can be expected to name (not suite-defined X- rules)."""
        return tuple(rule for rule in self.rules if rule.startswith("ASR-"))

    def data(self) -> bytes:
        return self.stream.read_bytes()


@cache
def case_schema() -> dict:
    """The metadata schema is the suite's, whichever folder of cases is read."""
    return json.loads((CORPUS_DIR / "schema" / "case.schema.json").read_text(encoding="utf-8"))


def load_case(metadata_path: Path, corpus: Path = CORPUS_DIR) -> Case:
    """Read one case; raise CorpusError naming the file and what is wrong."""
    stream = metadata_path.with_suffix(".jsonl")
    try:
        metadata = tomllib.loads(metadata_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise CorpusError(f"{metadata_path}: cannot read case metadata: {error}") from None
    problem = first_problem(case_schema(), metadata)
    if problem:
        raise CorpusError(f"{metadata_path}: {problem}")
    if not stream.is_file():
        raise CorpusError(f"{metadata_path}: the stream file {stream.name} is missing")
    case_id = metadata_path.relative_to(corpus).with_suffix("").as_posix()
    return Case(
        id=case_id,
        stream=stream,
        verdict=metadata["verdict"],
        rules=tuple(metadata["rules"]),
        description=metadata["description"].strip(),
        spec=metadata["spec"],
        reference=metadata.get("reference"),
        assumptions=tuple(metadata.get("assumptions", ())),
    )


def iter_cases(corpus: Path = CORPUS_DIR, role: str | None = None) -> Iterator[Case]:
    """Every case under the corpus (or one role's folder), in a stable order."""
    base = corpus / role if role else corpus
    for metadata_path in sorted(base.rglob("*.toml")):
        if metadata_path.parent == corpus or "schema" in metadata_path.relative_to(corpus).parts[:1]:
            continue  # rules.toml and other corpus-level files
        yield load_case(metadata_path, corpus)


def orphan_streams(corpus: Path = CORPUS_DIR) -> list[Path]:
    """Stream files with no metadata beside them (a lint)."""
    return [p for p in sorted(corpus.rglob("*.jsonl")) if not p.with_suffix(".toml").is_file()]
