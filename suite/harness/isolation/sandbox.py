"""The bubblewrap sandbox: an allow-listed view of the machine, no privileges, private namespaces.

An implementation wants the badge, so the sandbox shows it only what it needs to run, and
nothing it could learn the answer from or change the judge with:

* **Privileges.** A user namespace in which it is uid 65534 with every capability dropped,
  no further user namespaces, ``no_new_privs`` (bubblewrap sets it), and a new session (no
  terminal to push keys into).  Run by root, bubblewrap would otherwise keep root's power.
* **Namespaces.** Its own PID (it sees none of the harness's processes, and dies whole with
  the case), IPC, UTS and network namespaces (no network: ``--network=host`` or a manifest's
  ``network = "host"`` shares the machine's, for a licence server).
* **Files, by allow-list.** Read-only: the system folders (``/usr``, ``/etc``, ``/opt`` and
  the ``/bin``, ``/lib`` family), the Python environment the suite runs in (examples import
  the package), the implementation's own folder and working directory, and folders named with
  ``--allow-read``.  Writable: its box's output folders and the folders a producer variant
  makes.  Private, size-limited tmpfs mounts: ``/tmp``, ``/dev/shm``, and the box's HOME and
  TMPDIR.  Nothing else exists for it: no home folders, no ``.git``, no case corpus (the rule
  catalog stays readable), no reports, counterexamples, pytest temporary folders or other
  runs' staging.
* **Root's files.** Run by root, the namespace's uid maps to root outside, so the owner bits
  of root's files would apply; every entry of ``/etc`` and ``/opt`` that an unprivileged user
  could not read is covered (files with ``/dev/null``, folders with an empty read-only tmpfs).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from asr_conformance.harness.isolation import visibility
from asr_conformance.harness.isolation.visibility import Guarded, canonical, refusal

#: System folders shown read-only when they exist (a link among them is recreated as a link).
SYSTEM_FOLDERS = visibility.SYSTEM_FOLDERS
#: Where root-only entries are looked for and covered when the harness runs as root.
MASKED_TREES = ("/etc", "/opt")
#: Folders never shown whole, even as an implementation's folder: only the program file then.
SHARED_FOLDERS = visibility.SHARED_FOLDERS
#: Entries of a shown folder that hold history, caches or answers (a checkout's VCS, example databases).
HIDDEN_ENTRIES = visibility.HIDDEN_ENTRIES
SANDBOX_UID = 65534
#: The size of /dev/shm, at most (it is RAM).
SHM_CAP = 64 * 1024 * 1024
NETWORKS = ("none", "host")


@dataclass(frozen=True, slots=True)
class View:
    """What one process sees besides the system folders."""

    read_only: tuple[str, ...] = ()
    writable: tuple[str, ...] = ()
    #: Read-only files shown alone (a program in a shared folder).
    files: tuple[str, ...] = ()
    #: Folders covered by an empty, read-only tmpfs.
    hidden: tuple[str, ...] = ()
    #: Folders replaced by a private, size-limited tmpfs (the box's HOME and TMPDIR).
    scratch: tuple[str, ...] = ()
    #: Links made in the sandbox, (target, link): a program or interpreter named through a link in a
    #: folder that is not shown.
    links: tuple[tuple[str, str], ...] = ()


@cache
def executable() -> str | None:
    return shutil.which("bwrap")


@cache
def features() -> frozenset[str]:
    """The optional bubblewrap flags this bwrap knows (older ones lack some)."""
    found = executable()
    if not found:
        return frozenset()
    try:
        text = subprocess.run([found, "--help"], capture_output=True, timeout=20, stdin=subprocess.DEVNULL).stdout
    except (OSError, subprocess.SubprocessError):
        return frozenset()
    said = text.decode("utf-8", "replace")
    return frozenset(flag for flag in ("--disable-userns", "--size", "--unshare-cgroup-try", "--new-session")
                     if flag in said)


def _system_binds() -> list[str]:
    argv: list[str] = []
    for folder in SYSTEM_FOLDERS:
        if os.path.islink(folder):
            argv += ["--symlink", os.readlink(folder), folder]
        elif os.path.isdir(folder):
            argv += ["--ro-bind", folder, folder]
    return argv


def _privileges(uid: int = SANDBOX_UID) -> list[str]:
    argv = ["--unshare-user", "--uid", str(uid), "--gid", str(uid), "--cap-drop", "ALL"]
    if "--disable-userns" in features():
        argv.append("--disable-userns")
    return argv


def _namespaces(network: str) -> list[str]:
    argv = ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--die-with-parent"]
    if network != "host":
        argv.append("--unshare-net")
    argv.append("--unshare-cgroup-try" if "--unshare-cgroup-try" in features() else "")
    argv.append("--new-session" if "--new-session" in features() else "")
    return [a for a in argv if a]


def _sized_tmpfs(path: str, size: int) -> list[str]:
    sized = ["--size", str(size)] if "--size" in features() and size else []
    return [*sized, "--tmpfs", path]


def probe_command(found: str) -> list[str]:
    """The sandbox's fixed part around ``true``: what must work for the sandbox to be used."""
    return [found, *_privileges(), *_namespaces("none"), *_system_binds(), "--proc", "/proc", "--dev", "/dev",
            *_sized_tmpfs("/tmp", 1 << 20), "--", "true"]


