"""Calling a pack's code: bounded in time, and its failures made the suite's errors, never the converter's.

A pack is code the certifier installed, not the implementation under test; when it raises,
hangs or answers with something that is not ``SourceFacts``, no verdict about the converter
can be drawn from it. ``PackError`` carries a sentence naming the pack; the producer tests
turn it into an error result and the run into INCOMPLETE.

A hung call cannot be stopped from Python: it is left running in a daemon thread, and the
run goes on without its answer.  A pack that hung once is not called again in the process: every
later call fails at once, naming the first hang, instead of leaving one more thread behind (a
spinning pack would otherwise take a core per call) and waiting out its time once per test.
"""

from __future__ import annotations

import threading
import traceback
from collections.abc import Callable
from dataclasses import fields
from typing import Any, TypeVar

from asr_conformance.fidelity.facts import (
    NativeCall,
    NativeHook,
    NativeMessage,
    NativePermission,
    NativeQuestion,
    NativeResult,
    NativeSubagent,
    NativeTerminal,
    NativeTransition,
    NotThisFormat,
    SourceFacts,
    Where,
)
from asr_conformance.packs.identity import PackIdentity

T = TypeVar("T")
#: The start of every pack error's message, which verdicts and reports look for.
PREFIX = "suite error: the fidelity judge "


class PackError(Exception):
    """A pack failed while judging; the message names the pack and what it did."""

    def __init__(self, identity: PackIdentity, what: str) -> None:
        self.identity = identity
        super().__init__(f"{PREFIX}{identity.label()} {what}")


#: The first hang of each pack in this process, by its label: such a pack is not called again.  A per-process
#: registry of an OS resource, not a run's state: the hung call's thread still runs in this process and cannot
#: be stopped, so calling the pack again would only start another.  No test resets it (a test that hangs a
#: pack hangs one of its own, named apart).
_hung: dict[str, str] = {}


