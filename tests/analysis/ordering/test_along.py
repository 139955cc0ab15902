"""Measurements along a crawl, and Bennouas' random web crawls against the paper."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from webcrawl.analysis.graph.captured import CapturedGraph
from webcrawl.analysis.ordering.along import measure_along, pagerank_power_law
from webcrawl.analysis.ordering.randomweb import random_web_crawl
from webcrawl.analysis.ordering.randomweb_figures import PAPER_RANGES, paper_curve
from webcrawl.storage.errors import ConfigError


def _in_range(key: str, value: float) -> bool:
    lo, hi, _ = PAPER_RANGES[key]
    return bool(lo <= value <= hi)


@pytest.fixture(scope="module")
def bennouas_bfs():
    """The paper's parameters (Zipf 2.1 in, 2.72 out), one seed, BFS, 1% of n crawled."""
    web = random_web_crawl(1_000_000, "BFS", max_pages=10_000, seed=1)
    return measure_along(web.graph, [100, 250, 630, 1600, 4000, 10_000])


def test_degree_and_pagerank_laws_hold_at_every_step(bennouas_bfs):
    v = bennouas_bfs.values
    # Figures 1-2: "at any step of the crawl ... a Zipf law of the given parameters".
    assert all(_in_range("in_exponent", a) for a in v["in_exponent"])
    assert all(_in_range("out_exponent", a) for a in v["out_exponent"])
    # Figure 10: PageRank a Zipf law with exponent 2.1, reached quickly.
    assert all(_in_range("pagerank_exponent", a) for a in v["pagerank_exponent"][1:])


def test_discovery_rate_rises_toward_forty_percent(bennouas_bfs):
    d = bennouas_bfs.values["discovery"]
    assert np.all(np.diff(d) > 0)
    assert _in_range("discovery", d[-1]) and d[-1] > 0.35


def test_44_cores_counted_as_the_paper_counts_them(bennouas_bfs):
    # Section 5.4: "(4,4)-cores (at least four hubs and four authorities)".  By that
    # count our crawls hold several times figure 9's n/100-n/50 band (stated in
    # docs/reproductions/random-web-crawls.md); the count by exact size, a diagnostic,
    # is the smaller one and is the one that lands in the band.
    at_least, exact = bennouas_bfs.values["cores44"], bennouas_bfs.values["cores44_exact"]
    assert np.all(at_least >= exact)
    assert at_least[-1] > PAPER_RANGES["cores44"][1]
    assert _in_range("cores44", exact[-1])


def test_sinks_in_the_published_range_early(bennouas_bfs):
    s = bennouas_bfs.values["sinks"]
    # Figure 13 (20-50%): holds for the first few hundred pages; later our crawls
    # have fewer sinks (see docs/reproductions/random-web-crawls.md).
    assert all(_in_range("sinks", x) for x in s[:3])
    assert np.all(np.diff(s) < 0)


@pytest.fixture(scope="module")
def bennouas_counts():
    """Degrees by the paper's own Zipf law (k d^-gamma pages of degree d), BFS, 2% of n."""
    web = random_web_crawl(1_000_000, "BFS", max_pages=20_000, degree_law="counts", seed=1)
    return measure_along(web.graph, [1000, 2115, 4472, 9457, 20_000],
                         ["degrees", "sinks", "discovery", "bowtie"])


def test_counts_law_discovery_rate_follows_figure_12(bennouas_counts):
    d = bennouas_counts.values["discovery"]
    pages = bennouas_counts.pages
    # Figure 12's law 4.4 ln x - 31.46 (%) is about 0 at 1,000 pages and rises with
    # ln x; the crawl's rate starts near 0 and stays within 10 points of the law.
    assert np.all(np.diff(d) > 0) and d[0] < 0.02
    assert np.all(np.abs(d[2:] - paper_curve("discovery", pages[2:])) < 0.1)


