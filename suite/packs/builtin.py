"""The packs the suite ships: Claude Code transcripts, Codex rollouts and Gemini CLI sessions, built from their existing modules.

Each is an ordinary ``FormatPack``; nothing in the suite knows these formats but through
these objects. ``wrap_builtin`` makes a pack of any witness registered beside them (a new
built-in format's witness module, edits module and generator module) in one call.
"""

from __future__ import annotations

import functools

from asr_conformance import __version__
from asr_conformance.fidelity.facts import Witness
from asr_conformance.packs.pack import FormatPack


def wrap_builtin(name: str, witness: Witness, generator_format: str | None = None,
                 loss_namespaces: tuple[str, ...] = (), kind_policy: str = "any") -> FormatPack:
    """A built-in pack: the witness, the edits attached to it (``*_mutations.py``) and the suite's generator
    for its format (``generators.native.MODULES``), when there is one."""
    from asr_conformance.generators import native

    generator = native.generator(generator_format or witness.format)
    return FormatPack(
        name=name, version=__version__, witness=witness, edits=tuple(getattr(witness, "mutations", ()) or ()),
        generator=generator, kind_policy=kind_policy, loss_namespaces=loss_namespaces,
        file_name=functools.partial(native.file_name, witness.format),
    )


def claude_code() -> FormatPack:
    from asr_conformance.fidelity import claude_code, claude_code_mutations  # noqa: F401  (attaches the edits)

    return wrap_builtin("claude-code", claude_code.WITNESS,
                        loss_namespaces=("claude-code.", "claude_code.", "claude-code/"))


def codex() -> FormatPack:
    from asr_conformance.fidelity import codex, codex_mutations  # noqa: F401  (attaches the edits)

    return wrap_builtin("codex", codex.WITNESS, loss_namespaces=("codex.",))


def gemini_cli() -> FormatPack:
    from asr_conformance.fidelity import gemini, gemini_mutations  # noqa: F401  (attaches the edits)

    # Gemini CLI publishes no mapping of tool names to kinds: a kind must come from the source (ASR-253).
    return wrap_builtin("gemini-cli", gemini.WITNESS, loss_namespaces=("gemini-cli.", "gemini."), kind_policy="source-only")


#: Built-in packs by name; a new built-in format adds one line here.
BUILTIN = {"claude-code": claude_code, "codex": codex, "gemini-cli": gemini_cli}


def builtin_packs() -> list[FormatPack]:
    """Every built-in pack, and a pack for any other witness the fidelity registry ships (wrapped as it is)."""
    packs = [make() for make in BUILTIN.values()]
    from asr_conformance.fidelity.registry import builtin_witnesses

    known = {p.format for p in packs}
    for witness in builtin_witnesses():
        if witness.format not in known:
            module = type(witness).__module__.rsplit(".", 1)[-1]
            packs.append(wrap_builtin(module.replace("_", "-"), witness, loss_namespaces=(f"{module.replace('_', '-')}.",)))
    return packs
