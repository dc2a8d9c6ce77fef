"""Nothing of the caller in what the harness records: passed variables' values are redacted, and only
names that look like rule IDs are kept as rules.  Each protection is also taken away once, to show the
secret coming through without it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from asr_conformance import CORPUS_DIR
from asr_conformance.gate.results import TestRecord
from asr_conformance.harness.adapters import answers, oneshot
from asr_conformance.harness.adapters.oneshot import OneShotValidator
from asr_conformance.vocabulary import redaction
from asr_conformance.vocabulary.scoring import rule_names
from reports.badges import badge

ROOT = Path(__file__).resolve().parents[3]
HOSTILE = ROOT / "examples" / "hostile"
INVALID_CASE = CORPUS_DIR / "validator" / "ASR-164" / "invalid-loosen-redacted-to-full.jsonl"


def _everything(answer: answers.Verdict) -> str:
    return repr((answer.rules, answer.diagnostics, answer.message, answer.received, answer.stderr_tail, answer.explain()))


@pytest.mark.parametrize("protected", [True, False], ids=["protected", "unprotected"])
def test_a_passed_value_is_redacted_from_every_answer(protected: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    token = f"ghp_{os.urandom(12).hex()}"
    monkeypatch.setenv("GITHUB_TOKEN", token)
    if not protected:
        monkeypatch.setattr(answers, "redact", lambda text: text)
        monkeypatch.setattr(answers, "redact_value", lambda value: value)
        monkeypatch.setattr(oneshot, "rule_names", frozenset)
    answer = OneShotValidator([str(HOSTILE / "names-its-secrets-as-rules")], timeout=60,
                              pass_env=("GITHUB_TOKEN",)).validate(INVALID_CASE)
    said = _everything(answer)
    assert (token in said) is not protected, said
    if protected:
        assert "[value of GITHUB_TOKEN]" in said
        assert answer.rules == {"ASR-164"}, "the value named as a rule is no rule"
    else:
        assert token in answer.rules


def test_a_record_carries_no_passed_value_and_no_rule_that_is_not_one(monkeypatch: pytest.MonkeyPatch) -> None:
    token = "s3cr3t-licence-value"
    monkeypatch.setenv("ASR_LICENSE_KEY", token)
    redaction.register(["ASR_LICENSE_KEY"])
    record = TestRecord("validator/x", "impl", "validator", "corpus").with_(
        rules_named=(token, "ASR-164", "X-JSON", "ACME-W12", "acme w12", "ASR-164\n"), output=f"said {token}",
        shrink={"first": f"call({token!r})"})
    assert token not in record.to_json()
    assert record.rules_named == ("ACME-W12", "ASR-164", "X-JSON")
    assert "[value of ASR_LICENSE_KEY]" in (record.output or "")


@pytest.mark.parametrize(("name", "kept"), [
    ("ASR-164", True), ("X-SURROGATE", True), ("ACME-W12", True), ("ASR-16", False), ("asr-164", False),
    ("ghp_0123456789abcdef", False), ("ASR-164 ", False), ("", False), ("A" * 17 + "-1", False),
])
def test_only_names_that_look_like_rule_ids_are_rules(name: str, kept: bool) -> None:
    assert (name in rule_names([name])) is kept


def test_short_values_and_unpassed_variables_are_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASR_SHORT_FLAG", "1")
    monkeypatch.setenv("ASR_NOT_PASSED", "a-long-enough-value")
    redaction.register(["ASR_SHORT_FLAG"])
    assert redaction.redact("exit 1, a-long-enough-value") == "exit 1, a-long-enough-value"


def test_a_widened_run_says_so_on_its_badge() -> None:
    verdict = {"role": "validator", "verdict": "conforms", "pass_percent": 100.0, "counts": {"pass": 4}}
    assert badge(verdict)["message"] == "100% (4/4)"
    widened = badge(verdict, ["pass_env GITHUB_TOKEN", "allow_read /opt/acme"])["message"]
    assert widened == "100% (4/4), widened sandbox: pass_env GITHUB_TOKEN; allow_read /opt/acme"
