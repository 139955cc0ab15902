from __future__ import annotations

import doctest
import importlib

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from webcrawl.analysis.graph.bowtie_alg import Region, bowtie
from webcrawl.analysis.graph.captured import CapturedGraph
from webcrawl.analysis.graph.connectivity import components, reachable
from webcrawl.storage.errors import EmptyGraphError


def graph_of(edges, n):
    src, dst = zip(*edges, strict=True) if edges else ((), ())
    return sp.csr_array((np.ones(len(src)), (src, dst)), shape=(n, n))


# Every region non-empty, named by node:
HAND_MADE = [
    (0, 1), (1, 0), (1, 2), (2, 0),  # SCC {0, 1, 2}
    (3, 0), (11, 3),                 # IN {3, 11}
    (2, 4), (4, 12),                 # OUT {4, 12}
    (3, 5),                          # 5: tendril out of IN
    (6, 4),                          # 6: tendril into OUT
    (3, 7), (7, 13), (13, 4),        # 7 -> 13: a tube from IN to OUT
    (10, 5),                         # 10: reaches only a tendril (OTHER)
    (8, 9), (9, 8), (9, 14),         # DISCONNECTED {8, 9, 14}
]
HAND_MADE_REGIONS = {
    Region.SCC: [0, 1, 2], Region.IN: [3, 11], Region.OUT: [4, 12],
    Region.TENDRILS: [5, 6], Region.TUBES: [7, 13], Region.OTHER: [10],
    Region.DISCONNECTED: [8, 9, 14],
}


def test_hand_made_graph_every_region(bowtie_path):
    bt = bowtie(graph_of(HAND_MADE, 15))
    for region, nodes in HAND_MADE_REGIONS.items():
        np.testing.assert_array_equal(bt.nodes(region), nodes, err_msg=region.name)
    assert bt.counts == {r.name: len(v) for r, v in HAND_MADE_REGIONS.items()}
    assert sum(bt.fractions.values()) == pytest.approx(1.0)
    assert bt.fractions["SCC"] == pytest.approx(3 / 15)
    np.testing.assert_array_equal(bt.scc_nodes, [0, 1, 2])
    # SCCs: {0,1,2}, {8,9}, and 10 singletons.
    assert bt.n_scc == 12
    np.testing.assert_array_equal(bt.scc_sizes, [1, 2, 3])
    np.testing.assert_array_equal(bt.scc_size_counts, [10, 1, 1])
    assert bt.n_wcc == 2 and bt.largest_wcc == 12


def test_isolated_nodes_are_disconnected_and_duplicates_ignored():
    edges = [(0, 1), (1, 0), (0, 1), (2, 0)]
    bt = bowtie(graph_of(edges, 5))
    assert bt.counts["SCC"] == 2 and bt.counts["IN"] == 1 and bt.counts["DISCONNECTED"] == 2
    assert bt.n_wcc == 3


def test_zero_weight_is_not_a_link():
    adj = sp.csr_array(([1.0, 1.0, 0.0], ([0, 1, 2], [1, 0, 0])), shape=(3, 3))
    assert bowtie(adj).nodes("DISCONNECTED").tolist() == [2]


def test_largest_scc_tie_takes_lowest_node():
    bt = bowtie(graph_of([(2, 3), (3, 2), (0, 1), (1, 0)], 4))
    np.testing.assert_array_equal(bt.scc_nodes, [0, 1])


def test_no_links_every_node_a_component():
    bt = bowtie(sp.csr_array((4, 4)))
    assert bt.counts["SCC"] == 1 and bt.counts["DISCONNECTED"] == 3 and bt.n_scc == 4


def test_empty_graph_raises():
    with pytest.raises(EmptyGraphError):
        bowtie(sp.csr_array((0, 0)))


def test_accepts_captured_graph():
    src, dst = zip(*HAND_MADE, strict=True)
    graph = CapturedGraph.from_edges(src, dst, n=15)
    assert bowtie(graph).counts == bowtie(graph_of(HAND_MADE, 15)).counts


