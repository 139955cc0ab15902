"""The near-duplicate test on a live crawl of the fixture web with planted near-duplicates.

Ground truth: the fixture's planted pairs (:mod:`webcrawl.fixtures.near`, six kinds) and
its distinct-but-similar pages.  The crawl stores each page's sketch and its group
(``urls.near_of``); the groups must be the planted pairs, in two crawl orders, in a
sharded crawl (``--workers 2``: the workers sketch, the coordinator tests, in its thread
and in the test's process whatever the machine's cores) and in the
crawl's WARC imported with the test on (``import warc --near-duplicates``), and
``--duplicates near`` must merge each planted pair into one node, and nothing else:
PageRank, the bow-tie, the exported edges and the ordering comparison of the near graph
are those of the exact graph with the planted pairs merged (networkx as the oracle).
"""

from __future__ import annotations

import dataclasses
import sqlite3
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np
import pytest
from warcio.archiveiterator import ArchiveIterator
from webcrawl.analysis.graph import bowtie, load_graph, pagerank
from webcrawl.analysis.graph.loader import graph_edges
from webcrawl.analysis.ordering.compare import CompareSettings, compare_crawl
from webcrawl.crawler import crawl, near_batch
from webcrawl.crawler.ingest import import_warc
from webcrawl.crawler.links import extract_links
from webcrawl.crawler.near_seen import NearSeen, decode_sketch
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.crawler.shingles import text_sketch
from webcrawl.fixtures import FixtureConfig, FixtureWeb, serve_in_thread
from webcrawl.storage.reader import CrawlReader
from webcrawl.storage.records import Outcome

pytestmark = pytest.mark.timeout(180)

BASE = CrawlSettings.polite_off(resolve=("*.test=127.0.0.1",), scope_hosts=("*.test",),
                                robots_obey=False, near_duplicates=True)


@pytest.fixture(scope="module")
def web() -> FixtureWeb:
    return FixtureWeb.build(FixtureConfig(pages=400, hosts=4, seed=3, near_duplicate_pairs=36,
                                          similar_pages=40, robots_disallow_fraction=0.0))


