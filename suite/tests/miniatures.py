"""In-process validators and producers for the project's tests: each validator meets ``ValidatorAdapter``
(``harness/adapters/roles.py``) and each producer is the runner the producer tests take, without starting a
process, so that what a judge decides about an implementation's answers is tested on every corpus case (every
test of an input) in milliseconds.  A certification run of the matching program under ``examples/``
proves the wiring (process, protocol, report) on a slice; these prove the judging on the whole corpus.

``fuzz_session`` and ``fuzz_failure`` do the same for fuzzing: a validator fuzz test of the conformance suite
(``conformance/test_validator_fuzz.py``) called in process with the session its ``asr_fuzz`` fixture would give,
so that shrinking, budgets and what a property fails on are tested without a pytest start-up."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from asr_conformance.harness.adapters.answers import Conversion, Outcome, ReadAnswer, Verdict
from asr_conformance.harness.adapters.roles import ValidatorAdapter
from asr_conformance.harness.fuzzing.profiles import ShrinkBudget, ValidatorFuzzSession
from asr_conformance.harness.judging.producer import (
    INDEPENDENCE,
    ProducerRunner,
    Setting,
    Variant,
    damaged_inputs,
    variants,
)
from asr_conformance.harness.judging.producer_case import run_damaged_case, run_output_case, run_variant_case
from asr_conformance.harness.judging.reader import run_reader_case
from asr_conformance.harness.judging.validator import run_validator_case
from asr_conformance.reference.claude_code_converter import convert as claude_code_convert
from asr_conformance.reference.converter_cli import Refused
from asr_conformance.reference.reader import read_view
from asr_conformance.vocabulary.cases import Case


class MiniatureValidator:
    """A validator whose answer is a Python function of the stream; it remembers what it was asked."""

    def __init__(self, answer: Callable[[Path], Verdict]) -> None:
        self._answer = answer
        self.asked: list[Path] = []
        self.closed = False

    def validate(self, stream: Path) -> Verdict:
        self.asked.append(stream)
        return self._answer(stream)

    def close(self) -> None:
        self.closed = True


def accept_all() -> MiniatureValidator:
    """``examples/misbehaving/accept-all`` in process: every stream accepted."""
    return MiniatureValidator(lambda stream: Verdict(Outcome.ACCEPT, sent=f"accept-all {stream}"))


def reject_all() -> MiniatureValidator:
    """``examples/misbehaving/reject-all`` in process: every stream rejected, no rule named."""
    return MiniatureValidator(lambda stream: Verdict(Outcome.REJECT, sent=f"reject-all {stream}"))


def judge_cases(cases: list[Case], adapter: MiniatureValidator, strict: bool = False) -> dict[str, tuple[str, str]]:
    """Each case's outcome (passed, failed or skipped) and message, from the corpus test's own body
    (``run_validator_case``) called in process with ``adapter``."""
    judged: dict[str, tuple[str, str]] = {}
    for case in cases:
        try:
            run_validator_case(case, adapter, lambda **fields: None, strict)
        except pytest.fail.Exception as failure:
            judged[case.id] = ("failed", str(failure))
        except pytest.skip.Exception as skip:
            judged[case.id] = ("skipped", str(skip))
        else:
            judged[case.id] = ("passed", "")
    return judged


# --- readers -----------------------------------------------------------------------------


class MiniatureReader:
    """A reader whose view is a Python function of the stream, given back as JSON text is read (as a one-shot
    reader's standard output is); it remembers what it was asked."""

    def __init__(self, view: Callable[[Path], dict[str, Any]]) -> None:
        self._view = view
        self.asked: list[Path] = []
        self.closed = False

    def read(self, stream: Path) -> ReadAnswer:
        self.asked.append(stream)
        return ReadAnswer(Outcome.VIEWED, view=json.loads(json.dumps(self._view(stream), ensure_ascii=False)))

    def close(self) -> None:
        self.closed = True


def reference_reader() -> MiniatureReader:
    """``examples/reference-reader`` in process: the package's reference reader."""
    return MiniatureReader(read_view)


def judge_reads(cases: list[Case], adapter: MiniatureReader) -> dict[str, tuple[str, str]]:
    """Each reader case's outcome (passed, failed or skipped) and message, from the reader corpus test's own body
    (``run_reader_case``) called in process with ``adapter``."""
    return {case.id: _outcome(lambda c=case: run_reader_case(c, adapter, _ignore)) for case in cases}


# --- producers ---------------------------------------------------------------------------

#: A miniature producer's conversion: the input's bytes and the conversion's setting (a variant's working directory
#: and variables) in, a stream out; ``Refused`` is a refusal with its message, as the converters' shell words it.
Conversion_ = Callable[[bytes, Setting], bytes]


@dataclass(frozen=True)
class _InProcessTarget:
    """What ``ProducerRunner`` reads of a target, for a producer with no command."""

    name: str
    command: tuple[str, ...] = ()
    protocol: str = "oneshot"
    timeout: float = 60.0
    cwd: str | None = None
    placeholder: str | None = None
    pass_env: tuple[str, ...] = ()
    policy: None = None


class MiniatureProducer(ProducerRunner):
    """A producer whose conversion is a Python function (``Conversion_``), behind the runner the producer tests'
    own bodies (``harness/judging/producer_case.py``) take: baselines kept, each variant's setting made as for a
    process (fresh working directory and HOME under the scratch folder), the input read from its file. It remembers
    each conversion it was asked for, by input name and variant."""

    def __init__(self, name: str, answer: Conversion_, scratch: Path) -> None:
        super().__init__(_InProcessTarget(name), scratch)
        self._answer = answer
        self.asked: list[tuple[str, str]] = []

    def convert(self, source: Path, variant: str | Variant = "baseline") -> Conversion:
        chosen = self.variants[variant] if isinstance(variant, str) else variant
        if not chosen.available:
            raise ValueError(f"variant {chosen.name} is unavailable: {chosen.unavailable}")
        self.asked.append((Path(source).name, chosen.name))
        setting = chosen.setting(self._scratch(), None)
        try:
            stream = self._answer(Path(source).read_bytes(), setting)
        except Refused as why:
            return Conversion(Outcome.REFUSED, refusal=f"{self.target.name}: refused: {why}")
        return Conversion(Outcome.CONVERTED, stream=stream)


def example_records(data: bytes) -> list[dict[str, Any]]:
    """The example converter's records for ``data`` (its own conversion, imported from the package)."""
    return [json.loads(line) for line in claude_code_convert(data).decode("utf-8").split("\n") if line.strip()]


def emits_invalid_stream() -> Conversion_:
    """``examples/misbehaving/emits-invalid-stream`` in process: every tool_result gets exitCode 2^32 (ASR-260);
    a stream without tool results loses its header (ASR-003)."""

    def answer(data: bytes, setting: Setting) -> bytes:
        records = example_records(data)
        results = [r for r in records if r["type"] == "tool_result"]
        for result in results:
            result["exec"] = {"exitCode": 2**32}
        return _written(records if results else records[1:])

    return answer


def reads_working_directory() -> Conversion_:
    """``examples/misbehaving/reads-working-directory`` in process: the first workspace root's vcs.remote is the
    conversion's working directory (ASR-159)."""

    def answer(data: bytes, setting: Setting) -> bytes:
        header, *rest = example_records(data)
        roots = header.setdefault("workspace", {"roots": [{"id": "project", "path": None}]})["roots"]
        roots[0].setdefault("vcs", {"type": "git"})["remote"] = "file://" + (setting.cwd or os.getcwd())
        header["profiles"] = sorted(set(header["profiles"]) | {"coding"})
        return _written([header, *rest])

    return answer


def _written(records: list[dict[str, Any]]) -> bytes:
    """Records as the seeded-bug scripts write them back (``json.dumps`` with its default separators)."""
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")


def judge_producer(inputs: list[Path], runner: ProducerRunner, folder: Path) -> dict[str, tuple[str, str]]:
    """Each producer test of the stream and its environment (output, determinism, the independence variants, the
    damaged copies) on each input: its outcome (passed, failed or skipped) and message, by the test ID a run gives
    it (``test_independent_of[plain-chat.jsonl-cwd]``), from the conformance tests' own bodies called in process."""
    found = variants()
    checks: list[tuple[str, Callable[[Path], None]]] = []
    for source in inputs:
        checks.append((f"test_output_conforms[{source.name}]",
                       lambda s=source: run_output_case(s, runner, _ignore)))
        checks.append((f"test_deterministic[{source.name}]",
                       lambda s=source: run_variant_case(s, runner, found["again"], _ignore)))
        checks += [(f"test_independent_of[{source.name}-{name}]",
                    lambda s=source, v=found[name]: run_variant_case(s, runner, v, _ignore)) for name in INDEPENDENCE]
        for damage in sorted(damaged_inputs(b"")):
            copies = folder / f"{source.name}-{damage}"
            copies.mkdir(parents=True, exist_ok=True)
            checks.append((f"test_damaged_input[{source.name}-{damage}]",
                           lambda s=source, d=damage, c=copies: run_damaged_case(s, runner, d, c, _ignore)))
    return {test: _outcome(check) for test, check in checks}


def _ignore(**fields: object) -> None:
    """A test's record, not kept."""


def _outcome(check: Callable[[], None]) -> tuple[str, str]:
    try:
        check()
    except pytest.fail.Exception as failure:
        return "failed", str(failure)
    except pytest.skip.Exception as skip:
        return "skipped", str(skip)
    return "passed", ""


# --- fuzzing ------------------------------------------------------------------------------


def fuzz_session(adapter: ValidatorAdapter, folder: Path, hypothesis_settings: settings,
                 budget: ShrinkBudget | None = None, seed: int | None = None,
                 replay: tuple[str, ...] = ("--implementation=miniature",),
                 long_shapes: bool = True) -> tuple[ValidatorFuzzSession, dict[str, object]]:
    """The session the plugin's ``asr_fuzz`` fixture builds (rules named beside each mutator's own included), and the
    facts it records for the report (``asr_shrink_steps``...), which the fixture would hand to the test's record."""
    from asr_conformance.generators.registry import ALSO_NAMED

    facts: dict[str, object] = {}
    folder.mkdir(parents=True, exist_ok=True)
    session = ValidatorFuzzSession(adapter, folder, folder / "counterexamples", list(replay), hypothesis_settings, seed,
                                   {rule: set(companions) for rule, companions in ALSO_NAMED.items()}, budget,
                                   record=facts.__setitem__, long_shapes=long_shapes)
    return session, facts


def fuzz_failure(test: Callable[..., None], session: ValidatorFuzzSession, *args: str) -> str | None:
    """Call a fuzz test's own body with ``session`` (and its parameter); its failure message, None when it passed."""
    try:
        test(session, *args)
    except pytest.fail.Exception as failure:
        return str(failure)
    return None
