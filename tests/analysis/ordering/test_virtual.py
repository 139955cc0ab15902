"""Virtual crawls: replaying strategies over captured graphs with no network."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from webcrawl.analysis.graph.captured import CapturedGraph
from webcrawl.analysis.ordering.strategies import (
    PageRankOrder,
    PageRankOrderSettings,
    Strategy,
    available_strategies,
    get_strategy,
    register_strategy,
)
from webcrawl.analysis.ordering.virtual import replay, virtual_crawl
from webcrawl.storage.errors import ConfigError, EmptyGraphError

BUILTINS = ["bfs", "dfs", "random", "backlink", "pagerank", "opic"]


@register_strategy
class HighestIdFirst(Strategy):
    """A custom ordering registered the documented way: larger URL ids first."""

    name = "test-highest-id"

    def discovered(self, url_id: int, depth: int) -> float:
        return float(url_id)


def _random_graph(n: int, m: int, seed: int) -> CapturedGraph:
    rng = np.random.default_rng(seed)
    # A spanning path keeps everything reachable from 0; random links on top.
    src = np.concatenate([np.arange(n - 1), rng.integers(0, n, m)])
    dst = np.concatenate([np.arange(1, n), rng.integers(0, n, m)])
    return CapturedGraph.from_edges(src, dst, n=n)


def _reference(graph: CapturedGraph, strategy: Strategy) -> tuple[list[int], list[float]]:
    """Pure-Python frontier: a dict and ``max`` (highest priority, then first found)."""
    adj = graph.adjacency
    prio: dict[int, float] = {}
    seq: dict[int, int] = {}
    depth: dict[int, int] = {}
    order: list[int] = []
    taken: list[float] = []
    since = 0

    def apply(updates: object) -> None:
        for u, v in updates:  # type: ignore[attr-defined]
            if u in prio:
                prio[u] = v

    for s in graph.seeds.tolist():
        seq[s], depth[s] = len(seq), 0
        prio[s] = strategy.discovered(s, 0)
    while prio:
        page = max(prio, key=lambda u: (prio[u], -seq[u]))
        taken.append(prio.pop(page))
        order.append(page)
        out = sorted(adj.indices[adj.indptr[page] : adj.indptr[page + 1]].tolist())
        for t in out:
            if t not in seq:
                seq[t], depth[t] = len(seq), depth[page] + 1
                prio[t] = strategy.discovered(t, depth[t])
        apply(strategy.fetched(page, out))
        since += 1
        if strategy.wants_recompute(since, 0.0):
            apply(strategy.recompute(strategy.snapshot()))
            since = 0
    return order, taken


def _make(name: str) -> Strategy:
    if name == "pagerank":  # recompute often enough to matter on small graphs
        return PageRankOrder(settings=PageRankOrderSettings(every_fetches=3))
    return get_strategy(name)(seed=7)


@pytest.mark.parametrize("name", BUILTINS)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_virtual_crawl_matches_the_reference_frontier(name: str, seed: int) -> None:
    graph = _random_graph(60, 150, seed)
    result = virtual_crawl(graph, _make(name))
    order, priorities = _reference(graph, _make(name))
    assert result.order.tolist() == order
    assert result.priorities.tolist() == pytest.approx(priorities)
    assert result.fetched == 60


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_bfs_matches_networkx_breadth_first_order(seed: int) -> None:
    graph = _random_graph(200, 600, seed)
    g = nx.DiGraph(list(zip(*graph.adjacency.nonzero(), strict=True)))
    expected = [0] + [v for _, v in nx.bfs_edges(g, 0, sort_neighbors=sorted)]
    result = virtual_crawl(graph, "bfs")
    assert result.order.tolist() == expected
    assert np.all(np.diff(result.depths) >= 0)  # level by level
    lengths = nx.single_source_shortest_path_length(g, 0)
    assert result.depths.tolist() == [lengths[v] for v in expected]


def test_hand_made_orders() -> None:
    # 0 -> 1, 2; 1 -> 3, 4; 2 -> 5, 6; 3 -> 7
    g = CapturedGraph.from_edges([0, 0, 1, 1, 2, 2, 3], [1, 2, 3, 4, 5, 6, 7], n=8)
    assert virtual_crawl(g, "bfs").order.tolist() == [0, 1, 2, 3, 4, 5, 6, 7]
    assert virtual_crawl(g, "dfs").order.tolist() == [0, 2, 6, 5, 1, 4, 3, 7]
    # 0 -> 1, 2, 3; 1 -> 4, 9; 2 -> 9: 9 has the most known in-links after 2.
    b = CapturedGraph.from_edges([0, 0, 0, 1, 1, 2], [1, 2, 3, 4, 9, 9], n=10)
    assert virtual_crawl(b, "backlink").order.tolist() == [0, 1, 2, 9, 3, 4]


def test_reproduces_a_recorded_breadth_first_crawl() -> None:
    # A "real" crawl's record: the graph's fetch_order from a FIFO over discovery.
    graph = _random_graph(300, 900, 4)
    g = nx.DiGraph(list(zip(*graph.adjacency.nonzero(), strict=True)))
    real = [0] + [v for _, v in nx.bfs_edges(g, 0, sort_neighbors=sorted)]
    recorded = CapturedGraph.from_edges(
        *graph.adjacency.nonzero(), n=300, fetch_order=real, seeds=[0]
    )
    assert np.array_equal(virtual_crawl(recorded, "bfs").order, recorded.fetch_order)


def test_frontier_nodes_are_only_announced_and_cost_no_budget() -> None:
    # 2 and 3 are the captured graph's frontier (never fetched, no out-links).
    g = CapturedGraph.from_edges([0, 0, 1, 1], [2, 1, 3, 4], n=5,
                                 crawled=[True, True, False, False, True])
    for name in ("bfs", "dfs"):
        kept = virtual_crawl(g, name)
        assert sorted(kept.order.tolist()) == [0, 1, 4]
        assert sorted(kept.discovery.tolist()) == [0, 1, 2, 3, 4]  # announced all the same
    # a budget of 3 fetches reaches page 4: 2 and 3 took none of it
    assert sorted(virtual_crawl(g, "bfs", max_pages=3).order.tolist()) == [0, 1, 4]


def test_explicit_fetchable_set_is_obeyed() -> None:
    g = CapturedGraph.from_edges([0, 0, 1], [1, 2, 3], n=4,
                                 fetchable=[True, False, True, True])
    assert virtual_crawl(g, "bfs").order.tolist() == [0, 2]  # 3 only behind unfetchable 1


def test_uncrawled_node_with_links_is_taken_like_a_redirect() -> None:
    # No outcome, but known out-links (a redirect, or an imported graph's node).
    g = CapturedGraph.from_edges([0, 1], [1, 2], n=3, crawled=[True, False, True])
    assert virtual_crawl(g, "bfs").order.tolist() == [0, 1, 2]


def test_max_pages_seeds_and_unreachable_nodes() -> None:
    g = CapturedGraph.from_edges([0, 1, 3], [1, 2, 4], n=5)
    assert virtual_crawl(g, "bfs").order.tolist() == [0, 1, 2]
    assert virtual_crawl(g, "bfs", max_pages=2).order.tolist() == [0, 1]
    assert virtual_crawl(g, "bfs", max_pages=0).order.tolist() == []
    assert virtual_crawl(g, "bfs", seeds=[3, 0, 3]).order.tolist() == [3, 0, 4, 1, 2]


def test_random_strategy_is_reproducible_with_its_seed() -> None:
    g = _random_graph(100, 300, 9)
    a = virtual_crawl(g, "random", seed=5).order
    b = virtual_crawl(g, "random", seed=5).order
    c = virtual_crawl(g, "random", seed=6).order
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_pagerank_recomputes_at_fixed_fetch_counts() -> None:
    g = _random_graph(100, 300, 2)

    def run() -> tuple[list[int], int]:
        s = PageRankOrder(settings=PageRankOrderSettings(every_fetches=10))
        r = virtual_crawl(g, s)
        return r.order.tolist(), r.recomputations

    (order, count), (again, _) = run(), run()
    assert order == again
    assert count == 10


def test_custom_strategy_registered_and_replayed_by_name() -> None:
    assert "test-highest-id" in available_strategies()
    # 0 -> 3, 1, 5; 1 -> 2; 5 -> 4: the largest known id is always taken.
    g = CapturedGraph.from_edges([0, 0, 0, 1, 5], [3, 1, 5, 2, 4], n=6)
    assert virtual_crawl(g, "test-highest-id").order.tolist() == [0, 5, 4, 3, 1, 2]


def test_replay_reseeds_when_the_frontier_runs_dry() -> None:
    links = {0: np.array([1]), 1: np.empty(0, np.int64), 2: np.array([0, 3])}
    pending = [2]
    result = replay(
        get_strategy("bfs")(),
        4,
        [0],
        lambda u: links.get(u, np.empty(0, np.int64)),
        on_empty=lambda: pending.pop() if pending else None,
    )
    assert result.order.tolist() == [0, 1, 2, 3]
    assert result.depths.tolist() == [0, 1, 0, 1]


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"strategy": "nope"}, ConfigError),
        ({"seeds": [9]}, ConfigError),
        ({"seeds": []}, ConfigError),
        ({"max_pages": -1}, ConfigError),
        ({"hosts_politeness": True}, ConfigError),
    ],
    ids=["strategy", "seed-range", "no-seeds", "max-pages", "politeness"],
)
def test_bad_arguments(kwargs: dict[str, object], error: type[Exception]) -> None:
    g = CapturedGraph.from_edges([0], [1], n=2)
    args: dict[str, object] = {"strategy": "bfs", **kwargs}
    with pytest.raises(error):
        virtual_crawl(g, **args)  # type: ignore[arg-type]


def test_empty_graph() -> None:
    empty = CapturedGraph.from_edges([], [], n=0)
    with pytest.raises(EmptyGraphError):
        virtual_crawl(empty, "bfs")
