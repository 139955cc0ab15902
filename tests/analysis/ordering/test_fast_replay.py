"""The vectorised and compiled replays of bfs, random and backlink give exactly what
the generic replay gives (order, priorities, depths, discovery), on random graphs with
unfetchable nodes, repeated seeds and unreachable parts."""

from __future__ import annotations

import numpy as np
import pytest
from webcrawl.analysis.graph.captured import CapturedGraph
from webcrawl.analysis.ordering import _fast_replay
from webcrawl.analysis.ordering.strategies import get_strategy
from webcrawl.analysis.ordering.virtual import virtual_crawl


def _graph(seed: int) -> CapturedGraph:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 400))
    m = int(rng.integers(0, 6 * n))
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    crawled = rng.random(n) < 0.8
    return CapturedGraph.from_edges(src, dst, n=n, crawled=crawled)


@pytest.mark.parametrize("name", ["bfs", "bfs-numpy", "random", "backlink"])
@pytest.mark.parametrize("seed", range(12))
def test_same_crawl_as_the_generic_replay(name: str, seed: int,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    if name != "bfs-numpy" and not _fast_replay.have_compiler():
        pytest.skip("numba (webcrawl[fast]) is not installed")
    if name == "bfs-numpy":  # the vectorised search, many gathers per level
        monkeypatch.setattr(_fast_replay, "compiled", lambda *_: None)
        monkeypatch.setattr(_fast_replay, "_GATHER", 5)
        name = "bfs"
    graph = _graph(seed)
    rng = np.random.default_rng(seed + 100)
    seeds = rng.integers(0, graph.n, 3)
    seeds = np.concatenate([seeds, seeds[:1]])  # a repeated seed
    fast = virtual_crawl(graph, name, seeds=seeds, seed=seed)
    slow = virtual_crawl(graph, get_strategy(name)(seed=seed), seeds=seeds)
    assert fast.order.tolist() == slow.order.tolist()
    assert fast.priorities.tolist() == slow.priorities.tolist()
    assert fast.depths.tolist() == slow.depths.tolist()
    assert fast.discovery.tolist() == slow.discovery.tolist()
    assert fast.strategy == slow.strategy == name


@pytest.mark.parametrize("name", ["bfs", "random", "backlink"])
@pytest.mark.parametrize("seed", range(3))
def test_same_crawl_as_the_generic_replay_on_deep_heaps(name: str, seed: int) -> None:
    """Thousands of nodes: heaps many levels deep (the compiled heaps are 4-ary), many
    equal backlink counts broken by discovery order."""
    if not _fast_replay.have_compiler():
        pytest.skip("numba (webcrawl[fast]) is not installed")
    rng = np.random.default_rng(seed)
    n = 4000
    src, dst = rng.integers(0, n, 5 * n), rng.integers(0, n, 5 * n)
    graph = CapturedGraph.from_edges(src, dst, n=n, crawled=rng.random(n) < 0.9)
    seeds = rng.integers(0, n, 2)
    fast = virtual_crawl(graph, name, seeds=seeds, seed=seed)
    slow = virtual_crawl(graph, get_strategy(name)(seed=seed), seeds=seeds)
    assert fast.fetched > n // 2
    assert fast.order.tolist() == slow.order.tolist()
    assert fast.priorities.tolist() == slow.priorities.tolist()
    assert fast.depths.tolist() == slow.depths.tolist()
    assert fast.discovery.tolist() == slow.discovery.tolist()
