"""The fetchable-set rule: virtual crawls stay inside the recorded crawl's reach.

A hand-made crawl database with one URL of every outcome pins the rule outcome by
outcome (fetchable exactly when the recorded crawl got an HTTP answer; redirects
followed as recorded; everything else discovered but never fetched, at no budget);
a database without outcomes (an imported graph) pins the other half of the rule.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest
from webcrawl.analysis.graph.loader import load_graph
from webcrawl.analysis.ordering.compare import CompareSettings, virtual_comparison
from webcrawl.analysis.ordering.quality import QualitySettings
from webcrawl.analysis.ordering.reach import EXCLUSION_REASONS, reach_summary
from webcrawl.analysis.ordering.virtual import virtual_crawl
from webcrawl.storage.records import FetchRecord, Outcome
from webcrawl.storage.store import CrawlStore, HostRow, UrlRow

STRATEGIES = ("bfs", "dfs", "random", "backlink", "pagerank", "opic")

# id -> (path, outcome or None, HTTP status).  The seed (0) links to every other URL;
# the redirect (4) is the only way to page 11; the error page has no links.
URLS: dict[int, tuple[str, Outcome | None, int | None]] = {
    0: ("/", Outcome.FETCHED, 200),
    1: ("/a", Outcome.FETCHED, 200),
    2: ("/file.pdf", Outcome.NOT_HTML, 200),
    3: ("/gone", Outcome.HTTP_ERROR, 404),
    4: ("/old", Outcome.REDIRECT, 301),
    5: ("/huge", Outcome.TOO_LARGE, 200),
    6: ("/same", Outcome.NOT_MODIFIED, 304),
    7: ("/private/x", Outcome.ROBOTS_EXCLUDED, None),
    8: ("http://off.test/", Outcome.OUT_OF_SCOPE, None),
    9: ("/down", Outcome.NETWORK_ERROR, None),
    10: ("/slow", Outcome.TIMEOUT, None),
    11: ("/new", Outcome.FETCHED, 200),
    12: ("/later", Outcome.ABANDONED, None),
    13: ("/queued", None, None),
}
LINKS = {0: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 13], 1: [0, 13], 4: [11], 11: [1]}
FETCHABLE = {0, 1, 2, 3, 4, 5, 6, 11}


def _url(path: str) -> str:
    return path if path.startswith("http") else f"http://a.test{path}"


async def _write(path: Path, *, outcomes: bool) -> None:
    store = await CrawlStore.open(path)
    store.add_host(HostRow(0, "a.test", robots_status=200))
    store.add_host(HostRow(1, "off.test"))
    for uid, (p, _, _) in URLS.items():
        store.add_url(UrlRow(uid, _url(p), 1 if "off.test" in p else 0,
                             0 if uid == 0 else 1, -1 if uid == 0 else 0))
    seq = 0
    for uid, (_, outcome, status) in URLS.items():
        if not outcomes:
            if uid in LINKS:
                store.add_links(uid, LINKS[uid])
            continue
        if outcome is None:
            continue
        if outcome not in (Outcome.ROBOTS_EXCLUDED, Outcome.OUT_OF_SCOPE, Outcome.ABANDONED):
            store.add_fetch(FetchRecord(uid, seq, 100.0 + seq, 100.5 + seq, outcome, status))
        if uid in LINKS:
            store.add_links(uid, LINKS[uid])
        taken = outcome not in (Outcome.OUT_OF_SCOPE, Outcome.ABANDONED)
        store.set_outcome(uid, outcome, seq if taken else None)
        seq += 1
    if outcomes:
        store.add_link_cut(0, 12, 3)  # the seed page had 15 links; 3 were dropped
    await store.aclose()


@pytest.fixture
def outcome_db(tmp_path: Path) -> Path:
    asyncio.run(_write(tmp_path / "o.db", outcomes=True))
    return tmp_path / "o.db"


@pytest.mark.parametrize("uid", sorted(URLS), ids=lambda u: str(URLS[u][1] or "frontier"))
def test_fetchable_exactly_when_the_crawl_got_an_http_answer(outcome_db: Path,
                                                             uid: int) -> None:
    full = load_graph(outcome_db, graph="all")
    node = full.index_of(_url(URLS[uid][0]))
    assert bool(full.fetchable[node]) == (uid in FETCHABLE)


@pytest.mark.parametrize("name", STRATEGIES)
def test_replays_fetch_the_fetchable_set_and_nothing_else(outcome_db: Path,
                                                          name: str) -> None:
    full = load_graph(outcome_db, graph="all")
    crawl = virtual_crawl(full, name)
    assert {int(full.store_ids[i]) for i in crawl.order} == FETCHABLE
    # every discovered URL was announced to the strategy, fetchable or not
    assert {int(full.store_ids[i]) for i in crawl.discovery} == set(URLS)
    # excluded URLs cost no budget: a budget of |fetchable| reaches every fetchable URL
    capped = virtual_crawl(full, name, max_pages=len(FETCHABLE))
    assert {int(full.store_ids[i]) for i in capped.order} == FETCHABLE


def test_redirects_are_followed_as_recorded(outcome_db: Path) -> None:
    full = load_graph(outcome_db, graph="all")
    order = [int(full.store_ids[i]) for i in virtual_crawl(full, "bfs").order]
    assert order.index(4) < order.index(11)  # page 11 is only behind the redirect


def test_reach_counts_each_exclusion_with_its_reason(outcome_db: Path) -> None:
    reach = reach_summary(load_graph(outcome_db, graph="all"))
    assert reach.urls == len(URLS) and reach.fetchable == len(FETCHABLE) and reach.pages == 3
    assert reach.fetchable_by_outcome == {"fetched": 3, "not_html": 1, "redirect": 1,
                                          "not_modified": 1, "http_error": 1,
                                          "too_large": 1}
    r = EXCLUSION_REASONS
    assert reach.excluded == {r["frontier"]: 1, r["network_error"]: 1, r["timeout"]: 1,
                              r["robots_excluded"]: 1, r["out_of_scope"]: 1,
                              r["abandoned"]: 1}
    lines = reach.lines()
    assert lines[0].startswith("fetchable set: 8 of 14 discovered URLs")
    assert "  excluded: 1 excluded by robots.txt" in lines


def test_comparison_ends_on_the_recorded_pages_with_all_pagerank(outcome_db: Path) -> None:
    full = load_graph(outcome_db, graph="all")
    comparison = virtual_comparison(
        full, STRATEGIES, measured=load_graph(outcome_db),
        settings=CompareSettings(quality=QualitySettings(checkpoints=0)))
    assert comparison.graphs["graph"]["kind"] == "pages"
    assert comparison.reach is not None and comparison.reach.fetchable == len(FETCHABLE)
    for name, report in comparison.reports.items():
        assert report.pages == 3, name  # pages 0, 1, 11 of the measured graph
        assert report.capture[-1] == pytest.approx(1.0), name
        assert report.summary["captured_at_100pct"] == pytest.approx(1.0), name


def test_imported_graph_every_node_with_out_links_is_fetchable(tmp_path: Path) -> None:
    asyncio.run(_write(tmp_path / "i.db", outcomes=False))
    full = load_graph(tmp_path / "i.db", graph="all")
    with_links = {int(full.store_ids[i]) for i in np.flatnonzero(full.fetchable)}
    assert with_links == set(LINKS)
    reach = reach_summary(full)
    assert reach.excluded == {EXCLUSION_REASONS["frontier"]: len(URLS) - len(LINKS)}
    assert {int(full.store_ids[i]) for i in virtual_crawl(full, "bfs").order} == set(LINKS)


def test_pages_graph_links_through_recorded_redirects(outcome_db: Path) -> None:
    pages = load_graph(outcome_db)
    # 0 -> /old (a redirect) -> /new: in the pages graph, a link 0 -> /new
    edges = {(int(pages.store_ids[i]), int(pages.store_ids[j]))
             for i, j in zip(*pages.adjacency.nonzero(), strict=True)}
    assert edges == {(0, 1), (0, 11), (1, 0), (11, 1)}
    full = load_graph(outcome_db, graph="all")
    assert (full.index_of(_url("/old")), full.index_of(_url("/new"))) in set(
        zip(*full.adjacency.nonzero(), strict=True))


def test_redirect_chains_and_loops(tmp_path: Path) -> None:
    async def write(path: Path) -> None:
        store = await CrawlStore.open(path)
        store.add_host(HostRow(0, "a.test"))
        names = ["/", "/r1", "/r2", "/end", "/l1", "/l2"]
        for uid, name in enumerate(names):
            store.add_url(UrlRow(uid, _url(name), 0, 0 if uid == 0 else 1, -1 if uid == 0 else 0))
        outcomes = [Outcome.FETCHED, Outcome.REDIRECT, Outcome.REDIRECT, Outcome.FETCHED,
                    Outcome.REDIRECT, Outcome.REDIRECT]
        links = {0: [1, 4], 1: [2], 2: [3], 3: [0], 4: [5], 5: [4]}
        for uid, outcome in enumerate(outcomes):
            store.add_fetch(FetchRecord(uid, uid, 1.0, 2.0, outcome, 200))
            store.add_links(uid, links[uid])
            store.set_outcome(uid, outcome, uid)
        await store.aclose()

    asyncio.run(write(tmp_path / "c.db"))
    pages = load_graph(tmp_path / "c.db")
    edges = {(int(pages.store_ids[i]), int(pages.store_ids[j]))
             for i, j in zip(*pages.adjacency.nonzero(), strict=True)}
    assert edges == {(0, 3), (3, 0)}  # the chain ends on /end; the loop on no page


def test_every_description_says_when_pages_had_their_links_cut(outcome_db: Path) -> None:
    pages, full = load_graph(outcome_db), load_graph(outcome_db, graph="all")
    assert pages.truncated_pages == full.truncated_pages == 1
    assert pages.describe().endswith("; 1 page with links cut at the per-page cap")
    assert pages.info()["truncated_pages"] == 1
