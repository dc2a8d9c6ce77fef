"""Fidelity checks of tool results: each recorded result kept under the ID the source attaches to it
(ASR-157, ASR-262, ASR-266), its status (ASR-258), content (ASR-259), exit code (ASR-260) and timing
(ASR-261); none made up for a dangling call (ASR-265), and no call or result the source lacks (ASR-250,
ASR-267)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from asr_conformance.fidelity.check_base import CheckerBase
from asr_conformance.fidelity.facts import NativeResult
from asr_conformance.fidelity.stream_view import (
    EXIT_CODE_CATEGORIES,
    RESULT_CATEGORIES,
    RESULT_TEXT_CATEGORIES,
    clip,
    joined,
)
from asr_conformance.fidelity.timestamps import parse_instant, same_instant


class ResultChecks(CheckerBase):
    """The results' checks, and calls and results the stream invents."""

    def results(self) -> None:
        seen: dict[str, int] = defaultdict(int)
        call_counts: dict[str, int] = defaultdict(int)
        for call in self.facts.calls:
            call_counts[call.call_id] += 1
        unlinked = list(self.stream.unlinked_results)
        for result in self.facts.results:
            if result.call_id is None:
                self.unlinked_result(result, unlinked)
                continue
            record = self.next_written(seen, result.call_id, self.stream.results)
            if record is not None:
                self.result(result, record, call_counts[result.call_id])
            elif not result.optional:  # an optional result is value-checked when written, never demanded
                self.missing_result(result, call_counts[result.call_id])
        self.dangling(call_counts)

    def unlinked_result(self, result: NativeResult, unlinked: list[dict[str, Any]]) -> None:
        record = next((r for r in unlinked if self.holds_texts(r, result)), None)
        if record is None:
            if not self.excused(RESULT_CATEGORIES, result.sidechain):
                self.add("ASR-157", "completeness",
                         "a tool result the source attaches to no call ID is missing from the stream", result.where)
            return
        unlinked.remove(record)
        self.matched.add(id(record))
        self.result(result, record, 0)

    def missing_result(self, result: NativeResult, calls: int) -> None:
        stand_in = next((r for r in self.stream.all_results if id(r) not in self.matched
                         and (r.get("nativeCallId") or r.get("callId")) not in self.native_ids
                         and self.holds_texts(r, result)), None)
        if stand_in is not None and calls == 0 and not stand_in.get("callId") and stand_in.get("linkage") == "none":
            self.matched.add(id(stand_in))  # an orphan kept unlinked: its ID is lost, but it is kept (ASR-266)
            self.result(result, stand_in, 0)
        elif stand_in is not None:
            self.matched.add(id(stand_in))
            self.add("ASR-262", "identity",
                     f"the result for {result.call_id} is written under {clip(str(stand_in.get('callId')))}: a result "
                     f"keeps the ID the source attaches to it", result.where, stand_in)
        elif self.excused(RESULT_CATEGORIES, result.sidechain):
            return
        elif calls == 0:
            self.add("ASR-266", "identity",
                     f"orphan result {result.call_id} (no tool call in the source has that ID) is missing; producers must keep orphan "
                     f"results", result.where)
        else:
            self.add("ASR-157", "completeness",
                     f"the result for tool call {result.call_id} is missing from the stream, and producer.lossy declares "
                     f"no such loss", result.where)

    def result(self, result: NativeResult, record: dict[str, Any], calls: int) -> None:
        if self.paired_elsewhere(result, record):
            return
        self.pairing(result, record, calls)
        status = record.get("status")
        if result.statuses and status not in result.statuses:
            wanted = " or ".join(sorted(result.statuses))
            self.add("ASR-258", "exact-values",
                     f"result {result.call_id}: status {clip(str(status))} does not reflect the source's own outcome "
                     f"(the source's outcome allows {wanted})", result.where, record)
        elif status in result.ruled_out:
            self.add("ASR-258", "exact-values",
                     f"result {result.call_id}: status {clip(str(status))}, but the source records no such outcome "
                     f"(denied only where the source records a refusal)", result.where, record)
        self.result_text(result, record)
        self.execution(result, record)
        self.same_time(result.ts, record, result.where, result.other_ts)

    def paired_elsewhere(self, result: NativeResult, record: dict[str, Any]) -> bool:
        """The result's text sits under another call's ID: pairing by position, not by the source's ID."""
        if not result.model_texts or not any(result.model_texts) or self.holds_texts(record, result):
            return False
        other = next((r for r in self.stream.all_results if r is not record and self.holds_texts(r, result)), None)
        if other is None:
            return False
        self.add("ASR-262", "identity",
                 f"the result the source attaches to {result.call_id} is written under "
                 f"{clip(str(other.get('callId') or other.get('nativeCallId')))}, and the stream's result for "
                 f"{result.call_id} holds another result's output; pairing must follow the source's IDs, never position",
                 result.where, other)
        return True

    def pairing(self, result: NativeResult, record: dict[str, Any], calls: int) -> None:
        call_id, linkage = record.get("callId"), record.get("linkage")
        if call_id is not None and call_id != result.call_id:
            self.add("ASR-262", "identity",
                     f"the result the source attaches to {result.call_id} is paired with {clip(str(call_id))}; pairing "
                     f"must follow the ID the source records, never position", result.where, record)
        elif calls > 1 and call_id is not None and linkage in ("exact", "derived"):
            self.add("ASR-262", "identity",
                     f"{calls} calls share the native ID {result.call_id}, so the source does not show which one this "
                     f"result answers: it must stay unpaired (linkage ambiguous, nativeCallId kept)", result.where, record)

    def result_text(self, result: NativeResult, record: dict[str, Any]) -> None:
        if not result.content_recorded and "content" in record:
            self.add("ASR-259", "nothing-invented",
                     f"result {result.call_id}: the source records no result content (what reached the model is not "
                     f"recorded), but the stream writes content {clip(joined(record))}; content must be absent",
                     result.where, record)
            return
        if result.model_texts is None or not result.model_texts:
            return
        if "content" not in record:
            if "content" not in (record.get("capture") or {}) and not self.excused(RESULT_TEXT_CATEGORIES, result.sidechain):
                self.add("ASR-259", "completeness",
                         f"result {result.call_id}: content is missing, though the source records what reached the model",
                         result.where, record)
            return
        if not self.holds_texts(record, result):
            text = next(t for t in result.model_texts if t not in joined(record))
            self.add("ASR-259", "exact-values",
                     f"result {result.call_id}: content does not hold the text that reached the model byte for byte "
                     f"(source: {clip(text)}, stream: {clip(joined(record))})", result.where, record)

    @staticmethod
    def holds_texts(record: dict[str, Any], result: NativeResult) -> bool:
        text = joined(record)
        return all(t in text for t in result.model_texts or ())

    def execution(self, result: NativeResult, record: dict[str, Any]) -> None:
        exec_ = record["exec"] if isinstance(record.get("exec"), dict) else {}
        if "exitCode" in exec_ and exec_["exitCode"] != result.exit_code:
            recorded = "records none" if result.exit_code is None else f"records {result.exit_code}"
            self.add("ASR-260", "nothing-invented",
                     f"result {result.call_id}: exec.exitCode {exec_['exitCode']} but the source {recorded}; exit codes "
                     f"are never parsed from output or descriptive fields (ASR-267)", result.where, record)
        elif "exitCode" not in exec_ and result.exit_code is not None \
                and not self.excused(EXIT_CODE_CATEGORIES, False) and "exec" not in (record.get("capture") or {}):
            self.add("ASR-157", "completeness",
                     f"result {result.call_id}: the source records exit code {result.exit_code}, the stream has no "
                     f"exec.exitCode, and producer.lossy declares no such loss", result.where, record)
        timing = result.timing
        for key, value in (("startedAt", timing.started_at), ("completedAt", timing.completed_at)):
            if key in record and not same_instant(record[key], value):
                self.add("ASR-261", "nothing-invented",
                         f"result {result.call_id}: {key} {clip(str(record[key]))} is not a time the source records for "
                         f"this result", result.where, record)
        duration = record.get("durationMs")
        if duration is not None and not self.recorded_duration(duration, record, timing.duration_ms):
            self.add("ASR-261", "nothing-invented",
                     f"result {result.call_id}: durationMs {duration} does not come from the source (it records "
                     f"{'none' if timing.duration_ms is None else timing.duration_ms}); timing is never computed from "
                     f"other records' times", result.where, record)

    @staticmethod
    def recorded_duration(duration: Any, record: dict[str, Any], recorded: float | None) -> bool:
        if recorded is not None and isinstance(duration, (int, float)) and abs(duration - recorded) < 1:
            return True
        start, end = parse_instant(str(record.get("startedAt"))), parse_instant(str(record.get("completedAt")))
        return start is not None and end is not None  # ASR-261 allows the result's own start and end

    def dangling(self, call_counts: dict[str, int]) -> None:
        answered = {r.call_id for r in self.facts.results}
        for call in self.facts.calls:
            if call.call_id in answered or call_counts[call.call_id] != 1:
                continue
            for record in self.stream.results.get(call.call_id, []):
                self.add("ASR-265", "identity",
                         f"tool call {call.call_id} has no result in the source (it is dangling), but the stream gives it "
                         f"one with status {clip(str(record.get('status')))}; producers must not synthesize results",
                         call.where, record)

    def invented(self) -> None:
        """Completeness the other way: calls and results the stream holds and the source does not (ASR-250, ASR-265,
        ASR-267). Messages the source lacks are not scored (no rule settles every kind of message record)."""
        for record in self.stream.all_calls:
            if id(record) in self.matched or record.get("callIdSource") != "native" or record.get("callId") in self.native_ids | self.facts.optional_ids:
                continue  # a copy of a native ID is the duplicate checks' business (ASR-262)
            self.add("ASR-250", "nothing-invented",
                     f"tool call {clip(str(record.get('callId')))} ({clip(str(record.get('name')))}) says callIdSource "
                     f"native, but the source records no call with that ID", record=record)
        for record in self.stream.all_results:
            if id(record) in self.matched:
                continue
            key = record.get("nativeCallId") or record.get("callId")
            if key in self.native_ids or key in self.facts.optional_ids:
                continue  # a call the source records: dangling-result and duplicate checks speak for it
            self.add("ASR-267", "nothing-invented",
                     f"tool result for {clip(str(key))} (status {clip(str(record.get('status')))}) is not a result the "
                     f"source records; results and their output appear only when the source records them", record=record)
