"""Manifests: relative paths, placeholders, exit-code mapping, clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from asr_conformance.harness.adapters.answers import Outcome
from asr_conformance.harness.adapters.manifest import ManifestError, load_manifest
from asr_conformance.harness.adapters.oneshot import OneShotValidator


def write(folder: Path, text: str) -> Path:
    path = folder / "impl.toml"
    path.write_text(text)
    return path


def test_relative_program_and_folder_are_the_manifests(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    program = tmp_path / "bin" / "check"
    program.write_text('#!/bin/sh\n[ -f ./marker ] || exit 9\ngrep -q bad "$2" && exit 3\nexit 0\n')
    program.chmod(0o755)
    (tmp_path / "marker").write_text("")
    manifest = load_manifest(write(tmp_path, 'name = "x"\ncommand = "bin/check --file {stream}"\n'
                                   "[exit-codes]\naccept = [0]\nreject = [3]\n"))
    assert manifest.command[0] == str(program)
    adapter = OneShotValidator(manifest.command, 10, manifest.accept_codes, manifest.reject_codes,
                               manifest.placeholder, str(manifest.folder))
    good, bad = tmp_path / "good.jsonl", tmp_path / "bad.jsonl"
    good.write_text("{}\n")
    bad.write_text('{"bad": 1}\n')  # judged by content: the name never reaches the implementation
    assert adapter.validate(good).outcome is Outcome.ACCEPT
    assert adapter.validate(bad).outcome is Outcome.REJECT
    assert adapter.argv(good) == [str(program), "--file", str(good)]


def test_exit_status_outside_the_mapping_is_a_crash(tmp_path: Path) -> None:
    adapter = OneShotValidator(["sh", "-c", "exit 1", "sh"], 10, frozenset({0}), frozenset({3}))
    stream = tmp_path / "s.jsonl"
    stream.write_text("{}\n")
    verdict = adapter.validate(stream)
    assert verdict.outcome is Outcome.CRASH and "exit status 1 is not a verdict (expected 0, 3)" in verdict.message


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('name = "x"\n', "'command' is a required property"),
        ('name = "x"\ncommand = []\n', "command"),
        ('name = "x"\ncommand = "a"\nprotocol = "carrier-pigeon"\n', "protocol"),
        ('name = "x"\ncommand = "a"\ntimeout = -1\n', "timeout"),
        ('name = "x"\ncommand = "a"\nunknown = 1\n', "unknown"),
        ('name = "x\n', "not valid TOML"),
        ('name = "x"\ncommand = "a"\nnetwork = "wifi"\n', "network"),
        ('name = "x"\ncommand = "a"\n[limits]\nmemory = "lots"\n', "memory"),
        ('name = "x"\ncommand = "a"\n[limits]\ncpu = 0\n', "cpu"),
        ('name = "x"\ncommand = "a"\n[limits]\nswap = 1\n', "swap"),
    ],
)
def test_bad_manifests_name_file_and_key(tmp_path: Path, text: str, problem: str) -> None:
    with pytest.raises(ManifestError) as caught:
        load_manifest(write(tmp_path, text))
    assert str(caught.value).startswith(str(tmp_path / "impl.toml"))
    assert problem in str(caught.value)


def test_containment_keys_become_the_implementations_policy(tmp_path: Path) -> None:
    manifest = load_manifest(write(tmp_path, 'name = "x"\ncommand = "a"\nnetwork = "host"\n'
                                              'allow_read = ["runtime"]\n[limits]\nmemory = "4G"\ncpu = 90\n'))
    assert manifest.policy is not None
    assert manifest.policy.network == "host"
    assert manifest.policy.read_only == (str(tmp_path / "runtime"),)
    assert dict(manifest.policy.limits) == {"memory": 4 * 1024**3, "cpu": 90}
