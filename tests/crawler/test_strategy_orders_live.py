"""Live crawls of small hand-made graphs served by the fixture web: each strategy's order.

With zero politeness delay on a single host (one request in flight per host still
holds), the crawler's recorded order must be the strategy's own order: the one known
by hand, and the one a virtual crawl replays over the graph the crawl captured.  (Every
fixture page also links a ``/files/N.pdf`` decoy: the crawler announces it to the
strategy as an out-of-scope URL, so it takes part in OPIC's cash and random draws.)
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from miniweb import read_db
from webcrawl.analysis.graph.loader import load_graph
from webcrawl.analysis.ordering.strategies import (
    PageRankOrder,
    PageRankOrderSettings,
    Strategy,
    register_strategy,
)
from webcrawl.analysis.ordering.virtual import virtual_crawl
from webcrawl.crawler.engine import Crawler
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.fixtures import FixtureServer, FixtureWeb

# 0 -> 1, 2; 1 -> 3, 4; 2 -> 5, 6; 3 -> 7 (page 0 is the site root, the seed).
TREE = [(0, 1), (0, 2), (1, 3), (1, 4), (2, 5), (2, 6), (3, 7)]
# After 0, 1 and 2 are fetched, 9 has two known in-links, 3 and 4 one each.
BACKLINK = [(0, 1), (0, 2), (0, 3), (1, 4), (1, 9), (2, 9)] + [(p, 0) for p in (3, 4, 9)]
# 1 splits its cash five ways (5..8 and its PDF), 2 two ways (9 and its PDF): 9 holds
# more cash than 5..8 although they were discovered first.
OPIC = [(0, 1), (0, 2), (0, 3), (1, 5), (1, 6), (1, 7), (1, 8), (2, 9)]
# After 0 and 1, 3 has in-links from both: it outranks 2 for PageRank (both the
# between-recomputation estimate and the recomputed PageRank agree).
PAGERANK = [(0, 1), (0, 2), (0, 3), (1, 3)]


@register_strategy
class LowestDepthThenHighestId(Strategy):
    """A custom ordering registered the documented way: shallow first, then high ids."""

    name = "test-live-shallow-high-id"

    def discovered(self, url_id: int, depth: int) -> float:
        return -1e6 * depth + url_id


async def _live_order(
    edges: list[tuple[int, int]], strategy: str | Strategy, tmp_path: Path,
    pages: int | None = None, replay_with: Strategy | None = None,
) -> list[int]:
    """Crawl ``edges`` from page 0; return the fixture page ids in fetch order.

    Also checks that a virtual crawl over the captured graph replays that order
    exactly (with the strategy's name, or with the fresh instance ``replay_with``).
    """
    web = FixtureWeb.from_edges(edges, pages=pages)
    settings = CrawlSettings.polite_off(
        resolve=("*.test=127.0.0.1",),
        scope_hosts=("*.test",),
        concurrency=8,
        frontier_strategy=strategy if isinstance(strategy, str) else "bfs",
        frontier_seed=3,
    )
    tmp_path.mkdir(parents=True, exist_ok=True)
    db = tmp_path / "crawl.db"
    instance = strategy if isinstance(strategy, Strategy) else None
    async with FixtureServer(web) as server:
        stats = await Crawler(db, [server.seed_url], settings, strategy=instance).run()
        page_of = {web.url_of(p, server.port): p for p in range(web.pages)}
    assert stats.stopped == "done"
    fetches = read_db(db)["fetches"]
    live = [page_of[url] for url, _seq, _outcome, _status, attempt, *_ in fetches if attempt == 1]
    replay = strategy if isinstance(strategy, str) else replay_with
    if replay is not None:
        graph = load_graph(db, graph="all", drop_self_loops=False)
        replayed = virtual_crawl(graph, replay, seed=3)
        assert np.array_equal(replayed.order, graph.fetch_order)
        assert [page_of[graph.urls[i]] for i in replayed.order] == live
    return live


@pytest.mark.parametrize(
    ("name", "edges", "expected"),
    [
        ("bfs", TREE, [0, 1, 2, 3, 4, 5, 6, 7]),
        ("dfs", TREE, [0, 2, 6, 5, 1, 4, 3, 7]),
        ("backlink", BACKLINK, [0, 1, 2, 9, 3, 4]),
        ("opic", OPIC, [0, 1, 2, 3, 9, 5, 6, 7, 8]),
        # URL ids follow discovery: 2 (id 2) is fetched before 1 (id 1), so 1's
        # children 3 and 4 get higher ids than 2's children 5 and 6.
        ("test-live-shallow-high-id", TREE, [0, 2, 1, 4, 3, 6, 5, 7]),
    ],
    ids=["bfs-by-level", "dfs-goes-deep", "backlink-most-in-links", "opic-most-cash", "custom"],
)
async def test_live_order_is_the_strategys_order(
    name: str, edges: list[tuple[int, int]], expected: list[int], tmp_path: Path
) -> None:
    assert await _live_order(edges, name, tmp_path) == expected


def _random_edges(n: int, m: int, seed: int) -> list[tuple[int, int]]:
    rng = np.random.default_rng(seed)
    return sorted(
        {(int(a), int(b)) for a, b in rng.integers(0, n, (m, 2)) if a != b}
        | {(i, i + 1) for i in range(n - 1)}
    )


async def test_live_random_is_reproducible_and_replayed(tmp_path: Path) -> None:
    edges = _random_edges(30, 90, 8)
    live = await _live_order(edges, "random", tmp_path / "a")
    assert sorted(live) == list(range(30))
    assert await _live_order(edges, "random", tmp_path / "b") == live
    assert live != await _live_order(edges, "bfs", tmp_path / "c")


def _pagerank(every_fetches: int) -> PageRankOrder:
    # No wall-clock trigger: recomputations at fixed fetch counts only.
    return PageRankOrder(settings=PageRankOrderSettings(every_fetches=every_fetches,
                                                        every_seconds=1e9))


async def test_live_pagerank_order(tmp_path: Path) -> None:
    order = await _live_order(PAGERANK, _pagerank(1), tmp_path, replay_with=_pagerank(1))
    assert order == [0, 1, 3, 2]


@pytest.mark.parametrize("every", [1, 7], ids=["recompute-each-fetch", "every-7-fetches"])
async def test_larger_site_live_pagerank_order_is_replayed_virtually(
        every: int, tmp_path: Path) -> None:
    """Recomputations land at fixed fetch counts: the live order is the virtual one."""
    edges = _random_edges(150, 500, 1)
    live = await _live_order(edges, _pagerank(every), tmp_path / "a",
                             replay_with=_pagerank(every))
    assert sorted(live) == list(range(150))
    assert live != await _live_order(edges, "bfs", tmp_path / "b")


@pytest.mark.parametrize("name", ["bfs", "dfs", "random", "backlink", "opic"])
async def test_larger_site_live_order_is_replayed_virtually(name: str, tmp_path: Path) -> None:
    live = await _live_order(_random_edges(150, 500, 1), name, tmp_path)
    assert sorted(live) == list(range(150))
