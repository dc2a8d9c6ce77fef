"""The suite's fuzz properties as HypoFuzz targets (``-p asr_conformance.plugin.campaign``, which
``asr-conformance campaign`` passes to every HypoFuzz process).

A conformance fuzz test is a plain pytest test that builds its Hypothesis property from its
fixtures (the implementation's adapter, the mutator of a rule, a format pack's strategy) and
hands it to its ``PropertyRunner``, which runs Hypothesis' engine.  HypoFuzz needs a
Hypothesis test it can drive one example at a time, so each fuzz item's function is replaced
here by one: ``@given(data())`` over the test's own fixtures and parameters.  Each call runs the
original test body with the runner's ``run`` swapped for one that draws the property's
arguments from that ``data`` (in the order the property's ``@given`` draws them) and calls the
property once.  Fixtures, the sandbox, the limits and staging are the harness's own, set up
by HypoFuzz through pytest exactly as a pytest run sets them up.

Every failing example is also written where a pytest run would look for it: its choices under
the property's own key in the example database (so an ordinary ``asr-deep`` run replays it
first) and as a counterexample case with its replay command (each process keeps only the last
failing example of a property, which is the shrunk one once HypoFuzz has shrunk it).
"""

from __future__ import annotations

import hashlib
import inspect
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from asr_conformance.harness.fuzzing.profiles import PropertyRunner
from asr_conformance.plugin.campaign_record import ProcessRecord, PropertyRecord
from asr_conformance.plugin.entry import usage_error
from asr_conformance.plugin.recording import recorder_of
from asr_conformance.plugin.run_config import TARGETS_KEY, counterexamples_of, targets_of
from asr_conformance.vocabulary.errors import UserError

#: The name of the drawn ``data()`` argument of the replaced test functions.
DATA = "asr_campaign_data"

_RECORD = pytest.StashKey[ProcessRecord]()
#: pytest's temporary-folder factory, kept past the end of collection (see ``pytest_fixture_setup``).
_TMP_PATHS = pytest.StashKey[object]()


def pytest_configure(config: pytest.Config) -> None:
    hypofuzz_compatibility()


def hypofuzz_compatibility() -> None:
    """HypoFuzz 25.11.1 copies a shrunk example's comments under their old name (``slice_comments``), which the
    Hypothesis releases the project allows call ``span_comments``; without the old name, each campaign process
    died of an AttributeError after its first shrink, before HypoFuzz saved the failure for other processes.
    The name is given back as a read-only alias, in campaign processes only."""
    from hypothesis.internal.conjecture.data import ConjectureResult

    if not hasattr(ConjectureResult, "slice_comments"):
        ConjectureResult.slice_comments = property(lambda self: self.span_comments)  # type: ignore[attr-defined]


def _record_of(config: pytest.Config) -> ProcessRecord:
    """This process's record, made at collection (when the harness plugin has resolved the implementations)."""
    if _RECORD not in config.stash:
        report_dir = config.getoption("report_dir")
        folder = counterexamples_of(config).parent if report_dir in ("none", "") else Path(report_dir).resolve()
        config.stash[_RECORD] = ProcessRecord(folder, ", ".join(t.label for t in targets_of(config)))
    return config.stash[_RECORD]


class NoImplementation(UserError):
    """A campaign run without an implementation to fuzz."""


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Turn each fuzz test into a HypoFuzz target; leave the rest (HypoFuzz ignores what is not Hypothesis')."""
    try:
        _make_targets(config, items)
    except UserError as error:
        raise usage_error(error) from None


def _make_targets(config: pytest.Config, items: list[pytest.Item]) -> None:
    if TARGETS_KEY not in config.stash:
        raise NoImplementation("a campaign fuzzes an implementation: give --implementation")
    record = _record_of(config)
    config.stash[_TMP_PATHS] = getattr(config, "_tmp_path_factory", None)
    for item in items:
        if isinstance(item, pytest.Function) and item.get_closest_marker("fuzz") is not None:
            item.obj = campaign_target(item, record)


@pytest.hookimpl(tryfirst=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef[Any], request: pytest.FixtureRequest) -> None:
    """HypoFuzz collects with ``pytest --collect-only`` and sets fixtures up after that session has ended, by which
    time pytest has taken its temporary-folder factory away again: give it back, so ``tmp_path`` works as in a run."""
    config = request.config
    if getattr(config, "_tmp_path_factory", None) is None and config.stash.get(_TMP_PATHS, None) is not None:
        config.__dict__["_tmp_path_factory"] = config.stash[_TMP_PATHS]
    if fixturedef.argname == "tmp_path":
        # What pytest's report hook would have left for tmp_path's teardown (no report is made under HypoFuzz).
        from _pytest.tmpdir import tmppath_result_key

        request.node.stash.setdefault(tmppath_result_key, {})


def campaign_target(item: pytest.Function, record: ProcessRecord) -> Callable[..., None]:
    """A Hypothesis test over ``item``'s arguments and one ``data()``, each call one example of the item's property."""
    from hypothesis import given
    from hypothesis import strategies as st

    original = item.obj
    names = list(inspect.signature(original).parameters)

    def example(**arguments: Any) -> None:
        data = arguments.pop(DATA)
        runners = [value for value in arguments.values() if isinstance(value, PropertyRunner)]
        for runner in runners:
            # An instance attribute shadows the method for this call only (removed below).
            runner.__dict__["run"] = lambda prop, runner=runner: _one_example(item, record, runner, data, prop)
        try:
            original(**arguments)
        finally:
            for runner in runners:
                runner.__dict__.pop("run", None)

    example.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY) for name in [*names, DATA]])
    example.__name__ = original.__name__
    example.__qualname__ = original.__qualname__
    example.__module__ = original.__module__
    target: Callable[..., None] = given(**{DATA: st.data()})(example)
    return target


