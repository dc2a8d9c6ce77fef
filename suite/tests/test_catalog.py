"""The rule catalog covers both pages, and every stream rule has a check."""

from __future__ import annotations

import os
import re
from collections import defaultdict
from functools import cache
from pathlib import Path

import pytest
from corpus_cases import corpus_cases

from asr_conformance.reference.checks import validate_path
from asr_conformance.vocabulary.rules import load_catalog

#: The pages under test live beside the checkout (../shared/spec); ASR_SPEC_DIR overrides.
SPEC_DIR = Path(os.environ.get("ASR_SPEC_DIR", Path(__file__).resolve().parents[3] / "shared" / "spec"))
PAGES = {
    "session-records": "004_8f1e04c6cfcd9862.txt",
    "tool-records": "000_b16afab286b60fe6.txt",
}
#: A rule is defined where its ID starts a sentence: "ASR-164 A declaration's ...";
#: references sit inside one: "(ASR-103, ASR-104)", "follow ASR-035 instead".
DEFINITION = re.compile(r"(?:^|(?<=[.:]\s))(ASR-\d{3}) (?=[A-Za-z])", re.MULTILINE)
MENTION = re.compile(r"ASR-\d{3}")

CATALOG = load_catalog()


def spec_text(page: str) -> str:
    path = SPEC_DIR / PAGES[page]
    if not path.is_file():
        pytest.skip(f"the spec pages are not beside this checkout ({path} is missing)")
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize("page", sorted(PAGES))
def test_every_rule_defined_on_a_page_is_in_the_catalog(page: str) -> None:
    defined = set(DEFINITION.findall(spec_text(page)))
    assert len(defined) >= 40, "the definition pattern stopped matching the page"
    missing = sorted(defined - set(CATALOG))
    assert not missing, f"rules of {page} missing from cases/rules.toml: {missing}"
    misfiled = sorted(r for r in defined if CATALOG[r].page != page)
    assert not misfiled, f"rules filed under the wrong page: {misfiled}"


@pytest.mark.parametrize("page", sorted(PAGES))
def test_every_rule_the_pages_mention_is_in_the_catalog(page: str) -> None:
    mentioned = set(MENTION.findall(spec_text(page)))
    assert not sorted(mentioned - set(CATALOG))


def test_the_catalog_has_the_numbered_ranges_of_both_pages() -> None:
    expected = {f"ASR-{n}" for n in [*range(150, 193), *range(250, 292)]}
    assert not sorted(expected - set(CATALOG))


def test_catalog_only_names_rules_that_exist() -> None:
    numbered = {r for r in CATALOG if r.startswith("ASR-")}
    text = spec_text("session-records") + spec_text("tool-records")
    mentioned = set(MENTION.findall(text))
    assert not sorted(numbered - mentioned), "catalog entries that no page defines or mentions"


@cache
def findings() -> dict[str, set[str]]:
    """rule -> the case IDs on which the reference reports it (any level), on first use: validating the
    whole corpus at import took a quarter of the project's collection."""
    found: dict[str, set[str]] = defaultdict(set)
    for case in corpus_cases():
        for diagnostic in validate_path(case.stream).diagnostics:
            found[diagnostic.rule].add(case.id)
    return found


STREAM_RULES = sorted(r.id for r in CATALOG.values() if r.tested == "stream")


@pytest.mark.parametrize("rule_id", STREAM_RULES)
def test_every_stream_rule_has_a_check(rule_id: str) -> None:
    """The reference reports the rule on some case (or a rule that carries it)."""
    rule = CATALOG[rule_id]
    carriers = {rule_id, *rule.checked_by}
    assert any(findings().get(r) for r in carriers), f"no case makes the reference report {rule_id}"


@pytest.mark.parametrize("rule_id", STREAM_RULES)
def test_every_stream_rule_has_cases_on_both_sides(rule_id: str) -> None:
    cases = [c for c in corpus_cases() if rule_id in c.rules]
    accepting = [c for c in cases if c.verdict == "valid" or c.reference == "accept"]
    rejecting = [c for c in cases if c.verdict == "invalid" or c.reference == "reject"]
    if rule_id == "X-UNKNOWN-TYPE":
        assert accepting, "a warning-only rule needs a case that is accepted despite it"
        return
    assert rejecting, f"{rule_id} has no case that must be (or is) rejected"
    if not CATALOG[rule_id].suite_defined:  # every valid stream is an accepting case of an X- rule
        assert accepting, f"{rule_id} has no case that must be (or is) accepted"


def test_every_rule_a_case_names_is_in_the_catalog() -> None:
    unknown = {(c.id, r) for c in corpus_cases() for r in c.rules if r not in CATALOG}
    assert not sorted(unknown)


def test_rules_the_reference_reports_are_in_the_catalog() -> None:
    assert not sorted(set(findings()) - set(CATALOG))


def test_rules_not_tested_on_streams_say_why() -> None:
    silent = [r.id for r in CATALOG.values() if r.tested != "stream" and not r.reason]
    assert not silent


def test_producer_rules_said_to_be_checked_metamorphically_are() -> None:
    """A producer rule whose reason promises metamorphic checks is marked on a producer test;
    every other producer and untestable rule says why it is not."""
    from asr_conformance.harness.judging.producer import OUTPUT_RULES, variants

    marked = set(OUTPUT_RULES) | {rule for variant in variants().values() for rule in variant.rules}
    promised = [rule for rule in load_catalog().values() if rule.tested == "producer" and "Metamorphic" in (rule.reason or "")]
    assert promised, "no producer rule promises metamorphic checks: the test below would check nothing"
    for rule in load_catalog().values():
        if rule.tested in ("producer", "untestable"):
            assert rule.reason, f"{rule.id} has no reason"
        if rule.tested == "producer" and "Metamorphic" in (rule.reason or ""):
            assert rule.id in marked, f"{rule.id} promises metamorphic checks, and no producer test checks it"


def test_rules_said_to_be_checked_by_fidelity_are() -> None:
    """A rule whose reason promises fidelity checks is one the fidelity tests are marked with, and the
    fidelity tests are marked with every rule the fidelity modules name."""
    import re
    from pathlib import Path

    from asr_conformance import fidelity
    from asr_conformance.harness.judging.fidelity import FIDELITY_RULES

    promising = [rule for rule in load_catalog().values() if "idelity checks" in (rule.reason or "")]
    assert promising, "no rule promises fidelity checks: the loop below would check nothing"
    for rule in promising:
        assert rule.id in FIDELITY_RULES, f"{rule.id} promises fidelity checks, and no fidelity test is marked with it"
    named = set()
    for path in Path(fidelity.__file__).parent.glob("*.py"):
        named |= set(re.findall(r'"(ASR-\d{3})"', path.read_text(encoding="utf-8")))
    assert named <= set(FIDELITY_RULES), f"fidelity modules name rules the fidelity tests are not marked with: {sorted(named - set(FIDELITY_RULES))}"
