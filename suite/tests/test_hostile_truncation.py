"""A validator that checks only the first N lines, a reader that reads only the first N records
(examples/hostile/, N = 64 and 1,000), and a validator that skips the records it takes for filler and
checks only the first 64 of the rest, fail the default certification's fuzz under every fresh seed,
and conform without what catches them (so these tests can fail): the long shapes for the first two,
the generated filler (against the tagged filler the long shapes once spliced) for the third.  Their
corpus part (the scale cases) is in test_scale_cases.py.

The properties run are the conformance suite's own (suite/conformance/test_*_fuzz.py), called in
process with a session of the default profile (a fresh seed each time, no shrinking: whether the
fuzz catches them, not how small the counterexample gets).  The hostile programs are loaded in
process too (their own ``judge`` and ``first_records``; the scale-case tests run them as programs):
a property runs until one fails, so a seed costs the examples until the first long one that
catches the implementation, all the rules in a drawn order."""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import json
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import Phase, settings

from asr_conformance.generators import long_streams
from asr_conformance.generators.coding_turns import tagged_filler
from asr_conformance.generators.reader_streams import FEATURES
from asr_conformance.generators.registry import ALSO_NAMED, registry
from asr_conformance.harness.adapters.answers import Outcome, ReadAnswer, Verdict
from asr_conformance.harness.fuzzing.profiles import ShrinkBudget, ValidatorFuzzSession, ensure_profiles
from asr_conformance.harness.fuzzing.readers import ReaderFuzzSession

HOSTILE = Path(__file__).resolve().parents[2] / "examples" / "hostile"
SEEDS = 3
#: Properties run with the long shapes off, and with the tagged filler: a slice of each kind.
SLICE = ("ASR-164", "ASR-184", "ASR-257", "ASR-278", "X-SEQ")
#: Reader features run with the long shapes off (besides plain and adversarial streams).
FEATURES_WITHOUT_SHAPES = ("content-level", "terminal-reads", "title")


def _program(name: str) -> ModuleType:
    """A hostile program of examples/hostile/, imported (it runs only under ``__main__``)."""
    loader = importlib.machinery.SourceFileLoader(name.replace("-", "_"), str(HOSTILE / name))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


class InProcessValidator:
    """A hostile validator's ``judge(path, lines)`` answering as the persistent protocol would."""

    def __init__(self, judge: Callable[[str, int], tuple[bool, list[dict[str, Any]]]], lines: int) -> None:
        self.judge, self.lines = judge, lines

    def validate(self, path: Path) -> Verdict:
        conforms, violations = self.judge(str(path), self.lines)
        return Verdict(Outcome.ACCEPT if conforms else Outcome.REJECT,
                       rules=frozenset(v["rule"] for v in violations), diagnostics=violations)


class InProcessReader:
    """A hostile reader's ``first_records(path, records)``, its view sent as JSON."""

    def __init__(self, first_records: Callable[[str, int], dict[str, Any]], records: int) -> None:
        self.first_records, self.records = first_records, records

    def read(self, path: Path) -> ReadAnswer:
        view = json.loads(json.dumps(self.first_records(str(path), self.records), ensure_ascii=False))
        return ReadAnswer(Outcome.VIEWED, view=view)


@pytest.fixture
def first_lines_validator(lines: int) -> InProcessValidator:
    return InProcessValidator(_program("checks-only-the-first-lines").judge, lines)


@pytest.fixture
def filler_skipping_validator() -> InProcessValidator:
    return InProcessValidator(_program("skips-tagged-filler").judge, 64)


@pytest.fixture
def first_records_reader(lines: int) -> InProcessReader:
    return InProcessReader(_program("reads-only-the-first-records").first_records, lines)


def _conformance(config: pytest.Config, name: str) -> ModuleType:
    """A module of the conformance suite, imported once its markers are registered (as a certification
    run registers them: the role markers and one per rule of the catalog)."""
    from asr_conformance.plugin.hooks import MARKERS
    from asr_conformance.vocabulary.rules import load_catalog

    for marker in [*MARKERS, *load_catalog()]:
        config.addinivalue_line("markers", f"{marker}: registered for the conformance suite's modules")
    return importlib.import_module(f"asr_conformance.conformance.{name}")


@pytest.fixture
def validator_fuzz(pytestconfig: pytest.Config) -> ModuleType:
    return _conformance(pytestconfig, "test_validator_fuzz")


@pytest.fixture
def reader_fuzz(pytestconfig: pytest.Config) -> ModuleType:
    return _conformance(pytestconfig, "test_reader_fuzz")


def _settings(profile: str = "asr-fast") -> settings:
    """The profile's examples (the default's: a fresh seed every run), without shrinking."""
    ensure_profiles()
    return settings(settings.get_profile(profile), phases=[Phase.explicit, Phase.generate])


