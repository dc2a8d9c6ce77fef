"""A source edit's check may receive what was edited: the input before and after and the item the edit
names (``Edited``, ``expect_edit``), besides the facts and streams; the older four-argument form still
works, and an edit answering anything else is the pack's error, never the converter's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fidelity_helpers import ROOT

from asr_conformance.fidelity import gemini
from asr_conformance.fidelity.facts import Finding
from asr_conformance.fidelity.mutations import EditContext, Edited, SourceMutation, records_of
from asr_conformance.harness.judging.fidelity import judge_mutation
from asr_conformance.packs.registry import installed
from asr_conformance.reference import gemini_converter

SAMPLE = ROOT / "examples/gemini-converter/samples/rewind-and-checkpoint.jsonl"
GEMINI = installed().for_format(gemini.FORMAT)


def _rename_first_call(data: bytes) -> Edited | None:
    """Renames the first call's tool everywhere it is written, and names the call."""
    first = next((c for line in data.split(b"\n") if line.strip()
                  for c in json.loads(line).get("toolCalls") or ()), None)
    if first is None:
        return None
    old = json.dumps(first["name"]).encode()
    return Edited(data.replace(b'"name":' + old, b'"name":"renamed_tool"'), item=first["id"])


def test_the_check_receives_the_edited_bytes_and_the_item() -> None:
    seen: list[EditContext] = []

    def expect(edit: EditContext) -> list[Finding]:
        seen.append(edit)
        written = records_of(edit.after_stream, "tool_call", str(edit.item))
        if not written or written[0].get("name") != "renamed_tool":
            return [Finding("ASR-252", "exact-values", f"call {edit.item} does not follow the rename")]
        return []

    edit = SourceMutation("rename-named", "ASR-252", "renames the first call", _rename_first_call, expect_edit=expect)
    data = SAMPLE.read_bytes()
    stream = gemini_converter.convert(data)
    judged = judge_mutation(edit, GEMINI, data, stream, gemini_converter.convert)
    assert judged.findings == [] and judged.error is None
    (context,) = seen
    answer = _rename_first_call(data)
    assert answer is not None and context.original == data and context.edited == answer.data != data
    assert context.item == answer.item and any(c.name == "renamed_tool" for c in context.after_facts.calls)
    ignoring = judge_mutation(edit, GEMINI, data, stream, lambda edited: stream)  # converts the old input
    assert [f.rule for f in ignoring.findings if "follow the rename" in f.message] == ["ASR-252"]


def test_the_four_argument_form_still_works_and_one_form_is_required() -> None:
    calls: list[tuple[Any, ...]] = []
    old = SourceMutation("old", "ASR-252", "renames", _rename_first_call, lambda *a: calls.append(a) or [])
    data = SAMPLE.read_bytes()
    stream = gemini_converter.convert(data)
    assert judge_mutation(old, GEMINI, data, stream, gemini_converter.convert).findings == []
    assert len(calls) == 1 and len(calls[0]) == 4
    with pytest.raises(ValueError, match="exactly one"):
        SourceMutation("none", "ASR-252", "no check", _rename_first_call)
    with pytest.raises(ValueError, match="exactly one"):
        SourceMutation("both", "ASR-252", "two checks", _rename_first_call, lambda *a: [], expect_edit=lambda e: [])


def test_an_edit_answering_something_else_is_the_packs_error() -> None:
    edit = SourceMutation("text", "ASR-252", "answers text", lambda d: "edited", expect_edit=lambda e: [])  # type: ignore[arg-type,return-value]
    data = SAMPLE.read_bytes()
    judged = judge_mutation(edit, GEMINI, data, gemini_converter.convert(data), gemini_converter.convert)
    assert judged.findings == [] and judged.error is not None and "not bytes, Edited or None" in judged.error


def test_the_pack_is_chosen_once_per_input_and_carried_on_its_edits(tmp_path: Path) -> None:
    from asr_conformance.harness.judging.fidelity import source_edits
    from asr_conformance.packs.selection import source_input

    copy = tmp_path / SAMPLE.name
    copy.write_bytes(SAMPLE.read_bytes())
    made = source_input(copy, installed(), "x")
    chosen = made.pack
    assert chosen is not None and chosen.pack.format == gemini.FORMAT and made.reason is None
    edits = source_edits(made)
    assert edits and all(e.source is made and e.source.pack is chosen and e.mutation for e in edits)
    copy.write_bytes(b"not a transcript\n")  # another input under the same name is another input
    other = source_input(copy, installed(), "x")
    assert other.pack is None and other.reason and other.reason.startswith("not checked: no witness for format")
    assert source_edits(other)[0].mutation is None
    missing = source_input(tmp_path / "missing.jsonl", installed(), "y")
    assert missing.pack is None and missing.reason and "cannot be read" in missing.reason
