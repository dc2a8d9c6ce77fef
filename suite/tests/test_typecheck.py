""".ci/typecheck.py checks the package as it installs: a name that crosses the package-dir mapping
keeps its type (checked from the source tree it would be Any), and mypy's findings name the
repository's files, not the temporary tree the script assembles."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = """\
[tool.setuptools]
package-dir = { "pkg" = "core", "pkg.extra" = "extra" }
packages = ["pkg", "pkg.sub", "pkg.extra"]

[tool.mypy]
strict = true
"""


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("typecheck", ROOT / ".ci" / "typecheck.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _project(tmp_path: Path, use: str) -> Path:
    """Two folders joined under ``pkg`` by package-dir; ``extra`` imports a function from ``core``."""
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    for folder in ("core", "core/sub", "extra"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "__init__.py").write_text("")
    (tmp_path / "core" / "sub" / "numbers.py").write_text("def double(n: int) -> int:\n    return 2 * n\n")
    (tmp_path / "core" / "tests").mkdir()
    (tmp_path / "core" / "tests" / "test_x.py").write_text("x: int = 'not installed, not checked'\n")
    (tmp_path / "extra" / "use.py").write_text(f"from pkg.sub.numbers import double\n\n\n{use}\n")
    return tmp_path


def _run(project: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(ROOT / ".ci" / "typecheck.py"), "--root", str(project)]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)


def test_source_folders_follow_the_longest_mapped_prefix() -> None:
    script = _script()
    mapping = {"pkg": "core", "pkg.extra": "extra"}
    assert script.source_folder("pkg.sub", mapping) == Path("core/sub")
    assert script.source_folder("pkg.extra.deep", mapping) == Path("extra/deep")
    assert script.source_folder("other", {}) == Path("other")


def test_a_cross_folder_type_error_is_found_and_named_by_repository_path(tmp_path: Path) -> None:
    done = _run(_project(tmp_path, 'def wrong() -> str:\n    return double(2)'))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "extra/use.py:5: error: Incompatible return value type" in done.stdout
    assert "typecheck-" not in done.stdout, "a path of the temporary tree leaked into the report"
    assert "test_x.py" not in done.stdout, "a folder that is not installed was checked"


def test_a_well_typed_cross_folder_use_passes(tmp_path: Path) -> None:
    done = _run(_project(tmp_path, 'def right() -> int:\n    return double(2)'))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success: no issues found in 5 source files" in done.stdout


@pytest.mark.parametrize("pyproject", ["", "[tool.setuptools]\npackages = ['missing']\n", "not toml ["])
def test_a_layout_it_cannot_follow_is_a_clear_error(tmp_path: Path, pyproject: str) -> None:
    (tmp_path / "pyproject.toml").write_text(pyproject)
    done = _run(tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith(f"typecheck: {tmp_path / 'pyproject.toml'}"), done.stderr
    assert "Traceback" not in done.stderr
