"""What an adapter must offer for each role, whatever the contract (one-shot or persistent) behind it.

The harness judges a role through one method and ``close``; ``Target.validator_adapter()``,
``reader_adapter()`` and ``producer_adapter()`` (or ``Target.adapter(role)``) return an object meeting
the role's protocol, so the judges never ask which contract a target speaks.
``PersistentImplementation`` meets all three (one process answers every request of a worker);
``OneShotValidator``, ``OneShotReader`` and ``OneShotProducer`` meet one each.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, runtime_checkable

from asr_conformance.harness.adapters.answers import Conversion, ReadAnswer, Verdict
from asr_conformance.vocabulary.protocol import Started


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


@runtime_checkable
class Announcing(Protocol):
    """An adapter that learns the implementation's name and version from a handshake (the persistent protocol)."""

    @property
    def implementation(self) -> Started | None: ...


RoleAdapter = ValidatorAdapter | ReaderAdapter | ProducerAdapter


def announced(adapter: RoleAdapter) -> Started | None:
    """What the implementation said of itself in its handshake; None for an adapter without one (one-shot)."""
    return adapter.implementation if isinstance(adapter, Announcing) else None


#: Each role and the protocol its adapter meets.
PROTOCOLS: dict[str, type] = {"validator": ValidatorAdapter, "reader": ReaderAdapter, "producer": ProducerAdapter}
