"""A case's sandbox started ahead (``oneshot.Ahead``): while a case runs, the next case's sandbox is built and
held before it runs the command.  Each case still has its own box, view, PID namespace and input; nothing of the
implementation runs before its case; a held sandbox that does not fit the next case, and the one held at the
end, are killed."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from sandbox_marks import contained, needs_sandbox
from test_containment_processes import leftovers, tag  # noqa: F401 - tag is a fixture

from asr_conformance.harness.adapters.answers import Outcome
from asr_conformance.harness.adapters.oneshot import Ahead, OneShotValidator, started_ahead
from asr_conformance.harness.isolation import limits, processes
from asr_conformance.harness.isolation.processes import Child

ROOT = Path(__file__).resolve().parents[3]
HOSTILE = ROOT / "examples" / "hostile"
needs_cgroups = pytest.mark.skipif(not limits.pids_cgroups(), reason="no pids cgroup can be made here")

#: Says which PID and mount namespace it runs in, its pid, how many inputs its box holds, and its input.
PROBE = """#!/bin/sh
echo "pidns $(readlink /proc/self/ns/pid)"
echo "mntns $(readlink /proc/self/ns/mnt)"
echo "pid $$"
echo "inputs $(ls "$(dirname "$(dirname "$1")")" | wc -l)"
echo "input $(cat "$1")"
"""


def _programs(child: Child) -> set[str]:
    """The programs the processes of a held sandbox's cgroup run."""
    assert child.group is not None
    found = set()
    for pid in child.group.members() or []:
        try:
            found.add(os.path.basename(Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode()))
        except OSError:
            continue
    return found


def _daemon_case(tmp_path: Path) -> tuple[OneShotValidator, Path]:
    stream = tmp_path / "s.jsonl"
    stream.write_text("{}\n")
    adapter = OneShotValidator([str(HOSTILE / "leaves-quiet-daemon")], timeout=10, pass_env=("ASR_LEFTOVER_TAG",),
                               policy=contained(sandbox="bwrap"), ahead=Ahead())
    return adapter, stream


def _held_after_one_case(tmp_path: Path) -> tuple[OneShotValidator, Path, Child]:
    """The daemon case run once through a run's adapter, and the sandbox it now holds for the next case."""
    adapter, stream = _daemon_case(tmp_path)
    assert adapter.validate(stream).outcome is Outcome.ACCEPT
    assert adapter.ahead is not None
    held = adapter.ahead.waiting
    assert held is not None
    return adapter, stream, held


@needs_sandbox
def test_each_case_started_ahead_has_its_own_namespaces_box_and_input(tmp_path: Path) -> None:
    probe = tmp_path / "probe"
    probe.write_text(PROBE)
    probe.chmod(0o755)
    adapter = OneShotValidator([str(probe)], timeout=20, policy=contained(sandbox="bwrap"), ahead=Ahead())
    seen: list[dict[str, str]] = []
    served = []
    try:
        for number in range(3):
            stream = tmp_path / f"case-{number}.jsonl"
            stream.write_text(f"case {number}\n")
            served.append(adapter.ahead is not None and adapter.ahead.waiting is not None)
            verdict = adapter.validate(stream)
            assert verdict.outcome is Outcome.ACCEPT, verdict.explain()
            seen.append(dict(line.split(" ", 1) for line in verdict.received.splitlines()))
    finally:
        adapter.close()
    assert served == [False, True, True], "the second and third cases ran in sandboxes started ahead"
    assert [s["input"] for s in seen] == ["case 0", "case 1", "case 2"]
    assert all(s["inputs"] == "1" for s in seen), "each box holds its own input alone"
    # A namespace's number is reused once it is freed, so only cases alive together are compared: each case's
    # sandbox is made while the one before it runs.
    for kind in ("pidns", "mntns"):
        numbers = [s[kind] for s in seen]
        assert all(a != b for a, b in zip(numbers, numbers[1:], strict=False)), numbers
        assert os.readlink(f"/proc/self/ns/{kind[:3]}") not in numbers
    assert all(s["pid"] == "2" for s in seen), "the command is the first process of a fresh PID namespace"


@needs_sandbox
@needs_cgroups
def test_a_held_sandbox_runs_nothing_before_its_case_and_dies_with_close(tag: str, tmp_path: Path) -> None:  # noqa: F811
    adapter, stream, held = _held_after_one_case(tmp_path)
    assert held.process.poll() is None
    time.sleep(0.5)  # time enough to start its daemon, were it running
    assert _programs(held) == {"bwrap"}, "only bubblewrap waits: no code of the implementation runs"
    adapter.close()
    assert leftovers(tag) == [] and adapter.ahead.waiting is None


