from __future__ import annotations

import doctest
import importlib

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from webcrawl.analysis.graph.captured import CapturedGraph
from webcrawl.analysis.graph.pagerank_alg import pagerank, transition_transpose
from webcrawl.storage.errors import ConfigError, EmptyGraphError, PowerIterationFailedConvergence


def reference_pagerank(edges, n, alpha=0.85, p=None, d=None, iterations=2000):
    """Pure-Python PageRank straight from the formula, for small graphs."""
    p = p or [1.0 / n] * n
    d = d or p
    out = [0.0] * n
    for u, _v, w in edges:
        out[u] += w
    x = [1.0 / n] * n
    for _ in range(iterations):
        dangling_mass = sum(x[u] for u in range(n) if out[u] == 0)
        new = [alpha * dangling_mass * d[v] + (1 - alpha) * p[v] for v in range(n)]
        for u, v, w in edges:
            new[v] += alpha * x[u] * w / out[u]
        x = new
    return np.array(x)


def edge_list(adj):
    coo = adj.tocoo()
    return list(zip(coo.row.tolist(), coo.col.tolist(), coo.data.tolist(), strict=True))


def networkx_pagerank(adj, alpha=0.85, p=None, d=None):
    graph = nx.from_scipy_sparse_array(adj, create_using=nx.DiGraph)

    def as_dict(v):
        return None if v is None else dict(enumerate(np.asarray(v, float).tolist()))

    result = nx.pagerank(graph, alpha=alpha, personalization=as_dict(p), dangling=as_dict(d),
                         tol=1e-13, max_iter=100_000, weight="weight")
    return np.array([result[i] for i in range(adj.shape[0])])


def exact_pagerank(adj, alpha=0.85, p=None, d=None):
    """Solve the linear system (I - alpha G^T) x = (1 - alpha) p directly."""
    n = adj.shape[0]
    p = np.full(n, 1 / n) if p is None else np.asarray(p, float) / np.sum(p)
    d = p if d is None else np.asarray(d, float) / np.sum(d)
    dense = adj.toarray()
    out = dense.sum(axis=1)
    stochastic = np.where(out[:, None] > 0, dense / np.where(out > 0, out, 1)[:, None], d)
    return np.linalg.solve(np.eye(n) - alpha * stochastic.T, (1 - alpha) * p)


GRAPHS = {
    "sparse-dangling": dict(n=60, m=120, seed=1, dangling_fraction=0.3),
    "dense-selfloops": dict(n=40, m=400, seed=2, dangling_fraction=0.1),
    "no-dangling": dict(n=50, m=300, seed=3, dangling_fraction=0.0),
    "mostly-dangling": dict(n=80, m=100, seed=4, dangling_fraction=0.7),
    "no-selfloops": dict(n=70, m=250, seed=5, self_loops=False),
}


@pytest.fixture(params=["compiled", "threads", "numpy"])
def step_path(request, monkeypatch: pytest.MonkeyPatch) -> str:
    """The walk step's three paths: compiled on one thread; compiled with the rows cut
    into runs of a few links on three threads; scipy's product (no numba)."""
    from webcrawl.analysis.graph import pagerank_alg

    if request.param == "numpy":
        monkeypatch.setattr(pagerank_alg, "compiled", lambda *_: None)
    else:
        pytest.importorskip("numba")
    if request.param == "threads":
        monkeypatch.setattr(pagerank_alg, "_LINKS_PER_THREAD", 7)
        monkeypatch.setattr(pagerank_alg, "worker_count", lambda: 3)
    return str(request.param)


@pytest.mark.parametrize("spec", GRAPHS.values(), ids=GRAPHS.keys())
@pytest.mark.parametrize("alpha", [0.85, 0.5, 0.99], ids=["a85", "a50", "a99"])
def test_agrees_with_networkx(spec, alpha, random_digraph, step_path):
    adj = random_digraph(**spec)
    ours = pagerank(adj, alpha).scores
    assert np.abs(ours - networkx_pagerank(adj, alpha)).sum() < 1e-6
    assert ours.sum() == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("spec", GRAPHS.values(), ids=GRAPHS.keys())
def test_personalization_and_dangling_agree_with_networkx(spec, random_digraph, step_path):
    adj = random_digraph(**spec)
    rng = np.random.default_rng(spec["seed"])
    p = rng.random(spec["n"]) * (rng.random(spec["n"]) < 0.5)  # zeros in places
    p[0] = 1.0
    d = rng.random(spec["n"])
    ours = pagerank(adj, personalization=p, dangling=d).scores
    assert np.abs(ours - networkx_pagerank(adj, p=p, d=d)).sum() < 1e-6
    only_p = pagerank(adj, personalization=p).scores
    assert np.abs(only_p - networkx_pagerank(adj, p=p)).sum() < 1e-6


