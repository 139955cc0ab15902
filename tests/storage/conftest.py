"""A small hand-made crawl database shared by the storage tests."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from webcrawl.storage.records import FetchRecord, Outcome
from webcrawl.storage.store import CrawlStore, HostRow, UrlRow

# URL id -> (url, host id, depth, discovered_seq); ids 0..4
SMALL_URLS = {
    0: ("http://a.test/", 0, 0, -1),
    1: ("http://a.test/p?q=1&r=%22x%22", 0, 1, 0),
    2: ("http://b.test:8080/tab%09and\"quote", 1, 1, 0),
    3: ("http://b.test:8080/frontier", 1, 2, 1),
    4: ("http://a.test/missing", 0, 1, 0),
}
# fetched pages: id -> (seq, out-links, nofollow)
SMALL_FETCHED = {0: (0, [1, 2, 4, 1], [2]), 1: (1, [3, 0], [])}


@pytest.fixture
async def small_db(tmp_path: Path) -> Path:
    path = tmp_path / "small.db"
    store = await CrawlStore.open(path)
    store.add_host(HostRow(0, "a.test", robots_status=404))
    store.add_host(HostRow(1, "b.test:8080"))
    store.set_meta("seeds", '["http://a.test/"]')
    for uid, (url, host, depth, dseq) in SMALL_URLS.items():
        store.add_url(UrlRow(uid, url, host, depth, dseq))
    for uid, (seq, dst, nofollow) in SMALL_FETCHED.items():
        store.add_fetch(FetchRecord(uid, seq, 1700000000.0 + seq, 1700000000.5 + seq,
                                    Outcome.FETCHED, 200, "text/html", 100 + seq, f"d{seq}"))
        store.add_links(uid, dst, nofollow)
        store.set_outcome(uid, Outcome.FETCHED, seq)
    store.add_fetch(FetchRecord(4, 2, 1700000002.0, 1700000002.5, Outcome.HTTP_ERROR, 404,
                                "text/html", 10))
    store.set_outcome(4, Outcome.HTTP_ERROR, 2)
    await store.aclose()
    return path


def read_rows(path: Path, sql: str) -> list[tuple[object, ...]]:
    """The rows of ``sql`` on the database at ``path``, opened read-only."""
    conn = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()
