"""Quality-over-time metrics on hand-made orders, and against slow reference versions."""

from __future__ import annotations

import itertools
import math

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from webcrawl.analysis.graph.captured import CapturedGraph
from webcrawl.analysis.ordering import quality_links
from webcrawl.analysis.ordering.quality import (
    QualitySettings,
    crawl_quality,
    default_top_ns,
    discovery_rate,
    final_pagerank,
    pagerank_capture,
    remote_adjacency,
    sink_fraction,
    slice_bounds,
    slice_mean_pagerank,
    summary_label,
    time_slice_bounds,
    top_n_fetched,
    top_n_overlap,
)
from webcrawl.analysis.ordering.quality_links import link_metrics
from webcrawl.storage.errors import ConfigError, EmptyGraphError

# A 6-node graph (seed 0) whose discovery rates and sinks are worked out by hand below.
HAND_EDGES = [(0, 1), (0, 2), (1, 2), (1, 3), (2, 0), (2, 4), (3, 5), (5, 1)]
# Given final PageRank (sum 1): ranking 2, 4, 3, 1, 5 (tie with 1 -> lower index), 0.
HAND_SCORES = np.array([0.05, 0.1, 0.4, 0.15, 0.2, 0.1])
TOP_FIRST = np.array([2, 4, 3, 1, 5, 0])
TOP_LAST = np.array([0, 5, 1, 3, 4, 2])


def hand_graph() -> CapturedGraph:
    src, dst = zip(*HAND_EDGES, strict=True)
    return CapturedGraph.from_edges(src, dst, 6)


# ------------------------------------------------------------------------ by hand


def test_capture_top_page_first_vs_last():
    first = pagerank_capture(TOP_FIRST, HAND_SCORES)
    last = pagerank_capture(TOP_LAST, HAND_SCORES)
    np.testing.assert_allclose(first, [0, 0.4, 0.6, 0.75, 0.85, 0.95, 1.0])
    np.testing.assert_allclose(last, [0, 0.05, 0.15, 0.25, 0.4, 0.6, 1.0])


def test_capture_is_relative_to_total_including_unfetched_pages():
    # Scores of any scale; pages never fetched keep their share out of the capture.
    np.testing.assert_allclose(pagerank_capture(np.array([1]), np.array([1.0, 3.0])),
                               [0.0, 0.75])


def test_slice_mean_pagerank_is_normalised_to_mean_one():
    bounds = slice_bounds(6, 3)
    np.testing.assert_array_equal(bounds, [0, 2, 4, 6])
    # 6 * scores = [0.3, 0.6, 2.4, 0.9, 1.2, 0.6]
    np.testing.assert_allclose(slice_mean_pagerank(TOP_FIRST, HAND_SCORES, bounds),
                               [1.8, 0.75, 0.45])
    np.testing.assert_allclose(slice_mean_pagerank(TOP_LAST, HAND_SCORES, bounds),
                               [0.45, 0.75, 1.8])
    # A crawl of every page averages 1 overall.
    np.testing.assert_allclose(slice_mean_pagerank(TOP_LAST, HAND_SCORES,
                                                   np.array([0, 6])), [1.0])


def test_top_n_fetched_by_hand():
    bounds = slice_bounds(6, 3)
    first = top_n_fetched(TOP_FIRST, HAND_SCORES, bounds, (1, 3, 100))
    last = top_n_fetched(TOP_LAST, HAND_SCORES, bounds, (1, 3, 100))
    assert set(first) == {1, 3}  # N above n is skipped
    np.testing.assert_allclose(first[1], [1, 1, 1])
    np.testing.assert_allclose(first[3], [2 / 3, 1, 1])
    np.testing.assert_allclose(last[1], [0, 0, 1])
    np.testing.assert_allclose(last[3], [0, 1 / 3, 1])


def test_top_n_ties_go_to_lower_index():
    # Nodes 1 and 5 tie; top-4 is {2, 4, 3, 1}: fetching 5 but not 1 finds 3 of 4.
    found = top_n_fetched(np.array([2, 4, 3, 5]), HAND_SCORES, np.array([0, 4]), (4,))
    np.testing.assert_allclose(found[4], [0.75])


