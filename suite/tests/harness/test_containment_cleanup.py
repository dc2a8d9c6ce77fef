"""Taking staging away: never touching what holds it, and finishing while other threads still write in it."""

from __future__ import annotations

import os
import stat
import threading
import time
from pathlib import Path

import pytest

from asr_conformance.harness import containment


def test_removing_a_folder_that_is_gone_leaves_its_parent_alone(tmp_path: Path) -> None:
    """A vanished staging folder once made the remover "fix" its parent's mode: the machine's /tmp became 0700."""
    tmp_path.chmod(0o1777)
    containment._remove_tree(tmp_path / "gone")
    assert stat.S_IMODE(os.stat(tmp_path).st_mode) == 0o1777


def test_removing_an_unwritable_tree_keeps_the_parents_mode(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    tree = tmp_path / "box"
    (tree / "out" / "deep").mkdir(parents=True)
    (tree / "out" / "deep" / "file").write_text("x")
    (tree / "out" / "deep").chmod(0o500)
    (tree / "out").chmod(0o500)
    containment._remove_tree(tree)
    assert not tree.exists()
    assert stat.S_IMODE(os.stat(tmp_path).st_mode) == 0o755


def test_staging_is_removed_even_while_another_thread_still_writes_in_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a signal, a step of the run's own may still be writing files for a while: the folder must go anyway."""
    staging = tmp_path / "asr-run-1-x"
    staging.mkdir()
    monkeypatch.setattr(containment, "_made", [staging])
    stop = time.monotonic() + 0.3

    def writer() -> None:
        count = 0
        while time.monotonic() < stop:
            try:
                (staging / f"f{count}").write_text("x")
            except OSError:
                return
            count += 1

    thread = threading.Thread(target=writer)
    thread.start()
    time.sleep(0.05)
    containment.remove_staging(patience=5.0)
    thread.join()
    assert not staging.exists()
