"""Judging: what an implementation's answer means against what was expected, one module per role.

Validators, readers and producers (``validator``, ``reader``, ``producer``, ``producer_case``, with
the witness's findings in ``fidelity``), the reader's view schema and its comparison (``views``),
and ``corpus_check`` (``asr-corpus check``), which judges the reference against the corpus with
the same comparison the reader judge uses: a corpus check, not a fuzz session, so it is here and
not under ``fuzzing``.  Judges take an answer from ``adapters`` (and the producer judge starts its
own adapters); they never import ``fuzzing``."""
