"""The regression gate: one typed result per test, expectations files and baselines.

Depends on the vocabulary only; the plugin feeds it and the report writers read it."""
