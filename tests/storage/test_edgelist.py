"""`import edges` (webcrawl.storage.edgelist): published edge-list layouts against an independent
reading of the same lines (networkx as the oracle), and the analyses on the result."""

from __future__ import annotations

import gzip
import io
import itertools
import json
import random
import sqlite3
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
import webcrawl.storage._edgeread as edgeread
import webcrawl.storage._edgewrite as edgewrite
from webcrawl.analysis.graph import load_graph, pagerank
from webcrawl.crawler.cli import main
from webcrawl.storage.edgelist import import_edges
from webcrawl.storage.errors import ConfigError, InputFormatError, StoreError
from webcrawl.storage.export import export_edges
from webcrawl.storage.reader import CrawlReader


def random_edges(n: int = 60, m: int = 400, seed: int = 1) -> list[tuple[int, int]]:
    rng = random.Random(seed)
    ids = rng.sample(range(10, 10_000), n)  # sparse, unsorted ids
    return [(rng.choice(ids), rng.choice(ids)) for _ in range(m)]


def stored_edges(db: Path) -> list[tuple[str, str]]:
    with CrawlReader(db) as reader:
        return [(s, d) for s, d, _ in reader.iter_edges()]


def write(path: Path, text: str, *, gz: bool = False) -> Path:
    data = text.encode()
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


@pytest.mark.parametrize(("sep", "gz", "noise"), [
    ("\t", False, False), (" ", True, False), ("  \t ", False, True), ("\t", True, True)],
    ids=["tab", "space-gzip", "mixed-blanks-comments", "tab-gzip-comments"])
def test_integer_edge_list_round_trips(tmp_path: Path, sep: str, gz: bool, noise: bool) -> None:
    edges = random_edges()
    lines = ["# Directed graph (each unordered pair of nodes is saved once)",
             "# FromNodeId\tToNodeId"]
    for k, (a, b) in enumerate(edges):
        lines.append(f"{a}{sep}{b}" + ("  " if noise and k % 7 == 0 else ""))
        if noise and k == 200:
            lines += ["# a comment in the middle", ""]
    path = write(tmp_path / "g.txt", "\n".join(lines) + "\n", gz=gz)
    result = import_edges(path, tmp_path / "g.db")
    assert (result.edges, result.names) == (len(edges), "ids")
    # Same multiset of links, each page's links in file order.
    got = stored_edges(tmp_path / "g.db")
    expected = sorted(((str(a), str(b)) for a, b in edges), key=lambda e: int(e[0]))
    assert sorted(got, key=lambda e: int(e[0])) == expected
    for src in {a for a, _ in edges}:
        assert [d for s, d in got if s == str(src)] == [str(b) for a, b in edges if a == src]
    oracle = nx.DiGraph(nx.parse_edgelist([f"{a} {b}" for a, b in edges],
                                          create_using=nx.DiGraph, nodetype=int))
    graph = load_graph(tmp_path / "g.db", graph="all", drop_self_loops=False)
    assert graph.n == oracle.number_of_nodes() and graph.m == oracle.number_of_edges()
    # Every node is a page (crawled), those without out-links too; no fetch order.
    assert graph.crawled.all()
    assert graph.fetch_order.size == 0
    assert graph.urls[int(graph.seeds[0])] == str(edges[0][0])


def test_pagerank_of_an_imported_graph_matches_networkx(tmp_path: Path) -> None:
    edges = [(a, b) for a, b in random_edges(n=80, m=600, seed=3) if a != b]
    path = write(tmp_path / "g.txt", "".join(f"{a}\t{b}\n" for a, b in edges))
    import_edges(path, tmp_path / "g.db")
    graph = load_graph(tmp_path / "g.db", graph="all")
    ours = pagerank(graph.adjacency).scores
    oracle = nx.pagerank(nx.DiGraph(edges), alpha=0.85, tol=1e-12)
    np.testing.assert_allclose(ours, [oracle[int(u)] for u in graph.urls], atol=1e-9)


