"""Random-walk samplers: uniform where the paper says so, biased where it says so."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats
from scipy.sparse import csgraph
from webcrawl.analysis.graph.captured import CapturedGraph
from webcrawl.analysis.sampling.walks import (
    METHODS,
    PageSample,
    SamplerConfig,
    bias_report,
    sample_pages,
)
from webcrawl.storage.errors import AnalysisError, ConfigError

N_STAR = 21
UNIFORM_P = 1e-3  # a correct sampler passes at this level with the fixed seeds
BIASED_P = 1e-10  # a biased one fails far below it


def star_with_ring(n=N_STAR):
    """Hub 0 <-> every leaf, leaves in a directed ring: in-degrees 20 vs 2."""
    src, dst = [], []
    for leaf in range(1, n):
        src += [0, leaf, leaf]
        dst += [leaf, 0, leaf % (n - 1) + 1]
    return sp.csr_array((np.ones(len(src)), (src, dst)), shape=(n, n))


def zipf_web(n, seed):
    """A directed graph with Zipf in-degree (2.1) and out-degree (2.72) laws."""
    rng = np.random.default_rng(seed)
    out = np.minimum(rng.zipf(2.72, n), n - 1)
    weight = np.minimum(rng.zipf(2.1, n), n).astype(float)
    src = np.repeat(np.arange(n), out)
    dst = rng.choice(n, src.size, p=weight / weight.sum())
    keep = src != dst
    adj = sp.csr_array((np.ones(int(keep.sum())), (src[keep], dst[keep])), shape=(n, n))
    adj.sum_duplicates()
    adj.data[:] = 1.0
    return adj


def crawl_of(adj, seed_node):
    """The part of ``adj`` a crawler starting at ``seed_node`` captures, and its seed."""
    reached = np.sort(csgraph.breadth_first_order(adj, seed_node, return_predecessors=False))
    return adj[reached][:, reached], int(np.searchsorted(reached, seed_node))


def _uniformity_pvalue(sample: PageSample, n: int) -> float:
    return float(stats.chisquare(np.bincount(sample.nodes, minlength=n)).pvalue)


CONFIG = SamplerConfig(walkers=16, burn_in=50, walk_length=100)


@pytest.mark.parametrize(("method", "config"), [
    ("undirected", CONFIG),
    ("directed", CONFIG),
    ("directed-jump", CONFIG),
    # Records every 2 x degree bound steps: far enough apart to be nearly independent.
    ("regular", SamplerConfig(walkers=16, burn_in=50, walk_length=100, thin=40)),
], ids=["undirected", "directed", "directed-jump", "regular"])
@pytest.mark.parametrize("seed", [0, 1], ids=lambda s: f"seed{s}")
def test_uniform_samplers_pass_chi_square_on_star(method, config, seed):
    adj = star_with_ring()
    s = sample_pages(adj, 3000, method, config, seed=seed)
    assert s.nodes.size == 3000 and s.population.all()
    assert _uniformity_pvalue(s, N_STAR) > UNIFORM_P
    # The hub (in-degree 20, 1 page of 21) is not over-sampled.
    assert np.mean(s.nodes == 0) == pytest.approx(1 / N_STAR, abs=0.015)


@pytest.mark.parametrize("seed", [0, 1], ids=lambda s: f"seed{s}")
def test_plain_walk_fails_the_same_test(seed):
    adj = star_with_ring()
    s = sample_pages(adj, 3000, "plain", CONFIG, seed=seed)
    assert _uniformity_pvalue(s, N_STAR) < BIASED_P
    # Its law is degree / 2|E|: the hub has 40 of 120 link ends.
    assert np.mean(s.nodes == 0) == pytest.approx(40 / 120, abs=0.03)


def test_pagerank_sample_is_biased_toward_high_in_degree():
    web = zipf_web(6000, seed=1)
    adj, seed = crawl_of(web, int(np.argmax(np.diff(web.indptr))))
    graph = CapturedGraph.from_edges(*adj.nonzero(), adj.shape[0], seeds=[seed])
    assert graph.n > 500
    config = SamplerConfig(walkers=16, burn_in=100, walk_length=50)
    biased = bias_report(adj, sample_pages(graph, 1000, "pagerank", config, seed=3))
    assert biased.population == graph.n
    assert biased.in_degree.sample_mean > 1.2 * biased.in_degree.true_mean
    assert biased.in_degree.chi2_pvalue < BIASED_P
    # The undirected sampler on the same graph and budget is not.
    fair = bias_report(adj, sample_pages(graph, 1000, "undirected", config, seed=3))
    assert fair.in_degree.chi2_pvalue > UNIFORM_P
    assert fair.in_degree.ks_statistic < biased.in_degree.ks_statistic / 2


def test_same_seed_same_sample_and_costs_reported():
    adj = star_with_ring()
    for method in METHODS:
        a = sample_pages(adj, 200, method, CONFIG, seed=7)
        b = sample_pages(adj, 200, method, CONFIG, seed=7)
        np.testing.assert_array_equal(a.nodes, b.nodes)
        assert a.traversals >= CONFIG.walkers * (CONFIG.burn_in + CONFIG.walk_length)
        assert a.candidates >= 200 and 1 <= a.visited <= N_STAR


def test_walks_stay_in_the_start_component():
    # Two disjoint triangles; walks start on the first.
    src, dst = [0, 1, 2, 3, 4, 5], [1, 2, 0, 4, 5, 3]
    adj = sp.csr_array((np.ones(6), (src, dst)), shape=(6, 6))
    for method in ("directed", "undirected", "regular", "plain", "pagerank"):
        s = sample_pages(adj, 100, method, CONFIG, seed=0, starts=[0])
        assert set(s.nodes.tolist()) <= {0, 1, 2}
        assert s.population.tolist() == [True] * 3 + [False] * 3
    # The jump variant jumps anywhere.
    s = sample_pages(adj, 300, "directed-jump", CONFIG, seed=0)
    assert s.population.all() and set(s.nodes.tolist()) == set(range(6))


def lopsided_scc():
    """A hand-made strongly connected graph whose self-loop walk is far from uniform:
    a cycle 0 -> 1 -> ... -> 7 -> 0 plus shortcuts 3 -> 0, 5 -> 0, 7 -> 1
    (stationary law from 0.038 at page 7 to 0.203 at pages 1 and 2)."""
    src = [*range(8), 3, 5, 7]
    dst = [*(np.arange(8) + 1) % 8, 0, 0, 1]
    return sp.csr_array((np.ones(len(src)), (src, dst)), shape=(8, 8))


def self_loop_stationary(adj):
    """Exact stationary law of the paper's walk: rows of A + I normalised."""
    m = (adj + sp.eye_array(adj.shape[0])).toarray()
    p = m / m.sum(axis=1, keepdims=True)
    vals, vecs = np.linalg.eig(p.T)
    pi = np.real(vecs[:, np.argmin(np.abs(vals - 1))])
    return pi / pi.sum()


