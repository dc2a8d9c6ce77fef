"""The converted stream as the fidelity checks see it: its records indexed (``Stream``), the losses it
declares (``Lossy``), the judging pack's policy, and the small value helpers every family of checks shares.

Records are the stream as dicts, already valid per the reference validator.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

#: Categories a lossy entry may name, per kind of native item. An entry excuses an item when it
#: equals one of the item's categories or is a prefix of one up to a dot ("message" excuses
#: "message.user"); plural spellings and the judging pack's own namespace prefixes
#: (``Policy.loss_namespaces``: "claude-code." for Claude Code) are read as the same name.
CALL_CATEGORIES = ("tool_call", "tool_use")
RESULT_CATEGORIES = ("tool_result", "tool_result.content")
ARGUMENT_CATEGORIES = ("tool_call.input", "tool_use.input")
SIDECHAIN_CATEGORIES = ("sidechain", "subagent", "isSidechain")
PARENT_CATEGORIES = ("tool_call.parentCallId", "parentCallId", "lineage", "subagent")
PERMISSION_CATEGORIES = ("permission",)
TERMINAL_CATEGORIES = ("terminal",)
#: The family of an observation the pages do not settle: shown with the verdict, never scored.
REPORTED = "reported"
#: What a reported approval observation names in place of a rule: the section, which has none for it.
PERMISSIONS = "permission"
#: Likewise for a subagent's scope: the Lineage section, which is not among the pages under test.
LINEAGE = "Lineage"


def message_categories(role: str) -> tuple[str, ...]:
    return (f"message.{role}", f"content.text.{role}", f"{role}.text", f"{role}")


EXIT_CODE_CATEGORIES = ("tool_result.exec", "tool_result.exec.exitCode", "exec", "exec.exitCode", "exitCode")
RESULT_TEXT_CATEGORIES = ("tool_result.content", "content.text", "tool_result.text")
EXCERPT = 120


#: The namespaces a lossy entry may carry when no pack says otherwise (the Claude Code spellings).
DEFAULT_NAMESPACES = ("claude-code.", "claude_code.", "claude-code/")


@dataclass(frozen=True)
class Policy:
    """What the judging pack says its source cannot tell, and how its loss categories are spelled."""

    #: ``any`` or ``source-only`` (``packs.pack.KIND_POLICIES``).
    kind_policy: str = "any"
    #: Prefixes a ``producer.lossy`` entry may carry for this format; empty: ``DEFAULT_NAMESPACES``.
    loss_namespaces: tuple[str, ...] = ()


@dataclass
class Lossy:
    """The loss categories a stream declares, read generously."""

    names: frozenset[str]

    @classmethod
    def of(cls, records: list[dict[str, Any]], namespaces: tuple[str, ...] = DEFAULT_NAMESPACES) -> Lossy:
        names: set[str] = set()
        for record in records:
            source = record.get("producer") if record.get("type") == "session" else record
            lossy = source.get("lossy") if isinstance(source, dict) else None
            if record.get("type") in ("session", "declaration") and isinstance(lossy, list):
                names |= {normal_name(name, namespaces) for name in lossy if isinstance(name, str)}
        return cls(frozenset(names))

    def excuses(self, categories: Iterable[str]) -> bool:
        for category in (normal_name(c, ()) for c in categories):
            parts = category.split(".")
            if any(".".join(parts[:n]) in self.names for n in range(1, len(parts) + 1)):
                return True
        return False


def normal_name(name: str, namespaces: tuple[str, ...] = DEFAULT_NAMESPACES) -> str:
    name = name.strip()
    for prefix in namespaces:
        if name.startswith(prefix):
            name = name[len(prefix):]
    head, dot, rest = name.partition(".")
    if head.endswith("s") and head[:-1] in ("tool_call", "tool_result", "message", "tool_use"):
        head = head[:-1]
    return head + dot + rest


@dataclass
class Stream:
    """The stream's records indexed for the checks; superseded revisions are left out."""

    records: list[dict[str, Any]]
    header: dict[str, Any] = field(default_factory=dict)
    calls: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    results: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    unlinked_results: list[dict[str, Any]] = field(default_factory=list)
    all_calls: list[dict[str, Any]] = field(default_factory=list)
    all_results: list[dict[str, Any]] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)
    message_ids: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    texts: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))

    @classmethod
    def of(cls, records: list[dict[str, Any]]) -> Stream:
        stream = cls(records)
        superseded = {r.get("supersedes") for r in records if isinstance(r.get("supersedes"), str)}
        for record in records:
            if record.get("id") in superseded:
                continue
            stream.add(record)
        return stream

    def add(self, record: dict[str, Any]) -> None:
        kind = record.get("type")
        if kind == "session":
            self.header = record
        elif kind == "tool_call":
            self.all_calls.append(record)
            if isinstance(record.get("callId"), str):
                self.calls[record["callId"]].append(record)
        elif kind == "tool_result":
            self.all_results.append(record)
            key = record.get("nativeCallId") if isinstance(record.get("nativeCallId"), str) else record.get("callId")
            if isinstance(key, str):
                self.results[key].append(record)
            else:
                self.unlinked_results.append(record)
        elif kind == "message":
            self.messages.append(record)
            for key in ("messageId", "nativeId"):
                if isinstance(record.get(key), str):
                    self.message_ids[record[key]].append(record)
            for part in parts_text(record.get("content")):
                self.texts[part].append(record)


def parts_text(content: Any) -> list[str]:
    """The text of each text part of a ContentPart list."""
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]


def joined(record: dict[str, Any], key: str = "content") -> str:
    return "".join(parts_text(record.get(key)))


def clip(text: str) -> str:
    text = json.dumps(text, ensure_ascii=False)
    return text if len(text) <= EXCERPT else text[: EXCERPT - 2] + "…\""


def json_equal(a: Any, b: Any) -> bool:
    """Equal as JSON values: numbers by value, but true is not 1 and objects ignore key order."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=False))
    return type(a) is type(b) and a == b



def spelling(name: str) -> str:
    """A name with case and punctuation dropped (``acceptEdits`` and ``accept_edits`` are one mode)."""
    return "".join(c for c in name.lower() if c.isalnum())
