"""docs/contract.md names limits and defaults; each is compared here with the code's own value, so the
contract cannot drift from what the harness does (a limit changed in the code fails this test until the
contract says so).  Also: every size the contract writes is one of the code's limits, the environment
allow-list names every variable the code passes, and the manifest table has every manifest key."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from asr_conformance.harness.adapters import persistent, startup
from asr_conformance.harness.adapters.oneshot import DEFAULT_TIMEOUT
from asr_conformance.harness.isolation import allowlist, limits, policies, processes, sandbox, visibility
from asr_conformance.vocabulary import redaction

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = (ROOT / "docs" / "contract.md").read_text()
MiB, GiB = 2**20, 2**30


def _mib(size: int) -> str:
    return f"{size // GiB} GiB" if size >= GiB and size % GiB == 0 else f"{size // MiB} MiB"


#: (what the contract writes, the code's value it must equal, how that value is written).
LIMITS = [
    ("4 MiB per one-shot validator or reader answer", processes.STDOUT_LIMIT, _mib),
    ("default 64 MiB", policies.DEFAULT_MAX_OUTPUT, _mib),
    ("at most 1 GiB", policies.MAX_OUTPUT_CAP, _mib),
    ("8 MiB per persistent reply line", persistent.LINE_LIMIT, _mib),
    ("last 4096 bytes of stderr", processes.STDERR_TAIL, str),
    ("30 seconds unless", DEFAULT_TIMEOUT, lambda v: f"{v:g}"),
    ("at most 3600 seconds", policies.MAX_TIMEOUT, lambda v: f"{v:g}"),
    ("at most 5 seconds, for the process to exit", persistent.STOP_GRACE, lambda v: f"{v:g}"),
    ("Starts that fail three times in a row", persistent.MAX_FAILED_STARTS, lambda v: {3: "three"}.get(v, str(v))),
    ("gave up after 3 failed starts in a row", persistent.MAX_FAILED_STARTS, str),
    ("waiting at most 10 seconds", startup.ONESHOT_WAIT, lambda v: f"{v:g}"),
    ("| address space | 8 GiB |", limits.DEFAULTS.memory, _mib),
    ("| CPU time | 600 s over", limits.DEFAULTS.cpu, str),
    ("| processes and threads | 256 |", limits.DEFAULTS.processes, str),
    ("| open files | 1024 |", limits.DEFAULTS.open_files, str),
    ("| file size | 256 MiB |", limits.DEFAULTS.file_size, _mib),
    ("| scratch disk | 256 MiB each |", limits.DEFAULTS.disk, _mib),
    ("(`/dev/shm` at most 64 MiB)", sandbox.SHM_CAP, _mib),
    ("runs in a **user namespace as uid 65534**", sandbox.SANDBOX_UID, str),
    ("and at least every 10 seconds", sandbox.ROOT_ONLY_REFRESH, lambda v: f"{v:g}"),
    ("its top changes and at least every 10 seconds", visibility.WALK_REFRESH, lambda v: f"{v:g}"),
    ("with more than 50000 folders below it", visibility.MAX_WALK, str),
    ("values of 4 characters or more", redaction.MIN_LENGTH, str),
]


@pytest.mark.parametrize(("phrase", "value", "written"), LIMITS, ids=[phrase for phrase, _, _ in LIMITS])
def test_each_limit_the_contract_names_is_the_codes(phrase: str, value: object, written) -> None:
    number = re.search(r"\d+ [MG]iB|\d+|three", phrase)
    assert number is not None
    expected = phrase.replace(number.group(0), written(value) if "iB" not in number.group(0) else _mib(int(value)))
    assert re.sub(r"\s+", " ", expected) in re.sub(r"\s+", " ", CONTRACT), \
        f"docs/contract.md should say {expected!r} (the code's value is {value})"


def test_every_size_the_contract_writes_is_a_limit_of_the_code() -> None:
    known = {_mib(v) for v in (processes.STDOUT_LIMIT, policies.DEFAULT_MAX_OUTPUT, policies.MAX_OUTPUT_CAP,
                               persistent.LINE_LIMIT, limits.DEFAULTS.memory, limits.DEFAULTS.file_size,
                               limits.DEFAULTS.disk, sandbox.SHM_CAP)}
    before, rest = CONTRACT.split("## 7. What a validator is fuzzed with", 1)
    limits_text = before + rest.split("## 8. How answers are judged", 1)[1]  # section 7's sizes are of generated data
    written = set(re.findall(r"\b\d+ [MG]iB\b", limits_text))
    assert written <= known, f"sizes the code does not use: {sorted(written - known)}"


def test_the_environment_allow_list_names_what_the_code_passes() -> None:
    section = CONTRACT.split("- **Environment.**", 1)[1].split("\n- **", 1)[0]
    for name in (*allowlist._ALLOWED, "LC_*", "HOME", "TMPDIR", "PYTHONUNBUFFERED=1", allowlist.MARKER):
        assert f"`{name}`" in section, name
    assert "pass_env" in section and "--pass-env" in section


def test_the_manifest_table_has_every_manifest_key() -> None:
    schema = json.loads((ROOT / "suite" / "schemas" / "manifest.schema.json").read_text())
    table = CONTRACT.split("## 3. The manifest", 1)[1].split("**Placeholders.**", 1)[0]
    keys = set(re.findall(r"^\| `([a-z_-]+)` \|", table, re.MULTILINE))
    assert keys == set(schema["properties"]), (sorted(set(schema["properties"]) - keys), sorted(keys - set(schema["properties"])))


def test_the_contract_says_inputs_are_blind_copies_not_corpus_files() -> None:
    assert "corpus file itself" not in CONTRACT and "pytest process's environment" not in CONTRACT
    assert "blind staged copy" in CONTRACT
