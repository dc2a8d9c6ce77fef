"""The scoring policy (cases/README.md) holds for every case, mutator mode and damage kind.

The audit walks the catalog and lists, per rule, the scored and unscored cases and mutator
modes with the assumptions each rests on; it fails on an inconsistency (a scored verdict
resting on an open assumption, a case and a mode with one defect scored differently, a
naming set without its rule) and prints its table (``-rP`` shows it).  Then
validators certified as a vendor would show the policy works end to end: one that takes the
other side of every open point passes the corpus; one that rejects the valid two-results
stream, one that crashes on a 5000-digit integer and one that names every rule fail."""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from certifying import Certification, Certify
from corpus_cases import corpus_cases
from hypothesis import given, settings
from hypothesis import strategies as st
from validator_runs import STRICT_NAME, column_failed, column_results, seeded_validators

from asr_conformance.generators import damage as damage_module
from asr_conformance.generators.damage import DAMAGES
from asr_conformance.generators.mutators import Mode, serialize
from asr_conformance.generators.reach import stream_features
from asr_conformance.generators.registry import all_modes
from asr_conformance.generators.streams import valid_streams
from asr_conformance.reference.checks import validate_bytes
from asr_conformance.vocabulary.cases import Case
from asr_conformance.vocabulary.rules import load_catalog
from asr_conformance.vocabulary.scoring import (
    KINDS,
    SETTLED,
    assumptions,
    is_scored,
    naming_set,
    open_assumptions,
    parse_assumptions,
    preferred_rule,
    rule_level,
    wrong_reason,
)

ROOT = Path(__file__).resolve().parents[2]
OTHER_SIDE = Path(__file__).resolve().parent / "validators" / "takes-the-other-side"
CASES = corpus_cases("validator")
MODES = all_modes()


def case_scored(case: Case) -> bool:
    return case.verdict != "implementation-defined"


def group_of(case: Case) -> str:
    return case.id.split("/")[1]


# --- the audit ---------------------------------------------------------------------------------


@dataclass
class Audit:
    """Per rule: scored and unscored cases and modes; and every inconsistency found."""

    rows: dict[str, dict[str, list[str]]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(list)))
    problems: list[str] = field(default_factory=list)
    figures: dict[str, int] = field(default_factory=lambda: defaultdict(int))


def _label(name: str, rests_on: tuple[str, ...]) -> str:
    return f"{name} [{', '.join(rests_on)}]" if rests_on else name


def build_audit() -> Audit:
    audit = Audit()
    known = assumptions()
    for case in CASES:
        scored = case_scored(case)
        audit.figures[f"cases {'scored' if scored else 'unscored'}"] += 1
        audit.rows[group_of(case)]["scored cases" if scored else "unscored cases"].append(
            _label(case.id.split("/", 2)[2], case.assumptions))
        unknown = [a for a in case.assumptions if a not in known]
        if unknown:
            audit.problems.append(f"{case.id}: unknown assumptions {unknown}")
        opened = open_assumptions(case.assumptions)
        if scored and opened:
            audit.problems.append(f"{case.id}: scored ({case.verdict}) but rests on open {opened}")
        if not scored and case.assumptions and not opened:
            audit.problems.append(f"{case.id}: implementation-defined, yet every assumption it lists is settled "
                                  f"({list(case.assumptions)}); score it or name the open point")
        if case.verdict == "invalid" and group_of(case).startswith("ASR-") and group_of(case) not in case.rules:
            audit.problems.append(f"{case.id}: its naming set {list(case.rules)} lacks the rule it is filed under")
        if case.verdict == "valid" and case.defect:
            audit.problems.append(f"{case.id}: a valid case breaks nothing, so it has no defect")
    for mode in MODES:
        scored = mode.scored
        audit.figures[f"modes {'scored' if scored else 'unscored'}"] += 1
        audit.rows[mode.rule]["scored modes" if scored else "unscored modes"].append(
            _label(mode.name, mode.assumptions))
        unknown = [a for a in mode.assumptions if a not in known]
        if unknown:
            audit.problems.append(f"mutator {mode.rule} mode {mode.name}: unknown assumptions {unknown}")
        if mode.rule not in mode.names:
            audit.problems.append(f"mutator {mode.rule} mode {mode.name}: naming set {mode.names} lacks its rule")
    for kind in sorted(DAMAGES):
        rests_on = damage_module.ASSUMPTIONS.get(kind)
        if rests_on is None:
            audit.problems.append(f"damage kind {kind}: declares no assumptions (damage.ASSUMPTIONS)")
            continue
        scored = is_scored(rests_on)
        audit.figures[f"damage kinds {'settled' if scored else 'verdict only'}"] += 1
        audit.rows["damage"]["settled damage" if scored else "verdict-only damage"].append(_label(kind, rests_on))
    audit.problems.extend(defect_conflicts())
    return audit


