"""What this run's options mean, read from the pytest config: the implementations under test,
the corpus, the Hypothesis facts and the options recorded in the report.

Shared by the hooks and the session object, so that neither imports the other's module.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from asr_conformance import CORPUS_DIR
from asr_conformance.harness.adapters.targets import Target
from asr_conformance.harness.fuzzing.producers import FuzzPlan, fuzz_plan
from asr_conformance.harness.fuzzing.profiles import COUNTEREXAMPLES, ShrinkBudget
from asr_conformance.harness.isolation import disclosure, policies
from asr_conformance.harness.judging.fidelity import producer_sources
from asr_conformance.harness.run_context import RunContext
from asr_conformance.packs.registry import Packs
from asr_conformance.packs.selection import SourceInput, source_input
from asr_conformance.plugin.entry import CONFORMANCE_DIR

TARGETS_KEY = pytest.StashKey[list[Target]]()
FUZZ_PLANS_KEY = pytest.StashKey[dict[str, FuzzPlan]]()
SEED_KEY = pytest.StashKey[object]()
#: time.time() at which --run-timeout ends the run (None without one); the same in every worker.
RUN_DEADLINE_KEY = pytest.StashKey[float | None]()
#: The run's context (``harness.run_context``), made once per process in pytest_configure.
RUN_CONTEXT_KEY = pytest.StashKey[RunContext]()


def run_context_of(config: pytest.Config) -> RunContext:
    return config.stash[RUN_CONTEXT_KEY]
SOURCES_KEY = pytest.StashKey[dict[str, SourceInput]]()
PACKS_KEY = pytest.StashKey[Packs]()


def fuzz_seed(config: pytest.Config) -> int | None:
    """The seed of the run's fuzz sessions: the run's Hypothesis seed, None without one (a derandomized profile,
    or one with an example database).  Their long examples' pools are drawn from it (0 without one)."""
    seed = config.stash.get(SEED_KEY, None)
    return seed if isinstance(seed, int) else None


def shrink_budget_of(config: pytest.Config) -> ShrinkBudget:
    return ShrinkBudget(float(config.getoption("asr_shrink_time")), int(config.getoption("asr_shrink_steps")))


def counterexamples_of(config: pytest.Config, scratch: Path | None = None) -> Path:
    """--counterexamples, else counterexamples/ under the report folder (under ``scratch`` with --report-dir=none)."""
    given = config.getoption("counterexamples")
    if given:
        return Path(given).resolve()
    report_dir = config.getoption("report_dir")
    if report_dir in ("none", ""):
        base = scratch if scratch is not None else Path(config.rootpath)
        return (base / COUNTEREXAMPLES).resolve()
    return (Path(report_dir) / COUNTEREXAMPLES).resolve()


def hypothesis_facts(config: pytest.Config) -> dict[str, Any]:
    from hypothesis import settings

    seed = config.stash.get(SEED_KEY, None)
    profile = settings.get_current_profile_name()
    return {"profile": profile, "seed": seed if isinstance(seed, int) else None,
            # The same examples every run: a regression gate that certifies nothing new (and earns no badge).
            "fixed_examples": settings.default is not None and bool(settings.default.derandomize)}


def run_options(config: pytest.Config, partial: list[str] | None = None) -> dict[str, Any]:
    """The options that shape a run, for the report; ``partial`` says what narrowed it (``narrowing`` and more)."""
    partial = narrowing(config) if partial is None else partial
    return {
        "roles": {t.key: list(t.roles) for t in targets_of(config)},
        "partial": bool(partial),
        "partial_reasons": partial,
        "markers": config.getoption("markexpr") or None,
        "keywords": config.getoption("keyword") or None,
        "timeout": config.getoption("asr_timeout"),
        # What the implementations were run with, whether --persistent or a manifest's protocol said so.
        "persistent": config.getoption("persistent") or any(t.protocol == "persistent" for t in targets_of(config)),
        "protocols": {t.key: t.protocol for t in targets_of(config)},
        "shrink": shrink_budget_of(config).to_json(),
        "counterexamples": str(counterexamples_of(config)) if config.getoption("report_dir") not in ("none", "")
        or config.getoption("counterexamples") else None,
        "check_protocol": config.getoption("check_protocol"),
        "workers": getattr(config.option, "numprocesses", None),
        "expectations": config.getoption("expectations"),
        "baseline": config.getoption("baseline"),
        "arguments": list(config.invocation_params.args),
        "run_timeout": config.getoption("run_timeout", None),
        "run_limit_reached": run_limit_reached(config),
        "sandbox": disclosure.describe_sandbox(run_context_of(config).policy),
        # Every widening of the closed box (names of passed variables, never their values): part of the certificate.
        "pass_env": list(dict.fromkeys([*(config.getoption("pass_env", None) or []),
                                        *(n for t in targets_of(config) for n in t.pass_env)])),
        "allow_read": list(dict.fromkeys([*run_context_of(config).settings.allow_read,
                                          *(f for t in targets_of(config) if t.policy for f in t.policy.read_only)])),
        "network": {t.key: policies.effective_network(t.policy) for t in targets_of(config)},
        "widened": widened_of(config),
        "max_output": config.getoption("max_output", None),
        "builtin_packs_only": bool(config.getoption("builtin_packs_only", False)),
        "strict_reasons": bool(config.getoption("strict_reasons", False)),
        "packs_not_loaded": _pack_problems(config),
    }


