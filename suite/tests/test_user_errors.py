"""Every mistake a user can fix is a ``UserError`` (``vocabulary/errors.py``), and the plugin turns it
into pytest's usage error in one place per phase (set-up, parametrization and collection; the campaign
plugin's collection), so a new kind of mistake cannot slip past as a traceback for want of an ``except``
clause, and no plugin raises pytest's usage error itself."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from asr_conformance.gate.baseline import BaselineError
from asr_conformance.gate.expectations import ExpectationsError
from asr_conformance.harness.adapters.manifest import ManifestError
from asr_conformance.harness.adapters.targets import TargetError
from asr_conformance.harness.fuzzing.profiles import FuzzSetupError
from asr_conformance.harness.isolation.limits import LimitError
from asr_conformance.harness.isolation.policies import UsageError as ContainmentUsageError
from asr_conformance.plugin.campaign import NoImplementation
from asr_conformance.plugin.campaign_record import CampaignRecordError
from asr_conformance.plugin.campaign_run import CampaignError
from asr_conformance.plugin.classify import UnclassifiedTest
from asr_conformance.plugin.hooks import StartError, usage_error
from asr_conformance.reports import ReportFolderError
from asr_conformance.vocabulary.bounded_files import InputFileError
from asr_conformance.vocabulary.cases import CorpusError
from asr_conformance.vocabulary.errors import UserError
from asr_conformance.vocabulary.rules import CatalogError
from asr_conformance.vocabulary.schemas import FileProblem

SUITE = Path(__file__).resolve().parents[1]
PLUGIN = SUITE / "plugin"
#: The package's folders by dotted name (the package-dir mapping joins three).
FOLDERS = {"asr_conformance": SUITE, "asr_conformance.generators": SUITE.parent / "generators",
           "asr_conformance.reports": SUITE.parent / "reports"}
#: Exception classes that are no mistake of the user's, and why: the implementation under test's, a pack's,
#: the reference's own answers, or control flow inside the harness.
NOT_THE_USERS = {
    "NotThisFormat": "a witness saying a file is not its format (the next pack is asked)",
    "HandshakeFailed": "the implementation under test answered the handshake wrongly",
    "_Dead": "the implementation's process died (control flow inside the persistent adapter)",
    "UnsafeOutput": "the implementation named an output file the harness refuses to read",
    "TooLarge": "a folder too large to list (turned into SandboxRefused, naming the folder)",
    "SandboxRefused": "a start the sandbox refuses: the implementation's start fails, judged as a crash",
    "StepHung": "a step of the suite's own outlived its time (recorded on the test, never a usage error)",
    "PackError": "a format pack failed while judging (recorded as the suite's error, naming the pack)",
    "Refused": "the reference converter refusing its input (its answer, on stderr)",
    "Refusal": "the reference producer refusing its input (its answer)",
    "UnreadableStream": "the reference reader's answer on a stream it cannot read",
    "_StrictDecodeError": "control flow inside the strict JSON reader",
    "ProtocolError": "the implementation under test broke the persistent protocol",
    "TooDeep": "JSON nested past the bound (an implementation's reply, or turned into InputFileError)",
    "_Unsupported": "control flow inside the schema proof's compiler (a schema left to jsonschema whole)",
}
HOOKS = PLUGIN / "hooks.py"
USER_ERRORS = (BaselineError, ExpectationsError, ContainmentUsageError, FuzzSetupError, ManifestError, TargetError,
               CampaignError, StartError, CorpusError, CatalogError, UnclassifiedTest, NoImplementation, LimitError,
               CampaignRecordError, InputFileError, FileProblem, ReportFolderError)


def exception_classes() -> dict[str, type[BaseException]]:
    """Every exception class the package defines (found in the source, then imported), by name."""
    named: dict[str, str] = {}
    for package, folder in FOLDERS.items():
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[0] in ("tests", "benchmarks") or package == "asr_conformance" and parts[0] in ("generators", "reports"):
                continue
            module = ".".join((package, *(parts[:-1] if parts[-1] == "__init__" else parts)))
            named.update({node.name: module for node in ast.parse(path.read_text(encoding="utf-8")).body
                          if isinstance(node, ast.ClassDef) and node.bases})
    found = {name: getattr(importlib.import_module(module), name) for name, module in named.items()}
    return {name: kind for name, kind in found.items() if isinstance(kind, type) and issubclass(kind, BaseException)}


def test_every_exception_class_is_a_user_error_or_says_whose_mistake_it_is() -> None:
    found = exception_classes()
    others = {name for name, kind in found.items() if not issubclass(kind, UserError)}
    assert others == set(NOT_THE_USERS), (f"neither a UserError nor explained: {sorted(others - set(NOT_THE_USERS))}; "
                                          f"explained but gone or a UserError: {sorted(set(NOT_THE_USERS) - others)}")
    assert {kind.__name__ for kind in USER_ERRORS} <= set(found)
    assert len(found) - len(others) == 18  # UserError and its 17 kinds


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
