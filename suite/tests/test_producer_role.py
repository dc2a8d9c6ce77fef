"""The producer role discriminates: the example converter passes on its samples,
each seeded-bug producer in examples/misbehaving fails exactly where its bug
shows, naming the rule; and the machinery in harness/judging/producer.py does what it says."""

from __future__ import annotations

import contextlib
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import producer_runs as runs
import pytest
from certifying import Certification, Certify
from miniatures import MiniatureProducer, emits_invalid_stream, judge_producer, reads_working_directory

from asr_conformance.harness.judging import producer as producing
from asr_conformance.harness.judging.producer import (
    ProducerRunner,
    StreamDifference,
    anchored,
    check_output,
    compare_streams,
    damaged_inputs,
    differences,
    rules_of,
    variants,
)
from asr_conformance.reference import claude_code_converter as example_module
from asr_conformance.reference.claude_code_converter import SHELL as example_shell
from asr_conformance.reference.claude_code_converter import convert as example_convert

ROOT = Path(__file__).resolve().parents[2]
CONVERTER = ROOT / "examples" / "claude-code-converter" / "asr-from-claude-code"
SAMPLES = ROOT / "examples" / "claude-code-converter" / "samples"
MISBEHAVING = ROOT / "examples" / "misbehaving"
SAMPLE_FILES = sorted(SAMPLES.rglob("*.jsonl"))
#: Tests per input besides fidelity: conforms, deterministic, five variants, three damaged copies.
PER_INPUT = 1 + 1 + len(producing.INDEPENDENCE) + len(damaged_inputs(b""))
#: Tests of fidelity to the source (the witness's checks and source edits), counted apart.
FIDELITY_TESTS = ("test_fidelity", "test_follows_source_edit")
UNAVAILABLE = sum(not variants()[name].available for name in producing.INDEPENDENCE)


#: The producer part of the conformance suite on the samples, without the generated-transcript properties
#: (``-m "not fuzz"``): they are tested on their own (test_producer_fuzz_harness.py), and a seeded bug that
#: breaks every stream would spend each property's shrink budget here.
PRODUCER = (f"--inputs={SAMPLES}", "-p", "no:xdist", "-m", "not fuzz")


def failed(result: Certification, fidelity: bool = False) -> set[str]:
    """The failed tests, without the fidelity tests unless asked (the seeded bugs here are about the
    stream and the conversion environment; a fidelity test may fail beside them)."""
    found = set(re.findall(r"FAILED \S*::(test_\w+\[[^\]]+\])", result.stdout.str()))
    return found if fidelity else {name for name in found if not name.startswith(FIDELITY_TESTS)}


def every(test: str, suffix: str = "", samples: list[Path] = SAMPLE_FILES) -> set[str]:
    return {f"{test}[{sample.relative_to(SAMPLES).as_posix()}{suffix}]" for sample in samples}


#: A plain chat, tool calls with exit codes, parallel calls: each seeded bug shows on these three as on all nine.
SEEDED_SAMPLES = runs.SEEDED_SAMPLES


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, ...]:
    """PRODUCER on SEEDED_SAMPLES (copied into a folder of their own, under the same names)."""
    folder = tmp_path_factory.mktemp("seeded-samples")
    for sample in SEEDED_SAMPLES:
        (folder / sample.name).write_bytes(sample.read_bytes())
    return (f"--inputs={folder}", *PRODUCER[1:])


def few(test: str, suffix: str = "") -> set[str]:
    """``every`` over the seeded-bug samples."""
    return every(test, suffix, SEEDED_SAMPLES)


# --- the example converter and the seeded bugs, end to end ---------------------------


def test_samples_cover_the_cases_the_readme_promises() -> None:
    assert 3 <= len(SAMPLE_FILES) <= 12
    text = "".join(path.read_text() for path in SAMPLE_FILES)
    for native in ('"type":"summary"', '"is_error":true', '"tool_use"', '"type":"system"'):
        assert native in text


@pytest.fixture(scope="module")
def example_one_shot(tmp_path_factory: pytest.TempPathFactory) -> Certification:
    """``producer_runs.example_converter_one_shot`` (test_fidelity_verdict.py reads it too)."""
    return runs.example_converter_one_shot(tmp_path_factory)


