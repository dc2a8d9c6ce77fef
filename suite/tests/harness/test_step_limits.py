"""Every step of the suite's own in a producer certification runs under a time limit
(harness/judging/steps.py, or the pack's own limit for its code): a pack's witness reading an input, the stream compared with the input's facts
(as converted, and after a source edit), and two streams compared with each other.  Made artificially
slow, each stops the wait past its limit with the suite's error naming the step and the input; the
same slow step within a limit it fits gives the verdict it gave before (so the limit is what cut it
short).  Disguising has its own test (suite/tests/fidelity/test_disguise.py)."""

from __future__ import annotations

import secrets
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from asr_conformance.fidelity.codex import WITNESS
from asr_conformance.fidelity.codex_mutations import MUTATIONS
from asr_conformance.harness.judging import fidelity, producer, steps
from asr_conformance.harness.judging.fidelity import judge_fidelity, judge_mutation, read_facts
from asr_conformance.harness.judging.producer import bounded_differences
from asr_conformance.harness.judging.steps import StepHung
from asr_conformance.packs.guard import PackError
from asr_conformance.packs.registry import Packs, installed

ROOT = Path(__file__).resolve().parents[3]
CONVERTER = ROOT / "examples" / "codex-converter" / "asr-from-codex"
SAMPLE = ROOT / "examples" / "codex-converter" / "samples" / "cli-exec-exit-codes.jsonl"
LIMIT = 0.3
CODEX = installed().for_format(WITNESS.format)


def _convert(data: bytes, folder: Path) -> bytes:
    source = folder / "rollout.jsonl"
    source.write_bytes(data)
    return subprocess.run([sys.executable, str(CONVERTER), str(source)], capture_output=True, check=True,
                          timeout=60).stdout


@pytest.fixture(scope="module")
def converted(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, bytes]:
    data = SAMPLE.read_bytes()
    return data, _convert(data, tmp_path_factory.mktemp("converted"))


@pytest.fixture
def short_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(steps, "STEP_SECONDS", LIMIT)
    monkeypatch.setattr(steps, "STEP_SECONDS_PER_MB", 0.0)


@pytest.fixture
def hang() -> Iterator[Callable[[Callable[..., Any]], Callable[..., Any]]]:
    """Wraps a step so that it waits (at most 30 s, released when the test ends) before doing its work."""
    release = threading.Event()

    def slowed(step: Callable[..., Any]) -> Callable[..., Any]:
        return lambda *args: (release.wait(30), step(*args))[1]

    yield slowed
    release.set()


def _slowly(step: Callable[..., Any]) -> Callable[..., Any]:
    """The step, half a second late: slower than the short limit, well within the default."""
    return lambda *args: (time.sleep(LIMIT + 0.2), step(*args))[1]


def _quick(started: float) -> None:
    assert time.monotonic() - started < 5, "the wait stopped at the limit, not when the step ended"


@pytest.mark.usefixtures("short_limit")
def test_a_comparison_with_the_facts_past_its_time_names_the_step_and_input(
        converted: tuple[bytes, bytes], hang: Callable[..., Any], monkeypatch: pytest.MonkeyPatch) -> None:
    data, stream = converted
    real = fidelity.observe_fidelity
    monkeypatch.setattr(fidelity, "observe_fidelity", hang(real))
    started = time.monotonic()
    result = judge_fidelity(data, stream, name="rollout.jsonl")
    _quick(started)
    assert result.error is not None and not result.findings
    assert result.error.startswith("the suite's own step did not finish: comparing the stream with the facts of "
                                   f"rollout.jsonl ({len(data):,} bytes) took over {LIMIT:g} s"), result.error
    monkeypatch.setattr(steps, "STEP_SECONDS", 30.0)
    monkeypatch.setattr(fidelity, "observe_fidelity", _slowly(real))
    result = judge_fidelity(data, stream, name="rollout.jsonl")
    assert result.error is None and result.not_checked is None and not result.findings


@pytest.mark.usefixtures("short_limit")
def test_a_comparison_after_a_source_edit_past_its_time_names_the_step_edit_and_input(
        converted: tuple[bytes, bytes], hang: Callable[..., Any], monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    data, stream = converted
    mutation = next(m for m in MUTATIONS if m.apply(data) is not None)
    real = fidelity.observe_fidelity
    monkeypatch.setattr(fidelity, "observe_fidelity", hang(real))
    started = time.monotonic()
    result = judge_mutation(mutation, CODEX, data, stream, lambda edited: _convert(edited, tmp_path), "rollout.jsonl")
    _quick(started)
    assert result.error is not None, result
    assert f"comparing the stream with the facts of rollout.jsonl after the {mutation.name} edit" in result.error
    assert f"took over {LIMIT:g} s" in result.error
    monkeypatch.setattr(steps, "STEP_SECONDS", 30.0)
    monkeypatch.setattr(fidelity, "observe_fidelity", _slowly(real))
    result = judge_mutation(mutation, CODEX, data, stream, lambda edited: _convert(edited, tmp_path), "rollout.jsonl")
    assert result.error is None and not result.findings, result


def test_a_witness_reading_past_its_packs_limit_names_the_pack(converted: tuple[bytes, bytes],
                                                               hang: Callable[..., Any]) -> None:
    """A witness reads under its pack's limit (``FormatPack.time_limit``): past it, the pack's error names the
    pack and the step; the same slow read within a limit it fits gives the facts."""
    data = converted[0] + b"\n"  # another digest than any reading kept
    slow = _pack_reading_with(hang(WITNESS.read), LIMIT)
    started = time.monotonic()
    with pytest.raises(PackError, match=rf"did not finish reading the input within {LIMIT:g} s"):
        read_facts(slow, data)
    _quick(started)
    assert read_facts(_pack_reading_with(_slowly(WITNESS.read), 30.0), data) == WITNESS.read(data)


def _pack_reading_with(read: Callable[[bytes], Any], limit: float) -> Any:
    """The Codex pack, its witness's read replaced and its time limit set (a pack of its own, named apart)."""
    from dataclasses import replace

    class _SlowWitness:
        format = WITNESS.format
        accepts_format_name = WITNESS.accepts_format_name
        sniff = WITNESS.sniff

        def read(self, data: bytes) -> Any:
            return read(data)

    # Named apart per call: a pack that hung stays hung in the process (its thread cannot be stopped).
    return Packs.of(replace(CODEX.pack, name=f"slow-codex-{limit:g}-{secrets.token_hex(4)}", witness=_SlowWitness(),
                                  time_limit=limit)).installed[0]

    def __getattr__(self, name: str) -> Any:
        return getattr(WITNESS, name)


@pytest.mark.usefixtures("short_limit")
def test_two_streams_compared_past_their_time_name_the_step(converted: tuple[bytes, bytes], hang: Callable[..., Any],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    _, stream = converted
    real = producer.differences
    monkeypatch.setattr(producer, "differences", hang(real))
    started = time.monotonic()
    with pytest.raises(StepHung, match=rf"comparing rollout.jsonl with its baseline \({2 * len(stream):,} bytes\) "
                                       rf"took over {LIMIT:g} s"):
        bounded_differences(stream, stream, "comparing rollout.jsonl with its baseline")
    _quick(started)
    monkeypatch.setattr(steps, "STEP_SECONDS", 30.0)
    monkeypatch.setattr(producer, "differences", _slowly(real))
    assert bounded_differences(stream, stream, "comparing rollout.jsonl with its baseline") == []
    assert bounded_differences(stream, stream.replace(b'"seq":1', b'"seq":7', 1), "comparing") != []
