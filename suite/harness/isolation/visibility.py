"""What the sandbox may show, decided on canonical paths, and the check of a finished bwrap command line.

Folders are compared as strings, so every path is made canonical (``realpath``: ``//``, ``.``,
``..`` and links resolved) before anything is decided about it: ``//`` is the root folder, not a
folder of its own.  A folder is never shown whole when it is ``/``, a shared folder (``/tmp``,
``/home``, ...) or holds one, holds the suite's package or a guarded folder (the corpus, the
staging, the report, counterexample and example-database folders, pytest's temporary root), or
lies in the Python environment's bare prefix of a shared folder.  Entries that hold history,
caches or answers (``.git``, ``.hypothesis``, ...) are covered at any depth of a shown folder.

``violations`` checks the final command line against these rules, independently of the code that
built it; the harness refuses to start an implementation when it finds any.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

#: System folders, shown read-only as they are when they exist (root-only entries covered; not looked into).
SYSTEM_FOLDERS = ("/usr", "/etc", "/opt", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/nix", "/gnu")
#: Folders never shown whole, nor any folder that holds one.
SHARED_FOLDERS = frozenset({"/", "/tmp", "/var/tmp", "/home", "/root", "/dev/shm", "/run", "/var", "/srv", "/mnt",
                            "/media", "/proc", "/sys", "/dev", "/boot"})
#: Entries of a shown folder, at any depth, that hold history, caches or answers (VCS, example databases).
HIDDEN_ENTRIES = frozenset({".git", ".hg", ".svn", ".bzr", ".jj", ".hypothesis", ".pytest_cache", ".tox", ".nox",
                            ".mypy_cache", ".ruff_cache"})
#: Folders looked at below a shown folder before the harness refuses it as too large to check.
MAX_WALK = 50_000


def canonical(path: str | os.PathLike[str]) -> str:
    """The one spelling of ``path`` decisions are made on (absolute, links and dots resolved)."""
    return os.path.realpath(os.path.abspath(os.fspath(path)))


def under(path: str, folder: str) -> bool:
    """Whether ``path`` is ``folder`` or inside it (both canonical)."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def pytest_temp_roots() -> tuple[str, ...]:
    """pytest's temporary roots on this machine (``pytest-of-<user>`` in the temporary folder)."""
    base = os.environ.get("PYTEST_DEBUG_TEMPROOT") or tempfile.gettempdir()
    try:
        import getpass

        user = getpass.getuser()
    except (ImportError, KeyError, OSError):
        user = "unknown"
    return (canonical(os.path.join(base, f"pytest-of-{user}")),)


@dataclass(frozen=True)
class Guarded:
    """What no implementation may see whole, for one start: canonical paths."""

    #: Folders whose content stays hidden (corpus case folders, staging, reports, pytest's temporary root...).
    secret: tuple[str, ...] = ()
    #: The run's staging folders (hidden; only the box's own folders are bound back from them).
    staging: tuple[str, ...] = ()
    #: The suite's package folders (shown themselves; a folder holding one is not).
    package: tuple[str, ...] = ()
    #: The Python environment's folders (shown by contract; its prefixes are looked into at their top only).
    environment: tuple[str, ...] = ()
    #: The box's own folder (bound back inside the hidden staging).
    box: str = ""
    #: Output folders made for the process (bound back writable, perhaps inside the staging).
    writable: tuple[str, ...] = ()
    #: System folders (shown as they are, root-only entries covered; not looked into).
    system: tuple[str, ...] = SYSTEM_FOLDERS


def refusal(folder: str, guarded: Guarded) -> str:
    """Why the canonical ``folder`` may not be shown whole ("" when it may)."""
    if folder == "/":
        return "it is the root folder of the machine"
    for shared in sorted(SHARED_FOLDERS):
        if under(shared, folder):
            return f"it is or holds the shared folder {shared}"
    for package in guarded.package:
        if under(package, folder) and folder != package and folder not in guarded.environment:
            return f"it holds the suite's package ({package})"
    for secret in (*guarded.secret, *guarded.staging):
        if under(secret, folder):
            return f"it holds {secret}, which no implementation may see"
    return ""


