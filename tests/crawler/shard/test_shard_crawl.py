"""``--workers 2``: the fixture web's truth, 0 audit violations, one connection per host."""

from __future__ import annotations

from pathlib import Path

import pytest
from miniweb import read_db
from test_fixture_crawl import expected_edges, page_edges
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.crawler.shard import ShardedCrawler, shard_of
from webcrawl.fixtures import FixtureConfig, FixtureServer, FixtureWeb

pytestmark = pytest.mark.timeout(120)


def settings(**kw: object) -> CrawlSettings:
    return CrawlSettings.polite_off(resolve=("*.test=127.0.0.1",), scope_hosts=("*.test",),
                                    concurrency=32, workers=2, **kw)


@pytest.mark.parametrize("strategy", ["bfs", "pagerank"])
async def test_two_workers_give_the_truth(tmp_path: Path, strategy: str) -> None:
    web = FixtureWeb.build(FixtureConfig(pages=1500, hosts=12, seed=3))
    db = tmp_path / "c.db"
    async with FixtureServer(web) as server:
        crawler = ShardedCrawler(db, [server.seed_url], settings(frontier_strategy=strategy))
        stats = await crawler.run()
        report = server.audit(max_concurrency=1)
    page_urls = {p.url for p in web.truth_pages(server.port)}
    want = expected_edges(web, server.port)
    assert len(want) > 2000
    assert page_edges(db, page_urls) == want
    assert report["violation_count"] == 0, report["violations"]
    hosts = report["hosts"].values() if isinstance(report["hosts"], dict) else report["hosts"]
    assert {h["connections"] for h in hosts} == {1}
    assert stats.stopped == "done"
    # Both workers had hosts, and every order went to its host's worker.
    assert crawler.pool.restarts == 0
    owners = {shard_of(f"{p.host}:{server.port}", 2) for p in web.truth_pages(server.port)}
    assert owners == {0, 1}
    data = read_db(db)
    assert data["edges"]
