"""Broken variants of the toy pack, for the suite's tests: each is a pack the suite must not trust.

Registered by the tests through an injected entry point (``asr_conformance.format_packs``)."""

from __future__ import annotations

import time
from dataclasses import replace

from asr_toy_pack import PACK
from asr_toy_pack.witness import FORMAT, ToyWitness

from asr_conformance.fidelity.facts import SourceFacts


class HollowWitness(ToyWitness):
    """Accepts the input and reports nothing: no calls, results, messages or times."""

    def read(self, data: bytes) -> SourceFacts:
        super().read(data)
        return SourceFacts(format=FORMAT)


class RaisingWitness(ToyWitness):
    def read(self, data: bytes) -> SourceFacts:
        raise RuntimeError("the toy reader broke")


class HangingWitness(ToyWitness):
    def read(self, data: bytes) -> SourceFacts:
        time.sleep(600)
        raise AssertionError("unreachable")


class MalformedWitness(ToyWitness):
    def read(self, data: bytes) -> SourceFacts:
        facts = super().read(data)
        facts.calls = [{"id": call.call_id} for call in facts.calls]  # type: ignore[misc]
        return facts


HOLLOW = replace(PACK, name="hollow-toy-pack", witness=HollowWitness())
RAISING = replace(PACK, name="raising-toy-pack", witness=RaisingWitness())
HANGING = replace(PACK, name="hanging-toy-pack", witness=HangingWitness(), time_limit=1.0)
MALFORMED = replace(PACK, name="malformed-toy-pack", witness=MalformedWitness())