def widened_of(config: pytest.Config) -> list[str]:
    """How this run widens the closed box (``disclosure.widenings``), one phrase each; empty when it does not."""
    return disclosure.widenings(run_context_of(config).settings, ((t.pass_env, t.policy) for t in targets_of(config)))


def _pack_problems(config: pytest.Config) -> list[str]:
    """Format packs that failed to load, and packs the run's policy left out, for the report."""
    packs = packs_of(config)
    return packs.problems + packs.notes


def run_limit_reached(config: pytest.Config) -> bool:
    """Whether --run-timeout ran out: cases after it failed as timeouts, so the run is incomplete."""
    deadline = config.stash.get(RUN_DEADLINE_KEY, None)
    return deadline is not None and time.time() >= deadline


def corpus_of(config: pytest.Config) -> Path:
    given = config.getoption("cases")
    return Path(given).resolve() if given else CORPUS_DIR


def targets_of(config: pytest.Config) -> list[Target]:
    return config.stash[TARGETS_KEY]


def fuzz_plans(config: pytest.Config) -> dict[str, FuzzPlan]:
    """Each producer target's fuzz properties (by target key), worked out once per process."""
    plans = config.stash.get(FUZZ_PLANS_KEY, None)
    if plans is None:
        sources = sources_of(config)
        plans = {}
        for target in targets_of(config):
            if "producer" in target.roles:
                own = [sources[i.id] if sources[i.id].path == i.path else source_input(i.path, packs_of(config), i.id)
                       for i in target.inputs]
                plans[target.key] = fuzz_plan(target.source_formats, own, packs_of(config),
                                              run_context_of(config).long_shapes)
        config.stash[FUZZ_PLANS_KEY] = plans
    return plans


def sources_of(config: pytest.Config) -> dict[str, SourceInput]:
    """Every producer input of the run by test ID, read and sniffed once per process (at collection): the pack
    chosen for each travels with it to every test of the input (``packs.selection.SourceInput``)."""
    sources = config.stash.get(SOURCES_KEY, None)
    if sources is None:
        sources = producer_sources((i for t in targets_of(config) for i in t.inputs), packs_of(config))
        config.stash[SOURCES_KEY] = sources
    return sources


def packs_of(config: pytest.Config) -> Packs:
    """The packs this run judges with, under its policy (``--builtin-packs-only``), chosen once per process and
    passed to whatever chooses a pack (never a process-wide flag)."""
    packs = config.stash.get(PACKS_KEY, None)
    if packs is None:
        from asr_conformance.packs.registry import installed

        packs = installed(builtin_only=bool(config.getoption("builtin_packs_only", False)))
        config.stash[PACKS_KEY] = packs
    return packs


def target_of(config: pytest.Config) -> Target:
    """The first (usually the only) implementation under test."""
    return targets_of(config)[0]


def narrowing(config: pytest.Config) -> list[str]:
    """Every option or argument that left collected tests out of the run (empty for a full run).

    -m and -k, --deselect, --ignore and --ignore-glob, --last-failed and --stepwise, and (without
    --implementation) paths or node IDs narrower than the conformance suite."""
    parts = []
    if config.getoption("markexpr"):
        parts.append(f"-m {config.getoption('markexpr')!r}")
    if config.getoption("keyword"):
        parts.append(f"-k {config.getoption('keyword')!r}")
    for option, flag in (("deselect", "--deselect"), ("ignore", "--ignore"), ("ignore_glob", "--ignore-glob")):
        given = config.getoption(option, None)
        if given:
            parts.append(f"{flag} {' '.join(map(str, given))}")
    for option, flag in (("lf", "--last-failed"), ("stepwise", "--stepwise"), ("sw_skip", "--stepwise-skip")):
        if config.getoption(option, None):
            parts.append(flag)
    narrower = [arg for arg in config.args if not _whole_suite(arg)]
    if narrower and not config.getoption("implementation"):
        parts.append("only " + " ".join(narrower))
    return parts


def _whole_suite(arg: str) -> bool:
    """Whether a command-line path names the whole conformance suite (or a folder holding it)."""
    if "::" in arg:
        return False
    where = Path(arg).resolve()
    return where == CONFORMANCE_DIR or where in CONFORMANCE_DIR.parents


def widened_sandbox(target: Target, config: pytest.Config) -> list[str]:
    """Why ``target`` ran with less containment than the closed box (docs/certification.md §4): its verdict
    then checked less than a contained run's, and is partial.

    The widenings that show it more (``disclosure.widenings``: variables passed through, folders shown on
    request, the host network, no sandbox), the same list the certificate names.  Two are named there but
    make no verdict partial: protections the machine could not provide inside a working sandbox (limits, not
    what is shown), and no sandbox for the bundled reference, the suite's own code that ships the answers."""
    found = disclosure.widenings(run_context_of(config).settings, [(target.pass_env, target.policy)])
    kept = [why for why in found if not why.startswith(disclosure.NOT_PROVIDED)]
    if not target.given:
        kept = [why for why in kept if not why.startswith(disclosure.NO_SANDBOX)]
    return kept
