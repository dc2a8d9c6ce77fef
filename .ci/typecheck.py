"""Type-check the package as it installs, with mypy --strict.

pyproject's package-dir mapping joins several folders (suite/, generators/, reports/) under the one
name ``asr_conformance``. mypy reads the source tree, where those folders are unrelated, so every
name that crosses a folder would be Any. This script lays the package out as a tree of symlinks in a
temporary folder, exactly as setuptools assembles it, runs mypy on that tree with the options in
pyproject's [tool.mypy], and writes mypy's report with each path turned back into the repository's
own path. Its exit code is mypy's.

    python .ci/typecheck.py [--root DIR] [mypy options...]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

#: The files of a package that mypy reads; data files stay out of the tree.
TYPED_SUFFIXES = (".py", ".pyi")
TYPED_MARKER = "py.typed"
#: The start of a mypy report line that names a file: "path.py:12: error: ...".
REPORTED_PATH = re.compile(r"^(?P<path>[^:\s]+\.pyi?)(?P<rest>:.*)$")


class LayoutError(Exception):
    """pyproject does not say how the package is assembled (bad input, reported without a traceback)."""


def package_layout(pyproject: Path) -> tuple[list[str], dict[str, str]]:
    """The packages setuptools installs and its package-dir mapping, read from pyproject."""
    try:
        settings = tomllib.loads(pyproject.read_text(encoding="utf-8"))["tool"]["setuptools"]
        packages = list(settings["packages"])
        mapping = dict(settings.get("package-dir", {}))
    except FileNotFoundError as error:
        raise LayoutError(f"{pyproject}: not found") from error
    except (tomllib.TOMLDecodeError, KeyError, TypeError) as error:
        raise LayoutError(f"{pyproject}: [tool.setuptools] needs 'packages' (and may have 'package-dir'): {error}") from error
    return packages, mapping


def source_folder(package: str, mapping: dict[str, str]) -> Path:
    """The folder a dotted package comes from: the longest mapped prefix, then the rest as folders."""
    parts = package.split(".")
    for cut in range(len(parts), 0, -1):
        prefix = ".".join(parts[:cut])
        if prefix in mapping:
            return Path(mapping[prefix], *parts[cut:])
    base = mapping.get("", "")
    return Path(base, *parts)


def assemble(root: Path, tree: Path, packages: list[str], mapping: dict[str, str]) -> dict[Path, Path]:
    """Link each package's own modules into ``tree`` under its dotted path, as a wheel would hold them.

    Only a package's direct files are linked: its subfolders are packages of their own (listed in
    ``packages``) or not part of the install (the project's tests). Returns each linked path,
    relative to ``tree``, with the repository path (relative to ``root``) it stands for.
    """
    linked: dict[Path, Path] = {}
    for package in packages:
        source = source_folder(package, mapping)
        if not (root / source).is_dir():
            raise LayoutError(f"{root / 'pyproject.toml'}: package {package!r} maps to {source}/, which is not a folder")
        target = Path(*package.split("."))
        (tree / target).mkdir(parents=True, exist_ok=True)
        for path in sorted((root / source).iterdir()):
            if path.is_file() and (path.suffix in TYPED_SUFFIXES or path.name == TYPED_MARKER):
                (tree / target / path.name).symlink_to(path.resolve())
                linked[target / path.name] = source / path.name
    return linked


def to_repository_paths(report: str, linked: dict[Path, Path]) -> str:
    """mypy's report with every path inside the assembled tree replaced by the repository's path."""
    by_name = {str(tree_path): str(repo_path) for tree_path, repo_path in linked.items()}

    def one(line: str) -> str:
        match = REPORTED_PATH.match(line)
        if match and match["path"] in by_name:
            return by_name[match["path"]] + match["rest"]
        return line

    return "\n".join(one(line) for line in report.split("\n"))


def top_level(packages: list[str]) -> list[str]:
    """The packages that are not inside another listed package: what mypy is told to check."""
    return sorted({package.split(".")[0] for package in packages})


def main(argv: list[str] | None = None) -> int:
    """Assemble, check, and report in repository paths; the exit code is mypy's (2 for bad input)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent, help="the project's folder (holds pyproject.toml)")
    options, mypy_options = parser.parse_known_args(argv)
    root: Path = options.root.resolve()
    pyproject = root / "pyproject.toml"
    try:
        packages, mapping = package_layout(pyproject)
        with tempfile.TemporaryDirectory(prefix="typecheck-") as folder:
            tree = Path(folder)
            linked = assemble(root, tree, packages, mapping)
            command = [sys.executable, "-m", "mypy", "--config-file", str(pyproject), "--cache-dir", str(root / ".mypy_cache")]
            for package in top_level(packages):
                command += ["-p", package]
            done = subprocess.run(command + mypy_options, cwd=tree, capture_output=True, text=True, check=False)
    except LayoutError as error:
        print(f"typecheck: {error}", file=sys.stderr)
        return 2
    sys.stdout.write(to_repository_paths(done.stdout, linked))
    sys.stderr.write(to_repository_paths(done.stderr, linked))
    print(f"typecheck: {len(linked)} files of {', '.join(top_level(packages))} assembled as installed", file=sys.stderr)
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
