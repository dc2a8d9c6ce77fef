"""The corpus's scale cases: streams of real size, written by this script, byte for byte the same on
every run.

Every other case of the corpus is a few lines long; a validator that checks only the first lines
of a stream, or a reader that reads only the first records, passes them all.  These cases are a
long coding session (thousands of records, several MiB: the turns of ``coding_turns``,
prompts, replies, tool calls and outputs) and the same session with one defect on its last line,
on a line in the middle, and after a long run of records of another type; and reader cases whose
view depends on a record thousands of records away from the one it changes.

The files are committed under ``cases/`` like every case (plain files, readable without the
harness); this script is how they were made and how to check them::

    python -m asr_conformance.generators.scale_cases            # (re)write them into cases/
    python -m asr_conformance.generators.scale_cases --check    # exit 1 when a file differs

The project's tests run the check, so a change to the filler shows as a changed case.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from asr_conformance.generators.coding_turns import TURN, _turns, filler_lines

CORPUS = Path(__file__).resolve().parents[1] / "cases"
#: Records of filler in the validator cases (several MiB) and in the reader cases (over a MiB).
VALIDATOR_RECORDS, READER_RECORDS = 6_000, 2_500
#: The run of messages the defect of the third invalid case follows.
MESSAGE_RUN = 4_000


def _header(**members: object) -> str:
    header = {
        "type": "session", "seq": 0, "id": "h", "formatVersion": "0.1", "agent": {"name": "claude-code", "version": "2.1.305"},
        "sessionId": "7c1e52a0-4b8d-4e19-9f3a-2d6b8c0e5f71",
        "producer": {"name": "scale-case-writer", "version": "1.0.0", "method": "converter", "instance": "scale-1",
                     "source": {"format": "claude-code-jsonl"}, "lossy": []},
        "startedAt": "2026-10-26T14:02:11.204Z", "profiles": ["core", "coding"], "contentLevel": "full", **members,
    }
    return _line(header)


def _line(record: dict[str, object]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


def _session(records: int, first_seq: int = 1, seed: int = 1, first_turn: int = 0) -> list[str]:
    """Filler records; a second block of one stream starts at another ``first_turn`` (new turn and call IDs)."""
    return filler_lines("r", first_seq, records, seed, first_turn)


def _messages(first_seq: int, count: int) -> list[str]:
    """A run of ``count`` message records (no turn), the prompts and replies of the filler's turns."""
    texts = [tail.replace(f'"turnId":"{TURN}",', "") for turn in _turns() for kind, tail in turn if kind == "message"]
    return [f'{{"type":"message","seq":{seq},"id":"m-{seq}",{texts[seq % len(texts)]}\n'
            for seq in range(first_seq, first_seq + count)]


def _bytes(lines: Sequence[str]) -> bytes:
    return "".join(lines).encode()


@dataclass(frozen=True, slots=True)
class ScaleCase:
    """One case: its path under cases/ (without suffix), metadata (TOML text), stream, and view (reader)."""

    path: str
    metadata: str
    stream: bytes
    view: dict[str, object] | None = None

    def files(self) -> dict[str, bytes]:
        found = {f"{self.path}.jsonl": self.stream, f"{self.path}.toml": self.metadata.encode()}
        if self.view is not None:
            text = json.dumps(self.view, ensure_ascii=False, indent=1) + "\n"
            found[f"{self.path}.view.json"] = text.encode()
        return found


def _toml(description: str, verdict: str, rules: list[str], spec: str, **more: object) -> str:
    lines = [f"description = {json.dumps(description, ensure_ascii=False)}", f"verdict = {json.dumps(verdict)}",
             f"rules = {json.dumps(rules)}", f"spec = {json.dumps(spec, ensure_ascii=False)}"]
    lines += [f"{key} = {json.dumps(value)}" for key, value in more.items()]
    return "\n".join(lines) + "\n"