def test_directed_walk_follows_links_and_self_loops_without_jumps():
    from webcrawl.analysis.sampling._walker import (
        _directed_arrays,
        _loopless,
        _run,
        _self_loop_step,
        _Walk,
    )
    adj = lopsided_scc()
    pi = self_loop_stationary(adj)
    assert pi.max() > 5 * pi.min()          # far from uniform: reweighting matters
    walk = _Walk(*_directed_arrays(_loopless(adj)), np.zeros(64, np.int64),
                 np.random.default_rng(4), seen=np.zeros(8, bool))
    _run(walk, _self_loop_step, 50, record=False)
    visits = np.bincount(_run(walk, _self_loop_step, 4000, record=True), minlength=8)
    np.testing.assert_allclose(visits / visits.sum(), pi, atol=0.01)
    # Every move is along a link or a stay (the self-loop): no jumps.
    trace = _run(walk, _self_loop_step, 200, record=True).reshape(200, 64)
    moves = trace[1:] != trace[:-1]
    linked = adj.toarray()[trace[:-1], trace[1:]] > 0
    assert (linked | ~moves).all() and (~moves).mean() > 0.2


@pytest.mark.parametrize("seed", [0, 1, 2], ids=lambda s: f"seed{s}")
def test_directed_sample_is_uniform_on_a_strongly_connected_graph(seed):
    adj = lopsided_scc()
    config = SamplerConfig(walkers=16, burn_in=50, walk_length=100, estimate_length=2000)
    s = sample_pages(adj, 4000, "directed", config, seed=seed, starts=[3])
    assert s.population.all()
    assert _uniformity_pvalue(s, 8) > UNIFORM_P
    np.testing.assert_allclose(np.bincount(s.nodes, minlength=8) / 4000, 1 / 8, atol=0.03)


