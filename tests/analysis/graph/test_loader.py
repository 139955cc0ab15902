"""load_graph against hand-made answers and a naive pure-Python reference."""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from webcrawl.analysis.graph.loader import load_graph
from webcrawl.storage.errors import ConfigError, StoreError
from webcrawl.storage.records import FetchRecord, Outcome
from webcrawl.storage.store import CrawlStore, HostRow, UrlRow

# A tiny crawl.  URL id -> (url, host id, outcome, seq, discovered_seq)
URLS = {
    0: ("http://a.test/", 0, Outcome.FETCHED, 0, -1),       # seed
    1: ("http://a.test/x", 0, Outcome.FETCHED, 2, 0),
    2: ("http://b.test/", 1, Outcome.FETCHED, 1, 0),
    3: ("http://b.test/y", 1, None, None, 0),                # frontier
    4: ("http://a.test/err", 0, Outcome.HTTP_ERROR, 3, 1),
    5: ("http://a.test/r", 0, Outcome.REDIRECT, 4, 1),
    6: ("http://b.test/z", 1, None, None, 4),                # frontier (redirect target)
    8: ("http://c.test/", 2, Outcome.FETCHED, 5, -1),        # second seed; id 7 unused
}
# page -> (out-links in document order, nofollow ids)
LINKS = {
    0: ([1, 2, 2, 0, 3], [3]),
    2: ([0, 3, 2, 8], [0]),
    1: ([4, 5, 1, 1, 2], []),
    5: ([6], []),
    8: ([], []),
}
HOSTS = ["a.test", "b.test", "c.test"]
ENDED = {0: 10.0, 2: 11.0, 1: 12.5, 4: 13.0, 5: 14.0, 8: 15.0}


async def _build(path: Path) -> None:
    store = await CrawlStore.open(path)
    for h, name in enumerate(HOSTS):
        store.add_host(HostRow(h, name))
    for uid, (url, host, _, _, dseq) in URLS.items():
        store.add_url(UrlRow(uid, url, host, 0 if dseq == -1 else 1, dseq))
    for uid, (_, _, outcome, seq, _) in URLS.items():
        if outcome is None or seq is None:
            continue
        if uid == 1:  # a failed first attempt, then the final one (same seq)
            store.add_fetch(FetchRecord(uid, seq, 12.0, 12.1, Outcome.TIMEOUT, attempt=1))
        store.add_fetch(FetchRecord(uid, seq, ENDED[uid] - 0.5, ENDED[uid], outcome,
                                    attempt=2 if uid == 1 else 1))
        if uid in LINKS:
            dst, nofollow = LINKS[uid]
            store.add_links(uid, dst, nofollow)
        store.set_outcome(uid, outcome, seq)
    await store.aclose()


@pytest.fixture
async def crawl_db(tmp_path: Path) -> Path:
    path = tmp_path / "crawl.db"
    await _build(path)
    return path


def _reference(include_frontier: bool, remote_only: bool, drop_self_loops: bool,
               collapse_duplicates: bool, follow_nofollow: bool) -> tuple[list[int], Counter]:
    """Naive loader: node ids and a Counter of (src id, dst id) edge weights."""
    nodes = [u for u in sorted(URLS)
             if include_frontier or URLS[u][2] is Outcome.FETCHED]
    edges: Counter[tuple[int, int]] = Counter()
    for src, (dsts, nofollow) in LINKS.items():
        for dst in dsts:
            if src not in nodes or dst not in nodes:
                continue
            if not follow_nofollow and dst in nofollow:
                continue
            if drop_self_loops and src == dst:
                continue
            if remote_only and URLS[src][1] == URLS[dst][1]:
                continue
            edges[(src, dst)] += 1
    if collapse_duplicates:
        edges = Counter(dict.fromkeys(edges, 1))
    return nodes, edges


def _edges_by_id(graph) -> Counter:  # type: ignore[no-untyped-def]
    coo = graph.adjacency.tocoo()
    ids = graph.store_ids
    return Counter({(int(ids[i]), int(ids[j])): int(w)
                    for i, j, w in zip(coo.row, coo.col, coo.data, strict=True)})


async def test_default_graph_is_the_fetched_pages(crawl_db: Path) -> None:
    g = load_graph(crawl_db)
    assert g.kind == "pages"
    assert g.store_ids.tolist() == [0, 1, 2, 8]
    assert _edges_by_id(g) == Counter({(0, 1): 1, (0, 2): 1, (2, 0): 1, (2, 8): 1,
                                       (1, 2): 1})
    assert g.crawled.all() and g.fetchable.all()
    assert g.store_ids[g.fetch_order].tolist() == [0, 2, 1, 8]
    assert g.describe() == "graph of fetched pages: 4 pages, 5 links"
    assert g.info() | {"description": ""} == {"kind": "pages", "nodes": 4, "links": 5,
                                              "pages": 4, "truncated_pages": 0,
                                              "duplicates_collapsed": 0,
                                              "near_duplicates_collapsed": 0, "sites": 3,
                                              "mirrors": [], "description": ""}


