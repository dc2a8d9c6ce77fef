"""The case corpus: byte-exact streams with TOML metadata beside them.

A case is ``cases/<role>/<group>/<name>.jsonl`` with ``<name>.toml`` beside
it; its ID is the path under ``cases/`` without the suffix.  A reader case
(``cases/reader/...``) also has its expected view beside it, named by
the metadata's ``view`` key (``<name>.view.json``).  The format is
documented for other languages in cases/README.md and its metadata schema in
cases/schema/case.schema.json.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from asr_conformance import CORPUS_DIR
from asr_conformance.vocabulary.errors import UserError
from asr_conformance.vocabulary.schemas import first_problem
from asr_conformance.vocabulary.seen_digests import SeenDigests, package_cache_folder

VERDICTS = ("valid", "invalid", "implementation-defined")


class CorpusError(UserError):
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
    #: For reader cases: the file holding the expected view (the members the case is about).
    expected_view: Path | None = None
    #: What the stream breaks, as a key shared with mutator modes that break it the same way.
    defect: str | None = None
    #: For reader cases: JSON pointers into the expected view compared member by member
    #: although the view schema compares them whole or by keys.
    partial: tuple[str, ...] = ()

    @property
    def role(self) -> str:
        return self.id.split("/", 1)[0]

    @property
    def view_scored(self) -> bool:
        """Whether a reader's view of this case is scored: never for an ``impl-`` case (its stream's validity is
        the implementation's choice), nor where the expected view rests on an open assumption."""
        from asr_conformance.vocabulary.scoring import is_scored

        return self.verdict != "implementation-defined" and is_scored(self.assumptions)

    @property
    def scored_rules(self) -> tuple[str, ...]:
        """The rules an implementation can be expected to name (not suite-defined X- rules)."""
        return tuple(rule for rule in self.rules if rule.startswith("ASR-"))

    def data(self) -> bytes:
        return self.stream.read_bytes()

    def view(self) -> dict[str, Any]:
        """The expected view of a reader case (checked to be a JSON object when loaded)."""
        if self.expected_view is None:
            raise CorpusError(f"{self.id} is not a reader case: it has no expected view")
        loaded: dict[str, Any] = json.loads(self.expected_view.read_text(encoding="utf-8"))
        return loaded


@cache
def case_schema() -> dict[str, Any]:
    """The metadata schema is the suite's, whichever folder of cases is read."""
    loaded: dict[str, Any] = json.loads((CORPUS_DIR / "schema" / "case.schema.json").read_text(encoding="utf-8"))
    return loaded


@cache
def _checked() -> SeenDigests:
    """Metadata files whose bytes were found valid against the case schema (checking each took most of
    loading the corpus)."""
    return SeenDigests(package_cache_folder() / "asr-checked-case-metadata.json")


def load_case(metadata_path: Path, corpus: Path = CORPUS_DIR) -> Case:
    """Read one case; raise CorpusError naming the file and what is wrong."""
    stream = metadata_path.with_suffix(".jsonl")
    try:
        raw = metadata_path.read_bytes()
        metadata = tomllib.loads(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise CorpusError(f"{metadata_path}: cannot read case metadata: {error}") from None
    digest = hashlib.sha256(raw).hexdigest()
    checked = _checked()
    if not checked.knows(digest):
        problem = first_problem(case_schema(), metadata)
        if problem:
            raise CorpusError(f"{metadata_path}: {problem}")
        checked.add(digest)
    if not stream.is_file():
        raise CorpusError(f"{metadata_path}: the stream file {stream.name} is missing")
    case_id = metadata_path.relative_to(corpus).with_suffix("").as_posix()
    expected_view = _expected_view(metadata_path, metadata, case_id.split("/", 1)[0])
    return Case(
        id=case_id,
        stream=stream,
        verdict=metadata["verdict"],
        rules=tuple(metadata["rules"]),
        description=metadata["description"].strip(),
        spec=metadata["spec"],
        reference=metadata.get("reference"),
        assumptions=tuple(metadata.get("assumptions", ())),
        expected_view=expected_view,
        defect=metadata.get("defect"),
        partial=tuple(metadata.get("partial", ())),
    )


def _expected_view(metadata_path: Path, metadata: dict[str, Any], role: str) -> Path | None:
    """Reader cases name their expected view; other cases must not."""
    name = metadata.get("view")
    if role != "reader":
        if name is not None or "partial" in metadata:
            raise CorpusError(f"{metadata_path}: only reader cases (under reader/) have a view")
        return None
    expected = f"{metadata_path.stem}.view.json"
    if name != expected:
        raise CorpusError(f"{metadata_path}: a reader case names its expected view: view = \"{expected}\"")
    path = metadata_path.with_name(name)
    try:
        view = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise CorpusError(f"{metadata_path}: cannot read the expected view {name}: {error}") from None
    if not isinstance(view, dict):
        raise CorpusError(f"{metadata_path}: the expected view {name} must be a JSON object")
    return path


def iter_cases(corpus: Path = CORPUS_DIR, role: str | None = None) -> Iterator[Case]:
    """Every case under the corpus (or one role's folder), in a stable order."""
    base = corpus / role if role else corpus
    for metadata_path in sorted(base.rglob("*.toml")):
        if metadata_path.parent == corpus or "schema" in metadata_path.relative_to(corpus).parts[:1]:
            continue  # rules.toml and other corpus-level files
        yield load_case(metadata_path, corpus)
    _checked().save()


def orphan_streams(corpus: Path = CORPUS_DIR) -> list[Path]:
    """Stream files with no metadata beside them (a lint)."""
    return [p for p in sorted(corpus.rglob("*.jsonl")) if not p.with_suffix(".toml").is_file()]
