"""An installed suite changes nothing in a project that does not ask it to certify."""

from __future__ import annotations

import pytest

FOREIGN_TESTS = '''
from hypothesis import given, settings, strategies as st

SEEN = []


@given(st.integers())
def test_property(number):
    SEEN.append(number)


def test_after_property():
    profile = settings.get_current_profile_name()
    print(f"PROFILE={profile} MAX={settings.default.max_examples} RUNS={len(SEEN)}")
    assert not profile.startswith("asr-")
    assert settings.default.max_examples == 100
    assert len(SEEN) > 8
'''


def test_a_foreign_property_test_keeps_hypothesis_defaults(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_foreign=FOREIGN_TESTS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-s")
    result.assert_outcomes(passed=2)
    assert "asr-conformance:" not in result.stdout.str()  # no header line of the suite


def test_a_foreign_project_gets_no_markers_of_the_suite(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_foreign="def test_nothing():\n    pass\n")
    result = pytester.runpytest_subprocess("--markers")
    assert "ASR-164" not in result.stdout.str()
    assert "corpus:" not in result.stdout.str()


def test_a_certification_run_does_load_its_profile_and_markers(pytester: pytest.Pytester) -> None:
    """The other side: asking for a certification turns everything on."""
    result = pytester.runpytest_subprocess("--implementation", "examples-not-needed", "--markers")
    # an unknown implementation path is a usage error, which proves the plugin configured itself
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "asr-conformance" in result.stderr.str()


#: What the entry point must not load: the harness, and the libraries only a certification needs.
HEAVY = ("hypothesis", "jsonschema", "asr_conformance.harness", "asr_conformance.gate", "asr_conformance.reports",
         "asr_conformance.plugin.hooks", "asr_conformance.plugin.session")

LOADED_AFTER = '''
import sys
import pytest
before = set(sys.modules)
import {module}
print("\\n".join(sorted(set(sys.modules) - before)))
'''


def _loaded_by(module: str) -> set[str]:
    """The modules importing ``module`` adds, in a fresh interpreter that imported pytest first."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", LOADED_AFTER.format(module=module)], capture_output=True, text=True,
                          check=True)
    return set(done.stdout.split())


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


def test_the_entry_point_loads_nothing_heavy() -> None:
    """The pytest11 entry point costs every pytest run of the environment: it imports the option
    declarations and nothing of the harness, Hypothesis or jsonschema."""
    from importlib.metadata import entry_points

    (entry,) = [e for e in entry_points(group="pytest11") if e.name == "asr_conformance.plugin"]
    loaded = _loaded_by(entry.value)
    assert entry.value in loaded
    assert not _heavy(loaded), _heavy(loaded)


def test_the_laziness_check_sees_a_heavy_import() -> None:
    """The other side: the harness plugin the entry point defers does load them."""
    assert {"hypothesis", "asr_conformance.plugin.hooks"} <= set(_heavy(_loaded_by("asr_conformance.plugin.hooks")))


def test_a_foreign_run_registers_no_harness_plugin(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_foreign='''
import sys

def test_nothing(pytestconfig):
    assert not pytestconfig.pluginmanager.has_plugin("asr_conformance.plugin.hooks")
    assert pytestconfig.pluginmanager.has_plugin("asr_conformance.plugin")
    assert "asr_conformance.harness" not in sys.modules
''')
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
