"""The one base of the errors a user can fix: a bad option, manifest, corpus, catalog, expectations
file or baseline, an implementation that cannot start.  Each says which file or option and why; the
plugin turns any of them into pytest's usage error in one place (``plugin/hooks.py``), so a new kind
of mistake needs a subclass here and no new ``except`` clause there."""

from __future__ import annotations


class UserError(Exception):
    """A mistake in what the user gave (not in the implementation under test, not in the suite): the
    message names the file, option or implementation and says what to change."""
