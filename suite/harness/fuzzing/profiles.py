"""Hypothesis settings profiles and counterexample files for the fuzz harness.

Profiles, registered the Hypothesis way and chosen with Hypothesis' own
``--hypothesis-profile`` option:

* ``asr-fast`` (default): a few examples per property, no database, a fresh
  random seed every run (printed in the header and recorded in the report;
  ``--hypothesis-seed`` replays it): an implementation cannot learn the
  examples from one run and answer them from a table in the next.
* ``asr-fixed``: the same examples as ``asr-fast`` but derandomized, the same
  every run: for regression gates and the project's own tests.  Fixed examples
  certify nothing new, so a run under it says so beside its verdict and writes
  no badge.
* ``asr-certify``: random, more examples; the seed is printed as above.
* ``asr-deep``: long campaigns, many examples, a persistent example database
  (a directory, ``ASR_HYPOTHESIS_DB`` to move it; see the README for a shared
  Redis database across machines).

A failing example, once shrunk, is written under the report folder
(``counterexamples/``, or ``--counterexamples``) as a case in the corpus
format (stream + TOML) with a command that replays it from any folder.

Shrinking has a budget per failing property (``ShrinkBudget``: seconds and
calls to the implementation): each shrink step of a one-shot implementation is
a process launch, and an implementation that fails most properties would
otherwise spend many minutes shrinking before its verdict.  Past the budget
the property stops asking the implementation: the examples it has already
seen fail still fail (from memory), every other one passes, so Hypothesis
finishes at once and reports the smallest failing example found so far.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn

from hypothesis import HealthCheck, Phase, settings
from hypothesis import settings as HypothesisSettings
from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase
from hypothesis.errors import Flaky, HypothesisWarning
from hypothesis.strategies import SearchStrategy

from asr_conformance.generators import long_streams
from asr_conformance.generators.long_streams import LongShape
from asr_conformance.harness.adapters.answers import Verdict
from asr_conformance.harness.adapters.roles import ValidatorAdapter
from asr_conformance.harness.fuzzing.replayable import seed_alone
from asr_conformance.harness.judging.validator import judge_answer
from asr_conformance.vocabulary.errors import UserError
from asr_conformance.vocabulary.option_defaults import COUNTEREXAMPLES as COUNTEREXAMPLES
from asr_conformance.vocabulary.option_defaults import DEFAULT_SHRINK_SECONDS, DEFAULT_SHRINK_STEPS
from asr_conformance.vocabulary.scoring import add_reasons, naming_set

PROFILES = ("asr-fast", "asr-fixed", "asr-certify", "asr-deep")
DEFAULT_PROFILE = "asr-fast"
#: Profiles whose examples are the same every run: a regression gate, never a certification.
FIXED_PROFILES = frozenset({"asr-fixed"})
#: Names the profile a run uses when --hypothesis-profile does not (a CI job's regression gate).
PROFILE_VARIABLE = "ASR_HYPOTHESIS_PROFILE"
_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
#: Every phase but ``explain``: it re-runs a shrunk failure many times to annotate which parts of the
#: arguments matter, one implementation call each (most of a failing property's time), and the
#: failure message says what the mutator changed instead (``generators.changes``).
PHASES = (Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink)


#: Selects a shared Redis example database for ``asr-deep`` (``redis://host:port/db``).
REDIS_VARIABLE = "ASR_HYPOTHESIS_REDIS"


class FuzzSetupError(UserError):
    """A fuzz option the harness cannot honour; the message says what to do."""


def deep_database() -> ExampleDatabase:
    """The ``asr-deep`` example database: Redis when ``ASR_HYPOTHESIS_REDIS`` names one, else a folder.

    A Redis database lets several machines (and xdist workers) share one
    campaign: a failure one of them finds is replayed first by the others."""
    url = os.environ.get(REDIS_VARIABLE)
    if not url:
        return DirectoryBasedExampleDatabase(os.environ.get("ASR_HYPOTHESIS_DB", ".hypothesis/asr-deep"))
    try:
        import redis
        from hypothesis.extra.redis import RedisExampleDatabase
    except ImportError:
        raise FuzzSetupError(f"{REDIS_VARIABLE} is set but the redis client is not installed: "
                             "pip install 'asr-conformance[redis]'") from None
    return RedisExampleDatabase(redis.Redis.from_url(url), key_prefix=b"asr-conformance:")


def register_profiles() -> None:
    """Register the three profiles; raises FuzzSetupError when ``asr-deep``'s database cannot be made."""
    for name, fixed in (("asr-fast", False), ("asr-fixed", True)):
        settings.register_profile(
            name, max_examples=8, derandomize=fixed, database=None, deadline=None,
            suppress_health_check=_QUIET, print_blob=True, report_multiple_bugs=False, phases=PHASES,
        )
    settings.register_profile(
        "asr-certify", max_examples=60, derandomize=False, database=None, deadline=None,
        suppress_health_check=_QUIET, print_blob=True, report_multiple_bugs=False, phases=PHASES,
    )
    try:
        database: ExampleDatabase | None = deep_database()
        problem = None
    except FuzzSetupError as error:
        database, problem = None, error
    settings.register_profile(
        "asr-deep", max_examples=2000, derandomize=False, deadline=None,
        database=database, suppress_health_check=_QUIET, print_blob=True,
        phases=PHASES, report_multiple_bugs=False,
    )
    if problem is not None:
        raise problem


