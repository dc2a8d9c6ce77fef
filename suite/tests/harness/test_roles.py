"""One protocol per role, met by the one-shot and persistent adapters, and one Target.adapter(role)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from asr_conformance.harness.adapters.answers import Outcome
from asr_conformance.harness.adapters.oneshot import OneShotProducer, OneShotReader, OneShotValidator
from asr_conformance.harness.adapters.persistent import PersistentImplementation
from asr_conformance.harness.adapters.roles import PROTOCOLS, ProducerAdapter, ReaderAdapter, ValidatorAdapter
from asr_conformance.harness.adapters.targets import Target, TargetError

ONE_SHOT = {"validator": OneShotValidator, "reader": OneShotReader, "producer": OneShotProducer}


def _target(protocol: str, command: tuple[str, ...] = ("true",)) -> Target:
    return Target(key="t", name="t", version=None, command=command, protocol=protocol, timeout=5.0,
                  roles=("validator", "reader", "producer"))


@pytest.mark.parametrize("role", sorted(PROTOCOLS))
def test_each_one_shot_adapter_meets_its_role_only(role: str) -> None:
    adapter = _target("oneshot").adapter(role)
    assert type(adapter) is ONE_SHOT[role]
    assert [r for r, proto in PROTOCOLS.items() if isinstance(adapter, proto)] == [role]


@pytest.mark.parametrize("role", sorted(PROTOCOLS))
def test_the_persistent_adapter_meets_every_role_and_announces_the_one_asked(role: str) -> None:
    adapter = _target("persistent").adapter(role, check_protocol=True)
    assert isinstance(adapter, PersistentImplementation)
    assert isinstance(adapter, ValidatorAdapter) and isinstance(adapter, ReaderAdapter) and isinstance(adapter, ProducerAdapter)
    assert adapter.role == role and adapter.check_schemas


def test_an_unknown_role_is_an_error_naming_it() -> None:
    with pytest.raises(TargetError, match="unknown role 'judge'"):
        _target("oneshot").adapter("judge")


def test_the_adapter_a_target_gives_runs_its_command(tmp_path: Path) -> None:
    """The one-shot validator from adapter() passes its stream to the command and maps the exit status."""
    stream = tmp_path / "s.jsonl"
    stream.write_text("{}\n")
    script = tmp_path / "v.py"
    script.write_text("import sys\nsys.exit(0 if open(sys.argv[1]).read() == '{}\\n' else 1)\n")
    accepts = _target("oneshot", (sys.executable, str(script))).adapter("validator")
    assert accepts.validate(stream).outcome is Outcome.ACCEPT  # type: ignore[union-attr]
    stream.write_text("[]\n")
    assert accepts.validate(stream).outcome is Outcome.REJECT  # type: ignore[union-attr]
