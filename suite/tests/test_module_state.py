"""No module-level state of a run: what the package keeps on a module (the harness, the plugin, the packs, the
witnesses, the vocabulary, the gate, the reference) is a pure cache of facts or a per-process registry, says so
where it is defined, and no test resets it by hand; no function of the generators writes on its module but the
few named here.

A run's choices live on its ``RunContext`` (``harness/run_context.py``) and reach the generators as values
(the long shapes' pool seed and whether they are drawn at all: arguments of the strategies); the state below
stays on modules because a signal handler reaches nothing else (the registries), or because it can never
differ between runs (the caches).  Read from the source with ``ast``, so that a new piece of module state
fails here until it is placed, and a test that clears one fails here too.

State is found two ways: a private lower-case name assigned at a module's top, and any module-level name, of any
spelling, that a function of the module writes: a ``global`` statement, an assignment to an item or attribute of
the name, or a mutating call on it (``append``, ``clear``, ``update``...). The generators' modules hold many
private constants (strategies built at import), so there the check is on what functions write alone."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import asr_conformance.generators

SUITE = Path(__file__).resolve().parents[1]
TESTS = SUITE / "tests"
#: The sides a run sets things on (the brief's ``grep "^_[a-z_]* *[:=]"`` over them).
SIDES = ("harness", "plugin", "packs", "fidelity")
#: Every folder of the package's own modules whose state is inventoried here.
FOLDERS = (*SIDES, "vocabulary", "gate", "reference", "conformance")
PRIVATE_STATE = re.compile(r"_[a-z][a-z_]*")
#: Every piece of module state, by module and name, and what it is.
CACHE, REGISTRY = "pure cache", "per-process"
KNOWN = {
    ("harness/isolation/boxes.py", "_root_lock"): REGISTRY,
    ("harness/isolation/boxes.py", "_roots"): REGISTRY,
    ("harness/isolation/boxes.py", "_spent"): REGISTRY,
    ("harness/isolation/boxes.py", "_remover"): REGISTRY,
    ("harness/isolation/boxes.py", "_made"): REGISTRY,
    ("harness/isolation/live_processes.py", "_live"): REGISTRY,
    ("harness/isolation/live_processes.py", "_live_tokens"): REGISTRY,
    ("harness/isolation/live_processes.py", "_live_lock"): REGISTRY,
    ("harness/isolation/mounts.py", "_lock"): REGISTRY,
    ("harness/isolation/mounts.py", "_mounted"): REGISTRY,
    ("harness/isolation/signal_handlers.py", "_handlers_installed"): REGISTRY,
    ("harness/isolation/sweeping.py", "_subreaper"): REGISTRY,
    ("packs/guard.py", "_hung"): REGISTRY,
    ("harness/isolation/sandbox.py", "_root_only"): CACHE,
    ("harness/isolation/visibility.py", "_walked"): CACHE,
    ("fidelity/disguise_text.py", "_last"): CACHE,
    ("vocabulary/redaction.py", "_lock"): REGISTRY,
    ("vocabulary/redaction.py", "_names"): REGISTRY,
    ("vocabulary/schemas.py", "_VALIDATORS"): CACHE,
    ("reference/checks/shapes.py", "_HOURS"): CACHE,
}


#: The generators' folder (the package-dir mapping puts ``asr_conformance.generators`` beside the suite).
GENERATORS = Path(asr_conformance.generators.__file__).resolve().parent
#: What a function of the generators may write on its module, by module and name, and why: registries the
#: modules fill while they load, and one hand-off inside a single example.
GENERATOR_WRITES = {
    ("damage.py", "DAMAGES"): "registry filled at import (each damage kind's @damage decorator)",
    ("mutators.py", "MUTATORS"): "registry filled at import (each mutator's @mutator decorator)",
    ("mutators.py", "MODES"): "registry filled at import (each page module's modes() calls)",
    ("mutators.py", "_DRAWN"): "the mode a mutator's pick drew, taken by drawn_mode in the same example (forgotten by "
                               "forget_drawn before each call through changes.mutate)",
}
#: Methods that change a list, dict or set in place.
MUTATING = frozenset({"append", "extend", "insert", "clear", "update", "pop", "popitem", "add", "remove", "discard",
                      "setdefault"})


def module_state(source: str) -> dict[str, str]:
    """Each private lower-case name assigned at the top of a module, and each module-level name a function of the
    module writes (``function_writes``), with the ``#:`` comment right above its assignment."""
    lines = source.splitlines()
    written = set(function_writes(source))
    found = {}
    for node in ast.parse(source).body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        for target in targets:
            if isinstance(target, ast.Name) and (PRIVATE_STATE.fullmatch(target.id) or target.id in written):
                above, row = [], node.lineno - 2
                while row >= 0 and lines[row].startswith("#:"):
                    above.insert(0, lines[row][2:].strip())
                    row -= 1
                found[target.id] = " ".join(above)
    return found


