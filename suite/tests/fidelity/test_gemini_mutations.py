"""The Gemini CLI source mutations: each edit changes every recorded copy of its target and the
witness's facts as it says, and each expectation catches a converter that ignores the edit (one
that replays the unmutated stream)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from asr_conformance.fidelity.claude_code_mutations import RENAMED_PREFIX
from asr_conformance.fidelity.gemini import WITNESS, layout_of
from asr_conformance.fidelity.gemini_mutations import MUTATIONS
from asr_conformance.fidelity.mutations import SourceMutation

ROOT = Path(__file__).resolve().parents[3]
CONVERTER = ROOT / "examples" / "gemini-converter" / "asr-from-gemini"
SAMPLES = sorted((ROOT / "examples" / "gemini-converter" / "samples").iterdir())
CALLS = ROOT / "examples" / "gemini-converter" / "samples" / "calls-updates-parallel-cancelled.jsonl"
ONE_OBJECT = ROOT / "examples" / "gemini-converter" / "samples" / "session-2025-11-20T16-02-5e4d3c2b.json"
BY_NAME = {m.name: m for m in MUTATIONS}
READ_FILE = "read_file-1747041262311-4c1f0a2b"


def stream_of(path: Path) -> list[dict]:
    done = subprocess.run([sys.executable, str(CONVERTER), str(path)], capture_output=True, timeout=60, check=True)
    return [json.loads(line) for line in done.stdout.decode().split("\n") if line.strip()]


def mutated(name: str, path: Path = CALLS) -> tuple[bytes, bytes]:
    data = path.read_bytes()
    changed = BY_NAME[name].apply(data)
    assert changed is not None and changed != data
    return data, changed


def test_the_list_covers_the_edits_a_gemini_session_allows() -> None:
    assert {"delete-result", "null-result", "flip-status", "rename-tool", "move-timestamp", "await-approval",
            "change-message"} == set(BY_NAME)
    assert all(isinstance(m, SourceMutation) and m.rule.startswith("ASR-") for m in MUTATIONS)


def test_an_edit_reaches_every_copy_of_the_call_and_rewrites_only_those_lines() -> None:
    data, changed = mutated("rename-tool")
    before, after = data.split(b"\n"), changed.split(b"\n")
    assert len(before) == len(after)
    differing = [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    assert differing == [6]  # the one line that holds read_file (the earlier copies have no tool calls)
    assert WITNESS.read(changed).calls[0].name == RENAMED_PREFIX + "read_file-V2"


def test_delete_result_leaves_the_call_executing_and_dangling() -> None:
    _, changed = mutated("delete-result")
    facts = WITNESS.read(changed)
    assert READ_FILE in {c.call_id for c in facts.dangling()}


def test_null_result_leaves_the_result_without_content() -> None:
    _, changed = mutated("null-result")
    result = next(r for r in WITNESS.read(changed).results if r.call_id == READ_FILE)
    assert result.model_texts is None and not result.content_recorded


def test_flip_status_turns_success_into_error() -> None:
    data, changed = mutated("flip-status")
    before = {r.call_id: r.statuses for r in WITNESS.read(data).results}
    after = {r.call_id: r.statuses for r in WITNESS.read(changed).results}
    assert before[READ_FILE] == {"completed"} and after[READ_FILE] == {"failed"}


def test_change_message_extends_the_first_user_message() -> None:
    data, changed = mutated("change-message")
    before = [m.texts for m in WITNESS.read(data).messages if m.role == "user"]
    after = [m.texts for m in WITNESS.read(changed).messages if m.role == "user"]
    assert after[0][0].startswith(before[0][0]) and after[0] != before[0] and after[1:] == before[1:]


def test_the_one_object_layout_stays_one_object() -> None:
    _, changed = mutated("move-timestamp", ONE_OBJECT)
    assert layout_of(changed) == "json"
    assert WITNESS.read(changed).calls[0].ts != WITNESS.read(ONE_OBJECT.read_bytes()).calls[0].ts


def test_mutations_that_find_nothing_to_edit_say_so() -> None:
    plain = b'{"sessionId":"s","projectHash":"p"}\n{"id":"u","timestamp":"2026-01-01T00:00:00Z","type":"user","content":"hi"}\n'
    assert all(BY_NAME[name].apply(plain) is None
               for name in ("delete-result", "null-result", "flip-status", "rename-tool", "await-approval"))
    assert BY_NAME["rename-tool"].apply(b"not a session") is None


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_each_expectation_catches_a_converter_that_ignores_the_edit(mutation: SourceMutation) -> None:
    for path in SAMPLES:
        data = path.read_bytes()
        changed = mutation.apply(data)
        if changed is None:
            continue
        stream = stream_of(path)
        findings = mutation.expect(WITNESS.read(data), WITNESS.read(changed), stream, stream)
        assert mutation.rule in {f.rule for f in findings}, (mutation.name, path.name)
        return
    pytest.fail(f"{mutation.name} applies to no sample")
