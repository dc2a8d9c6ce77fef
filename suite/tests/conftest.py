"""Fixtures and settings for the project's own tests.

The installed plugin stays out of runs that certify nothing (this one included), so the
project's tests choose their own Hypothesis profile here: the fixed-example one the suite
registers (``asr-fixed``), unless ``--hypothesis-profile`` names another.  The certification
runs these tests start in subprocesses use it too (through ``ASR_HYPOTHESIS_PROFILE``), so
that what a test expects of fuzzing does not hang on a random seed; the tests of the default
profile's randomness clear the variable.

``certify`` is the one way these tests start a certification in a fresh pytest process
(see certifying.py).
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from certifying import Certification, Certify, run_certification, shared_certification
from hypothesis import settings

from asr_conformance.harness.adapters.persistent import PersistentImplementation
from asr_conformance.harness.fuzzing.profiles import ensure_profiles
from asr_conformance.harness.fuzzing.replayable import seed_alone

pytest_plugins = ["pytester"]

os.environ.setdefault("ASR_HYPOTHESIS_PROFILE", "asr-fixed")
# Every pytest process these tests start rewrites the asserts of each plugin it loads (Hypothesis, xdist,
# pytest-benchmark: about a hundred modules, half a CPU second or more) and keeps the result as bytecode
# beside the module. Where the environment forbids writing bytecode (PYTHONDONTWRITEBYTECODE), each of
# those processes would rewrite them all again, so the variable is cleared for the processes started here.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
# The same holds for this run: collecting rewrites the asserts of every test module (three to four CPU seconds in
# each xdist worker), and without bytecode written pytest cannot keep the rewritten modules for the next run.
sys.dont_write_bytecode = False


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--certify-seeds", type=int, default=0, metavar="N",
                     help="certify every bundled implementation under N consecutive fresh fuzz seeds "
                     "(test_fresh_seeds.py; run before a release with --certify-seeds=20)")
    parser.addoption("--campaigns", action="store_true", default=False,
                     help="also run the tests marked 'campaign': real HypoFuzz campaigns and fuzz runs of several "
                     "processes pooling examples through redis (tox -e campaigns). The default run keeps the "
                     "campaign command's plan, refusals, stop and summary, and one run replaying another's find "
                     "from redis")


#: Collection thresholds for these tests' own processes (the interpreter's are 700, 10, 10). Hypothesis allocates
#: many short-lived objects, and a worker's garbage collections took about a tenth of its CPU time, most of it in
#: full collections walking every module and test item; with fewer young collections, and what exists after
#: collection frozen, they take about half as long (15 CPU seconds of the workers' 160 became 8).
GC_THRESHOLDS = (10_000, 10, 10)


def pytest_configure(config: pytest.Config) -> None:
    gc.set_threshold(*GC_THRESHOLDS)
    config.addinivalue_line("markers", "fuzz: a property-based test driven by Hypothesis strategies")
    config.addinivalue_line("markers", "local_constants: Hypothesis draws as it does by default, constants of the "
                            "modules loaded in the process included (the other tests draw from the seed alone)")
    ensure_profiles()  # the suite's plugin registers them only in certification runs
    config.addinivalue_line(
        "markers", "e2e: a whole certification over the whole corpus in a subprocess (deselect with -m 'not e2e')")
    config.addinivalue_line(
        "markers", "campaign: a long real fuzz campaign (several processes, a minute or more); runs only with "
        "--campaigns")
    if not config.getoption("hypothesis_profile", None):
        settings.load_profile("asr-fixed")
    # The conformance suite's own marks (its roles and kinds, a rule's ID), as a certification run registers them:
    # tests that call a conformance test's body in process (miniatures.py) import its module.
    from asr_conformance.plugin.hooks import MARKERS
    from asr_conformance.vocabulary.rules import load_catalog

    for name, description in MARKERS.items():
        if name not in ("fuzz", "e2e", "campaign"):
            config.addinivalue_line("markers", f"{name}: {description}")
    for rule in load_catalog().values():
        config.addinivalue_line("markers", f"{rule.id}: {rule.summary}")


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Campaign tests are opt-in: each runs several fuzzing processes for a minute or more, which the
    default run (kept to a few minutes on two cores) cannot afford."""
    if item.get_closest_marker("campaign") and not item.config.getoption("campaigns"):
        pytest.skip("a long fuzz campaign: run with --campaigns (tox -e campaigns)")


