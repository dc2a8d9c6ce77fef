"""Fidelity checks of approvals, modes, configuration and terminals: decidedBy, decider, rule and reviews
only from the source (ASR-270), a recorded request kept as a permission record (ASR-279, ASR-157), modes and
configuration changes the source records (ASR-187, ASR-172), terminal records only for recorded processes
(ASR-291) with their exit code and output as recorded (ASR-267). A decision or status the source lacks is
reported, not scored."""

from __future__ import annotations

from typing import Any

from asr_conformance.fidelity.check_base import CheckerBase
from asr_conformance.fidelity.facts import (
    CONFIG_MEMBERS,
    PERMISSION_PROVENANCE,
    NativeConfig,
    NativePermission,
    NativeTerminal,
)
from asr_conformance.fidelity.stream_view import (
    PERMISSION_CATEGORIES,
    PERMISSIONS,
    TERMINAL_CATEGORIES,
    clip,
    json_equal,
    spelling,
)
from asr_conformance.fidelity.timestamps import same_instant


class PermissionChecks(CheckerBase):
    """The approvals', modes', configuration's and terminals' checks."""

    def decisions(self) -> None:
        """ASR-270: ``decidedBy`` on a permission or a compact ``tool_result.permission`` is one the source records
        for that call (the pack's ``decided_by`` and, where it reports permissions, theirs)."""
        for record, permission, call_id in self.permission_records():
            if "decidedBy" not in permission:
                continue
            allowed = set(self.facts.decided_by.get(str(call_id), frozenset()))
            for native in self.natives_for(record, call_id):
                allowed |= native.decided_by or set()
            if permission["decidedBy"] not in allowed and "*" not in allowed:
                self.add("ASR-270", "nothing-invented",
                         f"{record.get('type')} for {clip(str(call_id))} says decidedBy "
                         f"{clip(str(permission['decidedBy']))}, which the source does not record", record=record)

    def permission_records(self) -> list[tuple[dict[str, Any], dict[str, Any], Any]]:
        """Each ``permission`` record and each compact ``tool_result.permission``: (record, the permission
        members, the call it is about)."""
        found = []
        for record in self.stream.records:
            kind = record.get("type")
            if kind == "permission":
                subject = record["subject"] if isinstance(record.get("subject"), dict) else {}
                found.append((record, record, subject.get("callId")))
            elif kind == "tool_result" and isinstance(record.get("permission"), dict):
                found.append((record, record["permission"], record.get("callId") or record.get("nativeCallId")))
        return found

    def natives_for(self, record: dict[str, Any], call_id: Any) -> list[NativePermission]:
        natives = self.facts.permissions or ()
        request = record.get("requestId") if record.get("type") == "permission" else None
        return [p for p in natives if (call_id is not None and p.call_id == call_id)
                or (request is not None and p.request_id == request)]

    def permissions(self) -> None:
        """Approvals held to the ones the source records: a recorded request stays a permission record
        (ASR-279) and is kept (ASR-157); decider, rule and reviews only from the source (ASR-270). A decision
        or status the source lacks is reported, not scored: no numbered rule on the pages says that
        ``decision`` or ``status`` comes from the source."""
        natives = self.facts.permissions
        if natives is None:
            return  # the pack does not say which approvals its source records
        kept: set[int] = set()
        for record, permission, call_id in self.permission_records():
            matches = self.natives_for(record, call_id)
            kept |= {id(n) for n in matches}
            subject = f"{record.get('type')} for {clip(str(call_id if call_id is not None else record.get('requestId')))}"
            for key in PERMISSION_PROVENANCE:
                if key in permission and not any(key in n.provenance for n in matches):
                    self.add("ASR-270", "nothing-invented",
                             f"{subject} has {key}, which the source does not record for it; {key} is recorded only "
                             f"from the source", matches[0].where if matches else None, record)
            if not matches:
                if "decision" in permission:
                    self.report(PERMISSIONS, f"{subject} records decision {clip(str(permission['decision']))}, but the "
                                f"source records no approval for it (no numbered rule says a decision comes from the "
                                f"source)", record=record)
                continue
            native = matches[0]
            if record.get("type") == "tool_result" and native.request_recorded:
                self.add("ASR-279", "exact-values",
                         f"the source records the approval request for {clip(str(call_id))} (shown, with its title, "
                         f"options or pending state), so it is a permission record, not tool_result.permission",
                         native.where, record)
            self.permission_values(subject, permission, native, record)
        for native in natives:
            if native.request_recorded and id(native) not in kept and not self.excused(PERMISSION_CATEGORIES, False):
                self.add("ASR-157", "completeness",
                         f"the approval request the source records for {clip(str(native.call_id or native.request_id))} "
                         f"is missing (no permission record), and producer.lossy declares no such loss", native.where)

    def permission_values(self, subject: str, permission: dict[str, Any], native: NativePermission,
                          record: dict[str, Any]) -> None:
        decision, status = permission.get("decision"), permission.get("status")
        if decision is not None and native.decisions is None:
            self.report(PERMISSIONS, f"{subject} records decision {clip(str(decision))}, but the source records no "
                        f"decision (the request is unresolved; ASR-269 says what an absent decision means)",
                        native.where, record)
        elif decision is not None and native.decisions and decision not in native.decisions:
            allowed = " or ".join(sorted(native.decisions))
            self.report(PERMISSIONS, f"{subject} records decision {clip(str(decision))}; the source's allows {allowed}",
                        native.where, record)
        if status is not None and native.status is not None and status != native.status:
            self.report(PERMISSIONS, f"{subject} has status {clip(str(status))}; the source records "
                        f"{clip(native.status)}", native.where, record)

    def modes(self) -> None:
        """A permission mode is one the source records (ASR-187, ASR-172); another spelling of it is accepted."""
        recorded = {spelling(m) for m in self.facts.permission_modes}
        for record in self.stream.records:
            mode = record.get("permissionMode") if record.get("type") == "config_change" else None
            if isinstance(mode, str) and spelling(mode) not in recorded:
                shown = ", ".join(sorted(self.facts.permission_modes)) or "none"
                self.add("ASR-187", "nothing-invented",
                         f"config_change says permissionMode {clip(mode)}, a mode the source does not record "
                         f"(it records {shown})", record=record)

    def configs(self) -> None:
        """ASR-172: a config_change without snapshot stands for a change the source records there; ASR-187: a
        snapshot states values the source records at its position. Values of members the pack reads only."""
        natives = self.facts.configs
        if natives is None:
            return  # the pack does not say which configuration its source records
        read = {member for native in natives for member in native.values}
        for record in self.stream.records:
            if record.get("type") != "config_change":
                continue
            snapshot = record.get("snapshot") is True
            here = [n for n in natives if self.same_point(n, record)]
            if not snapshot:
                here = [n for n in here if n.change]
                if not here:
                    self.add("ASR-172", "nothing-invented",
                             f"config_change at {record.get('ts', 'no time')} records a change (no snapshot) the source "
                             f"does not record there; a change is written only where the source records one (never "
                             f"inferred from inference.model)", record=record)
                    continue
            elif not here:
                here = list(natives)  # a snapshot's position is not matched: its values must still be recorded ones
            for member in CONFIG_MEMBERS:
                value = _config_value(record.get(member)) if member in record else None
                if value is None or member not in read:
                    continue
                if not any(_same_config(member, value, n.values.get(member, frozenset())) for n in here):
                    rule = "ASR-187" if snapshot else "ASR-172"
                    self.add(rule, "nothing-invented",
                             f"config_change states {member} {clip(value)}, a value the source does not record at this "
                             f"point", here[0].where if here else None, record)

    @staticmethod
    def same_point(native: NativeConfig, record: dict[str, Any]) -> bool:
        ts = record.get("ts")
        if not isinstance(ts, str) or (native.ts is None and not native.other_ts):
            return True
        return same_instant(ts, native.ts) or any(same_instant(ts, t) for t in native.other_ts)

    def terminals(self) -> None:
        """Terminal records only for processes whose lifecycle the source records (ASR-291, ASR-286), their exit
        code and output only as recorded (ASR-267), and each recorded one kept (ASR-157)."""
        natives = self.facts.terminals
        if natives is None:
            return  # the pack does not say which processes its source records
        kept: set[int] = set()
        for record in self.stream.records:
            if record.get("type") != "terminal":
                continue
            native = next((t for t in natives if self.same_terminal(t, record)), None)
            if native is None:
                recorded = f"it records {len(natives)}" if natives else "it records none"
                self.add("ASR-291", "nothing-invented",
                         f"terminal {clip(str(record.get('terminalId')))} (call {clip(str(record.get('callId')))}) is "
                         f"not a process whose lifecycle the source records ({recorded}); terminal records are never "
                         f"invented", record=record)
                continue
            kept.add(id(native))
            self.terminal_values(native, record)
        for native in natives:
            if id(native) not in kept and not self.excused(TERMINAL_CATEGORIES, False):
                self.add("ASR-157", "completeness",
                         f"the process the source records for call {clip(str(native.call_id))} (terminal "
                         f"{clip(str(native.terminal_id))}) has no terminal record, and producer.lossy declares no "
                         f"such loss", native.where)

    @staticmethod
    def same_terminal(native: NativeTerminal, record: dict[str, Any]) -> bool:
        terminal, call = record.get("terminalId"), record.get("callId")
        if native.terminal_id is not None and terminal == native.terminal_id:
            return True
        return native.call_id is not None and call == native.call_id

    def terminal_values(self, native: NativeTerminal, record: dict[str, Any]) -> None:
        if not native.details_read:
            return  # the pack does not follow the process's later reads
        name = clip(str(record.get("terminalId")))
        if "exitCode" in record and not json_equal(record["exitCode"], native.exit_code):
            recorded = "records none" if native.exit_code is None else f"records {native.exit_code}"
            self.add("ASR-267", "nothing-invented",
                     f"terminal {name} has exitCode {clip(str(record['exitCode']))}, but the source {recorded}",
                     native.where, record)
        output = record["output"] if isinstance(record.get("output"), dict) else {}
        text = output.get("text")
        if isinstance(text, str) and not (native.output_texts and text in "\x00".join(native.output_texts)):
            self.add("ASR-267", "nothing-invented",
                     f"terminal {name} has output text {clip(text)}, which the source does not record for that process",
                     native.where, record)


def _config_value(value: Any) -> str | None:
    """A config_change member as one string: the model's ``id``, the sandbox's ``mode``, a string as is."""
    if isinstance(value, dict):
        value = value.get("id") if "id" in value else value.get("mode")
    return value if isinstance(value, str) else None


def _same_config(member: str, value: str, recorded: frozenset[str]) -> bool:
    """A recorded value; modes in another spelling too (``acceptEdits``, ``accept_edits``)."""
    if member in ("permissionMode", "mode"):
        return spelling(value) in {spelling(v) for v in recorded}
    return value in recorded