def test_bias_report_by_hand():
    # Node 0 has in-degree 3, nodes 1-3 in-degree 0; out-degrees 0, 1, 1, 1.
    adj = sp.csr_array((np.ones(3), ([1, 2, 3], [0, 0, 0])), shape=(4, 4))
    fair = bias_report(adj, [0, 1, 2, 3] * 10)
    np.testing.assert_allclose(fair.in_degree.ratio[fair.in_degree.true_fraction > 0], 1.0)
    assert fair.in_degree.ks_statistic == 0.0 and fair.in_degree.sample_mean == 0.75
    skewed = bias_report(adj, [0] * 30 + [1] * 10)
    assert skewed.in_degree.bucket_edges.tolist()[:4] == [0, 1, 2, 4]
    # In-degree 3 is bucket [2, 4): a quarter of pages, three quarters of the sample.
    assert skewed.in_degree.ratio[2] == pytest.approx(3.0)
    assert skewed.in_degree.ratio[0] == pytest.approx(1 / 3)
    assert skewed.in_degree.ks_statistic == pytest.approx(0.5)
    assert skewed.distinct == 2 and skewed.size == 40


def test_bad_settings():
    adj = star_with_ring()
    with pytest.raises(ConfigError):
        SamplerConfig(jump=1.0)
    with pytest.raises(ConfigError):
        SamplerConfig(walkers=0)
    with pytest.raises(ConfigError, match="unknown sampling method"):
        sample_pages(adj, 10, "magic")
    with pytest.raises(ConfigError):
        sample_pages(adj, 10, starts=[99])
    with pytest.raises(ConfigError, match="degree_bound"):
        sample_pages(adj, 10, "regular", SamplerConfig(degree_bound=3))
    with pytest.raises(AnalysisError, match="accepted"):
        sample_pages(adj, 10_000, "undirected", SamplerConfig(walkers=1, walk_length=10,
                                                              max_rounds=2))


def test_bias_falls_with_walk_length_on_a_slowly_mixing_graph():
    from webcrawl.analysis.sampling.walk_length import bias_by_walk_length
    # Two dense clusters joined by one link: walks starting in the first stay there
    # for a long time, so short walks over-sample it (its pages have degree 2 x 7).
    k = 8
    src, dst = [], []
    for base in (0, k):
        for a in range(base, base + k):
            for b in range(base, base + k):
                if a != b:
                    src.append(a)
                    dst.append(b)
    src += [0, k, k + 1]                       # the bridge, and a sparse tail on the second
    dst += [k, 0, 2 * k]
    adj = sp.csr_array((np.ones(len(src)), (src, dst)), shape=(2 * k + 1, 2 * k + 1))
    config = SamplerConfig(walkers=512, walk_length=1, max_rounds=1000)
    reports = bias_by_walk_length(adj, 200, [1, 30, 3000], "undirected", config,
                                  seed=0, starts=[5])
    assert [n for n, _ in reports] == [1, 30, 3000]
    share_second = [float(np.mean(np.isin(sample_pages(
        adj, 200, "undirected", dataclasses.replace(config, burn_in=n),
        seed=0, starts=[5]).nodes, np.arange(k, 2 * k + 1)))) for n, _ in reports]
    # Short walks barely leave the start cluster; long ones split evenly (9 of 17 pages).
    assert share_second[0] < 0.15 < share_second[1] < share_second[2]
    assert share_second[-1] == pytest.approx(9 / 17, abs=0.1)
    p_values = [r.out_degree.chi2_pvalue for _, r in reports]
    assert p_values[0] < 1e-4 and p_values[-1] > UNIFORM_P
    assert reports[-1][1].distinct == 2 * k + 1


