"""Bipartite cores: elimination, generation, maximal cores against networkx."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from webcrawl.analysis.graph.captured import CapturedGraph
from webcrawl.analysis.graph.cores import (
    CoreConfig,
    bipartite_cores,
    drop_same_host_links,
    eliminate,
    generation_filter,
)
from webcrawl.storage.errors import AnalysisError, ConfigError


def _adj(src, dst, n):
    return sp.csr_array((np.ones(len(src)), (src, dst)), shape=(n, n))


def _complete_bipartite(fans, centers, n):
    pairs = list(itertools.product(fans, centers))
    return [p[0] for p in pairs], [p[1] for p in pairs], n


def _out_sets(adj):
    n = adj.shape[0]
    out = {v: set() for v in range(n)}
    coo = adj.tocoo()
    for r, c in zip(coo.row.tolist(), coo.col.tolist(), strict=True):
        if r != c:
            out[r].add(c)
    return out


def has_k_oracle(adj, i, j):
    """Is there a K(i, j)?  Every i-subset of pages and its common out-neighbourhood."""
    out = _out_sets(adj)
    return any(len(set.intersection(*(out[f] for f in fans))) >= j
               for fans in itertools.combinations(range(adj.shape[0]), i))


def closed_pairs_oracle(adj):
    """Every core (F, C): for every non-empty set S of pages, C = the pages all of S
    link to, F = the pages linking to all of C (pure Python set algebra)."""
    out = _out_sets(adj)
    n = adj.shape[0]
    into = {v: {u for u in range(n) if v in out[u]} for v in range(n)}
    fans = [v for v in range(n) if out[v]]
    pairs = set()
    for k in range(1, len(fans) + 1):
        for s in itertools.combinations(fans, k):
            centers = set.intersection(*(out[f] for f in s))
            if centers:
                pairs.add((frozenset(set.intersection(*(into[c] for c in centers))),
                           frozenset(centers)))
    return pairs


def oracle_counts(adj, min_i, max_i, min_j, max_j):
    """(C(i, j) = cores with >= i fans and >= j centers, maximal by exact size)."""
    shape = (max_i - min_i + 1, max_j - min_j + 1)
    at_least, exact = np.zeros(shape, np.int64), np.zeros(shape, np.int64)
    for fans, centers in closed_pairs_oracle(adj):
        for a, i in enumerate(range(min_i, max_i + 1)):
            for b, j in enumerate(range(min_j, max_j + 1)):
                at_least[a, b] += len(fans) >= i and len(centers) >= j
                exact[a, b] += len(fans) == i and len(centers) == j
    return at_least, exact


def test_k33_counts_by_hand():
    # K(3,3) fans 0-2 -> centers 3-5, plus noise: 6 -> 3, 4 (a fourth fan of {3, 4}).
    src, dst, n = _complete_bipartite([0, 1, 2], [3, 4, 5], 7)
    adj = _adj([*src, 6, 6], [*dst, 3, 4], n)
    r = bipartite_cores(adj, CoreConfig(max_i=4, max_j=3))
    # Cores: {0,1,2} x {3,4,5} and {0,1,2,6} x {3,4}; {3,5} is inside the K(3,3).
    assert r.count_maximal(3, 3) == 1 and r.count_maximal(4, 2) == 1
    assert r.maximal.sum() == 2 and r.cores == 2
    # C(i, j): cores holding a K(i, j).  Both hold a K(2,2) and a K(3,2); only the
    # K(3,3) holds a K(2,3) or K(3,3); only {0,1,2,6} x {3,4} a K(4,2).
    assert r.counts.tolist() == [[2, 1], [2, 1], [1, 0]]
    assert r.examples[0].centers.tolist() == [3, 4, 5]
    assert r.examples[0].fans.tolist() == [0, 1, 2]


def test_more_maximal_44_than_34_cores_as_in_bennouas_fig8():
    # Three disjoint K(4,4) and two disjoint K(3,4): every K(4,4) holds four K(3,4)
    # sub-bicliques, but none of them is maximal, so (4,4) = 3 > (3,4) = 2.
    src: list[int] = []
    dst: list[int] = []
    base = 0
    for fans in (4, 4, 4, 3, 3):
        s, d, _ = _complete_bipartite(range(base, base + fans),
                                      range(base + fans, base + fans + 4), 0)
        src += s
        dst += d
        base += fans + 4
    r = bipartite_cores(_adj(src, dst, base), CoreConfig(max_i=4, max_j=4))
    assert r.count_maximal(4, 4) == 3 and r.count_maximal(3, 4) == 2
    assert r.maximal.sum() == 5        # nothing smaller is maximal
    # The headline C(i, j) is monotone: every core holds a K(3, 4), three a K(4, 4).
    assert r.count(3, 4) == 5 and r.count(4, 4) == 3 and r.count(2, 2) == 5


def maximal_bicliques_oracle(adj):
    """Maximal bicliques (fans, centers) by networkx: maximal cliques of the graph
    with every fan copy joined to every fan copy and every center copy to every
    center copy (both sides non-empty)."""
    coo = adj.tocoo()
    links = [(int(r), int(c)) for r, c in zip(coo.row, coo.col, strict=True) if r != c]
    fans = {("f", r) for r, _ in links}
    centers = {("c", c) for _, c in links}
    g = nx.Graph()
    g.add_edges_from(itertools.combinations(sorted(fans), 2))
    g.add_edges_from(itertools.combinations(sorted(centers), 2))
    g.add_nodes_from(fans | centers)
    g.add_edges_from((("f", r), ("c", c)) for r, c in links)
    out = []
    for clique in nx.find_cliques(g):
        f = sorted(v for k, v in clique if k == "f")
        c = sorted(v for k, v in clique if k == "c")
        if f and c:
            out.append((f, c))
    return out


@pytest.mark.parametrize("seed", range(12), ids=lambda s: f"seed{s}")
def test_maximal_counts_match_networkx_on_random_graphs(seed):
    rng = np.random.default_rng(seed)
    n, m = 11, int(rng.integers(20, 70))
    adj = _adj(rng.integers(0, n, m), rng.integers(0, n, m), n)
    r = bipartite_cores(adj, CoreConfig(min_i=1, max_i=4, min_j=1, max_j=4))
    expected = np.zeros((4, 4), dtype=np.int64)
    for f, c in maximal_bicliques_oracle(adj):
        if len(f) <= 4 and len(c) <= 4:
            expected[len(f) - 1, len(c) - 1] += 1
    np.testing.assert_array_equal(r.maximal, expected)


def _planted(seed):
    """A random graph with a few overlapping bicliques planted (n = 12)."""
    rng = np.random.default_rng(seed)
    n, m = 12, int(rng.integers(10, 40))
    src, dst = rng.integers(0, n, m).tolist(), rng.integers(0, n, m).tolist()
    for _ in range(int(rng.integers(1, 4))):
        fans = rng.choice(n, int(rng.integers(2, 6)), replace=False)
        centers = rng.choice(n, int(rng.integers(2, 6)), replace=False)
        s, d, _ = _complete_bipartite(fans.tolist(), centers.tolist(), n)
        src += s
        dst += d
    return _adj(src, dst, n)


@pytest.mark.parametrize("seed", range(16), ids=lambda s: f"seed{s}")
@pytest.mark.parametrize(("min_i", "min_j"), [(1, 1), (2, 2), (3, 2), (2, 3)],
                         ids=["min11", "min22", "min32", "min23"])
def test_counts_match_brute_force_oracle(seed, min_i, min_j):
    adj = _planted(seed)
    r = bipartite_cores(adj, CoreConfig(min_i=min_i, max_i=5, min_j=min_j, max_j=5))
    at_least, exact = oracle_counts(adj, min_i, 5, min_j, 5)
    np.testing.assert_array_equal(r.counts, at_least)
    np.testing.assert_array_equal(r.maximal, exact)
    # Monotone, and C(i, j) > 0 exactly when the graph holds a K(i, j).
    assert (np.diff(r.counts, axis=0) <= 0).all() and (np.diff(r.counts, axis=1) <= 0).all()
    for a, i in enumerate(range(min_i, 6)):
        for b, j in enumerate(range(min_j, 6)):
            assert (r.counts[a, b] > 0) == has_k_oracle(adj, i, j), (i, j)


def test_generation_filter_cores_are_counted_once_with_all_their_fans():
    # Fans 0-3 have out-degree exactly 3 ({5, 6, 7}): the generation filter names that
    # core; fan 4 links to {5, 6, 7, 8} and is one of its fans too.  Fan 9 -> {5, 6, 8}
    # and fan 4 share {5, 6, 8}: a second core, named by fan 9.  Fan 4, in both, is
    # never pruned by generation (out-degree 4), so both cores keep it.
    src, dst, n = _complete_bipartite([0, 1, 2, 3, 4], [5, 6, 7], 10)
    adj = _adj([*src, 4, 9, 9, 9], [*dst, 8, 5, 6, 8], n)
    r = bipartite_cores(adj, CoreConfig(min_i=2, max_i=5, min_j=3, max_j=4))
    at_least, exact = oracle_counts(adj, 2, 5, 3, 4)
    np.testing.assert_array_equal(r.counts, at_least)
    np.testing.assert_array_equal(r.maximal, exact)
    assert r.generated == 2 and r.count_maximal(5, 3) == 1 and r.count_maximal(2, 3) == 1


def test_a_big_biclique_is_one_core():
    # K(5,5): it holds K(i, j) for every i, j <= 5, and it is one core, not C(5, j).
    src, dst, n = _complete_bipartite(range(5), range(5, 10), 10)
    r = bipartite_cores(_adj(src, dst, n), CoreConfig(max_i=5, max_j=5))
    assert (r.counts == 1).all() and r.cores == 1
    assert r.maximal.sum() == 1 and r.count_maximal(5, 5) == 1


def test_elimination_keeps_every_core_link_and_reaches_fixed_point():
    rng = np.random.default_rng(5)
    n, m = 40, 160
    adj = _adj(rng.integers(0, n, m), rng.integers(0, n, m), n)
    src, dst, _ = _complete_bipartite([30, 31, 32], [33, 34, 35], n)
    adj = (adj + _adj(src, dst, n)).tocsr()
    pruned = eliminate(adj, 3, 3)
    for s, d in zip(src, dst, strict=True):
        assert pruned[s, d] == 1
    out_deg = np.diff(pruned.indptr)
    in_deg = np.bincount(pruned.indices, minlength=n)
    rows, cols = pruned.nonzero()
    assert (out_deg[rows] >= 3).all() and (in_deg[cols] >= 3).all()
    assert pruned.nnz < adj.nnz
    # A reference one-node-at-a-time pruning reaches the same fixed point.
    assert _reference_prune(adj, 3, 3) == set(zip(rows.tolist(), cols.tolist(), strict=True))


def _reference_prune(adj, i, j):
    edges = {(r, c) for r, c in zip(*adj.nonzero(), strict=True) if r != c}
    edges = {(int(r), int(c)) for r, c in edges}
    changed = True
    while changed:
        changed = False
        for r, c in sorted(edges):
            out_r = sum(1 for e in edges if e[0] == r)
            in_c = sum(1 for e in edges if e[1] == c)
            if out_r < j or in_c < i:
                edges.discard((r, c))
                changed = True
    return edges


def test_generation_filter_finds_cores_named_by_degree_j_fans():
    src, dst, n = _complete_bipartite([0, 1, 2], [3, 4, 5], 8)
    # Fan 6 links to 3, 4 and 7: out-degree 3 but its set {3,4,7} has one fan only.
    adj = _adj([*src, 6, 6, 6], [*dst, 3, 4, 7], n)
    cores = generation_filter(eliminate(adj, 3, 3), 3, 3)
    assert [c.centers.tolist() for c in cores] == [[3, 4, 5]]
    assert cores[0].fans.tolist() == [0, 1, 2]
    # On the unpruned graph fan 6 is examined too, and rejected (one fan only).
    assert [c.centers.tolist() for c in generation_filter(adj, 2, 3)] == [[3, 4, 5]]


def test_diverse_cores_ignore_same_host_links():
    src, dst, n = _complete_bipartite([0, 1, 2], [3, 4, 5], 6)
    adj = _adj(src, dst, n)
    same = CapturedGraph.from_edges(src, dst, n, hosts=[0] * 6)
    split = CapturedGraph.from_edges(src, dst, n, hosts=[0, 1, 2, 3, 3, 3])
    config = CoreConfig(max_i=3, max_j=3, diverse=True)
    assert bipartite_cores(same, config).counts.sum() == 0
    assert bipartite_cores(split, config).count_maximal(3, 3) == 1
    assert drop_same_host_links(adj, [0, 0, 1, 0, 1, 1]).nnz == 9 - 4


def test_diverse_cores_need_fans_on_distinct_sites():
    # K(4,3): fans 0-3 -> centers 4-6.  Fans 0 and 1 share a host (a mirror), so the
    # core has 3 fans on distinct sites: a diverse (3,3) core, not a (4,3) one.
    src, dst, n = _complete_bipartite([0, 1, 2, 3], [4, 5, 6], 7)
    g = CapturedGraph.from_edges(src, dst, n, hosts=[0, 0, 1, 2, 3, 4, 5])
    plain = bipartite_cores(g, CoreConfig(max_i=4, max_j=3))
    diverse = bipartite_cores(g, CoreConfig(max_i=4, max_j=3, diverse=True))
    assert plain.count_maximal(4, 3) == 1 and plain.maximal.sum() == 1
    assert diverse.count_maximal(3, 3) == 1 and diverse.count(4, 3) == 0
    assert diverse.maximal.sum() == 1 and diverse.count(2, 2) == 1
    # All four fans on one host: no diverse core with 2 or more fans at all.
    one = CapturedGraph.from_edges(src, dst, n, hosts=[0, 0, 0, 0, 3, 4, 5])
    assert bipartite_cores(one, CoreConfig(max_i=4, max_j=3, diverse=True)).counts.sum() == 0


def test_limits_and_bad_settings():
    src, dst, n = _complete_bipartite(range(8), range(8, 16), 16)
    # Eight fans with distinct subsets of eight centers: 2**8 - 9 cores of >= 2 x 2.
    fans = [f for f in range(8) for c in range(8, 16) if (c - 8 != f)]
    cens = [c for f in range(8) for c in range(8, 16) if (c - 8 != f)]
    with pytest.raises(AnalysisError, match="--max-sets"):
        bipartite_cores(_adj(fans, cens, n), CoreConfig(max_j=4, max_sets=20))
    with pytest.raises(ConfigError):
        CoreConfig(min_i=3, max_i=2)
    with pytest.raises(ConfigError, match="host"):
        bipartite_cores(_adj(src, dst, n), CoreConfig(diverse=True))


def _sidebar(k):
    """k pages of one site, each linking to every other page (a sidebar without the
    page's own entry; self-links are not links)."""
    src = [f for f in range(k) for c in range(k) if c != f]
    dst = [c for f in range(k) for c in range(k) if c != f]
    return src, dst


@pytest.mark.parametrize("k", [5, 6, 7], ids=lambda k: f"k{k}")
def test_a_sidebar_has_exponentially_many_cores_unless_same_host_links_drop(k):
    # Every set S of the k pages is the fan set of one core: the pages outside S are
    # what all of S link to.  So 2**k - 2 cores with >= 1 fan and >= 1 center, all
    # found by brute force too; dropping the site's own links leaves none.
    src, dst = _sidebar(k)
    g = CapturedGraph.from_edges(src, dst, k, hosts=[0] * k)
    kept = bipartite_cores(g, CoreConfig(min_i=1, min_j=1, max_i=k, max_j=k,
                                         same_host_links="keep"))
    at_least, _ = oracle_counts(_adj(src, dst, k), 1, k, 1, k)
    assert kept.cores == 2 ** k - 2 and kept.count(1, 1) == at_least[0, 0] == 2 ** k - 2
    np.testing.assert_array_equal(kept.counts, at_least)
    assert kept.same_host_links == 0
    dropped = bipartite_cores(g, CoreConfig(min_i=1, min_j=1, max_i=k, max_j=k))
    assert dropped.cores == 0 and dropped.same_host_links == k * (k - 1)
    assert dropped.links == 0


def test_same_host_links_drop_only_when_hosts_are_known():
    # K(3,3) across two hosts plus a K(2,2) inside the fans' host: dropping the
    # same-host links leaves the K(3,3) alone; a bare sparse array has no hosts.
    src, dst, n = _complete_bipartite([0, 1, 2], [3, 4, 5], 8)
    src, dst = [*src, 0, 0, 1, 1], [*dst, 6, 7, 6, 7]
    hosts = [0, 0, 0, 1, 1, 1, 0, 0]
    g = CapturedGraph.from_edges(src, dst, n, hosts=hosts)
    config = CoreConfig(max_i=3, max_j=3)
    dropped = bipartite_cores(g, config)
    assert dropped.same_host_links == 4 and dropped.links == 9
    assert dropped.cores == 1 and dropped.count_maximal(3, 3) == 1
    bare = bipartite_cores(_adj(src, dst, n), config)
    kept = bipartite_cores(g, CoreConfig(max_i=3, max_j=3, same_host_links="keep"))
    at_least, exact = oracle_counts(_adj(src, dst, n), 2, 3, 2, 3)
    for r in (bare, kept):
        np.testing.assert_array_equal(r.counts, at_least)
        np.testing.assert_array_equal(r.maximal, exact)
        assert r.same_host_links == 0 and r.cores == 2
    explicit = bipartite_cores(_adj(src, dst, n), config, hosts=hosts)
    np.testing.assert_array_equal(explicit.counts, dropped.counts)
    with pytest.raises(ConfigError, match="same_host_links"):
        CoreConfig(same_host_links="sometimes")
