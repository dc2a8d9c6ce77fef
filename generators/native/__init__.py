"""Hypothesis strategies that build native agent transcripts (Claude Code, Codex), for fuzzing producers.

Each format module offers ``transcripts(feature)``: a strategy of ``NativeTranscript`` that is a
valid transcript of that format by construction, with the named adversarial feature present.
The conformance suite converts each one with the producer under test and holds the stream to
the format's witness (``asr_conformance.fidelity``), which reads the same bytes independently.
"""