def test_discovery_rate_by_hand():
    # Links found per slice of 2 pages, in order 0..5 (time: page p fetched at 2p,
    # its links known at 2p + 1; seed 0 known from the start):
    #   slice 1: 0->1 new, 0->2 new, 1->2 known (found by 0), 1->3 new   -> 1/4 known
    #            no target crawled yet                                     -> 0 crawled
    #   slice 2: 2->0 known and crawled (seed), 2->4 new, 3->5 new        -> 1/3, 1/3
    #   slice 3: 4 has no links; 5->1 known and crawled                   -> 1, 1
    known, crawled = discovery_rate(hand_graph().adjacency, np.arange(6), slice_bounds(6, 3),
                                    seeds=[0])
    np.testing.assert_allclose(known, [1 / 4, 1 / 3, 1])
    np.testing.assert_allclose(crawled, [0, 1 / 3, 1])


def test_discovery_rate_counts_seeds_as_known_and_empty_slices_as_nan():
    # Two seeds: 0 links to seed 1 (already known, not crawled), then 1 links back.
    g = CapturedGraph.from_edges([0, 1], [1, 0], 3)
    known, crawled = discovery_rate(g.adjacency, np.array([0, 1, 2]), np.array([0, 1, 2, 3]),
                                    seeds=[0, 1])
    np.testing.assert_allclose(known[:2], [1, 1])
    np.testing.assert_allclose(crawled[:2], [0, 1])
    assert math.isnan(known[2]) and math.isnan(crawled[2])


def test_sink_fraction_by_hand():
    # After 2 pages {0,1}: 1 links only outside -> 1/2.  After 4 {0..3}: 3 -> 5 outside
    # -> 1/4.  After 6: only 4 (no links) -> 1/6.
    sinks = sink_fraction(hand_graph().adjacency, np.arange(6), np.array([2, 4, 6]))
    np.testing.assert_allclose(sinks, [1 / 2, 1 / 4, 1 / 6])


def test_sink_ignores_self_links():
    g = CapturedGraph.from_edges([0, 0, 1], [0, 1, 1], 2)
    np.testing.assert_allclose(sink_fraction(g.adjacency, np.array([0, 1]),
                                             np.array([1, 2])), [1.0, 0.5])


def test_top_n_overlap_by_hand():
    # 0->1, 1->2, 1->3, 3->2, 3->4, 4->2; final ranking 2, 1, 3, 4, 0 (given).
    g = CapturedGraph.from_edges([0, 1, 1, 3, 3, 4], [1, 2, 3, 2, 4, 2], 5)
    scores = np.array([0.05, 0.3, 0.4, 0.15, 0.1])
    # k=1: partial graph {0 -> 1}: ranking 1, 0.  k=2: {0->1, 1->2, 1->3}: node 1 gets
    # b(1 + alpha) > nodes 2 and 3 (b(1 + alpha (1 + alpha) / 2)), so ranking 1, 2, 3, 0.
    # k=5: the final graph.
    overlap = top_n_overlap(g.adjacency, np.arange(5), scores, np.array([1, 2, 5]), (1, 2),
                            seeds=[0])
    np.testing.assert_allclose(overlap[1], [0, 0, 1])
    np.testing.assert_allclose(overlap[2], [0.5, 1, 1])


def test_time_slices_by_hand():
    times = np.array([0, 1, 2, 10, 11, 12, 13, 20], dtype=float)
    np.testing.assert_array_equal(time_slice_bounds(times, 2), [0, 3, 8])
    # Width 5: [0,5) [5,10) [10,15) [15,20]; the second slice is empty.
    np.testing.assert_array_equal(time_slice_bounds(times, 4), [0, 3, 3, 7, 8])
    with pytest.raises(ConfigError, match="non-decreasing"):
        time_slice_bounds(times[::-1], 2)
    with pytest.raises(ConfigError, match="missing"):
        time_slice_bounds(np.array([0.0, np.nan, 2.0]), 2)


def test_crawl_quality_by_time_uses_recorded_fetch_times():
    g = CapturedGraph.from_edges([0, 1, 2], [1, 2, 3], 4)
    g.fetch_times[:] = [0.0, 1.0, 9.0, 10.0]
    r = crawl_quality(g, scores=np.array([0.4, 0.3, 0.2, 0.1]),
                      settings=QualitySettings(slices=2, by="time", checkpoints=0))
    np.testing.assert_array_equal(r.slice_ends, [2, 4])
    np.testing.assert_allclose(r.slice_end_seconds, [5.0, 10.0])
    np.testing.assert_allclose(r.mean_pagerank, [1.4, 0.6])
    with pytest.raises(ConfigError, match="fetch time"):
        crawl_quality(g, [3, 2, 1, 0], scores=np.ones(4),
                      settings=QualitySettings(by="time"))


