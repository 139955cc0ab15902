"""``webcrawl analyze pagerank|hits|bowtie|degrees`` end to end: store -> loader -> CLI."""

from __future__ import annotations

import json

import networkx as nx
import numpy as np
import pytest
from crawldb import write_crawl
from webcrawl.crawler.cli import main

URLS = [
    "http://a.test/", "http://a.test/x", "http://a.test/y",  # host 0
    "http://b.test/", "http://b.test/f", "http://b.test/z",  # host 1
    "http://c.test/",                                          # host 2
]
# Out-links of every fetched page; 4 and 6 are never fetched (the frontier).
LINKS = {0: [1, 2, 3], 1: [0, 2], 2: [0, 3, 2], 3: [4, 0, 5], 5: [0, 6]}


def host_of(url_id):
    return URLS[url_id].split("/")[2]


@pytest.fixture
def crawl_db(tmp_path):
    path = tmp_path / "crawl.db"
    return write_crawl(path, URLS, LINKS)


def expected_graph(*, remote_only=False, crawled_only=False):
    graph = nx.DiGraph()
    nodes = [i for i in range(len(URLS)) if not crawled_only or i in LINKS]
    graph.add_nodes_from(nodes)
    for src, dsts in LINKS.items():
        for dst in dsts:
            if src == dst or dst not in nodes or (remote_only and host_of(src) == host_of(dst)):
                continue
            graph.add_edge(src, dst)
    return graph


def run_json(capsys, *argv):
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("flags", [[], ["--remote-only"], ["--graph", "all"],
                                   ["--graph", "pages", "--remote-only"]],
                         ids=["default", "remote", "all", "pages-remote"])
def test_pagerank_json_matches_networkx(crawl_db, capsys, flags):
    out = run_json(capsys, "analyze", "pagerank", "--db", str(crawl_db), "--json", *flags)
    kind = "all" if "all" in flags else "pages"
    graph = expected_graph(remote_only="--remote-only" in flags, crawled_only=kind == "pages")
    expected = nx.pagerank(graph, tol=1e-14, max_iter=10_000)
    assert out["nodes"] == graph.number_of_nodes() and out["links"] == graph.number_of_edges()
    assert out["graph"]["kind"] == kind
    assert out["graph"]["nodes"] == graph.number_of_nodes()
    assert out["graph"]["links"] == graph.number_of_edges()
    assert len(out["top"]) == graph.number_of_nodes()  # fewer nodes than the default top
    for row in out["top"]:
        assert row["score"] == pytest.approx(expected[URLS.index(row["url"])], abs=1e-9)
        assert row["crawled"] == (URLS.index(row["url"]) in LINKS)
    scores = [row["score"] for row in out["top"]]
    assert scores == sorted(scores, reverse=True)
    assert [row["rank"] for row in out["top"]] == list(range(1, len(scores) + 1))


def test_pagerank_table_and_top(crawl_db, capsys):
    assert main(["analyze", "pagerank", "--db", str(crawl_db), "--top", "2"]) == 0
    out = capsys.readouterr().out
    graph = expected_graph(crawled_only=True)
    expected = nx.pagerank(graph, tol=1e-14)
    best = max(expected, key=expected.get)
    lines = out.splitlines()
    assert lines[0].startswith(f"PageRank over the graph of fetched pages: 5 pages, "
                               f"{graph.number_of_edges()} links")
    assert "rank" in lines[1] and "url" in lines[1]
    assert len(lines) == 5  # title, header, rule, two rows
    assert URLS[best] in lines[3]


def test_pagerank_mean_normalisation(crawl_db, capsys):
    out = run_json(capsys, "analyze", "pagerank", "--db", str(crawl_db), "--json", "--mean",
                   "--graph", "all")
    assert sum(row["score"] for row in out["top"]) == pytest.approx(len(URLS))


