"""The environment of an implementation process: built from an allow-list, never inherited whole.

* ``PATH``, with this Python's scripts folder first (examples written in
  Python run with the interpreter the suite is installed in);
* ``LANG``, ``LC_*``, ``TZ`` as the caller has them, and on Windows
  ``SYSTEMROOT``, ``WINDIR``, ``COMSPEC``, ``PATHEXT``;
* ``HOME`` = the box's empty ``home/`` (a fresh, empty folder per process:
  the caller's home holds credentials and dotfiles a case must not depend on;
  ``--pass-env HOME`` keeps the real one), ``TMPDIR`` = the box's ``tmp/``;
* ``PYTHONUNBUFFERED=1`` and ``ASR_CONFORMANCE_BOX`` (a random token the
  cleanup sweep recognises the box's processes by);
* any variable named with ``--pass-env NAME`` or a manifest's ``pass_env``;
* a producer variant's overrides (clock, timezone, locale, HOME), last.

Nothing else reaches the child: no ``PYTEST_*``, no tokens, keys or cloud
credentials, no ``GITHUB_*``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Protocol

from asr_conformance.harness.isolation.policies import Settings
from asr_conformance.vocabulary import redaction


class Boxed(Protocol):
    """What the environment is made from: a box's folder, the run's settings and the box's token
    (``boxes.Box``; a protocol, so that the box can build its environment through this module)."""

    @property
    def path(self) -> Path: ...
    @property
    def settings(self) -> Settings: ...
    @property
    def token(self) -> str: ...

MARKER = "ASR_CONFORMANCE_BOX"


_ALLOWED = ("PATH", "LANG", "TZ", "SYSTEMROOT", "WINDIR", "COMSPEC", "PATHEXT")


def child_environment(box: Boxed, overrides: Mapping[str, str] | None = None,
                      pass_env: Iterable[str] = ()) -> dict[str, str]:
    """The allow-listed environment of one implementation process (see the module docstring)."""
    caller = os.environ
    env = {name: caller[name] for name in _ALLOWED if name in caller}
    env.update({name: value for name, value in caller.items() if name.startswith("LC_")})
    scripts = str(Path(sys.executable).parent)
    env["PATH"] = scripts + os.pathsep + caller.get("PATH", os.defpath)
    env["HOME"] = str(box.path / "home")
    env["TMPDIR"] = str(box.path / "tmp")
    if os.name == "nt":
        env["TEMP"] = env["TMP"] = env["TMPDIR"]
    env["PYTHONUNBUFFERED"] = "1"
    passed = (*box.settings.pass_env, *pass_env)
    redaction.register(passed)
    for name in passed:
        if name in caller:
            env[name] = caller[name]
    env.update(overrides or {})
    env[MARKER] = box.token
    return env