def defect_conflicts() -> list[str]:
    """A case and a mode (or two cases) with one defect must be scored alike."""
    by_defect: dict[str, list[tuple[str, bool]]] = defaultdict(list)
    for case in CASES:
        if case.defect:
            by_defect[case.defect].append((f"case {case.id}", case_scored(case)))
    for mode in MODES:
        by_defect[mode.defect].append((f"mutator {mode.rule} mode {mode.name}", mode.scored))
    problems = []
    for defect, holders in sorted(by_defect.items()):
        if len({scored for _, scored in holders}) > 1:
            listing = "; ".join(f"{who} {'scored' if scored else 'unscored'}" for who, scored in holders)
            problems.append(f"defect {defect} is scored in one place and not another: {listing}")
    return problems


def render(audit: Audit) -> str:
    columns = ("scored cases", "unscored cases", "scored modes", "unscored modes")
    lines = ["# Scoring audit", "", "Printed by suite/tests/test_scoring_policy.py; policy in cases/README.md.", "",
             "## Figures", ""]
    lines += [f"- {name}: {count}" for name, count in sorted(audit.figures.items())]
    lines += ["", "## Per rule", "", "| rule | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    for rule in sorted(r for r in audit.rows if r != "damage"):
        cells = ["<br>".join(sorted(audit.rows[rule].get(c, []))) or "–" for c in columns]
        lines.append(f"| {rule} | " + " | ".join(cells) + " |")
    lines += ["", "## Damage kinds", ""]
    for column in ("settled damage", "verdict-only damage"):
        lines.append(f"- {column}: {', '.join(sorted(audit.rows['damage'].get(column, []))) or '–'}")
    lines += ["", "## Inconsistencies", ""] + ([f"- {p}" for p in audit.problems] or ["none"])
    return "\n".join(lines) + "\n"


def test_audit_finds_no_inconsistency() -> None:
    """The table is printed (shown with -rP), never written into the package's folders."""
    audit = build_audit()
    text = render(audit)
    print(text)  # shown with -rP
    assert not audit.problems, "\n".join(audit.problems)


def test_the_audit_catches_a_scored_case_resting_on_an_open_assumption(monkeypatch) -> None:
    """The audit can fail: a case scored on A-META (open) and a mode/case defect clash are both reported."""
    case = next(c for c in CASES if c.id == "validator/envelope/impl-meta-not-object")
    flipped = Case(**{**{f: getattr(case, f) for f in case.__dataclass_fields__}, "verdict": "invalid",
                      "reference": None})
    monkeypatch.setattr(sys.modules[__name__], "CASES", [flipped])
    problems = build_audit().problems
    assert any("rests on open ['A-META']" in p for p in problems)
    assert any("defect meta-not-an-object" in p for p in problems)


# --- the data the audit reads --------------------------------------------------------------------


def test_every_assumption_has_a_scoring_kind_and_settled_ones_say_why() -> None:
    found = assumptions()
    assert len(found) >= 30
    for assumption in found.values():
        assert assumption.kind in KINDS, assumption
        if assumption.kind in SETTLED:
            assert len(assumption.basis) > 10, f"{assumption.id} is {assumption.kind}: say what settles it"


def test_the_assumption_table_parser_reads_the_last_column() -> None:
    parsed = parse_assumptions("| ID | a | b | c | scoring |\n|---|---|---|---|---|\n"
                               "| A-X | text | evidence | reference | standard: RFC 8259 §8.1 |\n")
    assert parsed["A-X"].kind == "standard" and parsed["A-X"].basis == "RFC 8259 §8.1"


@pytest.mark.parametrize(("case_id", "verdict"), [
    ("ASR-076/invalid-decider-string", "invalid"),
    ("ASR-185/invalid-source-string", "invalid"),
    ("ASR-281/invalid-review-by-string", "invalid"),
    ("ASR-257/invalid-none-with-call-id", "invalid"),
    ("ASR-257/invalid-derived-for-native-call", "invalid"),
    ("ASR-161/impl-head-not-a-reference", "implementation-defined"),
    ("ASR-003/impl-second-session-record", "implementation-defined"),
    ("ASR-262/valid-exact-linkage-to-duplicated-call-id", "valid"),
    ("ASR-264/valid-two-results-for-one-call", "valid"),
    ("ASR-032/impl-integer-5000-digits", "implementation-defined"),
    ("ASR-032/impl-integer-100000-digits", "implementation-defined"),
    ("format/invalid-utf8-ff-byte", "invalid"),
])
def test_the_points_the_issue_raised_are_decided(case_id: str, verdict: str) -> None:
    case = next(c for c in CASES if c.id == f"validator/{case_id}")
    assert case.verdict == verdict


@pytest.mark.parametrize(("rule", "mode", "scored", "names"), [
    ("X-SHAPE", "meta", False, None),
    ("X-SHAPE", "capture", False, None),
    ("X-SHAPE", "capture-state", False, None),
    ("X-SHAPE", "turnId", False, None),
    ("X-SHAPE", "supersedes", False, None),
    ("X-SHAPE", "title", True, None),
    ("ASR-003", "second-header", False, None),
    ("ASR-156", "format-not-string", False, None),
    ("ASR-188", "not-string", False, None),
    ("ASR-175", "identity-not-string", False, None),
    ("ASR-182", "turnId-not-string", False, None),
    ("ASR-161", "item", False, None),
    ("ASR-161", "not-array", True, None),
    ("ASR-257", "derived to native", True, {"ASR-257", "ASR-262", "ASR-263"}),
    ("ASR-257", "none with callId", True, {"ASR-257", "ASR-262", "ASR-263"}),
    ("ASR-260", "terminal", True, {"ASR-260", "ASR-271"}),
    ("ASR-260", "hook", True, {"ASR-260", "ASR-273"}),
    ("ASR-166", "redeclare", True, {"ASR-166", "ASR-158"}),
    ("ASR-151", "not-a-string", True, {"ASR-151", "ASR-150"}),
    ("ASR-152", "not-array", True, {"ASR-152", "ASR-150"}),
    ("ASR-156", "lossy-not-strings", True, {"ASR-156", "ASR-150", "ASR-157"}),
    ("ASR-185", "source-not-actor", True, {"ASR-185", "ASR-076"}),
    ("X-UTF8", "all", True, None),
])
def test_the_modes_the_issue_raised_are_decided(rule: str, mode: str, scored: bool, names: set | None) -> None:
    found: Mode = next(m for m in MODES if m.rule == rule and m.name == mode)
    assert found.scored is scored
    if names is not None:
        assert set(found.names) == names


@pytest.mark.parametrize("kind", sorted(k for k in DAMAGES if not is_scored(damage_module.ASSUMPTIONS.get(k, ("?",)))))
def test_a_damage_kind_on_an_open_assumption_never_demands_a_rejection(kind: str) -> None:
    """Its verdict is reported only, whatever the reference says (deep nesting in the header makes the
    reference name ASR-003 too, and that still demands nothing)."""
    from asr_conformance.harness.fuzzing.profiles import damage_is_definite

    damage = DAMAGES[kind]

    @settings(max_examples=6, derandomize=True, database=None, deadline=None)
    @given(valid_streams(max_steps=4), st.data())
    def never_definite(records: list[dict], data: st.DataObject) -> None:
        outcome = validate_bytes(damage(data.draw, serialize(records)))
        assert not damage_is_definite(kind, outcome.rules()), [(d.rule, d.message) for d in outcome.errors][:3]

    never_definite()
    assert not damage_is_definite(kind, frozenset({"ASR-003", "X-DEPTH"}))
    assert damage_is_definite("invalid-utf8", frozenset({"X-UTF8"}))  # the other side: a settled kind is scored


# --- the naming rule -------------------------------------------------------------------------------


def test_naming_rules_right_wrong_and_unnamed() -> None:
    allowed = naming_set(["ASR-257", "ASR-262", "ASR-263", "X-SHAPE"])
    assert allowed == {"ASR-257", "ASR-262", "ASR-263"}
    assert rule_level(frozenset({"ASR-263"}), allowed) == "right"
    assert rule_level(frozenset({"ASR-257", "ASR-262"}), allowed) == "right"
    assert rule_level(frozenset({"ASR-257", "vendor-E17", "X-JSON"}), allowed) == "right"
    assert rule_level(frozenset({"ASR-999"}), allowed) == "wrong"
    assert rule_level(frozenset({"ASR-257", "ASR-164"}), allowed) == "wrong"
    assert rule_level(frozenset(load_catalog()), allowed) == "wrong"
    assert rule_level(frozenset(), allowed) == "unnamed"
    assert rule_level(frozenset({"vendor-E17"}), allowed) == "unnamed"
    assert rule_level(frozenset({"ASR-164"}), naming_set(["X-JSON"])) == "unnamed"


def test_the_failure_shows_the_preferred_rule_beside_the_named_ones() -> None:
    allowed = naming_set(["ASR-260", "ASR-273"])
    message = wrong_reason(frozenset({"ASR-999"}), allowed, preferred_rule(["ASR-260", "ASR-273"], "ASR-260"))
    assert message.startswith("named ASR-999; the stream breaks ASR-260")
    assert "files it under ASR-260" in message and "may name ASR-260, ASR-273" in message


def test_preferred_rule_is_the_group_when_it_is_a_page_rule() -> None:
    assert preferred_rule(["ASR-151", "ASR-150"], "ASR-151") == "ASR-151"
    assert preferred_rule(["ASR-164", "ASR-167"], "ASR-153") == "ASR-164"  # group not in the set: the first
    assert preferred_rule(["X-JSON", "ASR-003"], "format") == "ASR-003"


# --- validators certified as a vendor would ------------------------------------------------------------


#: The corpus part of the suite, over the persistent protocol: the validators here load the corpus or the
#: reference at start, once per run rather than once per case; the policy, not the protocol, is under test.
CORPUS = ("-m", "corpus", "--persistent")


@pytest.mark.e2e
def test_a_validator_taking_the_other_side_of_every_open_point_passes(certify: Certify) -> None:
    # It finds cases by reading the corpus, which the sandbox hides from implementations.
    result = certify(f"--implementation={OTHER_SIDE}", *CORPUS, "--sandbox=none")
    counts = defaultdict(int)
    for case in CASES:
        counts[case.verdict] += 1
    assert not result.failed(), result.stdout.str()[-3000:]
    result.assert_outcomes(passed=counts["valid"] + counts["invalid"], skipped=counts["implementation-defined"])


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Certification]:
    """The shared run of a seeded-bug validator, beside the others of its group over the persistent protocol
    (validator_runs.py; test_harness.py reads them too): each test reads its own validator's column."""
    return lambda name: seeded_validators(tmp_path_factory, name)


