"""pytest plugin of asr-conformance (entry point ``asr_conformance.plugin``).

    pytest --implementation=./my-validator      # one-shot executable (§4.1)
    pytest --implementation=acme.toml           # manifest (§4.2)
    pytest                                      # in the checkout: the bundled reference

With ``--implementation`` the run collects the conformance suite and nothing
else, whatever the current folder holds.  Options, markers (``corpus``,
``fuzz`` and one per rule ID, so ``-m ASR-164`` and ``-k ASR-164`` work), the
``asr_validator`` fixture and the end-of-run verdict live here; workers and
controller under xdist compute the same collection from the same corpus.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import pytest

from . import CORPUS_DIR
from .adapters.oneshot import DEFAULT_TIMEOUT, OneShotValidator
from .adapters.persistent import PersistentValidator
from .corpus import Case, CorpusError, iter_cases
from .fuzzing import COUNTEREXAMPLES, DEFAULT_PROFILE, FuzzSession, register_profiles
from .judging import judge
from .manifest import ManifestError, load_manifest
from .rules import CatalogError, load_catalog

CONFORMANCE_DIR = Path(__file__).resolve().parent / "conformance"
MARKERS = {
    "corpus": "a test that runs one case of the case corpus",
    "fuzz": "a property-based test driven by Hypothesis strategies",
    "slow": "a long-running test, excluded from the default run",
    "conformance": "a test of the implementation under test (not of the harness)",
}
ROLES = ("validator", "producer", "reader")

# Registered on import, so that Hypothesis' own --hypothesis-profile can name them.
register_profiles()


@dataclass
class Target:
    """The implementation under test, as the options describe it."""

    name: str
    version: str | None
    command: tuple[str, ...]
    protocol: str
    timeout: float
    cwd: str | None = None
    accept_codes: frozenset[int] = frozenset({0})
    reject_codes: frozenset[int] = frozenset({1})
    placeholder: str | None = None
    given: bool = True

    def validator(self, check_protocol: bool):
        if self.protocol == "persistent":
            return PersistentValidator(self.command, self.timeout, self.cwd, check_schemas=check_protocol)
        return OneShotValidator(
            self.command, self.timeout, self.accept_codes, self.reject_codes, self.placeholder, self.cwd
        )


@dataclass
class Tally:
    """Counted on whichever process sees the reports (the controller under xdist)."""

    passed: int = 0
    failed: int = 0
    reported: int = 0
    implementation: str | None = None
    failing_rules: set[str] = field(default_factory=set)


TARGET_KEY = pytest.StashKey[Target]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("asr-conformance", "ASR conformance suite")
    group.addoption(
        "--implementation", action="append", default=[], metavar="PATH",
        help="the implementation under test: an executable (one-shot, HARNESS §4.1) or a TOML manifest (§4.2); "
        "runs the conformance suite only",
    )
    group.addoption("--role", choices=ROLES, default=None,
                    help="role to certify (default: producer with --inputs, else validator)")
    group.addoption("--inputs", action="append", default=[], metavar="PATH",
                    help="producer inputs: files, folders or globs")
    group.addoption("--asr-timeout", type=float, default=None, metavar="SECONDS", dest="asr_timeout",
                    help=f"seconds per case before the implementation is killed (default {DEFAULT_TIMEOUT:g})")
    try:  # --timeout as the brief names it, unless another plugin (pytest-timeout) owns it
        group.addoption("--timeout", type=float, default=None, metavar="SECONDS", dest="asr_timeout",
                        help="same as --asr-timeout")
    except ValueError:
        pass
    group.addoption("--persistent", action="store_true",
                    help="talk to the executable with the persistent protocol (§4.3) instead of one process per case")
    group.addoption("--check-protocol", action="store_true",
                    help="check every persistent-protocol message against its published JSON Schema")
    group.addoption("--cases", default=None, metavar="DIR", help=f"case corpus folder (default {CORPUS_DIR})")
    group.addoption("--counterexamples", default=str(COUNTEREXAMPLES), metavar="DIR",
                    help="where shrunk fuzz failures are written as case files (default %(default)s)")


def pytest_configure(config: pytest.Config) -> None:
    for name, description in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {description}")
    try:
        for rule in load_catalog().values():
            config.addinivalue_line("markers", f"{rule.id}: {rule.summary}")
    except CatalogError as error:
        raise pytest.UsageError(f"asr-conformance: {error}") from None
    config.pluginmanager.register(CertificationSummary(config), "asr-conformance-summary")
    _configure_hypothesis(config)
    implementations = config.getoption("implementation")
    if not implementations:
        return
    if len(implementations) > 1:
        raise pytest.UsageError("asr-conformance: give --implementation once (side-by-side runs are not supported yet)")
    role = config.getoption("role") or ("producer" if config.getoption("inputs") else "validator")
    if role != "validator":
        raise pytest.UsageError(f"asr-conformance: the {role} role is not available in this version; "
                                "only --role=validator is")
    config.stash[TARGET_KEY] = _target_from_option(config, implementations[0])
    # Run the conformance suite and nothing else (not the current folder's tests).
    config.args[:] = [str(CONFORMANCE_DIR)]


SEED_KEY = pytest.StashKey[object]()


def _configure_hypothesis(config: pytest.Config) -> None:
    """Load the asr-fast profile unless one was chosen (CI=true would otherwise load Hypothesis' ci profile);
    under asr-certify, choose a seed once (on the controller) and record it."""
    from hypothesis import settings

    chosen = config.getoption("hypothesis_profile", None)
    # Loaded here too (Hypothesis' plugin may configure after this one), so the seed decision sees it.
    settings.load_profile(chosen or DEFAULT_PROFILE)
    seed = config.getoption("hypothesis_seed", None)
    if hasattr(config, "workerinput"):
        seed = config.workerinput.get("asr_seed", seed)
    elif seed is None and settings.default.derandomize is False and settings.default.database is None:
        # A forced seed switches the example database off, so only profiles without one get it.
        import random

        seed = random.getrandbits(32)
    config.stash[SEED_KEY] = seed
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_SeedToWorkers(seed), "asr-conformance-seed")


class _SeedToWorkers:
    """Gives every xdist worker the controller's seed."""

    def __init__(self, seed: object) -> None:
        self.seed = seed

    def pytest_configure_node(self, node) -> None:
        node.workerinput["asr_seed"] = self.seed


def pytest_report_header(config: pytest.Config) -> list[str]:
    from hypothesis import settings

    seed = config.stash.get(SEED_KEY, None)
    profile = settings._current_profile  # type: ignore[attr-defined]
    line = f"asr-conformance: Hypothesis profile {profile}"
    if seed is not None:
        line += f", seed {seed} (replay with --hypothesis-seed={seed})"
    return [line]


def _corpus(config: pytest.Config) -> Path:
    given = config.getoption("cases")
    return Path(given).resolve() if given else CORPUS_DIR


def _timeout(config: pytest.Config, fallback: float | None) -> float:
    given = config.getoption("asr_timeout")
    return float(given if given is not None else fallback if fallback is not None else DEFAULT_TIMEOUT)


def _target_from_option(config: pytest.Config, given: str) -> Target:
    path = Path(given)
    if path.suffix == ".toml":
        try:
            manifest = load_manifest(path)
        except ManifestError as error:
            raise pytest.UsageError(f"asr-conformance: {error}") from None
        if "validator" not in manifest.roles:
            raise pytest.UsageError(f"asr-conformance: {path}: roles {list(manifest.roles)} do not include validator")
        return Target(
            manifest.name, manifest.version, manifest.command, manifest.protocol,
            _timeout(config, manifest.timeout), str(manifest.folder), manifest.accept_codes,
            manifest.reject_codes, manifest.placeholder,
        )
    if not path.exists():
        raise pytest.UsageError(f"asr-conformance: --implementation={given}: no such file")
    if path.is_dir() or not os.access(path, os.X_OK):
        raise pytest.UsageError(f"asr-conformance: --implementation={given}: not an executable file "
                                "(chmod +x it, or describe it with a .toml manifest)")
    protocol = "persistent" if config.getoption("persistent") else "oneshot"
    return Target(path.name, None, (str(path.resolve()),), protocol, _timeout(config, None))


def bundled_reference(config: pytest.Config) -> Target:
    """The embedded default: the reference validator over the persistent protocol."""
    from . import __version__

    command = (sys.executable, "-m", "asr_conformance.persistent_server")
    return Target("asr-conformance-reference", __version__, command, "persistent", _timeout(config, None), given=False)


def target_of(config: pytest.Config) -> Target:
    return config.stash.get(TARGET_KEY, None) or bundled_reference(config)


# --- collection -----------------------------------------------------------


def validator_cases(config: pytest.Config) -> list[Case]:
    try:
        return list(iter_cases(_corpus(config), role="validator"))
    except CorpusError as error:
        raise pytest.UsageError(f"asr-conformance: {error}") from None


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "validator_case" not in metafunc.fixturenames:
        return
    params = [
        pytest.param(case, id=case.id, marks=[pytest.mark.corpus, *(getattr(pytest.mark, r) for r in case.rules)])
        for case in validator_cases(metafunc.config)
    ]
    metafunc.parametrize("validator_case", params)


@pytest.fixture(scope="session")
def asr_target(request: pytest.FixtureRequest) -> Target:
    """The implementation under test (the bundled reference when none is given)."""
    return target_of(request.config)


@pytest.fixture(scope="session")
def asr_validator(request: pytest.FixtureRequest, asr_target: Target) -> Iterator[object]:
    """One adapter per session (per xdist worker): one persistent process at most."""
    adapter = asr_target.validator(request.config.getoption("check_protocol"))
    yield adapter
    adapter.close()


@pytest.fixture(scope="session")
def asr_also_named() -> dict[str, set[str]]:
    from .generators import mutators_session, mutators_tools

    also: dict[str, set[str]] = {}
    for module in (mutators_session, mutators_tools):
        for rule, companions in getattr(module, "ALSO_NAMED", {}).items():
            also.setdefault(rule, set()).update(companions)
    return also


@pytest.fixture
def asr_fuzz(request: pytest.FixtureRequest, asr_validator, asr_target: Target, asr_also_named,
             tmp_path: Path, record_property) -> Iterator[FuzzSession]:
    """Runs a property against the implementation under test, with the chosen profile."""
    from hypothesis import settings

    given = request.config.getoption("implementation")
    implementation = given[0] if given else "the bundled reference"
    seed = request.config.stash.get(SEED_KEY, None)
    session = FuzzSession(asr_validator, tmp_path, Path(request.config.getoption("counterexamples")),
                          implementation, settings(), seed if isinstance(seed, int) else None, asr_also_named)
    yield session
    record_property("asr_fuzz_examples", session.examples)
    if seed is not None:
        record_property("asr_hypothesis_seed", seed)


def run_validator_case(case: Case, adapter, record_property) -> None:
    """The body of a corpus test: ask, judge, and fail/skip/pass with a readable message."""
    verdict = adapter.validate(case.stream)
    judgement = judge(case, verdict)
    record_property("asr_outcome", verdict.outcome.value)
    record_property("asr_rules_named", sorted(verdict.rules))
    record_property("asr_status", judgement.status)
    if judgement.rule_level:
        record_property("asr_rule_level", judgement.rule_level)
    started = getattr(adapter, "implementation", None)
    if started is not None:
        record_property("asr_implementation", f"{started.name} {started.implementation_version or ''}".strip())
    if judgement.status == "failed":
        pytest.fail(judgement.message, pytrace=False)
    if judgement.status == "reported":
        pytest.skip(judgement.message)


# --- results ------------------------------------------------------------------


class CertificationSummary:
    """Counts corpus results and gives the run's verdict.

    Registered on every process; under xdist the controller receives every
    worker's reports through ``pytest_runtest_logreport``, so the counts and
    the verdict are the controller's alone."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.tally = Tally()
        self.fuzz = Tally()

    @property
    def active(self) -> bool:
        return (
            _is_certification(self.config)
            and not hasattr(self.config, "workerinput")
            and not self.config.getoption("collectonly")
        )

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if "conformance" not in report.keywords:
            return
        properties = dict(report.user_properties)
        if "asr_implementation" in properties:
            self.tally.implementation = str(properties["asr_implementation"])
        if not (report.when == "call" or (report.when == "setup" and not report.passed)):
            return
        tally = self.tally if "corpus" in report.keywords else self.fuzz
        if report.passed:
            tally.passed += 1
        elif report.failed:
            tally.failed += 1
            tally.failing_rules.update(k for k in report.keywords if k.startswith(("ASR-", "X-")))
        elif properties.get("asr_status") == "reported":
            tally.reported += 1

    @property
    def executed(self) -> int:
        return self.tally.passed + self.tally.failed + self.fuzz.passed + self.fuzz.failed

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        """Zero executed cases is never a pass."""
        if self.active and self.executed == 0 and exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter, exitstatus: int, config: pytest.Config) -> None:
        if not self.active:
            return
        tally = self.tally
        target = target_of(config)
        name = tally.implementation or " ".join(filter(None, [target.name, target.version]))
        terminalreporter.section("asr-conformance")
        terminalreporter.write_line(f"implementation: {name} ({target.protocol})")
        terminalreporter.write_line(
            f"validator cases: {tally.passed} passed, {tally.failed} failed, "
            f"{tally.reported} implementation-defined (reported, not scored)"
        )
        fuzz = self.fuzz
        if fuzz.passed + fuzz.failed:
            terminalreporter.write_line(f"fuzz properties: {fuzz.passed} passed, {fuzz.failed} failed")
        failing = tally.failing_rules | fuzz.failing_rules
        if failing:
            terminalreporter.write_line("rules with failing cases: " + ", ".join(sorted(failing)))
        if self.executed == 0:
            verdict = "NO VERDICT: no case was executed"
        else:
            verdict = "DOES NOT CONFORM" if tally.failed or fuzz.failed else "CONFORMS"
        terminalreporter.write_line(f"verdict: {verdict}", bold=True, red=verdict != "CONFORMS",
                                    green=verdict == "CONFORMS")


def _is_certification(config: pytest.Config) -> bool:
    """A run of the conformance suite (given an implementation, or pointed at it)."""
    if TARGET_KEY in config.stash:
        return True
    for arg in config.args:
        where = Path(arg.split("::")[0]).resolve()
        if where == CONFORMANCE_DIR or CONFORMANCE_DIR in where.parents:
            return True
    return False
