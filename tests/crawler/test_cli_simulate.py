"""``webcrawl simulate random-web`` end to end."""

from __future__ import annotations

import json

import numpy as np

from crawler.cli import main


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
