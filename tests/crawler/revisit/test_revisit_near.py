"""The revisit loop runs the crawl's near-duplicate test on pages whose text changed.

Truth by construction: pages made of long texts over a large vocabulary, where a copy
with one word in 60 replaced is a near copy (resemblance about 0.9) and two texts drawn
independently share no 2-word shingle.  The revisit changes the texts so that the
groups must end as one known partition whatever order the pages are revisited in.
"""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

from miniweb import MiniWeb, html
from webcrawl.crawler.engine import Crawler
from webcrawl.crawler.links import extract_links
from webcrawl.crawler.near_seen import decode_sketch
from webcrawl.crawler.revisit.loop import RevisitCrawler, RevisitSettings

_WORDS = [f"w{i}x" for i in range(4000)]


def _text(seed: int) -> list[str]:
    rnd = random.Random(seed)
    return [rnd.choice(_WORDS) for _ in range(300)]


def _edited(words: list[str], seed: int) -> list[str]:
    """One word in 60 replaced."""
    rnd = random.Random(seed)
    out = list(words)
    for i in range(rnd.randrange(60), len(out), 60):
        out[i] = f"edit{seed}n{i}"
    return out


def _page(words: list[str]) -> str:
    return html("/", extra="<title>t</title>").replace(
        "<body>", f"<body><main><p>{' '.join(words)}</p></main>")


def _groups(db: Path) -> dict[str, tuple[str, float]]:
    with sqlite3.connect(db) as conn:
        return {u: (leader, r) for u, leader, r in conn.execute(
            "SELECT u.url, l.url, u.near_resemblance FROM urls u"
            " JOIN urls l ON l.id = u.near_of")}


async def test_revisits_retest_changed_texts(mini_web: MiniWeb, tmp_path: Path) -> None:
    web = mini_web
    a, b = _text(1), _text(2)
    web.add("a.test", "/", html("/a", "/b", "/c"))
    web.add("a.test", "/a", _page(a))
    web.add("a.test", "/b", _page(b))
    web.add("a.test", "/c", _page(_edited(a, 3)))
    db = tmp_path / "c.db"
    settings = web.settings(scope_hosts=("*.test",), near_duplicates=True)
    await Crawler(db, [web.url("a.test")], settings).run()
    url = {p: web.url("a.test", p) for p in ("/a", "/b", "/c")}
    crawled = _groups(db)
    assert {k: v[0] for k, v in crawled.items()} == {url["/c"]: url["/a"]}

    # /a gets a text of its own; /b becomes a near copy of /a's old text, so of /c.
    web.add("a.test", "/a", _page(_text(4)))
    web.add("a.test", "/b", _page(_edited(a, 5)))
    revisit = RevisitSettings(policy="uniform", budget=40.0, duration=0.5, day_seconds=1.0)
    for _ in range(20):  # until /a and /b were both revisited (a busy machine is slow)
        await RevisitCrawler(db, revisit, settings).run()
        with sqlite3.connect(db) as conn:
            revisited = {u for (u,) in conn.execute(
                "SELECT DISTINCT u.url FROM fetches f JOIN urls u ON u.id = f.url_id"
                " WHERE f.kind = 'revisit' AND f.changed = 1")}
        if {url["/a"], url["/b"]} <= revisited:
            break
    assert {url["/a"], url["/b"]} <= revisited
    groups = _groups(db)
    # One group, {/b, /c}, led by either (which depends on the revisit order); /a alone.
    assert {frozenset((k, v[0])) for k, v in groups.items()} == {frozenset((url["/b"],
                                                                           url["/c"]))}
    assert all(0.8 <= r <= 1.0 for _, r in groups.values())
    # Each changed visit stored the sketch of the text it fetched (the crawl's own).
    with sqlite3.connect(db) as conn:
        (blob,) = conn.execute(
            "SELECT f.sketch FROM fetches f JOIN urls u ON u.id = f.url_id WHERE u.url = ?"
            " AND f.kind = 'revisit' AND f.changed = 1 ORDER BY f.seq LIMIT 1",
            (url["/b"],)).fetchone()
    want = extract_links(_page(_edited(a, 5)).encode(), url["/b"], sketch=True).sketch
    assert want is not None and (decode_sketch(blob) == want).all()


async def test_without_the_test_a_revisit_stores_no_sketch(mini_web: MiniWeb,
                                                           tmp_path: Path) -> None:
    web = mini_web
    a = _text(1)
    web.add("a.test", "/", html("/a", "/c"))
    web.add("a.test", "/a", _page(_text(6)))
    web.add("a.test", "/c", _page(a))
    db = tmp_path / "c.db"
    settings = web.settings(scope_hosts=("*.test",))
    await Crawler(db, [web.url("a.test")], settings).run()
    web.add("a.test", "/a", _page(_edited(a, 7)))  # now a near copy of /c: not tested
    revisit = RevisitSettings(policy="uniform", budget=40.0, duration=0.3, day_seconds=1.0)
    await RevisitCrawler(db, revisit, settings).run()
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM fetches WHERE sketch IS NOT NULL"
                            ).fetchone() == (0,)
    assert _groups(db) == {}
