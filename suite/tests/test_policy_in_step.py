"""One stream, one policy: a corpus case and a fuzz mutator mode that make the same shape (the same
``defect``) are judged alike, scored or reported, and docs/rules-and-mutators.md says which of the
X-SHAPE mutator's modes are scored, as the code decides it.

The X-SHAPE modes ``meta``, ``capture`` and ``capture-state`` are the shapes the corpus files as
implementation-defined (A-META, A-CAPTURE leave them open): an accept-all validator must pass them in
both places, and fail both where the pages settle the shape."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from corpus_cases import corpus_cases

from asr_conformance.generators.mutators import Mode, declared_modes
from asr_conformance.generators.registry import registry
from asr_conformance.harness.adapters.answers import Outcome, Verdict
from asr_conformance.harness.fuzzing.profiles import ValidatorFuzzSession
from asr_conformance.harness.judging.validator import judge
from asr_conformance.vocabulary.cases import Case

ROOT = Path(__file__).resolve().parents[2]
#: The shapes the issue found under two policies.
X_SHAPE_OPEN = {"meta": "meta-not-an-object", "capture": "capture-not-an-object",
                "capture-state": "capture-state-not-an-object"}


def _modes() -> list[Mode]:
    return [mode for rule in sorted(registry()) for mode in declared_modes(rule).values()]


def _pairs() -> list[tuple[Case, Mode]]:
    by_defect: dict[str, list[Mode]] = {}
    for mode in _modes():
        by_defect.setdefault(mode.defect, []).append(mode)
    return [(case, mode) for case in corpus_cases("validator") if case.defect
            for mode in by_defect.get(case.defect, [])]


class _AcceptAll:
    def validate(self, stream: Path) -> Verdict:
        return Verdict(Outcome.ACCEPT)


def _fuzz_accepts(tmp_path: Path, mode: Mode, data: bytes) -> bool:
    """Whether the fuzz judgement lets an accept-all validator pass this stream, as this mode's example."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    session = ValidatorFuzzSession(_AcceptAll(), tmp_path, tmp_path / "cx", [], settings(database=None), None, {})

    @settings(max_examples=1, database=None, deadline=None)
    @given(st.just(data))
    def example(stream: bytes) -> None:  # inside a property, as the fuzz test runs it
        session.expect(mode.expected, stream, f"mutated-{mode.rule}", list(mode.names), f"a {mode.defect} stream")

    try:
        example()
    except AssertionError:
        return False
    return True


def test_the_x_shape_shapes_the_corpus_leaves_open_are_reported_in_fuzzing_too() -> None:
    modes = declared_modes("X-SHAPE")
    cases = {case.defect: case for case, mode in _pairs() if mode.rule == "X-SHAPE"}
    assert X_SHAPE_OPEN
    for name, defect in X_SHAPE_OPEN.items():
        assert modes[name].defect == defect and defect in cases, (name, defect)
        assert cases[defect].verdict == "implementation-defined"
        assert modes[name].expected == "implementation-defined"


@pytest.mark.parametrize(("case", "mode"), [pytest.param(c, m, id=f"{c.id}~{m.rule}:{m.name}") for c, m in _pairs()])
def test_a_case_and_a_mode_with_one_defect_get_one_policy(tmp_path: Path, case: Case, mode: Mode) -> None:
    """The same bytes (the case's stream), judged as a corpus case and as the mode's fuzz example, with an
    accept-all validator: both pass (reported) or both fail (scored)."""
    corpus_passes = judge(case, Verdict(Outcome.ACCEPT)).status != "failed"
    assert corpus_passes == (case.verdict == "implementation-defined")
    assert _fuzz_accepts(tmp_path, mode, case.stream.read_bytes()) == corpus_passes


def test_the_in_step_check_can_fail(tmp_path: Path) -> None:
    """A scored mode given an open shape's stream fails the accept-all validator the corpus lets pass."""
    case = next(c for c, m in _pairs() if m.rule == "X-SHAPE" and m.name == "meta")
    scored = Mode("X-SHAPE", "meta", "meta-not-an-object", (), ("X-SHAPE",))
    assert scored.expected == "invalid"
    assert not _fuzz_accepts(tmp_path, scored, case.stream.read_bytes())
    assert judge(case, Verdict(Outcome.ACCEPT)).status != "failed"


def _documented_scoring() -> dict[str, str]:
    """rule -> the 'scored' cell of the mutator table of docs/rules-and-mutators.md."""
    text = (ROOT / "docs" / "rules-and-mutators.md").read_text()
    found = {}
    for table in text.split("| rule | what it changes | modes | scored |")[1:]:
        lines = table.split("\n\n", 1)[0].splitlines()[2:]
        rows = [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in lines]
        found.update({row[0]: row[-1] for row in rows if row and row[0]})
    return found


def _expected_cell(rule: str) -> set[str]:
    modes = declared_modes(rule)
    scored = [name for name, mode in modes.items() if mode.scored]
    unscored = [name for name, mode in modes.items() if not mode.scored]
    if not unscored:
        return {"yes"}
    if not scored:
        return {"no"}
    return {"yes, except " + ", ".join(f"`{n}`" for n in unscored), "no, except " + ", ".join(f"`{n}`" for n in scored)}


@pytest.mark.parametrize("rule", sorted(registry()))
def test_the_docs_say_which_modes_are_scored(rule: str) -> None:
    cell = _documented_scoring().get(rule)
    assert cell is not None, f"{rule} has no row in the mutator table of docs/rules-and-mutators.md"
    assert re.sub(r"\s+", " ", cell) in _expected_cell(rule), (rule, cell, _expected_cell(rule))