def conforms_on(result: Certification, samples: list[Path]) -> None:
    outcomes = result.parseoutcomes()
    assert "failed" not in outcomes
    # every input: the output and environment tests, its fidelity test, and at least one source edit
    assert outcomes.get("passed", 0) >= len(samples) * (PER_INPUT - UNAVAILABLE + 2)
    reasons = re.findall(r"(?m)^SKIPPED \[\d+\] \S+: (.*)$", result.stdout.str())
    assert all(r.startswith(("the clock variant is unavailable", "fidelity not applicable")) for r in reasons), reasons
    assert "verdict: CONFORMS" in result.stdout.str()
    assert result.ret == 0


@pytest.mark.e2e
def test_the_example_converter_passes_on_its_samples_persistent(certify: Certify) -> None:
    """Persistent, on every sample. The generated-transcript properties are left out: the example converter passes
    every feature's transcripts with every source edit in process (generators/test_native_claude_code.py), and
    the properties' wiring is certified whole on the codex converter (test_producer_fuzz_harness.py) and on a
    fresh seed's slice of this converter's (test_fresh_seeds.py)."""
    conforms_on(certify(f"--implementation={CONVERTER}", *PRODUCER, "-rs", "--persistent", "--check-protocol"),
                SAMPLE_FILES)


@pytest.mark.e2e
def test_the_example_converter_passes_on_its_samples_one_shot(example_one_shot: Certification) -> None:
    """One-shot (a process per conversion, the same converter behind it), every test on the sample with tool calls."""
    conforms_on(example_one_shot, [runs.ONE_SHOT_SAMPLE])


def test_a_conversion_time_stamp_is_caught_by_the_clock_and_by_repetition(certify: Certify, seeded: tuple[str, ...]) -> None:
    result = certify(f"--implementation={MISBEHAVING / 'stamps-conversion-time'}", *seeded, "-k", "deterministic or clock")
    text = result.stdout.str()
    assert few("test_deterministic") <= failed(result)
    assert "breaks ASR-154" in text and "/startedAt" in text
    if variants()["clock"].available:
        assert few("test_independent_of", "-clock") <= failed(result)
        assert '-> "2003-04-05T06:07:' in text


def test_nondeterministic_records_are_caught_by_repetition(certify: Certify, seeded: tuple[str, ...]) -> None:
    result = certify(f"--implementation={MISBEHAVING / 'shuffles-records'}", *seeded, "-k", "deterministic or conforms")
    assert failed(result) == few("test_deterministic")
    text = result.stdout.str()
    assert "converting a second time in the same environment changed the stream" in text
    assert "ASR-169" in text and re.search(r"line \d+ \(\S+ r[0-9a-f]{8}\) /id: ", text)


@pytest.fixture(scope="module")
def stream_and_environment(tmp_path_factory: pytest.TempPathFactory) -> Certification:
    """``producer_runs.stream_and_environment``: the two seeded producers side by side on their slice."""
    return runs.stream_and_environment(tmp_path_factory)


@pytest.fixture(scope="module")
def judged_in_process(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, tuple[str, str]]]:
    """Every test of the stream and its environment (output, determinism, each independence variant, each damaged
    copy) on SEEDED_SAMPLES, judged in process for the miniature of each seeded producer: by test ID, its outcome and
    message."""
    folder = tmp_path_factory.mktemp("producers-in-process")
    judged = {}
    for name, answer in (("emits-invalid-stream", emits_invalid_stream()),
                         ("reads-working-directory", reads_working_directory())):
        runner = MiniatureProducer(name, answer, folder / name / "scratch")
        try:
            judged[name] = judge_producer(SEEDED_SAMPLES, runner, folder / name / "damaged")
        finally:
            runner.close()
    return judged


def column(result: Certification, name: str) -> tuple[set[str], str]:
    """One implementation of a side-by-side run: its failed tests as ``failed`` names them (fidelity left out)
    and the messages of its failing results."""
    results = [r for r in result.report["results"] if r["implementation"] == name]
    assert results, f"no results of {name}"
    failing = [r for r in results if r["outcome"] in ("fail", "crash", "timeout")]
    names = {r["id"].removeprefix("producer/") for r in failing}
    return {n for n in names if not n.startswith(FIDELITY_TESTS)}, "\n".join(r.get("message", "") for r in failing)


