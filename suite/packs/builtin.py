"""The packs the suite ships: Claude Code transcripts, Codex rollouts and Gemini CLI sessions, built from their existing modules.

Each is an ordinary ``FormatPack`` value, built here from its witness and its edits passed in
explicitly (importing a witness module gives the witness alone); nothing in the suite knows these
formats but through these objects. ``wrap_builtin`` makes the pack of a new built-in format from its
witness module, edits module and generator module in one call.
"""

from __future__ import annotations

import functools

from asr_conformance import __version__
from asr_conformance.fidelity.facts import Witness
from asr_conformance.fidelity.mutations import SourceMutation
from asr_conformance.packs.pack import FormatPack


def wrap_builtin(name: str, witness: Witness, edits: tuple[SourceMutation, ...], generator_format: str | None = None,
                 loss_namespaces: tuple[str, ...] = (), kind_policy: str = "any") -> FormatPack:
    """A built-in pack: the witness, its edits (a ``*_mutations.MUTATIONS``) and the suite's generator for its
    format (``generators.native.MODULES``), when there is one."""
    from asr_conformance.generators import native

    generator = native.generator(generator_format or witness.format)
    return FormatPack(
        name=name, version=__version__, witness=witness, edits=tuple(edits),
        generator=generator, kind_policy=kind_policy, loss_namespaces=loss_namespaces,
        file_name=functools.partial(native.file_name, witness.format),
    )


def claude_code() -> FormatPack:
    from asr_conformance.fidelity import claude_code, claude_code_mutations

    return wrap_builtin("claude-code", claude_code.WITNESS, claude_code_mutations.MUTATIONS,
                        loss_namespaces=("claude-code.", "claude_code.", "claude-code/"))


def codex() -> FormatPack:
    from asr_conformance.fidelity import codex, codex_mutations

    return wrap_builtin("codex", codex.WITNESS, codex_mutations.MUTATIONS, loss_namespaces=("codex.",))


def gemini_cli() -> FormatPack:
    from asr_conformance.fidelity import gemini, gemini_mutations

    # Gemini CLI publishes no mapping of tool names to kinds: a kind must come from the source (ASR-253).
    return wrap_builtin("gemini-cli", gemini.WITNESS, gemini_mutations.MUTATIONS,
                        loss_namespaces=("gemini-cli.", "gemini."), kind_policy="source-only")


#: Built-in packs by name; a new built-in format adds one line here.
BUILTIN = {"claude-code": claude_code, "codex": codex, "gemini-cli": gemini_cli}


def builtin_packs() -> list[FormatPack]:
    """Every built-in pack, in the order they are tried."""
    return [make() for make in BUILTIN.values()]
