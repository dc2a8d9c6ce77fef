"""Hold a converted stream against its source's facts: ``check_fidelity(facts, records)``.

Four families, each finding naming its rule:

* completeness: every native call, result and message is in the stream, and a call's recorded
  parent link is kept as ``parentCallId``, unless the stream declares its category lost in
  ``producer.lossy`` (header and declarations; ASR-157);
* identity: native call IDs kept (``callIdSource: native``), duplicates kept on each call, no
  positional pairing (ASR-262), orphans kept (ASR-266), no result made up for a dangling call
  (ASR-265);
* exact values: names (ASR-252), arguments (ASR-254), message and result text byte for byte,
  status from the source's flag (ASR-258), times as the same instants (ASR-103, ASR-154), header
  session ID and agent version (ASR-051);
* nothing invented: state records and their turn IDs and stop reasons (ASR-169), hook execution details
  (ASR-287), exit codes (ASR-260, 267), ``parentCallId`` (ASR-275), ``requestedBy``
  (ASR-274), timing (ASR-261), ``decidedBy``, ``decider``, ``rule`` and ``reviews`` (ASR-270), the
  compact permission form for a recorded request (ASR-279), terminal records (ASR-291) and their
  details (ASR-267), configuration changes (ASR-172) and snapshot values (ASR-187), answers
  (ASR-285), secrets (ASR-283), ``kind`` as a function of the name (ASR-253), times the source
  lacks (ASR-104).

Besides the findings, ``observe_fidelity`` returns what no numbered rule settles (an approval's
decision or status, a subagent's scope): family ``reported``, shown beside the verdict, never scored.

Strict where the pages say MUST, tolerant of legitimate mapping choices: a converter may split
or join text parts (texts are checked by exact containment), write times in another offset,
leave optional members out, map an error to ``failed``, ``denied`` or ``interrupted``, and declare
any category lost. Records are the stream as dicts, already valid per the reference validator.
"""

from __future__ import annotations

from typing import Any

from asr_conformance.fidelity.check_calls import CallChecks
from asr_conformance.fidelity.check_messages import MessageChecks
from asr_conformance.fidelity.check_permissions import PermissionChecks
from asr_conformance.fidelity.check_results import ResultChecks
from asr_conformance.fidelity.check_states import StateChecks
from asr_conformance.fidelity.check_subagents import SubagentChecks
from asr_conformance.fidelity.facts import Finding, SourceFacts
from asr_conformance.fidelity.stream_view import PERMISSION_CATEGORIES, REPORTED, Lossy, Policy

__all__ = ["PERMISSION_CATEGORIES", "REPORTED", "Checker", "Lossy", "Policy", "check_fidelity", "observe_fidelity"]


class Checker(CallChecks, ResultChecks, MessageChecks, PermissionChecks, StateChecks, SubagentChecks):
    """All checks of one stream against one source, family by family (one module each); ``findings`` grows
    as they run."""

    def run(self) -> list[Finding]:
        self.header()
        self.calls()
        self.parent_links()
        self.results()
        self.messages()
        self.invented()
        self.kinds()
        self.providers()
        self.times()
        self.questions()
        self.decisions()
        self.permissions()
        self.modes()
        self.configs()
        self.states()
        self.triggers()
        self.turn_links()
        self.hooks()
        self.terminals()
        self.subagents()
        self.secrets()
        return self.findings


def check_fidelity(facts: SourceFacts, records: list[dict[str, Any]], policy: Policy | None = None) -> list[Finding]:
    """Every disagreement between the stream (a list of record dicts) and the source's facts, under the
    judging pack's policy (``Policy()``: kind from a published mapping, the default loss namespaces)."""
    return Checker(facts, records, policy).run()


def observe_fidelity(facts: SourceFacts, records: list[dict[str, Any]],
                     policy: Policy | None = None) -> tuple[list[Finding], list[Finding]]:
    """``check_fidelity``'s findings (scored) and the observations no numbered rule settles (family
    ``reported``: shown beside the verdict, never scored), from one pass."""
    checker = Checker(facts, records, policy)
    return checker.run(), checker.reported

