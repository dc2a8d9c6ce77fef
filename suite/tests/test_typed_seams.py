"""The seams between the plugin, the judges and the adapters carry the role protocols
(``harness/adapters/roles.py``), so that mypy --strict checks what crosses them: no adapter parameter or
adapter fixture typed ``Any`` or ``object``, and no ``getattr`` reading an adapter or a target there.
Counted in the source, so that a seam erased again fails here."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from asr_conformance.harness.adapters.roles import Announcing, ReaderAdapter, ValidatorAdapter, announced

SUITE = Path(__file__).resolve().parents[1]
#: The modules on either side of the seams.
SEAMS = ("plugin/hooks.py", "harness/judging/validator.py", "harness/judging/reader.py",
         "harness/judging/producer.py", "harness/fuzzing/profiles.py", "harness/fuzzing/readers.py",
         "conformance/test_validator_corpus.py", "conformance/test_reader_corpus.py")
#: Parameters that hold an adapter, and the fixtures that yield one.
ADAPTER_NAMES = {"adapter", "asr_validator", "asr_reader"}
ROLE_TYPES = {"ValidatorAdapter", "ReaderAdapter", "ProducerAdapter", "RoleAdapter"}
#: getattr calls that remain, and why: pytest's items and marks, whose attributes depend on the item's kind.
ALLOWED_GETATTR = {"plugin/hooks.py": 6}


def _annotation(node: ast.expr | None) -> str:
    return ast.unparse(node) if node is not None else ""


def erased_seams(source: str) -> list[str]:
    """Adapter parameters and adapter fixtures' results typed with neither a role protocol nor anything
    more precise than ``Any``/``object``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for argument in [*node.args.args, *node.args.kwonlyargs]:
            if argument.arg in ADAPTER_NAMES and not ROLE_TYPES & set(_annotation(argument.annotation).replace(
                    "|", " ").split()):
                found.append(f"{node.name}({argument.arg}: {_annotation(argument.annotation) or 'unannotated'})")
        if node.name in ADAPTER_NAMES and not any(name in _annotation(node.returns) for name in ROLE_TYPES):
            found.append(f"{node.name} -> {_annotation(node.returns)}")
    return found


def getattr_calls(source: str) -> int:
    return sum(1 for node in ast.walk(ast.parse(source))
               if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr")


@pytest.mark.parametrize("module", SEAMS)
def test_no_seam_is_typed_any_or_object(module: str) -> None:
    assert erased_seams((SUITE / module).read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("module", SEAMS)
def test_no_getattr_at_the_seams(module: str) -> None:
    assert getattr_calls((SUITE / module).read_text(encoding="utf-8")) <= ALLOWED_GETATTR.get(module, 0)


def test_the_counts_see_an_erased_seam() -> None:
    """The counters find what they look for (so the tests above can fail)."""
    erased = "def run(case, adapter: Any) -> None: ...\ndef asr_reader(request) -> Iterator[object]: ...\n"
    assert erased_seams(erased) == ["run(adapter: Any)", "asr_reader -> Iterator[object]"]
    assert erased_seams("def run(case, adapter: ValidatorAdapter) -> None: ...\n") == []
    assert getattr_calls("x = getattr(adapter, 'implementation', None)\n") == 1


def test_the_handshake_is_read_through_its_protocol() -> None:
    class Started:
        name, implementation_version = "acme", "1.0"

    class Persistent:
        implementation = Started()

        def validate(self, stream: Path) -> object: ...
        def read(self, stream: Path) -> object: ...
        def close(self) -> None: ...

    class OneShot:
        def validate(self, stream: Path) -> object: ...
        def close(self) -> None: ...

    assert isinstance(Persistent(), Announcing) and isinstance(Persistent(), ValidatorAdapter)
    assert isinstance(Persistent(), ReaderAdapter) and not isinstance(OneShot(), Announcing)
    assert announced(Persistent()) is Persistent.implementation  # type: ignore[arg-type]
    assert announced(OneShot()) is None  # type: ignore[arg-type]


def test_judgements_carry_their_status_as_a_type_and_record_its_word() -> None:
    """A judge's decision is a ``Status`` member (compared by identity in the judges); the record, which
    crosses to the controller and into the report, holds its word."""
    from asr_conformance import CORPUS_DIR
    from asr_conformance.harness.adapters.answers import Outcome, ReadAnswer, Status, Verdict
    from asr_conformance.harness.judging.reader import judge_read
    from asr_conformance.harness.judging.validator import judge_answer, run_validator_case
    from asr_conformance.vocabulary.cases import iter_cases

    assert judge_answer("valid", Verdict(Outcome.ACCEPT), frozenset(), None).status is Status.PASSED
    assert judge_answer("invalid", Verdict(Outcome.ACCEPT), frozenset(), None).status is Status.FAILED
    assert judge_answer("implementation-defined", Verdict(Outcome.REJECT), frozenset(), None).status is Status.REPORTED
    reader_case = next(iter(iter_cases(CORPUS_DIR, role="reader")))
    assert judge_read(reader_case, ReadAnswer(Outcome.CRASH)).status is Status.FAILED
    case = next(c for c in iter_cases(CORPUS_DIR, role="validator") if c.verdict == "valid")
    recorded: dict[str, object] = {}

    class Accepts:
        def validate(self, stream: Path) -> Verdict:
            return Verdict(Outcome.ACCEPT)

        def close(self) -> None: ...

    run_validator_case(case, Accepts(), recorded.update)
    assert type(recorded["status"]) is str and recorded["status"] == "passed"