def test_summary_by_hand():
    n = 10
    g = CapturedGraph.from_edges(np.arange(n - 1), np.arange(1, n), n)
    scores = np.arange(n, 0, -1, dtype=float)  # node 0 best; total 55
    r = crawl_quality(g, np.arange(n), scores=scores,
                      settings=QualitySettings(slices=5, checkpoints=0))
    assert r.reference_pages == n
    # 1% and 10% of 10 pages -> 1 page; 50% -> 5 pages.
    assert r.summary["captured_at_1pct"] == pytest.approx(10 / 55)
    assert r.summary["captured_at_10pct"] == pytest.approx(10 / 55)
    assert r.summary["captured_at_50pct"] == pytest.approx(40 / 55)
    assert r.summary["top10_found_by_10pct"] == pytest.approx(0.1)
    assert r.summary["mean_pagerank_first_10pct"] == pytest.approx(10 * 10 / 55)
    assert summary_label("captured_at_10pct") == "PR@10%"
    assert summary_label("top100_found_by_10pct") == "top100@10%"


def test_summary_of_a_short_order_is_taken_at_its_end():
    g = CapturedGraph.from_edges(np.arange(9), np.arange(1, 10), 10)
    scores = np.ones(10)
    r = crawl_quality(g, [0, 1, 2], scores=scores, settings=QualitySettings(checkpoints=0))
    assert r.pages == 3 and r.reference_pages == 10
    assert r.summary["captured_at_50pct"] == pytest.approx(0.3)


def test_default_top_ns():
    assert default_top_ns(1) == (1,)
    assert default_top_ns(999) == (1, 10, 100)
    assert default_top_ns(1000) == (1, 10, 100, 1000)


@pytest.mark.parametrize("kwargs", [
    {"slices": 0}, {"by": "days"}, {"top_ns": ()}, {"top_ns": (0,)}, {"checkpoints": -1},
    {"alpha": 1.0}, {"tol": 0.0}, {"summary_fractions": (0.0,)}, {"summary_top_n": 0},
], ids=lambda kw: next(iter(kw)))
def test_settings_validate(kwargs):
    with pytest.raises(ConfigError):
        QualitySettings(**kwargs)


def test_bad_orders_raise():
    g = hand_graph()
    with pytest.raises(EmptyGraphError):
        crawl_quality(g, [], scores=HAND_SCORES)
    with pytest.raises(ConfigError, match="twice"):
        crawl_quality(g, [0, 1, 0], scores=HAND_SCORES)
    with pytest.raises(ConfigError, match="outside"):
        crawl_quality(g, [0, 7], scores=HAND_SCORES)


# ------------------------------------------------- against references and oracles


def reference_discovery(edges, order, seeds, bounds):
    """Step-by-step crawl with Python sets: per slice, fraction of links to known/crawled."""
    out = {u: sorted({v for a, v in edges if a == u}) for u in order}
    known, crawled = set(seeds), set()
    per_pos = []
    for u in order:
        known.add(u)
        crawled.add(u)
        flags = []
        for v in out[u]:
            flags.append((v in known, v in crawled))
            known.add(v)
        per_pos.append(flags)
    rates_known, rates_crawled = [], []
    for a, b in itertools.pairwise(bounds.tolist()):
        flags = [f for p in range(a, b) for f in per_pos[p]]
        rates_known.append(np.mean([f[0] for f in flags]) if flags else np.nan)
        rates_crawled.append(np.mean([f[1] for f in flags]) if flags else np.nan)
    return rates_known, rates_crawled


def reference_sinks(edges, order, ks):
    out = {}
    for u, v in edges:
        if u != v:
            out.setdefault(u, set()).add(v)
    result = []
    for k in ks:
        crawled = set(order[:k])
        sinks = sum(1 for u in crawled if not (out.get(u, set()) & crawled))
        result.append(sinks / k)
    return result


