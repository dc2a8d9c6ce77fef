"""JUnit XML (``--junitxml``) carries each conformance test's result ID, implementation, role, kind and rule
IDs as <property> elements, so a CI that reads JUnit can group by rule."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from validator_runs import accept_all_with_junit


def test_junit_xml_names_rule_implementation_role_and_kind(tmp_path_factory: pytest.TempPathFactory) -> None:
    """accept-all on ASR-164's cases (a run test_console.py reads too)."""
    result = accept_all_with_junit(tmp_path_factory)
    assert result.ret == 1
    cases = ET.parse(result.folder / "junit.xml").getroot().iter("testcase")
    found = {case.get("name"): [(p.get("name"), p.get("value")) for p in case.iter("property")] for case in cases}
    assert len(found) == 8
    for name, properties in found.items():
        assert ("asr_implementation", "accept-all") in properties and ("asr_role", "validator") in properties
        assert ("asr_kind", "corpus") in properties and ("asr_rule", "ASR-164") in properties, (name, properties)
        result_id = dict(properties)["asr_result_id"]
        assert name.endswith(f"[{result_id}]")
