"""What a conformance test is (its role, its kind and the phase its progress line names), decided in one place.

Collection, the recovery of results an xdist worker never sent and the progress lines all ask
``classify``.  It reads the test's module from the node ID, because that is all the latter two
have (xdist sends node IDs, nothing more); each module of the conformance suite plays one role
in one kind, and ``suite/tests/test_classify.py`` holds this table to the modules' own markers.
"""

from __future__ import annotations

from dataclasses import dataclass

from asr_conformance.vocabulary.errors import UserError


class UnclassifiedTest(UserError):
    """A conformance test in a module this table does not name (a module added to the suite, not here)."""


@dataclass(frozen=True, slots=True)
class Classification:
    """A conformance test's role, its kind in reports (corpus, fuzz, or its role) and its progress phase."""

    role: str
    kind: str
    phase: str


#: Each module of the conformance suite (its file name without ``.py``) and what its tests are.
MODULES = {
    "test_validator_corpus": Classification("validator", "corpus", "corpus"),
    "test_validator_fuzz": Classification("validator", "fuzz", "fuzz"),
    "test_reader_corpus": Classification("reader", "reader", "cases"),
    "test_reader_fuzz": Classification("reader", "fuzz", "fuzz"),
    "test_producer": Classification("producer", "producer", "conversions"),
    "test_producer_fuzz": Classification("producer", "fuzz", "fuzz"),
}
#: What the progress line counts a test of another module as.
OTHER = Classification("other", "other", "tests")


def module_of(nodeid: str) -> str:
    """The module a node ID names, without folder or ``.py`` (node IDs are relative to a rootdir that moves)."""
    return nodeid.split("::", 1)[0].rsplit("/", 1)[-1].removesuffix(".py")


def classify(nodeid: str) -> Classification | None:
    """What the test with this node ID is, or None when its module is not one of the conformance suite's."""
    return MODULES.get(module_of(nodeid))
