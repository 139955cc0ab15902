"""A stop during ``revisit`` (Ctrl-C, SIGTERM, :meth:`RevisitCrawler.stop`) records the
answers of the requests under way, as a crawl's stop does; a second stop drops them.

The server holds one revisit's answer until the test has called ``stop()``, then sends
it: no timing decides the outcome.  Before, a stop cancelled the request at once and an
answer the server had sent was lost (and fetched again by the next run).
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest
from aiohttp import web
from miniweb import MiniWeb, html
from webcrawl.crawler.engine import Crawler
from webcrawl.crawler.revisit import RevisitCrawler, RevisitSettings
from webcrawl.storage.lock import lock_path

pytestmark = pytest.mark.timeout(600)  # a hang guard, never a measurement (slow under load)

PAGES = ["/", "/a", "/b"]


class HeldWeb(MiniWeb):
    """MiniWeb whose first page request after :meth:`hold` waits for :meth:`release`."""

    def __init__(self) -> None:
        super().__init__()
        self.arrived = asyncio.Event()
        self.released = asyncio.Event()
        self.holding = False
        self.held: str | None = None

    def hold(self) -> None:
        self.holding = True

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        if self.holding and self.held is None and request.path != "/robots.txt":
            self.held = request.path
            self.arrived.set()
            await self.released.wait()
        return await super()._handle(request)


def revisit_rows(db: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT u.url, f.outcome FROM fetches f JOIN urls u"
                            " ON u.id = f.url_id WHERE f.kind = 'revisit'").fetchall()


async def _stopped_while_held(tmp_path: Path, stops: int) -> tuple[HeldWeb, Path, str]:
    site = HeldWeb()
    for path in PAGES:
        site.add("a.test", path, html(*PAGES))
    await site.start()
    try:
        db = tmp_path / "c.db"
        settings = site.settings()
        await Crawler(db, [site.url("a.test", "/")], settings).run()
        site.hold()
        reviser = RevisitCrawler(db, RevisitSettings(policy="uniform", budget=100.0),
                                 settings)
        run = asyncio.create_task(reviser.run())
        await asyncio.wait_for(site.arrived.wait(), 30)
        for _ in range(stops):
            reviser.stop()
        if stops == 1:
            await asyncio.sleep(0)  # the run is draining: the answer goes out now
            site.released.set()
        stats = await asyncio.wait_for(run, 30)
        assert stats.stopped == "stopped"
        site.released.set()
    finally:
        await site.stop()
    assert site.held is not None
    assert not lock_path(db).exists()  # a stopped revisit's clean exit took its lock file
    return site, db, site.url("a.test", site.held)


async def test_a_stop_records_the_answer_under_way(tmp_path: Path) -> None:
    site, db, held = await _stopped_while_held(tmp_path, stops=1)
    answered = [h for h in site.page_hits() if h.status == 200]
    assert len(answered) == len(PAGES) + 1  # the crawl's, and the held revisit's
    assert revisit_rows(db) == [(held, "fetched")]


async def test_a_second_stop_drops_it_at_once(tmp_path: Path) -> None:
    _, db, _ = await _stopped_while_held(tmp_path, stops=2)
    assert revisit_rows(db) == []