@cache
def problem() -> str:
    """Why the sandbox cannot run here ("" when it can): tried once per process."""
    if not sys.platform.startswith("linux"):
        return "bubblewrap needs Linux"
    found = executable()
    if found is None:
        return "bwrap is not installed"
    try:
        tried = subprocess.run(probe_command(found), capture_output=True, timeout=20, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as error:
        return f"bwrap does not start: {error}"
    if tried.returncode != 0:
        said = tried.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"bwrap fails here (no user namespaces?): {said[-1] if said else 'exit status ' + str(tried.returncode)}"
    return ""


def protections(network: str) -> list[str]:
    """Each protection in force, for the run header."""
    said = [f"user namespace (uid {SANDBOX_UID}, no capabilities"
            + (", no nested namespaces)" if "--disable-userns" in features() else ")"),
            "no_new_privs", "new session" if "--new-session" in features() else "same session",
            "PID, IPC, UTS" + (" and network namespaces" if network != "host" else " namespaces, host network"),
            "allow-listed read-only files (system, Python environment, the implementation's folder)",
            "private /tmp and /dev/shm" + (", size-limited" if "--size" in features() else " (size not limited)")]
    if os.geteuid() == 0:
        said.append("root-only files covered")
    return said


#: Longest time a listing of root-only entries is reused (it is also made anew when a tree's top changes).
ROOT_ONLY_REFRESH = 10.0
#: The root-only entries found under each set of trees, with the times that date the listing: a pure cache of
#: facts of the machine, made anew when a tree's top changes or the listing is older than ROOT_ONLY_REFRESH.
_root_only: dict[tuple[str, ...], tuple[float, tuple[float, ...], tuple[tuple[str, bool], ...]]] = {}


def root_only_entries(trees: tuple[str, ...] = MASKED_TREES) -> tuple[tuple[str, bool], ...]:
    """Every entry under ``trees`` an unprivileged user could not read: (path, is_folder).

    A walk costs tens of milliseconds, so a listing is reused while the trees' top folders are
    unchanged, for at most ROOT_ONLY_REFRESH seconds."""
    import time

    stamps = tuple(_mtime(t) for t in trees)
    now = time.monotonic()
    kept = _root_only.get(trees)
    if kept and kept[1] == stamps and now - kept[0] < ROOT_ONLY_REFRESH:
        return kept[2]
    listing = _walk_root_only(trees)
    _root_only[trees] = (now, stamps, listing)
    return listing


def forget_root_only() -> None:
    """Drop the kept listings: an entry listed is gone (``processes.vanished_mount_point``)."""
    _root_only.clear()


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


def _walk_root_only(trees: tuple[str, ...]) -> tuple[tuple[str, bool], ...]:
    found: list[tuple[str, bool]] = []
    pending = [t for t in trees if os.path.isdir(t) and not os.path.islink(t)]
    while pending:
        folder = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_symlink():
                    continue
                mode = entry.stat(follow_symlinks=False).st_mode
            except OSError:
                continue
            if entry.is_dir(follow_symlinks=False):
                if mode & 0o005 != 0o005:
                    found.append((entry.path, True))
                else:
                    pending.append(entry.path)
            elif mode & 0o004 == 0:
                found.append((entry.path, False))
    return tuple(sorted(found))


def _under(path: str, folders: Iterable[str]) -> bool:
    return any(path == f or path.startswith(f.rstrip("/") + "/") for f in folders)


def command(argv: Sequence[str], view: View, cwd: str, network: str, disk: int) -> list[str]:
    """The bwrap command line that runs ``argv`` contained, seeing only ``view``."""
    found = executable() or "bwrap"
    out = [found, *_privileges(), *_namespaces(network), *_system_binds(), "--proc", "/proc", "--dev", "/dev"]
    out += _sized_tmpfs("/tmp", disk) + _sized_tmpfs("/dev/shm", min(disk, SHM_CAP))
    if os.geteuid() == 0:
        # An entry removed since the listing is gone from the bound tree too, and bwrap cannot make a mount point
        # for it in a read-only folder: it is left out rather than failing the start.
        for path, is_folder in root_only_entries():
            if os.path.lexists(path):
                out += ["--tmpfs", path, "--remount-ro", path] if is_folder else ["--ro-bind", "/dev/null", path]
    shown = [p for p in dict.fromkeys(view.read_only) if not _under(p, SYSTEM_FOLDERS) or p in view.writable]
    for folder in sorted(shown, key=len):
        out += ["--ro-bind", folder, folder]
    for file in view.files:
        out += ["--ro-bind", file, file]
    for target, link in view.links:
        out += ["--symlink", target, link]
    # Hidden folders are covered before the writable ones are bound (a variant's folder may lie inside a
    # hidden one, pytest's temporary folder say), and made read-only last, so that the binds show through.
    hidden = sorted((p for p in dict.fromkeys(view.hidden) if os.path.isdir(p) and not os.path.islink(p)), key=len)
    for folder in hidden:
        out += ["--tmpfs", folder]
    for file in sorted(p for p in dict.fromkeys(view.hidden) if p not in hidden):
        out += ["--ro-bind", "/dev/null", file]
    for folder in sorted(dict.fromkeys(view.writable), key=len):
        out += ["--bind", folder, folder]
    for folder in view.scratch:
        out += _sized_tmpfs(folder, disk)
    for folder in hidden:
        out += ["--remount-ro", folder]
    if not _under(cwd, [*shown, *view.writable, *view.scratch, *SYSTEM_FOLDERS]):
        # The folder pytest runs in is not the implementation's: it stands there empty (the root is a
        # fresh tmpfs, so nothing of it is shown but the folders bound into it).
        out += ["--dir", cwd]
    # Nothing but its scratch and output folders is writable: not even the folders bwrap made to bind into.
    out += ["--remount-ro", "/", "--chdir", cwd]
    return [*out, "--", *argv]


@cache
def python_environment() -> tuple[str, ...]:
    """The folders the suite's Python needs: its prefixes, its interpreter, and every folder its
    site-packages point to (``.pth`` lines, and the package's own folders in an editable install)."""
    folders = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
               os.path.dirname(os.path.realpath(sys.executable))}
    for site in _site_folders():
        for pth in Path(site).glob("*.pth"):
            try:
                lines = pth.read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                continue
            folders.update(line.strip() for line in lines
                           if line.strip() and not line.startswith(("#", "import")) and os.path.isdir(line.strip()))
    folders.update(package_folders())
    real = {os.path.realpath(f) for f in folders if f and os.path.isdir(f)}
    return tuple(sorted(f for f in real if f not in SHARED_FOLDERS))