def bounded(identity: PackIdentity, action: str, seconds: float, function: Callable[..., T], *args: Any) -> T:
    """``function(*args)``, or ``PackError`` when it raises (``NotThisFormat`` passes through), outlives
    ``seconds``, or outlived its time in an earlier call."""
    first = _hung.get(identity.label())
    if first is not None:
        raise PackError(identity, f"{first}; not called again in this run")
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = function(*args)
        except BaseException as error:  # noqa: BLE001  (every failure of the pack is reported)
            box["error"] = error

    worker = threading.Thread(target=run, name=f"pack-{identity.name}-{action}", daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        what = f"did not finish {action} within {seconds:g} s (hung)"
        _hung[identity.label()] = what
        raise PackError(identity, what)
    error = box.get("error")
    if isinstance(error, (NotThisFormat, RecursionError)):
        raise error
    if error is not None:
        raise PackError(identity, f"raised {type(error).__name__} in {action}: {error}{_where(error)}")
    value: T = box["value"]
    return value


def _where(error: BaseException) -> str:
    frames = traceback.extract_tb(error.__traceback__)
    if not frames:
        return ""
    last = frames[-1]
    return f" (at {last.filename}:{last.lineno}, in {last.name})"


def malformed(facts: Any) -> str | None:
    """Why a witness's answer is not well-formed ``SourceFacts``, or ``None`` when it is."""
    if not isinstance(facts, SourceFacts):
        return f"returned {type(facts).__name__}, not SourceFacts"
    checks: list[tuple[str, object, type, tuple[tuple[str, tuple[type, ...]], ...]]] = [
        ("calls", facts.calls, NativeCall, (("call_id", (str,)), ("name", (str, type(None))))),
        ("results", facts.results, NativeResult, (("call_id", (str, type(None))),)),
        ("messages", facts.messages, NativeMessage, (("role", (str,)), ("texts", (tuple, list)))),
        ("questions", facts.questions, NativeQuestion, ()),
    ]
    for name, items, kind, members in checks:
        if not isinstance(items, list):
            return f"gave SourceFacts.{name} as {type(items).__name__}, not a list"
        for index, item in enumerate(items):
            if not isinstance(item, kind):
                return f"gave SourceFacts.{name}[{index}] as {type(item).__name__}, not {kind.__name__}"
            if not isinstance(getattr(item, "where", None), Where):
                return f"gave SourceFacts.{name}[{index}] no Where"
            for member, types in members:
                if not isinstance(getattr(item, member, None), types):
                    return f"gave SourceFacts.{name}[{index}].{member} as {type(getattr(item, member, None)).__name__}"
    if isinstance(facts.messages, list) and any(not all(isinstance(t, str) for t in m.texts) for m in facts.messages):
        return "gave a message text that is not a string"
    for member in ("times", "session_ids", "permission_modes"):
        value = getattr(facts, member)
        if not isinstance(value, (frozenset, set)) or not all(isinstance(v, str) for v in value):
            return f"gave SourceFacts.{member} that is not a set of strings"
    triggers: Any = facts.triggers  # tri-state: None, or a set of strings
    if triggers is not None and (not isinstance(triggers, (frozenset, set)) or not all(isinstance(v, str) for v in triggers)):
        return "gave SourceFacts.triggers that is neither None nor a set of strings"
    links: Any = facts.turn_links  # tri-state: None, or a set of (turn, member, linked turn) strings
    if links is not None and (not isinstance(links, (frozenset, set)) or not all(
            isinstance(v, tuple) and len(v) == 3 and all(isinstance(x, str) for x in v) for v in links)):
        return "gave SourceFacts.turn_links that is neither None nor a set of (turn, member, turn) strings"
    providers: Any = facts.providers  # tri-state: None, or call ID -> set of (server, tool), each a string or None
    if providers is not None and (not isinstance(providers, dict) or not all(
            isinstance(k, str) and isinstance(v, (frozenset, set)) and all(
                isinstance(p, tuple) and len(p) == 2 and all(x is None or isinstance(x, str) for x in p) for p in v)
            for k, v in providers.items())):
        return "gave SourceFacts.providers that is neither None nor a dict of call IDs to sets of (server, tool)"
    transitions: Any = facts.transitions  # an untrusted pack's value, whatever its annotation says
    if transitions is not None:
        if not isinstance(transitions, (tuple, list)):
            return f"gave SourceFacts.transitions as {type(transitions).__name__}, not a tuple or None"
        for index, item in enumerate(transitions):
            if not isinstance(item, NativeTransition) or not isinstance(item.where, Where) \
                    or not isinstance(item.states, (frozenset, set)):
                return f"gave SourceFacts.transitions[{index}] that is not a NativeTransition with a Where and a set of states"
    hooks: Any = facts.hooks
    if hooks is not None:
        if not isinstance(hooks, (tuple, list)):
            return f"gave SourceFacts.hooks as {type(hooks).__name__}, not a tuple or None"
        for index, item in enumerate(hooks):
            if not isinstance(item, NativeHook) or not isinstance(item.where, Where) or not isinstance(item.details, dict):
                return f"gave SourceFacts.hooks[{index}] that is not a NativeHook with a Where and a dict of details"
    for name, kind in (("permissions", NativePermission), ("terminals", NativeTerminal), ("subagents", NativeSubagent)):
        problem = _family(name, getattr(facts, name, None), kind)
        if problem is not None:
            return problem
    known = {f.name for f in fields(SourceFacts)}
    if not isinstance(facts.format, str) or not known:
        return "gave SourceFacts.format that is not a string"
    return None


def _family(name: str, items: Any, kind: type) -> str | None:
    """A tri-state family: ``None`` (not reported), or a tuple of ``kind`` items, each with a ``Where``."""
    if items is None:
        return None
    if not isinstance(items, (tuple, list)):
        return f"gave SourceFacts.{name} as {type(items).__name__}, not a tuple or None"
    for index, item in enumerate(items):
        if not isinstance(item, kind) or not isinstance(getattr(item, "where", None), Where):
            return f"gave SourceFacts.{name}[{index}] that is not a {kind.__name__} with a Where"
    return None
