"""Containment of untrusted implementations: blind inputs, an allow-listed
environment, a sandbox, and nothing left running after a case.

An implementation wants the badge, so it must learn nothing about a case but
its bytes.  Each process gets a *box*: a private folder (0700) under this
run's staging root, holding ``in/`` (each input as a read-only copy under a
random name, alone in a folder of its own, removed after the case), ``out/``
(fresh output folders for conversions), ``tmp/`` (its TMPDIR) and ``home/``
(its HOME).

The environment is built from an allow-list, never inherited whole:

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

Where bubblewrap works, each process runs in it (``--sandbox=auto|bwrap|none``):
a read-only view of the machine with the case corpus, the report folders and
the staging root hidden under empty tmpfs mounts, the box bound back
read-write, and a PID namespace, so the whole process tree dies with the
case (``processes`` kills and awaits it through the process's pids cgroup
where there is one, else through the sweep).  Without it, the harness becomes a child subreaper (Linux) and sweeps
every leftover descendant after each case; the run header says which.

A run's settings (``Settings``: --sandbox, --pass-env, --limit-*, the staging folder, the run's
deadline...) are made once by the plugin (``settings_for``), kept in its ``RunContext``
(``harness.run_context``) and carried to each start in the implementation's ``Policy``: nothing of a
run is set on this module, and a start outside a run gets the defaults (``DEFAULT_SETTINGS``).  What
stays process-wide is what a signal handler must reach, and a signal handler reaches nothing but a
module: the registry of live processes (``register``), the staging folders this process made
(``_made``, one root per staging folder) and the handlers themselves; and what the machine offers
(``sandbox_mode``, found out once per process).
"""

from __future__ import annotations

import atexit
import errno
import math
import os
import queue
import secrets
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path

from asr_conformance import CORPUS_DIR
from asr_conformance.harness.isolation import mounts, sandbox, visibility
from asr_conformance.harness.isolation.limits import DEFAULTS as DEFAULT_LIMITS
from asr_conformance.harness.isolation.limits import Limits, alive, pids_cgroups, remove_stale_groups
from asr_conformance.vocabulary import redaction
from asr_conformance.vocabulary.errors import UserError
from asr_conformance.vocabulary.option_defaults import DEFAULT_MAX_OUTPUT, MAX_TIMEOUT, SANDBOXES
from asr_conformance.vocabulary.option_defaults import MAX_OUTPUT_CAP as MAX_OUTPUT_CAP

MARKER = "ASR_CONFORMANCE_BOX"
_ALLOWED = ("PATH", "LANG", "TZ", "SYSTEMROOT", "WINDIR", "COMSPEC", "PATHEXT")
_PR_SET_CHILD_SUBREAPER = 36
#: prctl option: whether the process may be dumped and its /proc files read by processes of its user.
_PR_SET_DUMPABLE = 4


class UsageError(UserError, ValueError):
    """An option or manifest value the harness refuses; the message names it."""


def check_timeout(value: object, where: str) -> float:
    """A finite, positive number of seconds no larger than MAX_TIMEOUT, or UsageError naming ``where``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UsageError(f"{where}: must be a number of seconds, not {value!r}")
    seconds = float(value)
    if not math.isfinite(seconds) or seconds <= 0:
        raise UsageError(f"{where}: must be a finite number of seconds above 0, not {value!r}")
    if seconds > MAX_TIMEOUT:
        raise UsageError(f"{where}: {seconds:g} s is above the cap of {MAX_TIMEOUT:g} s per case")
    return seconds


def corpus_copies() -> tuple[Path, ...]:
    """Every copy of the case corpus this run could know of: the one in use, the packaged one,
    and a checkout's ``cases/`` in the current folder."""
    import asr_conformance

    candidates = [CORPUS_DIR, Path(asr_conformance.__file__).resolve().parent / "cases", Path.cwd() / "cases"]
    return tuple(dict.fromkeys(p.resolve() for p in candidates if (p / "rules.toml").is_file()))