@needs_sandbox
@needs_cgroups
def test_an_end_of_file_would_release_a_held_sandbox_so_close_kills_it_first(tag: str, tmp_path: Path) -> None:  # noqa: F811
    """Why ``close`` kills a held sandbox before it closes the pipe: closing the pipe alone releases it, and the
    implementation runs with no case."""
    adapter, stream, held = _held_after_one_case(tmp_path)
    assert held.release_fd is not None
    time.sleep(0.5)
    assert held.process.poll() is None, "held, it waits"
    os.close(held.release_fd)
    held.release_fd = None
    # bubblewrap ends only when the command does: the implementation ran, to its end (its exit status 0).
    assert held.process.wait(timeout=10) == 0, "released by the end of file, the implementation runs"
    adapter.close()
    assert leftovers(tag) == []


@needs_sandbox
@needs_cgroups
def test_a_held_sandbox_that_does_not_fit_the_next_case_is_killed(tag: str, tmp_path: Path) -> None:  # noqa: F811
    adapter, stream, held = _held_after_one_case(tmp_path)
    other = OneShotValidator([str(HOSTILE / "leaves-quiet-daemon")], timeout=10, policy=contained(sandbox="bwrap"),
                             ahead=adapter.ahead)  # another environment: no ASR_LEFTOVER_TAG
    assert other.validate(stream).outcome is Outcome.ACCEPT
    assert held.process.poll() is not None, "the sandbox held for another start is killed, not used"
    assert leftovers(tag) == [], "what runs now was started without the tag"
    other.close()


def test_only_a_runs_one_shot_validators_and_readers_start_ahead() -> None:
    plain = OneShotValidator(["true"])
    assert plain.ahead is None, "an adapter made outside a run's session holds nothing between cases"
    assert started_ahead(plain).ahead is not None
    assert started_ahead(object) is object


def _our_cgroups(beside: Child) -> list[Path]:
    """This process's pids cgroups, found beside ``beside``'s."""
    assert beside.group is not None and beside.group.folder is not None
    return sorted(beside.group.folder.parent.glob(f"{limits.GROUP_PREFIX}{os.getpid()}-*"))


def _left_after_one_case(adapter: OneShotValidator, stream: Path) -> list[Path]:
    """The daemon case run once: this process's cgroups besides the one held for the next case."""
    assert adapter.validate(stream).outcome is Outcome.ACCEPT
    assert adapter.ahead is not None and adapter.ahead.waiting is not None
    held = adapter.ahead.waiting
    return [group for group in _our_cgroups(held) if held.group is None or group != held.group.folder]


@needs_sandbox
@needs_cgroups
def test_a_finished_cases_cgroup_is_emptied_and_removed_while_the_next_case_runs(
        tag: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """Its output at its end (no process holds its stdout: here the end of file always reads as reached, which the
    sandbox's own first process, still exiting, sometimes delays), a case's processes are each SIGKILLed and its
    answer read at once; the wait until its pids cgroup is empty and the cgroup's removal are done while the next
    case runs (``Ahead.prepare``), or at ``close``."""
    real = processes._drain_to
    monkeypatch.setattr(processes, "_drain_to", lambda fd, into, limit: (real(fd, into, limit)[0], True))
    adapter, stream = _daemon_case(tmp_path)
    try:
        waiting = _left_after_one_case(adapter, stream)
        assert len(waiting) == 1, "the first case's cgroup is left for the second case's time"
        assert adapter.validate(stream).outcome is Outcome.ACCEPT
        assert waiting[0] not in _our_cgroups(adapter.ahead.waiting), "emptied and removed while the second case ran"
    finally:
        adapter.close()
    assert leftovers(tag) == [], "the daemons of both cases are gone"
    assert not list(waiting[0].parent.glob(f"{limits.GROUP_PREFIX}{os.getpid()}-*")), "close ends the last case's"


@needs_sandbox
@needs_cgroups
def test_a_case_whose_stdout_is_not_at_its_end_is_ended_whole_before_its_answer(
        tag: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """Where a process of the case may still write to its stdout (its end of file not read: a daemon holding it,
    in the moment before the sandbox's end kills it), the case is ended whole (every process gone, its cgroup
    empty) before what it wrote is taken, as without a sandbox started ahead; only the cgroup's removal waits for
    the next case.  Made certain here by reading no end of file at all."""
    real = processes._read
    monkeypatch.setattr(processes, "_read", lambda fd: real(fd) or None)
    adapter, stream = _daemon_case(tmp_path)
    try:
        waiting = _left_after_one_case(adapter, stream)
        assert len(waiting) == 1
        assert (waiting[0] / "cgroup.procs").read_text().split() == [], "ended whole before its answer was read"
    finally:
        adapter.close()
    assert leftovers(tag) == []
