"""``webcrawl analyze sample|smallworld|cores`` end to end: store -> loader -> CLI."""

from __future__ import annotations

import json

import networkx as nx
import pytest
from crawldb import write_crawl
from webcrawl.crawler.cli import main

# Host a.test: fans 0, 1, 2 each link to centers 3, 4, 5 on host b.test (a K(3,3)
# across hosts), plus a second K(2,2) inside host a.test: 0, 1 -> 6, 7.
# Centers link back to fan 0 so every page is reachable; 8 is never fetched.
HOSTS = ["a.test", "b.test"]
URLS = [f"http://a.test/f{i}" for i in range(3)] + \
       [f"http://b.test/c{i}" for i in range(3)] + \
       ["http://a.test/x", "http://a.test/y", "http://b.test/frontier"]
HOST_OF = [0, 0, 0, 1, 1, 1, 0, 0, 1]
LINKS = {
    0: [3, 4, 5, 6, 7], 1: [3, 4, 5, 6, 7], 2: [3, 4, 5],
    3: [0, 8], 4: [0], 5: [1], 6: [2], 7: [0, 6],
}


@pytest.fixture
def crawl_db(tmp_path):
    path = tmp_path / "crawl.db"
    return write_crawl(path, URLS, LINKS)


def run_json(capsys, *argv):
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def crawled_graph():
    g = nx.DiGraph()
    g.add_nodes_from(LINKS)
    g.add_edges_from((s, d) for s, ds in LINKS.items() for d in ds if d in LINKS)
    return g


def test_cores_counts(crawl_db, capsys):
    out = run_json(capsys, "analyze", "cores", "--db", str(crawl_db), "--max-i", "3",
                   "--max-j", "3", "--same-host-links", "keep", "--json")
    # Cores: {0,1,2} x {3,4,5} and {0,1} x {3..7} (j = 5 > max_j): both hold a K(2,2)
    # and a K(2,3), only the first a K(3,2) or a K(3,3).
    assert out["counts"] == [[2, 2], [1, 1]]
    assert out["maximal"] == [[0, 0], [0, 1]] and out["cores"] == 2
    assert out["same_host_links_dropped"] == 0
    wide = run_json(capsys, "analyze", "cores", "--db", str(crawl_db), "--max-i", "3",
                    "--max-j", "5", "--same-host-links", "keep", "--json")
    assert wide["maximal"] == [[0, 0, 0, 1], [0, 1, 0, 0]]
    assert wide["counts"] == [[2, 2, 1, 1], [1, 1, 0, 0]]
    top = out["examples"][0]
    assert sorted(top["centers"]) == URLS[3:6] and sorted(top["fans"]) == URLS[0:3]


def test_cores_drop_same_host_links_by_default(crawl_db, capsys):
    out = run_json(capsys, "analyze", "cores", "--db", str(crawl_db), "--max-i", "3",
                   "--max-j", "3", "--json")
    # The links inside a.test (0, 1 -> 6, 7; 6 -> 2; 7 -> 0, 6) endorse nothing: the
    # K(2,2) they formed is gone, the cross-host K(3,3) stays, fans counted as pages.
    assert out["same_host_links_dropped"] == 7 and out["links"] == 9 + 3
    assert out["counts"] == [[1, 1], [1, 1]] and out["maximal"] == [[0, 0], [0, 1]]
    assert out["cores"] == 1 and out["diverse"] is False
    text = (main(["analyze", "cores", "--db", str(crawl_db)]), capsys.readouterr().out)
    assert text[0] == 0 and "7 same-site links dropped" in text[1]


def test_cores_limit_is_an_option(crawl_db, capsys):
    assert main(["analyze", "cores", "--db", str(crawl_db), "--max-sets", "1",
                 "--same-host-links", "keep"]) != 0
    err = capsys.readouterr().err
    assert "more than 1 cores" in err and "--max-sets" in err and "Traceback" not in err


def test_diverse_cores_drop_same_host_links(crawl_db, capsys):
    out = run_json(capsys, "analyze", "cores", "--db", str(crawl_db), "--max-i", "3",
                   "--max-j", "3", "--diverse", "--json")
    # The cross-host K(3,3) survives the link filter, but its fans all sit on
    # a.test: one site, so not a diverse core (Kumar: i fans on i distinct sites).
    assert out["counts"] == [[0, 0], [0, 0]] and out["maximal"] == [[0, 0], [0, 0]]
    assert out["links"] == 9 + 3     # the K(3,3) and the back-links 3->0, 4->0, 5->1
    assert out["diverse"] is True


def test_cores_table(crawl_db, capsys):
    assert main(["analyze", "cores", "--db", str(crawl_db), "--max-i", "3",
                 "--max-j", "3"]) == 0
    text = capsys.readouterr().out
    assert "C(i, j) of the graph of fetched pages" in text and "maximal cores" in text
    assert "center http://b.test/c0" in text


def test_smallworld_matches_networkx(crawl_db, capsys):
    out = run_json(capsys, "analyze", "smallworld", "--db", str(crawl_db), "--sources", "0",
                   "--json")
    g = crawled_graph()
    assert out["pages"] == g.number_of_nodes() and out["links"] == g.number_of_edges()
    u = g.to_undirected()
    assert out["clustering"]["average"] == pytest.approx(nx.average_clustering(u))
    assert out["clustering"]["transitivity"] == pytest.approx(nx.transitivity(u))
    assert nx.is_strongly_connected(g)
    assert out["directed"]["characteristic_length"] == pytest.approx(
        nx.average_shortest_path_length(g))
    assert out["directed"]["diameter"] == nx.diameter(g)
    assert out["undirected"]["diameter"] == nx.diameter(u)