#: Each folder's walk, with the times that date it: a pure cache of facts of the machine, walked anew when
#: the folder changes.
_walked: dict[str, tuple[float, float, tuple[str, ...], tuple[str, ...]]] = {}
#: Longest time a folder's listing of hidden entries is reused.
WALK_REFRESH = 10.0


class TooLarge(Exception):
    """A shown folder with more than MAX_WALK folders below it."""


def hidden_below(folder: str, shallow: bool = False) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Every entry named in HIDDEN_ENTRIES at any depth of ``folder``, and every case corpus in it (a
    folder holding ``rules.toml``), without following links; reused while the folder's top is unchanged,
    for at most WALK_REFRESH seconds.  TooLarge beyond MAX_WALK folders.  ``shallow``: the top only (the
    Python environment's prefixes: thousands of folders of the interpreter's own, walked in seconds)."""
    stamp = _mtime(folder)
    now = time.monotonic()
    kept = _walked.get(folder + ("\0" if shallow else ""))
    if kept and kept[1] == stamp and now - kept[0] < WALK_REFRESH:
        return kept[2], kept[3]
    entries: list[str] = []
    corpora: list[str] = []
    pending = [folder]
    seen = 0
    while pending:
        here = pending.pop()
        seen += 1
        if seen > MAX_WALK:
            raise TooLarge(f"{folder} holds more than {MAX_WALK} folders")
        try:
            listing = list(os.scandir(here))
        except OSError:
            continue
        for entry in listing:
            try:
                is_folder = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if entry.name == "rules.toml" and here != folder:
                corpora.append(here)
            if entry.name in HIDDEN_ENTRIES:
                entries.append(entry.path)  # a folder, or a file or link (a worktree's .git names its history)
            elif is_folder and entry.name != "__pycache__" and not shallow:
                pending.append(entry.path)
    if os.path.isfile(os.path.join(folder, "rules.toml")):
        corpora.append(folder)
    found = (tuple(sorted(entries)), tuple(sorted(corpora)))
    _walked[folder + ("\0" if shallow else "")] = (now, stamp, *found)
    return found


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


# --- the invariant ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Mount:
    kind: str  # "bind" (read-only or not), "cover" (tmpfs or /dev/null), "other"
    source: str
    target: str


def _mounts(argv: Sequence[str]) -> tuple[list[_Mount], list[str], int]:
    """The mounts of a bwrap command line in order, its other options, and where ``--`` ends them."""
    takes_two = {"--bind", "--ro-bind", "--dev-bind", "--bind-try", "--ro-bind-try", "--dev-bind-try", "--symlink",
                 "--chmod", "--bind-data", "--ro-bind-data", "--file"}
    takes_one = {"--tmpfs", "--dir", "--remount-ro", "--proc", "--dev", "--mqueue", "--uid", "--gid", "--size",
                 "--chdir", "--perms", "--hostname", "--setenv", "--unsetenv", "--cap-drop", "--cap-add", "--userns",
                 "--userns2", "--pidns", "--sync-fd", "--info-fd", "--json-status-fd", "--block-fd", "--lock-file",
                 "--seccomp", "--add-seccomp-fd", "--exec-label", "--file-label", "--argv0", "--userns-block-fd"}
    found: list[_Mount] = []
    options: list[str] = []
    index = 1
    while index < len(argv) and argv[index] != "--":
        word = argv[index]
        if word in takes_two:
            source, target = argv[index + 1], argv[index + 2]
            if word in ("--bind", "--ro-bind", "--dev-bind", "--bind-try", "--ro-bind-try", "--dev-bind-try"):
                kind = "cover" if source == "/dev/null" else "bind"
                found.append(_Mount(kind, source, target))
            elif word == "--symlink":
                found.append(_Mount("other", source, target))
            options.append(word)
            index += 3
        elif word in takes_one:
            value = argv[index + 1]
            if word == "--tmpfs":
                found.append(_Mount("cover", "", value))
            options += [word, value]
            index += 2
        else:
            options.append(word)
            index += 1
    return found, options, index


def violations(argv: Sequence[str], guarded: Guarded, uid: int) -> list[str]:
    """Every way the bwrap command line ``argv`` shows more than the rules allow (empty: it may start).

    Checked here, apart from the code that built it: each bound folder is canonical and bound where
    it is, none is refused by ``refusal`` (the suite's own Python environment and package excepted,
    whose secrets must then be covered), every guarded folder and every hidden entry below a bound
    folder is covered after it is bound, nothing is bound inside a guarded folder but the box's own
    folders, and the process runs as ``uid`` in a user namespace with no capabilities."""
    mounts, options, end = _mounts(argv)
    problems: list[str] = []
    if end >= len(argv) - 1:
        problems.append("no command after --")
    for needed in ("--unshare-user", "--unshare-pid"):
        if needed not in options:
            problems.append(f"{needed} is missing")
    if "--cap-add" in options:
        problems.append("a capability is added")
    if "--cap-drop" not in options or options[options.index("--cap-drop") + 1] != "ALL":
        problems.append("capabilities are not all dropped")
    if "--uid" not in options or options[options.index("--uid") + 1] != str(uid):
        problems.append(f"the process does not run as uid {uid}")
    own = {*guarded.environment, *guarded.package}
    binds = [(position, m) for position, m in enumerate(mounts) if m.kind == "bind"]
    for position, mount in binds:
        if mount.source != mount.target:
            problems.append(f"{mount.source} is shown as {mount.target}")
        if canonical(mount.source) != mount.source:
            problems.append(f"{mount.source} is not canonical ({canonical(mount.source)})")
        is_box = (bool(guarded.box) and under(mount.source, guarded.box)) or mount.source in guarded.writable
        if mount.source in guarded.system:
            continue
        if os.path.isdir(mount.source) and mount.source not in own and not is_box:
            why = refusal(mount.source, guarded)
            if why:
                problems.append(f"{mount.source} is shown whole: {why}")
                continue  # refused already: what lies below it need not be listed
        for folder in guarded.staging:
            if under(mount.source, folder) and not is_box:
                problems.append(f"{mount.source} is shown from the staging, not from this box")
        for secret in (*guarded.secret, *guarded.staging):
            if under(secret, mount.source) and os.path.exists(secret) and not _covered(secret, mounts, position):
                problems.append(f"{secret} is visible through {mount.source}")
        if os.path.isdir(mount.source):
            try:
                entries, corpora = hidden_below(
                    mount.source, shallow=mount.source in guarded.environment and mount.source not in guarded.package)
            except TooLarge as error:
                problems.append(f"{mount.source} cannot be checked: {error}")
                continue
            for entry in entries:
                if not _covered(entry, mounts, position):
                    problems.append(f"{entry} is visible through {mount.source}")
            for corpus in corpora:
                for case_folder in case_folders(corpus):
                    if not _covered(case_folder, mounts, position):
                        problems.append(f"the cases in {case_folder} are visible through {mount.source}")
    return problems


def _covered(path: str, mounts: list[_Mount], after: int) -> bool:
    """Whether a cover at ``path`` or above it comes after mount number ``after``, and no later bind shows
    ``path`` again from outside the box."""
    covering = [i for i, m in enumerate(mounts) if i > after and m.kind == "cover" and under(path, m.target)]
    if not covering:
        return False
    last_cover = max(covering)
    return not any(i > last_cover and m.kind == "bind" and under(path, m.target) for i, m in enumerate(mounts))


#: What stays readable in a corpus folder: the public rule catalog and the case schema, never a case.
PUBLIC_IN_CORPUS = ("schema",)


def case_folders(corpus: str) -> list[str]:
    """The folders of cases in a corpus folder (all of its folders but PUBLIC_IN_CORPUS)."""
    try:
        listing = list(os.scandir(corpus))
    except OSError:
        return []
    return sorted(os.path.join(corpus, e.name) for e in listing
                  if e.is_dir(follow_symlinks=False) and e.name not in PUBLIC_IN_CORPUS and e.name not in HIDDEN_ENTRIES)


def canonical_all(paths: Iterable[str | os.PathLike[str]]) -> list[str]:
    return [canonical(p) for p in paths]


#: The rules that need no run: the root folder and the shared folders.
NOTHING_GUARDED = Guarded()
