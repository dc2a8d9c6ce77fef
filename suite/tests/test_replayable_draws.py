"""One seed, one set of examples: what a fuzz property sends an implementation does not depend on which other
modules the process has loaded (``harness/fuzzing/replayable.py``).

Hypothesis draws now and then from constants it reads out of every local module loaded in the process, so
without the harness's guard a module imported between two runs of the same seed (a vendor's conftest, a
harness module a worker imported for an earlier test, an editable install) changed the examples: the control
below shows it on plain Hypothesis, and the guarded property draws the same streams both times."""

from __future__ import annotations

import importlib.util
import itertools
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, seed, settings
from miniatures import MiniatureValidator, fuzz_session

from asr_conformance.conformance import test_validator_fuzz as validator_fuzz
from asr_conformance.generators.streams import adversarial_streams
from asr_conformance.harness.adapters.answers import Outcome, Verdict
from asr_conformance.harness.fuzzing.profiles import ensure_profiles
from asr_conformance.reference.checks import validate_bytes

SEED = 20261205
_modules = itertools.count()


def _load_local_module(folder: Path) -> None:
    """Import a new module, outside site-packages and not a test file, holding many string constants of its own."""
    name = f"asr_probe_constants_{next(_modules)}_{id(folder)}"
    path = folder / f"{name}.py"
    number = int(name.split("_")[3])
    # Short words and small numbers, as a stream's strings and integers are drawn; new ones in each module.
    words = [f"{chr(97 + index % 26)}{chr(97 + (index // 26) % 26)}{number}" for index in range(300)]
    path.write_text("WORDS = (\n" + "".join(f"    {word!r},\n" for word in words) + ")\nNUMBERS = ("
                    + ", ".join(str(1000 * number + index) for index in range(3, 300)) + ")\n", encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)


def _recording() -> tuple[MiniatureValidator, list[bytes]]:
    sent: list[bytes] = []

    def answer(stream: Path) -> Verdict:
        data = stream.read_bytes()
        sent.append(data)
        return Verdict(Outcome.ACCEPT if validate_bytes(data).valid else Outcome.REJECT)

    return MiniatureValidator(answer), sent


def _plain_draws() -> list[object]:
    drawn: list[object] = []

    @seed(SEED)
    @settings(max_examples=40, database=None, deadline=None)
    @given(adversarial_streams(max_steps=10))
    def collect(records: object) -> None:
        drawn.append(records)

    collect()
    return drawn


def _guarded_draws(folder: Path, run: Callable[..., None]) -> list[bytes]:
    ensure_profiles()
    adapter, sent = _recording()
    session, _ = fuzz_session(adapter, folder, settings(settings.get_profile("asr-fast"), max_examples=40), seed=SEED)
    run(session)
    assert sent
    return sent


@pytest.mark.local_constants
def test_without_the_guard_a_module_loaded_between_two_runs_changes_what_one_seed_draws(tmp_path: Path) -> None:
    """The control: plain Hypothesis, the same seed twice, a new local module imported in between."""
    before = _plain_draws()
    _load_local_module(tmp_path)
    if _plain_draws() == before:
        pytest.skip("this Hypothesis draws no constants from the modules a process loaded: nothing to guard against")


def test_a_fuzz_property_draws_the_same_streams_for_one_seed_whatever_was_loaded_in_between(tmp_path: Path) -> None:
    run = validator_fuzz.test_accepts_adversarial_valid_streams
    first = _guarded_draws(tmp_path / "first", run)
    _load_local_module(tmp_path)
    second = _guarded_draws(tmp_path / "second", run)
    assert first == second, "the same seed sent other streams after a module was loaded"
