"""to_networkx and to_pandas against hand-made graphs: the nodes, links and attributes
handed over are the captured graph's, from a database or a graph alike, and networkx's
own PageRank on the hand-off agrees with ours."""

from __future__ import annotations

import sys
from pathlib import Path

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from webcrawl.analysis.graph import (
    CapturedGraph,
    load_graph,
    pagerank,
    to_networkx,
    to_pandas,
)
from webcrawl.storage.edgelist import import_edges
from webcrawl.storage.errors import ConfigError

# A two-host edge list: a repeated link and a self-loop, which the loaded graph drops
# (load_graph's defaults), so the graph has these four distinct links.
EDGE_LINES = ["http://a.test/ http://a.test/b", "http://a.test/b http://c.test/",
              "http://c.test/ http://a.test/", "http://a.test/ http://c.test/",
              "http://a.test/ http://a.test/b", "http://c.test/ http://c.test/"]
LINKS = {("http://a.test/", "http://a.test/b"), ("http://a.test/b", "http://c.test/"),
         ("http://c.test/", "http://a.test/"), ("http://a.test/", "http://c.test/")}


@pytest.fixture
def edges_db(tmp_path: Path) -> Path:
    (tmp_path / "edges.txt").write_text("\n".join(EDGE_LINES) + "\n")
    import_edges(tmp_path / "edges.txt", tmp_path / "edges.db")
    return tmp_path / "edges.db"


def _frontier_graph() -> CapturedGraph:
    """Two fetched pages (fetched second, then first) and a frontier URL on another host."""
    return CapturedGraph.from_edges(
        [0, 0, 1], [1, 2, 2], urls=["http://a.test/", "http://a.test/b", "http://c.test/"],
        hosts=[0, 0, 1], crawled=[True, True, False], fetch_order=[1, 0])


def test_networkx_graph_holds_the_crawls_links(edges_db: Path) -> None:
    G = to_networkx(edges_db)
    assert isinstance(G, nx.DiGraph)
    assert set(G.nodes) == {"http://a.test/", "http://a.test/b", "http://c.test/"}
    assert set(G.edges) == LINKS
    assert all(w == 1.0 for *_, w in G.edges(data="weight"))
    assert {u: G.nodes[u]["host"] for u in G} == {
        "http://a.test/": "a.test", "http://a.test/b": "a.test", "http://c.test/": "c.test"}
    assert G.graph["kind"] == "pages" and G.graph["links"] == 4


def test_networkx_pagerank_agrees_with_ours(edges_db: Path) -> None:
    graph = load_graph(edges_db)
    ours = pagerank(graph.adjacency, tol=1e-12).scores
    theirs = nx.pagerank(to_networkx(graph), alpha=0.85, tol=1e-12)
    assert [theirs[url] for url in graph.urls] == pytest.approx(ours.tolist(), abs=1e-8)


def test_a_database_and_its_loaded_graph_hand_over_the_same(edges_db: Path) -> None:
    graph = load_graph(edges_db)
    assert nx.utils.graphs_equal(to_networkx(edges_db), to_networkx(graph))
    from_db, from_graph = to_pandas(str(edges_db)), to_pandas(graph)
    pd.testing.assert_frame_equal(from_db.nodes, from_graph.nodes)
    pd.testing.assert_frame_equal(from_db.links, from_graph.links)
    assert to_networkx(edges_db, graph="all").graph["kind"] == "all"


def test_pandas_frames_are_the_networkx_graph() -> None:
    graph = _frontier_graph()
    nodes, links = to_pandas(graph)
    G = to_networkx(graph)
    assert list(nodes.columns) == ["url", "host", "crawled", "outcome", "fetch_rank"]
    assert nodes.index.name == "node" and list(nodes.index) == [0, 1, 2]
    for row in nodes.itertuples():
        attrs = G.nodes[row.url]
        assert (attrs["host"], attrs["crawled"], attrs["outcome"]) == (
            row.host, row.crawled, row.outcome)
        assert attrs["fetch_rank"] == (-1 if pd.isna(row.fetch_rank) else row.fetch_rank)
    pairs = {(nodes.url[s], nodes.url[t]) for s, t in zip(links.source, links.target,
                                                         strict=True)}
    assert pairs == set(G.edges) and len(links) == G.number_of_edges()


def test_fetch_rank_and_outcome_of_pages_and_frontier() -> None:
    nodes, _ = to_pandas(_frontier_graph())
    assert nodes.fetch_rank.tolist() == [1, 0, pd.NA]
    assert nodes.outcome.tolist() == ["fetched", "fetched", "frontier"]
    assert nodes.host.tolist() == ["host0", "host0", "host1"]
    G = to_networkx(_frontier_graph())
    assert [G.nodes[u]["fetch_rank"] for u in G] == [1, 0, -1]


def test_link_weights_count_repeated_links_when_kept() -> None:
    graph = CapturedGraph.from_edges([0, 0, 1], [1, 1, 0], collapse_duplicates=False)
    _, links = to_pandas(graph)
    assert links.to_dict("list") == {"source": [0, 1], "target": [1, 0], "weight": [2.0, 1.0]}
    assert to_networkx(graph).edges["node:0", "node:1"]["weight"] == 2.0


def test_another_kind_than_the_graphs_own_is_refused() -> None:
    with pytest.raises(ConfigError, match="'pages' graph, not 'all'"):
        to_networkx(_frontier_graph(), graph="all")
    with pytest.raises(ConfigError, match="'pages' graph, not 'all'"):
        to_pandas(_frontier_graph(), graph="all")


def test_two_nodes_with_one_url_are_refused_by_networkx() -> None:
    graph = CapturedGraph.from_edges([0], [1], urls=["http://a.test/", "http://a.test/"])
    with pytest.raises(ConfigError, match="one URL for two nodes"):
        to_networkx(graph)
    assert len(to_pandas(graph).nodes) == 2


@pytest.mark.parametrize(("library", "call"), [("networkx", to_networkx),
                                               ("pandas", to_pandas)])
def test_a_missing_library_says_what_to_install(library: str, call: object,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, library, None)  # `import library` raises ImportError
    with pytest.raises(ConfigError, match=f"needs {library}.*pip install {library}"):
        call(_frontier_graph())  # type: ignore[operator]


def test_fetch_rank_is_the_place_in_fetch_order_on_a_larger_graph() -> None:
    """A graph of 20,000 nodes: every node's fetch rank is its place in fetch_order."""
    rng = np.random.default_rng(7)
    n = 20_000
    order = rng.permutation(n)[: n // 2]
    graph = CapturedGraph.from_edges(rng.integers(0, n, 3 * n), rng.integers(0, n, 3 * n), n,
                                     fetch_order=order)
    ranks = to_pandas(graph).nodes.fetch_rank
    assert ranks.isna().sum() == n - order.size
    assert (ranks.to_numpy()[order] == np.arange(order.size)).all()
