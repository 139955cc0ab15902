"""``compare --virtual --timed`` on a crawl recorded live on loopback.

A loopback crawl records fetches of milliseconds: replayed with the recorded times, a
large site's waits set the schedule whatever the order.  With a size-and-bandwidth
model the same crawl's replay depends on the order: breadth-first spends its two
connections on many small sites while the large site waits, larger-sites-first keeps
the large site busy from the start.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from pathlib import Path

import pytest
from webcrawl.crawler.cli import main
from webcrawl.crawler.engine import Crawler
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.fixtures import FixtureServer, FixtureWeb

SMALL_HOSTS, SMALL_PAGES, LARGE_PAGES = 40, 3, 60
BANDWIDTH, LATENCY, WAIT = 2_000.0, 0.1, 1.0


def _web() -> FixtureWeb:
    """The large host's root (page 0) links to every small root, then to its own pages
    (ids after the small sites'); a small root links to its own pages."""
    hosts, edges = [0], []
    node = 1
    for h in range(1, SMALL_HOSTS + 1):
        edges.append((0, node))
        edges += [(node, node + k) for k in range(1, SMALL_PAGES)]
        hosts += [h] * SMALL_PAGES
        node += SMALL_PAGES
    edges += [(0, v) for v in range(node, node + LARGE_PAGES - 1)]
    hosts += [0] * (LARGE_PAGES - 1)
    return FixtureWeb.from_edges(edges, host_of=hosts)


@pytest.fixture(scope="module")
def crawl_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import asyncio

    db = tmp_path_factory.mktemp("live") / "c.db"

    async def run() -> None:
        settings = CrawlSettings.polite_off(resolve=("*.test=127.0.0.1",),
                                            scope_hosts=("*.test",), concurrency=8)
        async with FixtureServer(_web()) as server:
            stats = await Crawler(db, [server.seed_url], settings).run()
        assert stats.stopped == "done"

    asyncio.run(run())
    return db


def _timed(db: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> dict:
    code = main(["compare", "--db", str(db), "--virtual", "--timed", "--json",
                 "--checkpoints", "0", "--strategies", "bfs,larger-sites-first",
                 "--connections", "2", "--min-delay", str(WAIT), "--delay-factor", "0",
                 "--max-delay", "30",
                 *extra])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


def _sizes(db: Path) -> list[int]:
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        rows = conn.execute("SELECT size FROM fetches WHERE outcome = 'fetched'").fetchall()
    return [int(r[0]) for r in rows]


def test_a_recorded_loopback_crawl_timed_with_a_bandwidth_model(
        crawl_db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sizes = _sizes(crawl_db)
    assert len(sizes) == 1 + SMALL_HOSTS * SMALL_PAGES + LARGE_PAGES - 1
    fastest = LATENCY + min(sizes) / BANDWIDTH  # no fetch is quicker under the model
    recorded = _timed(crawl_db, capsys)
    timed = _timed(crawl_db, capsys, "--transfer", "bandwidth", "--bandwidth",
                   str(int(BANDWIDTH)), "--latency", str(LATENCY))
    names = ("bfs", "larger-sites-first")
    seconds = {k: timed["clock"][k]["seconds"] for k in names}
    # the large site's chain: 60 fetches, 59 waits between them; no schedule beats it
    chain = (LARGE_PAGES - 1) * WAIT + LARGE_PAGES * fastest
    assert min(seconds.values()) >= chain - 1e-6
    # breadth-first takes the 40 small roots (discovered before the large site's
    # pages) first: the large site's second fetch waits until 39 roots have been
    # taken on two connections, then its chain of 59 fetches and 58 waits follows
    assert seconds["bfs"] >= 20 * fastest + 59 * fastest + 58 * WAIT - 1e-6
    # larger-sites-first takes the large site whenever it may: it ends sooner (by
    # 11.0 s on this web; about half the small roots' fetches)
    assert seconds["bfs"] > seconds["larger-sites-first"] + 5.0
    # recorded loopback times (milliseconds): the waits alone, both orderings alike
    rec = [recorded["clock"][k]["seconds"] for k in names]
    assert max(rec) < chain and abs(rec[0] - rec[1]) < 1.0
    for k in names:
        curve = timed["clock"][k]["capture"]
        assert curve == sorted(curve) and curve[-1] == pytest.approx(1.0)
    # every output names the model and its parameters
    transfer = timed["timing"]["transfer"]
    assert transfer["kind"] == "bandwidth" and transfer["bandwidth"] == BANDWIDTH
    assert transfer["latency"] == LATENCY
    assert transfer["description"] in timed["method"]
    assert recorded["timing"]["transfer"]["kind"] == "recorded"
