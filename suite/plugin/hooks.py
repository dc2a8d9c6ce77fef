"""The harness plugin of asr-conformance, registered by the entry point (``entry.py``) for a certification run only.

    pytest --implementation=./my-validator                     # one-shot executable (docs/contract.md §2)
    pytest --implementation=./my-converter --inputs=samples/   # a producer
    pytest --implementation=acme.toml                          # manifest (docs/contract.md §3), any roles
    pytest --implementation=a.toml --implementation=b.toml     # side by side, one report column each
    pytest                                                     # in the checkout: the bundled reference

With ``--implementation`` the run collects the conformance suite and nothing
else, whatever the current folder holds.  Markers (``corpus``,
``fuzz``, ``validator``/``producer``/``reader`` and one per rule ID, so
``-m ASR-164`` and ``-k ASR-164`` work), the fixtures and the hooks that
stamp each test with its result ID live here; the end of the run (gate,
verdicts, reports) is ``session.py``; the options are ``options.py``.  Workers and controller under
xdist compute the same collection from the same corpus.
"""

from __future__ import annotations

import os
import random
import re
import time
from collections.abc import Generator, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from asr_conformance.gate.baseline import load_baseline
from asr_conformance.gate.decision import GateSettings, excuse
from asr_conformance.gate.expectations import check_entries, load_expectations
from asr_conformance.gate.results import TestRecord
from asr_conformance.harness.adapters.oneshot import started_ahead
from asr_conformance.harness.adapters.roles import ReaderAdapter, ValidatorAdapter
from asr_conformance.harness.adapters.startup import StartCheck, check_start
from asr_conformance.harness.adapters.targets import Target, resolve_targets
from asr_conformance.harness.fuzzing.producers import GeneratedInput, ProducerFuzzSession, not_fuzzed
from asr_conformance.harness.fuzzing.profiles import (
    DEFAULT_PROFILE,
    PROFILE_VARIABLE,
    PROFILES,
    FuzzSetupError,
    PropertyRunner,
    ValidatorFuzzSession,
    ensure_profiles,
)
from asr_conformance.harness.fuzzing.readers import ReaderFuzzSession
from asr_conformance.harness.isolation import boxes, disclosure, policies
from asr_conformance.harness.judging.fidelity import SourceEdit, input_of
from asr_conformance.harness.judging.producer import ProducerRunner
from asr_conformance.harness.run_context import RunContext
from asr_conformance.packs.registry import Packs
from asr_conformance.packs.selection import SourceInput
from asr_conformance.plugin.classify import MODULES, UnclassifiedTest, classify
from asr_conformance.plugin.entry import CONFORMANCE_DIR, checkout_without_configuration, usage_error
from asr_conformance.plugin.recording import Recorder, attach, recorder_of, stamp
from asr_conformance.plugin.run_config import (
    RUN_CONTEXT_KEY,
    RUN_DEADLINE_KEY,
    SEED_KEY,
    TARGETS_KEY,
    corpus_of,
    counterexamples_of,
    fuzz_plans,
    fuzz_seed,
    hypothesis_facts,
    packs_of,
    run_context_of,
    shrink_budget_of,
    sources_of,
    target_of,
    targets_of,
    widened_of,
)
from asr_conformance.plugin.session import GATE_KEY, CertificationSession, WorkerCollections
from asr_conformance.vocabulary.cases import Case, iter_cases
from asr_conformance.vocabulary.errors import UserError
from asr_conformance.vocabulary.inline import inline_input
from asr_conformance.vocabulary.option_defaults import LIMIT_NAMES
from asr_conformance.vocabulary.rules import load_catalog
from asr_conformance.vocabulary.untrusted import terminal_line

MARKERS = {
    "corpus": "a test that runs one validator case of the case corpus",
    "fuzz": "a property-based test driven by Hypothesis strategies",
    "slow": "a long-running test, excluded from the default run",
    "conformance": "a test of the implementation under test (not of the harness)",
    "validator": "a test of the validator role",
    "producer": "a test of the producer role",
    "reader": "a test of the reader role",
}