def test_common_crawl_vertices_with_reversed_hosts(tmp_path: Path) -> None:
    vertices = write(tmp_path / "v.txt", "0\tcom.example\n1\tcom.example.www\n"
                                         "2\torg.wikipedia.en\n3\tnet.lonely\n")
    edges = write(tmp_path / "e.txt", "0\t1\n1\t2\n2\t0\n2\t1\n", gz=True)
    result = import_edges(edges, tmp_path / "cc.db", vertices=vertices)
    assert (result.nodes, result.edges, result.hosts, result.names) == (4, 4, 4, "reversed-hosts")
    assert stored_edges(tmp_path / "cc.db") == [
        ("http://example.com/", "http://www.example.com/"),
        ("http://www.example.com/", "http://en.wikipedia.org/"),
        ("http://en.wikipedia.org/", "http://example.com/"),
        ("http://en.wikipedia.org/", "http://www.example.com/")]
    with CrawlReader(tmp_path / "cc.db") as reader:
        _, hosts = reader.hosts()
        table = reader.urls()
    assert sorted(hosts) == ["en.wikipedia.org", "example.com", "lonely.net", "www.example.com"]
    assert table.urls[3] == "http://lonely.net/"  # an isolated vertex is still a node
    assert table.has_outcome("fetched").all()  # every node a page, the lonely one too
    import_edges(edges, tmp_path / "sources.db", vertices=vertices, pages="sources")
    with CrawlReader(tmp_path / "sources.db") as reader:
        table = reader.urls()
    assert table.has_outcome("fetched").tolist() == [True, True, True, False]
    assert table.outcome[3] == -1  # no out-links: discovered, not fetchable


def test_vertices_by_line_number_and_sparse_ids(tmp_path: Path) -> None:
    urls = write(tmp_path / "g.urls", "http://a.test/\nhttp://b.test/x\nhttp://c.test/\n")
    edges = write(tmp_path / "g.txt", "0 1\n1 2\n2 0\n")
    import_edges(edges, tmp_path / "law.db", vertices=urls, seeds=["http://b.test/x"])
    assert stored_edges(tmp_path / "law.db") == [
        ("http://a.test/", "http://b.test/x"), ("http://b.test/x", "http://c.test/"),
        ("http://c.test/", "http://a.test/")]
    graph = load_graph(tmp_path / "law.db", graph="all")
    assert [graph.urls[i] for i in graph.seeds] == ["http://b.test/x"]
    sparse = write(tmp_path / "v.txt", "70 http://x.test/\n5 http://y.test/\n")
    edges = write(tmp_path / "e2.txt", "70 5\n5 70\n")
    import_edges(edges, tmp_path / "sparse.db", vertices=sparse)
    assert stored_edges(tmp_path / "sparse.db") == [("http://y.test/", "http://x.test/"),
                                                   ("http://x.test/", "http://y.test/")]


def _snap_file(path: Path, edges: list[tuple[int, int]], *, gz: bool = False) -> Path:
    """``edges`` in SNAP's layout: its ``#`` header, then ``FromNodeId<TAB>ToNodeId``."""
    nodes = {v for e in edges for v in e}
    header = ("# Directed graph (each unordered pair of nodes is saved once): web-test.txt\n"
              f"# Nodes: {len(nodes)} Edges: {len(edges)}\n# FromNodeId\tToNodeId\n")
    return write(path, header + "".join(f"{a}\t{b}\n" for a, b in edges), gz=gz)


def _dangling_edges(seed: int) -> list[tuple[int, int]]:
    """A SNAP-like graph, sources ascending, where a third of the nodes only receive
    links (dangling pages), with repeated links and no self-loops."""
    rng = random.Random(seed)
    sources = rng.sample(range(1000), 200)
    sinks = rng.sample(range(1000, 2000), 100)
    edges = [(a, rng.choice(sources + sinks)) for a in sources for _ in range(rng.randint(1, 8))]
    edges += [edges[k] for k in range(0, len(edges), 17)]  # repeated links
    return sorted((a, b) for a, b in edges if a != b)


def _cli_pagerank(db: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, float]:
    """The default ``analyze pagerank`` of ``db``, every node's score by name."""
    capsys.readouterr()
    assert main(["analyze", "pagerank", "--db", str(db), "--top", "1000000", "--json"]) == 0
    return {r["url"]: r["score"] for r in json.loads(capsys.readouterr().out)["top"]}