def reference_bowtie(adj):
    """The definitions, literally, with networkx sets."""
    g = nx.from_scipy_sparse_array(adj, create_using=nx.DiGraph)
    sccs = list(nx.strongly_connected_components(g))
    biggest = max(len(c) for c in sccs)
    scc = min((c for c in sccs if len(c) == biggest), key=min)
    anchor = next(iter(scc))
    down, up = nx.descendants(g, anchor) | {anchor}, nx.ancestors(g, anchor) | {anchor}
    in_set, out_set = up - down, down - up
    from_in = set().union(*(nx.descendants(g, v) for v in in_set)) if in_set else set()
    to_out = set().union(*(nx.ancestors(g, v) for v in out_set)) if out_set else set()
    wcc = nx.node_connected_component(g.to_undirected(), anchor)
    labels = []
    for v in range(adj.shape[0]):
        rest = v not in down and v not in up
        if v not in wcc:
            labels.append(Region.DISCONNECTED)
        elif v in scc:
            labels.append(Region.SCC)
        elif v in in_set:
            labels.append(Region.IN)
        elif v in out_set:
            labels.append(Region.OUT)
        elif rest and v in from_in and v in to_out:
            labels.append(Region.TUBES)
        elif rest and (v in from_in or v in to_out):
            labels.append(Region.TENDRILS)
        else:
            labels.append(Region.OTHER)
    sizes = sorted(len(c) for c in sccs)
    return np.array(labels), sizes, nx.number_weakly_connected_components(g)


@pytest.fixture(params=["compiled", "searches", "relabelled"])
def bowtie_path(request, monkeypatch: pytest.MonkeyPatch) -> str:
    """The regions' two paths: one pass over the components in scipy's order plus
    forward searches (numba); four searches and scipy's weak components (no numba, or
    "relabelled": strong components numbered in a shuffled order, which the pass
    detects)."""
    from webcrawl.analysis.graph import bowtie_alg

    if request.param == "searches":
        monkeypatch.setattr(bowtie_alg, "compiled", lambda *_: None)
    else:
        pytest.importorskip("numba")
    if request.param == "relabelled":
        def shuffled(adj):
            strong = components(adj, "strong")
            order = np.random.default_rng(strong.count).permutation(strong.count)
            return bowtie_alg._components(strong.count, order[strong.labels])
        monkeypatch.setattr(bowtie_alg, "_strong_components", shuffled)
    return str(request.param)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("density", [0.9, 1.2, 2.0], ids=["d0.9", "d1.2", "d2.0"])
def test_agrees_with_networkx_reference(seed, density, random_digraph, bowtie_path):
    adj = random_digraph(n=300, m=int(300 * density), seed=seed, dangling_fraction=0.2)
    bt = bowtie(adj)
    labels, sizes, n_wcc = reference_bowtie(adj)
    np.testing.assert_array_equal(bt.labels, labels)
    assert np.repeat(bt.scc_sizes, bt.scc_size_counts).tolist() == sizes
    assert bt.n_wcc == n_wcc


def test_random_graphs_cover_every_region(random_digraph):
    """The random reference cases are not trivial: together they hit every region."""
    seen = set()
    for seed in range(8):
        for density in (0.9, 1.2, 2.0):
            adj = random_digraph(n=300, m=int(300 * density), seed=seed, dangling_fraction=0.2)
            seen.update(np.unique(bowtie(adj).labels).tolist())
    assert seen == {int(r) for r in Region}


def test_components_and_reachable():
    adj = graph_of(HAND_MADE, 15)
    strong, weak = components(adj), components(adj, "weak")
    assert strong.largest_size == 3 and weak.count == 2 and weak.largest_size == 12
    assert reachable(adj, []).sum() == 0
    np.testing.assert_array_equal(np.flatnonzero(reachable(adj, [6, 8])), [4, 6, 8, 9, 12, 14])


@pytest.mark.parametrize("module", ["analysis.graph.bowtie_alg", "analysis.graph.connectivity"])
def test_docstring_examples_run(module):
    result = doctest.testmod(importlib.import_module(module))
    assert result.failed == 0 and result.attempted > 0