def pytest_configure(config: pytest.Config) -> None:
    """Set up a certification run (the entry point registers this plugin for such runs only, so a run
    that neither names an implementation nor points at the conformance suite keeps its own markers,
    Hypothesis profile and collection).  Every mistake of the user's found while setting up is a
    ``UserError``, turned into pytest's usage error here and only here."""
    try:
        _configure(config)
    except UserError as error:
        raise usage_error(error) from None


def _configure(config: pytest.Config) -> None:
    for name, description in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {description}")
    for rule in load_catalog().values():
        config.addinivalue_line("markers", f"{rule.id}: {rule.summary}")
    _configure_hypothesis(config)
    _configure_containment(config)
    implementations = config.getoption("implementation")
    context = run_context_of(config)
    targets = [context.contained(target) for target in resolve_targets(
        implementations, config.getoption("role"), config.getoption("inputs"),
        config.getoption("persistent"), config.getoption("asr_timeout"), config.getoption("expectations"),
        config.getoption("source_formats"), config.getoption("strict_reasons"), packs_of(config),
    )]
    settings = _gate_settings(config, targets)
    config.stash[TARGETS_KEY] = targets
    config.stash[GATE_KEY] = settings
    if implementations or checkout_without_configuration(config):
        # Run the conformance suite and nothing else (not the current folder's tests).
        config.args[:] = [str(CONFORMANCE_DIR)]
    writes_reports = not hasattr(config, "workerinput") and runs_tests(config)
    if writes_reports:
        config.stash[START_CHECKS_KEY] = _check_starts(targets, packs_of(config))
    certification = CertificationSession(config, settings, writes_reports)
    config.pluginmanager.register(certification, "asr-conformance-session")
    if writes_reports and config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(WorkerCollections(certification), "asr-conformance-collections")


class StartError(UserError):
    """An implementation that cannot start (its manifest or path is named in the message)."""


#: The start-up check of each implementation (on the process that runs the session's end).
START_CHECKS_KEY = pytest.StashKey[list[StartCheck]]()


def _check_starts(targets: list[Target], packs: Packs) -> list[StartCheck]:
    """Start every implementation once before the first case: one that cannot start is one usage error
    naming its manifest or path, not a failure per case blaming spec rules."""
    checks = [check_start(target, packs) for target in targets]
    for check in checks:
        if not check.ok:
            raise StartError(terminal_line(check.usage_error()))
    return checks


#: Options with which pytest shows or plans something and runs no test (collect-only, setup-plan...).
_NO_TEST_RUN = ("collectonly", "setuponly", "setupplan", "showfixtures", "show_fixtures_per_test", "markers",
                "help", "version")


def runs_tests(config: pytest.Config) -> bool:
    """Whether this pytest command executes tests: only such a run may write or remove reports, so that
    ``--markers``, ``--fixtures``, ``--setup-plan`` or ``--collect-only`` never spoil a certification."""
    return not any(config.getoption(name, None) for name in _NO_TEST_RUN)


def _configure_containment(config: pytest.Config) -> None:
    """What implementations may not see (corpus, reports), what they get, and the run's time limit
    (chosen once on the controller, so that every xdist worker stops at the same moment)."""
    deadline, staging = None, None
    if hasattr(config, "workerinput"):
        deadline = config.workerinput.get("asr_run_deadline")
        staging = config.workerinput.get("asr_staging")
    else:
        if config.getoption("run_timeout"):
            deadline = time.time() + config.getoption("run_timeout")
        staging = str(boxes.make_staging_parent())
    config.stash[RUN_DEADLINE_KEY] = deadline
    config.stash[STAGING_KEY] = staging
    hidden = [corpus_of(config), *policies.corpus_copies(), counterexamples_of(config)]
    report_dir = config.getoption("report_dir")
    if report_dir not in ("none", ""):
        hidden.append(Path(report_dir).resolve())
    if config.option.basetemp:
        hidden.append(Path(config.option.basetemp).resolve())
    limits = tuple((name, config.getoption(f"limit_{name}")) for name in LIMIT_NAMES
                   if config.getoption(f"limit_{name}") is not None)
    settings = policies.settings_for(
        sandbox=config.getoption("sandbox"), hidden=tuple(dict.fromkeys(hidden)),
        pass_env=tuple(config.getoption("pass_env")), max_output=config.getoption("max_output"),
        run_deadline=deadline, run_timeout=config.getoption("run_timeout"),
        staging_parent=Path(staging) if staging else None, network=config.getoption("network"), limits=limits,
        allow_read=tuple(str(Path(p).resolve()) for p in config.getoption("allow_read")))
    policies.sandbox_mode(settings.sandbox)  # --sandbox=strict on a machine without one: a usage error now
    config.stash[RUN_CONTEXT_KEY] = RunContext(settings)


