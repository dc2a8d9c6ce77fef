"""The documentation stands on its own and agrees with the code.

* No file of the repository points to the product brief the contract was first
  written in (it is not part of the repository): docs/contract.md is the contract.
* Every relative Markdown link of the README and docs/ (and of the READMEs under
  examples/ and cases/) names a file that exists, and an anchor that exists in it.
* docs/contract.md shows every message type of the persistent protocol with a JSON
  example that validates against the message's published schema.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from asr_conformance.vocabulary import protocol

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = ROOT / "docs" / "contract.md"
#: Folders that are not the repository's own text.
SKIPPED_DIRS = {"__pycache__", "node_modules", "out", "counterexamples"}
#: Written in two pieces so that this file does not match itself.
FORBIDDEN = ("HARNESS" + ".md", "HARNESS" + " §", "HARNESS" + " \\u00a7")


def _repository_files() -> list[Path]:
    found = []
    for folder, subfolders, files in os.walk(ROOT):
        subfolders[:] = [d for d in subfolders
                         if not d.startswith(".") and not d.endswith(".egg-info") and d not in SKIPPED_DIRS]
        found.extend(Path(folder) / name for name in files if not name.startswith("."))
    return found


def test_nothing_points_to_the_design_brief() -> None:
    offenders = []
    for path in _repository_files():
        try:
            text = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            continue  # case streams with damaged bytes
        for number, line in enumerate(text.splitlines(), 1):
            if any(word in line for word in FORBIDDEN):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:120]}")
    assert not offenders, "point to docs/contract.md instead:\n" + "\n".join(offenders)


# --- links ------------------------------------------------------------------------------

_LINK = re.compile(r"(?<!!)\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_FENCE = re.compile(r"^[ \t]*(```|~~~).*?^[ \t]*\1", re.S | re.M)
_CODE_SPAN = re.compile(r"`[^`\n]*`")


def _documents() -> list[Path]:
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    docs += sorted((ROOT / "examples").rglob("README.md")) + [ROOT / "cases" / "README.md"]
    return [d for d in docs if d.is_file()]


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`|\*\*|\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip()).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(document: Path) -> set[str]:
    text = _FENCE.sub("", document.read_text(encoding="utf-8"))
    found: set[str] = set()
    counts: dict[str, int] = {}
    for heading in re.findall(r"^#{1,6}\s+(.+?)\s*#*\s*$", text, re.M):
        slug = _slug(heading)
        counts[slug] = counts.get(slug, -1) + 1
        found.add(slug if counts[slug] == 0 else f"{slug}-{counts[slug]}")
    return found


def _links(document: Path) -> list[str]:
    text = _CODE_SPAN.sub("", _FENCE.sub("", document.read_text(encoding="utf-8")))
    return _LINK.findall(text)


@pytest.mark.parametrize("document", _documents(), ids=lambda d: str(d.relative_to(ROOT)))
def test_relative_links_resolve(document: Path) -> None:
    broken = []
    for target in _links(document):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
            continue  # https:, mailto: ...
        path_part, _, anchor = target.partition("#")
        linked = (document.parent / path_part).resolve() if path_part else document
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked):
            broken.append(f"{target}: no heading with anchor #{anchor}")
    assert not broken, f"{document.relative_to(ROOT)}:\n" + "\n".join(broken)


# --- protocol examples --------------------------------------------------------------------

_JSON_BLOCK = re.compile(r"^```json[^\n]*\n(.*?)^```", re.S | re.M)


def _message_types() -> list[type]:
    """Every message class of the protocol module: a dataclass naming its schema."""
    return sorted(
        (value for value in vars(protocol).values()
         if isinstance(value, type) and dataclasses.is_dataclass(value) and isinstance(getattr(value, "schema", None), str)),
        key=lambda kind: kind.schema,
    )


def _json_examples() -> list[object]:
    return [json.loads(block) for block in _JSON_BLOCK.findall(CONTRACT.read_text(encoding="utf-8"))]


def test_every_json_block_of_the_contract_is_json() -> None:
    for block in _JSON_BLOCK.findall(CONTRACT.read_text(encoding="utf-8")):
        try:
            json.loads(block)
        except ValueError as error:
            pytest.fail(f"a json block of docs/contract.md is not JSON ({error}):\n{block}")


def test_the_protocol_module_and_the_schemas_agree_on_the_message_types() -> None:
    names = {kind.schema for kind in _message_types()}
    published = {p.name.removesuffix(".schema.json") for p in (ROOT / "suite" / "schemas" / "protocol").glob("*.schema.json")}
    assert names == published
    assert {kind.schema for kind in protocol.REQUESTS.values()} <= names


@pytest.mark.parametrize("kind", _message_types(), ids=lambda kind: kind.schema)
def test_the_contract_shows_each_message_with_a_valid_example(kind: type) -> None:
    validator = Draft202012Validator(protocol.schema(kind.schema))
    examples = [example for example in _json_examples() if validator.is_valid(example)]
    assert examples, f"docs/contract.md has no ```json example of the {kind.__name__} message that validates " \
                     f"against suite/schemas/protocol/{kind.schema}.schema.json"
    if kind in protocol.REQUESTS.values():
        assert any(example["cmd"] == kind.schema for example in examples)  # type: ignore[index]


def test_every_protocol_looking_example_is_a_valid_message() -> None:
    """An example with "cmd", or a reply's members, must validate against one of the schemas."""
    validators = [Draft202012Validator(protocol.schema(kind.schema)) for kind in _message_types()]
    reply_members = {"verdict", "view", "stream_path", "refused", "errored", "skipped", "roles"}
    messages = [example for example in _json_examples()
                if isinstance(example, dict) and ("cmd" in example or reply_members & set(example))]
    assert messages
    for example in messages:
        assert any(v.is_valid(example) for v in validators), f"not a valid protocol message: {example}"


def test_view_examples_validate_against_the_view_schema() -> None:
    from asr_conformance.harness.judging.views import check_view

    views = [example for example in _json_examples() if isinstance(example, dict) and "view_version" in example]
    views += [example["view"] for example in _json_examples() if isinstance(example, dict) and isinstance(example.get("view"), dict)]
    assert views
    for view in views:
        assert check_view(view) is None, check_view(view)