async def test_all_graph_known_answer(crawl_db: Path) -> None:
    g = load_graph(crawl_db, graph="all")
    assert g.kind == "all"
    assert g.describe() == ("graph of all discovered URLs: 8 URLs (4 fetched pages), "
                            "10 links")
    assert g.store_ids.tolist() == [0, 1, 2, 3, 4, 5, 6, 8]
    assert g.urls == [URLS[u][0] for u in sorted(URLS)]
    # self-loops 0->0, 2->2, 1->1 dropped; 0->2 twice collapsed to 1
    assert _edges_by_id(g) == Counter({
        (0, 1): 1, (0, 2): 1, (0, 3): 1, (2, 0): 1, (2, 3): 1, (2, 8): 1,
        (1, 4): 1, (1, 5): 1, (1, 2): 1, (5, 6): 1})
    assert g.crawled.tolist() == [True, True, True, False, False, False, False, True]
    # answered URLs (pages, the error page, the redirect) fetchable; frontier not
    assert g.fetchable.tolist() == [True, True, True, False, True, True, False, True]
    # fetchable URLs by seq: 0 (seq 0), 2 (seq 1), 1 (seq 2), 4, 5, 8 (seq 5)
    assert g.store_ids[g.fetch_order].tolist() == [0, 2, 1, 4, 5, 8]
    assert g.fetch_times.tolist() == [10.0, 11.0, 12.5, 13.0, 14.0, 15.0]  # URL 1: final
    assert g.store_ids[g.seeds].tolist() == [0, 8]
    assert [g.host_names[h] for h in g.hosts] == [HOSTS[URLS[u][1]] for u in sorted(URLS)]


async def test_pages_remote_only_known_answer(crawl_db: Path) -> None:
    g = load_graph(crawl_db, graph="pages", remote_only=True)
    assert g.store_ids.tolist() == [0, 1, 2, 8]
    assert g.urls == ["http://a.test/", "http://a.test/x", "http://b.test/", "http://c.test/"]
    assert _edges_by_id(g) == Counter({(0, 2): 1, (2, 0): 1, (2, 8): 1, (1, 2): 1})
    assert g.crawled.all()
    assert g.fetch_order.tolist() == [0, 2, 1, 3]


async def test_duplicates_and_self_loops_kept_known_answer(crawl_db: Path) -> None:
    g = load_graph(crawl_db, graph="pages", drop_self_loops=False,
                   collapse_duplicates=False)
    assert _edges_by_id(g) == Counter({(0, 1): 1, (0, 2): 2, (0, 0): 1, (2, 0): 1, (2, 2): 1,
                                       (2, 8): 1, (1, 1): 2, (1, 2): 1})


async def test_nofollow_dropped_known_answer(crawl_db: Path) -> None:
    g = load_graph(crawl_db, graph="all", follow_nofollow=False)
    edges = _edges_by_id(g)
    assert (0, 3) not in edges and (2, 0) not in edges  # the two nofollow links
    assert (2, 3) in edges  # 2 -> 3 is a followed link (only 0 marked it nofollow)


@pytest.mark.parametrize(
    "options", list(itertools.product([True, False], repeat=5)),
    ids=lambda o: "-".join(str(int(x)) for x in o))
async def test_every_option_combination_matches_naive_reference(
        crawl_db: Path, options: tuple[bool, ...]) -> None:
    include_frontier, remote_only, drop_self_loops, collapse, follow = options
    g = load_graph(crawl_db, graph="all" if include_frontier else "pages",
                   remote_only=remote_only,
                   drop_self_loops=drop_self_loops, collapse_duplicates=collapse,
                   follow_nofollow=follow)
    nodes, edges = _reference(*options)
    assert g.store_ids.tolist() == nodes
    assert g.n == len(nodes)
    assert _edges_by_id(g) == edges


async def test_random_crawl_matches_naive_reference(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    n, path = 300, tmp_path / "r.db"
    hosts = rng.integers(0, 5, size=n)
    fetched = rng.random(n) < 0.6
    links = {int(u): rng.integers(0, n, size=rng.integers(0, 12)).tolist()
             for u in np.flatnonzero(fetched)}
    store = await CrawlStore.open(path)
    for h in range(5):
        store.add_host(HostRow(h, f"h{h}.test"))
    for u in range(n):
        store.add_url(UrlRow(u, f"http://h{hosts[u]}.test/{u}", int(hosts[u]), 1, 0))
    for seq, (u, dst) in enumerate(links.items()):
        store.add_fetch(FetchRecord(u, seq, 1.0, 2.0, Outcome.FETCHED))
        store.add_links(u, dst)
        store.set_outcome(u, Outcome.FETCHED, seq)
    await store.aclose()
    g = load_graph(path, remote_only=True)
    expected = {(s, d) for s, ds in links.items() for d in ds
                if d in links and s != d and hosts[s] != hosts[d]}
    assert set(_edges_by_id(g)) == expected
    assert g.store_ids.tolist() == sorted(links)


async def test_empty_crawl_loads_an_empty_graph(tmp_path: Path) -> None:
    path = tmp_path / "e.db"
    store = await CrawlStore.open(path)
    await store.aclose()
    g = load_graph(path)
    assert g.n == 0 and g.m == 0 and g.fetch_order.size == 0


def test_unknown_graph_is_a_config_error(crawl_db: Path) -> None:
    with pytest.raises(ConfigError, match="unknown graph 'frontier'"):
        load_graph(crawl_db, graph="frontier")  # type: ignore[arg-type]


def test_missing_database(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no crawl database"):
        load_graph(tmp_path / "missing.db")
