"""Expectations files: an implementation's known failures, so a run can gate on new ones.

    # acme-expectations.toml
    [[failure]]
    case = "validator/ASR-164/invalid-loosen-redacted-to-full"
    reason = "contentLevel tightening is not checked yet"
    issue = "https://example.org/acme/issues/12"      # optional

    [[failure]]
    rule = "ASR-263"                                  # every case of a rule
    reason = "pairing by nativeCallId, to be removed in 3.0"
    implementation = "acme"                           # optional: only this column of a side-by-side run

A listed failure is reported as an expected failure and does not fail the
run; an unlisted failure does; an entry whose failures are all gone (its case
passed, or every case of its rule passed) is stale and fails the run, so the
file never outlives the bugs it lists.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from asr_conformance.gate.results import FAILING, SCORED, Result
from asr_conformance.vocabulary.errors import UserError
from asr_conformance.vocabulary.schemas import FileProblem, load_checked_toml


class ExpectationsError(UserError):
    """An expectations file the harness cannot use; the message names the file and entry."""


@dataclass(frozen=True, slots=True)
class Expectation:
    """One known failure: a case (any result ID) or a whole rule."""

    index: int
    reason: str
    case: str | None = None
    rule: str | None = None
    issue: str | None = None
    implementation: str | None = None

    @property
    def label(self) -> str:
        what = f"case {self.case}" if self.case else f"rule {self.rule}"
        return what + (f" ({self.implementation})" if self.implementation else "")

    def covers(self, result_id: str, rules: Iterable[str], implementation: str) -> bool:
        if self.implementation and self.implementation != implementation:
            return False
        return result_id == self.case if self.case else self.rule in set(rules)

    def excuse(self) -> str:
        return f"known failure ({self.label}): {self.reason}" + (f" <{self.issue}>" if self.issue else "")


def load_expectations(path: Path) -> tuple[Expectation, ...]:
    try:
        data = load_checked_toml(path, "expectations.schema.json", "expectations file")
    except FileProblem as problem:
        raise ExpectationsError(str(problem)) from None
    return tuple(
        Expectation(i, entry["reason"], entry.get("case"), entry.get("rule"), entry.get("issue"),
                    entry.get("implementation"))
        for i, entry in enumerate(data.get("failure", []))
    )


def check_entries(path: Path, expectations: Sequence[Expectation], case_ids: Iterable[str],
                  test_prefixes: Iterable[str], rule_ids: Iterable[str], implementations: Iterable[str]) -> None:
    """Raise ExpectationsError for the first entry that can match no result of the suite: a case ID that is
    neither a corpus case nor a test of the conformance suite (``role/test_name[...]``), a rule outside the
    catalog, an implementation the run does not certify.  Such an entry would excuse nothing, silently."""
    cases, prefixes, rules, keys = set(case_ids), set(test_prefixes), set(rule_ids), set(implementations)
    for entry in expectations:
        where = f"{path}: entry {entry.index + 1} ({entry.label})"
        if entry.case is not None and entry.case not in cases and entry.case.split("[", 1)[0] not in prefixes:
            raise ExpectationsError(f"{where} matches no case: no corpus case or conformance test has this ID "
                                    "(result IDs are in report.json)")
        if entry.rule is not None and entry.rule not in rules:
            raise ExpectationsError(f"{where} matches no case: {entry.rule} is not a rule of the catalog")
        if entry.implementation is not None and entry.implementation not in keys:
            raise ExpectationsError(f"{where} matches no case: the run certifies no implementation "
                                    f"{entry.implementation!r} (it certifies {', '.join(sorted(keys))})")


def matching(expectations: Sequence[Expectation], result_id: str, rules: Iterable[str],
             implementation: str) -> Expectation | None:
    """The first entry that excuses a failure of this result (case entries before rule entries)."""
    rules = tuple(rules)
    ordered = sorted(expectations, key=lambda e: (e.case is None, e.index))
    return next((e for e in ordered if e.covers(result_id, rules, implementation)), None)


def stale(expectations: Sequence[Expectation], results: Sequence[Result]) -> list[Expectation]:
    """Entries that excused nothing although their cases ran: the failure they list is gone.

    An entry none of whose cases ran (deselected, other role) is not stale:
    the run says nothing about it."""
    found = []
    for entry in expectations:
        covered = [r for r in results if r.outcome in SCORED and entry.covers(r.id, r.rules, r.implementation)]
        if covered and not any(r.outcome == "expected-fail" or r.outcome in FAILING for r in covered):
            found.append(entry)
    return found


def write_expectations(path: Path, results: Sequence[Result], multiple: bool) -> int:
    """Write every failure of a run as an entry to edit (reasons are the first line of each message)."""
    failures = [r for r in results if r.outcome in FAILING or r.outcome == "expected-fail"]
    lines = [
        "# Known failures, written by --write-expectations from a run.",
        "# Replace each reason with the real one, and add an issue URL where there is one.",
        "# Read with: pytest --expectations=" + path.name,
        "",
    ]
    for result in sorted(failures, key=lambda r: (r.implementation, r.id)):
        first = _what_went_wrong(result.message) or result.outcome
        lines += ["[[failure]]", f"case = {_toml_string(result.id)}", f"reason = {_toml_string(first[:200])}"]
        if result.rules:
            lines.append(f"# rules: {', '.join(result.rules)}")
        if multiple:
            lines.append(f"implementation = {_toml_string(result.implementation)}")
        lines.append("")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines), encoding="utf-8")
    return len(failures)


def _what_went_wrong(message: str) -> str:
    """The first line of a failure message that says what happened (not the case header, not its
    indented description), e.g. 'accepted an invalid stream; it breaks ASR-260'."""
    lines = [line for line in message.splitlines() if line.strip()]
    telling = [line for line in lines if not line.startswith(("case ", " ", "\t"))]
    return (telling or lines or [""])[0].strip()


def _toml_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a valid TOML basic string
