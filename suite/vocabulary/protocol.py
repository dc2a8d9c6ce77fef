"""The persistent protocol, version 1 (docs/contract.md §4), as typed messages.

Each message is a small frozen class that writes itself to JSON and is read
back from JSON, and each has a published JSON Schema in
``schemas/protocol/``; a test keeps the two in agreement.  The harness never
builds protocol dictionaries by hand.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any, ClassVar

from asr_conformance.vocabulary.schemas import first_problem
from asr_conformance.vocabulary.strict_json import loads_bounded

VERSION = 1


class ProtocolError(Exception):
    """A line that is not a valid protocol message (a garbage reply)."""


# --- requests (harness -> implementation) ------------------------------------


@dataclass(frozen=True, slots=True)
class Start:
    schema: ClassVar[str] = "start"
    version: int = VERSION

    def to_json(self) -> dict[str, Any]:
        return {"cmd": "start", "version": self.version}


@dataclass(frozen=True, slots=True)
class Validate:
    schema: ClassVar[str] = "validate"
    seq: int
    path: str

    def to_json(self) -> dict[str, Any]:
        return {"cmd": "validate", "seq": self.seq, "path": self.path}


@dataclass(frozen=True, slots=True)
class Convert:
    """``output_dir``: a fresh, empty folder the harness made for this conversion; the reply's
    ``stream_path`` must name a regular file inside it (optional in version 1: absent, the
    implementation may write anywhere, but the harness reads only from a folder it gave)."""

    schema: ClassVar[str] = "convert"
    seq: int
    path: str
    output_dir: str | None = None

    def to_json(self) -> dict[str, Any]:
        message: dict[str, Any] = {"cmd": "convert", "seq": self.seq, "path": self.path}
        if self.output_dir is not None:
            message["output_dir"] = self.output_dir
        return message


@dataclass(frozen=True, slots=True)
class Read:
    schema: ClassVar[str] = "read"
    seq: int
    path: str

    def to_json(self) -> dict[str, Any]:
        return {"cmd": "read", "seq": self.seq, "path": self.path}


@dataclass(frozen=True, slots=True)
class Stop:
    schema: ClassVar[str] = "stop"

    def to_json(self) -> dict[str, Any]:
        return {"cmd": "stop"}


Request = Start | Validate | Convert | Read | Stop
REQUESTS: dict[str, type] = {"start": Start, "validate": Validate, "convert": Convert, "read": Read, "stop": Stop}


# --- replies (implementation -> harness) --------------------------------------


@dataclass(frozen=True, slots=True)
class Started:
    schema: ClassVar[str] = "started"
    version: int
    name: str
    implementation_version: str | None
    roles: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        implementation: dict[str, Any] = {"name": self.name}
        if self.implementation_version is not None:
            implementation["version"] = self.implementation_version
        return {"version": self.version, "implementation": implementation, "roles": list(self.roles)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Started:
        implementation = data["implementation"]
        return cls(data["version"], implementation["name"], implementation.get("version"), tuple(data["roles"]))


@dataclass(frozen=True, slots=True)
class Validated:
    schema: ClassVar[str] = "validated"
    seq: int
    verdict: str
    violations: tuple[dict[str, Any], ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        return {"seq": self.seq, "verdict": self.verdict, "violations": list(self.violations)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Validated:
        return cls(data["seq"], data["verdict"], tuple(data.get("violations", ())))


@dataclass(frozen=True, slots=True)
class Converted:
    schema: ClassVar[str] = "converted"
    seq: int
    stream_path: str | None = None
    refused: str | None = None

    def to_json(self) -> dict[str, Any]:
        if self.refused is not None:
            return {"seq": self.seq, "refused": self.refused}
        return {"seq": self.seq, "stream_path": self.stream_path}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Converted:
        return cls(data["seq"], data.get("stream_path"), data.get("refused"))


@dataclass(frozen=True, slots=True)
class Viewed:
    schema: ClassVar[str] = "viewed"
    seq: int
    view: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"seq": self.seq, "view": self.view}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Viewed:
        return cls(data["seq"], data["view"])


@dataclass(frozen=True, slots=True)
class Errored:
    schema: ClassVar[str] = "errored"
    seq: int
    message: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"seq": self.seq, "errored": True, "message": self.message}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Errored:
        return cls(data["seq"], data.get("message", ""))


@dataclass(frozen=True, slots=True)
class Skipped:
    schema: ClassVar[str] = "skipped"
    seq: int
    message: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"seq": self.seq, "skipped": True, "message": self.message}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Skipped:
        return cls(data["seq"], data.get("message", ""))


Reply = Started | Validated | Converted | Viewed | Errored | Skipped
#: The reply each request expects (errored and skipped are always possible).
REPLY_TO: dict[str, type[Reply]] = {"validate": Validated, "convert": Converted, "read": Viewed}


@cache
def schema(name: str) -> dict[str, Any]:
    text = resources.files("asr_conformance").joinpath("schemas", "protocol", f"{name}.schema.json").read_text()
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def check(name: str, data: Any) -> None:
    """Raise ProtocolError when ``data`` does not match the named message schema."""
    problem = first_problem(schema(name), data)
    if problem:
        raise ProtocolError(f"not a valid {name} message: {problem}")


def encode(message: Request | Reply) -> str:
    return json.dumps(message.to_json(), ensure_ascii=False, separators=(",", ":"))


def decode_json(line: str) -> dict[str, Any]:
    try:
        data = loads_bounded(line)
    except ValueError as error:
        raise ProtocolError(f"not JSON: {error}") from None
    if not isinstance(data, dict):
        raise ProtocolError("a protocol message is a JSON object")
    return data


def decode_started(line: str) -> Started:
    data = decode_json(line)
    check("started", data)
    return Started.from_json(data)


def decode_reply(line: str, request: Validate | Convert | Read, strict: bool = False) -> Reply:
    """Read the reply to ``request``; with ``strict``, check it against its schema first.

    Without ``strict`` the harness still refuses anything it cannot use: a
    wrong seq, a missing verdict, a verdict other than valid/invalid."""
    data = decode_json(line)
    if data.get("errored") is True:
        kind: type[Reply] = Errored
    elif data.get("skipped") is True:
        kind = Skipped
    else:
        kind = REPLY_TO[request.to_json()["cmd"]]
    if strict:
        check(kind.schema, data)
    seq = data.get("seq")
    # An integer, not a boolean or a float that compares equal (True == 1, 2.0 == 2 in Python).
    if type(seq) is not int or seq != request.seq:
        raise ProtocolError(f"reply has seq {seq!r}, the request had {request.seq} (an integer)")
    try:
        reply = kind.from_json(data)
    except (KeyError, TypeError) as error:
        raise ProtocolError(f"not a valid {kind.schema} reply: missing or malformed {error}") from None
    if isinstance(reply, Validated):
        if reply.verdict not in ("valid", "invalid"):
            raise ProtocolError(f"verdict must be \"valid\" or \"invalid\", not {reply.verdict!r}")
        if not all(isinstance(v, dict) and isinstance(v.get("rule"), str) for v in reply.violations):
            raise ProtocolError("each violation must be an object with a rule")
    if isinstance(reply, Converted):
        given = [v for v in (reply.stream_path, reply.refused) if v is not None]
        if len(given) != 1 or not isinstance(given[0], str):
            raise ProtocolError("a convert reply carries exactly one of stream_path or refused, as a string")
    if isinstance(reply, Viewed) and not isinstance(reply.view, dict):
        raise ProtocolError("a read reply's view must be a JSON object")
    return reply