def _validator_session(adapter: Any, tmp_path: Path, profile: str = "asr-fast", long_shapes: bool = True) -> ValidatorFuzzSession:
    """``long_shapes`` false: the session of a run whose context draws no long shapes (the cost benchmark's baseline)."""
    (tmp_path / "scratch").mkdir(parents=True)
    return ValidatorFuzzSession(adapter, tmp_path / "scratch", tmp_path / "counterexamples", ["--implementation=x"],
                                _settings(profile), None, {rule: set(also) for rule, also in ALSO_NAMED.items()},
                                ShrinkBudget(seconds=1.0, steps=1), long_shapes=long_shapes)


def _reader_session(adapter: Any, tmp_path: Path, long_shapes: bool = True) -> ReaderFuzzSession:
    return ReaderFuzzSession(adapter, tmp_path / "scratch", tmp_path / "counterexamples", ["--implementation=x"],
                             _settings(), None, ShrinkBudget(seconds=1.0, steps=1), long_shapes=long_shapes)


def _first_failure(properties: list[Callable[[], None]]) -> str | None:
    """Run the properties in order until one fails; its message, or None when all pass."""
    for run in properties:
        try:
            run()
        except pytest.fail.Exception as failure:
            return str(failure)
    return None


def _validator_properties(validator_fuzz: ModuleType, session: ValidatorFuzzSession,
                          rules: list[str]) -> list[Callable[[], None]]:
    runs: list[Callable[[], None]] = [lambda: validator_fuzz.test_accepts_valid_streams(session),
                                      lambda: validator_fuzz.test_accepts_adversarial_valid_streams(session)]
    runs += [lambda rule=rule: validator_fuzz.test_rejects_mutated_streams(session, rule) for rule in rules]
    return runs


def _reader_properties(reader_fuzz: ModuleType, session: ReaderFuzzSession,
                       features: list[str]) -> list[Callable[[], None]]:
    def record(**facts: object) -> None:
        pass

    runs: list[Callable[[], None]] = [lambda: reader_fuzz.test_reader_views_of_valid_streams(session, record),
                                      lambda: reader_fuzz.test_reader_views_of_adversarial_streams(session, record)]
    runs += [lambda feature=feature: reader_fuzz.test_reader_views_of_streams_with(session, record, feature)
             for feature in features]
    return runs


def _fails_under_every_seed(validator_fuzz: ModuleType, adapter: InProcessValidator, tmp_path: Path) -> None:
    for attempt in range(SEEDS):
        rules = sorted(registry())
        random.shuffle(rules)
        session = _validator_session(adapter, tmp_path / str(attempt))
        failure = _first_failure(_validator_properties(validator_fuzz, session, rules))
        assert failure is not None, f"seed {attempt}: every property passed"
        # It accepts a defect past line N, or rejects a valid stream whose first N lines name a terminal
        # recorded later (ASR-290): wrong either way.
        assert failure.startswith(("accepted a valid stream broken by the", "rejected a valid stream")), failure[:500]


def test_a_validator_that_checks_only_the_first_lines_fails_the_fuzz_under_every_fresh_seed(
        validator_fuzz: ModuleType, first_lines_validator: InProcessValidator, tmp_path: Path) -> None:
    """N = 1,000 too: in most long examples the filler goes before the defect (``LongShape.splice``'s
    ``before``), and a long example holds at least 2,000 records of it."""
    _fails_under_every_seed(validator_fuzz, first_lines_validator, tmp_path)


def test_a_reader_that_reads_only_the_first_records_fails_the_fuzz_under_every_fresh_seed(
        reader_fuzz: ModuleType, first_records_reader: InProcessReader, tmp_path: Path) -> None:
    for attempt in range(SEEDS):
        features = sorted(FEATURES) * 4  # the certification runs each once; again here until one fails
        random.shuffle(features)
        session = _reader_session(first_records_reader, tmp_path / str(attempt))
        failure = _first_failure(_reader_properties(reader_fuzz, session, features))
        assert failure is not None, f"seed {attempt}: every property passed"
        assert "differs from the reference reader's" in failure, failure[:500]


def test_without_the_long_shapes_the_first_lines_validator_conforms(
        validator_fuzz: ModuleType, first_lines_validator: InProcessValidator, tmp_path: Path) -> None:
    session = _validator_session(first_lines_validator, tmp_path, long_shapes=False)
    assert _first_failure(_validator_properties(validator_fuzz, session, list(SLICE))) is None
    assert session.examples >= 8 * len(SLICE)


def test_without_the_long_shapes_the_first_records_reader_conforms(
        reader_fuzz: ModuleType, first_records_reader: InProcessReader, tmp_path: Path) -> None:
    session = _reader_session(first_records_reader, tmp_path, long_shapes=False)
    assert _first_failure(_reader_properties(reader_fuzz, session, list(FEATURES_WITHOUT_SHAPES))) is None
    assert session.examples >= 8 * len(FEATURES_WITHOUT_SHAPES)


