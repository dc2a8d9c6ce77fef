"""The runner the project's tests certify through (certifying.py): its fork server's answers are read whole,
however they arrive, and a missing answer ends the wait at its timeout; a run's report is checked against its
schema whenever its text is new to the run."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from certifying import Certification, PreloadedPytest

#: A report the schema accepts (the golden report of the report-writing tests).
GOLDEN_REPORT = Path(__file__).with_name("reports") / "golden" / "report.json"


@contextmanager
def server_writing(text: str, then_wait: bool) -> Iterator[PreloadedPytest]:
    """A PreloadedPytest whose server writes ``text`` at once, then waits (or ends); no real server is started."""
    server = object.__new__(PreloadedPytest)
    script = f"import sys, time; sys.stdout.write({text!r}); sys.stdout.flush(); time.sleep({60 if then_wait else 0})"
    server.process = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      text=True)
    server._pending = b""
    try:
        yield server
    finally:
        server.process.kill()
        server.process.wait(60)


def test_both_answers_of_a_quick_run_written_at_once_are_both_read() -> None:
    """A run that ends at once (--version, a usage error) has the server write its pid and its exit status in
    one go. Read through the file object's buffer, the second answer sat where select() cannot see it, and
    the wait lasted the whole run timeout (here 5 s; the answer is there, so there is no wait)."""
    with server_writing('{"pid": 1234}\n{"status": 4}\n', then_wait=True) as server:
        assert server._answer(5) == {"pid": 1234}
        assert server._answer(5) == {"status": 4}


def test_an_answer_that_does_not_come_is_none_at_the_timeout() -> None:
    with server_writing('{"pid": 1234}\n{"sta', then_wait=True) as server:
        assert server._answer(5) == {"pid": 1234}
        assert server._answer(0.2) is None  # half a line is no answer


def test_a_server_that_ends_mid_answer_is_an_error() -> None:
    with server_writing('{"pid": 1234}\n{"sta', then_wait=False) as server:
        assert server._answer(5) == {"pid": 1234}
        with pytest.raises(RuntimeError, match="server ended"):
            server._answer(5)


def test_a_report_is_checked_again_whenever_its_text_changes(tmp_path: Path) -> None:
    """Each access parses the file anew (a test may change its copy); the schema check is skipped only for a text
    already checked, so a report broken after a first good read still fails the next."""
    report = json.loads(GOLDEN_REPORT.read_text(encoding="utf-8"))
    (tmp_path / "report.json").write_text(json.dumps({"report_version": 1}))
    run = Certification(pytest.RunResult(0, [], [], 0.0), tmp_path, tmp_path)
    with pytest.raises(AssertionError):
        run.report  # noqa: B018  (the property checks as it reads)
    (tmp_path / "report.json").write_text(json.dumps(report))
    first = run.report
    first["verdict"] = "changed by one test"
    assert run.report == report, "each access is a fresh copy"
    (tmp_path / "report.json").write_text(json.dumps({**report, "verdict": 7}))
    with pytest.raises(AssertionError):
        run.report  # noqa: B018
