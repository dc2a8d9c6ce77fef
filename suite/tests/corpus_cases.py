"""The shipped corpus, read once per test process.

A dozen test modules parametrize over the corpus's cases, so every xdist worker read it (each case's
metadata, schema and view) once for each of them while collecting: a fifth of the collection.  Here it
is read once, on first use, and each role's cases are the whole corpus's, in the same order that
``iter_cases(CORPUS_DIR, role=...)`` gives them."""

from __future__ import annotations

from functools import cache

from asr_conformance import CORPUS_DIR
from asr_conformance.vocabulary.cases import Case, iter_cases


@cache
def _every_case() -> tuple[Case, ...]:
    return tuple(iter_cases(CORPUS_DIR))


def corpus_cases(role: str | None = None) -> list[Case]:
    """The shipped corpus's cases (or one role's), as ``list(iter_cases(CORPUS_DIR, role=role))``."""
    return [case for case in _every_case() if role is None or case.id.split("/", 1)[0] == role]
