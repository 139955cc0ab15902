"""The random-web-crawls model (Bennouas and de Montgolfier)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from webcrawl.analysis.graph.pagerank_alg import pagerank
from webcrawl.analysis.ordering.randomweb import GAMMA_IN, GAMMA_OUT, random_web_crawl
from webcrawl.analysis.ordering.randomweb_figures import PAPER_CURVES, paper_curve
from webcrawl.analysis.ordering.virtual import virtual_crawl
from webcrawl.analysis.ordering.zipf_laws import zipf_degree_counts, zipf_degrees
from webcrawl.storage.errors import ConfigError


def _zipf_mle(degrees: np.ndarray, x_min: int) -> tuple[float, float]:
    """Clauset et al.'s discrete MLE approximation and its standard error."""
    tail = degrees[degrees >= x_min].astype(float)
    alpha = 1.0 + tail.size / np.log(tail / (x_min - 0.5)).sum()
    return alpha, (alpha - 1.0) / np.sqrt(tail.size)


@pytest.mark.parametrize("exponent", [GAMMA_IN, GAMMA_OUT, 3.5])
def test_zipf_degrees_follow_the_exponent(exponent: float) -> None:
    d = zipf_degrees(200_000, exponent, np.random.default_rng(1))
    alpha, se = _zipf_mle(d, x_min=6)
    # The approximation is good to about 1% for x_min >= 6.
    assert abs(alpha - exponent) < 4 * se + 0.01 * exponent


def test_zipf_degrees_small_values_match_the_truncated_law() -> None:
    d = zipf_degrees(50_000, 2.72, np.random.default_rng(2), min_degree=3, max_degree=50)
    assert d.min() == 3 and d.max() <= 50
    support = np.arange(3, 51)
    pmf = support**-2.72 / (support**-2.72).sum()
    observed = np.bincount(d - 3, minlength=48)
    # Pool the sparse tail so every expected count is large enough for chi-square.
    expected = pmf * d.size
    cut = 10
    obs = np.append(observed[:cut], observed[cut:].sum())
    exp = np.append(expected[:cut], expected[cut:].sum())
    assert stats.chisquare(obs, exp).pvalue > 1e-3


def test_zipf_degrees_reject_bad_arguments() -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(ConfigError):
        zipf_degrees(10, 1.0, rng)
    with pytest.raises(ConfigError):
        zipf_degrees(10, 2.0, rng, min_degree=0)
    with pytest.raises(ConfigError):
        zipf_degrees(10, 2.0, rng, min_degree=5, max_degree=4)


def _papers_counts(n: int, exponent: float, min_degree: int) -> dict[int, float]:
    """Reference: k d**-gamma over the degrees some page has (k d**-gamma >= 1/2), sum n."""
    top = min_degree
    while True:  # grow the support until the fixed point: plain Python, obviously right
        k = n / sum(d**-exponent for d in range(min_degree, top + 1))
        if k * (top + 1) ** -exponent < 0.5:
            return {d: k * d**-exponent for d in range(min_degree, top + 1)}
        top += 1


@pytest.mark.parametrize(("n", "exponent", "min_degree"),
                         [(1000, GAMMA_IN, 1), (100_000, GAMMA_IN, 1), (100_000, GAMMA_OUT, 3),
                          (7, GAMMA_OUT, 1)],
                         ids=["1e3-in", "1e5-in", "1e5-out-from-3", "tiny"])
def test_zipf_degree_counts_are_k_over_d_to_the_gamma(n: int, exponent: float,
                                                      min_degree: int) -> None:
    # Section 2.2: "the number of vertices with degree d is k d^-gamma".
    d = zipf_degree_counts(n, exponent, np.random.default_rng(4), min_degree=min_degree)
    assert d.size == n and d.min() == min_degree
    want = _papers_counts(n, exponent, min_degree)
    got = np.bincount(d, minlength=max(want) + 2)
    assert got[max(want) + 1:].sum() == 0
    for degree, real in want.items():
        assert abs(got[degree] - real) < 1.0, degree
    # Only the order is random.
    other = zipf_degree_counts(n, exponent, np.random.default_rng(5), min_degree=min_degree)
    assert np.array_equal(np.sort(other), np.sort(d))


def test_counts_law_has_no_hubs_where_sampling_has_them() -> None:
    n = 1_000_000
    rng = np.random.default_rng(6)
    counts, sampled = zipf_degree_counts(n, GAMMA_IN, rng), zipf_degrees(n, GAMMA_IN, rng)
    # Largest degree: about (2k)^(1/gamma) against about n^(1/(gamma - 1)).
    assert counts.max() < 1000 < 20 * 1000 < sampled.max()
    # So the largest page holds a tiny share of L in one reading, percents in the other.
    assert counts.max() / counts.sum() < 1e-3 < 1e-2 < sampled.max() / sampled.sum()


def test_zipf_degree_counts_reject_bad_arguments() -> None:
    rng = np.random.default_rng(0)
    for bad in ({"n": 0, "exponent": 2.0}, {"n": 5, "exponent": 1.0},
                {"n": 5, "exponent": 2.0, "min_degree": 0}):
        with pytest.raises(ConfigError):
            zipf_degree_counts(rng=rng, **bad)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="degree law"):
        random_web_crawl(100, degree_law="poisson")


