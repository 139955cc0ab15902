"""The content-seen test on a live crawl: one documentation tree served over http and
https (and an http ``www.`` alias), with identical bytes, crawled on loopback.

Ground truth is the hand-made tree below: its documents and the links among them.  A
page's links are relative, or absolute to the https site (``S:``) or the www alias
(``W:``), so the same bytes are served under every origin.  The default graph must
have one node per document with the documents' links; ``--duplicates keep`` on a crawl
that read every copy's links (``--links-from-duplicates``) must be the URL-level graph
the crawl saw, every copy its own node (the graph before the test existed).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import numpy as np
import pytest

trustme = pytest.importorskip("trustme")

from aiohttp import web  # noqa: E402
from tlsweb import ThreadedTLSWeb  # noqa: E402
from webcrawl.analysis.graph import load_graph, pagerank  # noqa: E402
from webcrawl.crawler.cli import main  # noqa: E402
from webcrawl.crawler.urls import normalize_url  # noqa: E402

#: document path -> its links (relative; ``S:`` absolute to https, ``W:`` to www.)
TREE: dict[str, list[str]] = {
    "/": ["guide/", "api/", "about.html", "S:/news.html"],
    "/guide/": ["intro.html", "install.html", "../api/", "S:/guide/"],
    "/guide/intro.html": ["install.html", "/", "S:/guide/usage.html"],
    "/guide/install.html": ["intro.html", "usage.html", "W:/guide/intro.html"],
    "/guide/usage.html": ["install.html", "../api/mod1.html", "S:/guide/faq.html"],
    "/guide/faq.html": ["usage.html", "/", "#top"],
    "/api/": ["mod1.html", "mod2.html", "mod3.html", "/", "S:/api/mod4.html"],
    "/api/mod1.html": ["mod2.html", "S:/api/"],
    "/api/mod2.html": ["mod3.html", "W:/api/mod1.html", "S:/api/mod2.html"],
    "/api/mod3.html": ["mod1.html", "../guide/usage.html", "S:/api/mod3.html#x"],
    "/api/mod4.html": ["mod1.html", "index.html"],
    "/api/index.html": ["/api/", "S:/about.html"],
    "/about.html": ["S:/", "changes.html", "news.html"],
    "/changes.html": ["about.html", "S:/changes.html#v2", "news.html"],
    "/news.html": ["changes.html", "/", "W:/"],
}


class DocSites(ThreadedTLSWeb):
    """The tree over http (any host name) and https (``docs.test``) on loopback."""

    def __init__(self, tmp: Path) -> None:
        super().__init__(tmp, ("docs.test",), plain=True)

    @property
    def origins(self) -> dict[str, str]:
        return {"": f"http://docs.test:{self.http_port}",
                "S:": f"https://docs.test:{self.port}",
                "W:": f"http://www.docs.test:{self.http_port}"}

    def href(self, link: str) -> str:
        for prefix, origin in self.origins.items():
            if prefix and link.startswith(prefix):
                return origin + link[len(prefix):]
        return link

    def body(self, path: str) -> bytes:
        anchors = "".join(f'<li><a href="{self.href(h)}">{h}</a></li>' for h in TREE[path])
        return (f"<html><head><title>{path}</title></head><body><h1 id=top>{path}</h1>"
                f"<ul>{anchors}</ul></body></html>").encode()

    async def handle(self, request: web.Request) -> web.Response:
        if request.path not in TREE:
            return web.Response(status=404, text="not here")
        return web.Response(body=self.body(request.path), content_type="text/html")

    # -- ground truth -------------------------------------------------------------
    def targets(self, url: str) -> set[str]:
        """The normalised URLs page ``url`` links to (fragments dropped)."""
        path = urlsplit(url).path
        out = set()
        for link in TREE[path]:
            target = normalize_url(urljoin(url, self.href(link)))
            assert target is not None
            out.add(target)
        return out

    def doc_edges(self) -> set[tuple[str, str]]:
        """The documents' links by path, self-links dropped (one node per document)."""
        root = self.origins[""]
        edges = set()
        for path in TREE:
            for target in self.targets(root + path):
                if urlsplit(target).path != path:
                    edges.add((path, urlsplit(target).path))
        return edges

    def url_graph(self) -> tuple[set[str], set[tuple[str, str]]]:
        """Every URL reachable from the seed and the links among them, self-links
        dropped: what a crawl that reads every copy sees, copies as separate pages."""
        seed = normalize_url(self.origins[""] + "/")
        assert seed is not None
        seen, todo = {seed}, [seed]
        while todo:
            for target in self.targets(todo.pop()):
                if target not in seen:
                    seen.add(target)
                    todo.append(target)
        edges = {(u, v) for u in seen for v in self.targets(u) if v != u}
        return seen, edges


@pytest.fixture
def sites(tmp_path: Path) -> Iterator[DocSites]:
    with DocSites(tmp_path) as s:
        yield s


def crawl(s: DocSites, db: Path, *extra: str) -> None:
    code = main(["crawl", s.origins[""] + "/", "--db", str(db), "--quiet",
                 "--allow-domain", "docs.test", "--resolve", "*.test=127.0.0.1",
                 "--ca-file", str(s.ca_file), "--min-delay", "0", "--delay-factor", "0",
                 "--max-delay", "0", *extra])
    assert code == 0