def in_process(judged: dict[str, dict[str, tuple[str, str]]], name: str) -> tuple[set[str], str]:
    """``column`` of a miniature judged in process: its failed tests and their messages."""
    failing = {test: message for test, (outcome, message) in judged[name].items() if outcome == "failed"}
    return set(failing), "\n".join(failing.values())


def test_every_stream_and_environment_test_is_judged_in_process(judged_in_process) -> None:
    """The miniatures meet every test the whole run's selection held (PER_INPUT on each input)."""
    for judged in judged_in_process.values():
        assert len(judged) == len(SEEDED_SAMPLES) * PER_INPUT
        assert {outcome for outcome, _ in judged.values()} <= {"passed", "failed", "skipped"}


def test_an_invalid_stream_fails_conformance_only_naming_the_broken_rule(judged_in_process) -> None:
    failed_here, text = in_process(judged_in_process, "emits-invalid-stream")
    # a damaged copy that still converts gets the same invalid stream, and so does a generated transcript:
    # only damaged-input and fuzz tests may join
    assert few("test_output_conforms") <= failed_here
    assert all(name.startswith(("test_output_conforms", "test_damaged_input", "test_converts_generated_transcripts"))
               for name in failed_here)
    assert "the stream breaks ASR-260:" in text and "exitCode 4294967296" in text
    assert "plain-chat.jsonl: the stream breaks ASR-003" in text  # no tool results: the header is dropped


def test_the_invalid_stream_program_fails_its_run_naming_the_broken_rule(stream_and_environment: Certification) -> None:
    result = stream_and_environment
    failed_here, text = column(result, "emits-invalid-stream")
    assert failed_here == few("test_output_conforms")  # its cwd tests pass: the same invalid stream each time
    assert "the stream breaks ASR-260:" in text and "exitCode 4294967296" in text
    assert "plain-chat.jsonl: the stream breaks ASR-003" in text
    result.stdout.fnmatch_lines(["  emits-invalid-stream producer: DOES NOT CONFORM*"])
    assert "verdict: DOES NOT CONFORM" in result.text and result.ret == 1


def test_a_traceback_on_truncated_input_is_a_crash_not_a_refusal(certify: Certify, seeded: tuple[str, ...]) -> None:
    result = certify(f"--implementation={MISBEHAVING / 'crashes-on-truncated-input'}", *seeded, "-k", "damaged")
    assert few("test_damaged_input", "-truncated") <= failed(result)
    assert not any(name.endswith("-empty]") for name in failed(result))
    text = result.stdout.str()
    assert "crash on damaged input" in text and "a traceback is not a refusal" in text and "docs/contract.md §6" in text


def test_reading_the_working_directory_is_caught_by_the_cwd_variant_alone(judged_in_process) -> None:
    failed_here, text = in_process(judged_in_process, "reads-working-directory")
    assert failed_here == few("test_independent_of", "-cwd")
    assert "breaks ASR-159" in text and "/workspace/roots/0/vcs/remote" in text


def test_the_working_directory_program_fails_its_run_under_the_cwd_variant(stream_and_environment: Certification) -> None:
    failed_here, text = column(stream_and_environment, "reads-working-directory")
    assert failed_here == few("test_independent_of", "-cwd")  # its streams conform
    assert "breaks ASR-159" in text and "/workspace/roots/0/vcs/remote" in text
    stream_and_environment.stdout.fnmatch_lines(["  reads-working-directory producer: DOES NOT CONFORM*"])


def test_rule_markers_select_producer_tests(certify: Certify) -> None:
    result = certify(f"--implementation={CONVERTER}", *PRODUCER, "-m", "ASR-159", "--co", "-q")
    collected = set(re.findall(r"::(test_\w+\[[^\]]+\])", result.stdout.str()))
    assert collected == every("test_independent_of", "-cwd") | every("test_independent_of", "-home")


# --- the example converter on its own --------------------------------------------------


def convert(data: bytes, tmp_path: Path) -> subprocess.CompletedProcess[bytes]:
    source = tmp_path / "input.jsonl"
    source.write_bytes(data)
    return subprocess.run([sys.executable, str(CONVERTER), str(source)], capture_output=True, timeout=30)