def test_smallworld_table_along_order(crawl_db, capsys):
    assert main(["analyze", "smallworld", "--db", str(crawl_db), "--along-order", "2"]) == 0
    text = capsys.readouterr().out
    assert "Along the crawl order" in text and "average clustering" in text


@pytest.mark.parametrize("method", ["directed", "undirected", "pagerank", "regular", "plain"])
def test_sample_json(crawl_db, capsys, method):
    out = run_json(capsys, "analyze", "sample", "--db", str(crawl_db), "--method", method,
                   "--size", "50", "--burn-in", "10", "--walk-length", "20", "--random-seed", "3",
                   "--json")
    assert out["method"] == method and out["size"] == 50 and len(out["sample"]) == 50
    assert set(out["sample"]) <= {URLS[i] for i in LINKS}
    bias = out["bias"]
    assert bias["population"] == len(LINKS)
    assert sum(bias["in_degree"]["sample_fraction"]) == pytest.approx(1.0)


def test_sample_table(crawl_db, capsys):
    assert main(["analyze", "sample", "--db", str(crawl_db), "--size", "30", "--show",
                 "3"]) == 0
    text = capsys.readouterr().out
    assert "undirected sample of the graph of fetched pages: 8 pages" in text
    assert "in-degree: mean" in text
    assert "sites: share of the pages against share of the sample" in text
    assert "a.test" in text.split("sites: share", 1)[1]


def test_directed_sample_runs_on_the_largest_scc_and_says_so(tmp_path, capsys):
    # Page 6 links nowhere: 6 and 2 (linked only from 6) leave the SCC {0,1,3,4,5,7}.
    db = write_crawl(tmp_path / "nsc.db", URLS, {**LINKS, 6: []})
    argv = ["analyze", "sample", "--db", str(db), "--method", "directed", "--size", "40",
            "--burn-in", "10", "--walk-length", "20"]
    out = run_json(capsys, *argv, "--json")
    scc = {URLS[i] for i in (0, 1, 3, 4, 5, 7)}
    assert set(out["sample"]) <= scc and out["bias"]["population"] == 6
    assert out["ran_on"]["graph"] == ("the largest strongly connected component "
                                      "(6 of 8 pages)")
    assert out["ran_on"]["pages"] == 6 and "strongly connected" in out["ran_on"]["why"]
    assert main(argv) == 0
    assert "walked on the largest strongly connected component (6 of 8 pages)" in \
        capsys.readouterr().out
    whole = run_json(capsys, *argv, "--whole-graph", "--json")
    assert whole["ran_on"]["graph"] == "the whole graph" and "biased" in whole["ran_on"]["why"]


@pytest.mark.parametrize("argv", [
    ["analyze", "sample", "--db", "{db}", "--size", "0"],
    ["analyze", "sample", "--db", "{db}", "--size", "5", "--method", "magic"],
], ids=["size0", "method"])
def test_bad_arguments_are_one_line_usage_errors(crawl_db, capsys, argv):
    with pytest.raises(SystemExit) as exc:
        main([a.format(db=crawl_db) for a in argv])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "error" in err


@pytest.mark.parametrize("argv", [
    ["analyze", "cores", "--db", "{db}", "--min-i", "4", "--max-i", "3"],
    ["analyze", "smallworld", "--db", "{missing}"],
    ["analyze", "sample", "--db", "{db}", "--size", "100000", "--walk-length", "1",
     "--walkers", "1"],
], ids=["range", "missing", "too-few"])
def test_library_errors_are_one_line(crawl_db, capsys, argv):
    argv = [a.format(db=crawl_db, missing=crawl_db.parent / "nope.db") for a in argv]
    assert main(argv) == 1
    err = capsys.readouterr().err  # progress lines may come first
    assert "Traceback" not in err
    assert err.splitlines()[-1].startswith("webcrawl: error:")


def test_sample_bias_against_walk_length(crawl_db, capsys):
    from webcrawl.analysis.graph.loader import load_graph
    from webcrawl.analysis.sampling.walk_length import bias_by_walk_length
    from webcrawl.analysis.sampling.walks import SamplerConfig

    out = run_json(capsys, "analyze", "sample", "--db", str(crawl_db), "--size", "40",
                   "--walk-lengths", "1,5,50", "--walkers", "4", "--json")
    assert [r["walk_length"] for r in out["by_walk_length"]] == [1, 5, 50]
    lib = bias_by_walk_length(load_graph(str(crawl_db)), 40, [1, 5, 50], "undirected",
                              SamplerConfig(walkers=4), seed=0)
    assert [r["bias"]["in_degree"]["ks_statistic"] for r in out["by_walk_length"]] == \
        pytest.approx([r.in_degree.ks_statistic for _, r in lib])
    assert main(["analyze", "sample", "--db", str(crawl_db), "--size", "40",
                 "--walk-lengths", "1,x"]) == 1
    assert "walk-lengths" in capsys.readouterr().err