@dataclass(frozen=True)
class Settings:
    """How a run contains implementations: made once by the plugin (``settings_for``, held by the run's
    ``RunContext``) and carried to every start in the implementation's ``Policy``; never a global."""

    sandbox: str = "auto"
    #: Folders no implementation may read: the corpus, the report folders.
    hidden: tuple[Path, ...] = field(default_factory=corpus_copies)
    #: Variables passed through from the caller's environment.
    pass_env: tuple[str, ...] = ()
    max_output: int = DEFAULT_MAX_OUTPUT
    #: time.time() after which no case starts (--run-timeout), or None.
    run_deadline: float | None = None
    run_timeout: float | None = None
    #: The run's staging folder, shared by its xdist workers (each makes its root inside it), so
    #: that a sandbox hides every worker's staging at once.
    staging_parent: Path | None = None
    #: --network: None leaves it to each implementation's manifest (default none).
    network: str | None = None
    #: --limit-* given on the command line (over the defaults and a manifest's limits).
    limits: tuple[tuple[str, int], ...] = ()
    #: --allow-read: more folders shown read-only in the sandbox.
    allow_read: tuple[str, ...] = ()


#: The settings of a start outside any run (a project test, a benchmark): the defaults, never changed.
DEFAULT_SETTINGS = Settings()


STAGING_PREFIX = "asr-run-"


def make_staging_parent() -> Path:
    """The run's staging folder (0700, removed at exit), made once by the controller, named after
    its process so that a later run can tell it is stale (``remove_stale_staging``)."""
    remove_stale_staging()
    remove_stale_groups()
    parent = Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{os.getpid()}-"))
    atexit.register(_remove_tree, parent)
    _made.append(parent)
    return parent


def remove_stale_staging(folder: Path | None = None) -> list[Path]:
    """Remove the staging folders of runs whose process is gone (killed runs never clean up);
    returns what was removed."""
    removed: list[Path] = []
    base = Path(folder or tempfile.gettempdir())
    try:
        entries = list(base.glob(f"{STAGING_PREFIX}*-*"))
    except OSError:
        return removed
    for entry in entries:
        owner = entry.name[len(STAGING_PREFIX):].split("-", 1)[0]
        if not owner.isdigit() or alive(int(owner)) or entry.is_symlink() or not entry.is_dir():
            continue
        _remove_tree(entry)
        removed.append(entry)
    return removed




def settings_for(**changes: object) -> Settings:
    """The defaults with ``changes``, checked (a bad value is a ``UsageError`` naming its option)."""
    if "sandbox" in changes and changes["sandbox"] not in SANDBOXES:
        raise UsageError(f"--sandbox: one of {', '.join(SANDBOXES)}, not {changes['sandbox']!r}")
    if changes.get("network") not in (None, *sandbox.NETWORKS):
        raise UsageError(f"--network: one of {', '.join(sandbox.NETWORKS)}, not {changes['network']!r}")
    check_allow_read(changes.get("allow_read") or (), "--allow-read")  # type: ignore[arg-type]
    redaction.register(changes.get("pass_env") or ())  # type: ignore[arg-type]
    return replace(DEFAULT_SETTINGS, **changes)  # type: ignore[arg-type]


def settings_of(policy: Policy | None) -> Settings:
    """The run's settings an implementation starts under: its policy's, else the defaults."""
    return policy.settings if policy is not None else DEFAULT_SETTINGS


# --- the run's time limit --------------------------------------------------------------


def remaining_run_time(settings: Settings) -> float | None:
    """Seconds left before --run-timeout ends the run (None without a limit; <= 0 when spent)."""
    deadline = settings.run_deadline
    return None if deadline is None else deadline - time.time()


def run_limit_reached(settings: Settings) -> bool:
    left = remaining_run_time(settings)
    return left is not None and left <= 0


def case_timeout(timeout: float, settings: Settings) -> tuple[float, bool]:
    """The time a case may take: its timeout, cut to what the run has left; and whether it was cut."""
    left = remaining_run_time(settings)
    if left is not None and left < timeout:
        return max(left, 0.0), True
    return timeout, False


