"""The package's sides import one way only, and no module imports itself back through others.

    vocabulary  <-  reference  <-  fidelity  <-  packs  <-  harness  <-  plugin
    vocabulary  <-  generators                    harness  <-  (generators)
    vocabulary  <-  gate  <-  reports             plugin   <-  gate, reports
    conformance (the suite's tests)  <-  harness, gate, ...; never the plugin

Inside the harness, its subpackages are layers of their own (``harness/__init__.py``):

    isolation  <-  adapters  <-  judging  <-  fuzzing  <-  run_context

Read from the source with ``ast``, so the check needs nothing installed beyond the package.
Written here rather than as import-linter contracts: those find a package's modules under one
folder, where the package-dir mapping spreads them over three, and they do not check that imports
are absolute and name the package rather than a folder (the last two tests below).
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

import asr_conformance
import asr_conformance.generators
import asr_conformance.reports

PACKAGE = "asr_conformance"
#: Each side and the sides it may import (itself and the package root are always allowed).
ALLOWED: dict[str, frozenset[str]] = {
    "vocabulary": frozenset(),
    "reference": frozenset({"vocabulary"}),
    "generators": frozenset({"vocabulary"}),
    "fidelity": frozenset({"vocabulary", "reference"}),
    "packs": frozenset({"vocabulary", "reference", "fidelity", "generators"}),
    "gate": frozenset({"vocabulary"}),
    "reports": frozenset({"vocabulary", "gate"}),
    "harness": frozenset({"vocabulary", "reference", "fidelity", "generators", "packs"}),
    "plugin": frozenset({"vocabulary", "reference", "fidelity", "generators", "packs", "harness", "gate", "reports"}),
    "conformance": frozenset({"vocabulary", "reference", "fidelity", "generators", "packs", "harness", "gate"}),
}
#: The harness's layers, lowest first: a module imports only its own layer's and lower layers' modules
#: (a subpackage of the harness, or a module at its top: ``run_context`` ties them together).
HARNESS_LAYERS = ("isolation", "adapters", "judging", "fuzzing", "run_context")
#: Folders that hold the project's own tests and benchmarks, not package code.
NOT_PACKAGE_CODE = {"tests", "benchmarks"}


def _roots() -> dict[str, Path]:
    """Each top-level package folder by its dotted name (the package-dir mapping joins three folders)."""
    return {
        PACKAGE: Path(asr_conformance.__file__).parent,
        f"{PACKAGE}.generators": Path(asr_conformance.generators.__file__).parent,
        f"{PACKAGE}.reports": Path(asr_conformance.reports.__file__).parent,
    }


@cache
def modules() -> dict[str, Path]:
    """Every module of the package by dotted name."""
    found: dict[str, Path] = {}
    for dotted, root in _roots().items():
        for path in root.rglob("*.py"):
            parts = path.relative_to(root).with_suffix("").parts
            if parts and parts[0] in NOT_PACKAGE_CODE and dotted == PACKAGE:
                continue
            if parts and parts[-1] == "__init__":
                parts = parts[:-1]
            name = ".".join((dotted, *parts))
            if dotted == PACKAGE and parts and parts[0] in ("generators", "reports"):
                continue
            found[name] = path
    return found


def side_of(module: str) -> str | None:
    """The side a module belongs to (``harness`` for ``asr_conformance.harness.adapters.targets``), or None for the root."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def imports_of(module: str) -> set[str]:
    """The package modules a module imports, at any depth of its code (function-level imports count too)."""
    path = modules()[module]
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(module, is_package, node.level, node.module)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in modules())
    return {name for name in found if name in modules() and name != module}


def _absolute(module: str, is_package: bool, level: int, name: str | None) -> str:
    if level == 0:
        return name or ""
    parts = module.split(".")
    if not is_package:
        parts = parts[:-1]
    parts = parts[: len(parts) - (level - 1)]
    return ".".join(parts + ([name] if name else []))