def url_edges(db: Path, duplicates: str) -> tuple[list[str], set[tuple[str, str]]]:
    g = load_graph(db, duplicates=duplicates)  # type: ignore[arg-type]
    rows = np.repeat(np.arange(g.n), np.diff(g.adjacency.indptr))
    return list(g.urls), {(g.urls[i], g.urls[j])
                          for i, j in zip(rows.tolist(), g.adjacency.indices.tolist(),
                                          strict=True)}


def top10_paths(db: Path, duplicates: str) -> list[str]:
    g = load_graph(db, duplicates=duplicates)  # type: ignore[arg-type]
    scores = pagerank(g.adjacency).scores
    return [urlsplit(g.urls[i]).path for i in np.argsort(-scores, kind="stable")[:10]]


def fetched_pages(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT count(*) FROM urls WHERE outcome = 'fetched'")
                   .fetchone()[0])


@pytest.mark.parametrize("extra", [(), ("--links-from-duplicates",), ("--workers", "2")],
                         ids=["default", "links-from-duplicates", "workers"])
def test_default_graph_has_one_node_per_document(sites: DocSites, tmp_path: Path,
                                                 extra: tuple[str, ...]) -> None:
    db = tmp_path / "crawl.db"
    crawl(sites, db, *extra)
    urls, edges = url_edges(db, "collapse")
    paths = [urlsplit(u).path for u in urls]
    assert sorted(paths) == sorted(TREE)  # every document once, no copy
    assert {(urlsplit(u).path, urlsplit(v).path) for u, v in edges} == sites.doc_edges()
    top = top10_paths(db, "collapse")
    assert len(set(top)) == 10  # no twin pair
    pages = fetched_pages(db)
    assert pages > len(TREE)  # copies were fetched: over https and the www. alias
    g = load_graph(db)
    assert g.duplicates_collapsed == pages - len(TREE)
    assert f"{pages - len(TREE):,} duplicates collapsed" in g.describe()


def test_keep_gives_the_graph_of_every_copy(sites: DocSites, tmp_path: Path) -> None:
    db = tmp_path / "crawl.db"
    crawl(sites, db, "--links-from-duplicates")
    urls, edges = url_edges(db, "keep")
    truth_urls, truth_edges = sites.url_graph()
    assert set(urls) == truth_urls
    assert edges == truth_edges
    assert len(set(top10_paths(db, "keep"))) < 10  # copies pair up in the top 10
    assert "duplicates collapsed" not in load_graph(db, duplicates="keep").describe()


def test_duplicates_recorded_against_the_first_fetched_copy(sites: DocSites,
                                                            tmp_path: Path) -> None:
    db = tmp_path / "crawl.db"
    crawl(sites, db)
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT u.url, u.seq, o.url, o.seq, o.duplicate_of,"
            " (SELECT count(*) FROM links WHERE src = u.id)"
            " FROM urls u JOIN urls o ON o.id = u.duplicate_of").fetchall()
    assert len(rows) == fetched_pages(db) - len(TREE)
    for url, seq, original, original_seq, chained, has_links in rows:
        assert urlsplit(url).path == urlsplit(original).path  # a copy of the same document
        assert url != original
        assert original_seq < seq and chained is None  # the first copy, itself no duplicate
        assert has_links == 0  # its links were not read


def test_cli_names_the_count(sites: DocSites, tmp_path: Path,
                             capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "crawl.db"
    crawl(sites, db)
    dups = fetched_pages(db) - len(TREE)
    capsys.readouterr()
    assert main(["analyze", "pagerank", "--db", str(db), "--top", "10"]) == 0
    out = capsys.readouterr().out
    assert f"{len(TREE):,} pages, {dups:,} duplicates collapsed" in out
    assert main(["analyze", "pagerank", "--db", str(db), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)["graph"]
    assert (info["nodes"], info["duplicates_collapsed"]) == (len(TREE), dups)
    assert main(["analyze", "pagerank", "--db", str(db), "--duplicates", "keep",
                 "--json"]) == 0
    info = json.loads(capsys.readouterr().out)["graph"]
    assert (info["nodes"], info["duplicates_collapsed"]) == (fetched_pages(db), 0)


def test_a_resumed_crawl_remembers_the_bodies_it_saw(sites: DocSites, tmp_path: Path) -> None:
    db = tmp_path / "crawl.db"
    crawl(sites, db, "--max-fetches", "12")
    with sqlite3.connect(db) as conn:
        left = conn.execute("SELECT count(*) FROM urls WHERE outcome IS NULL").fetchone()[0]
    assert left > 0  # stopped with copies still to fetch
    assert main(["crawl", "--db", str(db), "--resume", "--quiet", "--max-fetches", "1000"]) == 0
    g = load_graph(db)
    assert sorted(urlsplit(u).path for u in g.urls) == sorted(TREE)
    assert g.duplicates_collapsed == fetched_pages(db) - len(TREE)