def one_shot_in_process(source: Path) -> tuple[int, bytes]:
    """The example converter's one-shot command line (the package module its script links to) run in this
    process: its exit status and standard output. Its whole runs above start it as a process on every sample,
    and so do the refusals below."""
    written = io.BytesIO()
    out = io.TextIOWrapper(written, encoding="utf-8")
    with contextlib.redirect_stdout(out):
        code = example_shell.one_shot(str(source))
    out.flush()
    return code, written.getvalue()


@pytest.mark.parametrize("sample", SAMPLE_FILES, ids=[p.name for p in SAMPLE_FILES])
def test_every_sample_converts_to_a_valid_stream_that_keeps_the_source_values(sample: Path) -> None:
    assert CONVERTER.resolve() == Path(example_module.__file__).resolve()  # the script is the package's module
    code, stdout = one_shot_in_process(sample)
    assert code == 0 and check_output(stdout) == []
    header = json.loads(stdout.splitlines()[0])
    entries = [json.loads(line) for line in sample.read_text().splitlines()]
    # a subagent file's stream is the subagent's session: its own agentId (the parent's sessionId is lineage)
    first = next(e for e in entries if "sessionId" in e)
    assert header["sessionId"] == (first["agentId"] if "subagents" in sample.parts else first["sessionId"])
    assert header["startedAt"] == next(e["timestamp"] for e in entries if "timestamp" in e)
    assert header["producer"]["method"] == "converter" and header["producer"]["source"]["format"]


@pytest.mark.parametrize(("data", "why"), [
    (b'{"type":"summary","summary":"t","leafUuid":"x"}\n', "no line carries a sessionId"),
    (b"[1, 2]\n", "not a JSON object"),
    (b'{"type":"user","sessionId":"s","message":{"role":"user","content":NaN}}\n', "not valid JSON"),
    (b'{"type":"user","sessionId":"s","message":{"role":"user","content":"\\ud800"}}\n', "unpaired surrogate"),
    (b'{"type":"user","sessionId":"s","timestamp":"yesterday","message":{"role":"user","content":"x"}}\n',
     "not an RFC 3339"),
], ids=["summary-only", "array", "nan", "surrogate", "timestamp"])
def test_non_transcripts_are_refused_in_one_line(data: bytes, why: str, tmp_path: Path) -> None:
    done = convert(data, tmp_path)
    message = done.stderr.decode()
    assert done.returncode == 1 and done.stdout == b""
    assert why in message and message.count("\n") == 1 and "Traceback" not in message


# --- compare_streams ------------------------------------------------------------------

HEADER = {"type": "session", "seq": 0, "id": "h", "startedAt": "2026-01-01T00:00:00Z",
          "producer": {"name": "p", "instance": "run-1"},
          "workspace": {"roots": [{"id": "w", "path": "/w", "vcs": {"type": "git", "branch": "main"}}]}}
CALL = {"type": "tool_result", "seq": 1, "id": "r1", "ts": "2026-01-01T00:00:01Z", "durationMs": 5}


def stream(*records: dict) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


def changed(record: dict, pointer: list, value) -> dict:
    copy = json.loads(json.dumps(record))
    target = copy
    for key in pointer[:-1]:
        target = target[key]
    target[pointer[-1]] = value
    return copy


def test_identical_streams_and_another_producer_instance_compare_equal() -> None:
    assert compare_streams(stream(HEADER, CALL), stream(HEADER, CALL)) == []
    other_run = changed(HEADER, ["producer", "instance"], "run-2")
    assert compare_streams(stream(HEADER, CALL), stream(other_run, CALL)) == []
    # ...but only the instance: the producer's name is compared.
    assert compare_streams(stream(HEADER), stream(changed(HEADER, ["producer", "name"], "q"))) != []


def test_a_difference_names_line_pointer_and_both_values() -> None:
    later = changed(HEADER, ["startedAt"], "2003-04-05T06:07:08Z")
    assert compare_streams(stream(HEADER, CALL), stream(later, CALL)) == [
        'line 1 (session h) /startedAt: "2026-01-01T00:00:00Z" -> "2003-04-05T06:07:08Z"'
    ]
    removed = {k: v for k, v in CALL.items() if k != "durationMs"}
    assert compare_streams(stream(HEADER, CALL), stream(HEADER, removed)) == [
        "line 2 (tool_result r1) /durationMs: 5 -> (absent)"
    ]