def all_state() -> dict[tuple[str, str], str]:
    return {(str(path.relative_to(SUITE)), name): said
            for side in FOLDERS for path in sorted((SUITE / side).rglob("*.py"))
            for name, said in module_state(path.read_text(encoding="utf-8")).items()}


def _module_names(tree: ast.Module) -> set[str]:
    """The names a module binds at its top: assigned, or imported."""
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(n.id for target in targets for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return names


def _local_names(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """The names a function binds itself (parameters, assignments, inner definitions and imports)."""
    arguments = function.args
    names = {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]}
    names |= {a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None}
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not function:
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return names


def _held(node: ast.expr) -> str:
    """The name an item or attribute chain starts from (``_seed`` of ``_seed[0]``), or ""."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else ""


def function_writes(source: str) -> dict[str, list[str]]:
    """Each module-level name a function of the module writes (by ``global``, an item or attribute assigned or
    deleted, a mutating method or ``setattr``), with what does it; a function's own names of the same spelling
    are not the module's."""
    tree = ast.parse(source)
    module = _module_names(tree)
    found: dict[str, list[str]] = {}
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        declared = {name for node in ast.walk(function) if isinstance(node, ast.Global) for name in node.names}
        shared = (module - _local_names(function)) | declared
        for name in declared:
            found.setdefault(name, []).append(f"{function.name}: global {name}")
        for node in ast.walk(function):
            written: list[ast.expr] = []
            if isinstance(node, (ast.Assign, ast.Delete)):
                written = node.targets
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                written = [node.target]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATING:
                written = [node.func.value]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr" and node.args:
                written = [node.args[0]]
            for target in written:
                chained = isinstance(target, (ast.Attribute, ast.Subscript)) or isinstance(node, ast.Call)
                if chained and _held(target) in shared:
                    found.setdefault(_held(target), []).append(f"{function.name}: {ast.unparse(node).splitlines()[0]}")
    return found


def generator_writes() -> dict[tuple[str, str], list[str]]:
    return {(path.relative_to(GENERATORS).as_posix(), name): how
            for path in sorted(GENERATORS.rglob("*.py"))
            for name, how in function_writes(path.read_text(encoding="utf-8")).items()}


def ours(tree: ast.Module) -> set[str]:
    """The local names a test binds to a module of ``SIDES`` or of the generators, or to something imported from one."""
    sides = tuple(f"asr_conformance.{side}" for side in (*SIDES, "generators"))
    bound = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(sides):
            bound.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            bound.update(alias.asname or alias.name for alias in node.names if alias.name.startswith(sides))
    return bound


def _root(node: ast.expr) -> str:
    while isinstance(node, (ast.Attribute, ast.Call)):
        node = node.value if isinstance(node, ast.Attribute) else node.func
    return node.id if isinstance(node, ast.Name) else ""


def resets(source: str, state_names: set[str]) -> list[str]:
    """What a test does to module state by hand: assigning or monkeypatching one of ``state_names``, clearing
    it, or clearing a cache of a module of ``SIDES`` (``cache_clear``, ``forget``)."""
    tree = ast.parse(source)
    bound = ours(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            function = node.func
            name = function.attr if isinstance(function, ast.Attribute) else function.id if isinstance(function, ast.Name) else ""
            if name == "setattr" and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) \
                    and node.args[1].value in state_names:
                found.append(ast.unparse(node))
            elif name in ("cache_clear", "forget", "forget_root_only") and _root(function) in bound:
                found.append(ast.unparse(node))
            elif name in ("clear", "pop", "update", "append") and isinstance(function, ast.Attribute) \
                    and isinstance(function.value, ast.Attribute) and function.value.attr in state_names:
                found.append(ast.unparse(node))
        elif isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found += [ast.unparse(t) for t in targets if isinstance(t, ast.Attribute) and t.attr in state_names]
    return sorted(found)


def test_every_piece_of_module_state_is_placed_and_says_what_it_is() -> None:
    found = all_state()
    assert set(found) == set(KNOWN), (
        f"new module state (place it on the run context, or say here and where it is defined why it is a pure "
        f"cache or per-process): {sorted(set(found) - set(KNOWN))}; gone: {sorted(set(KNOWN) - set(found))}")
    unsaid = {key: said for key, said in found.items() if KNOWN[key] not in said.lower()}
    assert not unsaid, f"its comment must say it is a {CACHE} or {REGISTRY}: {unsaid}"


@pytest.mark.parametrize("path", sorted(p.relative_to(TESTS).as_posix() for p in TESTS.rglob("*.py")
                                        if p.name != Path(__file__).name))
def test_no_test_resets_module_state_by_hand(path: str) -> None:
    names = {name for _, name in KNOWN} | {name for _, name in GENERATOR_WRITES}
    assert resets((TESTS / path).read_text(encoding="utf-8"), names) == []


def test_the_checks_see_new_state_and_a_reset() -> None:
    """The checks above can fail: unplaced state is found with its comment, and each way of resetting it is."""
    source = ("#: Kept per run.\n_seen: dict[str, int] = {}\nLIMIT = 3\n_cache = {}\n#: Filled by a run.\n"
              "_PROBLEMS: list[str] = []\nTABLE = {'a': 1}\ndef note(problem):\n    _PROBLEMS.append(problem)\n")
    assert module_state(source) == {"_seen": "Kept per run.", "_cache": "", "_PROBLEMS": "Filled by a run."}
    test = ("from asr_conformance.harness.isolation import policies\n"
            "from asr_conformance.harness.judging import produced as parsing\nimport other_library\n"
            'monkeypatch.setattr(guard, "_hung", {})\nboxes._made = []\nmounts._mounted.clear()\n'
            'policies.sandbox_mode.cache_clear()\nparsing.forget()\nmonkeypatch.setattr(sandbox, "problem", f)\n'
            "other_library.probe.cache_clear()\n")
    assert resets(test, {"_hung", "_made", "_mounted"}) == sorted([
        "monkeypatch.setattr(guard, '_hung', {})", "boxes._made", "mounts._mounted.clear()",
        "policies.sandbox_mode.cache_clear()", "parsing.forget()"])


def test_no_function_of_the_generators_sets_module_state() -> None:
    """A run's choices reach the generators as arguments (the pool seed, whether long shapes are drawn): a
    function that sets a module's value again (a seed kept for the strategies to read, a switch) fails here."""
    found = generator_writes()
    assert set(found) == set(GENERATOR_WRITES), (
        f"a function of the generators writes on its module (pass it as an argument, or say here why it is a "
        f"registry filled at import): {({key: how for key, how in found.items() if key not in GENERATOR_WRITES})}; "
        f"no longer written: {sorted(set(GENERATOR_WRITES) - set(found))}")


def test_the_write_check_sees_a_run_setting_module_state() -> None:
    """The check above can fail: a seed kept for the strategies and a switch (as the filler's pool seed and the
    long sessions' switch once were), a ``global``, a mutating call, ``setattr`` and another module's value set
    from a function are found; a function's own names, a closure's ``nonlocal`` and writes at import are not."""
    source = (
        "import random\nfrom asr_conformance.generators import long_streams\n"
        "_seed: list[int] = [0]\n_enabled = [True]\n_count = 0\n_seen: set[str] = set()\nTABLE = {}\nTABLE['a'] = 1\n"
        "def seed_pool(seed):\n    _seed[0] = seed\n"
        "def enable(on: bool) -> None:\n    _enabled[0] = on\n"
        "def counted():\n    global _count\n    _count += 1\n"
        "def remember(name):\n    _seen.add(name)\n    setattr(random, 'x', 1)\n"
        "def baseline():\n    long_streams.long_shapes = None\n"
        "def own(_seed):\n    _seed[0] = 1\n    TABLE = {}\n    TABLE['b'] = 2\n"
        "def outer():\n    total = 0\n    def inner():\n        nonlocal total\n        total += 1\n    inner()\n"
    )
    assert function_writes(source) == {
        "_seed": ["seed_pool: _seed[0] = seed"], "_enabled": ["enable: _enabled[0] = on"],
        "_count": ["counted: global _count"], "_seen": ["remember: _seen.add(name)"],
        "random": ["remember: setattr(random, 'x', 1)"], "long_streams": ["baseline: long_streams.long_shapes = None"]}
