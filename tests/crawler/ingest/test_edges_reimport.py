"""A crawl's ``export edges`` imported back with ``import edges`` is the same graph:
the same pages (a page without out-links stays a page), the same links, the same
PageRank, for every export format ``import edges`` reads (TSV, edgelist, and both with
``--ids`` and the nodes file as ``--vertices``)."""

from __future__ import annotations

import functools
import json
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from warcdata import crawl
from webcrawl.analysis.graph import CapturedGraph, load_graph, pagerank
from webcrawl.crawler.cli import main

#: A small documentation tree: pages without out-links (leaf.html, plain.html, the
#: pages that link only to a file or a missing page), a directory link that redirects
#: (``/guide`` -> ``/guide/``), a PNG, a 404 and repeated links.
SITE = {
    "index.html": '<a href="guide">guide</a> <a href="a.html">a</a> <a href="a.html">a</a>'
                  ' <a href="leaf.html">leaf</a> <a href="logo.png">logo</a>',
    "a.html": '<a href="index.html">home</a> <a href="guide/">guide</a> <a href="gone.html">x</a>',
    "leaf.html": "<p>no links here</p>",
    "guide/index.html": '<a href="one.html">1</a> <a href="two.html">2</a>'
                        ' <a href="../plain.html">plain</a>',
    "guide/one.html": '<a href="two.html">2</a> <a href="/index.html">home</a>',
    "guide/two.html": '<a href="/logo.png">only a file</a> <a href="/gone.html">gone</a>',
    "plain.html": "<p>a page with no links</p>",
}


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A crawl of :data:`SITE` served by Python's http.server on loopback."""
    root = tmp_path_factory.mktemp("site")
    for name, body in SITE.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(f"<html><body>{body}</body></html>")
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    handler = functools.partial(_Quiet, directory=str(root))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    db = root.parent / "crawl.db"
    try:
        crawl(db, f"http://docs.test:{server.server_address[1]}/index.html")
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    return db


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass


def _links(graph: CapturedGraph) -> set[tuple[str, str]]:
    coo = graph.adjacency.tocoo()
    return {(graph.urls[int(i)], graph.urls[int(j)])
            for i, j in zip(coo.row, coo.col, strict=True)}


def _ranks(graph: CapturedGraph) -> dict[str, float]:
    scores = pagerank(graph.adjacency).scores
    return dict(zip(graph.urls, scores.tolist(), strict=True))


@pytest.mark.parametrize("fmt", ["tsv", "edgelist"])
@pytest.mark.parametrize("ids", [False, True], ids=["urls", "ids-and-nodes"])
def test_export_then_import_is_the_same_graph(crawled: Path, tmp_path: Path, fmt: str,
                                              ids: bool,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    crawl_graph = load_graph(crawled)
    with_links = {u for u, i, o in zip(crawl_graph.urls, crawl_graph.adjacency.sum(axis=0),
                                       crawl_graph.adjacency.sum(axis=1), strict=True) if i or o}
    dangling = int(np.count_nonzero(np.asarray(crawl_graph.adjacency.sum(axis=1)) == 0))
    assert crawl_graph.n == 7 and dangling == 3  # leaf, plain, two: pages without out-links
    out, nodes = tmp_path / "e.txt", tmp_path / "n.tsv"
    argv = ["export", "edges", "--db", str(crawled), "--format", fmt, "--output", str(out)]
    assert main([*argv, *(["--ids", "--nodes", str(nodes)] if ids else [])]) == 0
    back = tmp_path / "back.db"
    argv = ["import", "edges", str(out), "--db", str(back), "--json"]
    capsys.readouterr()
    assert main([*argv, *(["--vertices", str(nodes)] if ids else [])]) == 0
    result = json.loads(capsys.readouterr().out)
    imported = load_graph(back)
    # With --ids the nodes file lists every page; without it, a page linked to or from
    # no other page cannot be in an edge list at all.
    want = set(crawl_graph.urls) if ids else with_links
    assert set(imported.urls) == want and result["pages"] == len(want)
    assert _links(imported) == _links(crawl_graph)
    if want == set(crawl_graph.urls):
        theirs, ours = _ranks(crawl_graph), _ranks(imported)
        assert sum(abs(theirs[u] - ours[u]) for u in theirs) < 1e-9