def _property_record(item: pytest.Function, record: ProcessRecord) -> PropertyRecord:
    found = recorder_of(item)
    name = found.current().id if found is not None else item.nodeid
    if name not in record.properties:
        rules = list(found.current().rules) if found is not None else []
        role = found.current().role if found is not None else ""
        record.properties[name] = PropertyRecord(item.nodeid, role, rules)
    return record.properties[name]


def _one_example(item: pytest.Function, record: ProcessRecord, runner: PropertyRunner, data: Any, prop: Any) -> None:
    """Draw the property's arguments from the campaign's ``data`` and run it once; a failure is recorded and raised."""
    from hypothesis.internal.reflection import function_digest

    handle = prop.hypothesis
    drawn = {name: data.draw(strategy) for name, strategy in handle._given_kwargs.items()}
    # The runner's shrink budget holds as in a pytest run: HypoFuzz shrinks from the first failure on, each call a
    # shrink step, and past the budget the runner answers from memory without asking the implementation.
    runner._forget_last_failure()
    kept = _property_record(item, record)
    kept.examples += 1
    if record.first_example is None:
        record.first_example = time.time()
    try:
        handle.inner_test(**drawn)
    except AssertionError:
        failure = runner._last_failure
        if failure is None:
            raise
        _save_for_pytest(kept, function_digest(handle.inner_test), data.conjecture_data.choices)
        _write_failure(kept, runner, failure, record)
        raise
    finally:
        record.write()


def _save_for_pytest(kept: PropertyRecord, key: bytes, choices: tuple[Any, ...]) -> None:
    """Save the example where an ordinary run of the property looks first: its own key in the profile's database.

    Only the property's last failing example stays (the one before it is deleted): while HypoFuzz shrinks, each
    smaller failure replaces the last, so what an ordinary run replays is the shrunk example."""
    from hypothesis import settings
    from hypothesis.database import choices_to_bytes

    database = settings.default.database if settings.default is not None else None
    if database is None:
        return
    saved = choices_to_bytes(choices)
    if kept.saved is not None and kept.saved != (key, saved):
        database.delete(*kept.saved)
    database.save(key, saved)
    kept.saved = (key, saved)


def _write_failure(kept: PropertyRecord, runner: PropertyRunner, failure: dict[str, Any], record: ProcessRecord) -> None:
    """Write the failing example as a case (replacing this process's previous one for the property) and record it."""
    path, command = runner._write(failure)
    previous = kept.failure
    if previous is not None and previous.get("counterexample") != str(path):
        _remove_case(Path(str(previous.get("counterexample"))))
    data: bytes = failure.get("data", b"") if isinstance(failure.get("data"), bytes) else path.read_bytes()
    broken = failure.get("rules") or kept.rules
    kept.failure = {"rules": list(broken), "message": runner._last_message.splitlines()[0] if runner._last_message else "",
                    "counterexample": str(path), "replay": command, "sha256": hashlib.sha256(data).hexdigest(),
                    "at_example": kept.examples}
    if kept.first_failure is None:
        kept.first_failure = {"example": kept.examples, "sha256": kept.failure["sha256"]}
    record.write(force=True)


def _remove_case(stream: Path) -> None:
    """A case is its input and its metadata beside it (``.toml``); a producer input may carry a folder of its own."""
    for path in (stream, stream.with_suffix(".toml")):
        if path.is_file():
            path.unlink(missing_ok=True)