def validator_cases() -> list[ScaleCase]:
    session = _session(VALIDATOR_RECORDS)
    header = _header()
    last = VALIDATOR_RECORDS + 1
    # The state record nearest the middle loses its state member.
    middle = min((i for i, line in enumerate(session) if line.startswith('{"type":"state"')),
                 key=lambda i: abs(i - len(session) // 2))
    broken_middle = list(session)
    broken_middle[middle] = session[middle].replace(',"state":"idle"', "").replace(',"state":"running"', "")
    assert broken_middle[middle] != session[middle]
    before, run = 500, MESSAGE_RUN
    after_run = [header, *_session(before)] + _messages(before + 1, run)
    defect_seq = before + run + 1
    after_run.append(_line({"type": "memory_change", "seq": defect_seq, "id": f"r-{defect_seq}", "store": "auto_memory",
                            "op": "add"}))
    after_run += _session(500, defect_seq + 1, seed=2, first_turn=10_000)
    size = f"{VALIDATOR_RECORDS + 1:,} records"
    return [
        ScaleCase("validator/format/valid-scale-coding-session",
                  _toml(f"A coding session of {size} and several MiB: turns of prompts, replies, tool calls with "
                        "their results and outputs, permissions, hooks and state changes, every seq increasing and "
                        "every ID unique.", "valid", ["X-JSON", "X-RECORD"], "Format (referenced; see ASSUMPTIONS.md A-FORMAT)",
                        assumptions=["A-FORMAT"]),
                  _bytes([header, *session])),
        ScaleCase("validator/ASR-171/invalid-scale-empty-config-change-on-last-line",
                  _toml(f"The coding session of {size}, then on its last line a config_change that holds only actor "
                        "and no configuration member.", "invalid", ["ASR-171"], "Session records › config_change"),
                  _bytes([header, *session, _line({"type": "config_change", "seq": last, "id": f"r-{last}",
                                                   "actor": "user"})])),
        ScaleCase("validator/ASR-168/invalid-scale-state-missing-in-the-middle",
                  _toml(f"The coding session of {size}; on line {middle + 2}, in the middle, a state record has "
                        "turnId but no state member.", "invalid", ["ASR-168"], "Session records › state"),
                  _bytes([header, *broken_middle])),
        ScaleCase("validator/ASR-190/invalid-scale-memory-change-after-a-long-run-of-messages",
                  _toml(f"{before} records of a coding session, then a run of {run:,} message records, then a "
                        f"memory_change with store and op but no cause (line {defect_seq + 1}), then {before} more "
                        "records.", "invalid", ["ASR-190"], "Session records › memory_change"),
                  _bytes(after_run)),
    ]


def reader_cases() -> list[ScaleCase]:
    records = READER_RECORDS
    header = _header()
    title = [header, _line({"type": "session_info", "seq": 1, "id": "r-1", "title": "Fix the empty-input crash",
                            "titleSource": "user"}), *_session(records, 2, seed=3)]
    seq = records + 2
    title.append(_line({"type": "session_info", "seq": seq, "id": f"r-{seq}", "title": "Parser handles empty input"}))
    title += _session(20, seq + 1, seed=4, first_turn=10_000)
    level = [header, _line({"type": "declaration", "seq": 1, "id": "r-1", "contentLevel": "redacted"}),
             *_session(records, 2, seed=5)]
    last = records + 1
    return [
        ScaleCase("reader/ASR-181/valid-scale-new-title-far-from-the-first",
                  _toml(f"Line 2 sets a title with titleSource user; {records:,} records later a session_info gives a "
                        "new title without titleSource, and 20 records follow. The effective title is the new one "
                        "and its titleSource is unknown (null): a reader must read the whole stream.", "valid",
                        ["ASR-181", "ASR-160"], "Session records › session_info",
                        view="valid-scale-new-title-far-from-the-first.view.json"),
                  _bytes(title),
                  {"session_info": {"title": "Parser handles empty input", "titleSource": None}}),
        ScaleCase("reader/ASR-165/valid-scale-content-level-far-from-the-declaration",
                  _toml(f"The header's content level is full; line 2 declares redacted; {records:,} records follow. "
                        f"The declaration itself stays full; every later record, the last (seq {last}) included, is "
                        "redacted.", "valid", ["ASR-165"], "Session records › declaration",
                        view="valid-scale-content-level-far-from-the-declaration.view.json"),
                  _bytes(level),
                  {"in_force": {"1": {"contentLevel": "full"}, "2": {"contentLevel": "redacted"},
                                str(last): {"contentLevel": "redacted"}}}),
    ]


def all_files() -> dict[str, bytes]:
    """Every file of every scale case, by path under cases/."""
    found: dict[str, bytes] = {}
    for case in validator_cases() + reader_cases():
        found.update(case.files())
    return found


def differences(corpus: Path = CORPUS) -> list[str]:
    """The scale case files that are missing from ``corpus`` or differ from what this script writes."""
    return [path for path, data in all_files().items()
            if not (corpus / path).is_file() or (corpus / path).read_bytes() != data]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write or check the corpus's scale cases.")
    parser.add_argument("--check", action="store_true", help="only check: exit 1 when a file is missing or differs")
    parser.add_argument("corpus", nargs="?", type=Path, default=CORPUS, help="the cases folder (default: the checkout's)")
    options = parser.parse_args(argv)
    if options.check:
        changed = differences(options.corpus)
        for path in changed:
            sys.stderr.write(f"{options.corpus / path}: missing or not what the scale case writer makes\n")
        return 1 if changed else 0
    for path, data in all_files().items():
        target = options.corpus / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