def scc_with_tails():
    """``lopsided_scc`` (pages 0-7) plus pages outside it: 8 -> 0 (can reach it), 3 -> 9
    (a sink it reaches), 10 -> 11 (apart).  Not strongly connected."""
    core = lopsided_scc().tocoo()
    src = [*core.row.tolist(), 8, 3, 10]
    dst = [*core.col.tolist(), 0, 9, 11]
    return sp.csr_array((np.ones(len(src)), (src, dst)), shape=(12, 12))


@pytest.mark.parametrize("seed", [0, 1], ids=lambda s: f"seed{s}")
def test_directed_sample_walks_the_largest_scc_and_says_so(seed):
    adj = scc_with_tails()
    s = sample_pages(adj, 2000, "directed", CONFIG, seed=seed, starts=[8])
    assert s.population.tolist() == [True] * 8 + [False] * 4
    assert set(s.nodes.tolist()) <= set(range(8))
    assert s.scope == "the largest strongly connected component (8 of 12 pages)"
    assert "strongly connected" in s.scope_reason and "not" in s.scope_reason
    # Uniform over the SCC although its own walk is lopsided (pi from 0.038 to 0.203).
    assert stats.chisquare(np.bincount(s.nodes, minlength=8)[:8]).pvalue > UNIFORM_P
    # Asked for the whole graph from page 8, the walk ends in the sink 9.
    whole = sample_pages(adj, 200, "directed", CONFIG, seed=seed, starts=[8],
                         largest_scc=False)
    assert np.mean(whole.nodes == 9) > 0.9 and "biased" in whole.scope_reason
    assert whole.scope == "the whole graph"


def test_directed_sample_of_a_strongly_connected_graph_is_the_whole_graph():
    s = sample_pages(lopsided_scc(), 100, "directed", CONFIG, seed=0)
    assert s.scope == "the whole graph" and s.population.all()
    assert s.scope_reason.endswith("and this graph is")


def test_directed_sample_of_a_fixture_web_is_uniform_on_its_scc():
    from webcrawl.fixtures import FixtureConfig, FixtureWeb

    n = 60
    web = FixtureWeb.build(FixtureConfig(pages=n, hosts=2, seed=2))
    adj = sp.csr_array((np.ones(web.src.size), (web.src, web.dst)), shape=(n, n))
    n_scc, labels = csgraph.connected_components(adj, directed=True, connection="strong")
    big = labels == np.bincount(labels).argmax()
    assert n_scc > 1 and 50 < big.sum() < n      # the restriction is exercised
    config = SamplerConfig(walkers=16, burn_in=200, walk_length=200, estimate_length=4000,
                           max_rounds=200)
    s = sample_pages(adj, 10 * int(big.sum()), "directed", config, seed=3, starts=[0])
    assert np.array_equal(s.population, big) and big[s.nodes].all()
    counts = np.bincount(s.nodes, minlength=n)[big]
    assert stats.chisquare(counts).pvalue > UNIFORM_P
    assert bias_report(adj, s).in_degree.chi2_pvalue > UNIFORM_P


@pytest.mark.parametrize("graph", ["lopsided", "tails"])
def test_expected_visits_are_the_walks_step_probabilities(graph):
    # The "expected" visit estimate applies P^T to the visit counts: checked against
    # the transition matrices written out densely (A + I rows normalised; the jump
    # walk: (1 - jump) A rows normalised + jump / n, and 1 / n from a page without
    # links).
    from webcrawl.analysis.sampling._walker import (
        _jump_expected,
        _loopless,
        _self_loop_expected,
    )
    adj = lopsided_scc() if graph == "lopsided" else scc_with_tails()
    n = adj.shape[0]
    v = np.random.default_rng(0).integers(0, 50, n).astype(float)
    loopless = _loopless(adj)
    m = loopless.toarray() + np.eye(n)
    p_self = m / m.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(_self_loop_expected(loopless)(v), p_self.T @ v)
    a = adj.toarray()
    deg = a.sum(axis=1, keepdims=True)
    jump = 0.15
    p_jump = np.where(deg > 0, (1 - jump) * a / np.maximum(deg, 1) + jump / n, 1 / n)
    np.testing.assert_allclose(_jump_expected(adj, jump)(v), p_jump.T @ v)
    assert _self_loop_expected(loopless)(v).sum() == pytest.approx(v.sum())


