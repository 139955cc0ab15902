"""The orderings of Baeza-Yates et al. in live crawls of the fixture web.

Each ordering a live crawl can run (all but ``omniscient``, which needs the final
graph) is checked three ways: with zero delays its live order is the order a virtual
crawl replays over the captured graph; under real delays the server's politeness audit
finds no violation; and a previous crawl of the fixture web taken on another simulated
day feeds ``historical``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from webcrawl.analysis.graph.loader import load_graph
from webcrawl.analysis.ordering.strategies import history_scores, strategy_spec
from webcrawl.analysis.ordering.virtual import virtual_crawl
from webcrawl.crawler.cli import main
from webcrawl.crawler.engine import Crawler
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.fixtures import FixtureServer, FixtureWeb
from webcrawl.fixtures.config import FixtureConfig

#: The live orderings that need nothing but URL ids from the crawl engine.
ID_ORDERINGS = ["batch-pagerank?every=3", "partial-pagerank?every=2", "pagerank?every=5"]


def _settings(strategy: str, **overrides: object) -> CrawlSettings:
    base: dict[str, object] = {"resolve": ("*.test=127.0.0.1",), "scope_hosts": ("*.test",),
                               "frontier_strategy": strategy}
    base.update(overrides)
    return CrawlSettings(**base)  # type: ignore[arg-type]


def _random_edges(n: int, m: int, seed: int) -> list[tuple[int, int]]:
    rng = np.random.default_rng(seed)
    return sorted({(int(a), int(b)) for a, b in rng.integers(0, n, (m, 2)) if a != b}
                  | {(i, i + 1) for i in range(n - 1)})


@pytest.mark.parametrize("spec", ID_ORDERINGS)
async def test_live_order_is_the_virtual_replays(spec: str, tmp_path: Path) -> None:
    web = FixtureWeb.from_edges(_random_edges(120, 400, 2))
    db = tmp_path / "c.db"
    settings = CrawlSettings.polite_off(resolve=("*.test=127.0.0.1",), scope_hosts=("*.test",),
                                        concurrency=8, frontier_strategy=spec)
    async with FixtureServer(web) as server:
        stats = await Crawler(db, [server.seed_url], settings).run()
    assert stats.stopped == "done"
    graph = load_graph(db, graph="all", drop_self_loops=False)
    replayed = virtual_crawl(graph, spec)
    assert graph.fetch_order.size >= 120
    assert np.array_equal(replayed.order, graph.fetch_order)
    # the stored strategy is the spec, options included
    assert main(["compare", "--db", str(db), "--virtual", "--strategies", "bfs",
                 "--checkpoints", "0", "--json"]) == 0


@pytest.mark.parametrize("spec", ID_ORDERINGS[:2])
async def test_live_orderings_keep_politeness(spec: str, tmp_path: Path) -> None:
    web = FixtureWeb.build(FixtureConfig(pages=160, hosts=8, seed=4))
    delay = 0.03
    settings = _settings(spec, polite_delay_factor=2.0, polite_min_delay=delay,
                         polite_max_delay=0.2)
    async with FixtureServer(web) as server:
        await Crawler(tmp_path / "c.db", [server.seed_url], settings).run()
        report = server.audit(max_concurrency=1, min_gap=delay)
        bfs = CrawlSettings.polite_off(resolve=("*.test=127.0.0.1",), scope_hosts=("*.test",))
        await Crawler(tmp_path / "bfs.db", [server.seed_url], bfs).run()
    assert report["violation_count"] == 0, report["violations"]
    assert len(report["hosts"]) == 8
    # another order of the same pages
    ordered, plain = load_graph(tmp_path / "c.db"), load_graph(tmp_path / "bfs.db")
    assert sorted(ordered.urls) == sorted(plain.urls)
    assert ordered.urls != plain.urls or spec.startswith("bfs")


def test_omniscient_is_refused_live(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["crawl", "http://a.test/", "--db", str(tmp_path / "c.db"), "--strategy",
                 "omniscient", "--quiet"])
    err = capsys.readouterr().err
    assert code == 1 and "virtual crawls only" in err and err.count("\n") == 1
    assert not (tmp_path / "c.db").exists()


def test_strategy_options_need_a_strategy(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["crawl", "http://a.test/", "--db", str(tmp_path / "c.db"),
                 "--strategy-opt", "every=5", "--quiet"])
    err = capsys.readouterr().err
    assert code == 1 and "--strategy NAME" in err and err.count("\n") == 1


async def _crawl_on_day(web: FixtureWeb, day: float, db: Path, port: int = 0) -> int:
    """Crawl ``web`` as it is on simulated ``day``; return the server's port."""
    settings = CrawlSettings.polite_off(resolve=("*.test=127.0.0.1",), scope_hosts=("*.test",),
                                        concurrency=8)
    # A day lasts a week of real time: the whole crawl sees one simulated day.
    async with FixtureServer(web, port=port, start_day=day, day_seconds=7 * 86400) as server:
        await Crawler(db, [server.seed_url], settings).run()
        return server.port


