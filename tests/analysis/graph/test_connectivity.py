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