def test_line_counts_types_and_unreadable_lines_are_reported() -> None:
    lines = compare_streams(stream(HEADER, CALL), stream(HEADER))
    assert lines[0] == "the streams have 2 and 1 lines" and lines[1].startswith("line 2 (tool_result r1) whole line")
    swapped = compare_streams(stream(HEADER, CALL), stream(HEADER, {"type": "message", "seq": 1, "id": "r1"}))
    assert swapped == ["line 2: a tool_result r1 record -> a message r1 record"]
    assert compare_streams(b"not json\n", b"not json either\n") == ['line 1 whole line: "not json" -> "not json either"']


def test_the_comparison_is_short() -> None:
    many = [dict(CALL, seq=n, id=f"r{n}") for n in range(1, 60)]
    shuffled = [dict(r, ts="2026-01-01T00:00:02Z") for r in many]
    lines = compare_streams(stream(HEADER, *many), stream(HEADER, *shuffled))
    assert len(lines) == producing.DIFF_LIMIT and lines[-1] == "... and 40 more differences"


@pytest.mark.parametrize(("pointer", "value", "rules"), [
    (["startedAt"], "2003-04-05T06:07:08Z", ["ASR-154"]),
    (["workspace", "roots", 0, "vcs", "head"], "0" * 40, ["ASR-159"]),
    (["workspace", "roots", 0, "path"], "/elsewhere", ["ASR-267"]),
    (["producer", "name"], "other", ["ASR-000"]),  # no rule names it: the variant's rules
])
def test_rules_follow_the_member_that_changed(pointer: list, value, rules: list[str]) -> None:
    found = differences(stream(HEADER), stream(changed(HEADER, pointer, value)))
    assert rules_of(found, ["ASR-000"]) == rules


def test_rules_of_records_by_type() -> None:
    def rules(kind: str, pointer: str) -> list[str]:
        return rules_of([StreamDifference(2, kind, kind, pointer, 1, 2)], ["ASR-000"])

    assert rules("tool_result", "/durationMs") == ["ASR-261"]
    assert rules("tool_result", "/exec/cwd/path") == ["ASR-267"]
    assert rules("message", "/ts") == ["ASR-103", "ASR-104"]
    assert rules("state", "/state") == ["ASR-169"]
    assert rules("config_change", "/permissionMode") == ["ASR-187"]
    assert rules("hook", "/exitCode") == ["ASR-287"]


# --- damaged_inputs ---------------------------------------------------------------------


def test_damaged_inputs_are_deterministic_and_damaged() -> None:
    data = SAMPLE_FILES[0].read_bytes()
    damaged = damaged_inputs(data)
    assert set(damaged) == {"truncated", "flipped", "empty"} and damaged == damaged_inputs(data)
    assert damaged["empty"] == b""
    cut = damaged["truncated"]
    assert data.startswith(cut) and not cut.endswith(b"\n") and b"\n" in cut
    last = cut.rsplit(b"\n", 1)[1]
    full_last = data.rstrip(b"\n").rsplit(b"\n", 1)[1]
    assert 0 < len(last) < len(full_last)
    flipped = damaged["flipped"]
    assert len(flipped) == len(data) and sum(a != b for a, b in zip(data, flipped, strict=True)) == len(producing.FLIP_AT)
    assert damaged_inputs(b"") == {"truncated": b"", "flipped": b"", "empty": b""}


# --- check_output -----------------------------------------------------------------------


def test_check_output_names_rule_and_seq() -> None:
    valid = example_convert(SAMPLE_FILES[0].read_bytes())  # the example's own conversion, in process
    assert check_output(valid) == []
    headless = b"\n".join(valid.splitlines()[1:]) + b"\n"
    problems = check_output(headless)
    assert problems and problems[0].startswith("ASR-003 (line 1, seq 1): ")


