"""JUnit XML (``--junitxml``) carries each conformance test's result ID, implementation, role, kind and rule
IDs as <property> elements, so a CI that reads JUnit can group by rule."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from certifying import run_certification

ROOT = Path(__file__).resolve().parents[2]


def test_junit_xml_names_rule_implementation_role_and_kind(pytester: pytest.Pytester) -> None:
    result = run_certification(f"--implementation={ROOT / 'examples' / 'misbehaving' / 'accept-all'}",
                               "--report-dir=none", "-m", "corpus", "-k", "ASR-164", "--junitxml=junit.xml",
                               cwd=pytester.path)
    assert result.ret == 1
    cases = ET.parse(pytester.path / "junit.xml").getroot().iter("testcase")
    found = {case.get("name"): [(p.get("name"), p.get("value")) for p in case.iter("property")] for case in cases}
    assert len(found) == 8
    for name, properties in found.items():
        assert ("asr_implementation", "accept-all") in properties and ("asr_role", "validator") in properties
        assert ("asr_kind", "corpus") in properties and ("asr_rule", "ASR-164") in properties, (name, properties)
        result_id = dict(properties)["asr_result_id"]
        assert name.endswith(f"[{result_id}]")
