"""The implementations this project ships, as the command lines that certify them, and the slices of their
seed-dependent tests (fuzz properties, disguised copies) a run can draw from.

Shared by the per-run fresh-seed certification and the release check over consecutive seeds
(``test_fresh_seeds.py``)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


@dataclass(frozen=True)
class Bundled:
    """One bundled implementation: its name, the arguments that certify it, and its seed-dependent tests."""

    name: str
    args: tuple[str, ...]
    #: ``-k`` expressions, one per seed-dependent test or property, to draw a slice from: one group per role.
    slices: tuple[tuple[str, ...], ...]

    def slice_of(self, seed: int, size: int) -> str:
        """``size`` of its slices drawn from ``seed`` (at least one of each role, so that no role is left without
        a case), as one ``-k`` expression: the same seed, the same slice."""
        draw = random.Random(seed)
        chosen = {draw.choice(sorted(group)) for group in self.slices}
        rest = sorted({e for group in self.slices for e in group} - chosen)
        chosen |= set(draw.sample(rest, max(0, min(size - len(chosen), len(rest)))))
        return " or ".join(f"({expression})" for expression in sorted(chosen))


def _validator_slices() -> tuple[str, ...]:
    from asr_conformance.generators.damage import DAMAGES
    from asr_conformance.generators.registry import registry

    return ("test_accepts_valid_streams", "test_accepts_adversarial_valid_streams",
            *(f"test_rejects_mutated_streams and {rule}" for rule in sorted(registry())),
            *(f"test_survives_damaged_bytes and {kind}" for kind in sorted(DAMAGES)))


def _reader_slices() -> tuple[str, ...]:
    from asr_conformance.generators.reader_streams import FEATURES

    return ("test_reader_views_of_valid_streams", "test_reader_views_of_adversarial_streams",
            *(f"test_reader_views_of_streams_with and {name}" for name in sorted(FEATURES)))


def _producer_slices(module: str, fmt: str) -> tuple[str, ...]:
    import importlib

    features = importlib.import_module(f"asr_conformance.generators.native.{module}").FEATURES
    return ("test_fidelity_disguised", "test_follows_source_edit",
            *(f"test_converts_generated_transcripts and {fmt}-{name}" for name in sorted(features)))


def bundled() -> list[Bundled]:
    """Every implementation the project ships that a vendor could take as an example of conformance."""
    validator, reader = _validator_slices(), _reader_slices()
    converters = [
        ("claude-code-converter", "asr-from-claude-code", "claude_code", "claude-code-jsonl"),
        ("codex-converter", "asr-from-codex", "codex", "codex-rollout-jsonl"),
        ("gemini-converter", "asr-from-gemini", "gemini", "gemini-cli-session"),
    ]
    found = [
        Bundled("reference-validator", (f"--implementation={EXAMPLES / 'reference-validator'}",), (validator,)),
        Bundled("reference-validator-persistent",
                (f"--implementation={EXAMPLES / 'reference-validator-persistent'}", "--persistent"), (validator,)),
        Bundled("reference-oneshot.toml", (f"--implementation={EXAMPLES / 'reference-oneshot.toml'}",), (validator,)),
        Bundled("reference.toml", (f"--implementation={EXAMPLES / 'reference.toml'}",),
                (validator, reader, _producer_slices("claude_code", "claude-code-jsonl"))),
        Bundled("reference-reader", (f"--implementation={EXAMPLES / 'reference-reader'}", "--role=reader"), (reader,)),
    ]
    for folder, program, module, fmt in converters:
        found.append(Bundled(program, (f"--implementation={EXAMPLES / folder / program}",
                                       f"--inputs={EXAMPLES / folder / 'samples'}", f"--source-format={fmt}"),
                             (_producer_slices(module, fmt),)))
    return found
