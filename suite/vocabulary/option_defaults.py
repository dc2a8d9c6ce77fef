"""The defaults and bounds that the command-line options declare, in the standard library only.

The plugin's entry point declares every option in every pytest run of the environment, so it
reads these without loading the harness (and Hypothesis with it); the harness takes the same
values from here, so each is decided in one place."""

from __future__ import annotations

#: The roles an implementation can be certified in.
ROLES = ("validator", "producer", "reader")
#: Seconds per case before the implementation is killed (--asr-timeout).
DEFAULT_TIMEOUT = 30.0
#: Longest time one case may take, whatever a manifest or --asr-timeout says.
MAX_TIMEOUT = 3600.0
#: Largest stream a producer may hand over (stdout one-shot, a file persistent); --max-output.
DEFAULT_MAX_OUTPUT = 64 * 1024 * 1024
#: Ceiling for --max-output: judging a stream costs many times its size in memory.
MAX_OUTPUT_CAP = 1024 * 1024 * 1024
#: auto: the sandbox where the machine allows it, else none with a warning; strict (or bwrap): the
#: sandbox or no run at all; none: no sandbox.
SANDBOXES = ("auto", "strict", "bwrap", "none")
#: The counterexample folder's name under the report folder (``--counterexamples`` overrides it).
COUNTEREXAMPLES = "counterexamples"
#: Default shrink budget per failing property: enough to shrink a typical failure
#: to a few records, small enough that dozens of failing properties stay minutes.
DEFAULT_SHRINK_SECONDS = 10.0
DEFAULT_SHRINK_STEPS = 100

MIB = 1024 * 1024
#: Option and manifest key for each per-process limit, and its unit for messages.
LIMIT_NAMES = {
    "memory": ("--limit-memory", "bytes"), "cpu": ("--limit-cpu", "seconds"),
    "processes": ("--limit-processes", "processes"), "open_files": ("--limit-open-files", "descriptors"),
    "file_size": ("--limit-file-size", "bytes"), "disk": ("--limit-disk", "bytes"),
}
#: The limits given in bytes (they take K, M and G suffixes).
LIMIT_SIZES = frozenset({"memory", "file_size", "disk"})
#: Each limit's default (``harness.isolation.limits.Limits`` holds them as its field defaults).
LIMIT_DEFAULTS = {"memory": 8 * 1024 * MIB, "cpu": 600, "processes": 256, "open_files": 1024,
                  "file_size": 256 * MIB, "disk": 256 * MIB}
