"""The toy agent's format pack: witness, source edits, generator and kind policy in one object.

Registered in ``pyproject.toml`` under ``asr_conformance.format_packs``; installed beside
asr-conformance, it judges every producer whose inputs are toy transcripts.
"""

from __future__ import annotations

from asr_conformance.packs.pack import FormatPack
from asr_toy_pack import edits, generator
from asr_toy_pack.witness import WITNESS

__version__ = "0.1.0"

PACK = FormatPack(
    name="toy-pack",
    version=__version__,
    witness=WITNESS,
    edits=edits.EDITS,
    generator=generator,
    # The toy agent publishes no mapping of tool names to kinds, and its transcripts record none:
    # a converter must leave kind out (ASR-253).
    kind_policy="source-only",
    loss_namespaces=("toy.",),
    file_name=lambda digest: f"toy-{digest[:16]}.json",
)
