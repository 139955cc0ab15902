"""A crawl whose database another program locks (a ``sqlite3`` shell in ``BEGIN
IMMEDIATE``): the crawl waits, says so, stops with one line naming a lock held by
another program, and its resume fetches no URL a second time.

Deterministic: the server takes the lock while it serves a fixed page, and holds it
until the crawl has stopped; what the crawl had fetched by then, however the machine
schedules it, is either committed or kept for the resume (the pending-records file).
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections import Counter
from pathlib import Path

import pytest
from aiohttp import web
from clirun import run_cli
from miniweb import MiniWeb, html
from webcrawl.crawler.engine import Crawler
from webcrawl.storage.errors import StoreBusyError
from webcrawl.storage.store import CrawlStore

PAGES = 40
TRIGGER = "/p12"


class LockingWeb(MiniWeb):
    """Takes SQLite's write lock on ``db`` (as another program would) when it serves
    :data:`TRIGGER`."""

    def __init__(self, db: Path) -> None:
        super().__init__()
        self.db = db
        self.taken = False
        self.other: sqlite3.Connection | None = None

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        if request.path == TRIGGER and not self.taken:
            self.taken = True
            # In a thread: the crawl's store may be inside a commit, which this event loop
            # drives (a blocking wait here would hold that commit's lock forever).
            self.other = await asyncio.to_thread(self._lock)
        return await super()._handle(request)

    def _lock(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.db, isolation_level=None, timeout=120,
                               check_same_thread=False)
        conn.execute("BEGIN IMMEDIATE")
        return conn

    def release(self) -> None:
        if self.other is not None:
            self.other.execute("ROLLBACK")
            self.other.close()
            self.other = None


async def test_a_locked_database_stops_the_crawl_and_the_resume_fetches_nothing_twice(
        tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    site = LockingWeb(db)
    for i in range(PAGES):  # a chain with a side link each: every page is reached once
        site.add("a.test", f"/p{i}", html(f"/p{i + 1}", f"/p{(i * 7) % PAGES}"))
    site.add("a.test", "/", html("/p0"))
    await site.start()
    try:
        settings = site.settings(store_busy_wait=0.3, store_flush_interval=0.05,
                                 concurrency=4)
        with pytest.raises(StoreBusyError, match="another program") as info:
            await Crawler(db, [site.url("a.test", "/")], settings).run()
        assert "crawl" not in str(info.value).replace(str(db), "").split(";")[0]
        assert db.with_name("c.db-pending").exists() and "c.db-pending" in str(info.value)
        assert not db.with_name("c.db-writer").exists()
        site.release()
        stats = await Crawler(db, [], settings, resume=True).run()
        assert stats.stopped == "done"
    finally:
        site.release()
        await site.stop()
    paths = Counter(h.path for h in site.page_hits())
    assert set(paths) == {"/", *(f"/p{i}" for i in range(PAGES + 1))}  # p40: a 404
    assert [p for p, n in paths.items() if n > 1] == []  # nothing fetched twice
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        per_url = conn.execute("SELECT url_id, count(*) FROM fetches GROUP BY url_id"
                               " HAVING count(*) > 1").fetchall()
        assert per_url == []
        assert conn.execute("SELECT count(*) FROM urls WHERE outcome IS NULL").fetchone() == (0,)
    assert not db.with_name("c.db-pending").exists()


def test_the_command_line_waits_with_a_warning_then_says_another_program(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "c.db"
    asyncio.run(_empty_crawl(db))
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        code, out, err = run_cli(["crawl", "--resume", "--db", str(db), "--db-wait", "0.2"],
                                 capsys)
    finally:
        other.execute("ROLLBACK")
        other.close()
    lines = err.splitlines()
    assert code == 1 and out == "" and "Traceback" not in err
    assert len(lines) == 2, err
    assert lines[0].startswith("webcrawl: warning: ") and "waiting up to 0.2 s" in lines[0]
    assert lines[1].startswith("webcrawl: error: ") and "another program" in lines[1]
    assert "another crawl" not in err


async def _empty_crawl(db: Path) -> None:
    store = await CrawlStore.open(db)
    store.set_meta("seeds", '["http://a.test/"]')
    await store.aclose()