def test_a_validator_that_skips_what_looks_like_filler_fails_the_fuzz_under_every_fresh_seed(
        validator_fuzz: ModuleType, filler_skipping_validator: InProcessValidator, tmp_path: Path) -> None:
    """The generated filler carries no tag: the validator skips none of it, and reads only the first 64 lines."""
    _fails_under_every_seed(validator_fuzz, filler_skipping_validator, tmp_path)


@pytest.fixture
def tagged(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """The long shapes splice the tagged filler, as they once did; the sizes of the blocks spliced."""
    sizes: list[int] = []

    def counted(data: bytes, blocks: list[tuple[int, int]], seed: int, pool: int) -> tuple[list[list[str]], frozenset[str]]:
        sizes.extend(count for _, count in blocks)
        return tagged_filler(data, blocks, seed, pool)

    monkeypatch.setattr(long_streams, "FILLER", counted)
    yield sizes


def test_with_the_tagged_filler_the_filler_skipping_validator_conforms(
        validator_fuzz: ModuleType, filler_skipping_validator: InProcessValidator, tagged: list[int],
        tmp_path: Path) -> None:
    """The same slice of properties under the derandomized profile: long blocks of filler are spliced in,
    enough that a validator that reads only the first 64 lines fails, and the one that skips the tagged
    records conforms (so the test above, run with the tagged filler, would fail)."""
    session = _validator_session(filler_skipping_validator, tmp_path / "skips", "asr-fixed")
    assert _first_failure(_validator_properties(validator_fuzz, session, list(SLICE))) is None
    assert max(tagged) > 64, f"blocks of filler spliced: {sorted(tagged)}"
    tagged.clear()
    truncating = InProcessValidator(_program("checks-only-the-first-lines").judge, 64)
    session = _validator_session(truncating, tmp_path / "truncates", "asr-fixed")
    assert _first_failure(_validator_properties(validator_fuzz, session, list(SLICE))) is not None


@pytest.fixture
def verbatim_filler(monkeypatch: pytest.MonkeyPatch) -> None:
    """The filler's pool used word for word, as it once was: texts kept, times kept."""
    from asr_conformance.generators import filler

    kept_times = filler.moved
    monkeypatch.setattr(filler, "relettered", lambda text, letters: text)
    monkeypatch.setattr(filler, "moved", lambda stamps, span: kept_times(stamps, span * 0))


def _late_defect() -> bytes:
    """A header, a MiB of filler and a broken last line (no JSON value)."""
    from asr_conformance.generators.filler import generated_filler
    from asr_conformance.generators.long_streams import MIB_RECORDS
    from asr_conformance.generators.mutators import serialize

    header = serialize([{"type": "session", "seq": 0, "id": "h", "formatVersion": "0.1", "agent": {"name": "codex"},
                         "sessionId": "s", "producer": {"name": "p", "version": "1", "method": "native",
                                                        "instance": "i"}, "profiles": ["core"], "contentLevel": "full"}])
    (lines,), _ = generated_filler(header, [(1, MIB_RECORDS)], 4)
    return header + "".join(lines).encode() + b'{"type":"state","seq":' + str(MIB_RECORDS + 1).encode() + b',\n'


def _repeat_skipper_on_a_late_defect(tmp_path: Path) -> tuple[bool, bool]:
    """Whether the reference and the repeat-skipping validator (N = 1,000) accept a late defect."""
    from asr_conformance.reference.checks import validate_bytes

    stream = tmp_path / "late.jsonl"
    stream.write_bytes(_late_defect())
    conforms, _ = _program("skips-repeated-records").judge(str(stream), 1_000)
    return validate_bytes(stream.read_bytes()).valid, conforms


def test_a_validator_that_skips_repeated_records_misses_a_defect_past_the_filler(tmp_path: Path) -> None:
    """The filler's texts and times change at each use of its pool: the validator keeps most of it and its
    first 1,000 records end long before the broken last line, which it accepts (the fuzz puts the larger
    block of filler before the defect in most long examples: test below, with --campaigns)."""
    assert _repeat_skipper_on_a_late_defect(tmp_path) == (False, True)


@pytest.mark.usefixtures("verbatim_filler")
def test_with_the_verbatim_filler_the_repeat_skipping_validator_sees_the_defect(tmp_path: Path) -> None:
    """With the pool used word for word, the repeats it skips leave a few hundred records: the broken last
    line is among its first 1,000 and it rejects the stream, as a correct validator does (so the test above,
    run with the verbatim filler, would fail)."""
    assert _repeat_skipper_on_a_late_defect(tmp_path) == (False, False)


@pytest.mark.campaign
def test_a_validator_that_skips_repeated_records_fails_the_fuzz_under_every_fresh_seed(
        validator_fuzz: ModuleType, tmp_path: Path) -> None:
    _fails_under_every_seed(validator_fuzz, InProcessValidator(_program("skips-repeated-records").judge, 1_000),
                            tmp_path)
