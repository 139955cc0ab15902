"""Done-when test of issue 14: on a finished crawl with off-site links, robots-excluded
pages, error pages and redirects, every ordering of ``compare --virtual`` ends with the
recorded crawl's page set and PageRank captured 1.000.

The fixture web has 5 hosts; the crawl's scope is 3 of them, so links to the other two
are off-site.  robots.txt disallows ``/private/`` (5% of the pages), 6% of the pages
answer 500 and 5% redirect through a chain.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from webcrawl.analysis.graph.loader import load_graph
from webcrawl.analysis.ordering.compare import IDEAL, RECORDED, virtual_orders
from webcrawl.crawler.cli import main
from webcrawl.crawler.engine import Crawler
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.fixtures import FaultSpec, FixtureConfig, FixtureServer, FixtureWeb

STRATEGIES = ("bfs", "dfs", "random", "backlink", "pagerank", "opic")


async def test_every_ordering_ends_on_the_recorded_pages_with_all_pagerank(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    web = FixtureWeb.build(FixtureConfig(pages=400, hosts=5, seed=11,
                                         faults=FaultSpec.parse("5xx:0.06,redirect:0.05")))
    db = tmp_path / "crawl.db"
    settings = CrawlSettings.polite_off(
        resolve=("*.test=127.0.0.1",), concurrency=8, retry_attempts=1,
        scope_hosts=("site0.test:*", "site1.test:*", "site2.test:*"))
    async with FixtureServer(web) as server:
        stats = await Crawler(db, [server.seed_url], settings).run()
    assert stats.stopped == "done"

    full = load_graph(db, graph="all")
    outcomes = full.outcome_counts()
    for outcome in ("out_of_scope", "robots_excluded", "http_error", "redirect"):
        assert outcomes.get(outcome, 0) > 0, (outcome, outcomes)
    recorded_pages = {int(full.store_ids[i]) for i in np.flatnonzero(full.crawled)}

    # The library: each replay's pages are exactly the recorded crawl's pages.
    for name, order in virtual_orders(full, STRATEGIES).items():
        fetched = order[np.asarray(full.crawled)[order]]
        assert {int(full.store_ids[i]) for i in fetched} == recorded_pages, name
        assert np.all(np.asarray(full.fetchable)[order]), name

    # The command line: PageRank captured ends at 1.000 for every ordering.
    assert main(["compare", "--db", str(db), "--virtual", "--json", "--checkpoints", "0",
                 "--strategies", ",".join(STRATEGIES)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert list(data["summary"]) == [RECORDED, IDEAL, *STRATEGIES]
    assert data["graphs"]["crawl.db"]["kind"] == "pages"
    assert data["graphs"]["crawl.db"]["nodes"] == len(recorded_pages)
    for name, summary in data["summary"].items():
        assert summary["pages"] == len(recorded_pages), name
        assert round(summary["captured_at_100pct"], 3) == 1.0, name
    reach = data["reach"]
    assert reach["fetchable"] == int(np.count_nonzero(full.fetchable))
    assert set(reach["excluded"]) >= {"excluded by robots.txt",
                                      "out of scope (host, depth, per-host cap, URL length)"}
