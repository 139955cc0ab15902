"""The loader collapses duplicate pages (``urls.duplicate_of``) into the first page with
their body; ``duplicates="keep"`` is the graph without the content-seen test.

The hand-made crawl: http://a.test/ (0) and /p (1) have https copies (2, 3); /q (4) is
a page of its own; /r (5) was never fetched.  Links: 0 -> 1, 2 (its own copy), 4;
1 -> 3 (its own copy), 0; 2 -> 3, 4 (the copy's links, as a crawl with
links_from_duplicates stores them); 3 -> 2; 4 -> 3, 3, 5.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from webcrawl.analysis.graph import load_graph
from webcrawl.analysis.graph.loader import collapse_map, graph_edges
from webcrawl.storage.errors import ConfigError

URLS = ["http://a.test/", "http://a.test/p", "https://a.test/", "https://a.test/p",
        "http://a.test/q", "http://a.test/r"]
LINKS = {0: [1, 2, 4], 1: [3, 0], 2: [3, 4], 3: [2], 4: [3, 3, 5]}
DUPLICATE_OF = {2: 0, 3: 1}


@pytest.fixture
def db(tmp_path: Path, write_crawl: Callable[..., Path]) -> Path:
    path = write_crawl(tmp_path / "c.db", URLS, LINKS)
    with sqlite3.connect(path) as conn:
        conn.executemany("UPDATE urls SET duplicate_of = ? WHERE id = ?",
                         [(o, d) for d, o in DUPLICATE_OF.items()])
    return path


def edges(g: object) -> set[tuple[int, int]]:
    adj = g.adjacency  # type: ignore[attr-defined]
    ids = g.store_ids  # type: ignore[attr-defined]
    rows = np.repeat(np.arange(adj.shape[0]), np.diff(adj.indptr))
    return set(zip(ids[rows].tolist(), ids[adj.indices].tolist(), strict=True))


def test_collapse_is_the_default(db: Path) -> None:
    g = load_graph(db)
    assert g.store_ids.tolist() == [0, 1, 4]
    # 0 -> 2 and 1 -> 3 became links to themselves: dropped as self-loops are.
    assert edges(g) == {(0, 1), (0, 4), (1, 0), (4, 1)}
    assert g.duplicates_collapsed == 2
    assert g.describe() == "graph of fetched pages: 3 pages, 2 duplicates collapsed, 4 links"
    assert g.info()["duplicates_collapsed"] == 2
    assert g.store_ids[g.fetch_order].tolist() == [0, 1, 4]


def test_self_loops_from_collapse_follow_drop_self_loops(db: Path) -> None:
    g = load_graph(db, drop_self_loops=False)
    assert edges(g) == {(0, 0), (0, 1), (0, 4), (1, 1), (1, 0), (4, 1)}


def test_keep_is_the_graph_without_the_test(db: Path, tmp_path: Path,
                                            write_crawl: Callable[..., Path]) -> None:
    kept = load_graph(db, duplicates="keep")
    plain = load_graph(write_crawl(tmp_path / "plain.db", URLS, LINKS))
    assert kept.store_ids.tolist() == plain.store_ids.tolist() == [0, 1, 2, 3, 4]
    assert edges(kept) == edges(plain) == {(0, 1), (0, 2), (0, 4), (1, 3), (1, 0), (2, 3),
                                           (2, 4), (3, 2), (4, 3)}
    assert kept.duplicates_collapsed == plain.duplicates_collapsed == 0
    assert kept.describe() == plain.describe()


def test_all_graph_collapses_too(db: Path) -> None:
    g = load_graph(db, graph="all")
    assert g.store_ids.tolist() == [0, 1, 4, 5]
    assert edges(g) == {(0, 1), (0, 4), (1, 0), (4, 1), (4, 5)}
    assert "2 duplicates collapsed" in g.describe()
    assert load_graph(db, graph="all", duplicates="keep").n == 6


def test_a_duplicate_seed_is_its_page(db: Path) -> None:
    default = load_graph(db)
    with sqlite3.connect(db) as conn:  # the seed is now the copy of https://a.test/
        conn.execute("UPDATE urls SET duplicate_of = NULL WHERE id = 2")
        conn.execute("UPDATE urls SET duplicate_of = 2 WHERE id = 0")
    g = load_graph(db)
    # The merged node is known by its canonical copy (the first URL), http://a.test/,
    # whichever copy the crawl fetched first: the same graph as before.
    assert g.store_ids.tolist() == [1, 0, 4]
    assert g.urls[1] == "http://a.test/"
    assert g.store_ids[g.seeds].tolist() == [0]
    assert edges(g) == edges(default)


def test_export_names_the_policy(db: Path) -> None:
    collapsed, kept = graph_edges(db), graph_edges(db, duplicates="keep")
    assert collapsed.nodes.tolist() == [0, 1, 4]
    assert collapsed.policy()["duplicate_pages"].startswith("collapsed: 2 pages")
    assert kept.nodes.tolist() == [0, 1, 2, 3, 4]
    assert kept.policy()["duplicate_pages"].startswith("kept")


def test_unknown_policy_is_one_line(db: Path) -> None:
    with pytest.raises(ConfigError, match="unknown duplicates policy 'merge'"):
        load_graph(db, duplicates="merge")  # type: ignore[arg-type]


@pytest.mark.parametrize(("dup", "of", "expected"), [
    ([3, 4], [1, 3], [0, 1, 2, 1, 1, 5]),      # a chain ends on its page
    ([1, 2, 3], [2, 3, 1], [0, 1, 2, 3, 4, 5]),  # a cycle is left as it is
    ([4], [5], [0, 1, 2, 3, 4, 5]),            # 5 is no page: 4 stays itself
    ([2], [2], [0, 1, 2, 3, 4, 5]),            # a page is no duplicate of itself
], ids=["chain", "cycle", "off-pages", "itself"])
def test_collapse_map(dup: list[int], of: list[int], expected: list[int]) -> None:
    got = collapse_map(np.array(dup), np.array(of), np.arange(5), 6)
    assert got.tolist() == expected
