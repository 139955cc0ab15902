"""Sites, not copies: a documentation tree served under a second host name, crawled live.

The hand-made web below: a documentation tree on ``docs.test`` (a contents page, twelve
chapters with a sidebar linking every chapter, two sections a chapter) beside four
small sites, whose link pages point into the tree and at each other.  The *mirror web*
serves the same tree, byte for byte, under a second name (``mirror.test`` over http,
or ``docs.test`` over https on another port: a scheme alias); ``c.test`` links to the
mirror's copies where the mirror-free web links to ``docs.test``.  After the
content-seen collapse each document is one node wherever it was fetched first, so the
graphs are the same; every host-based measure must then be too, in either crawl order:
C(i, j) cores and diverse cores, the remote links of Najork and Wiener's PageRank and
its top 10, the pages per site that larger-sites-first counts, and a timed replay's
one request at a time per site.

Two crawl orders (seeds and strategy): the docs first, breadth-first; or ``c.test``
first, so its links reach some chapters on the mirror before ``docs.test`` and the
merged pages' first copies are split between the two names (the case that made the
mirror's navigation look like links between sites).
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np
import pytest

trustme = pytest.importorskip("trustme")

from aiohttp import web  # noqa: E402
from tlsweb import ThreadedTLSWeb  # noqa: E402
from webcrawl.analysis.graph import load_graph, pagerank  # noqa: E402
from webcrawl.analysis.graph.cores import CoreConfig, bipartite_cores  # noqa: E402
from webcrawl.analysis.ordering.timed import SimulatedPoliteness, timed_crawl  # noqa: E402
from webcrawl.crawler.cli import main  # noqa: E402

CHAPTERS = 12
SITES = ("a.test", "b.test", "c.test", "lib.test")


def docs_tree() -> dict[str, list[str]]:
    """Path -> relative links of the documentation tree (the same bytes on every name)."""
    chapters = [f"ch{k}.html" for k in range(1, CHAPTERS + 1)]
    tree: dict[str, list[str]] = {"/": ["contents.html", "ch1.html"],
                                  "/contents.html": ["index.html", *chapters]}
    tree["/index.html"] = tree["/"]
    for k in range(1, CHAPTERS + 1):
        sidebar = ["contents.html", *chapters]
        sections = [f"ch{k}/s1.html", f"ch{k}/s2.html"]
        tree[f"/ch{k}.html"] = [*sidebar, *sections]
        for j in (1, 2):
            tree[f"/ch{k}/s{j}.html"] = [f"../ch{k}.html", f"s{3 - j}.html", "../contents.html"]
    return tree


def site_pages(docs: str, c_docs: str) -> dict[str, dict[str, list[str]]]:
    """host -> path -> absolute links of the four small sites; ``c.test`` links into the
    tree at ``c_docs`` (the mirror, in the mirror web)."""
    pages: dict[str, dict[str, list[str]]] = {}
    for name in SITES:
        hub = [f"{docs}/ch1.html", f"{docs}/ch2.html", f"{docs}/ch3.html",
               "http://lib.test/api1.html", "http://lib.test/api2.html"]
        if name == "c.test":
            hub = [f"{c_docs}/ch2.html", f"{c_docs}/ch5.html", f"{c_docs}/ch8.html",
                   "http://lib.test/api1.html", "http://lib.test/api2.html"]
        pages[name] = {
            "/": ["/links.html", "/about.html", "http://a.test/", "http://b.test/"],
            "/links.html": hub,
            "/about.html": ["/", "/links.html", f"{docs}/", "http://lib.test/"],
        }
    pages["lib.test"].update({"/api1.html": ["/api2.html", "/"],
                              "/api2.html": ["/api1.html", "/"]})
    return pages


class DocsWeb(ThreadedTLSWeb):
    """The web on loopback: every http host name by its Host header, ``docs.test`` also
    over https.  ``mirror`` names the mirror's origin (None: no mirror)."""

    TREE = docs_tree()

    def __init__(self, tmp: Path) -> None:
        super().__init__(tmp, ("docs.test",), plain=True)
        self.mirror: str | None = None

    def origin(self, kind: str) -> str:
        return {"docs": f"http://docs.test:{self.http_port}",
                "mirror": f"http://mirror.test:{self.http_port}",
                "https": f"https://docs.test:{self.port}"}[kind]

    def absolute(self, link: str) -> str:
        """A small site's link with the server's port."""
        split = urlsplit(link)
        if split.port is not None:
            return link
        return link.replace(f"//{split.hostname}", f"//{split.hostname}:{self.http_port}", 1)

    async def handle(self, request: web.Request) -> web.Response:
        host = request.host.split(":")[0]
        tls = request.scheme == "https"
        docs = self.origin("docs")
        if host in ("docs.test", "mirror.test") and (host == "docs.test" or self.mirror):
            if request.path not in self.TREE or (tls and self.mirror != "https") or \
                    (host == "mirror.test" and self.mirror != "mirror"):
                return web.Response(status=404, text="not here")
            links = self.TREE[request.path]
            if request.path == "/ch3.html":  # a chapter cites the library
                links = [*links, *(self.absolute(f"http://lib.test/api{k}.html")
                                   for k in (1, 2))]
            # "/" and /index.html: one document at two URLs of one host
            title = "index" if request.path in ("/", "/index.html") else request.path
            return self._page(title, links)
        pages = site_pages(docs, self.origin(self.mirror) if self.mirror else docs)
        if host not in pages or request.path not in pages[host]:
            return web.Response(status=404, text="not here")
        return self._page(f"{host}{request.path}",
                          [self.absolute(h) for h in pages[host][request.path]])

    @staticmethod
    def _page(title: str, links: list[str]) -> web.Response:
        anchors = "".join(f'<li><a href="{h}">{h}</a></li>' for h in links)
        body = f"<html><head><title>{title}</title></head><body><ul>{anchors}</ul></body></html>"
        return web.Response(body=body.encode(), content_type="text/html")


