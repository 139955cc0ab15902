"""``webcrawl simulate random-web|copying`` end to end."""

from __future__ import annotations

import json

import numpy as np
import pytest
from webcrawl.crawler.cli import main


def test_random_web_writes_figure_json_and_edges(tmp_path, capsys):
    out = tmp_path / "rw"
    assert main(["simulate", "random-web", "--pages", "20000", "--crawl", "1000",
                 "--checkpoints", "3", "--random-seed", "2", "--out", str(out), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["model"]["crawled"] == 1000 and result["model"]["gamma_in"] == 2.1
    along = result["along"]
    assert along["pages"] == [100, 316, 1000]
    assert set(along) >= {"in_exponent", "out_exponent", "sinks", "discovery", "scc",
                          "cores44", "clustering", "pagerank_exponent"}
    assert result["paper"]["sinks"]["low"] == 0.2
    assert (out / "random_web_along.png").read_bytes()[:4] == b"\x89PNG"
    assert json.loads((out / "random_web_along.json").read_text())["along"] == along
    edges = np.loadtxt(out / "random_web.edges", dtype=np.int64, comments="#")
    assert edges.shape[1] == 2 and edges.max() < result["model"]["discovered"]
    # Every crawled page's links are there: out-degree sum >= crawled pages x 3.
    assert edges.shape[0] >= 3 * 1000 * 0.9
    # The two readings: crawled only (the along figures) and crawled + frontier.
    readings = result["readings"]
    assert readings["pages"] == along["pages"]
    assert np.allclose(readings["sinks_crawled"], along["sinks"])
    assert np.allclose(readings["scc_crawled"], along["scc"])
    # Frontier pages are sinks (not crawled yet) and outside every cycle.
    frontier = np.asarray(readings["frontier"])
    pages = np.asarray(readings["pages"])
    assert (frontier > 0).all()
    assert (np.asarray(readings["sinks_frontier"]) >= frontier / (pages + frontier)).all()
    assert np.allclose(np.asarray(readings["scc_frontier"]) * (pages + frontier),
                       np.asarray(along["scc"]) * pages)


def test_random_web_table_and_bad_input(capsys):
    assert main(["simulate", "random-web", "--pages", "5000", "--crawl", "500",
                 "--checkpoints", "2", "--measures", "sinks,discovery"]) == 0
    text = capsys.readouterr().out
    assert "sinks" in text and "0.2-0.5" in text and "cores44" not in text
    assert main(["simulate", "random-web", "--pages", "100", "--crawl", "500"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "exceeds" in err
    assert main(["simulate", "random-web", "--measures", "nope"]) == 1
    assert "unknown measure" in capsys.readouterr().err


def test_random_web_reports_the_papers_definitions_and_labels_the_diagnostics(capsys):
    assert main(["simulate", "random-web", "--pages", "20000", "--crawl", "2000",
                 "--checkpoints", "2", "--measures", "sinks,bowtie,cores",
                 "--random-seed", "1"]) == 0
    text = capsys.readouterr().out
    reproduction, diagnostics = text.split("Diagnostics, not the paper's definitions")
    assert "Along the crawl, by the paper's definitions" in reproduction
    rows = {line.split()[0]: line.split()[1:3] for line in reproduction.splitlines()
            if line.split()[:1] and line.split()[0] in ("sinks", "scc", "cores44")}
    exact = next(line for line in diagnostics.splitlines()
                 if line.startswith("cores44, exactly 4 and 4")).split()[5:7]
    # The paper's (4,4) count (at least 4 and 4) holds the exact-size count.
    assert all(float(a) >= float(e) for a, e in zip(rows["cores44"], exact, strict=True))
    assert "sinks, crawled + frontier" in diagnostics and "crawled + frontier" not in \
        reproduction


def test_analyze_quality_along_matches_the_library(tmp_path, capsys):
    from crawldb import write_crawl
    from webcrawl.analysis.graph.loader import load_graph
    from webcrawl.analysis.ordering.along import measure_along
    from webcrawl.analysis.ordering.randomweb import random_web_crawl

    # A random web crawl written as a crawl database, fetched in the model's order.
    web = random_web_crawl(20_000, "BFS", max_pages=600, seed=3)
    g = web.graph
    crawled = g.fetch_order
    urls = [f"http://h{i % 7}.test/p{i}" for i in range(g.n)]
    adj = g.adjacency.tocsr()
    links = {int(p): [int(d) for d in adj.indices[adj.indptr[p]:adj.indptr[p + 1]]]
             for p in crawled}
    db = write_crawl(tmp_path / "rw.db", [urls[i] for i in crawled] +
                     [u for i, u in enumerate(urls) if not g.crawled[i]],
                     _renumber(links, crawled, g.crawled))
    out = tmp_path / "q"
    assert main(["analyze", "quality", "--db", str(db), "--along", "sinks,bowtie,cores",
                 "--along-points", "3", "--json", "--out", str(out)]) == 0
    data = json.loads(capsys.readouterr().out)
    lib = measure_along(load_graph(db), 3, ["sinks", "bowtie", "cores"]).to_dict()
    assert data["along"] == lib and data["along"]["pages"][-1] == 600
    assert (out / "along.png").read_bytes()[:4] == b"\x89PNG"
    assert main(["analyze", "quality", "--db", str(db), "--along", "sinks"]) == 0
    assert "Bennouas" in capsys.readouterr().out


def _renumber(links, crawled, is_crawled):
    """Links keyed by the new numbering: crawled pages first in fetch order."""
    order = list(crawled) + [i for i in range(is_crawled.size) if not is_crawled[i]]
    new = {old: k for k, old in enumerate(order)}
    return {new[p]: [new[d] for d in ds] for p, ds in links.items()}


def test_random_web_degree_law_and_paper_curves(capsys):
    from webcrawl.analysis.ordering.along import measure_along
    from webcrawl.analysis.ordering.randomweb import random_web_crawl
    from webcrawl.analysis.ordering.randomweb_figures import paper_curve

    assert main(["simulate", "random-web", "--pages", "50000", "--crawl", "2000",
                 "--checkpoints", "3", "--degree-law", "counts", "--measures",
                 "sinks,discovery", "--random-seed", "4", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["model"]["degree_law"] == "counts"
    web = random_web_crawl(50_000, "BFS", max_pages=2000, degree_law="counts", seed=4)
    along = measure_along(web.graph, 3, ["sinks", "discovery"])
    assert result["along"]["sinks"] == along.values["sinks"].tolist()
    curves = result["paper_curves"]
    assert set(curves) == {"sinks", "discovery"}
    assert curves["sinks"]["at_pages"] == paper_curve("sinks", along.pages).tolist()
    assert main(["simulate", "random-web", "--pages", "5000", "--crawl", "500",
                 "--checkpoints", "2", "--measures", "sinks"]) == 0
    text = capsys.readouterr().out
    assert "sinks: paper fit" in text and "discovery: paper fit" not in text


def test_copying_in_degree_exponent_against_the_paper(capsys):
    assert main(["simulate", "copying", "--pages", "50000", "--alpha", "0.2",
                 "--random-seed", "1", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    fit = result["in_degree"]
    assert fit["predicted"] == (2 - 0.2) / (1 - 0.2)
    # Within 3 standard errors plus 5% (the discrete MLE approximation, finite n).
    assert abs(fit["exponent"] - fit["predicted"]) < 3 * fit["sigma"] + 0.05 * 2.25
    assert result["model"]["links"] > 50000 * 5


def test_copying_cores_are_monotone_and_table_prints(tmp_path, capsys):
    assert main(["simulate", "copying", "--pages", "3000", "--cores", "--max-i", "5",
                 "--max-j", "5", "--out", str(tmp_path), "--json"]) == 0
    cores = json.loads(capsys.readouterr().out)["cores"]
    counts = np.asarray(cores["counts"])
    assert counts[0, 0] == cores["cores"] > 0
    assert (np.diff(counts, axis=0) <= 0).all() and (np.diff(counts, axis=1) <= 0).all()
    edges = np.loadtxt(tmp_path / "copying.edges", dtype=np.int64, comments="#")
    assert edges.shape[0] == cores["links"]
    assert main(["simulate", "copying", "--pages", "2000", "--cores"]) == 0
    text = capsys.readouterr().out
    assert "(2 - a) / (1 - a)" in text and "C(i, j) of the copying graph" in text
    with pytest.raises(SystemExit) as exc:
        main(["simulate", "copying", "--alpha", "1.5"])
    assert exc.value.code == 2
    assert "--alpha" in capsys.readouterr().err
