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
    profile = settings._current_profile
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