#: name -> (mirror kind or None, seeds, strategy)
CRAWLS = {
    "no-mirror": (None, ("docs", "a.test", "b.test", "c.test", "lib.test"), "bfs"),
    "mirror-docs-first": ("mirror", ("docs", "a.test", "b.test", "c.test", "lib.test"), "bfs"),
    "mirror-c-first": ("mirror", ("c.test", "docs", "lib.test", "b.test", "a.test"), "bfs"),
    "https-alias-c-first": ("https", ("c.test", "lib.test", "docs", "a.test", "b.test"),
                            "bfs"),
}


@pytest.fixture(scope="module")
def crawls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    tmp = tmp_path_factory.mktemp("mirrors")
    with DocsWeb(tmp) as site:
        dbs = {}
        for name, (mirror, seeds, strategy) in CRAWLS.items():
            site.mirror = mirror
            urls = [site.origin("docs") + "/" if s == "docs"
                    else f"http://{s}:{site.http_port}/" for s in seeds]
            db = tmp / f"{name}.db"
            code = main(["crawl", *urls, "--db", str(db), "--quiet", "--allow-domain", "test",
                         "--resolve", "*.test=127.0.0.1", "--ca-file", str(site.ca_file),
                         "--min-delay", "0", "--delay-factor", "0", "--max-delay", "0",
                         "--concurrency", "1", "--strategy", strategy])
            assert code == 0
            dbs[name] = db
        yield dbs


MIRRORED = [n for n in CRAWLS if n != "no-mirror"]


def _name(url: str) -> str:
    """A URL without its port (the mirror-free and mirror crawls share the server)."""
    split = urlsplit(url)
    return f"{split.scheme}://{split.hostname}{split.path}"


