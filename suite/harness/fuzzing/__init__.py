"""Fuzzing: generated inputs through the implementation under test, the reference as the oracle.

Hypothesis profiles, shrink budgets and counterexample files, and the validator's fuzz session
(``profiles``); the reader's (``readers``) and the producer's (``producers``) sessions.  The top
layer of the harness beside the run context: a fuzz session asks through ``adapters`` and decides
through ``judging`` (the same judges a corpus case goes through), so that a generated case is held
to exactly the rules a written one is."""