def random_case(seed: int, n: int = 60, m: int = 240):
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    g = CapturedGraph.from_edges(src, dst, n)
    edges = list(zip(g.adjacency.tocoo().row.tolist(), g.adjacency.tocoo().col.tolist(),
                     strict=True))
    order = rng.permutation(n)[: n - 5]  # a few pages never fetched
    return g, edges, order, rng


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_discovery_and_sinks_match_reference(seed):
    g, edges, order, _ = random_case(seed)
    bounds = slice_bounds(order.size, 7)
    known, crawled = discovery_rate(g.adjacency, order, bounds, seeds=[int(order[0])])
    ref_known, ref_crawled = reference_discovery(edges, order.tolist(), [int(order[0])],
                                                 bounds)
    np.testing.assert_allclose(known, ref_known)
    np.testing.assert_allclose(crawled, ref_crawled)
    np.testing.assert_allclose(sink_fraction(g.adjacency, order, bounds[1:]),
                               reference_sinks(edges, order.tolist(), bounds[1:].tolist()))


@pytest.mark.parametrize("seed", [4, 5])
def test_top_n_overlap_matches_networkx_partial_graphs(seed):
    g, edges, order, rng = random_case(seed)
    seeds = [int(order[0])]
    scores = rng.random(g.n)
    final_rank = {int(v): r for r, v in enumerate(np.argsort(-scores, kind="stable"))}
    checkpoints = np.array([3, 10, 25, order.size])
    top_ns = (1, 5, 10)
    got = top_n_overlap(g.adjacency, order, scores, checkpoints, top_ns, seeds=seeds)
    checked = 0
    for i, k in enumerate(checkpoints):
        fetched = order[:k].tolist()
        part = nx.DiGraph()
        part.add_nodes_from(seeds + fetched)
        part.add_edges_from((u, v) for u, v in edges if u in set(fetched))
        pr = nx.pagerank(part, alpha=0.85, tol=1e-13, max_iter=10_000)
        ranked = sorted(pr, key=lambda v: (-pr[v], v))
        for t in top_ns:
            # Skip cut-offs inside a (numerical) tie: either side is a valid top-N.
            if t < len(ranked) and abs(pr[ranked[t - 1]] - pr[ranked[t]]) < 1e-9:
                continue
            expected = sum(final_rank[v] < t for v in ranked[:t]) / t
            assert got[t][i] == pytest.approx(expected), (k, t)
            checked += 1
    assert checked >= 8


def test_final_pagerank_remote_only_matches_networkx():
    # Hosts: {0,1,2} on host 0, {3,4} on host 1; local links must not count.
    edges = [(0, 1), (1, 2), (2, 0), (0, 3), (3, 4), (4, 3), (4, 0), (2, 4)]
    src, dst = zip(*edges, strict=True)
    g = CapturedGraph.from_edges(src, dst, 5, hosts=[0, 0, 0, 1, 1])
    remote = [(u, v) for u, v in edges if (u < 3) != (v < 3)]
    assert remote_adjacency(g).nnz == len(remote)
    for subset, remote_only in ((edges, False), (remote, True)):
        ref = nx.DiGraph()
        ref.add_nodes_from(range(5))
        ref.add_edges_from(subset)
        expected = nx.pagerank(ref, tol=1e-13, max_iter=10_000)
        np.testing.assert_allclose(final_pagerank(g, remote_only=remote_only),
                                   [expected[i] for i in range(5)], atol=1e-9)


def test_crawl_quality_consistency_on_a_random_graph():
    g, _, order, _ = random_case(7, n=300, m=1500)
    r = crawl_quality(g, order, settings=QualitySettings(slices=10, checkpoints=4))
    scores = final_pagerank(g)
    np.testing.assert_allclose(r.capture[-1], scores[order].sum())
    assert np.all(np.diff(r.capture) >= 0)
    # Weighted by slice sizes, the slice means give back the mean over the order.
    sizes = np.diff(np.concatenate(([0], r.slice_ends)))
    assert np.sum(r.mean_pagerank * sizes) / order.size == pytest.approx(
        scores[order].mean() * g.n)
    assert set(r.top_fetched) == {1, 10, 100} and set(r.overlap) == {1, 10, 100}
    assert r.checkpoint_pages.tolist()[-1] == order.size and r.checkpoint_pages.size == 4
    d = r.to_dict()
    assert d["capture"]["pages"][0] == 0 and d["capture"]["pages"][-1] == order.size
    assert d["summary"].keys() == r.summary.keys()


