"""Format packs: the one plugin interface for a native agent format.

A pack bundles what the suite needs to judge a converter of one native format: its witness
(``fidelity.facts.Witness``), its source edits (``fidelity.mutations.SourceMutation``), an optional
Hypothesis generator of native transcripts, and what the format's source cannot tell (its kind
policy). Built-in packs (``packs.builtin``) and third-party ones (the ``asr_conformance.format_packs``
entry points, ``packs.registry``) are loaded and judged the same way.

``pack``      the ``FormatPack`` type, the generator interface and the kind policies
``identity``  which pack judged: name, version, distribution and a digest of its files
``builtin``   the Claude Code, Codex and Gemini CLI packs, plain values built from their witnesses and edits
``registry``  the one registry: loading packs from entry points into ``Packs``, the pool judging takes
``selection`` choosing the pack for an input once (``SourceInput``) and holding a stream's header to it
``guard``     calling a pack's code bounded in time, its failures turned into the suite's errors
"""
