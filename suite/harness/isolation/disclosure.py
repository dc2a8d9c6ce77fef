"""What a run says about its containment: the run header's line, and every way it widens the closed box.

Part of the certificate: a reader of the report must see which protections were in force, what the
machine could not provide, and what the run chose to show an implementation beyond docs/contract.md
§9.1 (variables passed through, folders shown, the host network, no sandbox).
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from asr_conformance.harness.isolation import mounts, sandbox, visibility
from asr_conformance.harness.isolation.limits import pids_cgroups
from asr_conformance.harness.isolation.policies import (
    Policy,
    Settings,
    UsageError,
    effective_limits,
    effective_network,
    sandbox_mode,
    settings_of,
)
from asr_conformance.harness.isolation.sweeping import subreaper_possible


def describe_sandbox(policy: Policy | None = None) -> str:
    """The run header's line: each protection in force, or why there is none."""
    mode, why = sandbox_mode(settings_of(policy).sandbox)
    limits = f"limits per process: {effective_limits(policy).describe()}"
    if mode == "bwrap":
        protections = [*sandbox.protections(effective_network(policy)), mounts.describe()]
        return f"sandbox: bubblewrap ({'; '.join(protections)}); {limits}"
    cleanup = "process-group and subreaper cleanup" if subreaper_possible() else "process-group cleanup"
    if subreaper_possible():
        cleanup += (", this process not dumpable (its /proc environ and memory stay open to a root implementation)"
                    if os.geteuid() == 0 else ", this process not dumpable (its /proc environ and memory closed)")
    warning = "" if settings_of(policy).sandbox == "none" else " -- WARNING: the implementation can read and write whatever you can"
    return f"sandbox: none ({why}), {cleanup}{warning}; {limits}"


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
