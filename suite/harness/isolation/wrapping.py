"""The command line that runs an implementation contained, and what it may never see.

Where bubblewrap works, each process runs in it (``--sandbox=auto|bwrap|none``): a read-only view of
the machine with the case corpus, the report folders and the staging root hidden under empty tmpfs
mounts, the box bound back read-write, and a PID namespace, so the whole process tree dies with the
case (``processes`` kills and awaits it through the process's pids cgroup where there is one, else
through the sweep).  The finished command line is checked against the rules before it runs
(``visibility.violations``); a start that would show more is refused (``SandboxRefused``).  Without
a sandbox the command runs unchanged, its program found first as exec would find it.
"""

from __future__ import annotations

import errno
import os
import shutil
from collections.abc import Iterable, Sequence
from pathlib import Path

from asr_conformance.harness.isolation import mounts, sandbox, visibility
from asr_conformance.harness.isolation.boxes import Box, staging_root
from asr_conformance.harness.isolation.policies import (
    DEFAULT_SETTINGS,
    Policy,
    corpus_copies,
    effective_limits,
    effective_network,
    sandbox_mode,
    settings_of,
)

#: Violations named in a refusal's message (the rest are counted).
SHOWN_PROBLEMS = 12


class SandboxRefused(OSError):
    """A start the sandbox refuses: a folder it would show is not allowed, or the finished command line breaks
    the rules (``visibility.violations``); the message names the path and why."""


def guarded_paths(box: Box | None = None, writable: Iterable[str] = ()) -> visibility.Guarded:
    """What no implementation may see, canonical: the corpus's case folders, the report, counterexample and
    pytest folders, the staging (only ``box`` and ``writable`` are bound back from it)."""
    settings = box.settings if box else DEFAULT_SETTINGS
    secret: list[str] = list(visibility.pytest_temp_roots())
    for source in (*settings.hidden, *corpus_copies()):
        real = visibility.canonical(source)
        secret += visibility.case_folders(real) if os.path.isfile(os.path.join(real, "rules.toml")) else [real]
    staging = [visibility.canonical(p) for p in (*filter(None, [settings.staging_parent]), staging_root(settings))]
    own = [visibility.canonical(p) for p in ([box.path] if box else [])]
    return visibility.Guarded(secret=tuple(dict.fromkeys(secret)), staging=tuple(dict.fromkeys(staging)),
                              package=sandbox.package_folders(), environment=sandbox.python_environment(),
                              box=own[0] if own else "", writable=tuple(visibility.canonical(p) for p in writable))


def wrap(command: Sequence[str], box: Box, cwd: str | None, writable: Iterable[str] = (),
         policy: Policy | None = None) -> list[str]:
    """The command line that runs ``command`` contained (unchanged without a sandbox); SandboxRefused when
    what it would show breaks the rules."""
    if sandbox_mode(settings_of(policy).sandbox)[0] != "bwrap":
        return list(command)
    policy = policy or Policy()
    given: tuple[str | Path, ...] = (box.path / "out", *writable)
    outputs = [visibility.canonical(p) for p in given]
    guarded = guarded_paths(box, outputs)
    own = sandbox.own_folders(command, cwd, guarded)
    widened: list[str] = []
    for folder in (*policy.read_only, *policy.settings.allow_read):
        real = visibility.canonical(folder)
        why = visibility.refusal(real, guarded)
        if why:
            raise SandboxRefused(errno.EPERM, f"allow_read {folder!r} ({real}) may not be shown: {why}")
        widened.append(real)
    read_only = [*sandbox.python_environment(), *own.folders, *widened]
    hidden: list[str] = [s for s in (*guarded.secret, *guarded.staging)
                         if os.path.isdir(s) and any(visibility.under(s, f) for f in read_only)]
    for folder in dict.fromkeys(read_only):
        try:
            entries, corpora = visibility.hidden_below(folder, shallow=_shallow(folder, guarded))
        except visibility.TooLarge as error:
            raise SandboxRefused(errno.EPERM, f"{folder} cannot be shown: {error}; name a smaller folder") from None
        hidden += entries
        for corpus in corpora:
            hidden += visibility.case_folders(corpus)
    limits = effective_limits(policy)
    mounts.limit_folder(str(box.path / "out"), limits.disk)
    view = sandbox.View(
        read_only=(*read_only, visibility.canonical(box.path / "in")), writable=tuple(outputs), files=tuple(own.files),
        hidden=tuple(dict.fromkeys(hidden)),
        scratch=(visibility.canonical(box.path / "tmp"), visibility.canonical(box.path / "home")),
        links=tuple(own.links),
    )
    wrapped = sandbox.command(command, view, visibility.canonical(cwd or os.getcwd()), effective_network(policy),
                              limits.disk)
    problems = visibility.violations(wrapped, guarded, sandbox.SANDBOX_UID)
    if problems:
        more = f"; and {len(problems) - SHOWN_PROBLEMS} more" if len(problems) > SHOWN_PROBLEMS else ""
        raise SandboxRefused(errno.EPERM, "the sandbox would show more than the contract lists: "
                             + "; ".join(problems[:SHOWN_PROBLEMS]) + more)
    return wrapped


def _shallow(folder: str, guarded: visibility.Guarded) -> bool:
    """Whether a shown folder is looked into at its top only (the Python environment's prefixes)."""
    return folder in guarded.environment and folder not in guarded.package


def resolve_program(command: Sequence[str], cwd: str | None, path: str) -> list[str]:
    """The command with its program found as exec would find it; FileNotFoundError otherwise.

    Done before sandboxing, so that a missing program fails as it would unsandboxed
    (bwrap's own exit status 1 would read as a validator's "reject")."""
    program = command[0]
    if os.sep in program or (os.altsep and os.altsep in program):
        found = program if os.path.isabs(program) else os.path.join(cwd or os.getcwd(), program)
        if not os.path.isfile(found):
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)
    else:
        found = shutil.which(program, path=path) or ""
        if not found:
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)
    return [os.path.abspath(found), *command[1:]]
