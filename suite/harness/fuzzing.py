"""Hypothesis settings profiles and counterexample files for the fuzz harness.

Profiles, registered the Hypothesis way and chosen with Hypothesis' own
``--hypothesis-profile`` option:

* ``asr-fast`` (default): derandomized, a few examples per property, no
  database: the same run every time, minutes for a whole certification.
* ``asr-certify``: random, more examples; the seed is printed in the run's
  header (``--hypothesis-seed`` to replay it) and recorded with each result.
* ``asr-deep``: long campaigns, many examples, a persistent example database
  (a directory, ``ASR_HYPOTHESIS_DB`` to move it; see the README for a shared
  Redis database across machines).

A failing example, once shrunk, is written to ``reports/counterexamples/`` as
a case in the corpus format (stream + TOML) with the command that replays it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
from pathlib import Path

from hypothesis import HealthCheck, Phase, settings
from hypothesis.database import DirectoryBasedExampleDatabase

PROFILES = ("asr-fast", "asr-certify", "asr-deep")
DEFAULT_PROFILE = "asr-fast"
COUNTEREXAMPLES = Path("reports") / "counterexamples"
_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]


def register_profiles() -> None:
    settings.register_profile(
        "asr-fast", max_examples=8, derandomize=True, database=None, deadline=None,
        suppress_health_check=_QUIET, print_blob=True,
    )
    settings.register_profile(
        "asr-certify", max_examples=60, derandomize=False, database=None, deadline=None,
        suppress_health_check=_QUIET, print_blob=True,
    )
    database_dir = os.environ.get("ASR_HYPOTHESIS_DB", ".hypothesis/asr-deep")
    settings.register_profile(
        "asr-deep", max_examples=2000, derandomize=False, deadline=None,
        database=DirectoryBasedExampleDatabase(database_dir), suppress_health_check=_QUIET, print_blob=True,
        phases=tuple(Phase),
    )


def write_counterexample(
    folder: Path,
    test_name: str,
    data: bytes,
    verdict: str,
    rules: list[str],
    description: str,
    implementation: str,
    reference: str | None = None,
) -> tuple[Path, str]:
    """Write a ready case (stream + metadata) and return it with its replay command.

    The name comes from the test and a digest of the bytes, so the shrunk
    example Hypothesis replays last overwrites nothing but itself."""
    digest = hashlib.sha256(data).hexdigest()[:12]
    group = rules[0] if verdict == "invalid" and rules else "fuzz"
    prefix = {"valid": "valid", "invalid": "invalid"}.get(verdict, "impl")
    case_dir = folder / "validator" / group
    case_dir.mkdir(parents=True, exist_ok=True)
    stem = f"{prefix}-{test_name}-{digest}"
    stream = case_dir / f"{stem}.jsonl"
    stream.write_bytes(data)
    metadata = [
        f"description = {json.dumps(description)}",
        f"verdict = {json.dumps(verdict)}",
        f"rules = {json.dumps(rules or ['X-JSON'])}",
        'spec = "Found by the fuzz harness (see the rule\'s section in the pages)"',
    ]
    if verdict == "implementation-defined":
        metadata.append(f"reference = {json.dumps(reference or 'reject')}")
    stream.with_suffix(".toml").write_text("\n".join(metadata) + "\n", encoding="utf-8")
    command = shlex.join([
        "pytest", f"--implementation={implementation}", f"--cases={folder}", "-m", "corpus", "-k", stem,
    ])
    return stream, command


class FuzzSession:
    """What a fuzz test needs: settings, the adapter, and judging with counterexamples.

    Property bodies call ``expect`` (or ``expect_damaged``); an unmet
    expectation raises AssertionError so that Hypothesis shrinks it.  ``run``
    calls the property and, when it fails, writes the last (shrunk) failing
    example as a case file and fails the test with the replay command."""

    def __init__(self, adapter, scratch: Path, counterexamples: Path, implementation: str,
                 hypothesis_settings: settings, seed: int | None, also_named: dict[str, set[str]]) -> None:
        self.adapter = adapter
        self.scratch = scratch
        self.counterexamples = counterexamples
        self.implementation = implementation
        self._settings = hypothesis_settings
        self.seed = seed
        self.also_named = also_named
        self.examples = 0
        self._last_failure: dict | None = None

    def settings(self, test):
        from hypothesis import seed as seed_decorator

        decorated = self._settings(test)
        return seed_decorator(self.seed)(decorated) if self.seed is not None else decorated

    def run(self, prop) -> None:
        import pytest

        self._last_failure = None
        try:
            prop()
            return
        except AssertionError as error:
            if self._last_failure is None:
                raise
            message = str(error)
        path, command = write_counterexample(self.counterexamples, implementation=self.implementation,
                                             **self._last_failure)
        pytest.fail(f"{message}\n\ncounterexample (shrunk): {path}\nreplay: {command}", pytrace=False)

    def _ask(self, data: bytes, name: str):
        """Ask about ``data``; the file is named by its digest (the property's name, which says
        what is expected, never reaches the implementation: the adapter also stages a blind copy)."""
        stream = self.scratch / f"{hashlib.sha256(data).hexdigest()[:16]}.jsonl"
        stream.write_bytes(data)
        self.examples += 1
        try:
            return self.adapter.validate(stream)
        finally:
            stream.unlink(missing_ok=True)

    def _fail(self, message: str, answer, failure: dict) -> None:
        self._last_failure = failure
        raise AssertionError(f"{message}\n{answer.explain()}")

    def expect(self, expected: str, data: bytes, name: str, rules: list[str], description: str) -> None:
        from hypothesis import assume

        from asr_conformance.reference.checks import validate_bytes

        reference = validate_bytes(data)
        # A generator slip must not be blamed on the implementation (the project's tests catch those).
        assume(reference.valid == (expected == "valid"))
        verdict = self._ask(data, name)
        failure = dict(test_name=name, data=data, verdict=expected, rules=rules, description=description,
                       reference="accept" if reference.valid else "reject")
        if not verdict.outcome.is_verdict:
            self._fail(f"no verdict on {description}", verdict, failure)
        if expected == "implementation-defined":
            return  # it rests on an assumption: any verdict is reported, none is scored
        accepted = verdict.outcome.value == "accept"
        if expected == "valid" and not accepted:
            self._fail(f"rejected {description}", verdict, failure)
        if expected == "invalid":
            if accepted:
                self._fail(f"accepted {description}", verdict, failure)
            from asr_conformance.vocabulary.scoring import naming_set, rule_level, wrong_reason

            # ``rules`` is the mode's naming set, its first rule the one the suite files the defect under.
            allowed = naming_set(set(rules) | {r for rule in rules for r in self.also_named.get(rule, ())})
            if rule_level(verdict.rules, allowed) == "wrong":
                self._fail(f"rejected {description} for the wrong reason: "
                           + wrong_reason(verdict.rules, allowed, rules[0]), verdict, failure)

    def expect_damaged(self, data: bytes, name: str, description: str) -> None:
        from asr_conformance.generators.damage import DEFINITE_RULES
        from asr_conformance.reference.checks import validate_bytes

        reference = validate_bytes(data)
        errors = reference.rules()
        definite = bool(errors & DEFINITE_RULES)
        verdict = self._ask(data, name)
        expected = "invalid" if definite else "implementation-defined"
        failure = dict(test_name=name, data=data, verdict=expected, rules=sorted(errors) or ["X-JSON"],
                       description=description, reference="accept" if reference.valid else "reject")
        if not verdict.outcome.is_verdict:
            self._fail(f"no verdict on {description}", verdict, failure)
        if definite and verdict.outcome.value == "accept":
            self._fail(f"accepted {description}, which breaks {', '.join(sorted(errors))}", verdict, failure)