def _first_copies_on(db: Path) -> set[str]:
    """Hosts holding the first copy of a document that has a copy elsewhere."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT DISTINCT o.url FROM urls u JOIN urls o "
                            "ON o.id = u.duplicate_of").fetchall()
    return {urlsplit(r[0]).netloc for r in rows}


def test_the_orders_differ_in_which_copy_came_first(crawls: dict[str, Path]) -> None:
    # The case to guard against: in the c-first orders the merged documents' first
    # copies are split between the two names, in the docs-first order they are not.
    assert len(_first_copies_on(crawls["mirror-docs-first"])) == 1
    assert len(_first_copies_on(crawls["mirror-c-first"])) == 2
    assert len(_first_copies_on(crawls["https-alias-c-first"])) == 2


@pytest.mark.parametrize("name", MIRRORED)
def test_the_mirror_is_found(crawls: dict[str, Path], name: str) -> None:
    g = load_graph(crawls[name])
    assert len(g.mirrors) == 1
    mirror = g.mirrors[0]
    # How many pages each name served depends on the order (a copy's links are not
    # read); the documents both served are copies on the two names.
    assert 3 <= mirror.shared <= min(mirror.pages)
    assert "one site under 2 host names: docs.test:" in g.describe()
    assert not load_graph(crawls["no-mirror"]).mirrors
    # Its primary host is the one the other sites link to most, http://docs.test, and
    # every merged document is known by its copy there, whichever was fetched first.
    primary = list(g.host_names).index(mirror.hosts[0])
    site = g.sites[g.hosts == primary][0]
    assert np.count_nonzero(g.sites == site) == len(DocsWeb.TREE) - 1
    with sqlite3.connect(crawls[name]) as conn:
        fetched = {_name(u) for (u,) in conn.execute(
            "SELECT url FROM urls WHERE outcome = 'fetched'")}
    for i in np.flatnonzero(g.sites == site).tolist():
        on_docs = "http://docs.test" + urlsplit(g.urls[i]).path
        # shown on docs.test, or fetched only under the other name
        assert _name(g.urls[i]) == on_docs or on_docs not in fetched


@pytest.mark.parametrize("duplicates", ["collapse", "keep"])
@pytest.mark.parametrize("name", MIRRORED)
def test_sites_are_the_same_kept_or_collapsed(crawls: dict[str, Path], name: str,
                                              duplicates: str) -> None:
    g = load_graph(crawls[name], duplicates=duplicates)  # type: ignore[arg-type]
    plain = load_graph(crawls["no-mirror"])
    assert sorted(_name("http://" + s + "/") for s in g.site_names) == \
        sorted(_name("http://" + s + "/") for s in plain.site_names)


def _measures(db: Path, duplicates: str = "collapse", sites: str = "mirrors") -> dict[str, object]:
    g = load_graph(db, duplicates=duplicates, sites=sites)  # type: ignore[arg-type]
    remote = load_graph(db, remote_only=True, duplicates=duplicates,  # type: ignore[arg-type]
                        sites=sites)  # type: ignore[arg-type]
    scores = pagerank(remote.adjacency).scores
    rounded = np.round(scores, 9)
    order = sorted(range(remote.n), key=lambda i: (-rounded[i], _name(remote.urls[i])))
    config = CoreConfig(max_i=5, max_j=4)
    sizes = Counter(_name("http://" + g.site_names[s] + "/") for s in g.sites.tolist())
    timed = timed_crawl(g, "larger-sites-first", SimulatedPoliteness(8, min_delay=1.0))
    return {
        "cores": bipartite_cores(g, config).counts.tolist(),
        "diverse": bipartite_cores(g, CoreConfig(max_i=5, max_j=4, diverse=True))
        .counts.tolist(),
        "remote links": remote.m,
        "remote top 10": [(_name(remote.urls[i]), float(rounded[i])) for i in order[:10]],
        "site sizes": sizes,
        "larger-sites-first duration": timed.duration,
    }


@pytest.fixture(scope="module")
def truth(crawls: dict[str, Path]) -> dict[str, object]:
    return _measures(crawls["no-mirror"])


@pytest.mark.parametrize("name", MIRRORED)
def test_host_measures_equal_the_mirror_free_crawl(crawls: dict[str, Path],
                                                   truth: dict[str, object],
                                                   name: str) -> None:
    got = _measures(crawls[name])
    for measure, expected in truth.items():
        assert got[measure] == expected, measure


def test_the_measures_are_not_trivial(truth: dict[str, object]) -> None:
    # Cross-site cores exist (the link pages of a, b and c), the tree's navigation
    # is not among the remote links, the docs are the largest site.
    cores = truth["cores"]
    assert isinstance(cores, list) and cores[0][0] > 0
    assert truth["remote links"] < 40
    sizes = truth["site sizes"]
    assert isinstance(sizes, Counter)
    assert sizes.most_common(1)[0] == ("http://docs.test/", len(DocsWeb.TREE) - 1)


@pytest.mark.parametrize("name", ["mirror-c-first", "https-alias-c-first"])
def test_host_names_alone_make_the_mirror_remote(crawls: dict[str, Path],
                                                 truth: dict[str, object],
                                                 name: str) -> None:
    # What the sites fix: sections reached only through the mirror's copies stay on
    # the mirror's name, so by host name their navigation links into the rest of the
    # tree are remote links; by site they are not.
    by_host = load_graph(crawls[name], remote_only=True, sites="hosts")
    assert by_host.m > truth["remote links"]  # type: ignore[operator]


@pytest.mark.parametrize("name", MIRRORED)
def test_keep_has_every_copy_on_the_site(crawls: dict[str, Path], truth: dict[str, object],
                                         name: str) -> None:
    # Every copy its own node: the docs site holds both copies of what both names
    # served, the stated difference in its size; the other sites are unchanged.
    g = load_graph(crawls[name], duplicates="keep")
    copies = g.n - load_graph(crawls[name]).n
    sizes = Counter(_name("http://" + g.site_names[s] + "/") for s in g.sites.tolist())
    expected = truth["site sizes"]
    assert isinstance(expected, Counter)
    assert sizes - expected == Counter({"http://docs.test/": copies})
    assert expected - sizes == Counter()