def relative_imports(module: str) -> list[int]:
    path = modules()[module]
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return [node.lineno for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.level > 0]


def test_every_side_is_known() -> None:
    sides = {side_of(m) for m in modules()} - {None}
    assert sides <= set(ALLOWED), f"sides without a layering rule: {sorted(sides - set(ALLOWED))}"


@pytest.mark.parametrize("module", sorted(modules()))
def test_imports_point_one_way(module: str) -> None:
    side = side_of(module)
    if side is None:
        assert not imports_of(module), f"the package root must import nothing of the package: {imports_of(module)}"
        return
    wrong = sorted(m for m in imports_of(module) if side_of(m) not in ALLOWED[side] | {side, None})
    assert not wrong, f"{module} ({side}) imports {wrong}; {side} may import only {sorted(ALLOWED[side])}"


@pytest.mark.parametrize("module", sorted(modules()))
def test_imports_are_absolute(module: str) -> None:
    """Relative imports name folders that do not exist on disk under the package-dir mapping."""
    assert not relative_imports(module), f"{module}: relative import on line(s) {relative_imports(module)}"


def harness_layer(module: str) -> str | None:
    """The harness layer of a module (``adapters`` for ``asr_conformance.harness.adapters.targets``);
    None for the harness package itself and for modules of other sides."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "harness" else None


def back_imports(graph: dict[str, set[str]]) -> list[str]:
    """Every import of a harness module from a higher harness layer, as ``module -> imported``."""
    rank = {layer: index for index, layer in enumerate(HARNESS_LAYERS)}
    wrong = []
    for module, imported in sorted(graph.items()):
        layer = harness_layer(module)
        if layer is None:
            continue
        for name in sorted(imported):
            other = harness_layer(name)
            if other is not None and rank[other] > rank[layer]:
                wrong.append(f"{module} ({layer}) -> {name} ({other})")
    return wrong


def test_every_harness_module_is_in_a_layer() -> None:
    layers = {harness_layer(m) for m in modules()} - {None}
    assert layers <= set(HARNESS_LAYERS), f"harness modules outside a layer: {sorted(layers - set(HARNESS_LAYERS))}"


def test_harness_layers_import_downwards_only() -> None:
    graph = {m: imports_of(m) for m in modules() if side_of(m) == "harness"}
    wrong = back_imports(graph)
    assert not wrong, ("a harness layer imports a higher one (order: " + " <- ".join(HARNESS_LAYERS) + "): "
                       + "; ".join(wrong))


def test_no_import_cycles() -> None:
    graph = {m: imports_of(m) for m in modules()}
    cycles = _cycles(graph)
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected component of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_check_sees_a_cycle_and_a_wrong_import() -> None:
    """The checks above must be able to fail."""
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": set()}) == [["a", "b"]]
    assert side_of(f"{PACKAGE}.harness.adapters.targets") == "harness"
    assert "plugin" not in ALLOWED["harness"]
    adapters, isolation = f"{PACKAGE}.harness.adapters.targets", f"{PACKAGE}.harness.isolation.processes"
    assert back_imports({isolation: {adapters}, adapters: {isolation}}) == [
        f"{isolation} (isolation) -> {adapters} (adapters)"]


@pytest.mark.parametrize("module", sorted(modules()))
def test_imports_name_the_package_not_a_folder(module: str) -> None:
    """``from suite.x import`` loads a second copy of a module (a tool that names imports by
    folder writes it): classes then differ from the package's own and isinstance fails."""
    path = modules()[module]
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    folders = ("suite", "generators", "reports", "cases")
    wrong = [node.lineno for node in ast.walk(tree)
             if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in folders
             or isinstance(node, ast.Import) and any(a.name.split(".")[0] in folders for a in node.names)]
    assert not wrong, f"{module}: imports a folder instead of asr_conformance on line(s) {wrong}"
