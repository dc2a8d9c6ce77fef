"""The fuzzer reaches what the corpus tests: every valid case's features can be drawn by the stream
generators, and every invalid case's defect is made by a mode of its rule's mutator.

Without this, a seeded bug the corpus catches can slip past ``-m fuzz``: the generators never draw
the stream it mishandles.  Features and defects are named by ``generators.reach``; the generators'
reach is what a fixed-seed sample of their draws holds (so no declaration can claim more than they
draw), and what ``adversarial_streams`` declares it always holds is checked on every draw.  A case
out of reach on purpose is listed, with its reason, in ``out_of_reach.toml`` beside this file."""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest
from corpus_cases import corpus_cases
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from asr_conformance.generators.mutators import declared_modes, drawn_mode, serialize
from asr_conformance.generators.reach import defect_signature, stream_features
from asr_conformance.generators.registry import registry
from asr_conformance.generators.streams import ADVERSARIAL_FEATURES, adversarial_streams, valid_streams
from asr_conformance.reference.checks import validate_bytes
from asr_conformance.vocabulary.cases import Case

pytestmark = pytest.mark.fuzz

CASES = corpus_cases("validator")
VALID = [case for case in CASES if case.verdict == "valid"]
INVALID = [case for case in CASES if case.verdict == "invalid"]
OUT_OF_REACH: dict[str, str] = tomllib.loads((Path(__file__).with_name("out_of_reach.toml"))
                                             .read_text(encoding="utf-8"))["cases"]
#: The sample: runs of RUN examples (what one fuzz property draws in the default profile), each with its
#: own fixed seed, so the draws are the same every time and as varied as separate certification runs are
#: (one long run draws examples much alike); valid streams take at least MIN_STEPS steps (long streams
#: hold more per draw, and the default ``max_steps`` allows them); mutations: runs per declared mode.
RUN, VALID_RUNS, ADVERSARIAL_RUNS, MIN_STEPS, BASE_STREAMS, RUNS_PER_MODE, AT_LEAST = 8, 20, 6, 15, 30, 2, 5


def draws(strategy: st.SearchStrategy, runs: int, apply: Callable = lambda value: value) -> list:
    """``apply`` of each example of ``runs`` fixed-seed runs of the strategy (inside the run, so it may draw
    more): reach is the generators', not one run's luck."""
    drawn: list = []
    for number in range(runs):

        @seed(number)
        @settings(max_examples=RUN, derandomize=False, database=None, deadline=None, phases=[Phase.generate],
                  suppress_health_check=list(HealthCheck))
        @given(strategy)
        def collect(value: object) -> None:
            drawn.append(apply(value))

        collect()
    return drawn


def signature(data: bytes) -> frozenset[str]:
    return defect_signature((d.rule, d.message) for d in validate_bytes(data).errors)


@pytest.fixture(scope="module")
def adversarial() -> list[list[dict]]:
    return draws(adversarial_streams(min_steps=MIN_STEPS), ADVERSARIAL_RUNS)


@pytest.fixture(scope="module")
def reachable(adversarial) -> frozenset[str]:
    """Every feature a fixed-seed sample of the valid and adversarial generators holds."""
    found: set[str] = set()
    for records in draws(valid_streams(min_steps=MIN_STEPS), VALID_RUNS) + adversarial:
        found |= stream_features(serialize(records))
    return frozenset(found)


def mutations(rule: str, mutator: Callable, base: list[list[dict]]) -> list[tuple[str, frozenset[str]]]:
    """(defect of the drawn mode, defect signature) of fixed-seed mutations of the base streams."""
    def made(drawn: tuple[list[dict], st.DataObject]) -> tuple[str, frozenset[str]]:
        records, data = drawn
        broken = mutator(data.draw, records)
        return drawn_mode(rule).defect, signature(broken)

    return draws(st.tuples(st.sampled_from(base), st.data()), max(AT_LEAST, RUNS_PER_MODE * len(declared_modes(rule))),
                 made)


