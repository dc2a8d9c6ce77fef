"""Generators of ASR streams: Hypothesis strategies, mutators, and a
deterministic generator of large realistic streams for benchmarks."""