@pytest.mark.parametrize("spec", list(GRAPHS.values())[:3], ids=list(GRAPHS)[:3])
def test_agrees_with_pure_python_reference(spec, random_digraph):
    adj = random_digraph(**spec)
    ref = reference_pagerank(edge_list(adj), adj.shape[0])
    assert np.abs(pagerank(adj).scores - ref).sum() < 1e-9


def test_reference_agrees_with_personalization(random_digraph):
    adj = random_digraph(n=30, m=80, seed=9)
    p = list(np.linspace(0, 1, 30) / np.linspace(0, 1, 30).sum())
    d = [1.0 if i == 3 else 0.0 for i in range(30)]
    ref = reference_pagerank(edge_list(adj), 30, p=p, d=d)
    assert np.abs(pagerank(adj, personalization=p, dangling=d).scores - ref).sum() < 1e-9


@pytest.mark.parametrize("tol", [1e-4, 1e-8, 1e-12])
def test_stopping_rule_bounds_the_error(tol, random_digraph):
    """After stopping, the L1 distance to the exact answer is at most residual*a/(1-a)."""
    adj = random_digraph(n=100, m=400, seed=7)
    res = pagerank(adj, tol=tol)
    exact = exact_pagerank(adj)
    assert res.residual < tol
    assert np.abs(res.scores - exact).sum() <= res.residual * 0.85 / 0.15 + 1e-14


def test_networkx_rule_stops_early_ours_does_not(random_digraph):
    """networkx's N*tol threshold loosens with N; ours holds the vector to tol."""
    adj = random_digraph(n=2000, m=8000, seed=11)
    graph = nx.from_scipy_sparse_array(adj, create_using=nx.DiGraph)
    loose = nx.pagerank(graph, tol=1e-4)  # threshold 0.2 in L1
    loose_vec = np.array([loose[i] for i in range(2000)])
    exact = exact_pagerank(adj)
    assert np.abs(loose_vec - exact).sum() > 1e-3
    assert np.abs(pagerank(adj, tol=1e-4).scores - exact).sum() < 1e-3


def test_hand_made_cycle_is_uniform():
    adj = sp.csr_array(([1.0, 1.0, 1.0, 1.0], ([0, 1, 2, 3], [1, 2, 3, 0])), shape=(4, 4))
    res = pagerank(adj)
    np.testing.assert_allclose(res.scores, 0.25)
    assert res.iterations == 1 and res.residual == 0.0


def test_two_nodes_closed_form():
    # 0 -> 1, node 1 dangling: x1 = a*x0 + a*x1/2 + (1-a)/2 ... solve by hand:
    # x0 = a*x1/2 + (1-a)/2, x1 = 1 - x0  =>  x0 = 1 / (2 + a).
    adj = sp.csr_array(([1.0], ([0], [1])), shape=(2, 2))
    alpha = 0.85
    scores = pagerank(adj, alpha, tol=1e-14).scores
    np.testing.assert_allclose(scores, [1 / (2 + alpha), 1 - 1 / (2 + alpha)], atol=1e-13)


def test_duplicate_links_are_weights():
    # Node 0 links twice to 1 and once to 2: 1 gets twice 2's share of 0's rank.
    adj = sp.csr_array(([1.0, 1.0, 1.0], ([0, 0, 0], [1, 1, 2])), shape=(3, 3))
    p_t, dangling = transition_transpose(adj)
    assert p_t[1, 0] == pytest.approx(2 / 3) and p_t[2, 0] == pytest.approx(1 / 3)
    np.testing.assert_array_equal(dangling, [False, True, True])
    np.testing.assert_allclose(pagerank(adj).scores, exact_pagerank(adj), atol=1e-9)


def test_alpha_zero_returns_personalization(random_digraph):
    adj = random_digraph(n=20, m=50, seed=3)
    p = np.arange(20, dtype=float)
    res = pagerank(adj, 0.0, personalization=p)
    np.testing.assert_allclose(res.scores, p / p.sum())


def test_mean_normalisation_sums_to_n(random_digraph):
    adj = random_digraph(n=50, m=200, seed=5)
    s = pagerank(adj).scores
    mean = pagerank(adj, normalize="mean").scores
    np.testing.assert_allclose(mean, s * 50)
    assert mean.mean() == pytest.approx(1.0)


