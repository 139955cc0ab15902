"""``new_database``: a new database appears whole or not at all, under the writer lock."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest
import webcrawl.storage.lock as lock_module
from webcrawl.storage.errors import StoreError, StoreLockedError
from webcrawl.storage.lock import WriterLock, lock_path, new_database


def _files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_the_database_appears_only_when_complete(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    with new_database(db) as temp:
        assert temp.parent == tmp_path and not db.exists()
        temp.write_bytes(b"whole")
        with pytest.raises(StoreLockedError):  # one writer: not beside another one
            WriterLock(db).acquire()
    assert db.read_bytes() == b"whole"
    assert _files(tmp_path) == ["x.db"]  # the lock file goes with the writer


def test_a_failure_leaves_nothing(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    with pytest.raises(RuntimeError, match="half"), new_database(db) as temp:
        temp.write_bytes(b"half")
        for sidecar in ("-wal", "-shm", "-writer"):  # what SQLite and a store leave
            temp.with_name(temp.name + sidecar).write_bytes(b"")
        raise RuntimeError("half written")
    assert _files(tmp_path) == []


def test_an_existing_database_or_a_folder_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    db.write_bytes(b"someone's data")
    with pytest.raises(StoreError, match="already exists"), new_database(db):
        pass  # pragma: no cover
    assert db.read_bytes() == b"someone's data"
    for folder in (tmp_path, Path("/"), Path("")):
        with pytest.raises(StoreError, match="is a directory"), new_database(folder):
            pass  # pragma: no cover
    assert _files(tmp_path) == ["x.db"]


def test_a_lock_file_removed_under_a_locker_is_not_trusted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A failed writer removes its lock file; a process that had opened it meanwhile gets
    the lock of a file no one else can find, and must lock the new file instead."""
    db = tmp_path / "x.db"
    holder = WriterLock(db)
    holder.acquire()
    real = fcntl.flock
    removed: list[int] = []

    def flock(fd: int, operation: int) -> None:
        if not removed:  # the next locker has opened the file: the holder leaves now
            removed.append(fd)
            holder.release(remove=True)
        real(fd, operation)

    monkeypatch.setattr(lock_module.fcntl, "flock", flock)
    second = WriterLock(db)
    second.acquire()
    monkeypatch.setattr(lock_module.fcntl, "flock", real)
    assert removed and lock_path(db).exists()
    with pytest.raises(StoreLockedError):  # the lock is really held, on the file in place
        WriterLock(db).acquire()
    second.release()
    assert not os.path.exists(tmp_path / "x.db")
