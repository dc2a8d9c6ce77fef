"""The Codex source mutations: each edit changes the witness's facts as it says, and each
expectation catches a converter that ignores the edit (one that replays the unmutated stream)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from asr_conformance.fidelity.codex import WITNESS
from asr_conformance.fidelity.codex_mutations import ALTERED_EXIT_CODE, MUTATIONS
from asr_conformance.fidelity.mutations import SourceMutation

ROOT = Path(__file__).resolve().parents[3]
CONVERTER = ROOT / "examples" / "codex-converter" / "asr-from-codex"
SAMPLES = sorted((ROOT / "examples" / "codex-converter" / "samples").glob("*.jsonl"))
CLI = ROOT / "examples" / "codex-converter" / "samples" / "cli-exec-exit-codes.jsonl"
BY_NAME = {m.name: m for m in MUTATIONS}


def stream_of(path: Path) -> list[dict]:
    done = subprocess.run([sys.executable, str(CONVERTER), str(path)], capture_output=True, timeout=60, check=True)
    return [json.loads(line) for line in done.stdout.decode().splitlines()]


def mutated(name: str, path: Path = CLI) -> tuple[bytes, bytes]:
    data = path.read_bytes()
    changed = BY_NAME[name].apply(data)
    assert changed is not None and changed != data
    return data, changed


def test_the_list_covers_the_edits_the_issue_asks_for() -> None:
    assert {"delete-result", "delete-call", "alter-exit-code", "remove-exec-end", "rename-tool", "move-timestamp",
            "change-message", "flip-status", "duplicate-call-id"} <= set(BY_NAME)
    assert all(isinstance(m, SourceMutation) and m.rule.startswith("ASR-") for m in MUTATIONS)


def test_alter_exit_code_changes_only_that_exit_code() -> None:
    data, changed = mutated("alter-exit-code")
    before, after = WITNESS.read(data), WITNESS.read(changed)
    diffs = [(a.call_id, a.exit_code, b.exit_code) for a, b in zip(before.results, after.results, strict=False) if a != b]
    assert diffs == [("call_Xq81vB", 101, ALTERED_EXIT_CODE)]
    assert len(changed.splitlines()) == len(data.splitlines())


def test_remove_exec_end_leaves_the_output_without_an_exit_code() -> None:
    data, changed = mutated("remove-exec-end")
    after = {r.call_id: r for r in WITNESS.read(changed).results}
    assert after["call_Xq81vB"].exit_code is None
    assert "Exit code: 101" in after["call_Xq81vB"].model_texts[0]  # the text stays; it is not an exit code
    assert len(changed.splitlines()) == len(data.splitlines()) - 1


def test_delete_result_makes_a_dangling_call() -> None:
    _, changed = mutated("delete-result")
    facts = WITNESS.read(changed)
    assert "call_Xq81vB" in {c.call_id for c in facts.calls}
    assert "call_Xq81vB" not in {r.call_id for r in facts.results}


def test_delete_call_makes_an_orphan() -> None:
    _, changed = mutated("delete-call")
    facts = WITNESS.read(changed)
    assert "call_Xq81vB" not in {c.call_id for c in facts.calls}
    assert "call_Xq81vB" in {r.call_id for r in facts.results}


def test_flip_status_turns_codex_verdict() -> None:
    data, changed = mutated("flip-status")
    before = {r.call_id: r.statuses for r in WITNESS.read(data).results}
    after = {r.call_id: r.statuses for r in WITNESS.read(changed).results}
    assert "completed" not in before["call_Xq81vB"] and after["call_Xq81vB"] == {"completed"}


def test_change_message_changes_the_typed_text_and_its_event_alike() -> None:
    data, changed = mutated("change-message")
    before = [m.texts for m in WITNESS.read(data).messages if m.role == "user"]
    after = [m.texts for m in WITNESS.read(changed).messages if m.role == "user"]
    assert len(after) == len(before) == 1 and after[0][0].startswith(before[0][0]) and after[0] != before[0]


def test_mutations_that_find_nothing_to_edit_say_so() -> None:
    old = (ROOT / "examples/codex-converter/samples/cli-old-format-exit-code-in-text.jsonl").read_bytes()
    assert BY_NAME["alter-exit-code"].apply(old) is None
    assert BY_NAME["remove-exec-end"].apply(old) is None
    assert BY_NAME["rename-tool"].apply(b"not a rollout") is None


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_each_expectation_catches_a_converter_that_ignores_the_edit(mutation: SourceMutation) -> None:
    for path in SAMPLES:
        data = path.read_bytes()
        changed = mutation.apply(data)
        if changed is None:
            continue
        stream = stream_of(path)
        findings = mutation.expect(WITNESS.read(data), WITNESS.read(changed), stream, stream)
        assert findings, (mutation.name, path.name)
        assert mutation.rule in {f.rule for f in findings} or mutation.name == "delete-call"
        return
    pytest.fail(f"{mutation.name} applies to no sample")
