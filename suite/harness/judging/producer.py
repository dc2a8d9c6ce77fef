"""The producer role (docs/contract.md §6): convert native inputs under controlled
changes of the conversion environment, and judge the streams.

Whether a value "comes from the source" (ASR-103/104, 154, 159, 169, 187,
261, 267) cannot be read from one stream.  It can be tested metamorphically:
convert the same input again, under another clock, timezone, locale, working
directory or HOME, and every record must stay the same, except
``producer.instance`` (ASR-006), the one member that may name the run.

Independent of pytest: ``judging.producer_case`` judges each producer test with it.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Protocol, TypeAlias

from asr_conformance.harness.adapters.answers import Conversion
from asr_conformance.harness.adapters.oneshot import OneShotProducer
from asr_conformance.harness.adapters.persistent import PersistentImplementation
from asr_conformance.harness.isolation.policies import Policy
from asr_conformance.harness.judging.produced import ProducedStream, produced
from asr_conformance.harness.judging.readings import Readings
from asr_conformance.harness.judging.steps import step_limit, within

#: The rules the output test is marked with: the header and producer rules a converter most often
#: breaks, and the producer-side linkage fact (every other stream rule is checked too).
OUTPUT_RULES = ("ASR-003", "ASR-155", "ASR-156", "ASR-257")

# --- variants of the conversion environment -------------------------------------------

#: Where Debian and Ubuntu install libfaketime (``apt-get install faketime``).
FAKETIME_PATHS = (
    "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
    "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1",
    "/usr/lib/*/faketime/libfaketime.so.1",
    "/usr/lib/faketime/libfaketime.so.1",
    "/usr/local/lib/faketime/libfaketime.so.1",
)
#: The clock every run under the ``clock`` variant starts from.
FAKE_TIME = "@2003-04-05 06:07:08"
#: UTC+14, the zone furthest from UTC: a local time there differs from UTC in the date too.
FAR_ZONE = "Pacific/Kiritimati"
FAR_ZONE_POSIX = "<+14>-14"
#: Locales that differ from C in number, date and collation rules, best first.
OTHER_LOCALES = ("de_DE.UTF-8", "fr_FR.UTF-8", "tr_TR.UTF-8", "en_US.UTF-8", "POSIX")


@dataclass(frozen=True)
class Setting:
    """How one conversion is run: environment overrides and a working directory (None: the target's);
    ``writable``: the fresh folders made for it, which the sandbox leaves writable."""

    env: dict[str, str]
    cwd: str | None = None
    writable: tuple[str, ...] = ()


@dataclass(frozen=True)
class Variant:
    """A named change to the conversion environment, and the rules a changed stream would break."""

    name: str
    description: str
    #: Overrides on top of the baseline's.
    env: Mapping[str, str] = field(default_factory=dict)
    #: Run from a fresh, empty working directory.
    fresh_cwd: bool = False
    #: Run with HOME set to a fresh, empty folder.
    fresh_home: bool = False
    rules: tuple[str, ...] = ()
    #: Why the variant cannot run on this machine ("" when it can).
    unavailable: str = ""

    @property
    def available(self) -> bool:
        return not self.unavailable

    def setting(self, scratch: Path, cwd: str | None) -> Setting:
        """The environment for one run (overrides on top of the harness's allow-list); fresh
        folders are made under ``scratch``.  Every run already has a fresh, empty HOME of its
        own; the ``home`` variant gives it another one, at another path."""
        env = {**baseline_env(), **self.env}
        made = []
        if self.fresh_home:
            env["HOME"] = tempfile.mkdtemp(prefix="home-", dir=scratch)
            made.append(env["HOME"])
        if self.fresh_cwd:
            cwd = tempfile.mkdtemp(prefix="cwd-", dir=scratch)
            made.append(cwd)
        return Setting(env, cwd, tuple(made))


@cache
def available_locales() -> frozenset[str]:
    """``locale -a``, normalised (``C.utf8`` and ``C.UTF-8`` name one locale)."""
    try:
        listed = subprocess.run(["locale", "-a"], capture_output=True, text=True, timeout=10).stdout.split()
    except (OSError, subprocess.SubprocessError):
        listed = []
    return frozenset(_locale_key(name) for name in [*listed, "C", "POSIX"])


def _locale_key(name: str) -> str:
    return name.lower().replace("utf-8", "utf8")


@cache
def baseline_env() -> dict[str, str]:
    """The control run's environment: UTC and a plain UTF-8 locale, so each variant changes one thing."""
    locale = "C.UTF-8" if _locale_key("C.UTF-8") in available_locales() else "C"
    return {"TZ": "UTC", "LC_ALL": locale, "LANG": locale}


def find_faketime() -> str | None:
    for pattern in FAKETIME_PATHS:
        for path in sorted(glob.glob(pattern)):
            if os.path.isfile(path):
                return path
    return None


def _clock() -> Variant:
    library = find_faketime()
    rules = ("ASR-103", "ASR-104", "ASR-154", "ASR-187", "ASR-261", "ASR-267", "ASR-287")
    description = f"under a fake clock ({FAKE_TIME[1:]})"
    if library is None:
        return Variant("clock", description, rules=rules, unavailable=(
            "libfaketime is not installed (apt-get install faketime); looked for "
            + ", ".join(FAKETIME_PATHS)))
    preload = " ".join(filter(None, [library, os.environ.get("LD_PRELOAD", "")]))
    env = {"LD_PRELOAD": preload, "FAKETIME": FAKE_TIME, "FAKETIME_DONT_FAKE_MONOTONIC": "1"}
    return Variant("clock", description, env, rules=rules)


def _timezone() -> Variant:
    zone = FAR_ZONE if Path("/usr/share/zoneinfo", FAR_ZONE).is_file() else FAR_ZONE_POSIX
    return Variant("timezone", f"with TZ={zone} instead of UTC", {"TZ": zone},
                   rules=("ASR-103", "ASR-104", "ASR-154", "ASR-261"))


def _locale() -> Variant:
    base = baseline_env()["LC_ALL"]
    rules = ("ASR-103", "ASR-104", "ASR-267")
    other = next((name for name in OTHER_LOCALES
                  if _locale_key(name) in available_locales() and _locale_key(name) != _locale_key(base)
                  and not (base == "C" and name == "POSIX")), None)
    if other is None:
        return Variant("locale", "under another locale", rules=rules,
                       unavailable=f"no locale other than {base} is installed (see locale -a)")
    return Variant("locale", f"with LC_ALL={other} instead of {base}", {"LC_ALL": other, "LANG": other},
                   rules=rules)


def variants() -> dict[str, Variant]:
    """Every variant, by name; ``baseline`` is the control the others are compared with."""
    found = [
        Variant("baseline", "in the baseline environment"),
        Variant("again", "a second time in the same environment",
                rules=("ASR-103", "ASR-104", "ASR-169", "ASR-187")),
        _clock(),
        _timezone(),
        _locale(),
        Variant("cwd", "from a fresh, empty working directory", fresh_cwd=True, rules=("ASR-159", "ASR-267", "ASR-287")),
        Variant("home", "with HOME set to a fresh, empty folder", fresh_home=True, rules=("ASR-159", "ASR-267", "ASR-287")),
    ]
    return {variant.name: variant for variant in found}


#: The variants a test compares with the baseline, one test each.
INDEPENDENCE = ("clock", "timezone", "locale", "cwd", "home")


# --- comparing two streams ------------------------------------------------------------

_ABSENT = object()
#: Lines of comparison output, at most.
DIFF_LIMIT = 20


@dataclass(frozen=True)
class StreamDifference:
    """One member that differs between two streams, at one line."""

    line: int
    #: The record's type and id in the first stream ("" when the line is not a record).
    record: str
    kind: str
    pointer: str
    first: Any
    second: Any

    def describe(self) -> str:
        where = f"line {self.line}" + (f" ({self.record})" if self.record else "")
        if not self.pointer and isinstance(self.first, dict) and isinstance(self.second, dict):
            return f"line {self.line}: a {_label(self.first)[0]} record -> a {_label(self.second)[0]} record"
        return f"{where} {self.pointer or 'whole line'}: {_show(self.first)} -> {_show(self.second)}"


#: A stream as bytes, or already parsed (``judging.produced``).
Stream: TypeAlias = bytes | ProducedStream


def bounded_differences(a: bytes, b: bytes, what: str) -> list[StreamDifference]:
    """``differences`` bounded in time by the two streams' size: past it, ``StepHung`` naming ``what``."""
    found: list[StreamDifference] = within(step_limit(len(a) + len(b)), f"{what} ({len(a) + len(b):,} bytes)",
                                           differences, a, b)
    return found


def differences(a: Stream, b: Stream) -> list[StreamDifference]:
    """Record by record, every member that differs, ignoring ``producer.instance`` (ASR-006)."""
    one, two = produced(a), produced(b)
    first, second = one.lines, two.lines
    found: list[StreamDifference] = []
    for number in range(1, max(len(first), len(second)) + 1):
        x = first[number - 1] if number <= len(first) else _ABSENT
        y = second[number - 1] if number <= len(second) else _ABSENT
        if x == y:
            continue
        vx = one.value_at(number) if x is not _ABSENT else _ABSENT
        vy = two.value_at(number) if y is not _ABSENT else _ABSENT
        label, kind = _label(vx if isinstance(vx, dict) else vy)
        if isinstance(vx, dict) and isinstance(vy, dict) and vx.get("type") == vy.get("type"):
            found.extend(StreamDifference(number, label, kind, pointer, p, q)
                         for pointer, p, q in _diff(_comparable(vx), _comparable(vy), ""))
        elif vx != vy:
            found.append(StreamDifference(number, label, kind, "", vx, vy))
    return found


def compare_streams(a: Stream, b: Stream, limit: int = DIFF_LIMIT) -> list[str]:
    """The differing records, readable: line, JSON pointer, both values; at most ``limit`` lines."""
    return summarize(differences(a, b), a, b, limit)


def summarize(found: Sequence[StreamDifference], a: Stream, b: Stream, limit: int = DIFF_LIMIT) -> list[str]:
    lines = []
    count_a, count_b = len(produced(a).lines), len(produced(b).lines)
    if count_a != count_b:
        lines.append(f"the streams have {count_a} and {count_b} lines")
    lines.extend(d.describe() for d in found)
    if len(lines) > limit:
        lines = lines[: limit - 1] + [f"... and {len(lines) - limit + 1} more differences"]
    return lines


def rules_of(found: Iterable[StreamDifference], fallback: Sequence[str]) -> list[str]:
    """The fidelity rules the differing members fall under; ``fallback`` for members no rule names."""
    rules: set[str] = set()
    for difference in found:
        rules.update(_rules_of_member(difference) or fallback)
    return sorted(rules)


def _rules_of_member(difference: StreamDifference) -> tuple[str, ...]:
    kind, parts = difference.kind, difference.pointer.split("/")[1:]
    top = parts[0] if parts else ""
    if kind == "state":
        return ("ASR-169",)
    if kind == "config_change" and top not in ("seq", "id"):
        return ("ASR-187",)
    if top == "ts":
        return ("ASR-103", "ASR-104")
    if kind == "session" and top == "startedAt":
        return ("ASR-154",)
    if top in ("workspace", "roots"):  # a root: its vcs (ASR-159), or the directory itself (ASR-267)
        values = (difference.first, difference.second)
        holds_vcs = any(isinstance(v, (dict, list)) and '"vcs"' in json.dumps(v) for v in values)
        return ("ASR-159",) if "vcs" in parts or holds_vcs else ("ASR-267",)
    if kind == "tool_result" and top in ("startedAt", "completedAt", "durationMs"):
        return ("ASR-261",)
    if kind == "tool_result" and top == "exec":
        return ("ASR-267",)
    if kind == "hook" and top in ("exitCode", "timedOut", "stdout", "stderr", "output", "durationMs"):
        return ("ASR-287",)
    if top in ("startedAt", "completedAt", "decidedAt", "observedAt", "resetAt"):
        return ("ASR-103", "ASR-104")
    return ()


def _label(record: object) -> tuple[str, str]:
    if not isinstance(record, dict):
        return "", ""
    kind: str = record["type"] if isinstance(record.get("type"), str) else "?"
    return (f"{kind} {record['id']}" if isinstance(record.get("id"), str) else kind), kind


def _comparable(record: dict[str, Any]) -> dict[str, Any]:
    """The record without producer.instance, the one member that may name the run."""
    producer = record.get("producer")
    if isinstance(producer, dict) and "instance" in producer:
        record = {**record, "producer": {k: v for k, v in producer.items() if k != "instance"}}
    return record


def _diff(x: Any, y: Any, pointer: str) -> Iterator[tuple[str, Any, Any]]:
    if isinstance(x, dict) and isinstance(y, dict):
        for key in [*x, *(k for k in y if k not in x)]:
            child = pointer + "/" + str(key).replace("~", "~0").replace("/", "~1")
            if key not in y or key not in x:
                yield child, x.get(key, _ABSENT), y.get(key, _ABSENT)
            elif x[key] != y[key] or type(x[key]) is not type(y[key]):
                yield from _diff(x[key], y[key], child)
    elif isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
        for index, (p, q) in enumerate(zip(x, y, strict=True)):
            if p != q or type(p) is not type(q):
                yield from _diff(p, q, f"{pointer}/{index}")
    else:
        yield pointer, x, y


def _show(value: Any, limit: int = 70) -> str:
    if value is _ABSENT:
        return "(absent)"
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --- damaged inputs ------------------------------------------------------------------

#: Where bytes are changed, as fractions of the input's length.
FLIP_AT = (0.2, 0.45, 0.7, 0.9)
FLIP_MASK = 0x5A


def damaged_inputs(data: bytes) -> dict[str, bytes]:
    """Copies of a good input a producer must refuse cleanly or still convert to a valid stream."""
    return {"truncated": truncate(data), "flipped": flip_bytes(data), "empty": b""}


def truncate(data: bytes) -> bytes:
    """Cut in the middle of the last non-blank line (what a crash while writing leaves)."""
    body = data.rstrip(b"\r\n")
    start = body.rfind(b"\n") + 1
    return body[: start + max(1, (len(body) - start) // 2)] if body else b""


def flip_bytes(data: bytes) -> bytes:
    """A few bytes XORed at fixed positions: the same damage every run."""
    damaged = bytearray(data)
    for fraction in FLIP_AT:
        if damaged:
            damaged[int(len(damaged) * fraction)] ^= FLIP_MASK
    return bytes(damaged)


# --- the produced stream ---------------------------------------------------------------


@dataclass(frozen=True)
class Problem:
    rule: str
    line: int
    seq: int | None
    message: str

    def __str__(self) -> str:
        at = f"line {self.line}" + (f", seq {self.seq}" if self.seq is not None else "")
        return f"{self.rule} ({at}): {self.message}"


def output_problems(stream: Stream) -> list[Problem]:
    """The reference validator's errors, then the producer-side facts it does not check."""
    parsed = produced(stream)
    found = [Problem(d.rule, d.line, d.seq, d.message) for d in parsed.outcome.errors]
    found.extend(_invented_derived_links(parsed))
    return found


def check_output(stream: Stream) -> list[str]:
    """Every problem of a produced stream, each with its rule ID and seq; [] when it conforms."""
    return [str(problem) for problem in output_problems(stream)]


def _invented_derived_links(stream: ProducedStream) -> Iterator[Problem]:
    """ASR-257 (derived row of the linkage table): a derived callId is assigned from the source's
    structure and the call then has callIdSource "derived", so it names a tool_call of the stream.
    (An exact callId that matches no call is an orphan, which producers must keep: ASR-266.)"""
    calls: set[str] = set()
    derived: list[tuple[int, int | None, str]] = []
    for number, record in stream.objects():
        call_id = record.get("callId")
        if record.get("type") == "tool_call" and isinstance(call_id, str):
            calls.add(call_id)
        elif record.get("type") == "tool_result" and record.get("linkage") == "derived" and isinstance(call_id, str):
            seq = record.get("seq")
            derived.append((number, seq if isinstance(seq, int) else None, call_id))
    for number, seq, call_id in derived:
        if call_id not in calls:
            yield Problem("ASR-257", number, seq, f"linkage is \"derived\" but no tool_call in the stream has "
                          f"callId {call_id!r}: a derived link must name the call it was derived from")


# --- running a producer -----------------------------------------------------------------


class TargetLike(Protocol):
    """What a producer runner reads of a target (read-only: targets are frozen)."""

    @property
    def name(self) -> str: ...
    @property
    def command(self) -> tuple[str, ...]: ...
    @property
    def protocol(self) -> str: ...
    @property
    def timeout(self) -> float: ...
    @property
    def cwd(self) -> str | None: ...
    @property
    def placeholder(self) -> str | None: ...
    @property
    def pass_env(self) -> tuple[str, ...]: ...
    @property
    def policy(self) -> Policy | None: ...


class ProducerRunner:
    """Converts inputs through the target's adapter, one adapter per variant for the
    persistent protocol (its environment is fixed when the process starts)."""

    def __init__(self, target: TargetLike, scratch: Path, check_protocol: bool = False) -> None:
        self.target = target
        self.scratch = Path(scratch)
        self.check_protocol = check_protocol
        self.variants = variants()
        self._persistent: dict[str, PersistentImplementation] = {}
        self._baselines: dict[Path, Conversion] = {}
        #: The packs' readings of the inputs converted here: an input's fidelity test and its source edits share one.
        self.readings = Readings()
        home = Path(target.cwd) if target.cwd else Path.cwd()
        self.command = anchored(target.command, home, target.placeholder)

    def convert(self, source: Path, variant: str | Variant = "baseline") -> Conversion:
        chosen = self.variants[variant] if isinstance(variant, str) else variant
        if not chosen.available:
            raise ValueError(f"variant {chosen.name} is unavailable: {chosen.unavailable}")
        source = Path(source).resolve()
        if self.target.protocol == "persistent":
            return self._adapter(chosen).convert(source)
        setting = chosen.setting(self._scratch(), self.target.cwd)
        producer = OneShotProducer(self.command, self.target.timeout, self.target.placeholder, setting.cwd,
                                   setting.env, self._pass_env(), setting.writable,
                                   policy=self.target.policy)
        return producer.convert(source)

    def baseline(self, source: Path) -> Conversion:
        """The control conversion of an input, made once and kept."""
        key = Path(source).resolve()
        if key not in self._baselines:
            self._baselines[key] = self.convert(key, "baseline")
        return self._baselines[key]

    def _adapter(self, variant: Variant) -> PersistentImplementation:
        # "again" asks the baseline's process a second time: state kept between conversions shows.
        name = "baseline" if variant.name == "again" else variant.name
        if name not in self._persistent:
            setting = self.variants[name].setting(self._scratch(), self.target.cwd)
            self._persistent[name] = PersistentImplementation(
                self.command, self.target.timeout, setting.cwd, check_schemas=self.check_protocol,
                role="producer", env=setting.env, pass_env=self._pass_env(), writable=setting.writable,
                policy=self.target.policy)
        return self._persistent[name]

    def _pass_env(self) -> tuple[str, ...]:
        return self.target.pass_env

    def _scratch(self) -> Path:
        self.scratch.mkdir(parents=True, exist_ok=True)
        return self.scratch

    def close(self) -> None:
        for adapter in self._persistent.values():
            adapter.close()
        self._persistent.clear()
        shutil.rmtree(self.scratch, ignore_errors=True)


def anchored(command: Sequence[str], home: Path, placeholder: str | None = None) -> tuple[str, ...]:
    """The command with relative paths to existing files made absolute, so that it still
    runs from another working directory (the ``cwd`` variant)."""
    parts = []
    for index, part in enumerate(command):
        candidate = home / part
        # A bare first word is looked up on PATH; later words and words with a separator are paths.
        is_path = (index > 0 or os.sep in part) and not part.startswith("-")
        keep = (placeholder and placeholder in part) or os.path.isabs(part) or not is_path
        parts.append(part if keep or not candidate.exists() else str(candidate.resolve()))
    return tuple(parts)