@cache
def ensure_profiles() -> FuzzSetupError | None:
    """Register the profiles once per process, on first use (loading the plugin registers nothing), and
    return what keeps ``asr-deep`` from its database (None when nothing does)."""
    try:
        register_profiles()
    except FuzzSetupError as problem:
        return problem
    return None


@dataclass(frozen=True, slots=True)
class ShrinkBudget:
    """How long one failing property may shrink: wall-clock seconds and calls to the implementation."""

    seconds: float = DEFAULT_SHRINK_SECONDS
    steps: int = DEFAULT_SHRINK_STEPS

    def to_json(self) -> dict[str, float | int]:
        return {"seconds": self.seconds, "steps": self.steps}


def write_counterexample(
    folder: Path,
    test_name: str,
    data: bytes,
    verdict: str,
    rules: list[str],
    description: str,
    replay: list[str],
    reference: str | None = None,
    explanation: str = "",
) -> tuple[Path, str]:
    """Write a ready case (stream + metadata) and return it with its replay command.

    The name comes from the test and a digest of the bytes, so the shrunk
    example Hypothesis replays last overwrites nothing but itself.  ``replay``
    is the part of the command that names the implementation; every path in
    the command is absolute, so it works from any folder."""
    folder = folder.resolve()
    digest = hashlib.sha256(data).hexdigest()[:12]
    group = rules[0] if verdict == "invalid" and rules else "fuzz"
    prefix = {"valid": "valid", "invalid": "invalid"}.get(verdict, "impl")
    case_dir = folder / "validator" / group
    case_dir.mkdir(parents=True, exist_ok=True)
    stem = f"{prefix}-{test_name}-{digest}"
    stream = case_dir / f"{stem}.jsonl"
    stream.write_bytes(data)
    metadata = [f"# {line}" for line in explanation.splitlines()] + [
        f"description = {json.dumps(description)}",
        f"verdict = {json.dumps(verdict)}",
        f"rules = {json.dumps(rules or ['X-JSON'])}",
        'spec = "Found by the fuzz harness (see the rule\'s section in the pages)"',
    ]
    if verdict == "implementation-defined":
        metadata.append(f"reference = {json.dumps(reference or 'reject')}")
    stream.with_suffix(".toml").write_text("\n".join(metadata) + "\n", encoding="utf-8")
    command = shlex.join([
        "pytest", *replay, f"--cases={folder}", "--report-dir=none", "-p", "no:cacheprovider",
        "-m", "corpus", "-k", stem,
    ])
    return stream, command


@dataclass(slots=True)
class Shrinking:
    """What a property's shrinking cost, for the failure message and the report."""

    steps: int = 0
    seconds: float = 0.0
    #: "time" or "steps" when the budget ran out, "" when shrinking finished on its own.
    stopped_by: str = ""

    def describe(self, budget: ShrinkBudget) -> str:
        spent = f"{self.steps} step(s), {self.seconds:.1f} s"
        if self.stopped_by:
            limit = f"{budget.seconds:g} s" if self.stopped_by == "time" else f"{budget.steps} steps"
            return (f"shrinking stopped at its budget ({limit}; --asr-shrink-time/--asr-shrink-steps) after {spent}: "
                    f"this is the smallest failing example found so far")
        return f"shrunk in {spent}"


