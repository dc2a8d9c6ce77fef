"""What an adapter must offer for each role, whatever the contract (one-shot or persistent) behind it.

The harness judges a role through one method and ``close``; ``Target.adapter(role)`` returns an
object meeting the role's protocol, so the judges never ask which contract a target speaks.
``PersistentImplementation`` meets all three (one process answers every request of a worker);
``OneShotValidator``, ``OneShotReader`` and ``OneShotProducer`` meet one each.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, runtime_checkable

from asr_conformance.harness.answers import Conversion, ReadAnswer, Verdict


@runtime_checkable
class ValidatorAdapter(Protocol):
    """A validator: a stream in, a verdict (accept or reject, with the rules named) out."""

    def validate(self, stream: Path) -> Verdict: ...

    def close(self) -> None: ...


@runtime_checkable
class ReaderAdapter(Protocol):
    """A reader: a stream in, the view it builds of it out."""

    def read(self, stream: Path) -> ReadAnswer: ...

    def close(self) -> None: ...


@runtime_checkable
class ProducerAdapter(Protocol):
    """A producer: a native input in, a stream (or a refusal) out."""

    def convert(self, source: Path) -> Conversion: ...

    def close(self) -> None: ...


RoleAdapter = ValidatorAdapter | ReaderAdapter | ProducerAdapter
#: Each role and the protocol its adapter meets.
PROTOCOLS: dict[str, type] = {"validator": ValidatorAdapter, "reader": ReaderAdapter, "producer": ProducerAdapter}
