"""What a native input says, read by a witness independently of any converter.

A producer's stream must keep what its source records and invent nothing (ASR-252 … 291
and the session page's header rules). To check that, the suite reads the native input
itself: a *witness* for the input's format turns it into ``SourceFacts``, and the
fidelity checks (``fidelity.compare``) hold the converted stream against them.

The facts are deliberately plain: what the source records, where it records it, and
nothing a converter could reasonably map differently. Values the source does not record
are ``None``; a converter must then leave the matching stream member absent.

A witness is any object meeting ``Witness``; it reaches the suite inside a format pack
(``asr_conformance.packs``), registered under the ``asr_conformance.format_packs`` entry-point
group (bare witnesses under the older ``asr_conformance.witnesses`` group still load).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

#: Sentinel for "the source holds no value here" where ``None`` is itself a native value.
UNRECORDED: Any = None
#: ``NativeCall.requested_by`` for a call whose requester the source does not record: a stream's
#: ``requestedBy`` must then be absent (ASR-274), where ``None`` leaves it unchecked.
ABSENT = ""


@dataclass(frozen=True)
class Where:
    """A place in the native input, shown beside a failure so a person can find it.

    Line formats give ``line``; a format that is one JSON document (no record per line) gives
    ``line=0`` with the ``offset`` in bytes of the value and its JSON ``pointer`` (RFC 6901)."""

    line: int
    #: A short excerpt of the native line or value (the witness keeps it under a few hundred characters).
    excerpt: str = ""
    #: Byte offset of the value in the input, when the format has no lines to count.
    offset: int | None = None
    #: JSON pointer to the value (``/turns/3/calls/0``), when the input is one JSON document.
    pointer: str | None = None

    def place(self) -> str:
        """``line 12``, ``line 1 at /messages/3`` where one line holds many values, or ``byte 340 at
        /turns/3/calls/0`` for a one-document format."""
        parts = []
        if self.line:
            parts.append(f"line {self.line}")
        if self.offset is not None:
            parts.append(f"byte {self.offset}")
        if self.pointer is not None:
            parts.append(f"at {self.pointer}")
        return " ".join(parts) or "input"


@dataclass(frozen=True)
class Timing:
    """Execution times the source records for one result (ASR-261); each ``None`` when not recorded."""

    started_at: str | None = None
    completed_at: str | None = None
    duration_ms: float | None = None


@dataclass(frozen=True)
class NativeCall:
    """One tool call as the source records it."""

    call_id: str
    #: The exact tool name as requested (ASR-252); ``None`` when the source records none (an Agent Client
    #: Protocol tool call has a title and a kind, no name): a stream's ``name`` must then be absent.
    name: str | None
    where: Where
    #: The arguments when the source holds them as JSON (compared by value), else ``None``.
    arguments: Any = None
    #: The arguments as text, when the source holds text that is not JSON (ASR-254).
    arguments_text: str | None = None
    #: ``model``, ``user``, ``harness`` or ``code`` when the source records who asked (ASR-274); ``ABSENT``
    #: when it records that no requester is known (the stream's ``requestedBy`` must be absent); ``None``
    #: when the pack does not say (not checked).
    requested_by: str | None = None
    #: The containing call, only when the source records the link (ASR-275).
    parent_call_id: str | None = None
    #: The time of the native line that holds the call.
    ts: str | None = None
    #: The source marks the call as part of a side conversation (a subagent's, ``isSidechain``).
    sidechain: bool = False
    #: Whether the source records arguments at all (``arguments`` may be a JSON ``null``).
    has_arguments: bool = True
    #: Other times a faithful stream may give the call: those of the other lines of the same model
    #: response (Claude Code writes one response over several lines; a converter may join them).
    other_ts: frozenset[str] = frozenset()
    #: The kind the source itself records for the call (ASR-253), for a pack whose kind policy is
    #: ``source-only``; ``None`` when the source records none. Each call has its own: under
    #: ``source-only`` two calls of one tool may have different kinds when the source says so.
    kind: str | None = None
    #: Other values the source records for the call (a protocol's later update of its kind, title or input; the
    #: name a Codex call's ``namespace`` and ``name`` spell together): a stream may give the call any of them
    #: instead (``{"kind": ("edit",), "arguments": ({...},), "name": ("mcp__haft__read",)}``).
    updates: dict[str, tuple[Any, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class NativeResult:
    """One tool result as the source records it."""

    where: Where
    #: The call ID the source attaches to the result; ``None`` when it attaches none.
    call_id: str | None
    #: The stream statuses consistent with the source's own outcome (ASR-258); empty means any.
    statuses: frozenset[str] = frozenset()
    #: The texts that reached the model, in order (ASR-259); ``None`` when the source does not say.
    model_texts: tuple[str, ...] | None = None
    #: The numeric exit code, only when the source records one (ASR-260).
    exit_code: int | None = None
    timing: Timing = field(default_factory=Timing)
    ts: str | None = None
    sidechain: bool = False
    #: False when the source records the result but not what reached the model (a Gemini CLI result
    #: of ``null``): the stream's ``content`` must then be absent (ASR-259).
    content_recorded: bool = True
    #: Other times a faithful stream may give the result: the time of the message or turn that holds
    #: it, when the format records the result inside a larger record with its own time.
    other_ts: frozenset[str] = frozenset()
    #: Statuses the source's outcome rules out even where ``statuses`` is empty (any other status is
    #: consistent): ``denied`` for an output that records no refusal (ASR-258).
    ruled_out: frozenset[str] = frozenset()
    #: The source holds the result but not its call, and no faithful converter is asked to keep it (a
    #: person's own shell command in a Codex rollout): not demanded, yet when a stream writes a result
    #: under this ID, each of its values is held against the source like any other result's.
    optional: bool = False


@dataclass(frozen=True)
class NativeTransition:
    """A change of session or turn status the source records (ASR-169): the only places a stream may
    put a ``state`` record."""

    where: Where
    #: The stream states consistent with it; empty: any state (the source records a transition
    #: there but not which one, e.g. a notice line a converter may read as an error or an idle stop).
    states: frozenset[str] = frozenset()
    #: The turn ID the source records for it; a stream's ``turnId`` on the state must then be this one.
    turn_id: str | None = None
    #: The stop reasons consistent with it; ``None``: the source records none, any is accepted.
    stop_reasons: frozenset[str] | None = None
    ts: str | None = None
    other_ts: frozenset[str] = frozenset()


#: The execution details of a hook (ASR-287), as ``hook`` record members.
HOOK_DETAILS = ("exitCode", "timedOut", "stdout", "stderr", "output", "durationMs")


@dataclass(frozen=True)
class NativeHook:
    """A hook run the source records, with the execution details it records for it (ASR-287)."""

    where: Where
    #: The event as the source names it (``PostToolUse``, ``Stop``); ``None`` when not recorded.
    event: str | None = None
    #: ``HOOK_DETAILS`` members the source records, by their ``hook`` record names: ``exitCode`` an
    #: integer, ``timedOut`` a boolean, ``durationMs`` a number, ``stdout``, ``stderr`` and ``output`` text.
    details: dict[str, Any] = field(default_factory=dict)


#: Members of a permission that ASR-270 allows only from the source, besides ``decidedBy``.
PERMISSION_PROVENANCE = ("decider", "rule", "reviews")


@dataclass(frozen=True)
class NativePermission:
    """An approval the source records for one call: the request shown, its decision, or both."""

    where: Where
    #: The call the approval is about (``subject.callId``); ``None`` when it is about no call.
    call_id: str | None
    #: The source's own request ID, when it records one (a permission record's ``requestId``).
    request_id: str | None = None
    #: The source records the request itself (shown to a person, its title, options or a pending state):
    #: a stream keeps it as a ``permission`` record, never as ``tool_result.permission`` (ASR-279).
    request_recorded: bool = False
    #: The stream ``status`` consistent with the source (``pending`` for a request still waiting);
    #: ``None``: the source records none.
    status: str | None = None
    #: The stream ``decision`` values consistent with the source; ``None``: the source records no decision;
    #: empty: a decision is recorded, any value is consistent.
    decisions: frozenset[str] | None = None
    #: The ``decidedBy`` values the source records (``"*"``: any); ``None``: none recorded, so absent (ASR-270).
    decided_by: frozenset[str] | None = None
    #: The option names the source records for the request; ``None``: not recorded.
    options: tuple[str, ...] | None = None
    #: Which of ``PERMISSION_PROVENANCE`` the source records for it; any other is invented (ASR-270).
    provenance: frozenset[str] = frozenset()


@dataclass(frozen=True)
class NativeTerminal:
    """A process whose lifecycle the source records (a background shell): what a ``terminal`` record may
    stand for (ASR-286, ASR-291)."""

    where: Where
    #: The call that created it, when the source records one.
    call_id: str | None = None
    #: The source's own ID for the process (Claude Code's background task ID), when it records one.
    terminal_id: str | None = None
    #: The exit code the source records for the process; ``None``: none, so a ``terminal``'s ``exitCode`` is
    #: absent (ASR-267).
    exit_code: int | None = None
    #: Output texts the source records for the process; ``None``: none, so ``output.text`` is absent.
    output_texts: tuple[str, ...] | None = None
    #: False when the source records later reads of the process the pack does not follow (Claude Code's
    #: ``BashOutput``): the terminal's ``exitCode`` and ``output`` are then not checked.
    details_read: bool = True


#: ``config_change`` members a pack may report values for, each read as one string (``model`` by its
#: ``id``, ``sandbox`` by its ``mode``).
CONFIG_MEMBERS = ("model", "effort", "mode", "permissionMode", "sandbox", "agent")


@dataclass(frozen=True)
class NativeConfig:
    """Configuration the source records at one point (ASR-172, ASR-187): the only places and values a
    ``config_change`` may state."""

    where: Where
    #: ``CONFIG_MEMBERS`` the pack reads here -> the values recorded (empty: the member is read, and none is
    #: recorded here). A member the pack reads nowhere is not checked.
    values: dict[str, frozenset[str]] = field(default_factory=dict)
    #: The source records a change here (a ``config_change`` without ``snapshot`` may stand for it), not only
    #: the configuration in force.
    change: bool = False
    #: ``None``: the source records no time for it; a record may then take a time in ``other_ts`` (the lines
    #: around it), or any time when that is empty too.
    ts: str | None = None
    other_ts: frozenset[str] = frozenset()


@dataclass(frozen=True)
class NativeSubagent:
    """A subagent's part of the input: its calls, messages and prompt, as the source marks them."""

    where: Where
    #: The source's own ID for the subagent (Claude Code's ``agentId``), when it records one.
    agent_id: str | None = None
    #: The calls the source records as the subagent's.
    call_ids: frozenset[str] = frozenset()
    #: The native IDs of the messages the source records as the subagent's.
    message_ids: frozenset[str] = frozenset()
    #: The prompt the subagent was given (its first user message), byte for byte.
    prompts: tuple[str, ...] = ()
    #: The call that started it, when the source records the link.
    parent_call_id: str | None = None
    #: The whole input is the subagent's own transcript (a separate subagent file).
    whole_input: bool = False


