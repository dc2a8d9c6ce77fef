"""Root conftest of the checkout.

The suite's pytest plugin is registered by the ``pytest11`` entry point
(``asr_conformance.plugin.entry``: ``--implementation`` and the other options)
once the project is installed (``pip install -e .``); it loads the rest (the
markers, the conformance fixtures, the Hypothesis profiles) only for a
certification run, and so it is not repeated here: a run started from another folder that
points into this checkout then loads it exactly once.  Plain ``pytest`` here
collects ``suite/conformance`` (see ``testpaths``) and certifies the bundled
reference; ``pytest suite/tests`` runs the project's own tests.
"""
