"""Producer role, fuzzed: generated native transcripts through the converter, the witness as oracle.

One property per feature of each native format the producer converts (``--source-format``,
a manifest's ``source_formats``, else the formats its inputs are in), and one of sessions of real
size per format that is lengthened (``FORMAT-mixed-long``, fewer examples: each is a MiB or more,
``harness.fuzzing.producers.LONG_SHARE``, and no source edit): each generated
transcript, valid by construction, must be converted to a stream that conforms, keeps every
fact of its source, and follows one drawn source edit (``harness.fuzzing.producers``). A
failure is shrunk and written as a ready producer input with a replay command."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from asr_conformance.harness.fuzzing.producers import GeneratedInput, ProducerFuzzSession, pack_named
from asr_conformance.harness.judging.fidelity import FIDELITY_RULES
from asr_conformance.harness.judging.producer import OUTPUT_RULES
from asr_conformance.packs.pack import Transcript

RULES = tuple(sorted(set(FIDELITY_RULES) | set(OUTPUT_RULES)))

pytestmark = [pytest.mark.conformance, pytest.mark.producer, pytest.mark.fuzz,
              *(getattr(pytest.mark, rule) for rule in RULES)]


def test_converts_generated_transcripts(generated_input: GeneratedInput, asr_producer_fuzz: ProducerFuzzSession,
                                        asr_record: Callable[..., None]) -> None:
    name = generated_input.id
    # The run's long sessions (its pool seed, none in the cost benchmark's baseline), under the name the property's
    # source has always used: Hypothesis keys its examples on that source (as in test_validator_fuzz.py).
    generated_input = asr_producer_fuzz.for_run(generated_input)

    @asr_producer_fuzz.settings_for(generated_input)
    @given(generated_input.strategy(), st.data())
    def faithful(transcript: Transcript, data: st.DataObject) -> None:
        asr_producer_fuzz.expect_faithful(transcript, data.draw, name, edit=not generated_input.long)

    asr_record(expected="every generated transcript converted to a conforming stream that follows its source")
    judge = pack_named(generated_input.format)
    if judge is not None:
        asr_record(judge=judge.identity.to_json())
    try:
        asr_producer_fuzz.run(faithful)
    except pytest.fail.Exception:
        if asr_producer_fuzz.pack_error is None:
            # The rules the shrunk counterexample broke, not every rule the property could have found.
            asr_record(status="failed", rules=asr_producer_fuzz.broken or RULES)
            raise
    except pytest.skip.Exception:  # the pack failed: the session ended the property at once
        if asr_producer_fuzz.pack_error is None:
            raise
    if asr_producer_fuzz.pack_error is not None:
        # The judge failed, not the implementation: no verdict on this property, and the run is incomplete.
        asr_record(suite_error=asr_producer_fuzz.pack_error)
        pytest.skip(asr_producer_fuzz.pack_error)
    asr_record(status="passed")
