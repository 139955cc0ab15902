"""CrawlStore.before_commit and set_sketch: records computed for a batch's pages at
commit time land in the same transaction as the pages' rows."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from webcrawl.storage.errors import StoreError
from webcrawl.storage.records import FetchRecord, Outcome
from webcrawl.storage.store import CrawlStore, HostRow, UrlRow


def _fetch(url_id: int) -> FetchRecord:
    return FetchRecord(url_id=url_id, seq=url_id, started_at=1.0, ended_at=2.0,
                       outcome=Outcome.FETCHED, status=200)


def _sketches(path: Path) -> dict[int, bytes | None]:
    with sqlite3.connect(path) as conn:
        return dict(conn.execute("SELECT url_id, sketch FROM fetches"))


async def test_the_callback_fills_in_the_batch_it_precedes(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    store = await CrawlStore.open(path, batch_size=10_000, flush_interval=60)
    waiting: list[tuple[int, int]] = []   # (url id, fetch id) of pages since the commit
    calls: list[list[int]] = []

    def before() -> None:
        calls.append([u for u, _ in waiting])
        for url_id, fetch_id in waiting:
            store.set_sketch(fetch_id, bytes([url_id]) * 4)
            store.set_near_duplicate(url_id, 1 if url_id != 1 else None,
                                     0.9 if url_id != 1 else None)
        waiting.clear()

    store.before_commit(before)
    store.add_host(HostRow(0, "a.test"))
    for commit in ([1, 2, 3], [4, 5]):
        for url_id in commit:
            store.add_url(UrlRow(url_id, f"http://a.test/{url_id}", 0, 0, -1))
            waiting.append((url_id, store.add_fetch(_fetch(url_id))))
        await store.flush()
        # committed together: every page's fetch row with its sketch
        assert _sketches(path) == {u: bytes([u]) * 4 for u in range(1, commit[-1] + 1)}
    await store.flush()  # nothing pending: no commit, no call
    assert calls == [[1, 2, 3], [4, 5]]
    await store.aclose()
    with sqlite3.connect(path) as conn:
        assert dict(conn.execute("SELECT id, near_of FROM urls")) == \
            {1: None, 2: 1, 3: 1, 4: 1, 5: 1}


async def test_a_sketch_for_a_committed_fetch_is_refused(tmp_path: Path) -> None:
    store = await CrawlStore.open(tmp_path / "c.db")
    store.add_host(HostRow(0, "a.test"))
    store.add_url(UrlRow(1, "http://a.test/", 0, 0, -1))
    fetch_id = store.add_fetch(_fetch(1))
    await store.flush()
    with pytest.raises(StoreError, match="not in the batch"):
        store.set_sketch(fetch_id, b"x")
    second = store.add_fetch(_fetch(1))
    assert second == fetch_id + 1
    with pytest.raises(StoreError, match="not in the batch"):
        store.set_sketch(second + 1, b"x")  # never added
    await store.aclose()


async def test_a_failing_callback_fails_the_commit_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    store = await CrawlStore.open(path, batch_size=10_000, flush_interval=60)
    store.add_host(HostRow(0, "a.test"))
    await store.flush()
    store.before_commit(lambda: 1 / 0)  # type: ignore[func-returns-value]
    store.add_url(UrlRow(1, "http://a.test/", 0, 0, -1))
    store.add_fetch(_fetch(1))
    with pytest.raises(StoreError, match="ZeroDivisionError"):
        await store.flush()
    with pytest.raises(StoreError):
        await store.aclose()
    assert _sketches(path) == {}  # the page was not committed without its records
