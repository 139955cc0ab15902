"""Virtual crawls in simulated time under politeness: the clock, and what politeness changes."""

from __future__ import annotations

import numpy as np
import pytest
from webcrawl.analysis.graph.captured import CapturedGraph
from webcrawl.analysis.ordering.compare import CompareSettings, virtual_comparison
from webcrawl.analysis.ordering.quality import QualitySettings
from webcrawl.analysis.ordering.timed import (
    _CRAWLER_DEFAULTS,
    SimulatedPoliteness,
    fill_by_site,
    recorded_politeness,
    timed_crawl,
)
from webcrawl.analysis.ordering.virtual import virtual_crawl
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.storage.errors import ConfigError

ORDERINGS = ["bfs", "dfs", "random", "backlink", "opic", "pagerank", "batch-pagerank?every=5",
             "partial-pagerank?every=3", "larger-sites-first"]


def test_simulated_clock_on_a_hand_made_graph():
    # Host A holds 0, 1, 2; B holds 3; C holds 4.  0 -> 1, 3, 4; 1 -> 2.  Two
    # connections, a host waits max(1 s, its fetch time) after each fetch.
    #   t=0   take 0 (A, 1 s)                          A waits until 2
    #   t=1   0 ends: 1, 3, 4 found; take 3 (B, 3 s) and 4 (C, 1 s)
    #   t=2   4 ends (C waits until 3); A may go again: take 1 (2 s)
    #   t=4   3 ends (B until 7), then 1 ends (A until 4 + 2 = 6): 2 found
    #   t=6   take 2 (0.5 s);  t=6.5 the crawl ends
    graph = CapturedGraph.from_edges([0, 0, 0, 1], [1, 3, 4, 2], 5, hosts=[0, 0, 0, 1, 2])
    durations = np.array([1.0, 2.0, 0.5, 3.0, 1.0])
    crawl = timed_crawl(graph, "bfs", SimulatedPoliteness(2, min_delay=1.0, delay_factor=1.0),
                        durations)
    assert crawl.order.tolist() == [0, 3, 4, 1, 2]
    assert crawl.started.tolist() == [0.0, 1.0, 1.0, 2.0, 6.0]
    assert crawl.ended.tolist() == [1.0, 4.0, 2.0, 4.0, 6.5]
    assert crawl.duration == 6.5
    # A cap on the wait: A may go again 0.5 s after each fetch.
    capped = timed_crawl(graph, "bfs", SimulatedPoliteness(
        2, min_delay=0.5, delay_factor=1.0, max_delay=0.5), durations)
    assert capped.started.tolist() == [0.0, 1.0, 1.0, 2.0, 4.5]
    assert capped.duration == 5.0


def _random_graph(seed: int, n: int = 150, m: int = 600, hosts: int = 6) -> CapturedGraph:
    rng = np.random.default_rng(seed)
    src = np.concatenate([rng.integers(0, n, m), np.arange(n - 1)])
    dst = np.concatenate([rng.integers(0, n, m), np.arange(1, n)])
    return CapturedGraph.from_edges(src, dst, n, hosts=rng.integers(0, hosts, n))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("name", ORDERINGS)
def test_one_connection_and_no_waits_reproduce_the_untimed_order(name, seed):
    graph = _random_graph(seed)
    durations = np.random.default_rng(seed + 10).random(graph.n)  # any fetch times
    untimed = virtual_crawl(graph, name, seed=4)
    timed = timed_crawl(graph, name, SimulatedPoliteness(1), durations, seed=4)
    assert timed.order.tolist() == untimed.order.tolist()
    assert timed.recomputations == untimed.recomputations
    # one connection: each fetch starts when the previous one ends
    assert np.array_equal(timed.started[1:], timed.ended[:-1])
    assert timed.duration == pytest.approx(durations[timed.order].sum())


