"""Sites: mirror detection, canonical copies, and the invariances of every host-based
measure under a mirror (crawl order, kept or collapsed copies, a second host name).

The hand-made crawls: a six-page documentation tree on ``docs.test`` (a home page
linking every page, each page linking the home page and the next) and two small sites
whose pages link into it.  The mirrored crawls serve the tree a second time under
another name; for each document one copy was fetched first (its links stored, against
its own name), the other is its duplicate (``duplicate_of``), as the crawler's
content-seen test records them.  Which copy came first is the crawl order.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from webcrawl.analysis.graph import load_graph
from webcrawl.analysis.graph.cores import CoreConfig, bipartite_cores
from webcrawl.analysis.graph.sites import (
    SiteMap,
    canonical_copies,
    detect_sites,
    drop_same_site_links,
)
from webcrawl.analysis.ordering.quality import remote_adjacency
from webcrawl.analysis.ordering.timed import SimulatedPoliteness, timed_crawl
from webcrawl.analysis.sampling.bias import bias_report
from webcrawl.storage.errors import ConfigError

# ----------------------------------------------------------------------- detection


def test_hosts_sharing_most_documents_are_one_site() -> None:
    hosts = np.array([0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 2, 3])
    bodies = np.array([0, 1, 2, 3, 0, 1, 2, 9, 8, 7, 3, 5])
    sites = detect_sites(hosts, bodies, ["a.test", "m.test", "x.test", "y.test"])
    # a and m share 3 of m's 3 pages; x shares one document with a: not a mirror.
    assert sites.host_site.tolist() == [0, 0, 1, 2]
    assert sites.names == ["a.test", "x.test", "y.test"]
    assert [m.info() for m in sites.mirrors] == [
        {"hosts": ["a.test", "m.test"], "pages": [4, 3], "shared": 3}]


@pytest.mark.parametrize(("shared", "pages", "mirrors"), [
    (2, 2, False),    # fewer than MIRROR_MIN_SHARED documents
    (3, 3, True),
    (3, 6, True),     # half the smaller host
    (3, 7, False),    # less than half
], ids=["two-documents", "three", "half", "under-half"])
def test_the_mirror_rule(shared: int, pages: int, mirrors: bool) -> None:
    # host 0 serves `pages` documents, host 1 the same first `shared` plus its own.
    bodies_a = np.arange(pages)
    bodies_b = np.r_[np.arange(shared), 100 + np.arange(pages - shared)]
    sites = detect_sites(np.r_[np.zeros(pages, int), np.ones(pages, int)],
                         np.r_[bodies_a, bodies_b], ["a.test", "b.test"])
    assert (len(sites.mirrors) == 1) is mirrors


def test_mirrors_chain_into_one_site() -> None:
    # b copies a, c copies b's copies: one site of three names.
    hosts = np.repeat([0, 1, 2], 4)
    bodies = np.tile(np.arange(4), 3)
    sites = detect_sites(hosts, bodies, ["c.test", "a.test", "b.test"])
    assert sites.host_site.tolist() == [0, 0, 0]
    assert sites.mirrors[0].hosts == ("a.test", "b.test", "c.test")  # ties: the name


def test_the_primary_is_the_most_linked_then_the_largest() -> None:
    hosts = np.r_[np.zeros(4, int), np.ones(5, int)]
    bodies = np.r_[np.arange(4), np.arange(5)]
    names = ["a.test", "z.test"]
    assert detect_sites(hosts, bodies, names).names == ["z.test"]  # more pages
    linked = detect_sites(hosts, bodies, names, inlinks=lambda site: np.array([7, 2]))
    assert linked.names == ["a.test"]


@pytest.mark.parametrize("seed", range(5))
def test_detection_ignores_page_order_and_body_ids(seed: int) -> None:
    rng = np.random.default_rng(seed)
    hosts = rng.integers(0, 6, 300)
    bodies = rng.integers(0, 60, 300)
    names = [f"h{k}.test" for k in range(6)]
    base = detect_sites(hosts, bodies, names, min_share=0.2)
    perm = rng.permutation(300)
    relabel = rng.permutation(60)
    other = detect_sites(hosts[perm], relabel[bodies[perm]], names, min_share=0.2)
    assert other.host_site.tolist() == base.host_site.tolist()
    assert other.mirrors == base.mirrors


def test_bad_input_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="one entry per page"):
        detect_sites(np.zeros(2, int), np.zeros(3, int), ["a"])
    with pytest.raises(ConfigError, match="min_share"):
        detect_sites(np.zeros(2, int), np.zeros(2, int), ["a"], min_share=2.0)


def test_no_copies_no_mirrors() -> None:
    sites = detect_sites(np.array([0, 1, 1]), np.array([0, 1, 2]), ["a", "b"])
    assert sites.host_site.tolist() == [0, 1] and sites.mirrors == ()
    assert SiteMap.identity(["a", "b"]).is_primary().all()


@pytest.mark.parametrize("seed", range(5))
def test_canonical_copies_against_a_reference(seed: int) -> None:
    rng = np.random.default_rng(seed)
    group = rng.integers(0, 10, 50)
    rank = rng.permutation(50)
    primary = rng.random(50) < 0.4
    got = canonical_copies(group, rank, primary)
    for i in range(50):
        members = [k for k in range(50) if group[k] == group[i]]
        assert got[i] == min(members, key=lambda k: (not primary[k], rank[k]))


def test_drop_same_site_links_keeps_weights() -> None:
    from webcrawl.analysis.graph.captured import CapturedGraph

    g = CapturedGraph.from_edges([0, 0, 1, 2], [1, 2, 2, 0], hosts=[0, 1, 2],
                                 collapse_duplicates=False, sites=[0, 0, 1])
    kept = drop_same_site_links(g, g.sites)
    assert sorted(zip(*kept.nonzero(), strict=True)) == [(0, 2), (1, 2), (2, 0)]
    assert remote_adjacency(g).nnz == 3


# ------------------------------------------------------------ invariances on crawls

TREE = {"/": ["p1", "p2", "p3", "p4", "p5"], "/p1": ["/", "p2"], "/p2": ["/", "p3"],
        "/p3": ["/", "p4"], "/p4": ["/", "p5"], "/p5": ["/", "p1"]}
#: the small sites' pages and the tree pages they link to (by path on the docs name)
SITES = {"http://o.test/": ["/p1", "/p2", "http://q.test/"],
         "http://o.test/b": ["/p1", "/p2", "http://o.test/"],
         "http://q.test/": ["/p1", "/p2", "http://o.test/b"]}


def _tree_url(origin: str, path: str) -> str:
    return origin + ("/" + path if not path.startswith("/") else path)


def _write(write_crawl: Callable[..., Path], path: Path, mirror: str | None,
           first_on_mirror: set[str], mirror_ids_first: bool,
           mirrored: tuple[str, ...] = tuple(TREE)) -> Path:
    """A crawl of the docs (and, with ``mirror``, its copy of ``mirrored`` under that
    origin).

    ``first_on_mirror``: the documents whose mirror copy was fetched first;
    ``mirror_ids_first``: number the mirror's URLs before the docs' (discovery order).
    """
    docs = "http://docs.test"
    origins = [docs] if mirror is None else ([mirror, docs] if mirror_ids_first
                                             else [docs, mirror])
    urls = list(SITES) + [_tree_url(o, p) for o in origins for p in TREE
                          if o != mirror or p in mirrored]
    index = {u: i for i, u in enumerate(urls)}
    links: dict[int, list[int]] = {}
    duplicate_of: dict[int, int] = {}
    for url, targets in SITES.items():
        links[index[url]] = [index[t if t.startswith("http") else docs + t] for t in targets]
    for p, targets in TREE.items():
        first = mirror if mirror is not None and p in first_on_mirror else docs
        # a copy's links stay on its name where the name serves the target (a copy of
        # one page links to the docs: its links are absolute)
        links[index[first + p]] = [
            index[_tree_url(first if _tree_url("", t) in mirrored else docs, t)]
            for t in targets]
    if mirror is not None:
        for p in mirrored:
            first = mirror if p in first_on_mirror else docs
            copy = docs if first == mirror else mirror
            links[index[copy + p]] = []          # fetched, a duplicate: links not read
            duplicate_of[index[copy + p]] = index[first + p]
    write_crawl(path, urls, links)
    with sqlite3.connect(path) as conn:
        conn.executemany("UPDATE urls SET duplicate_of = ? WHERE id = ?",
                         [(o, d) for d, o in duplicate_of.items()])
    return path


#: name -> (mirror origin, documents first fetched on the mirror, mirror ids first[,
#: the documents the mirror serves])
ORDERS: dict[str, tuple[Any, ...]] = {
    "docs-first": ("http://mirror.test", set(), False),
    "mirror-first": ("http://mirror.test", set(TREE), True),
    "mixed": ("http://mirror.test", {"/p2", "/p4", "/"}, False),
    "mixed-other-numbering": ("http://mirror.test", {"/p1", "/p3", "/p5"}, True),
    "https-alias-mixed": ("https://docs.test:8443", {"/p2", "/p3"}, True),
    # one copy on an unrelated host (too few to be a mirror) fetched first, its name
    # first in alphabetical order: the page stays with the docs
    "lone-copy-first": ("http://a-copy.test", {"/"}, True, ("/",)),
}


def _measures(db: Path, duplicates: str = "collapse") -> dict[str, object]:
    g = load_graph(db, duplicates=duplicates)  # type: ignore[arg-type]
    remote = load_graph(db, remote_only=True, duplicates=duplicates)  # type: ignore[arg-type]
    rows = np.repeat(np.arange(g.n), np.diff(g.adjacency.indptr))
    sample = np.arange(g.n).repeat(3)
    return {
        "urls": sorted(g.urls),
        "links": sorted((g.urls[a], g.urls[b]) for a, b in
                        zip(rows.tolist(), g.adjacency.indices.tolist(), strict=True)),
        "remote links": remote.m,
        "cores": bipartite_cores(g, CoreConfig(max_i=3, max_j=3)).counts.tolist(),
        "diverse": bipartite_cores(g, CoreConfig(max_i=3, max_j=3, diverse=True))
        .counts.tolist(),
        "site sizes": Counter(g.site_names[s] for s in g.sites.tolist()),
        "timed": timed_crawl(g, "larger-sites-first", SimulatedPoliteness(4, min_delay=1.0),
                             np.ones(g.n)).duration,
        "site shares": bias_report(g, sample).sites.true_fraction.tolist(),  # type: ignore[union-attr]
    }


@pytest.fixture(scope="module")
def dbs(tmp_path_factory: pytest.TempPathFactory,
        write_crawl: Callable[..., Path]) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("sites")
    out = {"no-mirror": _write(write_crawl, tmp / "plain.db", None, set(), False)}
    for name, spec in ORDERS.items():
        out[name] = _write(write_crawl, tmp / f"{name}.db", *spec)
    return out


@pytest.mark.parametrize("order", list(ORDERS))
def test_every_measure_equals_the_mirror_free_crawl(dbs: dict[str, Path], order: str) -> None:
    truth, got = _measures(dbs["no-mirror"]), _measures(dbs[order])
    for measure, expected in truth.items():
        assert got[measure] == expected, measure


def test_the_measures_are_not_trivial(dbs: dict[str, Path]) -> None:
    truth = _measures(dbs["no-mirror"])
    assert truth["remote links"] == 8  # the small sites' links; the tree's are local
    assert truth["cores"][0][0] == 1  # o/, o/b and q/ all link to p1 and p2
    assert truth["diverse"] == [[1, 0], [0, 0]]  # on two sites only


MIRRORS = [name for name in ORDERS if name != "lone-copy-first"]


@pytest.mark.parametrize("order", MIRRORS)
def test_the_mirror_is_named(dbs: dict[str, Path], order: str) -> None:
    g = load_graph(dbs[order])
    assert [m.hosts[0] for m in g.mirrors] == ["docs.test"]  # the linked-to name
    assert g.mirrors[0].shared == len(TREE)
    kept = load_graph(dbs[order], duplicates="keep")
    assert kept.mirrors == g.mirrors and list(kept.site_names) == list(g.site_names)


@pytest.mark.parametrize("order", ["mixed", "https-alias-mixed"])
def test_by_host_name_the_order_shows(dbs: dict[str, Path], order: str) -> None:
    # Without sites the copies' two names are two sites: the kept mirror's pages make
    # every host count differ from the mirror-free crawl.
    kept = load_graph(dbs[order], duplicates="keep", sites="hosts")
    assert len(kept.site_names) == len(load_graph(dbs["no-mirror"]).site_names) + 1
    assert not kept.mirrors


@pytest.mark.parametrize("order", MIRRORS)
def test_keep_has_the_copies_on_the_site(dbs: dict[str, Path], order: str) -> None:
    truth, kept = _measures(dbs["no-mirror"]), _measures(dbs[order], "keep")
    sizes, expected = kept["site sizes"], truth["site sizes"]
    assert isinstance(sizes, Counter) and isinstance(expected, Counter)
    assert sizes - expected == Counter({"docs.test": len(TREE)})  # every copy a node
    assert kept["diverse"] == truth["diverse"]


def test_unknown_sites_policy_is_one_line(dbs: dict[str, Path]) -> None:
    with pytest.raises(ConfigError, match="unknown sites policy 'domains'"):
        load_graph(dbs["mixed"], sites="domains")  # type: ignore[arg-type]