def _active(config: pytest.Config) -> bool:
    """Whether pytest_configure set up a certification run (the other hooks do nothing otherwise)."""
    return TARGETS_KEY in config.stash


def _gate_settings(config: pytest.Config, targets: list[Target]) -> GateSettings[Target]:
    expectations = {t.key: load_expectations(t.expectations) for t in targets if t.expectations}
    if expectations:
        case_ids = [case.id for role in ("validator", "reader") for case in _cases(config, role)]
        keys = [t.key for t in targets]
        for target in targets:
            if target.expectations:
                check_entries(target.expectations, expectations[target.key], case_ids, conformance_tests(),
                              load_catalog(), keys)
    baseline = config.getoption("baseline")
    report_dir = config.getoption("report_dir")
    written = config.getoption("write_expectations")
    return GateSettings(
        targets, expectations, load_baseline(Path(baseline)) if baseline else None,
        None if report_dir in ("none", "") else Path(report_dir), Path(written) if written else None,
    )


def _is_registered_profile(name: str) -> bool:
    """Whether Hypothesis knows the profile ``name`` (public API: ``get_profile`` raises for an unknown one)."""
    from hypothesis import settings
    from hypothesis.errors import InvalidArgument

    try:
        settings.get_profile(name)
    except InvalidArgument:
        return False
    return True


def _configure_hypothesis(config: pytest.Config) -> None:
    """Load the asr-fast profile unless one was chosen (CI=true would otherwise load Hypothesis' ci profile);
    under asr-certify, choose a seed once (on the controller) and record it."""
    from hypothesis import settings

    problem = ensure_profiles()  # before Hypothesis' plugin loads a --hypothesis-profile (see entry.py)
    chosen = config.getoption("hypothesis_profile", None) or os.environ.get(PROFILE_VARIABLE) or None
    if chosen is not None and chosen not in PROFILES and not _is_registered_profile(chosen):
        raise FuzzSetupError(f"{PROFILE_VARIABLE}={chosen}: no such Hypothesis profile "
                             f"(the suite's: {', '.join(PROFILES)})")
    if chosen == "asr-deep" and problem is not None:
        raise problem
    # Loaded here too (Hypothesis' plugin may configure after this one), so the seed decision sees it.
    settings.load_profile(chosen or DEFAULT_PROFILE)
    seed = _given_seed(config)
    if hasattr(config, "workerinput"):
        seed = config.workerinput.get("asr_seed", seed)
    elif seed is None and (loaded := settings.default) is not None and loaded.derandomize is False and loaded.database is None:
        # A forced seed switches the example database off, so only profiles without one get it.
        seed = random.getrandbits(32)
    config.stash[SEED_KEY] = seed
    # The fuzz sessions get the seed (``fuzz_seed``), and draw the long examples' pools from it too
    # (``PropertyRunner.pool_seed``): other filler every run, the same on replay.
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_SeedToWorkers(seed), "asr-conformance-seed")


def _given_seed(config: pytest.Config) -> int | str | None:
    """``--hypothesis-seed`` as Hypothesis reads it: the option is a string, an integer when it spells one (any
    other text seeds Hypothesis as it is). Kept as the string, the run recorded no seed, and its fuzz sessions drew
    the long examples' pools from 0 instead of the seed: the printed replay of a fresh-seed run was no replay."""
    seed: object = config.getoption("hypothesis_seed", None)
    if isinstance(seed, str):
        try:
            return int(seed)
        except ValueError:
            return seed
    return seed if isinstance(seed, int) else None