@pytest.fixture(scope="module")
def crawls(web: FixtureWeb, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = {}
    warcs = tmp_path_factory.mktemp("warcs")
    runs = {"bfs": {"warc_dir": str(warcs)}, "dfs": {"frontier_strategy": "dfs"},
            "workers": {"workers": 2}, "workers-process": {"workers": 2}}
    # A sharded crawl runs the test in its thread unless a core is left for the test's
    # process (near_batch._core_for_the_test): both, on any machine.
    cores = {"workers": 2, "workers-process": 4}
    with serve_in_thread(web) as server:
        for name, changes in runs.items():
            db = tmp_path_factory.mktemp(name) / "crawl.db"
            with pytest.MonkeyPatch.context() as patch:
                if name in cores:
                    patch.setattr(near_batch, "worker_count", lambda n=cores[name]: n)
                crawl([server.seed_url], db, dataclasses.replace(BASE, **changes))
            out[name] = db
        out["port"] = Path(str(server.port))
    out["warcs"] = warcs
    out["warc"] = tmp_path_factory.mktemp("warc") / "imported.db"
    result = import_warc(sorted(warcs.iterdir()), out["warc"],
                         settings=CrawlSettings(near_duplicates=True))
    assert result.near_copies == 36 and "36 near copies" in result.summary()
    return out


def _groups(db: Path) -> tuple[dict[str, str], set[str]]:
    """URL -> the URL of its group's leader (near copies only), and the fetched URLs."""
    with CrawlReader(db) as reader:
        table = reader.urls()
        ids, leaders, resemblance = reader.near_duplicates()
    url_of = dict(zip(table.ids.tolist(), list(table.urls), strict=True))
    assert ((resemblance >= BASE.near_min_resemblance) & (resemblance <= 1.0)).all()
    fetched = set(list(table.urls.take(np.flatnonzero(table.has_outcome(Outcome.FETCHED)))))
    return ({url_of[i]: url_of[j] for i, j in zip(ids.tolist(), leaders.tolist(),
                                                   strict=True)}, fetched)


@pytest.mark.parametrize("order", ["bfs", "dfs", "workers", "workers-process", "warc"])
def test_the_groups_are_the_planted_pairs(web: FixtureWeb, crawls: dict[str, Path],
                                          order: str) -> None:
    port = int(str(crawls["port"]))
    near, _ = _groups(crawls[order])
    truth = web.truth_near(port)
    pairs = {(t.url, t.source_url) for t in truth if t.source_url and t.url != t.source_url}
    found = {frozenset(p) for p in near.items()}
    assert found == {frozenset(p) for p in pairs}  # every pair, nothing else
    kinds = {t.kind for t in truth if t.url in near or t.url in near.values()}
    assert kinds == {"date", "navigation", "reordered", "tracking", "advert", "edit"}


def test_duplicates_near_merges_each_pair_into_one_node(web: FixtureWeb,
                                                       crawls: dict[str, Path]) -> None:
    db = crawls["bfs"]
    exact = load_graph(db)
    near = load_graph(db, duplicates="near")
    near_copies, _ = _groups(db)
    assert near.near_duplicates_collapsed == len(near_copies) == 36
    assert near.n == exact.n - len(near_copies)
    assert "36 near copies collapsed" in near.describe()
    kept = set(near.urls)
    assert not kept & set(near_copies)           # every near copy merged ...
    assert set(near_copies.values()) <= kept      # ... into its leader
    # A link to a near copy is a link to its leader: every exact link survives, mapped.
    index = {u: i for i, u in enumerate(near.urls)}
    src, dst = exact.adjacency.nonzero()
    mapped = set()
    for s, d in zip(src.tolist(), dst.tolist(), strict=True):
        a, b = exact.urls[s], exact.urls[d]
        a, b = near_copies.get(a, a), near_copies.get(b, b)
        if a in near_copies or a == b:
            continue
        if exact.urls[s] in near_copies:
            continue  # a near copy's own out-links are dropped
        mapped.add((index[a], index[b]))
    ns, nd = near.adjacency.nonzero()
    assert mapped == set(zip(ns.tolist(), nd.tolist(), strict=True))


def test_the_warc_import_stores_the_crawls_sketches(crawls: dict[str, Path]) -> None:
    """The same page text gives the same sketch, crawled or imported."""
    def sketches(db: Path) -> dict[str, bytes]:
        with sqlite3.connect(db) as conn:
            return dict(conn.execute(
                "SELECT u.url, f.sketch FROM fetches f JOIN urls u ON u.id = f.url_id"
                " WHERE f.sketch IS NOT NULL AND u.duplicate_of IS NULL"))
    crawled, imported = sketches(crawls["bfs"]), sketches(crawls["warc"])
    assert len(imported) > 300 and imported.keys() <= crawled.keys()
    assert all((decode_sketch(imported[u]) == decode_sketch(crawled[u])).all()
               for u in imported)


def _bodies(warcs: Path) -> dict[str, bytes]:
    """URL -> the body of its response record in the crawl's WARCs."""
    out = {}
    for path in sorted(warcs.iterdir()):
        with path.open("rb") as f:
            for rec in ArchiveIterator(f):
                if rec.rec_type == "response":
                    out[rec.rec_headers.get_header("WARC-Target-URI")] = \
                        rec.content_stream().read()
    return out


@pytest.mark.parametrize("order", ["bfs", "warc"])
def test_the_batched_test_is_the_page_by_page_test(crawls: dict[str, Path],
                                                   order: str) -> None:
    """The crawl and the import sketch and test the pages of each commit together;
    sketched one by one from the same texts (the crawl's WARC bodies) and tested page
    by page in the order the pages were recorded, the sketches are the stored ones bit
    for bit and the groups the stored groups."""
    bodies = _bodies(crawls["warcs"])
    with sqlite3.connect(crawls[order]) as conn:
        rows = conn.execute(
            "SELECT u.id, u.url, f.sketch, u.duplicate_of IS NOT NULL FROM fetches f"
            " JOIN urls u ON u.id = f.url_id WHERE f.outcome = 'fetched' AND u.url LIKE"
            " '%.test%' ORDER BY f.id").fetchall()
        stored = dict(conn.execute("SELECT id, near_of FROM urls WHERE near_of IS NOT NULL"))
    one_by_one = NearSeen(BASE.near_min_resemblance)
    sketched = 0
    for url_id, url, blob, duplicate in rows:
        text = extract_links(bodies[url], url, text=True).text
        assert text is not None
        sketch = text_sketch(text)
        if order == "bfs" or not duplicate:  # the import does not sketch a duplicate
            assert (blob is None) == (sketch is None), url
        if blob is not None:
            assert sketch is not None and (decode_sketch(blob) == sketch).all(), url
            sketched += 1
        one_by_one.see(url_id, None if duplicate else sketch)
    assert sketched > 300
    groups = {i: near[0] for i, *_ in rows if (near := one_by_one.near_of(i)) is not None}
    assert groups == stored and len(groups) == 36


def test_resume_state_reproduces_the_groups(crawls: dict[str, Path]) -> None:
    seen = NearSeen.from_db(crawls["bfs"], BASE.near_min_resemblance)
    near, _ = _groups(crawls["bfs"])
    assert seen.near_duplicates == len(near)
    with CrawlReader(crawls["bfs"]) as reader:
        ids, leaders, _ = reader.near_duplicates()
    for i, j in zip(ids.tolist(), leaders.tolist(), strict=True):
        got = seen.near_of(i)
        assert got is not None and got[0] == j


def _truth_merged(web: FixtureWeb, crawls: dict[str, Path]) -> tuple[Any, Any]:
    """The near graph as the planted truth says it must be, built with networkx from the
    exact graph: each planted pair one node (the member the near graph kept; exactly
    one is kept), links to either member go to it, the other member's out-links gone."""
    db = crawls["bfs"]
    exact, near = load_graph(db), load_graph(db, duplicates="near")
    kept = set(near.urls)
    fold = {}
    for t in web.truth_near(int(str(crawls["port"]))):
        if t.source_url and t.url != t.source_url:
            pair = {t.url, t.source_url}
            (leader,) = pair & kept  # one member kept, the other folded into it
            (other,) = pair - {leader}
            fold[other] = leader
    oracle = nx.DiGraph()
    oracle.add_nodes_from(u for u in exact.urls if u not in fold)
    src, dst = exact.adjacency.nonzero()
    for s, d in zip(src.tolist(), dst.tolist(), strict=True):
        a, b = exact.urls[s], exact.urls[d]
        if a in fold:
            continue
        b = fold.get(b, b)
        if a != b:
            oracle.add_edge(a, b)
    return near, oracle


def test_pagerank_of_the_near_graph_is_the_truth_merged_graphs(
        web: FixtureWeb, crawls: dict[str, Path]) -> None:
    near, oracle = _truth_merged(web, crawls)
    assert sorted(near.urls) == sorted(oracle.nodes)
    ours = dict(zip(near.urls, pagerank(near, tol=1e-12).scores.tolist(), strict=True))
    theirs = nx.pagerank(oracle, alpha=0.85, tol=1e-12, max_iter=1000)
    assert max(abs(ours[u] - theirs[u]) for u in theirs) < 1e-8


def test_bowtie_of_the_near_graph_is_the_truth_merged_graphs(
        web: FixtureWeb, crawls: dict[str, Path]) -> None:
    near, oracle = _truth_merged(web, crawls)
    core = max(nx.strongly_connected_components(oracle), key=len)
    some = next(iter(core))
    into = nx.ancestors(oracle, some) - core
    out = nx.descendants(oracle, some) - core
    bt = bowtie(near)
    regions = {name: {near.urls[i] for i in bt.nodes(name).tolist()}
               for name in ("SCC", "IN", "OUT")}
    assert regions == {"SCC": core, "IN": into, "OUT": out}


def test_export_of_the_near_graph_is_the_truth_merged_graphs(
        web: FixtureWeb, crawls: dict[str, Path]) -> None:
    _, oracle = _truth_merged(web, crawls)
    arrays = graph_edges(crawls["bfs"], "pages", "near")
    with CrawlReader(crawls["bfs"]) as reader:
        table = reader.urls()
    url_of = dict(zip(table.ids.tolist(), list(table.urls), strict=True))
    edges = {(url_of[s], url_of[d]) for s, d in zip(arrays.src.tolist(), arrays.dst.tolist(),
                                                    strict=True)}
    assert edges == set(oracle.edges)
    assert {url_of[i] for i in arrays.nodes.tolist()} == set(oracle.nodes)


@pytest.mark.parametrize("virtual", [True, False])
def test_orderings_measure_the_truth_merged_graph(web: FixtureWeb, crawls: dict[str, Path],
                                                  virtual: bool) -> None:
    _, oracle = _truth_merged(web, crawls)
    dbs = [crawls["bfs"]] if virtual else [crawls["bfs"], crawls["dfs"]]
    comparison = compare_crawl(dbs, ["bfs", "dfs"],
                               settings=CompareSettings(duplicates="near", virtual=virtual))
    assert comparison.graphs
    for name, info in comparison.graphs.items():
        assert info["near_duplicates_collapsed"] == 36, name
        assert info["nodes"] == oracle.number_of_nodes(), name
    pages = [r.pages for r in comparison.reports.values()]
    assert max(pages) == oracle.number_of_nodes() >= min(pages)  # a replay may stop short