def test_hits_json_matches_networkx(crawl_db, capsys):
    out = run_json(capsys, "analyze", "hits", "--db", str(crawl_db), "--json", "--graph", "all")
    hubs, auths = nx.hits(expected_graph(), tol=1e-14, max_iter=100_000)
    for row in out["authorities"]:
        assert row["score"] == pytest.approx(auths[URLS.index(row["url"])], abs=1e-8)
    for row in out["hubs"]:
        assert row["score"] == pytest.approx(hubs[URLS.index(row["url"])], abs=1e-8)


def test_bowtie_json(crawl_db, capsys):
    out = run_json(capsys, "analyze", "bowtie", "--db", str(crawl_db), "--json", "--graph", "all")
    # SCC {0,1,2,3,5}; OUT {4, 6} (frontier pages linked from the core).
    regions = {k: v["count"] for k, v in out["regions"].items()}
    assert regions["SCC"] == 5 and regions["OUT"] == 2
    assert sum(regions.values()) == 7
    assert out["wcc_count"] == 1 and out["largest_wcc"] == 7
    assert out["scc_size_distribution"] == [{"size": 1, "count": 2}, {"size": 5, "count": 1}]


def test_bowtie_table(crawl_db, capsys):
    assert main(["analyze", "bowtie", "--db", str(crawl_db), "--graph", "all"]) == 0
    out = capsys.readouterr().out
    assert "SCC" in out and "71.4%" in out and "TENDRILS" in out
    assert "graph of all discovered URLs: 7 URLs (5 fetched pages)" in out
    assert main(["analyze", "bowtie", "--db", str(crawl_db)]) == 0  # default: the pages
    out = capsys.readouterr().out
    assert "Bow-tie of the graph of fetched pages: 5 pages" in out and "100.0%" in out


def test_degrees_json_and_table(crawl_db, capsys):
    out = run_json(capsys, "analyze", "degrees", "--db", str(crawl_db), "--json",
                   "--graph", "all")
    graph = expected_graph()
    in_deg = np.array([graph.in_degree(i) for i in range(len(URLS))])
    values, counts = np.unique(in_deg, return_counts=True)
    assert out["in_distribution"] == {"degree": values.tolist(), "count": counts.tolist()}
    assert out["fits"] == {"in": None, "out": None}  # 7 pages: too few for a power law
    assert main(["analyze", "degrees", "--db", str(crawl_db)]) == 0
    assert "Power-law fits" in capsys.readouterr().out


def test_missing_db_is_one_line_error(tmp_path, capsys):
    code = main(["analyze", "pagerank", "--db", str(tmp_path / "nope.db")])
    err = capsys.readouterr().err
    assert code != 0
    assert err.count("\n") == 1 and "no crawl database" in err and "Traceback" not in err


def test_bad_top_is_one_line_error(crawl_db, capsys):
    assert main(["analyze", "hits", "--db", str(crawl_db), "--top", "0"]) != 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--top" in err


@pytest.mark.parametrize("topic", ["pagerank", "hits", "bowtie", "degrees"])
def test_default_graph_is_the_fetched_pages(crawl_db, capsys, topic):
    out = run_json(capsys, "analyze", topic, "--db", str(crawl_db), "--json")
    pages = expected_graph(crawled_only=True)
    assert out["graph"] == {"kind": "pages", "nodes": 5, "pages": 5, "truncated_pages": 0,
                            "duplicates_collapsed": 0, "near_duplicates_collapsed": 0,
                            "links": pages.number_of_edges(),
                            "sites": 3, "mirrors": [],
                            "description": "graph of fetched pages: 5 pages, "
                                           f"{pages.number_of_edges()} links"}


@pytest.mark.parametrize(("flag", "hint"), [("--crawled-only", "--graph pages"),
                                            ("--include-frontier", "--graph all")])
@pytest.mark.parametrize("command", [["analyze", "pagerank"], ["analyze", "cores"],
                                     ["analyze", "quality"], ["compare", "--virtual"],
                                     ["report"]])
def test_retired_graph_flags_say_what_replaced_them(crawl_db, capsys, flag, hint, command):
    with pytest.raises(SystemExit) as exc:
        main([*command, "--db", str(crawl_db), flag])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{flag} was retired" in err and hint in err
