"""A revisit that finds a page's links changed keeps the previous link set as an earlier
version with its fetch; the loader reads the latest by default and the earlier one on
request; new targets become discovered URLs."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from miniweb import MiniWeb, html
from webcrawl.analysis.graph import load_graph
from webcrawl.crawler.engine import Crawler
from webcrawl.crawler.revisit.loop import RevisitCrawler, RevisitSettings
from webcrawl.storage._sqlite import decode_ids


async def test_revisit_keeps_the_previous_link_set(mini_web: MiniWeb, tmp_path: Path) -> None:
    web = mini_web
    web.add("a.test", "/", html("/x", "/y"))
    web.add("a.test", "/x", html("/"))
    web.add("a.test", "/y", html())
    db = tmp_path / "c.db"
    settings = web.settings(scope_hosts=("*.test",))
    await Crawler(db, [web.url("a.test")], settings).run()
    with sqlite3.connect(db) as conn:
        (crawl_seq,) = conn.execute("SELECT max(seq) FROM fetches").fetchone()
    # The home page now links to /y and a new page /z (on a new host too).
    web.add("a.test", "/", html("/y", "/z", "http://b.test/w"))
    revisit = RevisitSettings(policy="uniform", budget=30.0, duration=0.6, day_seconds=1.0)
    await RevisitCrawler(db, revisit, settings).run()

    with sqlite3.connect(db) as conn:
        url = dict(conn.execute("SELECT id, url FROM urls"))
        fetch = {i: (seq, kind, changed) for i, seq, kind, changed in conn.execute(
            "SELECT id, seq, kind, changed FROM fetches")}
        versions = conn.execute("SELECT src, fetch_id, superseded_by, dst FROM link_versions"
                                ).fetchall()
        latest = dict((s, (f, d)) for s, f, d in conn.execute(
            "SELECT src, fetch_id, dst FROM links"))
        new = conn.execute("SELECT url, discovered_seq, outcome FROM urls"
                           " WHERE url LIKE '%/z' OR url LIKE 'http://b.test%'").fetchall()
    home = next(i for i, u in url.items() if u == web.url("a.test"))
    # Exactly one earlier version: the crawl's link set, from the crawl fetch, replaced by
    # the first revisit that saw the change.
    assert len(versions) == 1
    src, fetch_id, by, dst = versions[0]
    assert src == home and [url[d] for d in decode_ids(dst)] == [web.url("a.test", "/x"),
                                                                 web.url("a.test", "/y")]
    assert fetch[fetch_id][1] == "crawl"
    assert fetch[by][1] == "revisit" and fetch[by][2] == 1
    f, dst = latest[home]
    assert f == by
    assert [url[d] for d in decode_ids(dst)] == [web.url("a.test", "/y"),
                                                 web.url("a.test", "/z"), "http://b.test/w"]
    # Unchanged pages (/x, /y) keep their one version.
    assert {s for s, *_ in versions} == {home}
    # New targets are discovered (not fetched) URLs of the revisit fetch.
    assert sorted(new) == sorted([(web.url("a.test", "/z"), fetch[by][0], None),
                                  ("http://b.test/w", fetch[by][0], None)])
    now = load_graph(db, graph="all")
    before = load_graph(db, graph="all", links_as_of_seq=crawl_seq)
    name = dict(enumerate(now.urls))

    def out(graph: object) -> set[str]:
        adj = graph.adjacency  # type: ignore[attr-defined]
        i = graph.urls.index(web.url("a.test"))  # type: ignore[attr-defined]
        return {name[j] for j in adj.indices[adj.indptr[i]:adj.indptr[i + 1]]}

    assert out(now) == {web.url("a.test", "/y"), web.url("a.test", "/z"), "http://b.test/w"}
    assert out(before) == {web.url("a.test", "/x"), web.url("a.test", "/y")}
