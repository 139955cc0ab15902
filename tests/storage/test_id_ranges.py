"""An imported graph of integer ids, whose nodes are ``id_ranges`` rows instead of a
``urls`` row each (``schema.sql``), through every way out: the TSV export imports back
to the same nodes and links, networkx ranks the exported graph as we do, pyarrow and
DuckDB read its Parquet export, all against the edge list itself (the truth)."""

from __future__ import annotations

import csv
import json
import random
import sqlite3
from collections import Counter
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from webcrawl.analysis.graph import load_graph
from webcrawl.crawler.cli import main
from webcrawl.storage._idranges import IdRanges
from webcrawl.storage.edgelist import import_edges
from webcrawl.storage.reader import CrawlReader


@pytest.fixture
def graph_file(tmp_path: Path) -> tuple[Path, list[tuple[int, int]]]:
    """An id graph with gaps in its ids (several runs), a duplicate link and a
    self-loop, and nodes without out-links."""
    rng = random.Random(3)
    names = [i for i in range(3, 400) if i % 37 not in (5, 6)]
    edges = [(rng.choice(names[:250]), rng.choice(names)) for _ in range(1500)]
    edges += [(names[0], v) for v in names] + [(names[0], names[1]), (names[2], names[2])]
    path = tmp_path / "g.tsv"
    path.write_text("".join(f"{a}\t{b}\n" for a, b in edges))
    import_edges(path, tmp_path / "g.db")
    with sqlite3.connect(tmp_path / "g.db") as conn:
        assert conn.execute("SELECT count(*) FROM urls").fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM id_ranges").fetchone()[0] > 5
    return tmp_path / "g.db", edges


def _export(*argv: str) -> None:
    assert main(["export", "edges", *argv]) == 0


def _tsv(path: Path) -> list[list[str]]:
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.reader(f, dialect="excel-tab"))


def test_tsv_export_imports_back(graph_file: tuple[Path, list[tuple[int, int]]],
                                 tmp_path: Path) -> None:
    db, edges = graph_file
    tsv = tmp_path / "e.tsv"
    _export("--db", str(db), "--graph", "stored", "--output", str(tsv))
    rows = _tsv(tsv)
    assert Counter((int(a), int(b)) for a, b, _ in rows[1:]) == Counter(edges)
    back = tmp_path / "back.db"
    assert main(["import", "edges", str(tsv), "--db", str(back)]) == 0
    for path in (db, back):
        with CrawlReader(path) as reader:
            assert list(reader.urls().urls) == [str(v) for v in sorted({*sum(edges, ())})]
            got = [(int(a), int(b)) for a, b, _ in reader.iter_edges()]
        assert got == sorted(edges, key=lambda e: e[0])  # by source, file order kept
    with sqlite3.connect(db) as a, sqlite3.connect(back) as b:
        for table in ("id_ranges", "link_blocks"):
            assert a.execute(f"SELECT * FROM {table}").fetchall() == \
                b.execute(f"SELECT * FROM {table}").fetchall()


def test_default_export_ranks_as_networkx(graph_file: tuple[Path, list[tuple[int, int]]],
                                          tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    db, edges = graph_file
    out, nodes = tmp_path / "e.tsv", tmp_path / "n.tsv"
    _export("--db", str(db), "--ids", "--nodes", str(nodes), "--output", str(out))
    name = {int(i): int(url) for i, url in _tsv(nodes)}  # node id -> the file's id
    g = nx.DiGraph()
    g.add_nodes_from(name.values())
    g.add_edges_from((name[int(a)], name[int(b)]) for a, b, _ in _tsv(out)[1:])
    graph = load_graph(db)
    assert g.number_of_nodes() == graph.n
    # the pages graph: every node of the file (an imported node is a page), each
    # link once, self-loops dropped
    assert set(g.nodes) == {v for e in edges for v in e}
    assert {a for a, _ in edges} < set(g.nodes)  # some nodes have no out-links
    assert set(g.edges) == {(a, b) for a, b in edges if a != b}
    theirs = nx.pagerank(g, alpha=0.85, tol=1e-13, max_iter=10_000)
    capsys.readouterr()
    assert main(["analyze", "pagerank", "--db", str(db), "--top", str(graph.n), "--json"]) == 0
    ours = {r["url"]: r["score"] for r in json.loads(capsys.readouterr().out)["top"]}
    assert len(ours) == graph.n
    assert sum(abs(ours[str(v)] - p) for v, p in theirs.items()) < 1e-6


def test_parquet_read_by_pyarrow_and_duckdb(graph_file: tuple[Path, list[tuple[int, int]]],
                                            tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    duckdb = pytest.importorskip("duckdb")
    db, edges = graph_file
    by_url, by_id, nodes = (tmp_path / f"{n}.parquet" for n in ("u", "i", "n"))
    _export("--db", str(db), "--graph", "stored", "--format", "parquet", "--output", str(by_url))
    _export("--db", str(db), "--graph", "stored", "--format", "parquet", "--ids",
            "--nodes", str(nodes), "--output", str(by_id))
    table = pq.read_table(by_url)
    truth = Counter((str(a), str(b)) for a, b in edges)
    assert Counter(zip(table.column("src").to_pylist(), table.column("dst").to_pylist(),
                       strict=True)) == truth
    joined = duckdb.connect().execute(
        "SELECT s.url, d.url FROM read_parquet(?) e JOIN read_parquet(?) s ON s.id = e.src"
        " JOIN read_parquet(?) d ON d.id = e.dst", [str(by_id), str(nodes), str(nodes)]
    ).fetchall()
    assert Counter(joined) == truth


@pytest.mark.parametrize("ids", [[], [5], [0, 1, 2], [4, 5, 9, 10, 11, 30], [-3, -2, 7]],
                         ids=["none", "one", "dense", "runs", "negative"])
def test_runs_map_nodes_and_ids_both_ways(ids: list[int]) -> None:
    ranges = IdRanges.from_ids(np.array(ids, dtype=np.int64))
    assert ranges.n == len(ids)
    assert ranges.names().tolist() == ids
    assert ranges.names_of(np.arange(len(ids))).tolist() == ids
    assert ranges.nodes(np.array(ids, dtype=np.int64)).tolist() == list(range(len(ids)))
    missing = [v for v in range(-5, 35) if v not in ids]
    assert ranges.nodes(np.array(missing, dtype=np.int64)).tolist() == [-1] * len(missing)
    runs = sum(1 for k, v in enumerate(ids) if k == 0 or ids[k - 1] != v - 1)
    assert ranges.first.size == runs