RUN_LIMIT_MESSAGE = "the run's time limit (--run-timeout) is spent; the case was not run to its end"


# --- the sandbox ------------------------------------------------------------------------


@dataclass(frozen=True)
class Policy:
    """One implementation's containment choices (its manifest's ``network``, ``limits``, ``allow_read``)."""

    network: str | None = None
    limits: tuple[tuple[str, int], ...] = ()
    read_only: tuple[str, ...] = ()
    #: The run's settings (``RunContext.contained`` puts them here), so that every start of the implementation
    #: gets them with its own choices; the defaults outside a run.
    settings: Settings = DEFAULT_SETTINGS


def effective_limits(policy: Policy | None = None) -> Limits:
    """The defaults, then the manifest's limits, then the command line's (--limit-*)."""
    chosen = DEFAULT_LIMITS.with_changes(dict(policy.limits) if policy else {})
    return chosen.with_changes(dict(settings_of(policy).limits))


def effective_network(policy: Policy | None = None) -> str:
    return settings_of(policy).network or (policy.network if policy and policy.network else "none")


def _sandboxed(settings: Settings) -> bool:
    try:
        return sandbox_mode(settings.sandbox)[0] == "bwrap"
    except UsageError:
        return False


@cache
def sandbox_mode(chosen: str = DEFAULT_SETTINGS.sandbox) -> tuple[str, str]:
    """("bwrap", "") or ("none", why), from --sandbox (``chosen``) and what the machine allows."""
    if chosen == "none":
        return "none", "--sandbox=none"
    problem = sandbox.problem()
    if not problem:
        return "bwrap", ""
    if chosen in ("strict", "bwrap"):
        raise UsageError(f"--sandbox={chosen}: the sandbox cannot run here: {problem}")
    return "none", problem


def describe_sandbox(policy: Policy | None = None) -> str:
    """The run header's line: each protection in force, or why there is none."""
    mode, why = sandbox_mode(settings_of(policy).sandbox)
    limits = f"limits per process: {effective_limits(policy).describe()}"
    if mode == "bwrap":
        protections = [*sandbox.protections(effective_network(policy)), mounts.describe()]
        return f"sandbox: bubblewrap ({'; '.join(protections)}); {limits}"
    cleanup = "process-group and subreaper cleanup" if _subreaper_possible() else "process-group cleanup"
    if _subreaper_possible():
        cleanup += (", this process not dumpable (its /proc environ and memory stay open to a root implementation)"
                    if os.geteuid() == 0 else ", this process not dumpable (its /proc environ and memory closed)")
    warning = "" if settings_of(policy).sandbox == "none" else " -- WARNING: the implementation can read and write whatever you can"
    return f"sandbox: none ({why}), {cleanup}{warning}; {limits}"


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


def check_allow_read(folders: Iterable[str], where: str) -> None:
    """Refuse a folder to show read-only that is ``/``, a shared folder, or holds one, or holds the suite's
    package or corpus (UsageError naming it); the rest is checked at each start (``wrap``)."""
    known = visibility.Guarded(secret=tuple(str(p) for p in corpus_copies()), package=sandbox.package_folders())
    for folder in folders:
        real = visibility.canonical(folder)
        why = visibility.refusal(real, known)
        if why:
            raise UsageError(f"{where}: {folder!r} ({real}) may not be shown to an implementation: {why}")


#: The openings of the widenings that say what the machine lacks rather than what a run chose to show.
NO_SANDBOX = "no sandbox"
NOT_PROVIDED = "not provided by this machine"


