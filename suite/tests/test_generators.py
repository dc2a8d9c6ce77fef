"""The generators hold their promises against the reference validator:
valid streams are accepted, each mutator breaks exactly its rule, damage
never makes the reference raise, and the record schemas agree with it."""

from __future__ import annotations

import copy

import hypothesis
import hypothesis_jsonschema
import pytest
from hypothesis import Phase, find, given, settings
from hypothesis import strategies as st

from asr_conformance.generators import mutators_session, mutators_tools
from asr_conformance.generators.damage import DAMAGES, DEFINITE_RULES
from asr_conformance.generators.mutators import drawn_mode, serialize
from asr_conformance.generators.registry import reasons, registry
from asr_conformance.generators.streams import adversarial_streams, valid_streams
from asr_conformance.reference.checks import validate_bytes
from asr_conformance.reference.checks.envelope import DEFINED_TYPES
from asr_conformance.vocabulary.rules import load_catalog

pytestmark = pytest.mark.fuzz

ALSO_NAMED = {**mutators_session.ALSO_NAMED, **mutators_tools.ALSO_NAMED}
STREAM_RULES = sorted(r.id for r in load_catalog().values() if r.tested == "stream")


def more(factor: int) -> settings:
    """The loaded profile, with ``factor`` times its examples (the reference is cheap to ask)."""
    return settings(max_examples=settings.default.max_examples * factor)


def errors_of(data: bytes) -> list[tuple[str, str]]:
    return [(d.rule, d.message) for d in validate_bytes(data).errors]


@more(12)
@given(valid_streams())
def test_valid_streams_are_accepted_by_the_reference(records: list[dict]) -> None:
    assert errors_of(serialize(records)) == []


@more(8)
@given(adversarial_streams())
def test_adversarial_streams_are_accepted_by_the_reference(records: list[dict]) -> None:
    assert errors_of(serialize(records)) == []


@pytest.fixture(scope="module")
def drawn_streams() -> list[list[dict]]:
    """A few hundred streams from the strategy, drawn once for the coverage tests below."""
    drawn: list[list[dict]] = []

    @settings(max_examples=300, derandomize=True, database=None, deadline=None)
    @given(valid_streams())
    def collect(records: list[dict]) -> None:
        drawn.append(records)

    collect()
    return drawn


@pytest.mark.parametrize("record_type", sorted(DEFINED_TYPES | {"message", "compaction"}))
def test_valid_streams_cover_every_record_type(drawn_streams, record_type: str) -> None:
    assert any(r["type"] == record_type for records in drawn_streams for r in records)


@pytest.mark.parametrize(
    ("what", "condition"),
    [
        ("duplicate native call IDs", lambda rs: any(r.get("linkage") == "ambiguous" for r in rs)),
        ("a derived linkage", lambda rs: any(r.get("linkage") == "derived" for r in rs)),
        ("an orphan result", lambda rs: any(r.get("linkage") == "none" for r in rs)),
        ("a compact permission", lambda rs: any("permission" in r for r in rs if r["type"] == "tool_result")),
        ("a permission revision", lambda rs: any("supersedes" in r for r in rs if r["type"] == "permission")),
        ("a terminal revision", lambda rs: any("supersedes" in r for r in rs if r["type"] == "terminal")),
        ("exec.terminalId", lambda rs: any("terminalId" in r.get("exec", {}) for r in rs)),
        ("a turn trigger", lambda rs: any("trigger" in r for r in rs[1:] if r["type"] != "compaction")),
        ("a tightened contentLevel", lambda rs: any("contentLevel" in r for r in rs[1:])),
        ("a declared root", lambda rs: any(r.get("type") == "declaration" and "roots" in r for r in rs)),
        ("a dangling call", lambda rs: any(r["type"] == "tool_call" for r in rs)
         and not all(any(x.get("callId") == r.get("callId") for x in rs if x["type"] == "tool_result")
                     for r in rs if r["type"] == "tool_call")),
    ],
)
def test_valid_streams_reach_cross_record_structure(drawn_streams, what: str, condition) -> None:
    if any(condition(records) for records in drawn_streams):
        return
    # Rare structures may miss one sample of a few hundred (the sample differs with the worker's
    # earlier Hypothesis runs); what matters is that the strategy reaches them: search for one,
    # generating only (``find`` would also shrink what it found, many times the search's cost).
    class Reached(Exception):
        pass

    @settings(max_examples=2000, database=None, deadline=None, phases=[Phase.generate])
    @given(valid_streams())
    def search(records: list[dict]) -> None:
        if condition(records):
            raise Reached

    try:
        search()
    except Reached:
        return
    pytest.fail(f"the valid-stream strategy never produced {what} in 2000 tries")


def test_every_stream_rule_has_a_mutator_or_a_reason() -> None:
    missing = [rule for rule in STREAM_RULES if rule not in registry() and rule not in reasons()]
    assert not missing, f"stream rules with neither a mutator nor a written reason: {missing}"
    assert not set(registry()) & set(reasons())


@pytest.fixture(scope="module")
def mutable_streams() -> list[list[dict]]:
    """Valid streams for the mutators, drawn once under the loaded profile (twice as many as each mutator's
    test asks for): drawing a stream costs several times mutating and judging it, and every mutator is held
    to the same promise on any valid stream, so the sixty mutator tests draw from one pool."""
    drawn: list[list[dict]] = []

    @more(8)
    @given(valid_streams(max_steps=12))
    def collect(records: list[dict]) -> None:
        drawn.append(records)

    collect()
    return drawn