@pytest.fixture(autouse=True)
def _draws_of_the_seed_alone(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every test draws as the harness's properties draw (``harness/fuzzing/replayable.py``): from the seed alone,
    never from constants of the modules earlier tests in the same worker happened to import, so that a
    derandomized test draws the same examples whichever tests ran before it (``local_constants``: the test that
    shows what plain Hypothesis does)."""
    if request.node.get_closest_marker("local_constants"):
        yield
        return
    with seed_alone():
        yield


#: Fixtures of tests that start whole pytest processes: these tests take seconds, the others milliseconds.
_SUBPROCESS_FIXTURES = frozenset({"certify", "pytester", "redis_server"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Slowest modules first: those with whole-corpus runs, then those with other tests that start
    pytest, then the rest, each module kept whole (its module-scoped fixtures are set up once) and in
    collection order.  xdist hands the first quarter of the items out alternately and the rest on
    demand, so long tests started early spread over the workers instead of ending the run on one."""

    def weight(item: pytest.Item) -> int:
        if item.get_closest_marker("e2e"):
            return 0
        return 1 if _SUBPROCESS_FIXTURES & set(getattr(item, "fixturenames", ())) else 2

    modules: dict[str, int] = {}
    for item in items:
        module = item.nodeid.split("::", 1)[0]
        modules[module] = min(modules.get(module, 2), weight(item))
    order = {module: index for index, module in enumerate(modules)}
    items.sort(key=lambda item: (modules[item.nodeid.split("::", 1)[0]], order[item.nodeid.split("::", 1)[0]]))


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """The modules, test items and fixtures that exist once collection is done live as long as the run: frozen out
    of every later collection, which then walks only what the tests make (a cycle among them that dies later is
    freed only when the process ends)."""
    gc.collect()
    gc.freeze()


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """(xdist) ``-n auto`` starts one worker more than the machine has cores: these tests spend much of their time
    waiting on the processes they start (certification runs, implementations, timeouts), and the extra worker
    runs while another waits (on two cores, 3 min 32 s against 3 min 48 s, the machine idle 10 s instead of 46;
    a fourth worker costs more than it fills).  ``PYTEST_XDIST_AUTO_NUM_WORKERS`` still decides when set."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return cores + 1


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """(xdist) The default ``load`` distribution becomes ``worksteal``: a worker that runs out of tests
    takes half of another's queue, so a run of tests lasting from milliseconds to half a minute does not
    end with one worker busy and the other idle. An explicit ``--dist`` is left as it is."""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import WorkStealingScheduling

    return WorkStealingScheduling(config, log)


@pytest.fixture
def certify(tmp_path: Path) -> Certify:
    """Start a certification: ``certify(*args, cwd=..., env=..., timeout=..., report_dir=...)``.

    The run happens in ``tmp_path`` unless ``cwd`` names another folder (pass ``pytester.path``
    where the test writes a conftest or files there first)."""

    def run(*args: str | os.PathLike[str], cwd: Path | None = None, **options: Any) -> Certification:
        return run_certification(*args, cwd=cwd or tmp_path, **options)

    return run


#: The bundled reference, whose manifest plays all three roles.
REFERENCE = Path(__file__).resolve().parents[2] / "examples" / "reference.toml"


@pytest.fixture(scope="session")
def reference_whole_run(tmp_path_factory: pytest.TempPathFactory) -> Certification:
    """The default certification of the bundled reference (every role, corpus and fuzz) under two xdist
    workers: one run per test session, read by every test that asks what a whole run of the reference says
    (test_hostile_verdicts.py: complete and conforming; test_fuzz_harness.py: every fuzz property passes).

    Under the default profile, as a vendor runs it: a fresh seed every session, which the run chooses, prints
    and records (``hypothesis.seed`` in its report), so that it is also the per-run fresh-seed
    certification of ``examples/reference.toml`` whole, every property (test_fresh_seeds.py)."""
    return shared_certification(tmp_path_factory, "reference-whole-xdist", f"--implementation={REFERENCE}", "-n", "2",
                                env={"ASR_HYPOTHESIS_PROFILE": "asr-fast"})


#: accept-all fails the ASR-289 mutation property on its first example: the quickest failing fuzz run there is.
ACCEPT_ALL = Path(__file__).resolve().parents[2] / "examples" / "misbehaving" / "accept-all"
#: Where that run writes its report: a folder of the vendor's choosing, a space in its name.
FOUND_REPORTS = "my reports"


@pytest.fixture(scope="session")
def accept_all_found(tmp_path_factory: pytest.TempPathFactory) -> Certification:
    """One failing fuzz run for the session, read by every test of what a failing property leaves behind
    (test_first_run.py: the shrink budget's report, counterexamples under the chosen report folder and their replay
    from anywhere; test_fuzz_harness.py: the counterexample file shrunk, the profile the variable names): accept-all
    on the ASR-289 property, under the fixed profile named by ``ASR_HYPOTHESIS_PROFILE``, a shrink budget neither of
    whose limits a busy machine reaches, and its report in ``FOUND_REPORTS``."""
    return shared_certification(tmp_path_factory, "accept-all-found", f"--implementation={ACCEPT_ALL}", "-m", "fuzz",
                                "-k", "ASR-289", "--asr-shrink-steps=500", "--asr-shrink-time=3600",
                                f"--report-dir={FOUND_REPORTS}", env={"ASR_HYPOTHESIS_PROFILE": "asr-fixed"})


# -- the implementations that read only the start of a stream (test_hostile_truncation.py, test_scale_cases.py)

TRUNCATING = Path(__file__).resolve().parents[2] / "examples" / "hostile"


@pytest.fixture(params=[64, 1000], ids=lambda n: f"first-{n}")
def lines(request: pytest.FixtureRequest) -> int:
    return int(request.param)


@pytest.fixture
def hostile_validator(lines: int) -> Iterator[PersistentImplementation]:
    adapter = PersistentImplementation([str(TRUNCATING / "checks-only-the-first-lines"), str(lines)], timeout=60)
    yield adapter
    adapter.close()


@pytest.fixture
def hostile_reader(lines: int) -> Iterator[PersistentImplementation]:
    adapter = PersistentImplementation([str(TRUNCATING / "reads-only-the-first-records"), str(lines)], timeout=60,
                                       role="reader")
    yield adapter
    adapter.close()
