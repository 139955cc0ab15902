"""`export edges` writes the graph the analyses measure, in forms other tools read.

One demo crawl (redirects, a frontier, duplicate links, nofollow links) is exported
and read back by networkx, pyarrow, DuckDB and `import edges`: the default export is
the graph of fetched pages, whose PageRank in networkx is ours; Parquet carries the
same links and says which graph they are; the TSV export imports back to the same
nodes and links.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from pathlib import Path
from typing import Any

import networkx as nx
import pytest
from webcrawl.analysis.graph.loader import graph_edges, load_graph
from webcrawl.crawler.cli import main
from webcrawl.crawler.cli.demo_job import DemoResult, run_demo
from webcrawl.storage.export import PARQUET_METADATA_KEY
from webcrawl.storage.reader import CrawlReader


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> DemoResult:
    out = tmp_path_factory.mktemp("demo")
    return run_demo(out, pages=200, hosts=4, seed=3, revisit_seconds=0, stream=io.StringIO())


def _export(*argv: str) -> None:
    assert main(["export", "edges", *argv]) == 0


def _stored_pairs(db: Path) -> Counter[tuple[str, str]]:
    """Every stored link as (src URL, dst URL), with multiplicity (the oracle)."""
    with CrawlReader(db) as reader:
        return Counter((s, d) for s, d, _ in reader.iter_edges())


def _tsv(path: Path) -> list[list[str]]:
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.reader(f, dialect="excel-tab"))


def test_default_export_is_the_pages_graph_and_networkx_agrees_on_pagerank(
        demo: DemoResult, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edges, nodes = tmp_path / "e.tsv", tmp_path / "n.tsv"
    _export("--db", str(demo.db), "--ids", "--nodes", str(nodes), "--output", str(edges))
    graph = load_graph(demo.db)
    rows = _tsv(edges)
    assert rows[0] == ["src", "dst", "nofollow"]
    assert len(rows) - 1 == graph.m < sum(_stored_pairs(demo.db).values())
    g = nx.DiGraph()
    g.add_nodes_from(int(r[0]) for r in _tsv(nodes))
    g.add_edges_from((int(a), int(b)) for a, b, _ in rows[1:])
    assert g.number_of_nodes() == graph.n
    theirs = nx.pagerank(g, alpha=0.85, tol=1e-13, max_iter=10_000)
    capsys.readouterr()
    assert main(["analyze", "pagerank", "--db", str(demo.db), "--top", str(graph.n),
                 "--json"]) == 0
    ours = {r["url"]: r["score"] for r in json.loads(capsys.readouterr().out)["top"]}
    url_of = dict(zip(graph.store_ids.tolist(), graph.urls, strict=True))
    assert len(ours) == graph.n
    assert sum(abs(ours[url_of[i]] - p) for i, p in theirs.items()) < 1e-6


def test_graph_all_and_stored(demo: DemoResult, tmp_path: Path) -> None:
    every = tmp_path / "all.tsv"
    stored = tmp_path / "stored.tsv"
    _export("--db", str(demo.db), "--graph", "all", "--output", str(every))
    _export("--db", str(demo.db), "--graph", "stored", "--output", str(stored))
    assert len(_tsv(every)) - 1 == load_graph(demo.db, graph="all").m
    pairs = _stored_pairs(demo.db)
    assert Counter((a, b) for a, b, _ in _tsv(stored)[1:]) == pairs
    # the all graph: stored links without self-loops, duplicates collapsed
    assert {(a, b) for a, b, _ in _tsv(every)[1:]} == {(a, b) for a, b in pairs if a != b}


def test_parquet_read_by_pyarrow_and_duckdb(demo: DemoResult, tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    duckdb = pytest.importorskip("duckdb")
    edges, nodes, urls = tmp_path / "e.parquet", tmp_path / "n.parquet", tmp_path / "u.parquet"
    _export("--db", str(demo.db), "--format", "parquet", "--ids", "--nodes", str(nodes),
            "--output", str(edges))
    _export("--db", str(demo.db), "--format", "parquet", "--output", str(urls))
    expected = graph_edges(demo.db)
    table = pq.read_table(edges)
    assert table.column("src").to_numpy().tolist() == expected.src.tolist()
    assert table.column("dst").to_numpy().tolist() == expected.dst.tolist()
    assert table.column("nofollow").to_pylist() == expected.nofollow.tolist()
    assert expected.nofollow.any()  # the demo marks some links nofollow
    policy = json.loads(pq.read_schema(edges).metadata[PARQUET_METADATA_KEY.encode()])
    assert (policy["graph"], policy["duplicates"], policy["self_loops"]) == (
        "pages", "collapsed", "dropped")
    assert policy["links"] == expected.src.size and policy["nodes"] == expected.nodes.size
    graph = load_graph(demo.db)
    node_table = pq.read_table(nodes)
    assert node_table.column("id").to_pylist() == graph.store_ids.tolist()
    assert node_table.column("url").to_pylist() == list(graph.urls)
    con = duckdb.connect()
    joined = con.execute(
        "SELECT s.url, d.url FROM read_parquet(?) e JOIN read_parquet(?) s ON s.id = e.src"
        " JOIN read_parquet(?) d ON d.id = e.dst", [str(edges), str(nodes), str(nodes)]
    ).fetchall()
    by_url = con.execute("SELECT src, dst FROM read_parquet(?)", [str(urls)]).fetchall()
    url_of = dict(zip(graph.store_ids.tolist(), graph.urls, strict=True))
    truth = Counter(zip([url_of[i] for i in expected.src.tolist()],
                        [url_of[i] for i in expected.dst.tolist()], strict=True))
    assert Counter(joined) == truth == Counter(by_url)


def _imported(db: Path) -> tuple[set[str], Counter[tuple[str, str]]]:
    with CrawlReader(db) as reader:
        urls = set(reader.urls().urls)
    return urls, _stored_pairs(db)


@pytest.mark.parametrize("graph", ["stored", "pages"])
def test_tsv_export_imports_back(demo: DemoResult, tmp_path: Path, graph: str) -> None:
    tsv = tmp_path / "e.tsv"
    _export("--db", str(demo.db), "--graph", graph, "--output", str(tsv))
    back = tmp_path / "back.db"
    assert main(["import", "edges", str(tsv), "--db", str(back)]) == 0
    rows = _tsv(tsv)[1:]
    nodes, links = _imported(back)
    assert links == Counter((a, b) for a, b, _ in rows)
    assert nodes == {u for a, b, _ in rows for u in (a, b)}
    if graph == "stored":
        assert links == _stored_pairs(demo.db)


def test_tsv_with_ids_imports_back_with_every_node(demo: DemoResult, tmp_path: Path) -> None:
    tsv, nodes_file = tmp_path / "e.tsv", tmp_path / "n.tsv"
    _export("--db", str(demo.db), "--graph", "stored", "--ids", "--nodes", str(nodes_file),
            "--output", str(tsv))
    back = tmp_path / "back.db"
    assert main(["import", "edges", str(tsv), "--vertices", str(nodes_file),
                 "--db", str(back)]) == 0
    nodes, links = _imported(back)
    with CrawlReader(demo.db) as reader:
        assert nodes == set(reader.urls().urls)  # isolated URLs too
    assert links == _stored_pairs(demo.db)


def test_parquet_needs_an_output_file(demo: DemoResult,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", "edges", "--db", str(demo.db), "--format", "parquet"]) == 1
    err: Any = capsys.readouterr().err
    assert "--output" in err and err.count("\n") == 1


@pytest.mark.parametrize("what", ["pages", "fetches", "rates"])
@pytest.mark.parametrize("fmt", ["edgelist", "graphml", "parquet"])
def test_an_edge_format_of_a_table_is_one_line(demo: DemoResult, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str],
                                               what: str, fmt: str) -> None:
    """The formats of each export come from storage's one list: a table offers tsv and
    jsonl only, whatever the format (parquet included), and nothing is written."""
    out = tmp_path / "out"
    assert main(["export", what, "--db", str(demo.db), "--format", fmt,
                 "--output", str(out)]) == 1
    err: Any = capsys.readouterr().err
    assert f"--format {fmt} does not apply to {what} (choose from tsv, jsonl)" in err
    assert err.count("\n") == 1 and not out.exists()


def test_edges_view_counts_the_stored_links_of_a_fixture_crawl(demo: DemoResult) -> None:
    """``SELECT count(*) FROM edges`` in the stdlib sqlite3 module and sqlite-utils is the
    stored link count of a crawl of the fixture web (duplicates, redirects, nofollow)."""
    import sqlite3

    sqlite_utils = pytest.importorskip("sqlite_utils")
    stored = sum(_stored_pairs(demo.db).values())
    assert stored > 1000
    with CrawlReader(demo.db) as reader:
        assert reader.links_csr().dst.size == stored
    conn = sqlite3.connect(f"file:{demo.db}?mode=ro", uri=True)
    try:
        assert conn.execute("SELECT count(*) FROM edges").fetchone() == (stored,)
        pairs = Counter(conn.execute("SELECT src_url, dst_url FROM edges").fetchall())
    finally:
        conn.close()
    assert pairs == _stored_pairs(demo.db)
    db = sqlite_utils.Database(demo.db)
    try:
        assert db["edges"].count == stored
    finally:
        db.close()
