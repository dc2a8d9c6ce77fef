"""A run's containment settings and one implementation's policy: what a start is allowed, decided once.

A run's settings (``Settings``: --sandbox, --pass-env, --limit-*, the staging folder, the run's
deadline...) are made once by the plugin (``settings_for``), kept in its ``RunContext``
(``harness.run_context``) and carried to each start in the implementation's ``Policy``: nothing of a
run is set on this module, and a start outside a run gets the defaults (``DEFAULT_SETTINGS``).  Here
too: the checks of the options a user can get wrong (each a ``UsageError`` naming the option), the
limits and network a start gets, the run's time limit, and which sandbox the machine allows
(``sandbox.problem``, found out once per process: a fact of the machine, not of a run).
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from asr_conformance import CORPUS_DIR
from asr_conformance.harness.isolation import sandbox, visibility
from asr_conformance.harness.isolation.limits import DEFAULTS as DEFAULT_LIMITS
from asr_conformance.harness.isolation.limits import Limits
from asr_conformance.vocabulary import redaction
from asr_conformance.vocabulary.errors import UserError
from asr_conformance.vocabulary.option_defaults import DEFAULT_MAX_OUTPUT, MAX_TIMEOUT, SANDBOXES
from asr_conformance.vocabulary.option_defaults import MAX_OUTPUT_CAP as MAX_OUTPUT_CAP


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


def check_allow_read(folders: Iterable[str], where: str) -> None:
    """Refuse a folder to show read-only that is ``/``, a shared folder, or holds one, or holds the suite's
    package or corpus (UsageError naming it); the rest is checked at each start (``wrap``)."""
    known = visibility.Guarded(secret=tuple(str(p) for p in corpus_copies()), package=sandbox.package_folders())
    for folder in folders:
        real = visibility.canonical(folder)
        why = visibility.refusal(real, known)
        if why:
            raise UsageError(f"{where}: {folder!r} ({real}) may not be shown to an implementation: {why}")


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


def sandboxed(settings: Settings) -> bool:
    try:
        return sandbox_mode(settings.sandbox)[0] == "bwrap"
    except UsageError:
        return False


def sandbox_mode(chosen: str = DEFAULT_SETTINGS.sandbox) -> tuple[str, str]:
    """("bwrap", "") or ("none", why), from --sandbox (``chosen``) and what the machine allows
    (``sandbox.problem``, found out once per process: the one fact kept, so that a test pretending the
    machine is another patches that alone and has nothing to forget)."""
    if chosen == "none":
        return "none", "--sandbox=none"
    problem = sandbox.problem()
    if not problem:
        return "bwrap", ""
    if chosen in ("strict", "bwrap"):
        raise UsageError(f"--sandbox={chosen}: the sandbox cannot run here: {problem}")
    return "none", problem