#: The run's staging folder (made on the controller, shared by the workers).
STAGING_KEY = pytest.StashKey[str | None]()


class _SeedToWorkers:
    """Gives every xdist worker the controller's seed (and the run's deadline and staging folder)."""

    def __init__(self, seed: object) -> None:
        self.seed = seed

    def pytest_configure_node(self, node: Any) -> None:  # xdist's WorkerController: xdist ships no types
        node.workerinput["asr_seed"] = self.seed
        node.workerinput["asr_run_deadline"] = node.config.stash.get(RUN_DEADLINE_KEY, None)
        node.workerinput["asr_staging"] = node.config.stash.get(STAGING_KEY, None)


def pytest_report_header(config: pytest.Config) -> list[str]:
    if not _active(config):
        return []
    facts = hypothesis_facts(config)
    line = f"asr-conformance: Hypothesis profile {facts['profile']}"
    if config.stash.get(SEED_KEY, None) is not None:
        seed = config.stash[SEED_KEY]
        line += f", seed {seed} (replay with --hypothesis-seed={seed})"
    lines = [line, f"asr-conformance: {disclosure.describe_sandbox(run_context_of(config).policy)}"]
    widened = widened_of(config)
    if widened:
        lines.append(terminal_line(f"asr-conformance: widened sandbox: {'; '.join(widened)}"))
    if any("producer" in t.roles for t in targets_of(config)):
        packs = packs_of(config)
        lines.append("asr-conformance: format packs: " + (", ".join(i.identity.label() for i in packs.installed) or "none"))
        lines += [f"asr-conformance: {terminal_line(why)}" for why in packs.problems + packs.notes]
    checks = config.stash.get(START_CHECKS_KEY, [])
    for index, target in enumerate(targets_of(config)):
        started = f", started: {checks[index].said}" if index < len(checks) and checks[index].said else ""
        lines.append(terminal_line(f"asr-conformance: {target.label} ({target.protocol}), roles "
                                   f"{', '.join(target.roles)}{started}"))
        if target.policy and (target.policy.network or target.policy.limits or target.policy.read_only):
            lines.append(terminal_line(f"asr-conformance:   its manifest: network {policies.effective_network(target.policy)}; "
                                       f"limits {policies.effective_limits(target.policy).describe()}"
                                       + (f"; also shown read-only: {', '.join(target.policy.read_only)}"
                                          if target.policy.read_only else "")))
    return lines


# --- collection -----------------------------------------------------------


def _cases(config: pytest.Config, role: str) -> list[Case]:
    return list(iter_cases(corpus_of(config), role=role)) if (corpus_of(config) / role).is_dir() else []


def validator_cases(config: pytest.Config) -> list[Case]:
    return _cases(config, "validator")


def _rule_marks(rules: Iterable[str]) -> list[pytest.MarkDecorator]:
    return [getattr(pytest.mark, rule) for rule in rules]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize the conformance tests; a corpus the loader cannot use is the user's to fix (CorpusError)."""
    try:
        _generate_tests(metafunc)
    except UserError as error:
        raise usage_error(error) from None


def _generate_tests(metafunc: pytest.Metafunc) -> None:
    config = metafunc.config
    if not _active(config):
        return
    if "validator_case" in metafunc.fixturenames:
        metafunc.parametrize("validator_case", [
            pytest.param(case, id=case.id, marks=[pytest.mark.corpus, *_rule_marks(case.rules)])
            for case in validator_cases(config)
        ])
    if "reader_case" in metafunc.fixturenames:
        metafunc.parametrize("reader_case", [
            pytest.param(case, id=case.id, marks=_rule_marks(case.rules)) for case in _cases(config, "reader")
        ])
    if "producer_input" in metafunc.fixturenames:
        # Each input made once (its pack chosen): every test of the input gets that same object.
        sources = sources_of(config)
        metafunc.parametrize("producer_input", [pytest.param(s, id=s.id) for s in sources.values()] or [_NO_INPUTS])
    if "source_edit" in metafunc.fixturenames:
        from asr_conformance.harness.judging.fidelity import source_edits

        metafunc.parametrize("source_edit", [
            pytest.param(edit, id=edit.id) for source in sources_of(config).values() for edit in source_edits(source)
        ] or [_NO_INPUTS])
    if "generated_input" in metafunc.fixturenames:
        metafunc.parametrize("generated_input", _generated_params(config))
    targets = targets_of(config)
    if len(targets) > 1 and "asr_target" in metafunc.fixturenames:
        metafunc.parametrize("asr_target", [pytest.param(t, id=t.key) for t in targets], scope="session")