@dataclass(frozen=True)
class NativeMessage:
    """One user or assistant message with the text the source records for it."""

    role: str
    #: The text blocks, each byte for byte as recorded.
    texts: tuple[str, ...]
    where: Where
    #: The source's own ID for the message, when it has one.
    native_id: str | None = None
    ts: str | None = None
    sidechain: bool = False


@dataclass(frozen=True)
class NativeQuestion:
    """A question put to the user (AskUserQuestion, request_user_input) and its answers."""

    call_id: str | None
    questions: tuple[str, ...]
    #: The answers as the source records them; ``None`` when it records no answer (ASR-285).
    answers: tuple[str, ...] | None
    where: Where
    #: The source marks the question as asking for a secret (ASR-283).
    secret: bool = False


@dataclass
class SourceFacts:
    """Everything a witness learned from one native input."""

    #: The format name the witness answers for, as a stream header's ``producer.source.format``.
    format: str
    #: IDs the header's ``sessionId`` may take (the source's own session ID, verbatim; ASR-051).
    session_ids: frozenset[str] = frozenset()
    #: The agent version the source records first (header ``agent.version``), or ``None``.
    agent_version: str | None = None
    #: The earliest time the source records (header ``startedAt`` may not be earlier; ASR-154).
    earliest_time: str | None = None
    calls: list[NativeCall] = field(default_factory=list)
    results: list[NativeResult] = field(default_factory=list)
    messages: list[NativeMessage] = field(default_factory=list)
    questions: list[NativeQuestion] = field(default_factory=list)
    #: Every time the source records, as written; a stream ``ts`` must be one of these instants.
    times: frozenset[str] = frozenset()
    #: Whether this format records numeric exit codes at all (Codex does; Claude Code does not).
    records_exit_codes: bool = False
    #: Secret values the source holds that must not reach the stream (ASR-283).
    secrets: tuple[str, ...] = ()
    #: Parent links the source records outside the calls themselves (call ID -> parent call IDs), for
    #: example Claude Code's ``parentToolUseID`` beside a subagent's copied tool use (ASR-275).
    parent_links: dict[str, frozenset[str]] = field(default_factory=dict)
    #: ``decidedBy`` values the source records per call ID (ASR-270); Claude Code records none.
    decided_by: dict[str, frozenset[str]] = field(default_factory=dict)
    #: Permission modes the source records (Claude Code's ``permissionMode``), as written.
    permission_modes: frozenset[str] = frozenset()
    #: Every agent version the source records, in order of first appearance.
    agent_versions: tuple[str, ...] = ()
    #: IDs of calls and results the source records without the witness demanding them (a person's own
    #: shell command in a Codex rollout): a stream may hold them, and they are not counted as invented.
    optional_ids: frozenset[str] = frozenset()
    #: The status transitions the source records, tri-state: ``None`` when the pack does not report
    #: them (state records are then not checked), an empty tuple when the source records none (every
    #: ``state`` record is invented, ASR-169), else each transition a ``state`` record may stand for.
    transitions: tuple[NativeTransition, ...] | None = None
    #: The hook runs the source records, tri-state like ``transitions``: ``None`` not reported (hook
    #: details not checked), an empty tuple none recorded (every execution detail is invented, ASR-287).
    hooks: tuple[NativeHook, ...] | None = None
    #: The approvals the source records, tri-state: ``None`` not reported (only ``decided_by`` is checked);
    #: ``()`` none recorded; else each request or decision (ASR-270, ASR-279; a decision or status the
    #: source lacks is reported, not scored: no numbered rule on the pages says a decision comes from it).
    permissions: tuple[NativePermission, ...] | None = None
    #: The processes whose lifecycle the source records, tri-state: ``None`` not reported (terminal records
    #: not checked); ``()`` none recorded (every ``terminal`` record is invented, ASR-291); else each one.
    terminals: tuple[NativeTerminal, ...] | None = None
    #: The subagents the source records, tri-state: ``None`` not reported; ``()`` none; else each one. Their
    #: scope is reported, never scored: the Lineage section, which says how it is written, is not among
    #: the pages (a missing subagent item is an ASR-157 finding, a missing parent link ASR-157/275).
    subagents: tuple[NativeSubagent, ...] | None = None
    #: The configuration the source records, tri-state: ``None`` not reported (only ``permission_modes``
    #: checked); ``()`` none (every ``config_change`` without ``snapshot`` is invented, ASR-172); else each point.
    configs: tuple[NativeConfig, ...] | None = None
    #: The native trigger values the source records (every string under its trigger members: Claude Code's
    #: ``turnOrigin``, Codex's ``turn_trigger`` and ``thread_source``), tri-state: ``None`` not reported;
    #: empty: none recorded, so every ``trigger`` is invented; else a trigger's ``native`` is one of them (ASR-186).
    triggers: frozenset[str] | None = None
    #: The turn links the source records (ASR-183), tri-state: ``None`` not reported; else each link as
    #: ``(turn ID, member, linked turn ID)`` with member ``parentTurn`` or ``rootTurn`` (Codex's ``parent_turn_id``,
    #: ``root_turn_id`` on a line of that turn); a state's ``parentTurn`` or ``rootTurn`` must be one of them.
    turn_links: frozenset[tuple[str, str, str]] | None = None
    #: Tool identities the source records in separate fields (ASR-255), tri-state: ``None`` not reported (a
    #: provider's ``identity`` not checked); else call ID -> the ``(server, tool)`` pairs recorded for that call
    #: (``None`` in a pair: recorded, any value). A call absent from it records its identity in its composite
    #: name at most, so a ``provider`` with ``identity: exact`` on it or on its result is invented.
    providers: dict[str, frozenset[tuple[str | None, str | None]]] | None = None
    #: Content categories the witness saw that no faithful converter is asked to keep as messages
    #: (meta lines, compaction summaries, command output); for reports, never for verdicts.
    skipped: dict[str, int] = field(default_factory=dict)

    def dangling(self) -> list[NativeCall]:
        """Calls the source gives no result (ASR-265)."""
        answered = {r.call_id for r in self.results}
        return [c for c in self.calls if c.call_id not in answered]

    def orphans(self) -> list[NativeResult]:
        """Results whose call ID no call has (ASR-266)."""
        called = {c.call_id for c in self.calls}
        return [r for r in self.results if r.call_id is not None and r.call_id not in called and not r.optional]

    def duplicate_ids(self) -> set[str]:
        """Native call IDs that more than one call carries (ASR-262)."""
        seen: set[str] = set()
        twice: set[str] = set()
        for call in self.calls:
            (twice if call.call_id in seen else seen).add(call.call_id)
        return twice