def widenings(settings: Settings, implementations: Iterable[tuple[Iterable[str], Policy | None]]) -> list[str]:
    """Every way this run shows implementations more than the closed box of docs/contract.md §9.1, one phrase
    each (empty: a closed box): variables passed through (names only), folders shown on request, the host
    network, no sandbox, and the protections the machine could not provide.  ``implementations``: each one's
    ``pass_env`` and policy.  Part of the certificate: header, report, summary, page, verdict line, badge."""
    chosen = list(implementations)
    names = list(dict.fromkeys([*settings.pass_env, *(n for given, _ in chosen for n in given)]))
    folders = list(dict.fromkeys(visibility.canonical(f) for f in
                                 (*settings.allow_read, *(f for _, p in chosen if p for f in p.read_only))))
    found = [f"pass_env {', '.join(names)}"] if names else []
    if folders:
        found.append(f"allow_read {', '.join(folders)}")
    if any(effective_network(p) == "host" for _, p in chosen) or settings.network == "host":
        found.append("network host")
    try:
        mode, why = sandbox_mode(settings.sandbox)
    except UsageError as error:
        mode, why = "none", str(error)
    if mode != "bwrap":
        found.append(f"{NO_SANDBOX} ({why})")
        return found
    missing = [said for flag, said in (("--disable-userns", "nested user namespaces not refused"),
                                       ("--size", "/tmp and /dev/shm not size-limited"),
                                       ("--new-session", "no new session")) if flag not in sandbox.features()]
    if not mounts.may_mount():
        missing.append("output folders bounded per file only")
    if not pids_cgroups():
        missing.append("process limit not enforced")
    if missing:
        found.append(f"{NOT_PROVIDED}: {', '.join(missing)}")
    return found


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


# --- boxes: staging, output folders, environment ------------------------------------------


_root_lock = threading.Lock()
#: This process's staging root in each run staging folder (``None``: the system's temporary folder).
_roots: dict[Path | None, Path] = {}


def staging_root(settings: Settings = DEFAULT_SETTINGS) -> Path:
    """This process's staging root (0700) in the run's staging folder, made on first use, removed at exit.

    Kept per process, not per run: what a process made is what its exit and its signal handlers remove
    (``_made``), and a signal handler can reach nothing but the module."""
    parent = settings.staging_parent
    with _root_lock:
        root = _roots.get(parent)
        if root is None or not root.is_dir():
            root = Path(tempfile.mkdtemp(prefix="asr-", dir=parent if parent and parent.is_dir() else None))
            atexit.register(_remove_tree, root)
            _made.append(root)
            _roots[parent] = root
        return root


@dataclass
class Box:
    """One implementation process's private folders (see the module docstring), in the staging of ``settings``."""

    settings: Settings = DEFAULT_SETTINGS
    token: str = field(default_factory=lambda: secrets.token_hex(12))
    _outputs: dict[str, tuple[int, int]] = field(default_factory=dict)
    path: Path = field(init=False)

    def __post_init__(self) -> None:
        self.path = Path(tempfile.mkdtemp(prefix="", dir=staging_root(self.settings)))
        for name in ("in", "out", "tmp", "home"):
            (self.path / name).mkdir(mode=0o700, exist_ok=True)
        # In the sandbox, out/ is the one folder of the machine the implementation writes: a tmpfs of the disk
        # limit where the harness may mount one (wrap() gives it the implementation's own limit).
        if _sandboxed(self.settings):
            mounts.limit_folder(self.path / "out", effective_limits(Policy(settings=self.settings)).disk)

    def stage(self, source: Path | bytes, suffix: str = ".jsonl") -> Path:
        """A fresh read-only copy of ``source`` under a random name, alone in a private folder."""
        folder = Path(tempfile.mkdtemp(prefix="", dir=self.path / "in"))
        target = folder / (secrets.token_hex(8) + suffix)
        handle = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o400)
        with os.fdopen(handle, "wb") as out:
            if isinstance(source, bytes):
                out.write(source)
            else:
                with open(source, "rb") as given:
                    shutil.copyfileobj(given, out, 1 << 20)
        return target

    def output_dir(self) -> Path:
        """A fresh, empty, private folder for one conversion's stream."""
        folder = tempfile.mkdtemp(prefix="", dir=self.path / "out")
        made = os.stat(folder)
        self._outputs[folder] = (made.st_dev, made.st_ino)
        return Path(folder)

    def output_identity(self, folder: Path) -> tuple[int, int] | None:
        """The (device, inode) the output folder had when it was made."""
        return self._outputs.get(str(folder))

    def discard(self, path: Path) -> None:
        """Take a staged input's folder or an output folder away, once the case is over."""
        self._outputs.pop(str(path), None)
        folder = path if path.parent.name == "out" else path.parent
        dispose(folder, self.settings)

    def environment(self, overrides: Mapping[str, str] | None = None,
                    pass_env: Iterable[str] = ()) -> dict[str, str]:
        return child_environment(self, overrides, pass_env)

    def close(self) -> None:
        dispose(self.path, self.settings)