_SLOW_SHRINK_WARNING = "WARNING: Hypothesis has spent more than"


@contextmanager
def _no_large_repr_warning() -> Iterator[None]:
    """Hypothesis writes out the failing example's arguments as it replays it, and warns when that text is large
    (a stream or transcript of thousands of records: hundreds of kB). The harness reports a failure by its own
    message and the counterexample file, never by that text, so the warning would only tell a vendor about an
    internal step of the harness."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Generating overly large repr", category=HypothesisWarning)
        yield


@contextmanager
def _shrink_time_limit(seconds: float) -> Iterator[None]:
    """Hypothesis' own limit on shrinking time (five minutes by default), set to the budget for one property.

    Hypothesis reads ``engine.MAX_SHRINKING_SECONDS`` when shrinking starts and stops between two
    examples once it has passed, so the time budget holds even while every candidate the shrinker
    tries is discarded before it reaches the property.  Its warning, written for its own limit, is
    replaced by the failure message's account of the budget."""
    from hypothesis.internal.conjecture import engine
    from hypothesis.reporting import current_reporter, with_reporter

    previous = current_reporter()
    saved = engine.MAX_SHRINKING_SECONDS
    engine.MAX_SHRINKING_SECONDS = seconds  # type: ignore[assignment]
    try:
        with with_reporter(lambda text: None if str(text).startswith(_SLOW_SHRINK_WARNING) else previous(text)):
            yield
    finally:
        engine.MAX_SHRINKING_SECONDS = saved


def _stop_shrinking() -> bool:
    """Ask the running Hypothesis engine to stop shrinking after this example (the step budget is spent).

    The engine checks its shrink deadline after every example; putting it in the past ends shrinking
    with the best example found so far.  Returns False when no engine is found on the stack (then the
    property still stops asking the implementation, see ``_from_memory``)."""
    from hypothesis.internal.conjecture.engine import ConjectureRunner

    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        runner = frame.f_locals.get("self")
        if isinstance(runner, ConjectureRunner):
            if runner.finish_shrinking_deadline is not None:
                runner.finish_shrinking_deadline = 0.0
            return True
        frame = frame.f_back
    return False


