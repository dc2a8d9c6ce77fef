"""Every bundled implementation conforms on every seed.

Each run of the project's tests certifies every bundled implementation once under a fresh random seed
(a slice of its seed-dependent tests drawn from that seed, so the run stays cheap; ``examples/reference.toml``
whole, by the session's one whole run of the reference); the seed and the command that replays the run are
printed, and a failure names them, so a seed-dependent false failure is a red run that says how to replay it.
Before a release, ``--certify-seeds=20`` certifies each one whole (every fuzz property and disguised copy)
under 20 consecutive fresh seeds."""

from __future__ import annotations

import random
import shlex

import pytest
from bundled import Bundled, bundled
from certifying import Certify

#: Seed-dependent tests per implementation and run: enough that the runs cover every property over time.
SLICE = 3
#: The profile whose seed is fresh every run (the project's tests otherwise run asr-fixed, which ignores seeds).
FRESH = {"ASR_HYPOTHESIS_PROFILE": "asr-fast"}
BUNDLED = bundled()
#: Certified whole under a fresh seed every run by the session's one whole run of the reference
#: (``reference_whole_run`` in conftest.py, read by test_hostile_verdicts.py and test_fuzz_harness.py), every
#: property rather than a slice of them; the release check below still takes it through consecutive seeds.
WHOLE_EVERY_RUN = frozenset({"reference.toml"})
SLICED = [b for b in BUNDLED if b.name not in WHOLE_EVERY_RUN]


def _replay(implementation: Bundled, seed: int, selection: str | None) -> str:
    words = ["pytest", *implementation.args, f"--hypothesis-seed={seed}", "-p", "no:cacheprovider"]
    if selection:
        words += ["-k", selection]
    return "ASR_HYPOTHESIS_PROFILE=asr-fast " + shlex.join(words)


@pytest.mark.parametrize("implementation", SLICED, ids=[b.name for b in SLICED])
def test_bundled_implementation_conforms_under_a_fresh_seed(certify: Certify, implementation: Bundled) -> None:
    seed = random.SystemRandom().randrange(2**32)
    selection = implementation.slice_of(seed, SLICE)
    replay = _replay(implementation, seed, selection)
    print(f"{implementation.name}: fresh seed {seed}; replay: {replay}")
    result = certify(*implementation.args, f"--hypothesis-seed={seed}", "-k", selection, env=FRESH, report_dir=None)
    assert result.ret == 0, (f"{implementation.name} does not conform under the fresh seed {seed}; replay: {replay}\n"
                             + result.stdout.str()[-4000:])


@pytest.mark.e2e
@pytest.mark.parametrize("implementation", BUNDLED, ids=[b.name for b in BUNDLED])
def test_bundled_implementation_conforms_on_consecutive_fresh_seeds(certify: Certify, implementation: Bundled,
                                                                     request: pytest.FixtureRequest) -> None:
    count = int(request.config.getoption("certify_seeds"))
    if count <= 0:
        pytest.skip("the release check: run with --certify-seeds=20 (each bundled implementation certified whole "
                    "under 20 consecutive fresh seeds)")
    failing = []
    for _ in range(count):
        seed = random.SystemRandom().randrange(2**32)
        result = certify(*implementation.args, f"--hypothesis-seed={seed}", env=FRESH, report_dir=None,
                         timeout=3600)
        print(f"{implementation.name}: seed {seed}: exit status {int(result.ret)}")
        if result.ret != 0:
            failing.append(f"seed {seed} (exit status {int(result.ret)}; replay: {_replay(implementation, seed, None)})")
    assert not failing, f"{implementation.name} does not conform on every seed:\n" + "\n".join(failing)
