"""The harness that judges other implementations, in four layers, each importing only the ones before:

    isolation  <-  adapters  <-  judging  <-  fuzzing

``isolation`` runs an untrusted process contained; ``adapters`` ask it for a role's answer;
``judging`` decides what the answer means; ``fuzzing`` generates cases and judges them the same way.
``run_context`` ties a run's choices to all of them.  ``suite/tests/test_layering.py`` keeps the order.

Depends on the vocabulary and the reference (the oracle); never on the gate or the plugin."""
