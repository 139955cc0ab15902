"""revisit --add-new: Cho and Garcia-Molina's page window against the fixture web."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

from webcrawl.crawler.engine import Crawler
from webcrawl.crawler.revisit.loop import RevisitCrawler, RevisitSettings
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.fixtures import FixtureConfig, FixtureServer, FixtureWeb

DAY_SECONDS = 0.2


def _settings() -> CrawlSettings:
    return CrawlSettings.polite_off(resolve=("*.test=127.0.0.1",), scope_hosts=("*.test",),
                                    concurrency=8, polite_min_delay=0.004,
                                    polite_max_delay=0.004, scope_max_pages=25)


def _fetched(db: Path) -> set[str]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return {u for (u,) in conn.execute("SELECT url FROM urls WHERE outcome = 'fetched'")}


def _revisited(db: Path) -> set[str]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return {u for (u,) in conn.execute(
            "SELECT u.url FROM fetches f JOIN urls u ON u.id = f.url_id "
            "WHERE f.kind = 'revisit' AND f.outcome IN ('fetched', 'not_modified')")}


def test_pages_found_while_revisiting_join_the_collection(tmp_path: Path) -> None:
    web = FixtureWeb.build(FixtureConfig(pages=150, hosts=3, seed=2,
                                         robots_disallow_fraction=0.0))
    db = tmp_path / "c.db"

    async def main() -> tuple[Any, Any, set[str], set[str], set[tuple[str, str]], set[str]]:
        async with FixtureServer(web, day_seconds=DAY_SECONDS) as server:
            await Crawler(db, [server.seed_url], _settings()).run()
            crawled = _fetched(db)
            plain = RevisitSettings(policy="uniform", budget=60.0, duration=1.0,
                                    day_seconds=DAY_SECONDS)
            without = await RevisitCrawler(db, plain, _settings()).run()
            assert _fetched(db) == crawled          # the window is off by default
            grown = RevisitSettings(policy="uniform", budget=60.0, duration=3.0,
                                    day_seconds=DAY_SECONDS, add_new=True)
            first = await RevisitCrawler(db, grown, _settings()).run()
            after = _fetched(db)
            again = await RevisitCrawler(db, RevisitSettings(
                policy="uniform", budget=60.0, duration=0.5, day_seconds=DAY_SECONDS),
                _settings()).run()
            edges = {(e.src, e.dst) for e in web.truth_edges(server.port)}
            pages = {p.url for p in web.truth_pages(server.port)}
            return (without, (first, again), crawled, after, edges, pages)

    without, (first, again), crawled, after, edges, pages = asyncio.run(main())
    assert without.added == 0 and len(crawled) == 25
    joined = after - crawled
    assert first.added >= len(joined) > 10
    assert joined <= pages                      # real pages of the web, fetched as HTML
    # Each joined page is linked from a page of the collection (crawled or joined).
    for url in joined:
        assert any((src, url) in edges for src in after), url
    # Revisits fetched them, and the next run starts with them in its collection.
    assert joined <= _revisited(db)
    assert again.pages == len(after)