def _messages(result: Certification, name: str) -> str:
    return "\n".join(f"{r.get('message', '')}\n{r.get('output', '')}" for r in column_results(result, name))


def test_rejecting_two_results_for_one_call_fails(seeded: Callable[[str], Certification]) -> None:
    run = seeded("rejects-two-results-for-one-call")
    failed = column_failed(run, "rejects-two-results-for-one-call")
    assert "validator/ASR-264/valid-two-results-for-one-call" in failed
    assert all("/valid-" in f for f in failed)


def test_rejecting_stop_reason_beside_error_fails(seeded: Callable[[str], Certification]) -> None:
    run = seeded("rejects-stop-reason-beside-error")
    beside_error = {c.id for c in CASES if c.verdict == "valid" and "state:error+stopReason" in stream_features(c.data())}
    assert "validator/ASR-168/valid-error-with-details" in beside_error
    groups = {c.split("/")[1] for c in beside_error}
    assert groups <= set(run.args[-1].split(" or "))  # every such case ran
    assert column_failed(run, "rejects-stop-reason-beside-error") == beside_error
    assert "rejected a valid stream naming ASR-168" in _messages(run, "rejects-stop-reason-beside-error")


def test_accepting_attempt_zero_fails_on_that_case_only(seeded: Callable[[str], Certification]) -> None:
    run = seeded("lenient-attempt-zero")
    assert column_failed(run, "lenient-attempt-zero") == {"validator/ASR-182/invalid-attempt-n-zero"}
    assert "accepted an invalid stream; it breaks ASR-182" in _messages(run, "lenient-attempt-zero")