def child_environment(box: Box, overrides: Mapping[str, str] | None = None,
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


_spent: queue.SimpleQueue[Path] = queue.SimpleQueue()
_remover: threading.Thread | None = None


def dispose(path: Path, settings: Settings = DEFAULT_SETTINGS) -> None:
    """Move ``path`` out of every box at once (a rename, within the staging of ``settings``, which the sandbox
    hides), and delete it in the background: deleting folders costs milliseconds each on some file systems,
    renaming them does not."""
    global _remover
    mounts.release_under(path)
    root = staging_root(settings)
    spent = root / "spent"
    spent.mkdir(mode=0o700, exist_ok=True)
    try:
        moved = spent / secrets.token_hex(8)
        os.rename(path, moved)
    except OSError:
        _remove_tree(path)
        return
    _spent.put(moved)
    with _root_lock:
        if _remover is None or not _remover.is_alive():
            _remover = threading.Thread(target=_remove_spent, name="asr-staging-cleanup", daemon=True)
            _remover.start()


def _remove_spent() -> None:
    while True:
        _remove_tree(_spent.get())


def _remove_tree(path: Path) -> None:
    """Remove a folder the implementation may have made unwritable (its mounts released first)."""
    if not os.path.lexists(path):
        return
    mounts.release_under(path, scan=True)
    top = os.fspath(path)

    def retry(function: Callable[[str], object], name: str, _info: object) -> None:
        """Make the entry and its folder writable and try again, never touching what holds ``path``."""
        try:
            if os.path.normpath(name) != os.path.normpath(top):
                os.chmod(os.path.dirname(name), 0o700)
            os.chmod(name, 0o700)
            function(name)
        except OSError:
            pass

    shutil.rmtree(path, onerror=retry)


# --- reading a file an implementation names -----------------------------------------------


class UnsafeOutput(Exception):
    """A stream_path the harness refuses to read; the message says why."""


def read_output(named: str, folder: Path, identity: tuple[int, int] | None, limit: int, budget: float) -> bytes:
    """Read the regular file ``named`` inside ``folder``, following no link, at most ``limit``
    bytes, within ``budget`` seconds; UnsafeOutput for anything else (a FIFO, a device, a link,
    a path outside, a hard link, too large, too slow)."""
    path = Path(named) if os.path.isabs(named) else folder / named
    normal = os.path.normpath(path)
    base = os.path.normpath(folder)
    if os.path.commonpath([normal, base]) != base or normal == base:
        raise UnsafeOutput(f"stream_path {named!r} is not inside the output_dir it was given ({folder})")
    parts = Path(normal).relative_to(base).parts
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(base, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | nofollow)
    except OSError as error:
        raise UnsafeOutput(f"the output_dir cannot be opened: {error.strerror or error}") from None
    try:
        found = os.fstat(fd)
        if identity is not None and (found.st_dev, found.st_ino) != identity:
            raise UnsafeOutput("the output_dir was replaced during the conversion")
        for part in parts[:-1]:
            fd = _open_at(fd, part, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | nofollow, named)
        fd = _open_at(fd, parts[-1], os.O_RDONLY | nofollow | getattr(os, "O_NONBLOCK", 0), named)
        return _read_regular(fd, named, limit, budget)
    finally:
        os.close(fd)


def _open_at(parent: int, name: str, flags: int, named: str) -> int:
    """Open ``name`` in the folder ``parent`` without following a link; ``parent`` is closed on success
    (on failure the caller still holds it)."""
    try:
        child = os.open(name, flags, dir_fd=parent)
    except OSError as error:
        try:
            is_link = stat.S_ISLNK(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode)
        except OSError:
            is_link = False
        why = "a symbolic link" if is_link or error.errno == errno.ELOOP else (error.strerror or str(error))
        raise UnsafeOutput(f"stream_path {named!r}: {why}") from None
    os.close(parent)
    return child


def _read_regular(fd: int, named: str, limit: int, budget: float) -> bytes:
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        raise UnsafeOutput(f"stream_path {named!r} is not a regular file (a FIFO, device, socket or folder)")
    if info.st_nlink != 1:
        raise UnsafeOutput(f"stream_path {named!r} is a hard link to another file")
    if info.st_size > limit:
        raise UnsafeOutput(f"the stream is {info.st_size} bytes, above the limit of {limit} (--max-output)")
    os.set_blocking(fd, True)
    deadline = time.monotonic() + budget
    chunks: list[bytes] = []
    size = 0
    while chunk := os.read(fd, min(1 << 20, limit + 1 - size) or 1):
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            raise UnsafeOutput(f"the stream grew above the limit of {limit} bytes (--max-output) while read")
        if time.monotonic() > deadline:
            raise UnsafeOutput(f"reading the stream took more than {budget:g} s")
    return b"".join(chunks)


# --- live children, signals, the subreaper sweep ----------------------------------------


_live: dict[int, subprocess.Popen[bytes]] = {}
#: The box token of each live implementation process, by pid.
_live_tokens: dict[int, str] = {}
_live_lock = threading.Lock()
_handlers_installed = False


def register(process: subprocess.Popen[bytes], token: str = "") -> None:
    with _live_lock:
        _live[process.pid] = process
        _live_tokens[process.pid] = token
    _install_handlers()


def unregister(process: subprocess.Popen[bytes]) -> None:
    with _live_lock:
        _live.pop(process.pid, None)
        _live_tokens.pop(process.pid, None)


def live_pids() -> list[int]:
    with _live_lock:
        return list(_live)


def live_tokens() -> set[str]:
    with _live_lock:
        return set(_live_tokens.values()) - {""}


def kill_all_live() -> None:
    """SIGKILL every live implementation's group (on SIGINT, SIGTERM and at exit)."""
    with _live_lock:
        processes = list(_live.values())
    for process in processes:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            process.kill()
        except OSError:
            pass


def _install_handlers() -> None:
    """Once, from the main thread: SIGINT and SIGTERM kill live children, then do what they did before."""
    global _handlers_installed
    if _handlers_installed or threading.current_thread() is not threading.main_thread():
        return
    _handlers_installed = True
    atexit.register(kill_all_live)
    for signum in (signal.SIGINT, signal.SIGTERM):
        previous = signal.getsignal(signum)
        signal.signal(signum, _chained(previous))


_made: list[Path] = []


def remove_staging(patience: float = 3.0) -> None:
    """Remove the staging this process made (on a signal that ends it, atexit never runs).

    Other threads of the run (the background remover, a step of the suite's own) may still be
    touching it while the signal is handled, so a folder that survives one removal is removed
    again, for at most ``patience`` seconds."""
    deadline = time.monotonic() + patience
    for folder in _made:
        _remove_tree(folder)
        while os.path.lexists(folder) and time.monotonic() < deadline:
            time.sleep(0.02)
            _remove_tree(folder)


def _end_for_signal() -> None:
    """Kill every live implementation, wait until each is dead (a dying process may still hold or
    write its box), and take the staging away."""
    pids = set(live_pids())
    kill_all_live()
    _await_death(pids, limit=5.0)
    remove_staging()


def _chained(previous: object) -> Callable[[int, object], None]:
    def handler(signum: int, frame: object) -> None:
        if previous == signal.SIG_DFL:
            _end_for_signal()
        else:
            kill_all_live()
        if callable(previous):
            previous(signum, frame)
        elif previous == signal.SIG_DFL:
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
    return handler


@cache
def _subreaper_possible() -> bool:
    return sys.platform.startswith("linux") and os.path.isdir("/proc")


#: The process (pid) that made itself a subreaper, and whether it could.
_subreaper: tuple[int, bool] | None = None


def become_subreaper() -> bool:
    """Make this process adopt orphaned descendants (Linux), so the sweep can find them.

    Done once per process: the setting is cleared in a forked child, so a run forked from a process that
    had made itself one (a server that forks runs) makes itself one again."""
    global _subreaper
    if _subreaper is not None and _subreaper[0] == os.getpid():
        return _subreaper[1]
    value = False
    if _subreaper_possible():
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            value = libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
        except (OSError, AttributeError):
            value = False
    _subreaper = (os.getpid(), value)
    return value


@cache
def refuse_inspection() -> bool:
    """Make this process non-dumpable (Linux), so a process of the same user cannot read its environment or
    memory through ``/proc/<pid>/environ`` and ``/proc/<pid>/mem`` (a root process still can: only the
    sandbox stops that). Used when implementations run without the sandbox."""
    if not _subreaper_possible():
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        status: int = libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
        return status == 0
    except (OSError, AttributeError):
        return False


def _processes() -> dict[int, tuple[int, int]]:
    """Every visible process: pid -> (ppid, pgid)."""
    found: dict[int, tuple[int, int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                text = handle.read().decode("ascii", "replace")
        except OSError:
            continue
        fields = text[text.rfind(")") + 2:].split()
        if len(fields) > 2:
            found[int(entry)] = (int(fields[1]), int(fields[2]))
    return found


def _marker(pid: int) -> str | None:
    """The box token in a process's environment (None when it has none or cannot be read)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            entries = handle.read().split(b"\0")
    except OSError:
        return None
    prefix = f"{MARKER}=".encode()
    return next((e[len(prefix):].decode("ascii", "replace") for e in entries if e.startswith(prefix)), None)


def sweep(token: str) -> int:
    """Kill what a finished box left running: its marked processes, and descendants adopted by
    this process (another process group, not a live implementation nor one of its helpers),
    each with its own descendants.  Returns how many were killed.  Needs /proc."""
    if not _subreaper_possible():
        return 0
    me, group = os.getpid(), os.getpgrp()
    table = _processes()
    keep, alive = set(live_pids()), live_tokens() - {token}
    strays = set()
    for pid, (ppid, pgid) in table.items():
        if pid == me or pid in keep:
            continue
        marker = _marker(pid)
        if marker == token or (ppid == me and pgid != group and marker not in alive):
            strays.add(pid)
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    doomed: set[int] = set()
    pending = list(strays)
    while pending:
        pid = pending.pop()
        if pid not in doomed and pid != me:
            doomed.add(pid)
            pending.extend(children.get(pid, []))
    for pid in doomed:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    _reap(pid for pid in doomed if table.get(pid, (0, 0))[0] == me)
    _await_death(doomed)
    return len(doomed)


def settle(pids: set[int]) -> None:
    """Wait until the killed ``pids`` are dead or zombies, and reap those that are this process's children
    (orphans it adopted as a subreaper): the end of a sweep, for processes found another way."""
    _await_death(pids)
    _reap(pid for pid in pids if _parent(pid) == os.getpid())


def _parent(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return int(handle.read().rsplit(b")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def _await_death(pids: set[int], limit: float = 2.0) -> None:
    """Wait (briefly) until the killed processes are gone or zombies."""
    deadline = time.monotonic() + limit
    for pid in pids:
        while time.monotonic() < deadline:
            try:
                with open(f"/proc/{pid}/stat", "rb") as handle:
                    state = handle.read().rsplit(b")", 1)[1].split()[0]
            except (OSError, IndexError):
                break
            if state in (b"Z", b"X"):
                break
            time.sleep(0.005)


def _reap(pids: Iterable[int]) -> None:
    for pid in pids:
        for _ in range(100):
            try:
                done, _status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                break
            if done:
                break
            time.sleep(0.01)