def test_counts_law_sinks_and_scc_in_the_published_ranges(bennouas_counts):
    v = bennouas_counts.values
    # Figure 13: sinks fall with the crawl and lie in 20-50%; figure 7: the largest
    # SCC grows toward two thirds (0.4-0.7 plotted).
    assert np.all(np.diff(v["sinks"]) < 0)
    assert all(_in_range("sinks", x) for x in v["sinks"][-2:])
    assert _in_range("scc", v["scc"][-1]) and np.all(np.diff(v["scc"]) > 0)
    # Figure 1: the out-degree law holds at every step.
    assert all(_in_range("out_exponent", a) for a in v["out_exponent"])


def _networkx_reference(adj, order, k):
    nodes = order[:k]
    g = nx.DiGraph()
    g.add_nodes_from(range(k))
    sub = adj[nodes][:, nodes].tocoo()
    g.add_edges_from((int(r), int(c)) for r, c in zip(sub.row, sub.col, strict=True)
                     if r != c)
    scc = max(nx.strongly_connected_components(g), key=len)
    succ = {u for u in g if any(True for _ in g.successors(u))}
    return len(scc) / k, nx.average_clustering(g.to_undirected()), 1 - len(succ) / k


@pytest.mark.parametrize("seed", [0, 1], ids=lambda s: f"seed{s}")
def test_along_matches_networkx_on_a_random_crawl(seed):
    rng = np.random.default_rng(seed)
    n, m = 300, 900
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    order = rng.permutation(n)
    g = CapturedGraph.from_edges(src, dst, n, fetch_order=order, seeds=[order[0]])
    a = measure_along(g, [50, 150, 300], ["sinks", "bowtie", "clustering"])
    for p, k in enumerate([50, 150, 300]):
        scc, clust, sinks = _networkx_reference(g.adjacency.tocsr(), order, k)
        assert a.values["scc"][p] == pytest.approx(scc)
        assert a.values["clustering"][p] == pytest.approx(clust)
        assert a.values["sinks"][p] == pytest.approx(sinks)


def test_cores_along_a_hand_made_crawl():
    # Pages 0-3 fans of centers 4-7 (a K(4,4)); crawled in index order.
    src = np.repeat(np.arange(4), 4)
    dst = np.tile(np.arange(4, 8), 4)
    g = CapturedGraph.from_edges(src, dst, 8, fetch_order=np.arange(8), seeds=[0])
    a = measure_along(g, [4, 8], ["cores"])
    # After 4 pages the centers are not crawled yet: no core; after 8 one of 8 pages.
    assert a.values["cores44"].tolist() == [0.0, 1 / 8]
    assert a.values["cores44_exact"].tolist() == [0.0, 1 / 8]


def test_cores_of_at_least_four_and_four_count_larger_ones():
    # A K(5, 5) (pages 0-4 fans of 5-9): one core of at least 4 fans and 4 centers
    # (the paper's count), none of exactly 4 and 4.
    src = np.repeat(np.arange(5), 5)
    dst = np.tile(np.arange(5, 10), 5)
    g = CapturedGraph.from_edges(src, dst, 10, fetch_order=np.arange(10), seeds=[0])
    a = measure_along(g, [10], ["cores"])
    assert a.values["cores44"].tolist() == [1 / 10]
    assert a.values["cores44_exact"].tolist() == [0.0]


def test_pagerank_power_law_recovers_pareto_exponents():
    rng = np.random.default_rng(3)
    for alpha in (1.8, 2.1, 2.6):
        x = 5.0 * (1 - rng.random(30_000)) ** (-1 / (alpha - 1))
        fit, x_min = pagerank_power_law(x)
        assert fit == pytest.approx(alpha, abs=0.06) and x_min >= 5.0


def test_bad_measures_and_checkpoints():
    g = CapturedGraph.from_edges([0], [1], 2, fetch_order=[0, 1], seeds=[0])
    with pytest.raises(ConfigError, match="measure"):
        measure_along(g, 2, ["nope"])
    with pytest.raises(ConfigError, match="checkpoints"):
        measure_along(g, [3])
