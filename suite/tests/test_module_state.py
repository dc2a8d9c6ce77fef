"""No module-level state of a run: what the harness, the plugin, the packs and the witnesses keep on a module
is a pure cache of facts or a per-process registry of the machine's resources, says so where it is defined,
and no test resets it by hand.

A run's choices live on its ``RunContext`` (``harness/run_context.py``); the state below stays on modules
because a signal handler reaches nothing else (the registries), or because it can never differ between
runs (the caches).  Read from the source with ``ast``, so that a new piece of module state fails here
until it is placed, and a test that clears one fails here too."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

SUITE = Path(__file__).resolve().parents[1]
TESTS = SUITE / "tests"
#: The sides a run sets things on (the brief's ``grep "^_[a-z_]* *[:=]"`` over them).
SIDES = ("harness", "plugin", "packs", "fidelity")
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
}


def module_state(source: str) -> dict[str, str]:
    """Each private lower-case name assigned at the top of a module, with the ``#:`` comment right above it."""
    lines = source.splitlines()
    found = {}
    for node in ast.parse(source).body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        for target in targets:
            if isinstance(target, ast.Name) and PRIVATE_STATE.fullmatch(target.id):
                above, row = [], node.lineno - 2
                while row >= 0 and lines[row].startswith("#:"):
                    above.insert(0, lines[row][2:].strip())
                    row -= 1
                found[target.id] = " ".join(above)
    return found


def all_state() -> dict[tuple[str, str], str]:
    return {(str(path.relative_to(SUITE)), name): said
            for side in SIDES for path in sorted((SUITE / side).rglob("*.py"))
            for name, said in module_state(path.read_text(encoding="utf-8")).items()}


def ours(tree: ast.Module) -> set[str]:
    """The local names a test binds to a module of ``SIDES``, or to something imported from one."""
    sides = tuple(f"asr_conformance.{side}" for side in SIDES)
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
    names = {name for _, name in KNOWN}
    assert resets((TESTS / path).read_text(encoding="utf-8"), names) == []


def test_the_checks_see_new_state_and_a_reset() -> None:
    """The checks above can fail: unplaced state is found with its comment, and each way of resetting it is."""
    source = "#: Kept per run.\n_seen: dict[str, int] = {}\nLIMIT = 3\n_cache = {}\n"
    assert module_state(source) == {"_seen": "Kept per run.", "_cache": ""}
    test = ("from asr_conformance.harness.isolation import policies\n"
            "from asr_conformance.harness.judging import produced as parsing\nimport other_library\n"
            'monkeypatch.setattr(guard, "_hung", {})\nboxes._made = []\nmounts._mounted.clear()\n'
            'policies.sandbox_mode.cache_clear()\nparsing.forget()\nmonkeypatch.setattr(sandbox, "problem", f)\n'
            "other_library.probe.cache_clear()\n")
    assert resets(test, {"_hung", "_made", "_mounted"}) == sorted([
        "monkeypatch.setattr(guard, '_hung', {})", "boxes._made", "mounts._mounted.clear()",
        "policies.sandbox_mode.cache_clear()", "parsing.forget()"])
