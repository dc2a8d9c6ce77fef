"""The reader and producer adapters: what counts as a view, a stream or a
refusal, and what is a crash, in both the one-shot and the persistent form."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from asr_conformance.harness.adapters.answers import Outcome
from asr_conformance.harness.adapters.oneshot import OneShotProducer, OneShotReader
from asr_conformance.harness.adapters.persistent import PersistentImplementation


def _script(tmp_path: Path, body: str) -> list[str]:
    path = tmp_path / "impl.py"
    path.write_text("import json, os, sys\n" + body)
    return [sys.executable, str(path)]


@pytest.fixture
def stream(tmp_path: Path) -> Path:
    path = tmp_path / "s.jsonl"
    path.write_text("{}\n")
    return path


def _timeout_for(outcome: Outcome) -> float:
    """A short limit only where a timeout is the expected outcome: an answer a busy machine is slow to give is no timeout."""
    return 0.5 if outcome is Outcome.TIMEOUT else 60


@pytest.mark.parametrize(
    ("body", "outcome", "message"),
    [
        ("print(json.dumps({'view_version': 1}))", Outcome.VIEWED, ""),
        ("print('[1, 2]')", Outcome.CRASH, "JSON object"),
        ("print('not json')", Outcome.CRASH, "not one JSON document"),
        ("print('{}'); sys.exit(3)", Outcome.CRASH, "exit status 3"),
        ("os.kill(os.getpid(), 9)", Outcome.CRASH, "signal 9"),
        ("import time; time.sleep(30)", Outcome.TIMEOUT, "no exit within"),
    ],
    ids=["view", "array", "garbage", "exit-3", "killed", "hangs"],
)
def test_one_shot_reader_answers(tmp_path: Path, stream: Path, body: str, outcome: Outcome, message: str) -> None:
    answer = OneShotReader(_script(tmp_path, body), timeout=_timeout_for(outcome)).read(stream)
    assert answer.outcome is outcome, answer.explain()
    assert message in answer.message
    if outcome is Outcome.VIEWED:
        assert answer.view == {"view_version": 1}


@pytest.mark.parametrize(
    ("body", "outcome", "detail"),
    [
        ("sys.stdout.write(open(sys.argv[1]).read())", Outcome.CONVERTED, b"{}\n"),
        ("sys.stderr.write('not a transcript\\n'); sys.exit(2)", Outcome.REFUSED, "not a transcript"),
        ("sys.exit(2)", Outcome.REFUSED, ""),
        ("raise ValueError('boom')", Outcome.CRASH, "uncaught exception"),
        ("os.kill(os.getpid(), 9)", Outcome.CRASH, "signal 9"),
        ("import time; time.sleep(30)", Outcome.TIMEOUT, "no exit within"),
    ],
    ids=["stream", "refusal", "silent-refusal", "traceback", "killed", "hangs"],
)
def test_one_shot_producer_answers(tmp_path: Path, stream: Path, body: str, outcome: Outcome, detail) -> None:
    conversion = OneShotProducer(_script(tmp_path, body), timeout=_timeout_for(outcome)).convert(stream)
    assert conversion.outcome is outcome, conversion.explain()
    if isinstance(detail, bytes):
        assert conversion.stream == detail
    else:
        assert detail in (conversion.refusal if outcome is Outcome.REFUSED else conversion.message)


def test_one_shot_producer_runs_in_the_given_environment_and_folder(tmp_path: Path, stream: Path) -> None:
    body = "print(json.dumps([os.environ.get('TZ'), os.getcwd()]))"
    where = tmp_path / "elsewhere"
    where.mkdir()
    conversion = OneShotProducer(_script(tmp_path, body), timeout=5, cwd=str(where), env={"TZ": "Pacific/Kiritimati"}
                                 ).convert(stream)
    assert json.loads(conversion.stream) == ["Pacific/Kiritimati", str(where)]


SERVER = (
    "for line in sys.stdin:\n"
    "    r = json.loads(line)\n"
    "    if r['cmd'] == 'start':\n"
    "        print(json.dumps({'version': 1, 'implementation': {'name': 't'}, 'roles': ROLES}), flush=True)\n"
    "    elif r['cmd'] == 'stop':\n"
    "        break\n"
    "    else:\n"
    "        print(json.dumps(REPLY(r)), flush=True)\n"
)


def _server(tmp_path: Path, roles: list[str], reply: str, role: str) -> PersistentImplementation:
    body = f"ROLES = {roles!r}\nREPLY = lambda r: {reply}\n"
    return PersistentImplementation(_script(tmp_path, body + SERVER), timeout=5, role=role)


@pytest.mark.parametrize(
    ("reply", "outcome"),
    [
        ("{'seq': r['seq'], 'view': {'view_version': 1}}", Outcome.VIEWED),
        ("{'seq': r['seq'], 'view': [1]}", Outcome.CRASH),
        ("{'seq': r['seq'] + 1, 'view': {}}", Outcome.CRASH),
        ("{'seq': r['seq'], 'skipped': True, 'message': 'no'}", Outcome.SKIPPED),
    ],
    ids=["view", "not-an-object", "wrong-seq", "skipped"],
)
def test_persistent_read(tmp_path: Path, stream: Path, reply: str, outcome: Outcome) -> None:
    adapter = _server(tmp_path, ["reader"], reply, "reader")
    try:
        answer = adapter.read(stream)
        assert answer.outcome is outcome, answer.explain()
    finally:
        adapter.close()


@pytest.mark.parametrize(
    ("reply", "outcome"),
    [
        ("{'seq': r['seq'], 'stream_path': __import__('shutil').copy(r['path'], r['output_dir'])}", Outcome.CONVERTED),
        ("{'seq': r['seq'], 'refused': 'truncated'}", Outcome.REFUSED),
        ("{'seq': r['seq'], 'stream_path': '/nonexistent/out.jsonl'}", Outcome.CRASH),
        ("{'seq': r['seq'], 'stream_path': r['path']}", Outcome.CRASH),
        ("{'seq': r['seq'], 'stream_path': r['path'], 'refused': 'both'}", Outcome.CRASH),
        ("{'seq': r['seq']}", Outcome.CRASH),
    ],
    ids=["stream", "refused", "missing-file", "outside-output-dir", "both", "neither"],
)
def test_persistent_convert(tmp_path: Path, stream: Path, reply: str, outcome: Outcome) -> None:
    adapter = _server(tmp_path, ["producer"], reply, "producer")
    try:
        conversion = adapter.convert(stream)
        assert conversion.outcome is outcome, conversion.explain()
        if outcome is Outcome.CONVERTED:
            assert conversion.stream == b"{}\n"
        if outcome is Outcome.REFUSED:
            assert conversion.refusal == "truncated"
    finally:
        adapter.close()


def test_persistent_role_must_be_announced(tmp_path: Path, stream: Path) -> None:
    adapter = _server(tmp_path, ["validator"], "{'seq': r['seq'], 'view': {}}", "reader")
    try:
        answer = adapter.read(stream)
        assert answer.outcome is Outcome.CRASH and "does not play the reader role" in answer.message
    finally:
        adapter.close()


def test_a_diagnostic_that_quotes_a_line_separator_is_one_diagnostic() -> None:
    """U+2028 and U+0085 may stand raw in a JSON string; they do not end a diagnostic line."""
    from asr_conformance.harness.adapters.oneshot import parse_diagnostics

    quoted = json.dumps({"rule": "ASR-164", "message": "content 'a\u2028b\u0085c'"}, ensure_ascii=False)
    found = parse_diagnostics(f"checking...\r\n{quoted}\r\n{{\"rule\": \"ASR-003\"}}\n")
    assert [d["rule"] for d in found] == ["ASR-164", "ASR-003"]
