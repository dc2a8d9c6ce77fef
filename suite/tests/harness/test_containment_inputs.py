"""Blind inputs: every stream and native input reaches the implementation as a fresh,
read-only copy under a neutral random name, alone in a private folder that is gone after
the case; the child's environment is an allow-list (no PYTEST_*, no tokens or keys)."""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from pathlib import Path

import pytest
from certifying import PLUGIN_DEFAULT_REPORT_DIR, run_certification
from sandbox_marks import contained

from asr_conformance import CORPUS_DIR
from asr_conformance.harness.adapters.answers import Outcome
from asr_conformance.harness.adapters.manifest import load_manifest
from asr_conformance.harness.adapters.oneshot import OneShotProducer, OneShotReader, OneShotValidator
from asr_conformance.harness.adapters.persistent import PersistentImplementation
from asr_conformance.harness.fuzzing.profiles import ValidatorFuzzSession
from asr_conformance.harness.judging.reader import judge_read
from asr_conformance.vocabulary.cases import iter_cases

ROOT = Path(__file__).resolve().parents[3]
HOSTILE = ROOT / "examples" / "hostile"
NEUTRAL = re.compile(r"^[0-9a-f]{16}\.jsonl$")

#: Reports what it was given: the path, what lies beside it, modes, environment.
PROBE = r'''#!/usr/bin/env python3
import json, os, stat, sys
def facts(path):
    folder = os.path.dirname(path)
    return {"path": path, "beside": sorted(os.listdir(folder)), "folder_mode": stat.S_IMODE(os.stat(folder).st_mode),
            "file_mode": stat.S_IMODE(os.stat(path).st_mode), "content": open(path).read(),
            "env": dict(os.environ), "home": sorted(os.listdir(os.environ["HOME"])), "cwd": os.getcwd()}
if len(sys.argv) > 1:
    print(json.dumps(facts(sys.argv[1])))
    sys.exit(0)
for line in sys.stdin:
    r = json.loads(line)
    if r["cmd"] == "start":
        print(json.dumps({"version": 1, "implementation": {"name": "probe"}, "roles": ["validator", "reader", "producer"]}), flush=True)
    elif r["cmd"] == "stop":
        break
    elif r["cmd"] == "validate":
        print(json.dumps({"seq": r["seq"], "verdict": "valid", "violations": [{"rule": "X", "facts": facts(r["path"])}]}), flush=True)
    elif r["cmd"] == "read":
        print(json.dumps({"seq": r["seq"], "view": facts(r["path"])}), flush=True)
    elif r["cmd"] == "convert":
        out = os.path.join(r["output_dir"], "s.jsonl")
        open(out, "w").write(json.dumps(facts(r["path"])))
        print(json.dumps({"seq": r["seq"], "stream_path": out}), flush=True)
'''


@pytest.fixture
def probe(tmp_path: Path) -> list[str]:
    script = tmp_path / "probe"
    script.write_text(PROBE)
    script.chmod(0o755)
    return [str(script)]


@pytest.fixture
def telling_stream(tmp_path: Path) -> Path:
    """A stream whose name, neighbours and folder give its verdict away."""
    folder = tmp_path / "validator" / "ASR-164"
    folder.mkdir(parents=True)
    stream = folder / "invalid-duplicate-seq.jsonl"
    stream.write_text('{"hello": 1}\n')
    stream.with_suffix(".toml").write_text('verdict = "invalid"\nrules = ["ASR-164"]\n')
    stream.with_name("invalid-duplicate-seq.view.json").write_text("{}")
    return stream


def _ask_every_way(command: list[str], stream: Path) -> list[dict]:
    """What the probe saw, asked as validator, reader and producer, one-shot and persistent."""
    seen = []
    verdict = OneShotValidator(command).validate(stream)
    seen.append(verdict.diagnostics and verdict.diagnostics[0] or json.loads(verdict.received))
    seen.append(OneShotReader(command).read(stream).view)
    seen.append(json.loads(OneShotProducer(command).convert(stream).stream or b"{}"))
    for role, ask in (("validator", "validate"), ("reader", "read"), ("producer", "convert")):
        adapter = PersistentImplementation(command, role=role)
        try:
            answer = getattr(adapter, ask)(stream)
            if role == "validator":
                seen.append(answer.diagnostics[0]["facts"])
            elif role == "reader":
                seen.append(answer.view)
            else:
                seen.append(json.loads(answer.stream))
        finally:
            adapter.close()
    return seen