@pytest.mark.parametrize("case", ["four-lines", "snap", "snap-gzip", "urls", "vertices"])
def test_default_pagerank_of_any_edge_list_is_networkx(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str) -> None:
    """Every node of an edge list is a page, dangling ones included: the default
    ``import edges`` then ``analyze pagerank`` is networkx's PageRank of the same lines
    (L1 < 1e-6), node for node."""
    edges = [(0, 1), (1, 2), (2, 0), (0, 3)] if case == "four-lines" else _dangling_edges(4)
    args: list[str] = []
    name = str
    if case in ("snap", "snap-gzip", "four-lines"):
        path = _snap_file(tmp_path / "g.txt", edges, gz=case == "snap-gzip")
    elif case == "urls":
        def name(v: int) -> str:
            return f"http://h{v % 7}.test/p{v}"
        path = write(tmp_path / "g.txt", "".join(f"{name(a)} {name(b)}\n" for a, b in edges))
    else:  # integer ids named by a vertices file (Common Crawl's reversed hosts)
        def name(v: int) -> str:
            return f"http://www.site{v}.test/"
        nodes = sorted({v for e in edges for v in e})
        vertices = write(tmp_path / "v.txt", "".join(f"{v}\ttest.site{v}.www\n" for v in nodes))
        path = write(tmp_path / "g.txt", "".join(f"{a}\t{b}\n" for a, b in edges))
        args = ["--vertices", str(vertices)]
    db = tmp_path / "g.db"
    assert main(["import", "edges", str(path), *args, "--db", str(db), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    oracle = nx.pagerank(nx.DiGraph(edges), alpha=0.85, tol=1e-13, max_iter=10_000)
    assert result["pages"] == result["nodes"] == len(oracle)
    assert result["pages_with_links"] == len({a for a, _ in edges}) < len(oracle)
    ours = _cli_pagerank(db, capsys)
    assert set(ours) == {name(v) for v in oracle}
    assert sum(abs(ours[name(v)] - p) for v, p in oracle.items()) < 1e-6


def test_sources_only_are_pages_when_asked(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """``--pages sources``: the nodes without out-links are discovered URLs nobody
    fetched, so the default graph is the one among the sources (networkx on it), and
    ``--graph all`` is still every node."""
    edges = _dangling_edges(seed=5)
    path = _snap_file(tmp_path / "g.txt", edges)
    db = tmp_path / "g.db"
    assert main(["import", "edges", str(path), "--pages", "sources", "--db", str(db),
                 "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    sources = {a for a, _ in edges}
    assert result["pages"] == result["pages_with_links"] == len(sources) < result["nodes"]
    among = nx.DiGraph([(a, b) for a, b in edges if b in sources])
    among.add_nodes_from(sources)  # a source whose links all go to sinks
    oracle = nx.pagerank(among, alpha=0.85, tol=1e-13, max_iter=10_000)
    ours = _cli_pagerank(db, capsys)
    assert set(ours) == {str(v) for v in sources}
    assert sum(abs(ours[str(v)] - p) for v, p in oracle.items()) < 1e-6
    graph = load_graph(db, graph="all")
    assert graph.n == len({v for e in edges for v in e})
    with pytest.raises(SystemExit, match="2"):  # argparse: not a choice
        main(["import", "edges", str(path), "--pages", "some", "--db", str(tmp_path / "x.db")])
    with pytest.raises(ConfigError, match="pages must be one of all, sources"):
        import_edges(path, tmp_path / "x.db", pages="some")
    assert not (tmp_path / "x.db").exists()


@pytest.mark.parametrize("text", ["", "\n\n", "# Nodes: 0 Edges: 0\n# FromNodeId\tToNodeId\n",
                                  "src\tdst\tnofollow\n"],
                         ids=["empty", "blank-lines", "snap-header-only", "tsv-header-only"])
@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
def test_a_file_without_links_is_refused_and_writes_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, gz: bool) -> None:
    """An edge list with no link would make an empty database: one line naming the
    file, a non-zero exit, no database and no temporary file."""
    path = write(tmp_path / "e.txt", text, gz=gz)
    with pytest.raises(InputFormatError, match="no links to import"):
        import_edges(path, tmp_path / "e.db")
    capsys.readouterr()
    assert main(["import", "edges", str(path), "--db", str(tmp_path / "e.db")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(path) in err and "no links" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["e.txt"]


def test_names_directly(tmp_path: Path) -> None:
    path = write(tmp_path / "n.txt", "# url pairs\nhttp://a.test/ http://b.test/\n"
                                     "http://b.test/ http://a.test/p\nhttp://a.test/p http://a.test/\n")
    result = import_edges(path, tmp_path / "n.db")
    assert (result.nodes, result.hosts, result.names) == (3, 2, "urls")
    assert stored_edges(tmp_path / "n.db") == [
        ("http://a.test/", "http://b.test/"), ("http://b.test/", "http://a.test/p"),
        ("http://a.test/p", "http://a.test/")]


def test_bad_input_is_one_clear_error(tmp_path: Path) -> None:
    edges = write(tmp_path / "e.txt", "0 1\n1 9\n")
    vertices = write(tmp_path / "v.txt", "0 a\n1 b\n")
    with pytest.raises(ConfigError, match="9 names a vertex missing"):
        import_edges(edges, tmp_path / "x.db", vertices=vertices)
    assert not (tmp_path / "x.db").exists()  # nothing half-written left behind
    with pytest.raises(ConfigError, match="not a node"):
        import_edges(edges, tmp_path / "x.db", seeds=["42"])
    with pytest.raises(ConfigError, match="cannot parse as 2-column lines"):
        import_edges(write(tmp_path / "bad.txt", "0 1\n2\n"), tmp_path / "x.db")
    import_edges(edges, tmp_path / "x.db")
    with pytest.raises(StoreError, match="already exists"):
        import_edges(edges, tmp_path / "x.db")


def test_cli_import_then_compare_virtual(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    rng = np.random.default_rng(5)
    src = rng.integers(0, 300, 3000)
    dst = rng.integers(0, 300, 3000)
    path = write(tmp_path / "g.txt", "".join(f"{a} {b}\n" for a, b in zip(src, dst, strict=True)))
    db = tmp_path / "g.db"
    assert main(["import", "edges", str(path), "--db", str(db), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["edges"] == 3000
    assert main(["compare", "--db", str(db), "--virtual", "--strategies", "bfs,pagerank",
                 "--checkpoints", "0", "--json"]) == 0
    comparison = json.loads(capsys.readouterr().out)
    # No recorded order (the graph was not crawled); every ordering ran over it, beside
    # the ideal ceiling.
    assert set(comparison["summary"]) == {"bfs", "pagerank", "ideal"}
    reachable = nx.descendants(nx.DiGraph(list(zip(src.tolist(), dst.tolist(), strict=True))),
                               int(src[0])) | {int(src[0])}
    assert comparison["summary"]["bfs"]["pages"] == min(len(reachable),
                                                        comparison["graphs"]["g.db"]["pages"])
    assert main(["import", "edges", str(tmp_path / "missing.txt"), "--db",
                 str(tmp_path / "m.db")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no such file" in err


def test_export_edgelist_reads_in_networkx_and_igraph(tmp_path: Path) -> None:
    ig = pytest.importorskip("igraph")
    edges = random_edges(n=40, m=200, seed=9)
    path = write(tmp_path / "g.txt", "".join(f"{a}\t{b}\n" for a, b in edges))
    db = tmp_path / "g.db"
    import_edges(path, db)
    out = tmp_path / "g.edgelist"
    assert main(["export", "edges", "--db", str(db), "--graph", "stored", "--format", "edgelist",
                 "--output", str(out)]) == 0
    multiset = sorted((str(a), str(b)) for a, b in edges)
    g = nx.read_edgelist(out, create_using=nx.MultiDiGraph, nodetype=str)
    assert sorted((a, b) for a, b, _ in g.edges(keys=True)) == multiset
    h = ig.Graph.Read_Ncol(str(out), names=True, directed=True, weights=False)
    names = h.vs["name"]
    assert sorted((names[e.source], names[e.target]) for e in h.es) == multiset
    # graphml through networkx; --ids with its nodes file.
    gml = tmp_path / "g.graphml"
    assert main(["export", "edges", "--db", str(db), "--graph", "stored", "--format", "graphml",
                 "--output", str(gml)]) == 0
    x = nx.read_graphml(gml, force_multigraph=True)
    url = nx.get_node_attributes(x, "url")
    assert sorted((url[a], url[b]) for a, b, _ in x.edges(keys=True)) == multiset
    ids_out, nodes = tmp_path / "ids.txt", tmp_path / "nodes.tsv"
    assert main(["export", "edges", "--db", str(db), "--graph", "stored", "--format",
                 "edgelist", "--ids",
                 "--nodes", str(nodes), "-o", str(ids_out)]) == 0
    name = dict(line.split("\t") for line in nodes.read_text().splitlines())
    pairs = [line.split() for line in ids_out.read_text().splitlines()]
    assert sorted((name[a], name[b]) for a, b in pairs) == multiset


def test_jsonl_edges_match_tsv(tmp_path: Path) -> None:
    path = write(tmp_path / "g.txt", "1 2\n2 3\n")
    import_edges(path, tmp_path / "g.db")
    out = io.StringIO()
    assert export_edges(tmp_path / "g.db", out, "jsonl") == 2
    assert [json.loads(line) for line in out.getvalue().splitlines()] == [
        {"src": "1", "dst": "2", "nofollow": False}, {"src": "2", "dst": "3", "nofollow": False}]


def test_import_is_refused_while_another_writer_holds_the_database(tmp_path: Path) -> None:
    from webcrawl.storage.errors import StoreLockedError
    from webcrawl.storage.lock import WriterLock

    edges = write(tmp_path / "e.txt", "0 1\n1 2\n2 0\n")
    db = tmp_path / "g.db"
    with WriterLock(db), pytest.raises(StoreLockedError, match="being written"):
        import_edges(edges, db)
    assert not db.exists()  # nothing created beside the holder
    assert import_edges(edges, db).edges == 3  # free again once released


def test_ids_beyond_int32_fall_back_to_int64_and_keep_their_names(tmp_path: Path) -> None:
    from webcrawl.storage.edgelist import read_edge_arrays

    small = write(tmp_path / "s.txt", "0 1\n1 2\n2 0\n")
    assert str(read_edge_arrays(small)[0].type) == "int32"  # the narrow type when ids fit
    big_ids = [5, 2**31 + 7, 2**40, 2**31 - 1]
    edges = [(big_ids[0], big_ids[1]), (big_ids[1], big_ids[2]), (big_ids[2], big_ids[0]),
             (big_ids[3], big_ids[1]), (big_ids[1], big_ids[0])]
    path = write(tmp_path / "b.txt", "".join(f"{a}\t{b}\n" for a, b in edges))
    assert str(read_edge_arrays(path)[0].type) == "int64"
    result = import_edges(path, tmp_path / "b.db", seeds=[str(2**40)])
    assert (result.nodes, result.edges, result.names) == (4, 5, "ids")
    got = stored_edges(tmp_path / "b.db")
    assert sorted(got) == sorted((str(a), str(b)) for a, b in edges)
    graph = load_graph(tmp_path / "b.db", graph="all")
    assert sorted(graph.urls) == sorted(str(i) for i in big_ids)  # ascending id order, exact
    assert [graph.urls[int(s)] for s in graph.seeds] == [str(2**40)]
    oracle = nx.pagerank(nx.DiGraph(edges), alpha=0.85, tol=1e-12)
    np.testing.assert_allclose(pagerank(graph.adjacency).scores,
                               [oracle[int(u)] for u in graph.urls], atol=1e-9)


def test_many_statements_give_the_same_database(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunked inserts (nodes and links split over many statements, one page with more
    links than a chunk) store exactly what one statement stores."""
    edges = random_edges(n=50, m=300, seed=7)
    hub = edges[0][0]
    edges += [(hub, b) for _, b in random_edges(n=50, m=40, seed=8)]  # a page > LINK_CHUNK
    path = write(tmp_path / "g.txt", "".join(f"{a} {b}\n" for a, b in edges))
    monkeypatch.setattr(edgewrite, "LINK_BLOCK", 4)  # 3 blocks a statement below
    import_edges(path, tmp_path / "one.db")
    monkeypatch.setattr(edgewrite, "NODE_CHUNK", 7)
    monkeypatch.setattr(edgewrite, "LINK_CHUNK", 13)
    import_edges(path, tmp_path / "many.db")
    got = stored_edges(tmp_path / "many.db")
    assert got == stored_edges(tmp_path / "one.db")
    for src in {a for a, _ in edges}:  # each page's links in file order
        assert [d for s, d in got if s == str(src)] == [str(b) for a, b in edges if a == src]
    for table in ("id_ranges", "link_blocks", "hosts"):  # every row equal
        rows = []
        for name in ("one.db", "many.db"):
            with sqlite3.connect(tmp_path / name) as conn:
                rows.append(conn.execute(f"SELECT * FROM {table} ORDER BY 1").fetchall())
        assert rows[0] == rows[1] and rows[0]


_KILLED_IMPORT = """
import os, signal, sys
from webcrawl.storage.edgelist import import_edges

def progress(line):
    if line.startswith("wrote") and "nodes" in line:  # nodes written, links not yet
        os.kill(os.getpid(), signal.SIGKILL)

import_edges(sys.argv[1], sys.argv[2], progress=progress)
"""


def test_a_killed_import_leaves_no_partial_database(tmp_path: Path) -> None:
    """kill -9 in the middle of writing: nothing at the database path (readers cannot
    see half a graph), and the next import of the same path completes normally."""
    import os
    import subprocess
    import sys

    edges = random_edges(n=40, m=200, seed=5)
    path = write(tmp_path / "g.txt", "".join(f"{a}\t{b}\n" for a, b in edges))
    db = tmp_path / "g.db"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    run = subprocess.run([sys.executable, "-c", _KILLED_IMPORT, str(path), str(db)],
                         env=env, capture_output=True, timeout=120)
    assert run.returncode == -9, run.stderr.decode()
    # Its guardian (which kept the killed import's stderr, read to its end above) removed
    # the half-written temporary file and the lock file: nothing is left.
    assert sorted(p.name for p in tmp_path.iterdir() if "g.db" in p.name) == []
    result = import_edges(path, db)
    assert result.edges == len(edges)
    assert sorted(stored_edges(db), key=lambda e: (int(e[0]), int(e[1]))) == \
        sorted(((str(a), str(b)) for a, b in edges), key=lambda e: (int(e[0]), int(e[1])))
    assert not any(p.name.startswith(".g.db") for p in tmp_path.iterdir())


def test_an_existing_database_is_left_intact(tmp_path: Path) -> None:
    db = tmp_path / "g.db"
    import_edges(write(tmp_path / "a.txt", "0 1\n1 2\n"), db)
    before = db.read_bytes()
    with pytest.raises(StoreError, match="already exists"):
        import_edges(write(tmp_path / "b.txt", "5 6\n6 7\n7 5\n"), db)
    assert db.read_bytes() == before
    assert stored_edges(db) == [("0", "1"), ("1", "2")]


def test_an_integer_graph_is_stored_in_link_blocks(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Integer ids: the links go to link_blocks as schema.sql says (LINK_BLOCK links a
    row, ``first`` their index, sources ascending, file order within a page), no links
    rows, and urls without an index on url; a graph of URLs keeps a links row a page."""
    monkeypatch.setattr(edgewrite, "LINK_BLOCK", 4)
    edges = [(5, 1), (5, 0), (2, 5), (9, 9), (2, 1), (5, 1), (0, 2), (2, 2), (9, 0), (0, 9)]
    path = write(tmp_path / "g.txt", "".join(f"{a} {b}\n" for a, b in edges))
    import_edges(path, tmp_path / "g.db")
    order = sorted(range(len(edges)), key=lambda k: edges[k][0])  # stable: file order
    node = {v: i for i, v in enumerate(sorted({x for e in edges for x in e}))}
    with sqlite3.connect(tmp_path / "g.db") as conn:
        blocks = conn.execute("SELECT first, src, dst FROM link_blocks ORDER BY first").fetchall()
        assert conn.execute("SELECT count(*) FROM links").fetchone() == (0,)
        indexes = conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'"
                               " AND tbl_name = 'urls'").fetchall()
    assert indexes == []
    assert [b[0] for b in blocks] == [0, 4, 8]
    src = np.frombuffer(b"".join(b[1] for b in blocks), "<i4").tolist()
    dst = np.frombuffer(b"".join(b[2] for b in blocks), "<i4").tolist()
    assert src == [node[edges[k][0]] for k in order]
    assert dst == [node[edges[k][1]] for k in order]
    named = write(tmp_path / "u.txt", "http://a/ http://b/\nhttp://b/ http://a/\n")
    import_edges(named, tmp_path / "u.db")
    with sqlite3.connect(tmp_path / "u.db") as conn:
        assert conn.execute("SELECT count(*) FROM links").fetchone() == (2,)
        assert conn.execute("SELECT count(*) FROM link_blocks").fetchone() == (0,)
        assert conn.execute("SELECT id FROM urls WHERE url = 'http://b/'").fetchall() == [(1,)]
        with pytest.raises(sqlite3.IntegrityError):  # the crawler's seen-set index
            conn.execute("INSERT INTO urls (url, host_id, depth, discovered_seq)"
                         " VALUES ('http://a/', 0, 0, 0)")


def _table_rows(db: Path) -> dict[str, list[tuple[object, ...]]]:
    with sqlite3.connect(db) as conn:
        return {t: conn.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall()
                for t in ("urls", "id_ranges", "links", "link_blocks", "hosts")}


@pytest.mark.parametrize("ids", ["dense", "gaps", "sparse"])
@pytest.mark.parametrize("by_source", [True, False], ids=["sorted", "unsorted"])
def test_parsed_in_parts_gives_the_same_database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 ids: str, by_source: bool) -> None:
    """The columns are remapped and counted part by part as the parser hands them over
    (a page's links may straddle two parts): many small parts store exactly what one
    part stores, for ids already 0..n-1, ids with gaps (the id-indexed table) and
    sparse ids (np.unique), in a file sorted by source or not; both against networkx."""
    rng = random.Random(11)
    names = {"dense": list(range(60)), "gaps": rng.sample(range(200), 60),
             "sparse": rng.sample(range(10**9, 10**9 + 10**7), 60)}[ids]
    edges = [(rng.choice(names), rng.choice(names)) for _ in range(1500)]
    if ids == "dense":
        edges += [(a, a) for a in names]  # every id appears
    if by_source:
        edges.sort(key=lambda e: e[0])  # stable: file order kept within a page
    path = write(tmp_path / "g.txt", "".join(f"{a}\t{b}\n" for a, b in edges))
    import_edges(path, tmp_path / "one.db")
    monkeypatch.setattr(edgeread, "BLOCK_SIZE", 1 << 10)  # 1 KB, 100-200 lines a part
    parts = edgeread.read_edge_table(path)["c0"].num_chunks
    assert parts > 5
    import_edges(path, tmp_path / "parts.db")
    assert _table_rows(tmp_path / "parts.db") == _table_rows(tmp_path / "one.db")
    got = stored_edges(tmp_path / "parts.db")
    for src in {a for a, _ in edges}:  # each page's links in file order
        assert [d for s, d in got if s == str(src)] == [str(b) for a, b in edges if a == src]
    graph = load_graph(tmp_path / "parts.db", graph="all", drop_self_loops=False,
                       collapse_duplicates=False)
    oracle = nx.MultiDiGraph(edges)
    assert graph.n == oracle.number_of_nodes()
    assert graph.adjacency.sum() == oracle.number_of_edges()  # duplicates as weights
    assert graph.m == nx.DiGraph(edges).number_of_edges()
    assert [int(u) for u in graph.urls] == sorted(oracle.nodes)  # ascending id order
    assert graph.urls[int(graph.seeds[0])] == str(edges[0][0])


@pytest.mark.parametrize(("writer", "text"), [
    ("_write_links", "http://a/ http://b/\nhttp://b/ http://a/\n"),
    ("_write_blocks", "0 1\n1 2\n2 0\n")], ids=["links-rows", "link-blocks"])
def test_a_failed_links_writer_is_one_store_error_and_leaves_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, writer: str, text: str) -> None:
    """The links' writer (a second thread for a links row a page, after the nodes for
    link blocks): its SQLite error reaches the caller as the mapped StoreError, and
    neither the database nor a temporary file is left."""
    def full(*_args: object) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(edgewrite, writer, full)
    path = write(tmp_path / "g.txt", text)
    with pytest.raises(StoreError, match="disk full"):
        import_edges(path, tmp_path / "g.db")
    assert not (tmp_path / "g.db").exists()
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".g.db")]


@pytest.mark.parametrize("ids", ["dense", "gaps", "sparse", "negative"])
@pytest.mark.parametrize("pages", ["all", "sources"])
def test_id_graph_nodes_are_implied_by_their_ids(tmp_path: Path, ids: str, pages: str) -> None:
    """An integer-id graph stores no urls rows, a row per run of consecutive ids, yet
    every reader sees the rows a crawl would have: the id as URL, 'fetched' for every
    node (``pages='all'``) or exactly for the nodes with out-links (``'sources'``), the
    seeds, the empty host (truth: the edge list itself)."""
    rng = random.Random(11)
    names = {"dense": list(range(50)), "gaps": [i for i in range(70) if i % 9 != 4],
             "sparse": rng.sample(range(10, 10_000), 50),
             "negative": list(range(-30, 20))}[ids]
    edges = [(rng.choice(names[:30]), rng.choice(names)) for _ in range(200)]
    edges += [(names[1], v) for v in names]  # every name a node
    nodes = sorted({v for e in edges for v in e})
    path = write(tmp_path / "g.txt", "".join(f"{a} {b}\n" for a, b in edges))
    seeds = [str(nodes[3]), str(edges[5][0])]
    import_edges(path, tmp_path / "g.db", seeds=seeds, pages=pages)
    runs = 1 + sum(b != a + 1 for a, b in itertools.pairwise(nodes))
    with sqlite3.connect(tmp_path / "g.db") as conn:
        assert conn.execute("SELECT count(*) FROM urls").fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM id_ranges").fetchone() == (runs,)
        assert (runs == 1) == (ids in ("dense", "negative"))
    sources = {a for a, _ in edges} if pages == "sources" else set(nodes)
    assert len(sources) < len(nodes) or pages == "all"  # the two rules differ here
    with CrawlReader(tmp_path / "g.db") as reader:
        table = reader.urls()
        assert table.ids.tolist() == list(range(len(nodes)))
        assert list(table.urls) == [str(v) for v in nodes]
        assert [bool(f) for f in table.has_outcome("fetched")] == [v in sources for v in nodes]
        assert table.in_frontier.tolist() == [v not in sources for v in nodes]
        assert table.host_ids.tolist() == [0] * len(nodes)
        assert table.depth.tolist() == [-1] * len(nodes) and table.seq.tolist() == [-1] * len(nodes)
        seed_nodes = sorted({nodes.index(int(s)) for s in seeds})
        assert reader.seeds().tolist() == seed_nodes
        assert np.flatnonzero(table.discovered_seq == -1).tolist() == seed_nodes
        assert reader.urls(text=False).outcome.tolist() == table.outcome.tolist()
        picked = [7, 0, len(nodes) - 1, 7]
        assert reader.url_strings(picked) == [str(nodes[i]) for i in picked]
        with pytest.raises(KeyError):
            reader.url_strings([len(nodes)])
        pages = list(reader.iter_pages())
        assert [(p[0], p[5], p[6], p[14], p[15]) for p in pages] == [
            (str(v), "fetched" if v in sources else None, "", -1 if k in seed_nodes else 0, k)
            for k, v in enumerate(nodes)]
    graph = load_graph(tmp_path / "g.db", graph="all", drop_self_loops=False,
                       collapse_duplicates=False)
    assert list(graph.urls) == [str(v) for v in nodes]
    assert sorted(int(graph.urls[int(s)]) for s in graph.seeds) == sorted({int(s) for s in seeds})


def test_the_links_writer_stops_between_chunks_when_told(monkeypatch: pytest.MonkeyPatch) -> None:
    """When the other writer fails, the links thread is told to stop: it writes no
    further chunk (so a failed or interrupted import does not wait for every link)."""
    import threading

    monkeypatch.setattr(edgewrite, "LINK_CHUNK", 2)
    indptr = np.array([0, 2, 4, 6])
    counts, dst = np.diff(indptr), np.array([1, 2, 0, 2, 0, 1], np.int32)
    for told, rows in ((False, 3), (True, 0)):
        stop = threading.Event()
        if told:
            stop.set()
        with sqlite3.connect(":memory:") as conn:
            conn.execute("CREATE TABLE links (src INTEGER PRIMARY KEY, dst BLOB NOT NULL)")
            edgewrite._write_links(conn, dst, indptr, counts, stop)
            assert conn.execute("SELECT count(*) FROM links").fetchone()[0] == rows
