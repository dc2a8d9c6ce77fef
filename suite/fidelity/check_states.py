"""Fidelity checks of states, turns and hooks: a state record only for a transition the source records,
each at most once, its turnId and stopReason not contradicting it (ASR-169); a trigger only from a value the
source records (ASR-186); a state's parentTurn and rootTurn only as recorded (ASR-183); a hook's execution details only as recorded (ASR-287)."""

from __future__ import annotations

import json
from typing import Any

from asr_conformance.fidelity.check_base import CheckerBase
from asr_conformance.fidelity.facts import HOOK_DETAILS, NativeHook, NativeTransition
from asr_conformance.fidelity.stream_view import clip, json_equal, parts_text, spelling
from asr_conformance.fidelity.timestamps import same_instant

#: What a reported trigger observation names in place of a rule: the member, for which no rule settles it.
TRIGGER = "trigger"


class StateChecks(CheckerBase):
    """The states' and hooks' checks."""

    def states(self) -> None:
        """ASR-169: a state record stands for a transition the source records, each at most once; its
        turnId and stopReason, when written, do not contradict the source's."""
        transitions = self.facts.transitions
        if transitions is None:
            return  # the pack does not say which transitions its source records
        free = list(transitions)
        for record in self.stream.records:
            if record.get("type") != "state":
                continue
            native = next((t for t in free if self.same_transition(t, record)), None)
            if native is None:
                self.invented_state(record, transitions)
                continue
            free.remove(native)
            reason = record.get("stopReason")
            if reason is not None and native.stop_reasons is not None and reason not in native.stop_reasons:
                allowed = " or ".join(sorted(native.stop_reasons)) or "none"
                self.add("ASR-169", "exact-values",
                         f"state {clip(str(record.get('state')))} has stopReason {clip(str(reason))}, which contradicts "
                         f"the transition the source records (it allows {allowed})", native.where, record)

    @staticmethod
    def same_transition(native: NativeTransition, record: dict[str, Any]) -> bool:
        state, turn, ts = record.get("state"), record.get("turnId"), record.get("ts")
        if native.states and state not in native.states:
            return False
        if turn is not None and native.turn_id is not None and turn != native.turn_id:
            return False
        return not isinstance(ts, str) or same_instant(ts, native.ts) or any(same_instant(ts, t) for t in native.other_ts)

    def invented_state(self, record: dict[str, Any], transitions: tuple[NativeTransition, ...]) -> None:
        recorded = f"it records {len(transitions)} transition(s), each written at most once" if transitions \
            else "it records none"
        turn = f", turnId {clip(str(record['turnId']))}" if "turnId" in record else ""
        self.add("ASR-169", "nothing-invented",
                 f"state {clip(str(record.get('state')))}{turn} at {record.get('ts', 'no time')} is not a transition "
                 f"the source records ({recorded}); state records are never synthesized from message boundaries or "
                 f"timing", record=record)

    def turn_links(self) -> None:
        """ASR-183: a state's ``parentTurn`` and ``rootTurn`` come from a link the source records for that turn,
        never from timing or order. Other links, attempts and error details are not checked here."""
        links = self.facts.turn_links
        if links is None:
            return  # the pack does not say which turn links its source records
        for record in self.stream.records:
            if record.get("type") != "state":
                continue
            for member in ("parentTurn", "rootTurn"):
                link = record.get(member)
                linked = link.get("turnId") if isinstance(link, dict) else None
                if linked is None:
                    continue
                if (record.get("turnId"), member, linked) not in links:
                    self.add("ASR-183", "nothing-invented",
                             f"state for turn {clip(str(record.get('turnId')))} has {member} turn "
                             f"{clip(str(linked))}, a link the source does not record for that turn; turn links come "
                             f"only from the source, never from timing or order", record=record)

    def triggers(self) -> None:
        """ASR-186: a turn's or the header's ``trigger`` comes from the source: its ``native`` is a value the source
        records, and where the source records none, no trigger is written. A ``kind`` without ``native`` where the
        source records some value is reported: which documented mapping gave it is not checkable here. A
        compaction's own ``trigger`` (what caused the compaction) is another member and not looked at."""
        recorded = self.facts.triggers
        if recorded is None:
            return  # the pack does not say which trigger values its source records
        for record in self.stream.records:
            trigger = record.get("trigger")
            if not isinstance(trigger, dict) or record.get("type") == "compaction":
                continue
            native = trigger.get("native")
            where = "the header" if record.get("type") == "session" else f"{record.get('type')} seq {record.get('seq')}"
            if isinstance(native, str) and native not in recorded:
                shown = ", ".join(clip(v) for v in sorted(recorded)[:5]) or "none"
                self.add("ASR-186", "nothing-invented",
                         f"the trigger on {where} has native {clip(native)}, a value the source does not record "
                         f"(it records {shown}); trigger values come only from the source", record=record)
            elif native is None and not recorded:
                self.add("ASR-186", "nothing-invented",
                         f"the trigger on {where} has kind {clip(str(trigger.get('kind')))}, but the source records "
                         f"no trigger value to map it from", record=record)
            elif native is None:
                self.report(TRIGGER, f"the trigger on {where} has kind {clip(str(trigger.get('kind')))} without "
                            f"native; the source records {len(recorded)} trigger value(s), and which mapping gave the "
                            f"kind is not checked", record=record)

    def hooks(self) -> None:
        """ASR-287: a hook's exitCode, timedOut, stdout, stderr, output and durationMs are values the source
        records for a run of that hook event, never filled in."""
        hooks = self.facts.hooks
        if hooks is None:
            return  # the pack does not say which hook runs its source records
        for record in self.stream.records:
            if record.get("type") != "hook":
                continue
            event = record.get("event")
            runs = [h for h in hooks if h.event is None or not isinstance(event, str) or spelling(h.event) == spelling(event)]
            for key in HOOK_DETAILS:
                if key in record and not any(_recorded_detail(key, record[key], h) for h in runs):
                    self.add("ASR-287", "nothing-invented",
                             f"hook {clip(str(event))} has {key} {clip(json.dumps(record[key], ensure_ascii=False))}, "
                             f"which the source does not record for a run of that hook; execution details appear only "
                             f"when the source records them", runs[0].where if runs else None, record)


def _recorded_detail(key: str, value: Any, hook: NativeHook) -> bool:
    """Whether a hook record's execution detail is one the source records for this run."""
    if key == "output":  # ContentPart[] in the stream: text the source records as the run's output or streams
        texts = [str(v) for k, v in hook.details.items() if k in ("output", "stdout", "stderr")]
        return bool(texts) and "".join(parts_text(value)) in "".join(texts)
    if key not in hook.details:
        return False
    recorded = hook.details[key]
    if key == "durationMs":
        return isinstance(value, (int, float)) and isinstance(recorded, (int, float)) and abs(value - recorded) < 1
    return json_equal(value, recorded)

