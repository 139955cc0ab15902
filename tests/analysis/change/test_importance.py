"""Importance weights of a collection against networkx (PageRank, in-degree)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from webcrawl.analysis.change.importance import (
    given_weights,
    importance_weights,
    read_weights,
)
from webcrawl.storage.errors import ConfigError

URLS = [f"http://a.test/{i}" for i in range(5)] + ["http://b.test/x", "http://b.test/y"]
# Page 6 is linked from nobody; URL 5 is never fetched (frontier, not in the graph).
LINKS = {0: [1, 2, 3], 1: [2], 2: [0, 3], 3: [2, 5], 4: [0], 6: [4]}


def _truth(kind: str) -> dict[int, float]:
    g = nx.DiGraph()
    pages = list(LINKS)
    g.add_nodes_from(pages)
    g.add_edges_from((s, d) for s, ds in LINKS.items() for d in ds if d in LINKS)
    if kind == "pagerank":
        score = nx.pagerank(g, alpha=0.85, tol=1e-12)
    else:
        score = {p: g.in_degree(p) + 1.0 for p in pages}
    mean = np.mean(list(score.values()))
    return {p: v / mean for p, v in score.items()}


@pytest.mark.parametrize("kind", ["pagerank", "inlinks"])
def test_weights_against_networkx(kind, tmp_path, write_crawl):
    db = write_crawl(tmp_path / "c.db", URLS, LINKS)
    ids = [6, 0, 3, 2, 1, 4]  # any order: the result follows it
    got = importance_weights(db, ids, kind)
    want = _truth(kind)
    np.testing.assert_allclose(got, [want[i] for i in ids], rtol=1e-6)
    assert got.mean() == pytest.approx(1.0)


def test_uniform_and_given(tmp_path, write_crawl):
    db = write_crawl(tmp_path / "c.db", URLS, LINKS)
    np.testing.assert_array_equal(importance_weights(db, [0, 1, 2], "uniform"), 1.0)
    got = given_weights(URLS[:3], {URLS[0]: 2.0, URLS[1]: 1.0, URLS[2]: 3.0})
    np.testing.assert_allclose(got, [1.0, 0.5, 1.5])
    with pytest.raises(ConfigError, match="lack 1 of the 3"):
        given_weights(URLS[:3], {URLS[0]: 2.0, URLS[1]: 1.0})
    with pytest.raises(ConfigError, match="positive"):
        given_weights(URLS[:1], {URLS[0]: 0.0})
    with pytest.raises(ConfigError, match="importance"):
        importance_weights(db, [0], "fame")


def test_read_weights(tmp_path):
    path = tmp_path / "w.tsv"
    path.write_text("weight\turl\n2.5\thttp://a.test/0\n1\thttp://a.test/1\n")
    assert read_weights(path) == {"http://a.test/0": 2.5, "http://a.test/1": 1.0}
    path.write_text("url\tweight\nhttp://a.test/0\tlots\n")
    with pytest.raises(ConfigError, match="line 2"):
        read_weights(path)
    with pytest.raises(ConfigError, match="cannot read"):
        read_weights(tmp_path / "missing.tsv")