#: The one parameter of the input-based producer tests when no producer was given inputs (--source-format alone).
_NO_INPUTS = pytest.param(None, id="no-inputs", marks=pytest.mark.skip(
    reason="no producer inputs of its own (--inputs, or inputs in the manifest): only generated transcripts "
    "were converted"))


def _generated_params(config: pytest.Config) -> list[Any]:
    """One parameter per producer fuzz property any target has, and one that skips, saying why, for the
    targets that have none (deselected for the others)."""
    plans = fuzz_plans(config)
    unique = {p.id: p for plan in plans.values() for p in plan.inputs}
    params = [pytest.param(p, id=p.id) for p in unique.values()]
    why = not_fuzzed(plans.values())
    if why is not None:
        params.append(pytest.param(None, id="not-fuzzed", marks=pytest.mark.skip(reason=why)))
    return params


def _item_target(item: pytest.Item, targets: list[Target]) -> Target:
    callspec = getattr(item, "callspec", None)
    if callspec is not None and isinstance(callspec.params.get("asr_target"), Target):
        value: Target = callspec.params["asr_target"]
        return value
    return targets[0]


def result_id(item: pytest.Item, role: str) -> str:
    """Stable across runs and implementations: the case ID, or role/test[parameters]."""
    callspec = getattr(item, "callspec", None)
    params = dict(callspec.params) if callspec is not None else {}
    for name in ("validator_case", "reader_case"):
        if isinstance(params.get(name), Case):
            case_id: str = params[name].id
            return case_id
    parts = []
    for name, value in params.items():
        if name == "asr_target":
            continue
        if value is None:  # the parameter that skips, saying why (no inputs of its own, no format to fuzz)
            parts.append("not-fuzzed" if name == "generated_input" else "no-inputs")
            continue
        parts.append(value.id if isinstance(value, (Case, SourceInput, GeneratedInput)) or hasattr(value, "input")
                     else str(value))
    name = getattr(item, "originalname", item.name)
    return f"{role}/{name}" + (f"[{'-'.join(parts)}]" if parts else "")


def _item_rules(item: pytest.Item) -> list[str]:
    catalog = load_catalog()
    return sorted({mark.name for mark in item.iter_markers() if mark.name in catalog})


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep the tests of the roles each implementation plays, and stamp each with what its report needs."""
    if not _active(config):
        return
    try:
        _keep_and_stamp(config, items)
    except UserError as error:
        raise usage_error(error) from None


def _keep_and_stamp(config: pytest.Config, items: list[pytest.Item]) -> None:
    targets = targets_of(config)
    kept, dropped = [], []
    for item in items:
        if item.get_closest_marker("conformance") is None:
            kept.append(item)
            continue
        found = classify(item.nodeid)
        if found is None:
            raise UnclassifiedTest(f"{item.nodeid}: a conformance test in a module that plugin/classify.py does "
                                   "not name")
        role = found.role
        target = _item_target(item, targets)
        callspec = getattr(item, "callspec", None)
        params = callspec.params if callspec is not None else {}
        edit = params.get("source_edit")
        source = params.get("producer_input") or (edit.source if isinstance(edit, SourceEdit) else None)
        given = input_of(source) if isinstance(source, SourceInput) else None
        if role not in target.roles or (given is not None and given not in target.inputs) or (
                "generated_input" in params and not _fuzzes(config, target, params["generated_input"])):
            dropped.append(item)
            continue
        record = TestRecord(result_id(item, role), target.key, role, found.kind, tuple(_item_rules(item)))
        if "generated_input" in params and params["generated_input"] is None:
            record = record.with_(not_fuzzed=not_fuzzed(fuzz_plans(config).values()))  # the reason it skips with
        stamp(item, record)
        kept.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def _fuzzes(config: pytest.Config, target: Target, generated: GeneratedInput | None) -> bool:
    """Whether a producer fuzz item is this target's: one of its properties, or the skip that says why it has none."""
    plan = fuzz_plans(config).get(target.key)
    if plan is None:
        return False
    return generated in plan.inputs if generated is not None else bool(plan.reason)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    """Each report of a conformance test carries the test's record; a failure the expectations file (or
    the baseline) lists is reported as an expected failure."""
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    recorder = recorder_of(item)
    if recorder is None or not _active(item.config):
        return
    if report.when == "call" and report.failed:
        record = recorder.current()
        reason = excuse(item.config.stash[GATE_KEY], record.id, record.rules, record.implementation)
        if reason:
            report.outcome = "skipped"
            report.wasxfail = terminal_line(reason)
    attach(item, report)


