"""Results kept beside a crawl database: served only for the file's state they came from."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from webcrawl.storage import results_cache
from webcrawl.storage.results_cache import (
    cache_dir,
    database_state,
    load_result,
    store_result,
)


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A small SQLite file in WAL mode, as crawl databases are; no quiet period."""
    monkeypatch.setattr(results_cache, "QUIET_SECONDS", 0.0)
    path = tmp_path / "g.db"
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("CREATE TABLE meta (key TEXT, value TEXT)")
        conn.execute("INSERT INTO meta VALUES ('a', '1')")
    conn.close()
    return path


def _write(path: Path) -> None:
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("INSERT INTO meta VALUES ('b', '2')")
    conn.close()


def test_a_kept_result_comes_back_whole(db: Path) -> None:
    state = database_state(db)
    arrays = {"scores": np.linspace(0, 1, 7), "iterations": np.array(12)}
    assert store_result(db, "pagerank", {"alpha": 0.85}, state, arrays)
    got = load_result(db, "pagerank", {"alpha": 0.85}, database_state(db))
    assert got is not None
    assert got["scores"].tobytes() == arrays["scores"].tobytes()
    assert int(got["iterations"]) == 12
    assert list(cache_dir(db).iterdir()) == [next(cache_dir(db).glob("pagerank-*.npz"))]


def test_a_kept_file_is_readable_as_the_database_is(db: Path) -> None:
    old = os.umask(0o022)
    try:
        assert store_result(db, "r", {}, database_state(db), {"x": np.ones(3)})
    finally:
        os.umask(old)
    (kept,) = cache_dir(db).iterdir()
    assert kept.stat().st_mode & 0o777 == 0o644


def test_other_parameters_or_names_find_nothing(db: Path) -> None:
    state = database_state(db)
    assert store_result(db, "pagerank", {"alpha": 0.85}, state, {"x": np.ones(3)})
    assert load_result(db, "pagerank", {"alpha": 0.9}, state) is None
    assert load_result(db, "pagerank", {"alpha": 0.85, "tol": 1e-9}, state) is None
    assert load_result(db, "hits", {"alpha": 0.85}, state) is None


def test_a_write_since_makes_the_result_stale(db: Path) -> None:
    state = database_state(db)
    assert store_result(db, "r", {}, state, {"x": np.ones(3)})
    _write(db)
    now = database_state(db)
    assert now is not None and now != state
    assert load_result(db, "r", {}, now) is None


def test_a_file_replaced_by_another_is_another_state(db: Path, tmp_path: Path) -> None:
    """An import writes a new file and renames it over the old one (a new inode)."""
    state = database_state(db)
    assert store_result(db, "r", {}, state, {"x": np.ones(3)})
    other = tmp_path / "other.db"
    other.write_bytes(db.read_bytes())
    stat = db.stat()
    os.replace(other, db)
    os.utime(db, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same size and time
    assert database_state(db) != state
    assert load_result(db, "r", {}, database_state(db)) is None


def test_nothing_is_kept_when_the_file_changed_during_the_computation(db: Path) -> None:
    state = database_state(db)
    _write(db)
    assert not store_result(db, "r", {}, state, {"x": np.ones(3)})
    assert not cache_dir(db).exists()


def test_no_state_while_a_writer_holds_the_database(db: Path) -> None:
    """A crawl, resumed crawl or revisit holds ``<db>-writer`` as long as it runs."""
    lock = db.with_name(db.name + "-writer")
    lock.write_text("123 webcrawl crawl")
    assert database_state(db) is None
    assert not store_result(db, "r", {}, None, {"x": np.ones(3)})
    assert load_result(db, "r", {}, None) is None
    lock.unlink()
    assert database_state(db) is not None


def test_no_state_for_a_file_written_within_the_quiet_period(
        db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(results_cache, "QUIET_SECONDS", 1.0)
    newest = max(db.stat().st_mtime_ns, db.stat().st_ctime_ns) / 1e9
    assert database_state(db, now=newest + 0.5) is None
    assert database_state(db, now=newest + 1.5) is not None


def test_settle_waits_out_the_quiet_period_of_a_file_just_written(
        db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``import edges`` then ``analyze pagerank`` at once: the large database's reader
    waits (at most the quiet period) and gets the state it would get a second later."""
    monkeypatch.setattr(results_cache, "QUIET_SECONDS", 0.3)
    slept: list[float] = []
    real_sleep = results_cache.time.sleep

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        real_sleep(seconds)

    monkeypatch.setattr(results_cache.time, "sleep", sleep)
    _write(db)
    state = database_state(db, settle=True)
    assert state is not None and state == database_state(db)
    assert len(slept) <= 1 and all(0 < s <= 0.3 for s in slept)


def test_an_empty_wal_is_no_part_of_the_state(db: Path) -> None:
    """A reader may create an empty ``-wal``; it holds no commit."""
    wal = db.with_name(db.name + "-wal")
    wal.unlink(missing_ok=True)
    state = database_state(db)
    wal.write_bytes(b"")
    assert database_state(db) == state
    wal.write_bytes(b"x" * 32)
    assert database_state(db) != state


def test_a_damaged_or_foreign_file_is_ignored(db: Path) -> None:
    state = database_state(db)
    assert store_result(db, "r", {}, state, {"x": np.ones(3)})
    (kept,) = cache_dir(db).iterdir()
    kept.write_bytes(b"not a zip file")
    assert load_result(db, "r", {}, state) is None


def test_a_read_only_folder_keeps_nothing(db: Path) -> None:
    cache_dir(db).write_text("a file where the folder would go")
    assert not store_result(db, "r", {}, database_state(db), {"x": np.ones(3)})


def test_a_missing_database_has_no_state(tmp_path: Path) -> None:
    assert database_state(tmp_path / "none.db") is None
