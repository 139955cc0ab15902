from __future__ import annotations

import doctest
import importlib

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from webcrawl.analysis.graph.hits_alg import hits
from webcrawl.storage.errors import ConfigError, EmptyGraphError, PowerIterationFailedConvergence


def reference_hits(edges, n, iterations=3000):
    """Pure-Python Kleinberg iteration, for small graphs."""
    a = [1.0 / n] * n
    h = [0.0] * n
    for _ in range(iterations):
        h = [0.0] * n
        for u, v, w in edges:
            h[u] += w * a[v]
        a = [0.0] * n
        for u, v, w in edges:
            a[v] += w * h[u]
        total = sum(a)
        a = [x / total for x in a]
    h_total = sum(h)
    return np.array([x / h_total for x in h]), np.array(a)


def edge_list(adj):
    coo = adj.tocoo()
    return list(zip(coo.row.tolist(), coo.col.tolist(), coo.data.tolist(), strict=True))


def networkx_hits(adj):
    graph = nx.from_scipy_sparse_array(adj, create_using=nx.DiGraph)
    hubs, auths = nx.hits(graph, tol=1e-14, max_iter=100_000)
    n = adj.shape[0]
    return np.array([hubs[i] for i in range(n)]), np.array([auths[i] for i in range(n)])


GRAPHS = {
    "sparse-dangling": dict(n=60, m=150, seed=1, dangling_fraction=0.3),
    "dense": dict(n=40, m=500, seed=2, dangling_fraction=0.1),
    "mostly-dangling": dict(n=80, m=200, seed=4, dangling_fraction=0.6),
    "no-selfloops": dict(n=70, m=300, seed=5, self_loops=False),
}


@pytest.mark.parametrize("spec", GRAPHS.values(), ids=GRAPHS.keys())
def test_agrees_with_networkx(spec, random_digraph):
    adj = random_digraph(**spec)
    res = hits(adj)
    nx_hubs, nx_auths = networkx_hits(adj)
    assert np.abs(res.authorities - nx_auths).sum() < 1e-6
    assert np.abs(res.hubs - nx_hubs).sum() < 1e-6
    assert res.hubs.sum() == pytest.approx(1) and res.authorities.sum() == pytest.approx(1)
    assert (res.hubs >= 0).all() and (res.authorities >= 0).all()


@pytest.mark.parametrize("spec", list(GRAPHS.values())[:2], ids=list(GRAPHS)[:2])
def test_agrees_with_pure_python_reference(spec, random_digraph):
    adj = random_digraph(**spec)
    ref_hubs, ref_auths = reference_hits(edge_list(adj), adj.shape[0])
    res = hits(adj)
    assert np.abs(res.authorities - ref_auths).sum() < 1e-8
    assert np.abs(res.hubs - ref_hubs).sum() < 1e-8


def test_authorities_are_principal_eigenvector(random_digraph):
    adj = random_digraph(n=50, m=300, seed=12)
    res = hits(adj, tol=1e-13)
    dense = adj.toarray()
    _, vectors = np.linalg.eigh(dense.T @ dense)
    top = np.abs(vectors[:, -1]) / np.abs(vectors[:, -1]).sum()
    assert np.abs(res.authorities - top).sum() < 1e-8


def test_hand_made_star():
    # One hub pointing at three pages: all hub weight on 0, authority split evenly.
    adj = sp.csr_array(([1.0, 1.0, 1.0], ([0, 0, 0], [1, 2, 3])), shape=(5, 5))
    res = hits(adj)
    np.testing.assert_allclose(res.hubs, [1, 0, 0, 0, 0], atol=1e-12)
    np.testing.assert_allclose(res.authorities, [0, 1 / 3, 1 / 3, 1 / 3, 0], atol=1e-12)


def test_link_multiplicity_is_a_weight():
    # 0 links twice to 1 and once to 2: authority of 1 is twice that of 2.
    adj = sp.csr_array(([2.0, 1.0], ([0, 0], [1, 2])), shape=(3, 3))
    res = hits(adj)
    assert res.authorities[1] == pytest.approx(2 * res.authorities[2])


def test_no_links_is_an_error():
    with pytest.raises(EmptyGraphError):
        hits(sp.csr_array((4, 4)))


def test_not_converged_raises(random_digraph):
    adj = random_digraph(n=100, m=300, seed=2)
    with pytest.raises(PowerIterationFailedConvergence) as info:
        hits(adj, max_iter=2)
    assert info.value.max_iter == 2 and info.value.residual > 1e-10


@pytest.mark.parametrize("kwargs", [dict(tol=0), dict(max_iter=0), dict(x0=[1, 2])],
                         ids=["tol", "max_iter", "x0-length"])
def test_bad_parameters(kwargs):
    with pytest.raises(ConfigError):
        hits(sp.eye_array(3, format="csr"), **kwargs)


def test_docstring_examples_run():
    module = importlib.import_module("webcrawl.analysis.graph.hits_alg")
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0
