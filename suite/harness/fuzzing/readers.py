"""Fuzzing readers: generated streams through the reader, the reference reader as oracle.

Each generated stream (valid by construction) goes to the reader under test; its view must
match the view schema and equal the reference reader's on every member the pages settle
(``settled_view``), compared as a case compares (``harness.judging.views``). Members that rest on an
open assumption are left out: ``changes`` (A-FILE-CHANGE), ``problems`` (never compared), and
the instructions lists when the stream holds an instructions record the pages leave open
(no or another scope, turn scope without a turnId, a revision: A-INSTRUCTIONS-SCOPE,
A-INSTRUCTIONS-TURN, A-INSTRUCTIONS-REVISION).

A failure names the rules of the members that differ (``rules_of``), is shrunk by Hypothesis
within the shrink budget of ``harness.fuzzing.profiles``, and is written as a reader case (stream,
metadata and expected view) that the reader corpus test replays with ``--cases``.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import settings

from asr_conformance.harness.adapters.answers import Outcome
from asr_conformance.harness.adapters.roles import ReaderAdapter
from asr_conformance.harness.fuzzing.profiles import PropertyRunner, ShrinkBudget
from asr_conformance.harness.judging.views import at_version, check_view, compare_views, declared_version
from asr_conformance.reference.reader import UnreadableStream, read_view

#: View members never compared in fuzzing: they rest on an open assumption, or are never compared.
UNSETTLED_MEMBERS = ("changes", "problems")
#: Which rules a difference at a view member names, most specific first.
_RULES: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = tuple((re.compile(p), rules) for p, rules in (
    (r"^/session_info/titleSource", ("ASR-181",)),
    (r"^/session_info", ("ASR-160",)),
    (r"^/lossy", ("ASR-163",)),
    (r"^/in_force/[^/]+/(profiles|extensions)", ("ASR-163",)),
    (r"^/in_force/[^/]+/contentLevel", ("ASR-165",)),
    (r"^/in_force/[^/]+/(agentVersion|client|environment)", ("ASR-179",)),
    (r"^/in_force/[^/]+/instructions", ("ASR-174",)),
    (r"^/in_force", ("ASR-163", "ASR-165", "ASR-179")),
    (r"^/instructions", ("ASR-174",)),
    (r"^/calls/[^/]+/requestedBy", ("ASR-274",)),
    (r"^/calls/[^/]+/(provider|providerFrom)", ("ASR-276", "ASR-256")),
    (r"^/calls/[^/]+/(result|status)", ("ASR-263", "ASR-265")),
    (r"^/calls", ("ASR-263",)),
    (r"^/pairs", ("ASR-263", "ASR-264", "ASR-262")),
    (r"^/orphans", ("ASR-266", "ASR-064")),
    (r"^/dangling", ("ASR-265",)),
    (r"^/(permissions|unresolved)", ("ASR-269",)),
    (r"^/decisions", ("ASR-279",)),
    (r"^/terminals/[^/]+/readBy", ("ASR-290", "ASR-291")),
    (r"^/terminals", ("ASR-271",)),
    (r"^/terminal_reads", ("ASR-290", "ASR-291")),
    (r"^/records", ("ASR-170",)),
))


def rules_of(paths: list[str]) -> list[str]:
    """The rules the differing view members belong to, in the order of the differences."""
    found: list[str] = []
    for path in paths:
        for pattern, rules in _RULES:
            if pattern.match(path):
                found += [rule for rule in rules if rule not in found]
                break
    return found


def instructions_settled(records: list[dict[str, Any]]) -> bool:
    """Whether the pages settle which instructions records are in force: every one has scope
    session, or scope turn with a turnId, and none supersedes another."""
    for record in records:
        if record.get("type") != "instructions":
            continue
        scope = record.get("scope")
        if "supersedes" in record or scope not in ("session", "turn"):
            return False
        if scope == "turn" and type(record.get("turnId")) is not str:
            return False
    return True


def settled_view(view: dict[str, Any], records: list[dict[str, Any]]) -> dict[str, Any]:
    """The members of a reference view that the pages settle for this stream (see the module docstring)."""
    settled = {name: value for name, value in view.items() if name not in UNSETTLED_MEMBERS}
    if not instructions_settled(records):
        settled.pop("instructions", None)
        settled["in_force"] = {seq: {k: v for k, v in entry.items() if k != "instructions"}
                               for seq, entry in view.get("in_force", {}).items()}
    return settled


class ReaderFuzzSession(PropertyRunner):
    """What a reader fuzz test needs: the reader's adapter, and judging its views of generated streams.

    Property bodies call ``expect_view``; a failure is written as a reader case."""

    def __init__(self, adapter: ReaderAdapter, scratch: Path, counterexamples: Path, replay: list[str],
                 hypothesis_settings: settings, seed: int | None, budget: ShrinkBudget | None = None,
                 database_key: str = "", record: Callable[[str, object], None] | None = None,
                 long_shapes: bool = True) -> None:
        super().__init__(scratch, counterexamples, replay, hypothesis_settings, seed, budget, database_key, record,
                         long_shapes)
        self.adapter = adapter
        #: The rules the last failure named (the shrunk counterexample's), for the test's record.
        self.broken: list[str] = []

    def _write(self, failure: dict[str, Any]) -> tuple[Path, str]:
        return write_reader_counterexample(self.counterexamples, replay=self.replay, **failure)

    def expect_view(self, records: list[dict[str, Any]], data: bytes, name: str, description: str,
                    rules: tuple[str, ...] | list[str]) -> None:
        """Judge the reader's view of one generated stream against the reference's settled members.

        ``rules``: the rules the property exercises, named when a difference belongs to none."""
        from hypothesis import assume

        if self._from_memory(data):
            return
        stream = self.scratch / f"{hashlib.sha256(data).hexdigest()[:16]}.jsonl"
        self.scratch.mkdir(parents=True, exist_ok=True)
        stream.write_bytes(data)
        try:
            reference = read_view(stream)
        except (OSError, UnreadableStream):
            assume(False)  # a generator slip (no record): the project's tests catch those
        # A generator slip must not be blamed on the implementation (the project's tests catch those).
        assume(not reference["problems"])
        expected = settled_view(reference, records)
        self._counted()
        try:
            answer = self.adapter.read(stream)
        finally:
            stream.unlink(missing_ok=True)
        failure = dict(test_name=name, data=data, expected=expected, description=description, rules=list(rules))
        if answer.outcome is not Outcome.VIEWED or not isinstance(answer.view, dict):
            self._fail(f"no view of {description}", answer.explain(), failure)
        problem = check_view(answer.view)
        if problem:
            self._fail(f"the view of {description} breaks the view schema: {problem}", "", failure)
        # A reader is compared on the members of the view version it declares (docs/contract.md §5).
        expected = at_version(expected, declared_version(answer.view))[0]
        differences = compare_views(expected, answer.view)
        if differences:
            named = rules_of([d.path for d in differences]) or list(rules)
            self.broken = named
            failure["rules"] = named
            count = f"{len(differences)} difference{'s' if len(differences) != 1 else ''}"
            lines = [f"  {d.path}: {d.message}" for d in differences[:12]]
            self._fail(f"{', '.join(named)}: the view of {description} differs from the reference reader's "
                       f"({count})", "\n".join(lines), failure)


def write_reader_counterexample(folder: Path, test_name: str, data: bytes, expected: dict[str, Any], description: str,
                                rules: list[str], replay: list[str]) -> tuple[Path, str]:
    """Write a ready reader case (stream, metadata, expected view); return it and its replay command.

    Named by the test and a digest of the bytes, under ``reader/<first rule>/``, as the reader
    corpus test reads it with ``--cases=FOLDER``; every path in the command is absolute."""
    folder = folder.resolve()
    digest = hashlib.sha256(data).hexdigest()[:12]
    case_dir = folder / "reader" / (rules[0] if rules else "fuzz")
    case_dir.mkdir(parents=True, exist_ok=True)
    stem = f"valid-{test_name}-{digest}"
    stream = case_dir / f"{stem}.jsonl"
    stream.write_bytes(data)
    (case_dir / f"{stem}.view.json").write_text(json.dumps(expected, ensure_ascii=False, indent=1) + "\n",
                                               encoding="utf-8")
    what = f"{description}: a reader must give the reference reader's view of it on every member the pages settle"
    metadata = [
        f"description = {json.dumps(what, ensure_ascii=False)}",
        'verdict = "valid"',
        f"rules = {json.dumps(rules)}",
        'spec = "Found by the reader fuzz harness (see the rules\' sections in the pages)"',
        f'view = "{stem}.view.json"',
    ]
    stream.with_suffix(".toml").write_text("\n".join(metadata) + "\n", encoding="utf-8")
    command = shlex.join(["pytest", *replay, f"--cases={folder}", "--report-dir=none", "-p", "no:cacheprovider",
                          "-k", stem])
    return stream, command