def test_a_derived_link_to_no_call_is_an_invented_link() -> None:
    valid = example_convert(SAMPLE_FILES[0].read_bytes())  # the example's own conversion, in process
    header = valid.splitlines()[0]
    result = {"type": "tool_result", "seq": 1, "id": "r1", "callId": "c9", "linkage": "derived", "status": "unknown",
              "content": []}
    call = {"type": "tool_call", "seq": 2, "id": "r2", "callId": "c9", "callIdSource": "derived", "name": "Bash"}
    invented = header + b"\n" + json.dumps(result).encode() + b"\n"
    assert check_output(invented) == [
        "ASR-257 (line 2, seq 1): linkage is \"derived\" but no tool_call in the stream has callId 'c9': "
        "a derived link must name the call it was derived from"
    ]
    assert check_output(invented + json.dumps(call).encode() + b"\n") == []
    # An exact link to no call is an orphan, which producers keep (ASR-266).
    orphan = header + b"\n" + json.dumps(dict(result, linkage="exact")).encode() + b"\n"
    assert check_output(orphan) == []


# --- variants and the runner ------------------------------------------------------------


def test_each_variant_changes_one_thing_from_the_baseline(tmp_path: Path) -> None:
    found = variants()
    assert list(found) == ["baseline", "again", "clock", "timezone", "locale", "cwd", "home"]
    base = found["baseline"].setting(tmp_path, "/somewhere")
    assert base.env["TZ"] == "UTC" and base.cwd == "/somewhere"
    assert found["again"].setting(tmp_path, "/somewhere") == base
    assert found["timezone"].setting(tmp_path, None).env["TZ"] in (producing.FAR_ZONE, producing.FAR_ZONE_POSIX)
    moved = found["cwd"].setting(tmp_path, "/somewhere")
    assert moved.env == base.env and Path(moved.cwd).is_dir() and not any(Path(moved.cwd).iterdir())
    home = found["home"].setting(tmp_path, None)
    assert Path(home.env["HOME"]).is_dir() and home.cwd is None and home.env["HOME"] != base.env.get("HOME")
    locale = found["locale"]
    if locale.available:
        assert locale.setting(tmp_path, None).env["LC_ALL"] != base.env["LC_ALL"]
    else:
        assert "locale" in locale.unavailable


def test_the_clock_variant_is_unavailable_with_a_reason_without_libfaketime(monkeypatch) -> None:
    monkeypatch.setattr(producing, "find_faketime", lambda: None)
    clock = variants()["clock"]
    assert not clock.available and "libfaketime is not installed" in clock.unavailable


def test_the_clock_variant_moves_the_clock_of_the_conversion(tmp_path: Path) -> None:
    clock = variants()["clock"]
    if not clock.available:
        pytest.skip(clock.unavailable)
    env = {**__import__("os").environ, **clock.setting(tmp_path, None).env}
    done = subprocess.run([sys.executable, "-c", "import time; print(time.gmtime().tm_year)"],
                          capture_output=True, text=True, env=env, timeout=30)
    assert done.stdout.strip() == "2003"


def test_relative_commands_still_run_from_another_folder(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "conv").write_text("")
    (tmp_path / "conv.py").write_text("")
    command = ("./bin/conv", "python3", "conv.py", "-v", "{input}", "missing.py")
    assert anchored(command, tmp_path, "{input}") == (
        str(tmp_path / "bin" / "conv"), "python3", str(tmp_path / "conv.py"), "-v", "{input}", "missing.py")


class _Target:
    name = "asr-from-claude-code"
    command = (str(CONVERTER),)
    protocol = "oneshot"
    timeout = 30.0
    cwd = None
    placeholder = None
    pass_env = ()
    policy = None


def test_the_runner_converts_under_each_variant_and_keeps_the_baseline(tmp_path: Path) -> None:
    runner = ProducerRunner(_Target(), tmp_path / "scratch")
    try:
        first = runner.baseline(SAMPLE_FILES[0])
        assert first.outcome.value == "converted" and runner.baseline(SAMPLE_FILES[0]) is first
        for name in ("again", "timezone", "cwd", "home"):
            assert compare_streams(first.stream, runner.convert(SAMPLE_FILES[0], name).stream) == []
    finally:
        runner.close()
    assert not (tmp_path / "scratch").exists()