# --- fixtures -------------------------------------------------------------------


@pytest.fixture(scope="session")
def asr_target(request: pytest.FixtureRequest) -> Target:
    """The implementation under test (the bundled reference when none is given)."""
    return target_of(request.config)


@pytest.fixture(scope="session")
def asr_validator(request: pytest.FixtureRequest, asr_target: Target) -> Iterator[ValidatorAdapter]:
    """One adapter per session (per xdist worker): one persistent process at most."""
    adapter = started_ahead(asr_target.validator_adapter(request.config.getoption("check_protocol")))
    yield adapter
    adapter.close()


@pytest.fixture(scope="session")
def asr_reader(request: pytest.FixtureRequest, asr_target: Target) -> Iterator[ReaderAdapter]:
    """The reader role's adapter, one per session (per xdist worker)."""
    adapter = started_ahead(asr_target.reader_adapter(request.config.getoption("check_protocol")))
    yield adapter
    adapter.close()


@pytest.fixture(scope="session")
def asr_also_named() -> dict[str, set[str]]:
    """Rule IDs a validator may name besides each mutator's own rule."""
    from asr_conformance.generators.registry import ALSO_NAMED

    return {rule: set(companions) for rule, companions in ALSO_NAMED.items()}


@pytest.fixture
def asr_record(request: pytest.FixtureRequest) -> Recorder:
    """Adds what the test saw to its record: ``asr_record(answer=..., status=..., output=...)``."""
    found = recorder_of(request.node)
    return found if found is not None else Recorder(TestRecord(request.node.nodeid, "", "", ""))


@pytest.fixture
def asr_fuzz(request: pytest.FixtureRequest, asr_validator: ValidatorAdapter, asr_target: Target,
             asr_also_named: dict[str, set[str]], tmp_path: Path, asr_record: Recorder) -> Iterator[ValidatorFuzzSession]:
    """Runs a property against the implementation under test, with the chosen profile."""
    from hypothesis import settings

    budget = shrink_budget_of(request.config)
    facts: dict[str, Any] = {}
    session = ValidatorFuzzSession(asr_validator, tmp_path, counterexamples_of(request.config, tmp_path),
                          replay_arguments(asr_target, "validator"), settings(), fuzz_seed(request.config),
                          asr_also_named, budget, database_key=result_id(request.node, "validator"),
                          record=facts.__setitem__, strict_reasons=asr_target.strict_reasons,
                          long_shapes=run_context_of(request.config).long_shapes)
    _report_fuzzing(asr_record, session, facts)
    yield session


@pytest.fixture
def asr_reader_fuzz(request: pytest.FixtureRequest, asr_reader: ReaderAdapter, asr_target: Target, tmp_path: Path,
                    asr_record: Recorder) -> Iterator[ReaderFuzzSession]:
    """Runs a property of generated streams against the reader under test, the reference reader as oracle."""
    from hypothesis import settings

    facts: dict[str, Any] = {}
    session = ReaderFuzzSession(asr_reader, tmp_path / "generated", counterexamples_of(request.config, tmp_path),
                                replay_arguments(asr_target, "reader"), settings(),
                                fuzz_seed(request.config), shrink_budget_of(request.config),
                                database_key=result_id(request.node, "reader"), record=facts.__setitem__,
                                long_shapes=run_context_of(request.config).long_shapes)
    _report_fuzzing(asr_record, session, facts)
    yield session


