"""``asr-conformance pack-check``: what a pack reads of each sample, its edits and its generator, and a
broken pack's failures named (never a traceback): a raising witness, facts that are not SourceFacts, an
edit that changes nothing, a witness that does not sniff its own samples."""

from __future__ import annotations

import io
import sys
import types
from pathlib import Path

import pytest

from asr_conformance.fidelity.facts import NotThisFormat, SourceFacts
from asr_conformance.fidelity.mutations import SourceMutation
from asr_conformance.packs.pack import FormatPack
from asr_conformance.plugin.console import main

ROOT = Path(__file__).resolve().parents[3]
GEMINI = ROOT / "examples/gemini-converter/samples"
CODEX = ROOT / "examples/codex-converter/samples"
CLAUDE = ROOT / "examples/claude-code-converter/samples"
TOY = ROOT / "examples/toy-pack"


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(["pack-check", *argv], out), out.getvalue()


def test_a_builtin_pack_says_what_it_read_of_each_sample() -> None:
    code, text = run("gemini-cli", str(GEMINI), "--no-generator")
    assert code == 0 and text.rstrip().endswith("pack-check: no problems")
    assert "hook runs: none recorded (any in a stream is invented)" in text
    assert "approvals: 1" in text and "terminals: none recorded (any in a stream is invented)" in text
    assert "subagents: 1" in text  # the sample's codebase_investigator call records an agentId
    assert "edit delete-result (ASR-265): applies" in text
    code, text = run("codex", str(CODEX / "user-shell-bare-patch-aborted.jsonl"), "--no-generator")
    assert code == 0
    assert "results 4 (0 orphans, 2 optional, 1 with an exit code)" in text and "transitions: 4" in text
    assert "hook runs: none recorded (any in a stream is invented)" in text  # Codex persists no hook event
    assert "tool identities in separate fields: none recorded (any in a stream is invented)" in text
    assert "trigger values: none recorded (any in a stream is invented)" in text
    assert "turn links: none recorded (any in a stream is invented)" in text
    assert "approvals: none recorded (any in a stream is invented)" in text


def test_a_sample_of_another_format_is_a_problem_named_with_the_file() -> None:
    sample = CLAUDE / "plain-chat.jsonl"
    code, text = run("codex-rollout-jsonl", str(sample), "--no-generator")  # a format name finds its pack too
    assert code == 1
    assert f"PROBLEM: {sample}: the witness does not sniff it as codex-rollout-jsonl" in text
    assert f"PROBLEM: {sample}: the witness does not read it: line 1 is neither" in text


def test_an_unknown_pack_or_an_unreadable_sample_is_a_usage_error(tmp_path: Path, capsys) -> None:
    assert run("no-such-pack", str(GEMINI))[0] == 2
    assert "no installed pack is called no-such-pack" in capsys.readouterr().err
    assert run("gemini-cli", str(tmp_path / "missing.json"))[0] == 2
    assert "missing.json: cannot read" in capsys.readouterr().err
    assert run("no_such_module_xyz:PACK", str(GEMINI))[0] == 2
    assert "cannot load it: ModuleNotFoundError" in capsys.readouterr().err


def test_a_third_party_pack_by_module_path_with_its_generator(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(TOY / "src"))
    code, text = run("asr_toy_pack:PACK", str(TOY / "samples"))
    assert code == 0, text
    assert "pack toy-pack 0.1.0 (third-party, (given))" in text
    assert "generator: 5 feature(s)" in text and "  exit-codes: " in text


class _Broken:
    format = "broken-json"

    def __init__(self, read) -> None:
        self._read = read

    def accepts_format_name(self, name: str) -> bool:
        return name == self.format

    def sniff(self, data: bytes) -> bool:
        return data.startswith(b"{")

    def read(self, data: bytes):
        return self._read(data)


def _pack(monkeypatch: pytest.MonkeyPatch, read, edits=()) -> str:
    module = types.ModuleType("asr_broken_pack_for_tests")
    module.PACK = FormatPack(name="broken", version="0", witness=_Broken(read), edits=tuple(edits))  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    return f"{module.__name__}:PACK"


def _raise(data: bytes) -> SourceFacts:
    raise KeyError("events")


@pytest.mark.parametrize(("read", "edits", "expected"), [
    (_raise, (), "raised KeyError in reading: 'events'"),
    (lambda data: {"calls": []}, (), "the witness returned dict, not SourceFacts"),
    (lambda data: SourceFacts("broken-json"),
     (SourceMutation("noop", "ASR-252", "changes a byte the witness ignores", lambda d: d + b" ", lambda *a: []),),
     "edit noop (ASR-252) changes no fact the witness reads"),
    (lambda data: SourceFacts("broken-json") if data.endswith(b"}") else (_ for _ in ()).throw(NotThisFormat("cut")),
     (SourceMutation("cut", "ASR-265", "cuts the file", lambda d: d[:-1], lambda *a: []),),
     "edit cut (ASR-265) writes an input the witness does not read: cut"),
])
def test_a_broken_pack_is_named_never_a_traceback(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, read, edits,
                                                  expected: str) -> None:
    sample = tmp_path / "one.json"
    sample.write_bytes(b'{"events": []}')
    code, text = run(_pack(monkeypatch, read, edits), str(sample))
    assert code == 1 and expected in text and "Traceback" not in text
    assert text.rstrip().endswith("pack-check: 1 problem(s)")
