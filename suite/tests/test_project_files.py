"""The files a newcomer opens first say true things: the LICENSE is the one pyproject names, the
changelog knows the package's version, and the example CI workflow works as written (it checks out a
ref that exists, installs the sandbox and the fake clock, and calls only commands the suite installs)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from asr_conformance import __version__

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / "examples" / "ci" / "asr-conformance.yml"


def test_the_license_file_is_the_license_pyproject_names() -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["license"]["text"]
    assert declared == "Apache-2.0"
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text and "END OF TERMS AND CONDITIONS" in text


def test_the_changelog_has_the_package_version() -> None:
    headings = re.findall(r"^## \[([^\]]+)\]", (ROOT / "CHANGELOG.md").read_text(), re.MULTILINE)
    assert headings[0] == "Unreleased" and __version__ in headings


def test_the_ci_workflow_checks_out_a_ref_that_exists() -> None:
    """``main`` is the branch the project is developed on; a pinned commit is a full SHA. No tag exists to name."""
    refs = re.findall(r"^\s*ref:\s*(\S+)", WORKFLOW.read_text(), re.MULTILINE)
    assert refs and all(ref == "main" or re.fullmatch(r"[0-9a-f]{40}", ref) for ref in refs), refs


def test_the_ci_workflow_installs_bubblewrap_and_libfaketime() -> None:
    text = WORKFLOW.read_text()
    installs = re.findall(r"apt-get install -y (.+)", text)
    assert installs and {"bubblewrap", "libfaketime"} <= set(" ".join(installs).split())
    assert "apparmor_restrict_unprivileged_userns=0" in text  # bubblewrap's user namespaces on Ubuntu 24.04


def test_the_ci_workflow_runs_only_commands_the_suite_installs() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    commands = re.findall(r"^\s*(?:run: (?:>\s*)?|- )?(asr-[a-z-]+)\b", WORKFLOW.read_text(), re.MULTILINE)
    assert commands and set(commands) <= set(scripts), commands
