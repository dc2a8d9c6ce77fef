"""The harness that judges other implementations: processes and adapters per role, targets
and manifests, and the judging of validators, readers and producers (corpus and fuzz).

Depends on the vocabulary and the reference (the oracle); never on the gate or the plugin."""