class PropertyRunner:
    """Runs one Hypothesis property against an implementation, within a shrink budget.

    Property bodies judge what they generate and call ``_fail`` on an unmet
    expectation, which raises AssertionError so that Hypothesis shrinks it.
    ``run`` calls the property and, when it fails, writes the last (shrunk)
    failing example as a ready case (``_write``, per role) and fails the test
    with the replay command. Shrinking is bounded by ``budget`` (see the
    module's docstring).

    The properties draw their long shapes from ``long_shapes`` (the producer's sessions: ``for_run``),
    which carries the run's pool seed and whether it draws long examples at all: what a run decides about
    its examples reaches the generators as values, never through a module."""

    def __init__(self, scratch: Path, counterexamples: Path, replay: list[str], hypothesis_settings: settings,
                 seed: int | None, budget: ShrinkBudget | None = None, database_key: str = "",
                 record: Callable[[str, object], None] | None = None, long_shapes: bool = True) -> None:
        self.scratch = scratch
        self.counterexamples = counterexamples
        self.replay = replay
        self._settings = hypothesis_settings
        self.seed = seed
        #: Whether examples may be long (long shapes of streams, long native sessions): the run context's
        #: ``long_shapes``, false only in the cost benchmark's baseline.
        self.with_long_shapes = long_shapes
        self.budget = budget or ShrinkBudget()
        self.database_key = database_key
        #: pytest's record_property: facts recorded during the call reach the call's report.
        self.record = record
        self.examples = 0
        self.shrinking: Shrinking | None = None
        #: Which call to the implementation first failed, and the sha256 of the bytes it was given:
        #: a shared example database shows as (1, the digest of an earlier run's counterexample).
        self.first_failure: tuple[int, str] | None = None
        self._shrink_started = 0.0
        self._last_failure: dict[str, Any] | None = None
        self._last_message = ""
        #: Failures seen, by the digest of their bytes: replayed from memory once the budget is spent.
        self._failed: dict[str, tuple[str, str, dict[str, Any]]] = {}
        #: The last counterexample written (path, replay command), for the test's record.
        self.counterexample: tuple[Path, str] | None = None
        #: The failing (shrunk) example's bytes and what went wrong, for the report to carry inline.
        self.failed_input: bytes | None = None
        self.failed_answer = ""
        self.failed_expected: str | None = None

    @property
    def pool_seed(self) -> int:
        """The seed of the long examples' pools (the filler's records, the long sessions' transcripts): the run's
        seed, so that another run splices other texts and ``--hypothesis-seed`` the same ones again; 0 without
        one (a derandomized profile, or one with an example database, whose finds must replay in a later run)."""
        return self.seed if self.seed is not None else 0

    def long_shapes(self) -> SearchStrategy[LongShape]:
        """The run's long shapes (``generators.long_streams``): their filler from the pool of ``pool_seed``, and
        none at all without ``with_long_shapes``."""
        return long_streams.long_shapes(self.with_long_shapes, self.pool_seed)

    def settings(self, test: Callable[..., None]) -> Callable[..., None]:
        """``test`` under the run's settings, seed and database key."""
        return self._decorated(test, self._settings)

    def settings_with(self, **changes: Any) -> Callable[[Callable[..., None]], Callable[..., None]]:
        """Like ``settings``, with some settings changed (a property of fewer, costlier examples)."""
        chosen = HypothesisSettings(self._settings, **changes)
        return lambda test: self._decorated(test, chosen)

    def _decorated(self, test: Callable[..., None], chosen: HypothesisSettings) -> Callable[..., None]:
        from hypothesis import seed as seed_decorator

        # Any: Hypothesis attaches the ``hypothesis`` handle to the decorated test at run time.
        decorated: Any = chosen(test)
        if self.database_key:
            # One database key per test (the inner property's source is the same for every parameter),
            # so a shared database replays a rule's failures for that rule first.
            inner = decorated.hypothesis.inner_test
            inner._hypothesis_internal_add_digest = self.database_key.encode()
        seeded: Callable[..., None] = seed_decorator(self.seed)(decorated) if self.seed is not None else decorated
        return seeded

    def run(self, prop: Callable[[], None]) -> None:
        import pytest

        self._forget_last_failure()
        self.shrinking = None
        self.first_failure = None
        self._failed.clear()
        try:
            with _shrink_time_limit(self.budget.seconds), seed_alone(), _no_large_repr_warning():
                prop()
            return
        except AssertionError as error:
            if self._last_failure is None:
                raise
            message = str(error)
        except Flaky:
            # The implementation failed an example and then did not when Hypothesis asked again:
            # it answers the same input differently. The failure it gave stands.
            if self._last_failure is None:
                raise
            message = (f"{self._last_message}\n\nasked again with the same input, the implementation answered "
                       "differently (it is not deterministic), so this example was not shrunk further")
        finally:
            self._settle()
            self._record_facts()
        failure = self._last_failure
        self.failed_input, self.failed_answer = failure.get("data"), self._last_message
        self.failed_expected = _EXPECTED.get(str(failure.get("verdict")))
        shrink_note = self.shrinking.describe(self.budget) if self.shrinking else ""
        path, command = self._write(failure)
        self.counterexample = (path, command)
        pytest.fail(f"{message}\n\n{shrink_note}\ncounterexample (shrunk): {path}\nreplay: {command}",
                    pytrace=False)

    def _write(self, failure: dict[str, Any]) -> tuple[Path, str]:
        """Write the failing example as a ready case of the role; return its path and replay command."""
        raise NotImplementedError

    # -- the shrink budget ---------------------------------------------------------

    def _spent(self) -> bool:
        """Whether shrinking has used its budget (checked before each call to the implementation)."""
        shrinking = self.shrinking
        if shrinking is None:
            return False
        if shrinking.stopped_by:
            return True
        shrinking.seconds = time.monotonic() - self._shrink_started
        if shrinking.seconds >= self.budget.seconds:
            shrinking.stopped_by = "time"
        elif shrinking.steps >= self.budget.steps:
            shrinking.stopped_by = "steps"
        if shrinking.stopped_by:
            _stop_shrinking()
        return bool(shrinking.stopped_by)

    def _record_facts(self) -> None:
        """Shrink figures and the first failure, recorded during the call so the call's report carries them."""
        if self.record is None:
            return
        if self.shrinking is not None:
            self.record("asr_shrink_steps", self.shrinking.steps)
            self.record("asr_shrink_seconds", round(self.shrinking.seconds, 3))
            self.record("asr_shrink_stopped_by", self.shrinking.stopped_by or "finished")
        if self.first_failure is not None:
            self.record("asr_fuzz_first_failure_call", self.first_failure[0])
            self.record("asr_fuzz_first_failure_sha256", self.first_failure[1])

    def _forget_last_failure(self) -> None:
        """A method, not an assignment in ``run``: mypy would take the field as None for the rest of
        ``run``, though the property sets it."""
        self._last_failure = None

    def _settle(self) -> None:
        """Final shrink figures; the engine may have stopped on the time limit between two calls."""
        shrinking = self.shrinking
        if shrinking is None or shrinking.stopped_by:
            return
        shrinking.seconds = time.monotonic() - self._shrink_started
        if shrinking.seconds >= self.budget.seconds:
            shrinking.stopped_by = "time"

    def _from_memory(self, data: bytes) -> bool:
        """Past the budget: fail again on an example already seen failing, pass on any other, ask nothing."""
        if not self._spent():
            return False
        known = self._failed.get(hashlib.sha256(data).hexdigest())
        if known is not None:
            message, explained, failure = known
            self._fail(message, explained, failure)
        return True

    def _counted(self) -> None:
        """One more call to the implementation (a shrink step once a failure is being shrunk)."""
        self.examples += 1
        if self.shrinking is not None:
            self.shrinking.steps += 1

    def _fail(self, message: str, explained: str, failure: dict[str, Any]) -> NoReturn:
        self._last_failure = failure
        self._last_message = f"{message}\n{explained}"
        key = hashlib.sha256(failure["data"]).hexdigest()
        if self.shrinking is None:
            self.shrinking = Shrinking()
            self._shrink_started = time.monotonic()
            self.first_failure = (self.examples, key)
        self._failed.setdefault(key, (message, explained, failure))
        raise AssertionError(f"{message}\n{explained}")