# ------------------------------------- one pass over the links: compiled and numpy


@pytest.fixture(params=["compiled", "numpy"])
def link_pass(request, monkeypatch):
    """Run the link metrics compiled (numba) or vectorised in chunks of 7 links."""
    if request.param == "compiled":
        if quality_links.compiled(quality_links._link_pass) is None:
            pytest.skip("numba (webcrawl[fast]) is not installed")
    else:
        monkeypatch.setattr(quality_links, "compiled", lambda *_: None)
        monkeypatch.setattr(quality_links, "_CHUNK", 7)
    return request.param


def _bounds_cases(rng, k):
    """Equal slices, slices with empty ones, and bounds that stop before the order
    ends (``measure_along``'s: the pages after them count in one more slice)."""
    yield slice_bounds(k, int(rng.integers(1, 9)))
    yield np.sort(np.r_[0, rng.integers(0, k + 1, 4), k])
    yield np.r_[0, np.unique(rng.integers(1, k + 1, 3))]


@pytest.mark.parametrize("seed", range(12))
def test_link_metrics_match_the_step_by_step_reference(link_pass, seed):
    g, edges, order, rng = random_case(seed, n=int(10 + 7 * seed), m=int(40 + 30 * seed))
    seeds = rng.integers(0, g.n, seed % 3).tolist()
    for bounds in _bounds_cases(rng, order.size):
        known, crawled = discovery_rate(g.adjacency, order, bounds, seeds=seeds)
        ref_known, ref_crawled = reference_discovery(edges, order.tolist(), seeds,
                                                     bounds)
        if bounds[-1] < order.size:  # one slice more: the pages past the last bound
            more = reference_discovery(edges, order.tolist(), seeds,
                                       np.r_[bounds, order.size])
            ref_known, ref_crawled = more
        np.testing.assert_allclose(known, ref_known)
        np.testing.assert_allclose(crawled, ref_crawled)
        ks = bounds[1:]
        sinks = sink_fraction(g.adjacency, order, ks)
        assert np.isnan(sinks[ks == 0]).all()  # no page: no fraction
        np.testing.assert_allclose(sinks[ks > 0], reference_sinks(
            edges, order.tolist(), ks[ks > 0].tolist()))
        both = link_metrics(g.adjacency, order, bounds, seeds=seeds)
        for got, expected in zip(both, (known, crawled, sink_fraction(
                g.adjacency, order, ks)), strict=True):
            np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("seed", range(6))
def test_link_metrics_are_the_same_numbers_on_both_paths(monkeypatch, seed):
    """Compiled and vectorised count the same integers: equal floats, bit for bit, on
    rows with repeated targets and int32 and int64 orders."""
    if quality_links.compiled(quality_links._link_pass) is None:
        pytest.skip("numba (webcrawl[fast]) is not installed")
    rng = np.random.default_rng(seed)
    n, m = 200, 1500
    src = np.sort(rng.integers(0, n, m))
    indptr = np.concatenate(([0], np.cumsum(np.bincount(src, minlength=n))))
    adj = sp.csr_array((np.ones(m), rng.integers(0, n, m).astype(np.int32), indptr),
                       shape=(n, n))  # repeats in rows, unsorted: as given
    order = rng.permutation(n)[: n - 20].astype(np.int32 if seed % 2 else np.int64)
    bounds = slice_bounds(order.size, 9)
    seeds = [int(order[0]), int(order[5])]
    compiled_run = link_metrics(adj, order, bounds, seeds=seeds)
    monkeypatch.setattr(quality_links, "compiled", lambda *_: None)
    monkeypatch.setattr(quality_links, "_CHUNK", 1 + seed * 50)
    for got, expected in zip(link_metrics(adj, order, bounds, seeds=seeds), compiled_run,
                             strict=True):
        np.testing.assert_array_equal(got, expected)


def test_link_metrics_reject_bounds_that_do_not_start_at_zero():
    g = hand_graph()
    with pytest.raises(ConfigError, match="bounds"):
        discovery_rate(g.adjacency, np.array([0, 1, 2]), np.array([1, 3]))
