"""One classifier of a conformance test's role and kind: collection, lost xdist results and progress lines agree."""

from __future__ import annotations

import ast
from types import SimpleNamespace

import pytest

from asr_conformance.gate.decision import GateSettings
from asr_conformance.harness.adapters.targets import ROLES
from asr_conformance.plugin.classify import MODULES, OTHER, Classification, classify
from asr_conformance.plugin.entry import CONFORMANCE_DIR
from asr_conformance.plugin.progress import role_and_phase
from asr_conformance.plugin.session import CertificationSession


def _disagreements(names: set[str], found: Classification) -> list[str]:
    """Where a module's own markers say other than the classifier's table."""
    wrong = []
    if names & set(ROLES) != {found.role}:
        wrong.append(f"role markers {sorted(names & set(ROLES))}, the table says {found.role}")
    if ("fuzz" in names) != (found.kind == "fuzz"):
        wrong.append(f"fuzz marker {'present' if 'fuzz' in names else 'absent'}, the table says kind {found.kind}")
    if found.kind not in ("fuzz", "corpus" if found.role == "validator" else found.role):
        wrong.append(f"kind {found.kind} for a {found.role} test")
    if "conformance" not in names:
        wrong.append("no conformance marker")
    return wrong


def _marks_of(stem: str) -> set[str]:
    """The ``pytest.mark.NAME`` names of a conformance module's ``pytestmark``, read from its source (the
    markers exist only in a certification run, so the module is not imported)."""
    tree = ast.parse((CONFORMANCE_DIR / f"{stem}.py").read_text(encoding="utf-8"))
    (value,) = [node.value for node in tree.body if isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets)]
    return {node.attr for node in ast.walk(value) if isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Attribute) and node.value.attr == "mark"}


def test_the_table_names_every_module_of_the_suite() -> None:
    assert set(MODULES) == {path.stem for path in CONFORMANCE_DIR.glob("test_*.py")}


@pytest.mark.parametrize("stem", sorted(MODULES))
def test_the_table_agrees_with_the_modules_markers(stem: str) -> None:
    assert not _disagreements(_marks_of(stem), MODULES[stem])


def test_the_marker_check_sees_a_disagreement() -> None:
    """The check above can fail: the validator corpus module is neither a reader test nor fuzz."""
    assert len(_disagreements(_marks_of("test_validator_corpus"), Classification("reader", "fuzz", "fuzz"))) == 2


@pytest.mark.parametrize("nodeid", [
    "suite/conformance/test_producer_fuzz.py::test_converts_generated_transcripts[claude-code-jsonl-tool-calls]",
    "../elsewhere/suite/conformance/test_producer_fuzz.py::test_converts_generated_transcripts[not-fuzzed]",
    "test_producer_fuzz.py::test_converts_generated_transcripts[x]",
])
def test_producer_fuzz_is_fuzz_wherever_the_rootdir_is(nodeid: str) -> None:
    assert classify(nodeid) == Classification("producer", "fuzz", "fuzz")


def test_a_foreign_module_is_not_classified() -> None:
    assert classify("tests/test_something.py::test_x") is None
    assert role_and_phase("tests/test_something.py::test_x") == (OTHER.role, OTHER.phase)


def test_progress_names_every_module_of_the_suite() -> None:
    """The reader fuzz tests count under the reader role (no longer as "other")."""
    assert role_and_phase("suite/conformance/test_reader_fuzz.py::test_reader_views_of_valid_streams") == \
        ("reader", "fuzz")
    assert role_and_phase("suite/conformance/test_producer.py::test_deterministic[a]") == ("producer", "conversions")


def _session(keys: list[str]) -> CertificationSession:
    config = SimpleNamespace(getoption=lambda name, default=None: 0)
    targets = [SimpleNamespace(key=key) for key in keys]
    return CertificationSession(config, GateSettings(targets), active=False)  # type: ignore[arg-type]


def test_a_lost_worker_result_gets_the_collected_role_and_kind() -> None:
    """What a worker collected but never sent is expected as collection would have stamped it."""
    session = _session(["acme"])
    ids = [f"suite/conformance/{stem}.py::test_x[p]" for stem in sorted(MODULES)] + ["tests/test_other.py::test_y"]
    session.collected_on_worker(ids)
    assert session.expected == {f"suite/conformance/{stem}.py::test_x[p]": ("acme", found.role, found.kind)
                                for stem, found in MODULES.items()}
    assert session.expected["suite/conformance/test_producer_fuzz.py::test_x[p]"] == ("acme", "producer", "fuzz")
