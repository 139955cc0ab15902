"""A live BFS crawl of the randomweb fixture is one of Bennouas' random web crawls."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from webcrawl.analysis.graph.loader import load_graph
from webcrawl.analysis.ordering.along import measure_along
from webcrawl.crawler.engine import Crawler
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.fixtures import FixtureConfig, FixtureServer, FixtureWeb


async def test_live_crawl_of_the_random_web(tmp_path: Path) -> None:
    web = FixtureWeb.build(FixtureConfig(model="randomweb", pages=20_000, hosts=20, seed=4,
                                         robots_disallow_fraction=0.0))
    db = tmp_path / "rw.db"
    settings = CrawlSettings.polite_off(resolve=("*.test=127.0.0.1",),
                                        scope_hosts=("*.test",), concurrency=16,
                                        scope_max_pages=1500, frontier_strategy="bfs")
    async with FixtureServer(web) as server:
        await Crawler(db, [server.seed_url], settings).run()
        truth = {(e.src, e.dst) for e in web.truth_edges(server.port)}
        page_urls = {p.url for p in web.truth_pages(server.port)}
    graph = load_graph(db, graph="all")
    crawled = np.flatnonzero(graph.crawled)
    assert crawled.size >= 1400
    # Every fetched page's links to pages are exactly its chunk of L (the ground truth;
    # the fixture adds links to files, which are not model pages).
    adj = graph.adjacency.tocsr()
    urls = graph.urls
    fetched = {urls[i] for i in crawled}
    stored = {(urls[s], urls[d]) for s in crawled for d in adj.indices[adj.indptr[s]:
                                                                    adj.indptr[s + 1]]
              if s != d and urls[d] in page_urls}
    assert stored == {(s, d) for s, d in truth if s in fetched}
    # Measured along the crawl: the discovery rate rises, sinks fall (figs. 12, 13).
    pages = load_graph(db)          # fetched HTML pages: the model's crawled pages
    along = measure_along(pages, [150, 500, 1400], ["sinks", "discovery"])
    assert np.all(np.diff(along.values["discovery"]) > 0)
    assert np.all(np.diff(along.values["sinks"]) < 0)
