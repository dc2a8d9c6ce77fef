"""One run's context: its containment settings reach each start through the target, never through a module.

In process and without starting anything: two contexts with different settings live side by side in one
process (which a module-wide setting cannot do: the later one would win for both), and a target given a
context builds adapters whose boxes and environments follow it.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from asr_conformance.harness.adapters.oneshot import OneShotValidator
from asr_conformance.harness.adapters.targets import Target
from asr_conformance.harness.isolation import policies
from asr_conformance.harness.isolation.boxes import Box
from asr_conformance.harness.isolation.policies import Policy
from asr_conformance.harness.run_context import RunContext

TARGET = Target(key="acme", name="acme", version=None, command=("acme",), protocol="oneshot", timeout=5.0,
                roles=("validator",))


def _passed(context: RunContext) -> dict[str, str]:
    box = Box(context.settings)
    try:
        return box.environment()
    finally:
        box.close()


def test_two_runs_in_one_process_keep_their_own_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASR_RUN_A", "a")
    monkeypatch.setenv("ASR_RUN_B", "b")
    first = RunContext(policies.settings_for(pass_env=("ASR_RUN_A",), limits=(("cpu", 7),)))
    second = RunContext(policies.settings_for(pass_env=("ASR_RUN_B",)))
    assert ("ASR_RUN_A" in _passed(first), "ASR_RUN_B" in _passed(first)) == (True, False)
    assert ("ASR_RUN_A" in _passed(second), "ASR_RUN_B" in _passed(second)) == (False, True)
    assert policies.effective_limits(first.policy).cpu == 7
    assert policies.effective_limits(second.policy).cpu == policies.effective_limits(None).cpu != 7
    # A start outside any run gets the defaults, whatever runs were made before it.
    assert "ASR_RUN_A" not in _passed(RunContext()) and policies.DEFAULT_SETTINGS.pass_env == ()


def test_a_contained_target_builds_adapters_under_the_runs_settings() -> None:
    context = RunContext(policies.settings_for(sandbox="none", max_output=1234))
    plain = TARGET.validator_adapter()
    built = context.contained(TARGET).validator_adapter()
    assert isinstance(plain, OneShotValidator) and isinstance(built, OneShotValidator)
    assert policies.settings_of(plain.policy) is policies.DEFAULT_SETTINGS
    assert policies.settings_of(built.policy) is context.settings
    # A manifest's own choices are kept beside the run's settings.
    chosen = replace(TARGET, policy=Policy(network="host", limits=(("cpu", 9),)))
    policy = context.contained(chosen).policy
    assert policy is not None and (policy.network, policy.limits, policy.settings) == (
        "host", (("cpu", 9),), context.settings)
    assert context.contained(context.contained(chosen)) == context.contained(chosen)


def test_bad_settings_are_refused_where_they_are_made() -> None:
    with pytest.raises(policies.UsageError, match="--sandbox: one of"):
        policies.settings_for(sandbox="sometimes")
    with pytest.raises(policies.UsageError, match="--network: one of"):
        policies.settings_for(network="everywhere")


def test_the_cost_benchmarks_baseline_is_a_run_context_without_long_shapes() -> None:
    """The baseline plugin (``suite/benchmarks/without_long_shapes.py``) changes the run's context and nothing on
    a module: the context keeps its settings and draws no long shapes, and a producer fuzz plan made from it has
    no long property (one made from a default context has)."""
    import importlib.util
    from types import SimpleNamespace

    from asr_conformance.harness.fuzzing.producers import fuzz_plan
    from asr_conformance.plugin.run_config import RUN_CONTEXT_KEY, run_context_of

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "without_long_shapes.py"
    spec = importlib.util.spec_from_file_location("without_long_shapes", path)
    assert spec is not None and spec.loader is not None
    plugin = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plugin)
    config = SimpleNamespace(stash=pytest.Stash())
    with pytest.raises(pytest.UsageError, match="not a certification run"):
        plugin.pytest_configure(config)
    context = RunContext(policies.settings_for(max_output=4321))
    config.stash[RUN_CONTEXT_KEY] = context
    plugin.pytest_configure(config)
    baseline = run_context_of(config)  # type: ignore[arg-type]
    assert context.long_shapes and not baseline.long_shapes and baseline.settings is context.settings
    formats = ("claude-code-jsonl",)
    assert any(p.long for p in fuzz_plan(formats, (), long_shapes=context.long_shapes).inputs)
    assert not any(p.long for p in fuzz_plan(formats, (), long_shapes=baseline.long_shapes).inputs)