def test_crashing_on_a_5000_digit_integer_fails(seeded: Callable[[str], Certification]) -> None:
    run = seeded("crashes-on-long-integers")
    failed = column_failed(run, "crashes-on-long-integers")
    long_ones = {c.id for c in CASES if re.search(r"\d{4,}-digit", c.id)}
    assert {"validator/ASR-032/impl-integer-5000-digits", "validator/ASR-254/impl-5000-digit-integer-in-input"} \
        <= long_ones
    assert failed == long_ones
    text = _messages(run, "crashes-on-long-integers")
    assert "Traceback" in text or "crash" in text


def test_naming_every_rule_is_not_the_right_reason(seeded: Callable[[str], Certification]) -> None:
    """names-every-rule is held to its reasons by its manifest (``strict_reasons``), alone of the run's columns."""
    run = seeded(STRICT_NAME)
    failed = column_failed(run, STRICT_NAME)
    named = {c.id for c in CASES if c.verdict == "invalid" and naming_set(c.rules)}
    expected = {c for c in named if group_of(next(x for x in CASES if x.id == c)) in ("ASR-164", "ASR-260")}
    assert expected and expected <= failed <= named
    assert "named beyond that set" in _messages(run, STRICT_NAME)


def test_scored_damage_kinds_are_those_whose_assumptions_are_settled() -> None:
    """The fuzz judge scores SETTLED_DAMAGE; the audit reads damage.ASSUMPTIONS: both must say the same."""
    from asr_conformance.generators.damage import ASSUMPTIONS, DAMAGES, SETTLED_DAMAGE
    from asr_conformance.vocabulary.scoring import is_scored

    assert set(ASSUMPTIONS) == set(DAMAGES)
    scored = {kind for kind, ids in ASSUMPTIONS.items() if ids and is_scored(ids)}
    assert scored == set(SETTLED_DAMAGE)