def test_x0_changes_path_not_answer(random_digraph):
    adj = random_digraph(n=50, m=200, seed=6)
    base = pagerank(adj)
    warm = pagerank(adj, x0=base.scores)
    assert warm.iterations < base.iterations
    assert np.abs(warm.scores - base.scores).sum() < 1e-9


def test_accepts_matrix_types_and_captured_graph(random_digraph):
    adj = random_digraph(n=30, m=90, seed=8)
    expected = pagerank(adj).scores
    graph = CapturedGraph.from_edges(*adj.nonzero(), n=30)
    for value in (sp.csr_matrix(adj), adj.tocoo(), adj.toarray(), graph):
        got = pagerank(value).scores
        if value is graph:  # from_edges collapses weights to 1
            got_ref = pagerank((adj > 0).astype(float)).scores
            np.testing.assert_allclose(got, got_ref)
        else:
            np.testing.assert_allclose(got, expected)


def test_not_converged_raises_with_residual(random_digraph):
    adj = random_digraph(n=100, m=300, seed=2)
    with pytest.raises(PowerIterationFailedConvergence) as info:
        pagerank(adj, max_iter=3)
    assert info.value.max_iter == 3
    assert info.value.residual is not None and info.value.residual > 1e-10


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        (dict(adjacency=sp.csr_array((2, 3))), ConfigError),
        (dict(adjacency=sp.csr_array((0, 0))), EmptyGraphError),
        (dict(adjacency=sp.csr_array(np.array([[0.0, -1.0], [1.0, 0.0]]))), ConfigError),
        (dict(adjacency=sp.eye_array(3, format="csr"), alpha=1.5), ConfigError),
        (dict(adjacency=sp.eye_array(3, format="csr"), tol=0.0), ConfigError),
        (dict(adjacency=sp.eye_array(3, format="csr"), max_iter=0), ConfigError),
        (dict(adjacency=sp.eye_array(3, format="csr"), normalize="max"), ConfigError),
        (dict(adjacency=sp.eye_array(3, format="csr"), personalization=[1, 2]), ConfigError),
        (dict(adjacency=sp.eye_array(3, format="csr"), personalization=[0, 0, 0]), ConfigError),
        (dict(adjacency=sp.eye_array(3, format="csr"), dangling=[1, -1, 1]), ConfigError),
    ],
    ids=["non-square", "empty", "negative", "alpha", "tol", "max_iter", "normalize",
         "p-length", "p-zero", "d-negative"],
)
def test_bad_input_raises(kwargs, error):
    with pytest.raises(error):
        pagerank(**kwargs)


def test_docstring_examples_run():
    module = importlib.import_module("webcrawl.analysis.graph.pagerank_alg")
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0


def test_loaded_graph_values_shared_one(random_digraph, step_path: str) -> None:
    """The loader's collapsed graph stores its values as one shared 1.0 (zero-stride):
    PageRank on it equals PageRank on the same links with real values."""
    adj = random_digraph(300, 1200, 4)
    adj.data[:] = 1.0
    shared = sp.csr_array((np.broadcast_to(np.float64(1.0), (adj.nnz,)), adj.indices,
                           adj.indptr), shape=adj.shape)
    assert shared.data.strides == (0,)
    ours = pagerank(shared, tol=1e-13).scores
    assert np.abs(ours - pagerank(adj, tol=1e-13).scores).sum() < 1e-12


def test_row_runs_cover_the_rows_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """The threads' row runs: contiguous, each row in one run, about equal links."""
    from webcrawl.analysis.graph import pagerank_alg

    indptr = np.array([0, 0, 5, 5, 6, 20, 20, 21, 30])
    assert pagerank_alg._row_runs(indptr, 2) == [0, 8]  # 30 links: too few for a thread
    monkeypatch.setattr(pagerank_alg, "_LINKS_PER_THREAD", 1)
    assert pagerank_alg._row_runs(indptr, 1) == [0, 8]
    assert pagerank_alg._row_runs(indptr, 2) == [0, 5, 8]  # rows 0-4: 20 links, 5-7: 10
    for parts in (3, 5, 40):
        bounds = pagerank_alg._row_runs(indptr, parts)
        assert bounds[0] == 0 and bounds[-1] == 8 and len(bounds) <= parts + 1
        assert (np.diff(bounds) > 0).all()