@dataclass(frozen=True)
class Finding:
    """One disagreement between a stream and its source, written for the vendor who must fix it."""

    #: The rule broken (``ASR-252``), as the spec pages number it.
    rule: str
    #: ``completeness``, ``identity``, ``exact-values`` or ``nothing-invented`` (``format`` for witness choice).
    family: str
    message: str
    #: Where the source records the value; ``None`` for facts of the whole input.
    where: Where | None = None
    #: The stream record that disagrees (its ``seq``); ``None`` when the record is missing.
    seq: int | None = None


FAMILIES = ("completeness", "identity", "exact-values", "nothing-invented")


class NotThisFormat(Exception):
    """The input is not in the witness's format; the message says why."""


@runtime_checkable
class Witness(Protocol):
    """Reads one native format; a format pack (``asr_conformance.packs.FormatPack``) carries it."""

    #: The format name (``producer.source.format``) this witness is for.
    format: str

    def accepts_format_name(self, name: str) -> bool:
        """Whether a stream header's ``producer.source.format`` names this witness's format."""
        ...

    def sniff(self, data: bytes) -> bool:
        """Whether the input looks like this format, without reading it in full."""
        ...

    def read(self, data: bytes) -> SourceFacts:
        """The facts of one input; ``NotThisFormat`` when it is not in this format."""
        ...


def strings_under(value: Any, keys: frozenset[str]) -> set[str]:
    """Every string inside the members named ``keys``, anywhere in ``value`` (a trigger's native value, whatever
    shape the source gives it: a string, or an object holding one)."""
    found: set[str] = set()
    stack: list[tuple[Any, bool]] = [(value, False)]
    while stack:
        item, inside = stack.pop()
        if isinstance(item, str):
            if inside:
                found.add(item)
        elif isinstance(item, dict):
            stack.extend((v, inside or k in keys) for k, v in item.items())
        elif isinstance(item, list):
            stack.extend((v, inside) for v in item)
    return found