def test_paper_curves_are_the_published_fits() -> None:
    # Figure 12 "converges toward 40%" (42.5% at 2e7 with the natural log); figure 13
    # ends near 25% at 2e7; figure 6 ends near 0.15 at 5e5.
    assert paper_curve("discovery", [20_000_000])[0] == pytest.approx(0.4251, abs=1e-3)
    assert paper_curve("sinks", [20_000_000])[0] == pytest.approx(0.2475, abs=1e-3)
    assert paper_curve("clustering", [500_000])[0] == pytest.approx(0.1542, abs=1e-3)
    assert set(PAPER_CURVES) == {"discovery", "sinks", "clustering"}
    with pytest.raises(ConfigError):
        paper_curve("scc", [10])
    with pytest.raises(ConfigError):
        paper_curve("sinks", [0])


def test_preset_degrees_follow_the_two_zipf_laws() -> None:
    web = random_web_crawl(100_000, "BFS", max_pages=10, seed=3)
    a_in, se_in = _zipf_mle(web.d_in, x_min=6)
    a_out, se_out = _zipf_mle(web.d_out, x_min=6)
    assert abs(a_in - GAMMA_IN) < 4 * se_in + 0.01 * GAMMA_IN
    assert abs(a_out - GAMMA_OUT) < 4 * se_out + 0.01 * GAMMA_OUT
    # Independent laws.
    assert abs(stats.spearmanr(web.d_in, web.d_out).statistic) < 0.02


@pytest.mark.parametrize("strategy", ["BFS", "DFS", "DEG", "RND"])
def test_links_are_drawn_from_l_at_crawl_time(strategy: str) -> None:
    web = random_web_crawl(3000, strategy, max_pages=900, seed=5)
    g = web.graph
    assert g.crawled.sum() == 900 and web.crawl.fetched == 900
    out_weight = np.asarray(g.adjacency.sum(axis=1)).ravel()
    in_weight = np.asarray(g.adjacency.sum(axis=0)).ravel()
    pages = web.pages
    # L is far from exhausted: each crawled page drew exactly its preset out-degree.
    assert np.array_equal(out_weight[g.crawled], web.d_out[pages[g.crawled]])
    assert np.all(out_weight[~g.crawled] == 0)
    # A page is drawn at most d_in times (it sits in L d_in times).
    assert np.all(in_weight <= web.d_in[pages])
    # Every discovered page except the seeds was drawn at least once.
    assert np.all(in_weight[np.setdiff1d(np.arange(g.n), g.seeds)] >= 1)


def test_bfs_by_level_dfs_deep() -> None:
    bfs = random_web_crawl(5000, "BFS", reseed=False, seed=2)
    dfs = random_web_crawl(5000, "DFS", reseed=False, seed=2)
    assert np.all(np.diff(bfs.crawl.depths) >= 0)
    # DFS crawls are long thin trees (the paper: diameter about 10% of n).
    assert dfs.crawl.depths.max() > 0.05 * dfs.crawl.fetched
    assert dfs.crawl.depths.max() > 20 * bfs.crawl.depths.max()


def test_same_seed_same_crawl() -> None:
    a = random_web_crawl(2000, "RND", seed=9)
    b = random_web_crawl(2000, "RND", seed=9)
    assert np.array_equal(a.crawl.order, b.crawl.order)
    assert (a.graph.adjacency != b.graph.adjacency).nnz == 0


def test_virtual_bfs_replays_the_generated_bfs_crawl() -> None:
    web = random_web_crawl(4000, "BFS", reseed=False, seed=1)
    assert web.graph.seeds.size == 1
    replayed = virtual_crawl(web.graph, "bfs")
    assert np.array_equal(replayed.order, web.graph.fetch_order)


def _pagerank_capture(strategy: str, fraction: float) -> float:
    """Fraction of the final crawl's PageRank held by its first ``fraction`` pages."""
    web = random_web_crawl(6000, strategy, seed=4)
    g = web.graph
    scores = pagerank(g.adjacency).scores
    captured = np.cumsum(scores[g.fetch_order]) / scores[g.crawled].sum()
    return float(captured[int(fraction * captured.size) - 1])


def test_pagerank_capture_bfs_and_deg_fast_dfs_worst() -> None:
    capture = {s: _pagerank_capture(s, 0.1) for s in ("BFS", "DFS", "DEG", "RND")}
    # The paper's figure 11: BFS and DEG find most PageRank in few steps, DFS worst.
    assert capture["BFS"] > capture["RND"] + 0.1
    assert capture["DEG"] > capture["RND"] + 0.1
    assert capture["RND"] > capture["DFS"]
    assert capture["BFS"] > 2 * capture["DFS"]


def test_bad_model_arguments() -> None:
    with pytest.raises(ConfigError):
        random_web_crawl(0)
    with pytest.raises(ConfigError):
        random_web_crawl(10, n_seeds=11)
    with pytest.raises(ConfigError):
        random_web_crawl(10, "nope")
