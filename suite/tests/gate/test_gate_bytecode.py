"""The judge is what Python loads: a bytecode cache planted beside the suite's source runs in its
place, so a run checks every cache against what its source compiles to, removes the ones that differ
(and certifies nothing), and hashes the caches with the sources."""

from __future__ import annotations

import importlib.util
import marshal
import os
import sys
from pathlib import Path

import pytest

from asr_conformance.gate import integrity
from asr_conformance.gate.integrity import changed, package_code, prepare_bytecode, snapshot


def _package(tmp_path: Path) -> Path:
    root = tmp_path / "pkg"
    (root / "reports").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "reports" / "markdown.py").write_text("def verdict():\n    return 'DOES NOT CONFORM'\n")
    (root / "tests" / "test_x.py").write_text("def test(): pass\n")
    return root


def _plant(source: Path, text: str) -> Path:
    """A cache Python accepts for ``source`` (its mtime and size in the header) holding other code."""
    cache = Path(importlib.util.cache_from_source(str(source)))
    cache.parent.mkdir(exist_ok=True)
    info = os.stat(source)
    header = importlib.util.MAGIC_NUMBER + (0).to_bytes(4, "little") + \
        (int(info.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little") + (info.st_size & 0xFFFFFFFF).to_bytes(4, "little")
    cache.write_bytes(header + marshal.dumps(compile(text, str(source), "exec")))
    return cache


def test_a_planted_cache_is_found_removed_and_python_loads_the_source_again(tmp_path: Path) -> None:
    root = _package(tmp_path)
    source = root / "reports" / "markdown.py"
    assert prepare_bytecode([root]) == [], "the caches it writes itself match their sources"
    planted = _plant(source, "def verdict():\n    return 'CONFORMS'\n")
    sys.path.insert(0, str(root))
    try:
        spec = importlib.util.spec_from_file_location("planted_markdown", source)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        assert module.verdict() == "CONFORMS", "the plant works: Python trusts the cache's header"
    finally:
        sys.path.remove(str(root))
    assert prepare_bytecode([root]) == [str(planted)]
    assert prepare_bytecode([root]) == [], "removed, and written anew from the source"
    fresh = marshal.loads(planted.read_bytes()[16:])
    assert "DOES NOT CONFORM" in fresh.co_consts[0].co_consts


def test_extension_and_sourceless_modules_in_the_package_are_planted_code(tmp_path: Path) -> None:
    root = _package(tmp_path)
    extension = root / "reports" / f"markdown{importlib.machinery.EXTENSION_SUFFIXES[0]}"
    extension.write_bytes(b"\x7fELF")
    sourceless = root / "reports" / "verdict.pyc"
    sourceless.write_bytes(b"")
    assert sorted(prepare_bytecode([root])) == sorted([str(extension), str(sourceless)])
    assert not extension.exists() and not sourceless.exists()


def test_pytest_rewritten_caches_are_removed_and_left_out_of_the_snapshot(tmp_path: Path) -> None:
    root = _package(tmp_path)
    rewritten = root / "reports" / "__pycache__" / "markdown.cpython-311-pytest-8.3.0.pyc"
    rewritten.parent.mkdir()
    rewritten.write_bytes(b"anything")
    prepare_bytecode([root])
    assert not rewritten.exists()
    assert not package_code("reports/__pycache__/markdown.cpython-311-pytest-8.3.0.pyc")


def test_the_snapshot_covers_caches_so_a_cache_written_during_the_run_is_a_change(tmp_path: Path) -> None:
    root = _package(tmp_path)
    prepare_bytecode([root])
    before = snapshot(root, package_code)
    assert before.count(".pyc") == 1 and not any(name.startswith("tests/") for name in before.entries)
    planted = _plant(root / "reports" / "markdown.py", "X = 1\n")
    assert changed(before, snapshot(root, package_code)) == [planted.relative_to(root).as_posix()]


def test_a_cache_once_found_equal_to_its_source_is_not_compiled_again_but_a_new_one_is(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _package(tmp_path)
    assert prepare_bytecode([root]) == []
    assert (root / "__pycache__" / integrity.VERIFIED_NAME).is_file()
    compiled: list[str] = []
    real_compile = compile

    def counting(source: bytes, name: str, *args: object, **kwargs: object) -> object:
        compiled.append(name)
        return real_compile(source, name, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(integrity, "compile", counting, raising=False)
    assert prepare_bytecode([root]) == []
    assert compiled == [], "the pair (source, cache) was verified by the first run"
    planted = _plant(root / "reports" / "markdown.py", "def verdict():\n    return 'CONFORMS'\n")
    assert prepare_bytecode([root]) == [str(planted)], "a cache never seen is compiled and compared"
    assert compiled == [str(root / "reports" / "markdown.py")]