@pytest.mark.parametrize("rule", sorted(registry()))
def test_each_mutator_breaks_exactly_its_rule(mutable_streams: list[list[dict]], rule: str) -> None:
    mutate = registry()[rule]

    @more(4)
    @given(st.sampled_from(mutable_streams), st.data())
    def breaks(records: list[dict], data: st.DataObject) -> None:
        outcome = validate_bytes(mutate(data.draw, copy.deepcopy(records)))
        # The reference names only rules of the drawn mode's naming set (plus X- rules it files under).
        allowed = {rule} | set(drawn_mode(rule).names) | ALSO_NAMED.get(rule, set())
        assert not outcome.valid
        assert outcome.rules() <= allowed, [(d.rule, d.message) for d in outcome.errors]

    breaks()


@pytest.mark.parametrize("kind", sorted(DAMAGES))
def test_damage_never_makes_the_reference_raise(kind: str) -> None:
    damage = DAMAGES[kind]

    @more(2)
    @given(valid_streams(max_steps=6), st.data())
    def survives(records: list[dict], data: st.DataObject) -> None:
        damaged = damage(data.draw, serialize(records))
        outcome = validate_bytes(damaged)
        if kind in ("invalid-utf8", "nul-byte", "nan-or-infinity"):
            # Plainly broken bytes; a damaged header may bring cross-record errors along.
            assert outcome.rules() & DEFINITE_RULES

    survives()


def test_hypothesis_jsonschema_works_with_the_pinned_hypothesis() -> None:
    """hypothesis-jsonschema 0.23.1 breaks on hypothesis 6.170.10 and later: keep the pin honest."""
    major, minor, patch = hypothesis.__version_info__
    assert (major, minor, patch) < (6, 170, 10), "pyproject pins hypothesis below 6.170.10; see the comment on the pin in pyproject.toml"
    strategy = hypothesis_jsonschema.from_schema(
        {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    )
    assert isinstance(find(strategy, lambda value: True)["a"], int)


#: Rules a single record cannot be held to by a schema: they need other records
#: (declared roots and conversations, terminals, turns), compare items within one
#: record (unique IDs in an array, answers to secret questions), or reach every
#: number of the stream, extension members included (ASR-032).
CROSS_RECORD_RULES = frozenset({
    "ASR-032", "ASR-158", "ASR-161", "ASR-166", "ASR-176", "ASR-184", "ASR-257", "ASR-262", "ASR-271", "ASR-278",
    "ASR-283", "ASR-284", "ASR-290", "X-SUPERSEDES",
})
HEADER = {"type": "session", "seq": 0, "id": "h", "formatVersion": "0.1", "agent": {"name": "a"}, "sessionId": "s",
          "producer": {"name": "p", "version": "1", "method": "native", "instance": "i"}, "profiles": ["core"],
          "contentLevel": "full"}


@pytest.mark.parametrize("record_type", sorted(DEFINED_TYPES))
def test_record_schemas_agree_with_the_reference(record_type: str) -> None:
    """Records drawn from the shipped schema (hypothesis-jsonschema) validate against it
    (jsonschema) and the reference finds nothing wrong with them on their own."""
    from asr_conformance.vocabulary.record_schemas import inlined, record_validator

    if settings.get_current_profile_name() != "asr-deep":
        pytest.skip("runs with --hypothesis-profile=asr-deep: drawing from the record schemas takes minutes")

    schema = inlined(f"{record_type}.schema.json")
    validator = record_validator(f"{record_type}.schema.json")

    @settings(max_examples=settings.default.max_examples)
    @given(hypothesis_jsonschema.from_schema(schema))
    def agrees(record: dict) -> None:
        assert validator.errors(record) == []
        if record_type == "session":
            stream = [{**record, "seq": 0}]
        else:
            stream = [HEADER, {**record, "seq": 1, "id": "r1"}]
        errors = {(d.rule, d.message) for d in validate_bytes(serialize(stream)).errors}
        assert {(rule, message) for rule, message in errors if rule not in CROSS_RECORD_RULES} == set()

    agrees()


def test_a_mode_left_by_a_call_that_ended_early_is_not_taken_for_the_next_calls() -> None:
    """A mutator that drew its mode and then stopped (an example Hypothesis turned away) leaves no mode behind
    for ``drawn_mode`` after the next call: a call that draws none of a many-mode rule is an error, not the
    earlier call's mode."""
    import random

    from asr_conformance.generators.changes import mutate
    from asr_conformance.generators.mutators import declared_modes, pick
    from asr_conformance.generators.seeded import drawing

    rule = next(rule for rule in sorted(registry()) if len(declared_modes(rule)) > 1)
    records = [{"type": "session", "seq": 0, "id": "r0", "asr": "1.0", "sessionId": "s", "ts": "2026-01-01T00:00:00Z"}]

    def stops_after_its_pick(draw: st.DrawFn, given: list) -> bytes:
        pick(draw, rule)
        raise LookupError("turned away")

    def picks_nothing(draw: st.DrawFn, given: list) -> bytes:
        return serialize(given)

    with drawing(random.Random(0)) as draw:
        with pytest.raises(LookupError):
            mutate(stops_after_its_pick, draw, records, rule)
        mutate(picks_nothing, draw, records, rule)
    with pytest.raises(RuntimeError, match="drew none with pick"):
        drawn_mode(rule)
