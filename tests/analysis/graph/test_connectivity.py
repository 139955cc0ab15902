"""Reachability and components against networkx, on random graphs."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from webcrawl.analysis.graph import connectivity
from webcrawl.analysis.graph.connectivity import components, reachable, transposed


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("path", ["compiled", "numpy", "numpy-parts-of-7-links"])
def test_reachable_matches_networkx(random_digraph, monkeypatch: pytest.MonkeyPatch,
                                    seed: int, path: str) -> None:
    if path == "compiled":
        pytest.importorskip("numba")
    else:
        monkeypatch.setattr(connectivity, "compiled", lambda *_: None)
    if path.endswith("7-links"):
        monkeypatch.setattr(connectivity, "_FRONTIER_LINKS", 7)
    adj = random_digraph(300, 450, seed)
    g = nx.from_scipy_sparse_array(adj, create_using=nx.DiGraph)
    sources = np.random.default_rng(seed).choice(300, 3, replace=False)
    expected = set(sources.tolist()).union(*(nx.descendants(g, int(s)) for s in sources))
    assert set(np.flatnonzero(reachable(adj, sources)).tolist()) == expected
    assert not reachable(adj, []).any()


@pytest.mark.parametrize("seed", range(4))
def test_weak_components_and_transpose(random_digraph, seed: int) -> None:
    adj = random_digraph(400, 300, seed)
    g = nx.from_scipy_sparse_array(adj, create_using=nx.DiGraph)
    weak = components(adj, "weak")
    expected = list(nx.weakly_connected_components(g))
    assert weak.count == len(expected)
    assert weak.largest_size == max(len(c) for c in expected)
    for comp in expected:  # one label per networkx component, distinct across them
        assert len({int(weak.labels[v]) for v in comp}) == 1
    indptr, indices = transposed(adj)
    back = {(int(j), int(i)) for i in range(400) for j in indices[indptr[i]:indptr[i + 1]]}
    assert back == set(g.edges())


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("path", ["compiled", "scipy"])
def test_strong_components_match_networkx_in_reverse_topological_order(
        random_digraph, monkeypatch: pytest.MonkeyPatch, seed: int, path: str) -> None:
    """The same partition as networkx, each link's target in its source's component or
    a lower-numbered one (the bow-tie's pass relies on it), on both paths; deep
    chains too (the compiled search's explicit stack)."""
    if path == "compiled":
        pytest.importorskip("numba")
    else:
        monkeypatch.setattr(connectivity, "compiled", lambda *_: None)
    adj = random_digraph(400, 300 + 150 * seed, seed)
    chain = np.arange(399)
    adj = adj + connectivity.sp.csr_array((np.ones(399), (chain, chain + 1)), shape=(400, 400))
    g = nx.from_scipy_sparse_array(adj, create_using=nx.DiGraph)
    strong = components(adj)
    expected = list(nx.strongly_connected_components(g))
    assert strong.count == len(expected)
    assert strong.largest_size == max(len(c) for c in expected)
    for comp in expected:
        assert len({int(strong.labels[v]) for v in comp}) == 1
    src = np.repeat(np.arange(400), np.diff(adj.indptr))
    assert (strong.labels[src] >= strong.labels[adj.indices]).all()