#: What a validator fuzz example expected, in words (a producer's is the test's own expectation).
_EXPECTED = {"valid": "accept (a valid stream)", "invalid": "reject (the stream breaks a rule)",
             "implementation-defined": "a verdict (any verdict; it rests on an open assumption)"}


class ValidatorFuzzSession(PropertyRunner):
    """What a validator fuzz test needs: the adapter, and judging generated streams.

    Property bodies call ``expect`` (or ``expect_damaged``); a failure is written
    as a validator case (stream + TOML)."""

    def __init__(self, adapter: ValidatorAdapter, scratch: Path, counterexamples: Path, replay: list[str],
                 hypothesis_settings: settings, seed: int | None, also_named: dict[str, set[str]],
                 budget: ShrinkBudget | None = None, database_key: str = "",
                 record: Callable[[str, object], None] | None = None, strict_reasons: bool = False,
                 long_shapes: bool = True) -> None:
        super().__init__(scratch, counterexamples, replay, hypothesis_settings, seed, budget, database_key, record,
                         long_shapes)
        self.adapter = adapter
        self.also_named = also_named
        #: Whether a rejection naming a rule outside the naming set fails (``--strict-reasons``).
        self.strict_reasons = strict_reasons
        #: The reasons figure over every scored rejection of the property (``scoring.reasons_figure``).
        self.reasons: dict[str, int] = {}

    def _write(self, failure: dict[str, Any]) -> tuple[Path, str]:
        return write_counterexample(self.counterexamples, replay=self.replay, **failure)

    def _ask(self, data: bytes, name: str) -> Verdict:
        """Ask about ``data``; the file is named by its digest (the property's name, which says
        what is expected, never reaches the implementation: the adapter also stages a blind copy)."""
        stream = self.scratch / f"{hashlib.sha256(data).hexdigest()[:16]}.jsonl"
        stream.write_bytes(data)
        self._counted()
        try:
            verdict: Verdict = self.adapter.validate(stream)
            return verdict
        finally:
            stream.unlink(missing_ok=True)

    # -- the properties' judgements --------------------------------------------------

    def expect(self, expected: str, data: bytes, name: str, rules: list[str], description: str,
               mutation: Any = None) -> None:
        """Judge one generated stream: ``expected`` is valid, invalid or implementation-defined.

        ``mutation`` (a ``generators.changes.MutatedStream``) says what a mutator changed, for the message."""
        from hypothesis import assume

        from asr_conformance.reference.checks import validate_bytes

        if self._from_memory(data):
            return
        reference = validate_bytes(data)
        # A generator slip must not be blamed on the implementation (the project's tests catch those).
        assume(reference.valid == (expected == "valid"))
        verdict = self._ask(data, name)
        changed = mutation.describe() if mutation is not None else ""
        failure = dict(test_name=name, data=data, verdict=expected, rules=rules, description=description,
                       reference="accept" if reference.valid else "reject", explanation=changed)
        explained = "\n".join(filter(None, [changed, verdict.explain()]))
        # ``rules`` is the mode's naming set, its first rule the one the suite files the defect under; an
        # implementation-defined answer rests on an assumption: any verdict is reported, none is scored.
        allowed = naming_set(set(rules) | {r for rule in rules for r in self.also_named.get(rule, ())})
        found = judge_answer(expected, verdict, allowed, rules[0] if rules else None, self.strict_reasons)
        self.reasons = add_reasons(self.reasons, found.reasons)
        if found.problem in ("declined", "no-verdict"):
            self._fail(f"no verdict on {description}", explained, failure)
        elif found.problem == "rejected-valid":
            self._fail(f"rejected {description}", explained, failure)
        elif found.problem == "accepted-invalid":
            self._fail(f"accepted {description}", explained, failure)
        elif found.problem == "wrong-rule":
            self._fail(f"rejected {description} for the wrong reason: {found.reason}", explained, failure)

    def expect_damaged(self, data: bytes, name: str, description: str, kind: str = "",
                       mutation: Any = None) -> None:
        """Damaged bytes get a verdict; a reject is required only where RFC 8259 settles it (``SETTLED_DAMAGE``)."""
        from asr_conformance.generators.damage import SETTLED_DAMAGE
        from asr_conformance.reference.checks import validate_bytes

        if self._from_memory(data):
            return
        reference = validate_bytes(data)
        errors = reference.rules()
        definite = damage_is_definite(kind, errors)
        basis = SETTLED_DAMAGE.get(kind, "") if kind else "the reference"
        verdict = self._ask(data, name)
        expected = "invalid" if definite else "implementation-defined"
        changed = mutation.describe() if mutation is not None else ""
        failure = dict(test_name=name, data=data, verdict=expected, rules=sorted(errors) or ["X-JSON"],
                       description=description, reference="accept" if reference.valid else "reject",
                       explanation=changed)
        explained = "\n".join(filter(None, [changed, verdict.explain()]))
        if not verdict.outcome.is_verdict:
            self._fail(f"no verdict on {description}", explained, failure)
        if definite and verdict.outcome.value == "accept":
            self._fail(f"accepted {description}, which breaks {', '.join(sorted(errors))} ({basis})",
                       explained, failure)


def damage_is_definite(kind: str, errors: set[str] | frozenset[str]) -> bool:
    """Whether a damaged stream must be rejected: only a kind RFC 8259 settles (``SETTLED_DAMAGE``), and only
    when the reference rejects it under a definite rule (a cut at a line end leaves a valid stream).

    A kind the pages leave open (a BOM, deep nesting...) is never scored, even where the reference also
    names ASR-003 because the damaged line was the header. Without a kind, the reference decides."""
    from asr_conformance.generators.damage import DEFINITE_RULES, SETTLED_DAMAGE

    basis = SETTLED_DAMAGE.get(kind, "") if kind else "the reference"
    return bool(basis) and bool(errors & DEFINITE_RULES)
