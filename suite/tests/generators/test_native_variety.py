"""Generated transcripts vary every field a converter could fingerprint: agent versions over the ranges the
format's releases span, project paths under several roots with drawn names, session IDs, and start times
over years. A converter that recognised generated inputs by any of them could behave only on those (and
the harness disguises each copy it sends besides, so even Hypothesis's simplest examples are new each run)."""

from __future__ import annotations

import re
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asr_conformance.generators.native import formats, generator
from asr_conformance.generators.native.common import NativeTranscript, project_path

EXAMPLES = 60
SESSION = {"claude-code-jsonl": r'"sessionId":"([^"]+)"', "codex-rollout-jsonl": r'"id":"([0-9a-f-]{36})"',
           "gemini-cli-session": r'"sessionId":\s*"([^"]+)"'}
VERSION = {"claude-code-jsonl": r'"version":"([^"]+)"', "codex-rollout-jsonl": r'"cli_version":"([^"]+)"'}
PATH = r'"(?:cwd|directories)":\s*\[?"(/[^"]*)"'
YEAR = r'"(20\d\d)-\d\d-\d\dT'


@cache
def drawn(format: str) -> tuple[str, ...]:
    """The text of EXAMPLES generated transcripts of the format (derandomized: the same every run), drawn once per
    process for the module's fixture and the version test alike."""
    seen: list[NativeTranscript] = []

    @settings(max_examples=EXAMPLES, derandomize=True, database=None, deadline=None)
    @given(generator(format).transcripts())
    def collect(transcript: NativeTranscript) -> None:
        seen.append(transcript)

    collect()
    return tuple(t.data().decode() for t in seen)


def first(pattern: str, text: str) -> str | None:
    match = re.search(pattern, text)
    return match.group(1) if match else None


@pytest.fixture(scope="module", params=formats())
def texts(request: pytest.FixtureRequest) -> tuple[str, list[str]]:
    return request.param, list(drawn(request.param))


def test_session_ids_are_fresh(texts: tuple[str, list[str]]) -> None:
    format, generated = texts
    ids = [first(SESSION[format], text) for text in generated]
    assert None not in ids
    # Hypothesis's simplest examples repeat; each copy sent is disguised afresh anyway (test_disguise.py).
    assert len(set(ids)) >= 10


def test_start_times_span_years(texts: tuple[str, list[str]]) -> None:
    _, generated = texts
    years = {first(YEAR, text) for text in generated}
    assert len(years - {None}) >= 2


def test_project_paths_are_drawn_not_fixed(texts: tuple[str, list[str]]) -> None:
    """Every format records drawn paths. How many differ depends on how many of the (simplest-first)
    examples record one, so the variety itself is measured on the path strategy below."""
    format, generated = texts
    per_transcript = [set(re.findall(PATH, text)) | set(re.findall(r"Workspace: (/[^\\\n]+)", text))
                      for text in generated]
    assert len(set().union(*per_transcript)) >= 3, per_transcript


def test_project_paths_come_from_several_roots_and_many_names() -> None:
    paths: list[str] = []

    @settings(max_examples=EXAMPLES, derandomize=True, database=None, deadline=None)
    @given(st.composite(project_path)())
    def collect(path: str) -> None:
        paths.append(path)

    collect()
    assert all(p.startswith("/") and "//" not in p for p in paths), paths
    assert len({p.split("/")[1] for p in paths}) >= 3, paths
    assert len(set(paths)) >= EXAMPLES // 2, paths


@pytest.mark.parametrize("format", sorted(VERSION))
def test_agent_versions_vary_over_the_release_ranges(format: str) -> None:
    versions = {first(VERSION[format], text) for text in drawn(format)} - {None}
    assert len(versions) >= 10, versions
    assert all(re.fullmatch(r"\d+\.\d+\.\d+", v) for v in versions)
    assert len({v.rsplit(".", 1)[0] for v in versions}) >= 2, "more than one minor release"
