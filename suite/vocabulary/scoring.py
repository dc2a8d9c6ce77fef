"""The scoring policy as code: which verdicts are scored, and which rule names count.

One module that the corpus judge, the fuzz judge and the audit test share, so
the three cannot drift apart.  The policy itself is written in cases/README.md
("Scoring policy"); its data is the ``scoring`` column of cases/ASSUMPTIONS.md
and the naming sets of cases and mutator modes.

* A verdict is scored when the pages, or a normative standard they rest on
  (RFC 8259 for JSON text), settle it.  Each assumption says whether it leaves
  the verdict open (``open``) or only records evidence for a verdict the pages
  (``pages``) or a standard (``standard``) settle, or only the rule the suite
  files a settled defect under (``filing``).  A case or mutator mode that rests
  on an ``open`` assumption is implementation-defined: reported, never scored.
* For a scored rejection, the validator's named rules are compared with the
  naming set (the rules the pages support for the defect).  Every named page
  rule (``ASR-NNN``) must be in the set and at least one must be: naming one
  rule outside the set, or naming the whole catalog, is not the right reason.
  Names that are not page rule IDs (vendor codes, the suite's ``X-`` rules)
  are ignored, since a validator cannot be expected to know the suite's IDs.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from asr_conformance import CORPUS_DIR

#: Values of the ``scoring`` column of cases/ASSUMPTIONS.md.
KINDS = ("open", "pages", "standard", "filing")
#: Kinds under which a verdict resting on the assumption is still scored.
SETTLED = frozenset({"pages", "standard", "filing"})
PAGE_RULE = re.compile(r"^ASR-[0-9]{3}$")
#: What a named rule may look like to be kept as one: a page rule (ASR-NNN), a suite rule (X-NAME) or a
#: vendor code (a prefix other than ASR of 2 to 16 upper-case letters or digits, a hyphen, up to 32 upper-case
#: letters, digits or hyphens: ACME-W12).  Anything else is shown escaped and clipped in the diagnostics,
#: never recorded or scored as a rule (docs/contract.md §8).
RULE_NAME = re.compile(r"ASR-[0-9]{3}|X-[A-Z0-9][A-Z0-9-]{0,31}|(?!ASR-)[A-Z][A-Z0-9]{1,15}-[A-Z0-9][A-Z0-9-]{0,31}")


def rule_names(named: Iterable[object]) -> frozenset[str]:
    """The names among ``named`` that look like rule IDs (RULE_NAME); the rest is not a rule."""
    return frozenset(n for n in named if isinstance(n, str) and RULE_NAME.fullmatch(n))
_ROW = re.compile(r"^\|\s*(A-[A-Z0-9-]+)\s*\|")


@dataclass(frozen=True, slots=True)
class Assumption:
    id: str
    text: str
    kind: str
    #: Why a settled assumption does not open the verdict (the standard, or the page's words).
    basis: str


def parse_assumptions(text: str) -> dict[str, Assumption]:
    """Read the table of ASSUMPTIONS.md; its last column is ``kind: basis``."""
    found: dict[str, Assumption] = {}
    for line in text.splitlines():
        match = _ROW.match(line)
        if not match:
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        kind, _, basis = cells[-1].partition(":")
        found[match.group(1)] = Assumption(match.group(1), cells[1], kind.strip(), basis.strip())
    return found


@cache
def assumptions(corpus: Path = CORPUS_DIR) -> dict[str, Assumption]:
    """The assumptions of a corpus folder (the suite's own by default)."""
    return parse_assumptions((corpus / "ASSUMPTIONS.md").read_text(encoding="utf-8"))


def open_assumptions(ids: tuple[str, ...] | list[str], corpus: Path = CORPUS_DIR) -> list[str]:
    """The IDs among ``ids`` that leave a verdict open (unknown IDs count as open)."""
    known = assumptions(corpus)
    return [a for a in ids if a not in known or known[a].kind not in SETTLED]


def is_scored(ids: tuple[str, ...] | list[str], corpus: Path = CORPUS_DIR) -> bool:
    """A verdict resting on these assumptions is scored only when none of them is open."""
    return not open_assumptions(ids, corpus)


def naming_set(rules: Collection[str]) -> frozenset[str]:
    """The page rules among ``rules``: what a validator may name (X- rules are the suite's)."""
    return frozenset(r for r in rules if PAGE_RULE.match(r))


def preferred_rule(rules: tuple[str, ...] | list[str], filed_under: str | None = None) -> str | None:
    """The rule the suite files the defect under: its group when that is a page rule, else the first."""
    if filed_under and PAGE_RULE.match(filed_under) and filed_under in rules:
        return filed_under
    return next((r for r in rules if PAGE_RULE.match(r)), None)


def rule_level(named: frozenset[str] | set[str], allowed: frozenset[str]) -> str:
    """"right", "wrong" or "unnamed" for a rejection naming ``named`` when ``allowed`` may be named.

    "unnamed": the validator names no page rule, or the defect has no page rule
    (only the verdict is scored).  "right": every named page rule is allowed and
    at least one is.  "wrong": otherwise (none allowed, or one beyond the set)."""
    pages = naming_set(named)
    if not pages or not allowed:
        return "unnamed"
    return "right" if pages <= allowed else "wrong"


#: The keys of the reasons figure: scored rejections, and how many name a rule the stream breaks, only
#: such rules, or no page rule at all (docs/certification.md §4).
REASON_KEYS = ("rejections", "naming_a_broken_rule", "naming_only_broken_rules", "naming_no_rule")


def reasons_figure(named: frozenset[str] | set[str], allowed: frozenset[str]) -> dict[str, int]:
    """One scored rejection's contribution to the reasons figure (empty when the defect has no page rule)."""
    if not allowed:
        return {}
    pages = naming_set(named)
    return {"rejections": 1, "naming_a_broken_rule": int(bool(pages & allowed)),
            "naming_only_broken_rules": int(bool(pages) and pages <= allowed), "naming_no_rule": int(not pages)}


def add_reasons(total: dict[str, int], more: dict[str, int]) -> dict[str, int]:
    """Two reasons figures summed (either may be empty)."""
    return {key: total.get(key, 0) + more.get(key, 0) for key in REASON_KEYS} if total or more else {}


def wrong_reason(named: frozenset[str] | set[str], allowed: frozenset[str], preferred: str | None) -> str:
    """The failure message for a reject for the wrong reason, with the suite's preferred rule beside it."""
    pages = naming_set(named)
    beyond = sorted(pages - allowed)
    text = f"named {', '.join(sorted(named))}; the stream breaks {preferred or ', '.join(sorted(allowed))}"
    text += f" (the suite files it under {preferred}; a validator may name {', '.join(sorted(allowed))})"
    if pages & allowed and beyond:
        text += f"; {', '.join(beyond)} named beyond that set: the stream breaks only one rule"
    return text