@pytest.fixture(scope="session")
def asr_producer(request: pytest.FixtureRequest, asr_target: Target,
                 tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProducerRunner]:
    """The producer role's runner, one per session (per xdist worker); it keeps each input's baseline."""
    runner = ProducerRunner(asr_target, tmp_path_factory.mktemp("conversions"),
                            request.config.getoption("check_protocol"))
    yield runner
    runner.close()


@pytest.fixture(scope="session")
def asr_packs(request: pytest.FixtureRequest) -> Packs:
    """The format packs that judge producer fidelity in this run (built-in only under --builtin-packs-only)."""
    return packs_of(request.config)


@pytest.fixture(scope="session")
def asr_disguise_seed(request: pytest.FixtureRequest) -> int:
    """The seed of this run's disguised copies: the run's Hypothesis seed, so --hypothesis-seed replays them
    (0 under a derandomized profile, whose examples are the same every run anyway; a fresh one under a
    profile with an example database, which takes no forced seed)."""
    from hypothesis import settings

    seed = fuzz_seed(request.config)
    if seed is not None:
        return seed
    current = settings.default
    return 0 if current is not None and current.derandomize else random.getrandbits(32)


@pytest.fixture
def asr_producer_fuzz(request: pytest.FixtureRequest, asr_producer: ProducerRunner, asr_target: Target,
                      tmp_path: Path, asr_record: Recorder) -> Iterator[ProducerFuzzSession]:
    """Runs a property of generated native transcripts against the producer under test."""
    from hypothesis import settings

    facts: dict[str, Any] = {}
    session = ProducerFuzzSession(
        lambda source: asr_producer.convert(source, "baseline"), tmp_path / "generated",
        counterexamples_of(request.config, tmp_path), replay_arguments(asr_target, "producer"), settings(),
        fuzz_seed(request.config), shrink_budget_of(request.config),
        database_key=result_id(request.node, "producer"), record=facts.__setitem__,
        long_shapes=run_context_of(request.config).long_shapes)
    _report_fuzzing(asr_record, session, facts)
    yield session


def _report_fuzzing(record: Recorder, session: PropertyRunner, facts: dict[str, Any]) -> None:
    """What a fuzz test's record carries, read when its report is made: examples, seed, counterexample, shrinking."""
    record.later(lambda: {
        **(inline_input(session.failed_input) if session.failed_input is not None else {}),
        **({"output": session.failed_answer} if session.failed_input is not None else {}),
        **({"expected": session.failed_expected} if session.failed_expected else {}),
        "fuzz_examples": session.examples, "seed": session.seed,
        "counterexample": None if session.counterexample is None else
        (str(session.counterexample[0]), session.counterexample[1]),
        "shrink": {key.removeprefix("asr_"): value for key, value in facts.items()} or None,
        **({"reasons": session.reasons} if isinstance(session, ValidatorFuzzSession) and session.reasons else {}),
    })


def replay_arguments(target: Target, role: str) -> list[str]:
    """The arguments that name the implementation again in ``role``, with absolute paths, so a replay
    works anywhere."""
    if not target.given:
        # The bundled reference: pointing at the suite certifies it.
        return [str(CONFORMANCE_DIR)] + ([f"--role={role}"] if role != "validator" else [])
    # absolute(), not resolve(): an implementation reached through a symbolic link is named as it was given.
    arguments = [f"--implementation={Path(target.source).absolute()}", f"--role={role}"]
    if target.protocol == "persistent" and not target.source.endswith(".toml"):
        arguments.append("--persistent")
    return arguments


def conformance_tests() -> list[str]:
    """``role/test_name`` of every test function of the conformance suite (the start of its result IDs)."""
    found = []
    for module in sorted(CONFORMANCE_DIR.glob("test_*.py")):
        role = MODULES[module.stem].role
        found += [f"{role}/{name}" for name in re.findall(r"^def (test_\w+)", module.read_text(), re.MULTILINE)]
    return found
