"""The example Gemini CLI converter (examples/gemini-converter/asr-from-gemini) and the seeded-bug ones.

The example must write valid, deterministic streams that pass every fidelity check and every
source mutation on every sample; each seeded-bug converter (examples/misbehaving/gemini-*) must
write valid streams too and be caught, with its rule named.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fidelity_helpers import run_in_process

from asr_conformance.fidelity.compare import check_fidelity
from asr_conformance.fidelity.facts import Finding
from asr_conformance.fidelity.gemini import WITNESS
from asr_conformance.fidelity.gemini_mutations import MUTATIONS
from asr_conformance.harness.judging.fidelity import policy_of
from asr_conformance.packs.builtin import gemini_cli
from asr_conformance.reference import gemini_converter
from asr_conformance.reference.checks import validate_bytes
from asr_conformance.reference.producer import converter_for

ROOT = Path(__file__).resolve().parents[3]
CONVERTER = ROOT / "examples" / "gemini-converter" / "asr-from-gemini"
SAMPLES = sorted((ROOT / "examples" / "gemini-converter" / "samples").iterdir())
MISBEHAVING = ROOT / "examples" / "misbehaving"
#: The checks as the built-in Gemini CLI pack sets them (no published kind mapping, its loss namespaces).
POLICY = policy_of(gemini_cli())
#: Each seeded bug and the rule the fidelity checks name for it on the samples.
BUGS = {
    "gemini-cancelled-as-completed": "ASR-258",
    "gemini-drops-parallel-calls": "ASR-157",
    "gemini-exit-code-from-text": "ASR-260",
    "gemini-first-copy-wins": "ASR-157",
    "gemini-kind-from-name": "ASR-253",
    "gemini-null-result-as-text": "ASR-259",
    "gemini-renames-tools": "ASR-252",
    "gemini-results-for-pending-calls": "ASR-265",
    "gemini-rewinds-one-too-many": "ASR-157",
    "gemini-shifts-timestamps": "ASR-103",
    "gemini-invents-turn-states": "ASR-169",
    "gemini-invents-hook-exit-codes": "ASR-287",
    "gemini-drops-approval-requests": "ASR-157",
    "gemini-invents-trigger": "ASR-186",
    "gemini-invents-parent-turns": "ASR-183",
}


def run(command: Path, source: Path, **kwargs: object) -> subprocess.CompletedProcess[bytes]:
    """The converter on ``source``; the seeded-bug ones (the example's conversion through ``_gemini_wrapper``)
    in this process, as their command line would run them."""
    if command.parent == MISBEHAVING and not kwargs:
        code, stdout, stderr = run_in_process(command, source)
        return subprocess.CompletedProcess([str(command), str(source)], code, stdout, stderr)
    return subprocess.run([sys.executable, str(command), str(source)], capture_output=True, timeout=60, **kwargs)


def records(stream: bytes) -> list[dict]:
    return [json.loads(line) for line in stream.decode("utf-8").split("\n") if line.strip()]


def convert(command: Path, source: Path) -> list[dict]:
    done = run(command, source)
    assert done.returncode == 0, done.stderr.decode()
    return records(done.stdout)


def fidelity(command: Path, path: Path, tmp_path: Path, until: str | None = None) -> list[Finding]:
    """Checks plus every applicable mutation, for one converter on one input (stopping once ``until`` is found)."""
    data = path.read_bytes()
    source = tmp_path / path.name
    source.write_bytes(data)
    facts, stream = WITNESS.read(data), convert(command, source)
    findings = check_fidelity(facts, stream, POLICY)
    for mutation in MUTATIONS:
        if until is not None and any(f.rule == until for f in findings):
            break
        mutated = mutation.apply(data)
        if mutated is None:
            continue
        source.write_bytes(mutated)
        after, changed = WITNESS.read(mutated), convert(command, source)
        findings += mutation.expect(facts, after, stream, changed)
        findings += check_fidelity(after, changed, POLICY)
    return findings


# --- the example converter ------------------------------------------------------------------


def test_the_example_is_the_reference_module() -> None:
    assert CONVERTER.resolve() == Path(gemini_converter.__file__).resolve()
    assert os.access(CONVERTER, os.X_OK)


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_the_reference_producer_picks_the_gemini_converter(path: Path) -> None:
    assert converter_for(path.read_bytes()) is gemini_converter


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_output_is_valid(path: Path) -> None:
    done = run(CONVERTER, path)
    assert done.returncode == 0 and done.stderr == b""
    outcome = validate_bytes(done.stdout)
    assert outcome.valid, [(d.rule, d.message) for d in outcome.errors]
    assert not outcome.warnings, [(d.rule, d.message) for d in outcome.warnings]


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_output_is_deterministic_whatever_the_clock_directory_or_environment(path: Path, tmp_path: Path) -> None:
    first = run(CONVERTER, path).stdout
    env = {**os.environ, "TZ": "Pacific/Chatham", "LC_ALL": "C", "HOME": str(tmp_path), "PWD": str(tmp_path)}
    again = run(CONVERTER, path, cwd=tmp_path, env=env).stdout
    assert first == again and first


def test_the_persistent_protocol_gives_the_one_shot_stream() -> None:
    path = SAMPLES[0]
    requests = [{"cmd": "start", "version": 1}, {"cmd": "convert", "seq": 1, "path": str(path)},
                {"cmd": "convert", "seq": 2, "path": str(path.with_suffix(".missing"))}]
    process = subprocess.Popen([sys.executable, str(CONVERTER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        replies = []
        for request in requests:
            process.stdin.write(json.dumps(request) + "\n")
            process.stdin.flush()
            replies.append(json.loads(process.stdout.readline()))
            if request.get("seq") == 1:  # the file lives until the next request
                streamed = Path(replies[-1]["stream_path"]).read_bytes()
        process.stdin.write(json.dumps({"cmd": "stop"}) + "\n")
        process.stdin.flush()
        assert process.wait(timeout=30) == 0
    finally:
        process.kill()
    assert replies[0] == {"version": 1, "implementation": {"name": "asr-from-gemini", "version": "0.1.0"},
                          "roles": ["producer"]}
    assert streamed == run(CONVERTER, path).stdout
    assert replies[2]["seq"] == 2 and "cannot read" in replies[2]["refused"]


META = b'{"sessionId":"s","projectHash":"p","startTime":"2026-01-01T00:00:00.000Z"}\n'


@pytest.mark.parametrize("data", [
    b"", b"\xff\xfe garbage", b"[]\n", b'{"type":"session","seq":0}\n',
    META + b'{"id":"u1","timestamp":"2026-01-01T00:00:01Z","type":"user","content":"x"}\n{"id":"u2","ty',
    META + b'{"id":"u1","timestamp":"yesterday","type":"user","content":"x"}\n',
    META + b'{"id":"g1","timestamp":"2026-01-01T00:00:01Z","type":"gemini","toolCalls":[{"id":"c","name":"x"}]}\n',
    b'{\n  "sessionId": "s",\n  "projectHash": "p",\n  "messages": 3\n}\n',
])
def test_refuses_what_is_not_a_session_with_one_line(data: bytes, tmp_path: Path) -> None:
    source = tmp_path / "bad.jsonl"
    source.write_bytes(data)
    done = run(CONVERTER, source)
    assert done.returncode == 1 and done.stdout == b""
    assert done.stderr.decode().count("\n") == 1 and done.stderr.startswith(b"asr-from-gemini: refused: ")


def test_the_header_comes_from_the_metadata_and_declares_what_is_left_out() -> None:
    stream = convert(CONVERTER, ROOT / "examples/gemini-converter/samples/rewind-and-checkpoint.jsonl")
    header = stream[0]
    assert header["sessionId"] == "7a1b2c3d-4e5f-4061-8273-94a5b6c7d8e9"
    assert header["agent"] == {"name": "gemini-cli"} and header["startedAt"] == "2026-07-01T12:19:40.000Z"
    assert header["producer"]["source"] == {"format": "gemini-cli-session"}
    assert "gemini.rewound" in header["producer"]["lossy"]


def test_pending_calls_get_no_result_and_a_null_result_no_content() -> None:
    stream = convert(CONVERTER, ROOT / "examples/gemini-converter/samples/awaiting-approval-null-result-huge-integers.jsonl")
    results = {r["callId"].split("-")[0]: r for r in stream if r["type"] == "tool_result"}
    assert set(results) == {"codebase_investigator", "mcp_ledger_post_entry"}
    ledger = results["mcp_ledger_post_entry"]
    assert ledger["status"] == "cancelled" and "content" not in ledger and ledger["capture"] == {"content": {"state": "absent"}}
    call = next(r for r in stream if r["type"] == "tool_call" and r["name"] == "mcp_ledger_post_entry")
    assert "input" not in call and "123456789012345678901234567890" in call["inputText"]
    assert not [r for r in stream if r["type"] == "tool_call" and "kind" in r]


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_passes_every_check_and_mutation(path: Path, tmp_path: Path) -> None:
    findings = fidelity(CONVERTER, path, tmp_path)
    assert not findings, [(f.rule, f.message) for f in findings]


def test_every_mutation_applies_to_some_sample() -> None:
    applied = {m.name for m in MUTATIONS for p in SAMPLES if m.apply(p.read_bytes()) is not None}
    assert applied == {m.name for m in MUTATIONS}


# --- seeded bugs ------------------------------------------------------------------------------


#: Misbehaves only past the 1,000th message, right on every sample: found by the producer fuzz's long property
#: (suite/tests/generators/test_fuzzing_finds_seeded_bugs.py).
LONG_ONLY = ("gemini-drops-late-calls",)


def test_every_gemini_seeded_converter_is_listed() -> None:
    assert sorted(p.name for p in MISBEHAVING.glob("gemini-*")) == sorted([*BUGS, *LONG_ONLY])


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_a_seeded_bug_says_its_bug_in_one_sentence_and_keeps_the_stream_valid(bug: str) -> None:
    doc = ast.get_docstring(ast.parse((MISBEHAVING / bug).read_text()))
    assert doc and doc.startswith("A Gemini CLI converter that ") and "\n" not in doc
    assert SAMPLES, "no Gemini samples"
    for path in SAMPLES:
        done = run(MISBEHAVING / bug, path)
        assert done.returncode == 0, done.stderr.decode()
        assert validate_bytes(done.stdout).valid, (bug, path.name)


@pytest.mark.parametrize(("bug", "rule"), sorted(BUGS.items()))
def test_each_seeded_bug_is_caught_with_its_rule_on_the_samples(bug: str, rule: str, tmp_path: Path) -> None:
    caught: set[str] = set()
    for path in SAMPLES:
        caught |= {f.rule for f in check_fidelity(WITNESS.read(path.read_bytes()), convert(MISBEHAVING / bug, path), POLICY)}
    assert rule in caught, caught


def test_line_separators_inside_strings_split_no_record(tmp_path: Path) -> None:
    """U+2028 stands unescaped in a sample's text; it ends no record, in the example or in a seeded bug."""
    from asr_conformance.harness.judging.fidelity import judge_fidelity, stream_records

    sample = ROOT / "examples/gemini-converter/samples/rewind-and-checkpoint.jsonl"
    stream = run(CONVERTER, sample).stdout
    assert "\u2028".encode() in stream
    parsed = stream_records(stream)
    assert parsed is not None and len(parsed) == stream.count(b"\n")
    verdict = judge_fidelity(sample.read_bytes(), stream)
    assert verdict.not_checked is None and not verdict.findings
