"""Reader role, fuzzed: generated streams through the reader, the reference reader as oracle.

One property per reader feature (``generators.reader_streams``: a construct reader rules turn
on, forced into generated valid streams), and one each for plain valid and adversarial streams.
The reader's view must match the view schema and equal the reference reader's on every member
the pages settle (``harness.fuzzing.readers``). Every property draws a long shape too
(``generators.long_streams``): in some examples thousands of generated records, a MiB or more, are
spliced in between the records, so that what a view depends on can sit far from what it changes;
the number shrinks to none. A failure names the rules of the members that
differ, is shrunk, and is written as a reader case that replays with ``--cases``.

The long shapes are the session's (``ReaderFuzzSession.long_shapes``), bound in each test to the name its
property has always drawn them by, as in ``test_validator_fuzz.py`` (why: there)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from asr_conformance.generators.long_streams import LongShape
from asr_conformance.generators.mutators import serialize
from asr_conformance.generators.reader_streams import FEATURES, reader_streams
from asr_conformance.generators.streams import adversarial_streams, valid_streams
from asr_conformance.harness.fuzzing.readers import ReaderFuzzSession

#: The reader rules every generated stream exercises (the plain properties name these when no member says).
READER_RULES = ("ASR-160", "ASR-163", "ASR-263", "ASR-265", "ASR-266", "ASR-269", "ASR-279")

pytestmark = [pytest.mark.conformance, pytest.mark.reader, pytest.mark.fuzz]


@pytest.mark.parametrize("feature", [pytest.param(name, marks=[getattr(pytest.mark, rule) for rule in f.rules])
                                     for name, f in sorted(FEATURES.items())])
def test_reader_views_of_streams_with(asr_reader_fuzz: ReaderFuzzSession, asr_record: Callable[..., None], feature: str) -> None:
    chosen = FEATURES[feature]

    long_shapes = asr_reader_fuzz.long_shapes  # the run's (module docstring)

    @asr_reader_fuzz.settings
    @given(reader_streams(feature), long_shapes(), st.data())
    def agrees(records: list[dict[str, Any]], shape: LongShape, data: st.DataObject) -> None:
        records, stream = _long(records, shape, data)
        asr_reader_fuzz.expect_view(records, stream, f"fuzz-{feature}",
                                    f"a valid stream with {chosen.description}", chosen.rules)

    _run(asr_reader_fuzz, asr_record, agrees, chosen.rules)


def test_reader_views_of_valid_streams(asr_reader_fuzz: ReaderFuzzSession, asr_record: Callable[..., None]) -> None:
    long_shapes = asr_reader_fuzz.long_shapes  # the run's (module docstring)

    @asr_reader_fuzz.settings
    @given(valid_streams(max_steps=15), long_shapes(), st.data())
    def agrees(records: list[dict[str, Any]], shape: LongShape, data: st.DataObject) -> None:
        records, stream = _long(records, shape, data)
        asr_reader_fuzz.expect_view(records, stream, "fuzz-valid", "a valid generated stream",
                                    READER_RULES)

    _run(asr_reader_fuzz, asr_record, agrees, READER_RULES)


def test_reader_views_of_adversarial_streams(asr_reader_fuzz: ReaderFuzzSession, asr_record: Callable[..., None]) -> None:
    long_shapes = asr_reader_fuzz.long_shapes  # the run's (module docstring)

    @asr_reader_fuzz.settings
    @given(adversarial_streams(max_steps=15), long_shapes(), st.data())
    def agrees(records: list[dict[str, Any]], shape: LongShape, data: st.DataObject) -> None:
        records, stream = _long(records, shape, data)
        asr_reader_fuzz.expect_view(records, stream, "fuzz-adversarial",
                                    "a valid stream with duplicate native call IDs, records after ended, orphans, "
                                    "dangling calls, pending permissions and Unicode strings", READER_RULES)

    _run(asr_reader_fuzz, asr_record, agrees, READER_RULES)


def _long(records: list[dict[str, Any]], shape: LongShape, data: st.DataObject) -> tuple[list[dict[str, Any]], bytes]:
    """The stream with the drawn filler spliced in (its records are self-contained: no instructions,
    so the generated records still say which view members the pages settle)."""
    spread = shape.spread(records)
    # DataObject.draw draws as a DrawFn does, but lacks the __signature__ attribute the protocol lists.
    return spread, shape.splice(data.draw, serialize(spread)).data  # type: ignore[arg-type]


def _run(session: ReaderFuzzSession, record: Callable[..., None], prop: Callable[[], None], rules: Iterable[str]) -> None:
    record(expected="the reference reader's view on every member the pages settle")
    try:
        session.run(prop)
    except pytest.fail.Exception:
        # The rules the shrunk counterexample broke, not every rule the property could have found.
        record(status="failed", rules=session.broken or list(rules))
        raise
    record(status="passed")
