"""Untrusted outputs: a converted stream is read only from the output_dir the harness gave, as
a bounded regular file reached without links; replies nobody asked for fail the process; deep
nesting anywhere fails the case instead of raising RecursionError."""

from __future__ import annotations

import os
import select
from pathlib import Path

import pytest
from sandbox_marks import contained

from asr_conformance import CORPUS_DIR
from asr_conformance.harness.adapters.answers import Outcome
from asr_conformance.harness.adapters.oneshot import OneShotProducer, OneShotReader, OneShotValidator
from asr_conformance.harness.adapters.persistent import PersistentImplementation
from asr_conformance.harness.isolation import boxes, policies, sandbox
from asr_conformance.harness.isolation.boxes import Box
from asr_conformance.harness.isolation.named_files import UnsafeOutput, read_output
from asr_conformance.vocabulary import protocol, strict_json

ROOT = Path(__file__).resolve().parents[3]
HOSTILE = ROOT / "examples" / "hostile"
SAMPLES = ROOT / "examples" / "claude-code-converter" / "samples"
BWRAP_PROBLEM = sandbox.problem()


def _input(tmp_path: Path) -> Path:
    source = tmp_path / "native.jsonl"
    source.write_text("{}\n")
    return source


def test_a_fifo_stream_path_fails_the_case_without_hanging(tmp_path: Path) -> None:
    adapter = PersistentImplementation([str(HOSTILE / "stream-path-fifo")], timeout=5, role="producer")
    try:
        conversion = adapter.convert(_input(tmp_path))
        # A read that blocked on the FIFO would end at the timeout, as a TIMEOUT.
        assert conversion.outcome is Outcome.CRASH and "not a regular file" in conversion.message, conversion.explain()
    finally:
        adapter.close()


def test_a_stream_path_outside_the_output_dir_is_never_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus_file = next(CORPUS_DIR.rglob("*.jsonl"))
    monkeypatch.setenv("ASR_HOSTILE_TARGET", str(corpus_file))
    adapter = PersistentImplementation([str(HOSTILE / "stream-path-outside")], timeout=5, role="producer",
                                  pass_env=("ASR_HOSTILE_TARGET",))
    messages = []
    try:
        for _ in range(6):
            conversion = adapter.convert(_input(tmp_path))
            assert conversion.outcome is Outcome.CRASH and conversion.stream is None, conversion.explain()
            assert corpus_file.read_text()[:40] not in conversion.explain()
            messages.append(conversion.message)
    finally:
        adapter.close()
    assert any("not inside the output_dir" in m for m in messages)
    assert any("symbolic link" in m for m in messages)


def test_read_output_refuses_links_hard_links_and_large_files(tmp_path: Path) -> None:
    box = Box()
    try:
        folder = box.output_dir()
        identity = box.output_identity(folder)
        (folder / "ok.jsonl").write_bytes(b"x" * 10)
        assert read_output(str(folder / "ok.jsonl"), folder, identity, 10, 5) == b"x" * 10
        assert read_output("ok.jsonl", folder, identity, 10, 5) == b"x" * 10
        with pytest.raises(UnsafeOutput, match="above the limit"):
            read_output("ok.jsonl", folder, identity, 9, 5)
        (folder / "sub").mkdir()
        os.symlink(folder / "sub", folder / "linked")
        (folder / "sub" / "s.jsonl").write_text("{}")
        with pytest.raises(UnsafeOutput, match="symbolic link"):
            read_output("linked/s.jsonl", folder, identity, 100, 5)
        os.link(folder / "ok.jsonl", folder / "hard.jsonl")
        with pytest.raises(UnsafeOutput, match="hard link"):
            read_output("hard.jsonl", folder, identity, 100, 5)
        with pytest.raises(UnsafeOutput, match="not a regular file"):
            read_output("sub", folder, identity, 100, 5)
        # Replaced by a link to where it was moved (beside it: the box's out/ may be a file system of its own).
        os.rename(folder, folder.with_name("moved"))
        os.symlink(folder.with_name("moved"), folder)
        with pytest.raises(UnsafeOutput):
            read_output("ok.jsonl", folder, identity, 100, 5)
    finally:
        box.close()


def test_one_shot_producer_output_is_capped(tmp_path: Path) -> None:
    script = tmp_path / "writes-a-lot"
    script.write_text("#!/bin/sh\nhead -c 5000000 /dev/zero\n")
    script.chmod(0o755)
    conversion = OneShotProducer([str(script)], limit=1 << 20).convert(_input(tmp_path))
    assert conversion.outcome is Outcome.CRASH and "--max-output" in conversion.message
    assert len(conversion.received) < 10_000, "what a failure shows is clipped, never the whole stdout"


def test_the_default_output_limit_is_small() -> None:
    assert policies.DEFAULT_SETTINGS.max_output <= 64 * 1024 * 1024


def test_a_persistent_stream_larger_than_the_limit_fails(tmp_path: Path) -> None:
    server = tmp_path / "big"
    server.write_text(
        "#!/usr/bin/env python3\nimport json, os, sys\n"
        "for line in sys.stdin:\n"
        "    r = json.loads(line)\n"
        "    if r['cmd'] == 'start': print(json.dumps({'version': 1, 'implementation': {'name': 'big'}, 'roles': ['producer']}), flush=True)\n"
        "    elif r['cmd'] == 'convert':\n"
        "        p = os.path.join(r['output_dir'], 's.jsonl'); open(p, 'wb').write(b'x' * 3000)\n"
        "        print(json.dumps({'seq': r['seq'], 'stream_path': p}), flush=True)\n"
        "    else: break\n")
    server.chmod(0o755)
    adapter = PersistentImplementation([str(server)], role="producer", max_output=2000)
    try:
        conversion = adapter.convert(_input(tmp_path))
        assert conversion.outcome is Outcome.CRASH and "above the limit" in conversion.message
    finally:
        adapter.close()


