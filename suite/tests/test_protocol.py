"""Protocol messages and their published schemas agree, and the adapters
refuse what the protocol does not allow."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import jsonschema
import pytest

from asr_conformance.harness.adapters.answers import Outcome
from asr_conformance.harness.adapters.persistent import PersistentImplementation
from asr_conformance.vocabulary import protocol

MESSAGES = [
    protocol.Start(),
    protocol.Validate(7, "/tmp/case.jsonl"),
    protocol.Convert(8, "/tmp/native.log"),
    protocol.Read(9, "/tmp/case.jsonl"),
    protocol.Stop(),
    protocol.Started(1, "acme", "2.3.0", ("validator", "reader")),
    protocol.Started(1, "acme", None, ("validator",)),
    protocol.Validated(7, "invalid", ({"rule": "ASR-164", "seq": 5},)),
    protocol.Validated(7, "valid"),
    protocol.Converted(8, stream_path="/tmp/out.jsonl"),
    protocol.Converted(8, refused="truncated input"),
    protocol.Viewed(9, {"pairs": []}),
    protocol.Errored(7, "boom"),
    protocol.Skipped(7, "not supported"),
]
SCHEMA_DIR = Path(protocol.__file__).parents[1] / "schemas" / "protocol"


@pytest.mark.parametrize("message", MESSAGES, ids=lambda m: f"{type(m).__name__}")
def test_every_message_matches_its_schema(message) -> None:
    protocol.check(message.schema, json.loads(protocol.encode(message)))


@pytest.mark.parametrize("message", [m for m in MESSAGES if hasattr(m, "from_json")], ids=lambda m: type(m).__name__)
def test_replies_read_back_to_the_same_message(message) -> None:
    assert type(message).from_json(json.loads(protocol.encode(message))) == message


def test_every_schema_is_used_and_valid() -> None:
    names = {path.name.removesuffix(".schema.json") for path in SCHEMA_DIR.glob("*.schema.json")}
    assert names == {m.schema for m in MESSAGES}
    for name in names:
        jsonschema.Draft202012Validator.check_schema(protocol.schema(name))


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("OK", "not JSON"),
        ("[1]", "a JSON object"),
        ('{"seq": 6, "verdict": "valid"}', "seq 6"),
        ('{"seq": 7, "verdict": "maybe"}', "verdict must be"),
        ('{"seq": 7}', "missing or malformed"),
        ('{"seq": 7, "verdict": "invalid", "violations": [{"why": 1}]}', "each violation"),
        ('{"seq": 7.0, "verdict": "valid"}', r"seq 7\.0"),
        ('{"seq": "7", "verdict": "valid"}', "seq '7'"),
    ],
)
def test_unusable_replies_are_protocol_errors(line: str, problem: str) -> None:
    with pytest.raises(protocol.ProtocolError, match=problem):
        protocol.decode_reply(line, protocol.Validate(7, "/x"))


@pytest.mark.parametrize(("seq", "given"), [(1, "true"), (2, "2.0"), (0, "false"), (3, "3e0")])
def test_a_reply_seq_is_an_integer_not_a_boolean_or_float(seq: int, given: str) -> None:
    """True == 1 and 2.0 == 2 in Python: compared by value alone, either would pass for the seq."""
    with pytest.raises(protocol.ProtocolError, match="an integer"):
        protocol.decode_reply(f'{{"seq": {given}, "verdict": "valid"}}', protocol.Validate(seq, "/x"))
    assert protocol.decode_reply(f'{{"seq": {seq}, "verdict": "valid"}}', protocol.Validate(seq, "/x")).seq == seq


def test_strict_mode_checks_replies_against_their_schema() -> None:
    line = '{"seq": 7, "verdict": "invalid", "violations": [{"rule": "ASR-164", "seq": "five"}]}'
    protocol.decode_reply(line, protocol.Validate(7, "/x"))  # usable, so accepted without --check-protocol
    with pytest.raises(protocol.ProtocolError, match="not a valid validated message"):
        protocol.decode_reply(line, protocol.Validate(7, "/x"), strict=True)


def _script(tmp_path: Path, body: str) -> list[str]:
    path = tmp_path / "impl.py"
    path.write_text("import json, sys\n" + body)
    return [sys.executable, str(path)]


HANDSHAKE = (
    "for line in sys.stdin:\n"
    "    r = json.loads(line)\n"
    "    if r['cmd'] == 'start':\n"
    "        print(json.dumps({'version': 1, 'implementation': {'name': 't'}, 'roles': ROLES}), flush=True)\n"
    "    elif r['cmd'] == 'validate':\n"
    "        print(json.dumps(REPLY(r)), flush=True)\n"
)


def test_check_protocol_catches_a_reply_outside_the_schema(tmp_path: Path) -> None:
    body = "ROLES = ['validator']\nREPLY = lambda r: {'seq': r['seq'], 'verdict': 'valid', 'violations': 'none'}\n"
    command = _script(tmp_path, body + HANDSHAKE)
    stream = tmp_path / "s.jsonl"
    stream.write_text("{}\n")
    lenient = PersistentImplementation(command, timeout=60)
    strict = PersistentImplementation(command, timeout=60, check_schemas=True, record_traffic=True)
    try:
        assert lenient.validate(stream).outcome is Outcome.CRASH  # violations must be objects, even unchecked
        verdict = strict.validate(stream)
        assert verdict.outcome is Outcome.CRASH and "not a valid validated message" in verdict.message
        assert [direction for direction, _ in strict.traffic] == ["->", "<-", "->", "<-"]
    finally:
        lenient.close()
        strict.close()


def test_an_implementation_without_the_validator_role_is_refused(tmp_path: Path) -> None:
    body = "ROLES = ['reader']\nREPLY = lambda r: {'seq': r['seq'], 'verdict': 'valid'}\n"
    adapter = PersistentImplementation(_script(tmp_path, body + HANDSHAKE), timeout=60)
    stream = tmp_path / "s.jsonl"
    stream.write_text("{}\n")
    try:
        first = adapter.validate(stream)
        assert first.outcome is Outcome.CRASH and "does not play the validator role" in first.message
        assert "gave up" in adapter.validate(stream).message  # no restart loop
    finally:
        adapter.close()


def test_errored_and_skipped_replies_are_not_verdicts(tmp_path: Path) -> None:
    body = ("ROLES = ['validator']\n"
            "REPLY = lambda r: {'seq': r['seq'], 'errored': True, 'message': 'cannot parse'}\n")
    adapter = PersistentImplementation(_script(tmp_path, body + HANDSHAKE), timeout=60)
    stream = tmp_path / "s.jsonl"
    stream.write_text("{}\n")
    try:
        verdict = adapter.validate(stream)
        assert verdict.outcome is Outcome.ERRORED and verdict.message == "cannot parse"
    finally:
        adapter.close()