async def test_historical_ranks_a_later_crawl_by_an_earlier_ones_pagerank(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Pages are born and die over 60 days: the crawls of day 5 and day 50 differ.
    web = FixtureWeb.build(FixtureConfig(pages=400, hosts=5, seed=7, birth_fraction=0.4,
                                         death_fraction=0.2, lifetime_days=60))
    early, late = tmp_path / "day5.db", tmp_path / "day50.db"
    port = await _crawl_on_day(web, 5.0, early)
    await _crawl_on_day(web, 50.0, late, port)  # the same URLs: the same port
    then = load_graph(early)
    now = load_graph(late)
    old = set(then.urls)
    assert old != set(now.urls)  # births and deaths in between
    assert main(["compare", "--db", str(late), "--virtual", "--strategies", "historical,bfs",
                 "--history", str(early), "--checkpoints", "0", "--json"]) == 0
    capsys.readouterr()
    # Known pages are taken by the earlier crawl's PageRank, new ones after them.
    scores = history_scores(str(early))
    spec = strategy_spec("historical", {"history": str(early)})
    full = load_graph(late, graph="all")
    crawl = virtual_crawl(full, spec)
    expected = [scores.get(full.urls[i], 0.15) for i in crawl.order]
    assert crawl.priorities.tolist() == pytest.approx(expected)
    assert any(full.urls[i] not in old for i in crawl.order)  # new pages, at the prior
    first = crawl.order[1]  # after the seed: the best page the earlier crawl knew
    assert full.urls[first] in old


async def test_larger_sites_first_and_historical_run_live_politely(tmp_path: Path) -> None:
    web = FixtureWeb.build(FixtureConfig(pages=200, hosts=8, seed=6))
    delay = 0.03
    async with FixtureServer(web) as server:
        early = tmp_path / "early.db"
        await Crawler(early, [server.seed_url], CrawlSettings.polite_off(
            resolve=("*.test=127.0.0.1",), scope_hosts=("*.test",))).run()
        server.log.clear()
        for name, spec in (("lsf", "larger-sites-first"),
                           ("hist", strategy_spec("historical", {"history": str(early)}))):
            settings = _settings(spec, polite_delay_factor=2.0, polite_min_delay=delay,
                                 polite_max_delay=0.2)
            crawler = Crawler(tmp_path / f"{name}.db", [server.seed_url], settings)
            assert crawler.frontier.host_order == crawler.strategy.host_order
            stats = await crawler.run()
            report = server.audit(max_concurrency=1, min_gap=delay)
            server.log.clear()
            assert stats.stopped == "done"
            assert report["violation_count"] == 0, (name, report["violations"])
            assert sorted(load_graph(tmp_path / f"{name}.db").urls) == \
                sorted(load_graph(early).urls)