def _site_folders() -> list[str]:
    import site

    found = list(getattr(site, "getsitepackages", lambda: [])())
    return [f for f in found if os.path.isdir(f)]


@cache
def package_folders() -> tuple[str, ...]:
    """The folders the asr_conformance package is made of (several, in an editable install)."""
    import importlib.util

    folders = []
    for name in ("asr_conformance", "asr_conformance.generators", "asr_conformance.reports", "asr_conformance.cases"):
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        folders.extend(spec.submodule_search_locations or [] if spec else [])
    from asr_conformance import CORPUS_DIR

    # The corpus folder (its rule catalog and case schema are public; its case folders are hidden).
    folders.append(str(CORPUS_DIR))
    return tuple(dict.fromkeys(os.path.realpath(f) for f in folders if os.path.isdir(f)))


#: Files that mark a project's root folder: a program in ``bin/`` loads ``../lib``, so its project is shown whole.
PROJECT_MARKERS = (".git", ".hg", "pyproject.toml", "setup.py", "setup.cfg", "package.json", "Cargo.toml", "go.mod",
                   "pom.xml", "build.gradle", "build.gradle.kts", "Gemfile", "composer.json", "Makefile",
                   "CMakeLists.txt", "deno.json", "mix.exs")


def project_root(folder: str, guarded: Guarded = visibility.NOTHING_GUARDED) -> str | None:
    """The folder to show for a program in the canonical ``folder``: the nearest folder at or above it
    holding a project marker (never a shared folder nor a home folder itself) when ``refusal`` allows it, or
    the highest folder below that project on the way to ``folder`` when that is allowed (``examples/`` in a
    checkout of the suite), else ``folder`` itself when allowed, else None (the program file alone)."""
    home = canonical(os.path.expanduser("~"))
    here = folder
    while here not in SHARED_FOLDERS and here != home and os.path.dirname(here) != here:
        if any(os.path.lexists(os.path.join(here, marker)) for marker in PROJECT_MARKERS):
            if not refusal(here, guarded):
                return here
            # A project that may not be shown whole (a checkout of the suite): the highest folder below it.
            if folder != here:
                below = folder
                while os.path.dirname(below) != here:
                    below = os.path.dirname(below)
                if not refusal(below, guarded):
                    return below
            break
        here = os.path.dirname(here)
    return None if refusal(folder, guarded) else folder


