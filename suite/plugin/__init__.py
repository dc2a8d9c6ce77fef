"""The pytest plugin: the entry point (``entry.py``, the ``pytest11`` point: the options of
``options.py`` and nothing heavy), the harness plugin it registers for a certification run
(``hooks.py``) and the object that closes such a run (``session.py``). Nothing else in the
package imports from here."""