def test_the_reference_writes_into_the_output_dir(tmp_path: Path) -> None:
    sample = next(SAMPLES.glob("*.jsonl"))
    for command in (["python", "-m", "asr_conformance.reference.server"],
                    [str(ROOT / "examples" / "claude-code-converter" / "asr-from-claude-code")]):
        adapter = PersistentImplementation(command, role="producer", record_traffic=True, check_schemas=True)
        try:
            conversion = adapter.convert(sample)
            assert conversion.outcome is Outcome.CONVERTED, conversion.explain()
        finally:
            adapter.close()
        request = protocol.decode_json(adapter.traffic[2][1])
        reply = protocol.decode_json(adapter.traffic[3][1])
        assert reply["stream_path"].startswith(request["output_dir"] + os.sep)


def test_flooding_while_idle_fails_the_process_and_stop_returns(tmp_path: Path) -> None:
    adapter = PersistentImplementation([str(HOSTILE / "floods-while-idle")], timeout=60)
    stream = _input(tmp_path)
    adapter.handshake()
    assert adapter._session is not None
    # Its flood starts after the handshake: once its stdout holds something (no clock involved), the next
    # request finds output nobody asked for. (Sent at once, a request may instead read a flood line as its
    # reply, and fail as a reply with the wrong seq: a crash too, but not the one this test is about.)
    fd = adapter._session.child.stdout_fd
    assert fd is not None and select.select([fd], [], [], 60)[0], "it never flooded"
    answer = adapter.validate(stream)
    assert answer.outcome is Outcome.CRASH and "no request outstanding" in answer.message, answer.explain()
    process = adapter._session.process if adapter._session is not None else None
    adapter.close()
    assert adapter._session is None and (process is None or process.poll() is not None), "stop returned, the tree gone"


def test_unsolicited_replies_fail_the_process(tmp_path: Path) -> None:
    adapter = PersistentImplementation([str(HOSTILE / "unsolicited-replies")], timeout=60)
    stream = _input(tmp_path)
    try:
        first = adapter.validate(stream)
        second = adapter.validate(stream)
    finally:
        adapter.close()
    assert first.outcome.is_verdict
    assert second.outcome is Outcome.CRASH and "no request outstanding" in second.message


def test_deeply_nested_answers_fail_the_case(tmp_path: Path) -> None:
    command = [str(HOSTILE / "deeply-nested-diagnostics")]
    stream = _input(tmp_path)
    verdict = OneShotValidator(command).validate(stream)
    assert verdict.outcome is Outcome.CRASH and "nested" in verdict.message
    for role, ask in (("validator", "validate"), ("reader", "read")):
        adapter = PersistentImplementation(command, role=role)
        try:
            answer = getattr(adapter, ask)(stream)
        finally:
            adapter.close()
        assert answer.outcome is Outcome.CRASH and "nested" in answer.message
    view = tmp_path / "deep-view"
    view.write_text("#!/bin/sh\npython3 -c 'print(\"{\\\"a\\\": \" + \"[\" * 5000 + \"]\" * 5000 + \"}\")'\n")
    view.chmod(0o755)
    answer = OneShotReader([str(view)]).read(stream)
    assert answer.outcome is Outcome.CRASH and "nested" in answer.message


def test_loads_bounded_never_raises_recursion_error() -> None:
    with pytest.raises(strict_json.TooDeep):
        strict_json.loads_bounded("[" * 200_000 + "]" * 200_000)
    with pytest.raises(strict_json.TooDeep):
        strict_json.loads_bounded("[" * 400 + "]" * 400)
    assert strict_json.loads_bounded("[" * 257 + "]" * 257)


@pytest.mark.skipif(bool(BWRAP_PROBLEM), reason=f"no bubblewrap here: {BWRAP_PROBLEM}")
def test_the_sandbox_hides_the_corpus_and_keeps_it_read_only(tmp_path: Path) -> None:
    policy = contained(sandbox="bwrap")
    staging = boxes.staging_root(policy.settings)
    script = tmp_path / "peeks"
    script.write_text(f"#!/bin/sh\nls -A {CORPUS_DIR / 'validator'} {CORPUS_DIR / 'reader'} {staging}\n"
                      f"touch {ROOT}/planted 2>/dev/null && echo WROTE\nexit 0\n")
    script.chmod(0o755)
    answer = OneShotValidator([str(script)], policy=policy).validate(_input(tmp_path))
    listed = answer.received.split()
    assert answer.outcome is Outcome.ACCEPT, answer.explain()
    assert not [name for name in listed if name.startswith("ASR-")], answer.received
    headers = {f"{CORPUS_DIR / 'validator'}:", f"{CORPUS_DIR / 'reader'}:", f"{staging}:"}
    assert headers <= set(listed), answer.received
    # (a checkout under /tmp lies in the sandbox's private /tmp, where writing leaves the machine alone)
    assert len(set(listed) - headers - {"WROTE"}) == 1, "no case; in the staging root, its own box and nothing else"
    assert not (ROOT / "planted").exists()
    if not str(ROOT).startswith("/tmp/"):
        assert "WROTE" not in listed, "not even the folders the sandbox made to bind into are writable"