def test_every_role_and_protocol_gets_a_blind_private_read_only_copy(probe: list[str], telling_stream: Path) -> None:
    answers = _ask_every_way(probe, telling_stream)
    assert answers
    for facts in answers:
        assert facts, "the probe answered nothing"
        name = Path(facts["path"]).name
        assert NEUTRAL.match(name), facts["path"]
        assert "ASR-164" not in facts["path"] and "invalid" not in facts["path"]
        assert facts["beside"] == [name], "nothing may lie beside the copy"
        assert facts["folder_mode"] == 0o700
        assert not facts["file_mode"] & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH), "the copy is read-only"
        assert facts["content"] == telling_stream.read_text()
        assert not Path(facts["path"]).exists(), "the copy is removed after the case"
        assert facts["home"] == [], "HOME is a fresh, empty folder"


def test_the_environment_is_an_allow_list(probe: list[str], telling_stream: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_planted")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "planted-aws")
    monkeypatch.setenv("ASR_PLANTED_SECRET", "planted")
    monkeypatch.setenv("LC_TIME", "C")
    answers = _ask_every_way(probe, telling_stream)
    assert answers
    for facts in answers:
        env = facts["env"]
        assert not [name for name in env if name.startswith(("PYTEST", "GITHUB", "AWS"))], sorted(env)
        assert "planted" not in json.dumps(env)
        assert env["PATH"].split(os.pathsep)[0] == str(Path(sys.executable).parent)
        assert env["LC_TIME"] == "C"
        assert env["TMPDIR"] != env["HOME"] and Path(env["HOME"]).name == "home"


def test_pass_env_lets_named_variables_through(probe: list[str], telling_stream: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASR_PLANTED_SECRET", "planted")
    facts = OneShotReader(probe, pass_env=("ASR_PLANTED_SECRET",)).read(telling_stream).view
    assert facts["env"]["ASR_PLANTED_SECRET"] == "planted"
    # --pass-env: the run's settings, which reach the implementation in its policy.
    passing = contained(pass_env=("ASR_PLANTED_SECRET",))
    assert OneShotReader(probe, policy=passing).read(telling_stream).view["env"]["ASR_PLANTED_SECRET"] == "planted"
    assert "ASR_PLANTED_SECRET" not in OneShotReader(probe).read(telling_stream).view["env"]


def test_a_manifest_names_variables_to_pass(tmp_path: Path) -> None:
    manifest = tmp_path / "m.toml"
    manifest.write_text('name = "x"\ncommand = "x"\npass_env = ["ACME_LICENSE"]\n')
    assert load_manifest(manifest).pass_env == ("ACME_LICENSE",)


def test_leaks_environment_finds_no_secret(telling_stream: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_planted_token")
    monkeypatch.setenv("ASR_PLANTED_SECRET", "planted_secret")
    verdict = OneShotValidator([str(HOSTILE / "leaks-environment")]).validate(telling_stream)
    assert verdict.outcome is Outcome.REJECT, verdict.explain()
    assert "planted" not in verdict.explain() and "PYTEST_CURRENT_TEST" not in verdict.explain()


def test_reads_verdict_from_path_gets_no_hint() -> None:
    """It rejects when the path, its .toml or PYTEST_CURRENT_TEST say "invalid"; blind, it says valid."""
    invalid = [case for case in iter_cases(CORPUS_DIR, role="validator") if case.verdict == "invalid"][:5]
    adapter = OneShotValidator([str(HOSTILE / "reads-verdict-from-path")])
    assert {adapter.validate(case.stream).outcome for case in invalid} == {Outcome.ACCEPT}


def test_reader_copies_expected_view_has_nothing_to_copy() -> None:
    case = next(iter_cases(CORPUS_DIR, role="reader"))
    answer = OneShotReader([str(HOSTILE / "reader-copies-expected-view")]).read(case.stream)
    assert answer.view == {"view_version": 1}
    assert judge_read(case, answer).status == "failed"


def test_fuzz_examples_are_named_by_digest(tmp_path: Path) -> None:
    seen: list[str] = []

    class Recorder:
        def validate(self, stream: Path):
            seen.append(stream.name)
            return OneShotValidator(["true"]).validate(stream)

    session = ValidatorFuzzSession(Recorder(), tmp_path, tmp_path / "ce", "x", None, None, {})  # type: ignore[arg-type]
    session._ask(b"{}\n", "accepts-valid")
    session._ask(b"[]\n", "mutated-ASR-164")
    assert all(re.fullmatch(r"[0-9a-f]{16}\.jsonl", name) for name in seen), seen
    assert list(tmp_path.iterdir()) == [], "the example file is removed once asked"


def test_reads_verdict_from_path_fails_certification(pytester: pytest.Pytester) -> None:
    result = run_certification(
        f"--implementation={HOSTILE / 'reads-verdict-from-path'}", "-p", "no:cacheprovider", "-m", "corpus",
        "-k", "ASR-164 or ASR-260", cwd=pytester.path, report_dir=PLUGIN_DEFAULT_REPORT_DIR)
    assert "FAILED" in result.stdout.str()
    result.stdout.fnmatch_lines(["*verdict: DOES NOT CONFORM*"])
