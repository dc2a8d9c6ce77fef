"""The seams between the plugin, the judges and the adapters carry the role protocols
(``harness/adapters/roles.py``), so that mypy --strict checks what crosses them: no adapter parameter or
adapter fixture typed ``Any`` or ``object``, nothing one of the three layers takes from another typed
``Any`` or ``object`` (in a signature or a field), and no ``getattr`` reading an object of our own there.
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
ALLOWED_GETATTR = {"plugin/hooks.py": 5}
#: The layers whose seams are counted (folder -> layer): what one takes from another crosses a seam.
SEAM_LAYERS = {"plugin": "plugin", "harness/judging": "judging", "harness/adapters": "adapters"}
#: Receivers of getattr that are pytest's own objects (an item's callspec, a mark made from a rule ID, the
#: terminal writer, the options of other plugins): pytest's seam, not one between our layers.
PYTEST_RECEIVERS = {"pytest.mark", "item", "config", "config.option", "reporter"}


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


def seam_modules() -> dict[str, tuple[str, Path]]:
    """Every module of the seam layers, by dotted name: (its layer, its path)."""
    found = {}
    for folder, layer in SEAM_LAYERS.items():
        for path in sorted((SUITE / folder).glob("*.py")):
            found["asr_conformance." + ".".join(path.relative_to(SUITE).with_suffix("").parts)] = (layer, path)
    return found


def crossing_names(modules: dict[str, tuple[str, Path]]) -> dict[str, set[str]]:
    """What each seam module gives a module of another seam layer (the names imported from it there)."""
    given: dict[str, set[str]] = {}
    for layer, path in modules.values():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module in modules and modules[node.module][0] != layer:
                given.setdefault(node.module, set()).update(alias.name for alias in node.names)
    return given


def _erased(annotation: ast.expr | None) -> bool:
    return annotation is not None and any(
        isinstance(node, ast.Name) and node.id in ("Any", "object") or isinstance(node, ast.Attribute) and node.attr == "Any"
        for node in ast.walk(annotation))


def erased_crossings(source: str, names: set[str]) -> list[str]:
    """``Any`` or ``object`` in the signatures of the given functions, and in the public methods' signatures and
    the fields of the given classes."""
    found = []
    for node in ast.parse(source).body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or node.name not in names:
            continue
        functions = [node] if not isinstance(node, ast.ClassDef) else [
            f for f in node.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and not f.name.startswith("_")]
        for function in functions:
            arguments = [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs,
                         *filter(None, [function.args.vararg, function.args.kwarg])]
            found += [f"{node.name}.{function.name}({a.arg}: {ast.unparse(a.annotation)})".replace(
                f"{node.name}.{node.name}(", f"{node.name}(") for a in arguments if a.annotation and _erased(a.annotation)]
            if _erased(function.returns):
                found.append(f"{node.name}.{function.name} -> {_annotation(function.returns)}".replace(
                    f"{node.name}.{node.name} ", f"{node.name} "))
        if isinstance(node, ast.ClassDef):
            found += [f"{node.name}.{ast.unparse(f.target)}: {ast.unparse(f.annotation)}" for f in node.body
                      if isinstance(f, ast.AnnAssign) and _erased(f.annotation)]
    return found


def own_getattrs(source: str) -> list[str]:
    """getattr calls whose receiver is not one of pytest's objects (``PYTEST_RECEIVERS``)."""
    return [ast.unparse(node) for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
            and node.args and ast.unparse(node.args[0]) not in PYTEST_RECEIVERS]


def test_nothing_crossing_a_seam_is_typed_any_or_object() -> None:
    modules = seam_modules()
    given = crossing_names(modules)
    assert given, "no seam found: the layers' folders moved?"
    found = {module: erased for module, names in sorted(given.items())
             if (erased := erased_crossings(modules[module][1].read_text(encoding="utf-8"), names))}
    assert found == {}


@pytest.mark.parametrize("module", sorted(seam_modules()))
def test_no_getattr_reads_our_own_objects_at_the_seams(module: str) -> None:
    assert own_getattrs(seam_modules()[module][1].read_text(encoding="utf-8")) == []


def test_the_seam_counts_see_an_erased_crossing_and_a_getattr() -> None:
    """The counters above find what they look for (so those tests can fail)."""
    source = ("def judge(answer: Any) -> object: ...\ndef kept(x: Any) -> None: ...\n"
              "class Verdict:\n    view: object | None = None\n    def explain(self, width: int) -> dict[str, Any]: ...\n")
    assert erased_crossings(source, {"judge", "Verdict"}) == [
        "judge(answer: Any)", "judge -> object", "Verdict.explain -> dict[str, Any]", "Verdict.view: object | None"]
    assert erased_crossings("def judge(answer: ReadAnswer) -> Judgement: ...\n", {"judge"}) == []
    assert own_getattrs("getattr(edit, 'source', None)\ngetattr(item, 'callspec', None)\n") == [
        "getattr(edit, 'source', None)"]


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
