"""Another program's write lock on the crawl database (a ``sqlite3`` shell or a notebook
in ``BEGIN IMMEDIATE``): waited for with a warning, for at most ``busy_wait``, then a
:class:`StoreBusyError` that names a lock held by another program, and nothing the
writer was given is lost: it is kept in the pending-records file and written by the
next writer.

Deterministic: the lock is held for the whole of each wait, or released by the warning
itself (a log handler), never after a sleep.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from webcrawl.storage._pending import pending_path
from webcrawl.storage.errors import StoreBusyError, StoreCorruptError, StoreError
from webcrawl.storage.records import FetchRecord, HostRow, Outcome, UrlRow
from webcrawl.storage.store import CrawlStore

WAITING = "is locked by another program"


class Holder:
    """Another program's connection holding SQLite's write lock on ``path``."""

    def __init__(self, path: Path) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute("BEGIN IMMEDIATE")

    def release(self) -> None:
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")

    def close(self) -> None:
        self.release()
        self.conn.close()


@pytest.fixture
def holder(tmp_path: Path) -> Iterator[tuple[Path, list[Holder]]]:
    held: list[Holder] = []
    yield tmp_path / "c.db", held
    for h in held:
        h.close()


def _page(store: CrawlStore, i: int) -> None:
    """The records of one fetched page (URL i, linking to URL 0)."""
    store.add_url(UrlRow(i, f"http://a.test/{i}", 0, 1, 0))
    store.add_fetch(FetchRecord(i, i, 1000.0 + i, 1000.5 + i, Outcome.FETCHED, 200))
    store.add_links(i, [0])
    store.set_outcome(i, Outcome.FETCHED, i)


async def _started(path: Path) -> None:
    store = await CrawlStore.open(path)
    store.add_host(HostRow(0, "a.test"))
    store.add_url(UrlRow(0, "http://a.test/0", 0, 0, -1))
    await store.aclose()


def _rows(path: Path) -> tuple[int, int, int]:
    with sqlite3.connect(path) as conn:
        return tuple(conn.execute(  # type: ignore[return-value]
            "SELECT (SELECT count(*) FROM urls), (SELECT count(*) FROM fetches),"
            " (SELECT count(*) FROM links)").fetchone())


async def test_open_waits_then_names_a_lock_held_by_another_program(
        holder: tuple[Path, list[Holder]], caplog: pytest.LogCaptureFixture) -> None:
    path, held = holder
    await _started(path)
    held.append(Holder(path))
    with caplog.at_level(logging.WARNING, "webcrawl"), \
            pytest.raises(StoreBusyError) as info:
        await CrawlStore.open(path, resume=True, busy_wait=0.2)
    message = str(info.value)
    assert "another program" in message and "0.2 s" in message and str(path) in message
    assert "crawl" not in message.replace(str(path), "")  # not "another crawl writing it?"
    assert [r.getMessage() for r in caplog.records if WAITING in r.getMessage()], caplog.text
    assert not path.with_name("c.db-writer").exists()


async def test_a_lock_that_ends_during_the_wait_only_delays_the_commit(
        holder: tuple[Path, list[Holder]]) -> None:
    path, held = holder
    await _started(path)
    store = await CrawlStore.open(path, resume=True, busy_wait=600)
    _page(store, 1)
    other = Holder(path)
    held.append(other)
    seen: list[bool] = []

    class ReleaseOnWarning(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if WAITING in record.getMessage():
                seen.append(store.backlogged)  # no new fetch while it waits
                other.release()

    handler = ReleaseOnWarning()
    logging.getLogger("webcrawl").addHandler(handler)
    try:
        await store.flush()
    finally:
        logging.getLogger("webcrawl").removeHandler(handler)
    assert seen == [True]
    assert not store.backlogged
    await store.aclose()
    assert _rows(path) == (2, 1, 1)


async def test_a_writer_the_lock_stopped_keeps_every_record_for_the_next(
        holder: tuple[Path, list[Holder]]) -> None:
    path, held = holder
    await _started(path)
    store = await CrawlStore.open(path, resume=True, busy_wait=0.1)
    _page(store, 1)
    await store.flush()  # committed before the other program came
    held.append(Holder(path))
    _page(store, 2)
    with pytest.raises(StoreBusyError, match="another program"):
        await store.flush()
    _page(store, 3)  # a fetch that was under way: its records are still taken
    with pytest.raises(StoreBusyError, match="another program") as info:
        await store.aclose()
    kept = pending_path(path)
    assert kept.name in str(info.value) and kept.exists()
    assert json.loads(kept.read_text())["records"] == 8
    assert not path.with_name("c.db-writer").exists()
    assert _rows(path) == (2, 1, 1)
    held[0].release()
    again = await CrawlStore.open(path, resume=True)
    state = await again.load_state()
    await again.aclose()
    assert not kept.exists()
    assert [u.id for u in state.urls] == [0, 1, 2, 3]
    assert [u.outcome for u in state.urls[1:]] == [Outcome.FETCHED] * 3
    assert _rows(path) == (4, 3, 3)
    with sqlite3.connect(path) as conn:  # each fetch once, with the ids it was given
        assert conn.execute("SELECT id, url_id FROM fetches ORDER BY id").fetchall() == [
            (1, 1), (2, 2), (3, 3)]
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


async def test_a_lock_that_ended_before_the_close_loses_nothing_and_keeps_nothing(
        holder: tuple[Path, list[Holder]]) -> None:
    path, held = holder
    await _started(path)
    store = await CrawlStore.open(path, resume=True, busy_wait=0.1)
    held.append(Holder(path))
    _page(store, 1)
    with pytest.raises(StoreBusyError):
        await store.flush()
    held[0].release()
    await store.aclose()  # the last attempt at the close succeeds: no error
    assert not pending_path(path).exists()
    assert _rows(path) == (2, 1, 1)


async def _stopped_with_pending(path: Path, held: list[Holder]) -> str:
    await _started(path)
    store = await CrawlStore.open(path, resume=True, busy_wait=0.0)
    held.append(Holder(path))
    _page(store, 1)
    with pytest.raises(StoreBusyError):
        await store.aclose()
    held[-1].release()
    return pending_path(path).read_text()


async def test_pending_records_applied_by_a_killed_writer_are_not_applied_again(
        holder: tuple[Path, list[Holder]]) -> None:
    path, held = holder
    saved = await _stopped_with_pending(path, held)
    await (await CrawlStore.open(path, resume=True)).aclose()
    pending_path(path).write_text(saved)  # as if killed between its commit and the unlink
    await (await CrawlStore.open(path, resume=True)).aclose()
    assert not pending_path(path).exists()
    assert _rows(path) == (2, 1, 1)


@pytest.mark.parametrize("change", ["another database", "written since", "damaged"])
async def test_pending_records_that_do_not_continue_the_database_are_refused(
        holder: tuple[Path, list[Holder]], change: str) -> None:
    path, held = holder
    saved = await _stopped_with_pending(path, held)
    pending_path(path).unlink()
    if change == "another database":
        path.unlink()
        await _started(path)
        with sqlite3.connect(path) as conn:
            conn.execute("UPDATE meta SET value = 'x' WHERE key = 'created_at'")
    elif change == "written since":
        store = await CrawlStore.open(path, resume=True)
        _page(store, 5)
        await store.aclose()
    pending_path(path).write_text(saved[: len(saved) // 2] if change == "damaged" else saved)
    before = _rows(path)
    error = StoreCorruptError if change == "damaged" else StoreError
    with pytest.raises(error, match="move it away"):
        await CrawlStore.open(path, resume=True)
    assert _rows(path) == before and pending_path(path).exists()


async def test_pending_records_without_their_database_are_refused(
        holder: tuple[Path, list[Holder]]) -> None:
    path, held = holder
    await _stopped_with_pending(path, held)
    path.unlink()
    with pytest.raises(StoreError, match="move it away"):
        await CrawlStore.open(path)
    assert not path.exists()