def _one_large_host_many_small(small_hosts: int = 200, small_pages: int = 3,
                               large_pages: int = 150) -> CapturedGraph:
    """The seed is the large host's root: it links to every small host's root (first),
    then to its own pages; each small root links to the pages of its host."""
    src: list[int] = []
    dst: list[int] = []
    hosts = [0]
    node = 1
    for h in range(1, small_hosts + 1):
        src.append(0)
        dst.append(node)
        hosts += [h] * small_pages
        for page in range(node + 1, node + small_pages):
            src.append(node)
            dst.append(page)
        node += small_pages
    hosts += [0] * (large_pages - 1)
    for page in range(node, node + large_pages - 1):
        src.append(0)
        dst.append(page)
    return CapturedGraph.from_edges(src, dst, node + large_pages - 1, hosts=hosts)


def test_larger_sites_first_finishes_sooner_than_bfs_under_politeness():
    graph = _one_large_host_many_small()
    polite = SimulatedPoliteness(2, min_delay=1.0, delay_factor=0.0)
    durations = np.full(graph.n, 0.1)
    bfs = timed_crawl(graph, "bfs", polite, durations)
    lsf = timed_crawl(graph, "larger-sites-first", polite, durations)
    assert sorted(bfs.order.tolist()) == sorted(lsf.order.tolist()) == list(range(graph.n))
    # Breadth-first spends its connections on the 200 small roots first (discovered
    # first) while the large host waits its turn; larger-sites-first keeps the large
    # host, whose 150 fetches 1.1 s apart set the duration, busy from the start.
    # (the large host's 150 fetches cannot end before 149 waits of 1.1 s and a fetch)
    assert lsf.duration >= 149 * 1.1 + 0.1 - 1e-9
    assert bfs.duration > lsf.duration + 5
    # Without waits the order alone does not change the duration (one connection).
    free = SimulatedPoliteness(1)
    assert timed_crawl(graph, "bfs", free, durations).duration == pytest.approx(
        timed_crawl(graph, "larger-sites-first", free, durations).duration)


def test_timed_comparison_reports_time_captures_and_durations():
    graph = _one_large_host_many_small(40, 3, 30)
    settings = CompareSettings(quality=QualitySettings(checkpoints=0), timed=True,
                               connections=2, min_delay=1.0, delay_factor=0.0)
    comparison = virtual_comparison(graph, ["bfs", "larger-sites-first"], settings=settings,
                                    durations=np.full(graph.n, 0.1))
    assert "2 connections" in comparison.method
    for name in ("bfs", "larger-sites-first"):
        summary = comparison.reports[name].summary
        clock = comparison.clock[name]
        assert summary["simulated_hours"] == pytest.approx(clock["seconds"] / 3600)
        fractions = [summary[f"captured_at_{p}pct_time"] for p in (10, 25, 50)]
        assert fractions == sorted(fractions) and 0 < fractions[0] <= 1
        assert clock["capture"][0] == 0.0 and clock["capture"][-1] <= 1.0
        assert np.all(np.diff(clock["capture"]) >= 0)
    assert comparison.clock["larger-sites-first"]["seconds"] < comparison.clock["bfs"]["seconds"]


def test_missing_fetch_times_take_the_host_median_then_the_overall_one():
    values = np.array([1.0, np.nan, 3.0, 10.0, np.nan, np.nan])
    hosts = np.array([0, 0, 0, 1, 1, 2])
    filled = fill_by_site(values, hosts, default=0.5)
    assert filled.tolist() == [1.0, 2.0, 3.0, 10.0, 10.0, 3.0]
    assert fill_by_site(np.full(3, np.nan), np.zeros(3, np.int64), 0.5).tolist() == [0.5] * 3


def test_politeness_defaults_are_the_crawlers():
    d = CrawlSettings()
    assert {"concurrency": d.concurrency,
                                 "polite_min_delay": d.polite_min_delay,
                                 "polite_delay_factor": d.polite_delay_factor,
                                 "polite_max_delay": d.polite_max_delay} == _CRAWLER_DEFAULTS
    assert recorded_politeness(None) == SimulatedPoliteness(
        d.concurrency, d.polite_min_delay, d.polite_delay_factor, d.polite_max_delay)


@pytest.mark.parametrize("kwargs", [{"connections": 0}, {"min_delay": -1.0},
                                    {"min_delay": 2.0, "max_delay": 1.0}])
def test_bad_politeness_is_a_config_error(kwargs):
    with pytest.raises(ConfigError):
        SimulatedPoliteness(**kwargs)