@dataclass
class Own:
    """What of the implementation's own the sandbox shows: folders, lone files, links to make."""

    folders: list[str]
    files: list[str]
    links: list[tuple[str, str]]


def own_folders(argv: Sequence[str], cwd: str | None, guarded: Guarded = visibility.NOTHING_GUARDED) -> Own:
    """The implementation's own folders and files to show read-only, every path made canonical first: the
    project (``project_root``) of the program and of every file its command line names (``python3
    /opt/acme/check.py``), or the file alone where its folder may not be shown whole (``/``, ``/tmp``, a
    checkout of the suite); the project of the working directory a manifest gives; and the prefix of a
    script's interpreter when it lives outside the system folders.  Paths in the staging are left out."""
    own = Own([], [], [])
    skipped = [*guarded.staging, *([guarded.box] if guarded.box else [])]
    environment = python_environment()
    program = argv[0]
    for argument in argv:
        if argument is not program and not (os.path.isabs(argument) and os.path.isfile(argument)):
            continue
        _show_file(canonical(argument), guarded, environment, skipped, own)
    written = os.path.normpath(os.path.abspath(program))
    real_program = canonical(program)
    if written != real_program:
        # Named through a link: its folder is shown when it may be, else the link is made alone.
        linked = canonical(os.path.dirname(written))
        if not _under(linked, SYSTEM_FOLDERS) and not _under(linked, skipped):
            kept = project_root(linked, guarded)
            if kept:
                own.folders.append(kept)
            else:
                own.links.append((real_program, written))
    if cwd:
        kept = project_root(canonical(cwd), guarded)
        if kept:
            own.folders.append(kept)
    interpreter = _interpreter(real_program)
    if interpreter:
        real = canonical(interpreter)
        if not _under(real, SYSTEM_FOLDERS) and not _under(real, skipped):
            prefix = os.path.dirname(os.path.dirname(real))
            for candidate in (prefix, os.path.dirname(real)):
                if not refusal(candidate, guarded):
                    own.folders.append(candidate)
                    break
            else:
                own.files.append(real)
            written_folder = canonical(os.path.dirname(os.path.normpath(interpreter)))
            if os.path.normpath(interpreter) != real and not _under(written_folder, [*own.folders, *SYSTEM_FOLDERS]):
                own.links.append((real, os.path.normpath(interpreter)))
    return own


def _show_file(real: str, guarded: Guarded, environment: Sequence[str], skipped: Sequence[str], own: Own) -> None:
    if _under(real, skipped) or _under(real, SYSTEM_FOLDERS):
        return
    here = os.path.dirname(real)
    if _under(real, environment) and not refusal(here, guarded):
        own.folders.append(here)
        return
    kept = project_root(here, guarded)
    if kept:
        own.folders.append(kept)
    else:
        own.files.append(real)


def _interpreter(program: str) -> str | None:
    """The absolute interpreter path of a ``#!`` script as written (not ``/usr/bin/env``), or None."""
    try:
        with open(program, "rb") as handle:
            first = handle.readline(512)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    words = first[2:].decode("utf-8", "replace").split()
    if not words or not os.path.isabs(words[0]) or os.path.basename(words[0]) == "env":
        return None
    return words[0]
