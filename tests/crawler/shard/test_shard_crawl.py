"""``--workers 2``: the fixture web's truth, 0 audit violations, one connection per host."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from miniweb import MiniWeb, html, read_db
from test_fixture_crawl import expected_edges, page_edges
from webcrawl.crawler.engine import Crawler
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.crawler.shard import ShardDownloader
from webcrawl.fixtures import FixtureConfig, FixtureServer, FixtureWeb
from webcrawl.storage.lock import lock_path

pytestmark = pytest.mark.timeout(120)


def settings(**kw: object) -> CrawlSettings:
    return CrawlSettings.polite_off(resolve=("*.test=127.0.0.1",), scope_hosts=("*.test",),
                                    concurrency=32, workers=2, **kw)


@pytest.mark.parametrize("strategy", ["bfs", "pagerank"])
async def test_two_workers_give_the_truth(tmp_path: Path, strategy: str) -> None:
    web = FixtureWeb.build(FixtureConfig(pages=1500, hosts=12, seed=3))
    db = tmp_path / "c.db"
    async with FixtureServer(web) as server:
        # fetch_keepalive: an idle connection closes after 4 s, and on a loaded machine
        # a host can wait that long for its next URL; the check below is of reuse.
        crawler = Crawler(db, [server.seed_url],
                          settings(frontier_strategy=strategy, fetch_keepalive=3600.0))
        assert isinstance(crawler.downloader, ShardDownloader)
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
    assert not lock_path(db).exists()  # the coordinator's clean exit took its lock file
    # Both workers had hosts, and every order went to its host's worker.
    assert isinstance(crawler.downloader, ShardDownloader)
    assert crawler.downloader.pool.restarts == 0
    owners = crawler.downloader.assignment
    assert set(owners.values()) == {0, 1}
    assert {f"{p.host}:{server.port}" for p in web.truth_pages(server.port)} <= set(owners)
    data = read_db(db)
    assert data["edges"]


#: Real documentation host names (a hash spreads a few hosts unevenly: CRC-32 of
#: ``host:80`` modulo 2 puts 9 of these 13 on one worker).
REAL_HOSTS = ("docs.python.org", "www.postgresql.org", "docs.djangoproject.com",
              "www.sphinx-doc.org", "flask.palletsprojects.com", "docs.rs",
              "developer.mozilla.org", "www.gnu.org", "nginx.org", "docs.scipy.org",
              "numpy.org", "pandas.pydata.org", "www.sqlite.org")
PAGES_PER_HOST = 8


def _real_web() -> MiniWeb:
    web = MiniWeb()
    for host in REAL_HOSTS:
        others = [f"http://{h}:{{port}}/" for h in REAL_HOSTS if h != host]
        web.add(host, "/", html(*[f"/p{i}" for i in range(PAGES_PER_HOST)], *others))
        for i in range(PAGES_PER_HOST):
            web.add(host, f"/p{i}", html("/"))
    return web


def _fix_ports(web: MiniWeb) -> None:
    for key, page in list(web.pages.items()):
        if isinstance(page.body, str):
            web.pages[key].body = page.body.replace("{port}", str(web.port))


def _real_settings(**kw: object) -> CrawlSettings:
    return CrawlSettings.polite_off(resolve=tuple(f"{h}=127.0.0.1" for h in REAL_HOSTS),
                                    scope_hosts=REAL_HOSTS, concurrency=8, workers=2, **kw)


def _fetches_per_worker(db: Path, owners: dict[str, int]) -> list[int]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT h.name, count(*) FROM fetches f JOIN urls u ON "
                            "u.id = f.url_id JOIN hosts h ON h.id = u.host_id "
                            "GROUP BY h.name").fetchall()
    per = [0, 0]
    for host, n in rows:
        per[owners[host]] += n
    return per


async def test_real_host_names_spread_over_both_workers(tmp_path: Path) -> None:
    web = _real_web()
    await web.start()
    try:
        _fix_ports(web)
        db = tmp_path / "c.db"
        crawler = Crawler(db, [web.url(REAL_HOSTS[0])], _real_settings())
        stats = await crawler.run()
    finally:
        await web.stop()
    assert stats.stopped == "done"
    assert isinstance(crawler.downloader, ShardDownloader)
    owners = crawler.downloader.assignment
    assert set(owners) == {f"{h}:{web.port}" for h in REAL_HOSTS}
    per = _fetches_per_worker(db, owners)
    assert sum(per) == len(REAL_HOSTS) * (PAGES_PER_HOST + 1)
    assert min(per) >= sum(per) / 3, per


async def test_a_resume_keeps_the_host_assignment(tmp_path: Path) -> None:
    web = _real_web()
    await web.start()
    try:
        _fix_ports(web)
        db = tmp_path / "c.db"
        first = Crawler(db, [web.url(REAL_HOSTS[0])], _real_settings(scope_max_pages=40))
        assert (await first.run()).stopped == "max_fetches"
        assert isinstance(first.downloader, ShardDownloader)
        assigned = first.downloader.assignment
        again = Crawler(db, resume=True, overrides={"scope_max_pages": None})
        assert isinstance(again.downloader, ShardDownloader)
        stats = await again.run()
    finally:
        await web.stop()
    assert stats.stopped == "done"
    after = again.downloader.assignment
    assert {h: after[h] for h in assigned} == assigned
    assert set(after) == {f"{h}:{web.port}" for h in REAL_HOSTS}
    per = _fetches_per_worker(db, after)
    assert sum(per) == len(REAL_HOSTS) * (PAGES_PER_HOST + 1)
