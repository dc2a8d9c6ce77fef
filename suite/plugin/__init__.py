"""The pytest plugin: hooks (``hooks.py``, the ``pytest11`` entry point) and the object that
closes a certification run (``session.py``). Nothing else in the package imports from here."""
