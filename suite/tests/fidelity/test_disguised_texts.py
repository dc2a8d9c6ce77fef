"""A converter that recognises inputs by their text (examples/hostile/recognises-texts) behaves on copies that
keep the texts and is caught on copies whose words are swapped (``fidelity.disguise_text``)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from asr_conformance.fidelity.disguise import disguise
from asr_conformance.harness.judging.fidelity import judge_fidelity

ROOT = Path(__file__).resolve().parents[3]
HOSTILE = ROOT / "examples" / "hostile" / "recognises-texts"
HONEST = ROOT / "examples" / "claude-code-converter" / "asr-from-claude-code"
SAMPLES = [ROOT / "examples" / "claude-code-converter" / "samples" / n for n in ("plain-chat.jsonl", "fix-parser-test.jsonl")]


def _judged(converter: Path, data: bytes, folder: Path) -> list[str]:
    source = folder / "session.jsonl"
    source.write_bytes(data)
    stream = subprocess.run([sys.executable, str(converter), str(source)], capture_output=True, check=True).stdout
    result = judge_fidelity(data, stream)
    assert result.not_checked is None and result.error is None
    return result.rules


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_text_matching_converter_passes_on_kept_texts_and_fails_on_swapped_ones(sample: Path, seed: int,
                                                                                  tmp_path: Path) -> None:
    data = sample.read_bytes()
    assert _judged(HOSTILE, disguise(data, seed, texts=False), tmp_path) == [], "without the word swap it passes"
    assert _judged(HOSTILE, disguise(data, seed), tmp_path) == ["ASR-157"], "the swapped prompts are not its samples"


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_the_honest_converter_follows_a_copy_with_swapped_words(sample: Path, tmp_path: Path) -> None:
    assert _judged(HONEST, disguise(sample.read_bytes(), 4), tmp_path) == []


def test_swapped_texts_keep_their_kind() -> None:
    """Prose keeps its glue words, code its keywords and punctuation, paths their slashes, commands their tools."""
    line = ('{"type":"user","sessionId":"7b2e4c1a-93d5-4f60-8a1e-2c5d9b0f7e31","message":{"role":"user","content":'
            '"Can you fix the parser in /srv/app/src/lexer.rs? Run `cargo test -p lexer` and show me the output."}}\n')
    copy = disguise(line.encode(), 9).decode()
    assert "parser" not in copy and "lexer" not in copy
    assert re.search(r"Can you fix the [a-z]{6} in /[a-z]{3}/app/src/([a-z]{5})\.rs\? Run `cargo test -p \1` and", copy)
    assert len(copy) == len(line)
