"""Adapters: how the harness asks an implementation something, whatever the contract behind it.

One process per case (``oneshot``), the persistent protocol (``persistent``), manifests and targets
(``manifest``, ``targets``), the start-up check (``startup``), what each role must offer
(``roles``) and what an implementation answered (``answers``).  Built on ``isolation``: every
process an adapter starts is contained there.  An adapter says what was answered, never whether it
was right; that is ``judging``.  The reader's view schema and comparison (``judging.views``) are
not here: no adapter reads a view, only the judges and the corpus check compare them."""
