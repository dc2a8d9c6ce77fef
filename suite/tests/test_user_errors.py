"""Every mistake a user can fix is a ``UserError`` (``vocabulary/errors.py``), and the plugin turns it
into pytest's usage error in one place per phase (set-up, parametrization and collection; the campaign
plugin's collection), so a new kind of mistake cannot slip past as a traceback for want of an ``except``
clause, and no plugin raises pytest's usage error itself."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from asr_conformance.gate.baseline import BaselineError
from asr_conformance.gate.expectations import ExpectationsError
from asr_conformance.harness.adapters.manifest import ManifestError
from asr_conformance.harness.adapters.targets import TargetError
from asr_conformance.harness.fuzzing.profiles import FuzzSetupError
from asr_conformance.harness.isolation.policies import UsageError as ContainmentUsageError
from asr_conformance.plugin.campaign import NoImplementation
from asr_conformance.plugin.campaign_run import CampaignError
from asr_conformance.plugin.classify import UnclassifiedTest
from asr_conformance.plugin.hooks import StartError, usage_error
from asr_conformance.vocabulary.cases import CorpusError
from asr_conformance.vocabulary.errors import UserError
from asr_conformance.vocabulary.rules import CatalogError

PLUGIN = Path(__file__).resolve().parents[1] / "plugin"
HOOKS = PLUGIN / "hooks.py"
USER_ERRORS = (BaselineError, ExpectationsError, ContainmentUsageError, FuzzSetupError, ManifestError, TargetError,
               CampaignError, StartError, CorpusError, CatalogError, UnclassifiedTest, NoImplementation)


@pytest.mark.parametrize("kind", USER_ERRORS, ids=lambda kind: kind.__name__)
def test_every_usage_error_has_the_one_base(kind: type[Exception]) -> None:
    assert issubclass(kind, UserError)


def test_the_options_still_read_a_containment_refusal_as_a_value_error() -> None:
    assert issubclass(ContainmentUsageError, ValueError)  # plugin/options.py catches ValueError


def test_the_usage_error_keeps_the_message_with_the_plugins_prefix() -> None:
    found = usage_error(ManifestError("acme.toml: (top level): 'name' is a required property"))
    assert isinstance(found, pytest.UsageError)
    assert str(found) == "asr-conformance: acme.toml: (top level): 'name' is a required property"


def _handlers(source: str) -> list[str]:
    """The exception types of every ``except`` clause whose body raises pytest's usage error."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ExceptHandler) and node.type is not None and "usage_error" in ast.unparse(node):
            found.append(ast.unparse(node.type))
    return found


def test_hooks_turn_user_errors_into_usage_errors_once_per_phase() -> None:
    assert _handlers(HOOKS.read_text(encoding="utf-8")) == ["UserError", "UserError", "UserError"]
    assert _handlers((PLUGIN / "campaign.py").read_text(encoding="utf-8")) == ["UserError"]
    assert _handlers("try:\n    x()\nexcept (TargetError, BaselineError) as e:\n    raise usage_error(e)\n") == \
        ["(TargetError, BaselineError)"]


def test_no_plugin_module_raises_pytests_usage_error_itself() -> None:
    """Only ``entry.usage_error`` makes one; everything else raises a ``UserError`` where it finds the mistake."""
    made = {path.name for path in PLUGIN.glob("*.py") if "pytest.UsageError(" in path.read_text(encoding="utf-8")}
    assert made == {"entry.py"}
