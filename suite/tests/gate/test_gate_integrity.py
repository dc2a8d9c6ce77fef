"""Hashing the corpus and the package is bounded and never follows links or opens what is not a file."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from asr_conformance.gate import integrity
from asr_conformance.gate.integrity import changed, file_digest, package_code, snapshot


def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "cases"
    (root / "validator" / "ASR-1").mkdir(parents=True)
    (root / "validator" / "ASR-1" / "valid-a.jsonl").write_text("{}\n")
    (root / "validator" / "ASR-1" / "valid-a.toml").write_text('verdict = "valid"\n')
    return root


def test_the_same_tree_gives_the_same_digest_and_a_change_is_named(tmp_path: Path) -> None:
    root = corpus(tmp_path)
    before = snapshot(root)
    assert snapshot(root).digest == before.digest and before.count(".jsonl") == 1
    (root / "validator" / "ASR-1" / "valid-a.toml").write_text('verdict = "invalid"\n')
    (root / "validator" / "planted.toml").write_text("")
    after = snapshot(root)
    assert after.digest != before.digest
    assert changed(before, after) == ["validator/ASR-1/valid-a.toml", "validator/planted.toml"]


def test_a_huge_sparse_file_is_recorded_by_its_size_not_read(tmp_path: Path) -> None:
    root = corpus(tmp_path)
    with open(root / "huge.jsonl", "wb") as handle:
        handle.truncate(3 * 1024**3)  # 3 GB, no blocks on disk
    found = snapshot(root, limit=1024)
    assert found.entries["huge.jsonl"] == f"oversized:{3 * 1024**3}"
    assert "huge.jsonl" in found.flagged


def test_a_fifo_does_not_hang_and_links_are_not_followed(tmp_path: Path) -> None:
    root = corpus(tmp_path)
    os.mkfifo(root / "pipe.jsonl")
    outside = tmp_path / "secret"
    outside.mkdir()
    (outside / "key.jsonl").write_text("secret")
    (root / "link.jsonl").symlink_to(outside / "key.jsonl")
    (root / "linked-folder").symlink_to(outside)
    done: list[object] = []
    worker = threading.Thread(target=lambda: done.append(snapshot(root)), daemon=True)
    worker.start()
    worker.join(10)
    assert done, "hashing a folder with a FIFO hung"
    found = done[0]
    assert found.entries["pipe.jsonl"].startswith("special:")  # type: ignore[attr-defined]
    assert found.entries["link.jsonl"].startswith("link:")  # type: ignore[attr-defined]
    assert found.entries["linked-folder"].startswith("link:")  # type: ignore[attr-defined]
    assert not any(name.startswith("linked-folder/") for name in found.entries)  # type: ignore[attr-defined]


def test_the_number_of_entries_is_capped(tmp_path: Path) -> None:
    root = corpus(tmp_path)
    for i in range(10):
        (root / f"extra-{i}.toml").write_text("")
    found = snapshot(root, max_entries=5)
    assert len(found.entries) == 5 and any("more than 5 entries" in f for f in found.flagged)


def test_a_file_digest_of_a_missing_file_says_so(tmp_path: Path) -> None:
    assert file_digest(tmp_path / "nothing").startswith("unreadable:")


@pytest.mark.parametrize(
    ("name", "kept"),
    [("plugin/hooks.py", True), ("schemas/report.schema.json", True),
     ("plugin/__pycache__/hooks.cpython-311.pyc", True), ("harness/limits.cpython-311-x86_64-linux-gnu.so", True),
     ("conformance/__pycache__/test_producer.cpython-311-pytest-8.3.0.pyc", False),
     ("tests/test_x.py", False), ("benchmarks/test_y.py", False), ("out/report.json", False),
     ("out/scoring-audit.md", False), ("counterexamples/validator/x.toml", False)],
)
def test_package_code_is_everything_python_loads_but_the_projects_tests(name: str, kept: bool) -> None:
    assert package_code(name) is kept


# -- the memo of digests: it spares reading a file only while every stamp of it is as it was


def _opens(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    opened: list[str] = []
    real_open = os.open

    def counting(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        opened.append(os.fspath(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(integrity.os, "open", counting)
    return opened


def test_a_settled_file_is_read_once_while_its_stamps_stay(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(integrity, "SETTLED_SECONDS", -1.0)
    memo, path = integrity.DigestMemo(), tmp_path / "case.jsonl"
    path.write_bytes(b"{}\n")
    opened = _opens(monkeypatch)
    first = integrity.file_digest(path, memo=memo)
    assert integrity.file_digest(path, memo=memo) == first
    assert opened == [str(path)]


def test_a_file_rewritten_with_its_size_and_modification_time_kept_is_read_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The change time moves with every write and with ``utime`` itself: a rewrite that restores size and
    modification time is still seen (the memo would return the old digest if it keyed on those alone)."""
    monkeypatch.setattr(integrity, "SETTLED_SECONDS", -1.0)
    memo, path = integrity.DigestMemo(), tmp_path / "rules.toml"
    path.write_bytes(b"aaaa")
    before = os.stat(path)
    first = integrity.file_digest(path, memo=memo)
    time.sleep(0.02)
    path.write_bytes(b"bbbb")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(path).st_mtime_ns == before.st_mtime_ns and os.stat(path).st_size == before.st_size
    assert integrity.file_digest(path, memo=memo) != first
    assert integrity.file_digest(path, memo=memo) == integrity.file_digest(path, memo=None)


def test_a_file_changed_just_before_its_hashing_is_never_remembered(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A write within the kernel's coarse clock tick of the hash could leave every stamp as it was."""
    memo, path = integrity.DigestMemo(), tmp_path / "fresh.toml"
    path.write_bytes(b"x")
    opened = _opens(monkeypatch)
    integrity.file_digest(path, memo=memo)
    integrity.file_digest(path, memo=memo)
    assert opened == [str(path), str(path)]


def test_a_snapshot_taken_with_the_memo_agrees_with_one_taken_without(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(integrity, "SETTLED_SECONDS", -1.0)
    for index in range(5):
        (tmp_path / f"f{index}").write_text(str(index))
    first = integrity.snapshot(tmp_path)
    (tmp_path / "f2").write_text("changed")
    after = integrity.snapshot(tmp_path)
    assert integrity.changed(first, after) == ["f2"]
    memo_free = {name: integrity.file_digest(tmp_path / name, memo=None) for name in after.entries}
    assert after.entries == memo_free
