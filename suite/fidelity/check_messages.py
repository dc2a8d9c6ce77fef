"""Fidelity checks of messages, times, answers and secrets: message text kept byte for byte (ASR-157),
every time one the source records (ASR-103, ASR-104), answers only as recorded (ASR-285) and no secret's
value (ASR-283)."""

from __future__ import annotations

import json
from typing import Any

from asr_conformance.fidelity.check_base import CheckerBase
from asr_conformance.fidelity.facts import NativeMessage
from asr_conformance.fidelity.stream_view import clip, joined, message_categories
from asr_conformance.fidelity.timestamps import parse_instant

#: Input request statuses that say no answer came: a source that records the answer contradicts each (ASR-285).
UNANSWERED = frozenset({"pending", "declined", "cancelled", "timed_out"})


class MessageChecks(CheckerBase):
    """The messages', times', answers' and secrets' checks."""

    def messages(self) -> None:
        haystack: str | None = None
        for message in self.facts.messages:
            for text in message.texts:
                if self.message_holds(message, text):
                    continue
                if haystack is None:
                    haystack = "\x00".join(joined(r) for r in self.stream.messages)
                if text in haystack:
                    continue
                self.missing_text(message, text)

    def message_holds(self, message: NativeMessage, text: str) -> bool:
        if text in self.stream.texts:
            return True
        return any(text in joined(r) for r in self.stream.message_ids.get(message.native_id or "", ()))

    def missing_text(self, message: NativeMessage, text: str) -> None:
        if self.excused(message_categories(message.role), message.sidechain):
            return
        records = self.stream.message_ids.get(message.native_id or "", [])
        if records:
            self.add("ASR-157", "exact-values",
                     f"{message.role} message {message.native_id}: the stream's text differs from the source's, which must "
                     f"be kept byte for byte (source: {clip(text)}, stream: {clip(joined(records[0]))})",
                     message.where, records[0])
        else:
            self.add("ASR-157", "completeness",
                     f"{message.role} message text {clip(text)} is not in any message record, and producer.lossy declares "
                     f"no such loss", message.where)

    def times(self) -> None:
        """Every other ts must be a time the source records somewhere (ASR-104)."""
        for record in self.stream.records:
            ts = record.get("ts")
            if isinstance(ts, str) and id(record) not in self.matched and parse_instant(ts) not in self.instants:
                self.add("ASR-104", "nothing-invented",
                         f"{record.get('type')} has ts {ts}, a time the source does not record", record=record)

    def questions(self) -> None:
        asked = {q.call_id: q for q in self.facts.questions if q.call_id}
        for record in self.stream.records:
            if record.get("type") != "input_request" or record.get("callId") not in asked:
                continue
            question = asked[record["callId"]]
            given = [v for a in record.get("answers") or () if isinstance(a, dict) for v in _answer_values(a)]
            if question.answers is None:
                if record.get("status") == "answered" or given or "response" in record:
                    self.add("ASR-285", "nothing-invented",
                             f"input_request for {question.call_id} records an answer, but the source records none",
                             question.where, record)
                continue
            status = record.get("status")
            if status in UNANSWERED:
                self.add("ASR-285", "exact-values",
                         f"input_request for {question.call_id} has status {clip(str(status))}, but the source records "
                         f"the person's answer", question.where, record)
            for value in given:
                if not any(value in answer for answer in question.answers):
                    self.add("ASR-285", "exact-values",
                             f"input_request for {question.call_id}: answer {clip(value)} is not an answer the source "
                             f"records", question.where, record)

    def secrets(self) -> None:
        if not self.facts.secrets:
            return
        for record in self.stream.records:
            text = json.dumps(record, ensure_ascii=False)
            for secret in self.facts.secrets:
                if secret and secret in text:
                    self.add("ASR-283", "nothing-invented",
                             "the stream holds the value given for a secret; only that it was asked may be recorded",
                             record=record)


def _answer_values(answer: dict[str, Any]) -> list[str]:
    values = [v for v in answer.get("selected") or () if isinstance(v, str)]
    if isinstance(answer.get("text"), str):
        values.append(answer["text"])
    return values