@pytest.mark.parametrize("estimate", ["expected", "counts"])
def test_both_visit_estimates_sample_a_strongly_connected_graph_uniformly(estimate):
    adj = lopsided_scc()
    config = SamplerConfig(walkers=16, burn_in=50, walk_length=100, estimate_length=2000,
                           visit_estimate=estimate)
    s = sample_pages(adj, 4000, "directed", config, seed=0, starts=[3])
    assert _uniformity_pvalue(s, 8) > UNIFORM_P
    with pytest.raises(ConfigError, match="visit_estimate"):
        SamplerConfig(visit_estimate="guess")


def test_site_shares_by_hand():
    # Sites 0 (nodes 0-2), 1 (node 3) and a mirror-merged site 2 (nodes 4-5).
    adj = sp.csr_array((np.ones(3), ([1, 2, 3], [0, 0, 0])), shape=(6, 6))
    sites = np.array([0, 0, 0, 1, 2, 2])
    fair = bias_report(adj, np.arange(6).repeat(5), sites=sites)
    assert fair.sites is not None
    assert fair.sites.names == ["site 0", "site 2", "site 1"]  # most pages first
    np.testing.assert_allclose(fair.sites.true_fraction, [0.5, 1 / 3, 1 / 6])
    np.testing.assert_allclose(fair.sites.ratio, 1.0)
    skewed = bias_report(adj, [3] * 30 + [0] * 30, sites=sites)
    assert skewed.sites is not None
    np.testing.assert_allclose(skewed.sites.ratio, [1.0, 0.0, 3.0])
    assert skewed.sites.chi2_pvalue < 0.01
    assert bias_report(adj, [0, 1], sites=np.zeros(6, int)).sites is None  # one site
    assert bias_report(adj, [0, 1]).sites is None  # a bare matrix: no sites


def test_site_shares_list_the_largest_sites():
    from webcrawl.analysis.sampling.bias import SITES_LISTED

    sites = np.r_[np.zeros(10, int), np.arange(1, SITES_LISTED + 5)]  # 10 pages, then 1s
    n = sites.size
    adj = sp.csr_array((n, n))
    report = bias_report(adj, np.arange(n), sites=sites)
    assert report.sites is not None
    assert len(report.sites.names) == SITES_LISTED + 1
    assert report.sites.names[0] == "site 0" and report.sites.names[-1] == "(other sites)"
    assert report.sites.true_fraction.sum() == pytest.approx(1.0)


def test_directed_sample_at_default_settings_passes_the_pooled_decile_test():
    # The 31-page SCC of a Zipf web (stationary law spanning 36x): pages grouped into
    # deciles of the exact stationary law of the walk on A + I, 12,000 draws pooled over
    # 12 fixed seeds at the default settings.  Too short an estimation phase leaves the
    # rarely visited pages' counts noisy, and dividing by a noisy count over-accepts
    # them (E[1/c] > 1/E[c]): the lowest deciles then hold too many draws.
    adj = zipf_web(400, 0)
    _, labels = csgraph.connected_components(adj, directed=True, connection="strong")
    keep = np.flatnonzero(labels == np.bincount(labels).argmax())
    pi = self_loop_stationary(_loopless_dense(adj[keep][:, keep]))
    decile = np.empty(keep.size, dtype=np.int64)
    decile[np.argsort(pi, kind="stable")] = np.arange(keep.size) * 10 // keep.size
    counts = np.zeros(10)
    for seed in range(12):
        s = sample_pages(adj, 1000, "directed", seed=seed)
        counts += np.bincount(decile[np.searchsorted(keep, s.nodes)], minlength=10)
    share = np.bincount(decile, minlength=10) / keep.size
    assert keep.size == 31 and counts.sum() == 12_000
    assert stats.chisquare(counts, share * counts.sum()).pvalue > UNIFORM_P


def _loopless_dense(adj):
    coo = sp.coo_array(adj)
    off = coo.row != coo.col
    return sp.csr_array((np.ones(int(off.sum())), (coo.row[off], coo.col[off])),
                        shape=adj.shape)
