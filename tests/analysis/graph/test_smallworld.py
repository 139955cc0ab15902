"""Small-world measures against networkx and hand-made graphs."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from webcrawl.analysis.graph.captured import CapturedGraph
from webcrawl.analysis.graph.smallworld_alg import (
    clustering,
    path_lengths,
    smallworld,
    smallworld_along_order,
    undirected_simple,
)
from webcrawl.storage.errors import ConfigError, EmptyGraphError


def _random_digraph(n, m, seed):
    rng = np.random.default_rng(seed)
    adj = sp.csr_array((np.ones(m), (rng.integers(0, n, m), rng.integers(0, n, m))),
                       shape=(n, n))
    adj.sum_duplicates()  # duplicates and self-loops kept on purpose
    return adj


def _nx_undirected(adj):
    g = nx.Graph()
    g.add_nodes_from(range(adj.shape[0]))
    g.add_edges_from((int(r), int(c)) for r, c in zip(*adj.nonzero(), strict=True) if r != c)
    return g


def _nx_directed(adj):
    g = nx.DiGraph()
    g.add_nodes_from(range(adj.shape[0]))
    g.add_edges_from((int(r), int(c)) for r, c in zip(*adj.nonzero(), strict=True))
    return g


@pytest.mark.parametrize("seed", range(5), ids=lambda s: f"seed{s}")
def test_clustering_matches_networkx(seed):
    adj = _random_digraph(60, 300, seed)
    c = clustering(adj)
    g = _nx_undirected(adj)
    assert c.average == pytest.approx(nx.average_clustering(g), abs=1e-12)
    assert c.transitivity == pytest.approx(nx.transitivity(g), abs=1e-12)
    tri = nx.triangles(g)
    assert c.triangles.tolist() == [tri[v] for v in range(60)]


def test_clustering_blocks_give_the_same_triangles(monkeypatch):
    import webcrawl.analysis.graph.smallworld_alg as sw
    adj = _random_digraph(80, 600, 9)
    whole = clustering(adj).triangles
    monkeypatch.setattr(sw, "_TRIANGLE_BLOCK_WORK", 50)  # many small row blocks
    np.testing.assert_array_equal(clustering(adj).triangles, whole)


def test_clustering_by_hand():
    # A triangle 0-1-2 with a pendant 3 on node 2, links in both directions.
    adj = sp.csr_array((np.ones(5), ([0, 1, 2, 1, 3], [1, 2, 0, 0, 2])), shape=(4, 4))
    c = clustering(adj)
    assert c.local.tolist() == pytest.approx([1.0, 1.0, 1 / 3, 0.0])
    assert c.transitivity == pytest.approx(3 / 5)  # 3 triangles-vertex / 5 triples


def test_strongly_connected_paths_match_networkx():
    g = nx.DiGraph(nx.gnp_random_graph(40, 0.12, seed=3, directed=True))
    assert nx.is_strongly_connected(g)
    adj = sp.csr_array(nx.to_scipy_sparse_array(g, nodelist=range(40)))
    r = path_lengths(adj, directed=True)
    assert r.exact and r.reachable_fraction == 1.0
    assert r.characteristic_length == pytest.approx(nx.average_shortest_path_length(g))
    assert r.diameter == nx.diameter(g)
    lengths = dict(nx.all_pairs_shortest_path_length(g))
    hist = np.bincount([d for s in lengths for d in lengths[s].values() if d > 0])
    np.testing.assert_array_equal(r.distribution[1:], hist[1:])


def test_undirected_paths_match_networkx():
    adj = _random_digraph(50, 120, 4)
    g = _nx_undirected(adj)
    giant = max(nx.connected_components(g), key=len)
    sub = g.subgraph(giant)
    nodes = sorted(giant)
    r = path_lengths(adj[nodes][:, nodes], directed=False)
    assert r.characteristic_length == pytest.approx(nx.average_shortest_path_length(sub))
    assert r.diameter == nx.diameter(sub)


def test_disconnected_pairs_are_left_out():
    # Directed path 0 -> 1 -> 2 -> 3: 6 of 12 ordered pairs connected.
    adj = sp.csr_array((np.ones(3), ([0, 1, 2], [1, 2, 3])), shape=(4, 4))
    r = path_lengths(adj)
    assert r.reachable_fraction == 0.5
    assert r.characteristic_length == pytest.approx((1 * 3 + 2 * 2 + 3) / 6)
    assert r.diameter == 3


def test_sampled_sources_estimate_the_exact_value():
    g = nx.DiGraph(nx.gnp_random_graph(300, 0.03, seed=1, directed=True))
    adj = sp.csr_array(nx.to_scipy_sparse_array(g, nodelist=range(300)))
    exact = path_lengths(adj)
    sampled = path_lengths(adj, sources=60, seed=2)
    assert not sampled.exact and sampled.sources.size == 60
    assert sampled.characteristic_length == pytest.approx(exact.characteristic_length,
                                                          rel=0.05)
    assert sampled.diameter <= exact.diameter
    # Sources in small batches give the same distribution.
    import webcrawl.analysis.graph.smallworld_alg as sw
    old = sw._DISTANCE_BLOCK_BYTES
    try:
        sw._DISTANCE_BLOCK_BYTES = 8 * 300 * 7
        np.testing.assert_array_equal(path_lengths(adj, sources=60, seed=2).distribution,
                                      sampled.distribution)
    finally:
        sw._DISTANCE_BLOCK_BYTES = old


def test_smallworld_and_growth_along_crawl_order():
    adj = _random_digraph(120, 700, 7)
    rng = np.random.default_rng(0)
    order = rng.permutation(120)
    graph = CapturedGraph.from_edges(*adj.nonzero(), 120, fetch_order=order)
    series = smallworld_along_order(graph, checkpoints=[30, 60, 120], sources=None)
    assert series.sizes.tolist() == [30, 60, 120]
    for k, size in enumerate(series.sizes):
        nodes = order[:size]
        sub = adj[nodes][:, nodes]
        g = _nx_undirected(sub)
        assert series.average_clustering[k] == pytest.approx(nx.average_clustering(g))
        assert series.links[k] == sub.nnz
        sw = smallworld(sub)
        assert series.directed_length[k] == pytest.approx(sw.directed.characteristic_length)
        assert series.undirected_diameter[k] == sw.undirected.diameter
    full = smallworld(adj)
    assert series.transitivity[-1] == pytest.approx(full.clustering.transitivity)
    assert smallworld_along_order(graph, checkpoints=4, sources=10).sizes.tolist() == [
        30, 60, 90, 120]


def test_undirected_simple_drops_loops_and_direction():
    adj = sp.csr_array((np.array([2.0, 1.0, 1.0]), ([0, 1, 2], [1, 0, 2])), shape=(3, 3))
    u = undirected_simple(adj)
    assert u.toarray().tolist() == [[0, 1, 0], [1, 0, 0], [0, 0, 0]]


def test_bad_input():
    adj = sp.csr_array((3, 3))
    with pytest.raises(ConfigError):
        path_lengths(adj, sources=0)
    with pytest.raises(ConfigError):
        path_lengths(adj, sources=[5])
    with pytest.raises(EmptyGraphError):
        clustering(sp.csr_array((0, 0)))
    graph = CapturedGraph.from_edges([0], [1], 3)
    with pytest.raises(ConfigError):
        smallworld_along_order(graph, checkpoints=[10])
