"""How the command line becomes implementations under test: roles, producer inputs, manifests,
side-by-side keys, and clear errors for what cannot be used."""

from __future__ import annotations

from pathlib import Path

import pytest

from asr_conformance.harness.adapters.targets import TargetError, expand_inputs, resolve_targets

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SAMPLES = EXAMPLES / "claude-code-converter" / "samples"
CONVERTER = EXAMPLES / "claude-code-converter" / "asr-from-claude-code"


def resolve(*implementations: str, role=None, inputs=(), expectations=None):
    return resolve_targets(list(implementations), role, list(inputs), False, None, expectations)


def test_folders_globs_and_files_expand_in_a_stable_order(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "one.log").write_text("1")
    (tmp_path / "a" / ".hidden").write_text("h")
    (tmp_path / "b.log").write_text("2")
    found = expand_inputs([str(tmp_path / "a"), str(tmp_path / "*.log"), str(tmp_path / "b.log")])
    assert [i.id for i in found] == ["one.log", "b.log"]  # hidden files left out, duplicates once


def test_same_names_under_different_roots_get_distinct_ids(tmp_path: Path) -> None:
    for folder in ("x", "y"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "s.log").write_text(folder)
    found = expand_inputs([str(tmp_path / "x"), str(tmp_path / "y")])
    assert [i.id for i in found] == ["s.log", "s.log~2"]


@pytest.mark.parametrize("pattern", ["missing-folder", "*.nothing-matches"])
def test_inputs_that_match_nothing_are_errors(tmp_path: Path, pattern: str) -> None:
    with pytest.raises(TargetError, match="--inputs=.*(no such file|matches no file)"):
        expand_inputs([str(tmp_path / pattern)])


def test_role_defaults_follow_the_contract() -> None:
    assert resolve(str(CONVERTER), inputs=[str(SAMPLES)])[0].roles == ("producer",)
    assert resolve(str(EXAMPLES / "reference-validator"))[0].roles == ("validator",)
    assert resolve(str(EXAMPLES / "reference.toml"))[0].roles == ("validator", "reader", "producer")
    assert resolve(str(EXAMPLES / "reference.toml"), role="reader")[0].roles == ("reader",)


def test_the_bundled_reference_plays_every_role_it_can() -> None:
    (target,) = resolve()
    assert not target.given and set(target.roles) == {"validator", "reader", "producer"}
    codex = SAMPLES.parent.parent / "codex-converter" / "samples"
    gemini = SAMPLES.parent.parent / "gemini-converter" / "samples"
    expected = ({p.relative_to(SAMPLES).as_posix() for p in SAMPLES.rglob("*.jsonl")} | {p.name for p in codex.glob("*.jsonl")}
                | {p.name for p in gemini.iterdir()})
    assert {i.id for i in target.inputs} == expected


def test_a_manifest_brings_its_inputs_and_expectations(tmp_path: Path) -> None:
    (tmp_path / "known.toml").write_text("")
    manifest = tmp_path / "conv.toml"
    manifest.write_text(f'name = "conv"\nroles = ["producer"]\ncommand = ["{CONVERTER}"]\n'
                        f'inputs = ["{SAMPLES}/*.jsonl"]\nexpectations = "known.toml"\n')
    (target,) = resolve(str(manifest))
    assert target.expectations == tmp_path / "known.toml" and len(target.inputs) >= 3


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"implementations": [str(CONVERTER)], "role": "producer"}, "needs --inputs"),
        ({"implementations": ["no-such-program"]}, "no such file"),
        ({"implementations": [str(SAMPLES)]}, "is a directory"),
        ({"implementations": [str(EXAMPLES / "reference-oneshot.toml")], "role": "reader"}, "do not include reader"),
    ],
    ids=["producer-without-inputs", "missing", "folder", "role-not-in-manifest"],
)
def test_unusable_implementations_are_errors_that_say_why(arguments: dict, message: str) -> None:
    with pytest.raises(TargetError, match=message):
        resolve(*arguments["implementations"], role=arguments.get("role"))


def test_side_by_side_keys_stay_apart() -> None:
    keys = [t.key for t in resolve(str(EXAMPLES / "reference.toml"), str(EXAMPLES / "reference.toml"))]
    assert keys == ["asr-conformance-reference", "asr-conformance-reference-2"]