@pytest.fixture(scope="module")
def made() -> dict[str, list[tuple[str, frozenset[str]]]]:
    """What each rule's mutator makes of small valid streams."""
    base = draws(valid_streams(max_steps=8), BASE_STREAMS // RUN)
    return {rule: mutations(rule, mutator, base) for rule, mutator in sorted(registry().items())}


def _out_of_reach(case: Case) -> bool:
    return case.id in OUT_OF_REACH


@pytest.mark.parametrize("case", VALID, ids=lambda case: case.id)
def test_every_valid_case_is_within_the_generators_reach(reachable, case: Case) -> None:
    missing = sorted(stream_features(case.data()) - reachable)
    if _out_of_reach(case):
        assert missing, f"{case.id} is listed in out_of_reach.toml but the generators reach it: drop it"
        return
    assert not missing, f"{case.id}: no generated valid stream has {', '.join(missing)}"


def _reached(case: Case, made: dict[str, list[tuple[str, frozenset[str]]]]) -> list[str]:
    """The mutators (rule and defect of the mode) that made a stream with the case's defect."""
    wanted = signature(case.data())
    return sorted({f"{rule} ({defect})" for rule in case.rules for defect, found in made.get(rule, ())
                   if wanted <= found and (case.defect is None or defect == case.defect)})


@pytest.mark.parametrize("case", INVALID, ids=lambda case: case.id)
def test_every_invalid_case_is_made_by_its_rules_mutator(made, case: Case) -> None:
    reached = _reached(case, made)
    if _out_of_reach(case):
        assert not reached, f"{case.id} is listed in out_of_reach.toml but {reached[0]} makes it: drop it"
        return
    wanted = ", ".join(sorted(signature(case.data())))
    defect = f" with a mode of defect {case.defect}" if case.defect else ""
    assert reached, f"{case.id}: no mutator of {', '.join(case.rules)}{defect} makes its defect ({wanted})"


def test_out_of_reach_lists_only_cases_with_a_reason() -> None:
    known = {case.id for case in VALID + INVALID}
    assert set(OUT_OF_REACH) <= known, sorted(set(OUT_OF_REACH) - known)
    assert all(len(reason.split()) >= 5 for reason in OUT_OF_REACH.values())


def test_what_adversarial_streams_declare_they_always_hold_is_in_every_draw(adversarial) -> None:
    assert adversarial, "no adversarial stream was drawn"
    for records in adversarial:
        missing = ADVERSARIAL_FEATURES - stream_features(serialize(records))
        assert not missing, f"an adversarial stream without {sorted(missing)}"


# --- the measures discriminate ------------------------------------------------------------------

TWO_RESULTS = next(case for case in VALID if case.id == "validator/ASR-264/valid-two-results-for-one-call")


def test_features_tell_two_results_for_one_call_from_one() -> None:
    assert "results:two-results-for-one-call" in stream_features(TWO_RESULTS.data())
    one_result = b"".join(TWO_RESULTS.data().splitlines(keepends=True)[:3])
    assert "results:two-results-for-one-call" not in stream_features(one_result)


def test_features_tell_stop_reason_beside_error_and_unlisted_values() -> None:
    header = serialize([{"type": "session", "seq": 0, "id": "h"}])
    error = serialize([{"type": "state", "seq": 1, "id": "r1", "state": "error", "stopReason": "error"}])
    unlisted = serialize([{"type": "state", "seq": 1, "id": "r1", "state": "compacting"}])
    assert "state:error+stopReason" in stream_features(header + error)
    assert "unlisted:state.state" in stream_features(header + unlisted)
    assert "unlisted:state.state" not in stream_features(header + error)


def test_signatures_tell_attempt_zero_from_a_negative_attempt() -> None:
    zero = defect_signature([("ASR-182", "attempt.n must be an integer of at least 1, not the integer 0")])
    negative = defect_signature([("ASR-182", "attempt.n must be an integer of at least 1, not the integer -3")])
    assert zero != negative
    assert defect_signature([("ASR-164", "contentLevel 'full' would loosen 'redacted'")]) == \
        defect_signature([("ASR-164", "contentLevel 'redacted' would loosen 'metadata'")])


# --- the cost benchmark's baseline (suite/benchmarks/test_fuzz_reach_cost.py) --------------------

#: Features only the reach shapes make: two results for one call, and record types the pages only mention.
REACH_ONLY = frozenset({"results:two-results-for-one-call", "type:other"})


def test_the_baseline_leaves_the_reach_shapes_out(adversarial) -> None:
    baseline: set[str] = set()
    for records in draws(adversarial_streams(min_steps=MIN_STEPS, reach=False), 2) + \
            draws(valid_streams(min_steps=MIN_STEPS, reach=False), 2):
        baseline |= stream_features(serialize(records))
    assert not baseline & REACH_ONLY, sorted(baseline & REACH_ONLY)
    reached = frozenset().union(*(stream_features(serialize(records)) for records in adversarial))
    assert REACH_ONLY <= reached, sorted(REACH_ONLY - reached)
