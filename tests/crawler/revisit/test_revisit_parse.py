"""``revisit --add-new`` reads a changed page once, as the crawl reads it.

A changed page's links feed both the link history and the page window from one parse
(counted here), by the crawl's own extractor with the page's charset: an unknown or
hostile ``charset=`` label, ``<meta charset>`` and byte-order marks give the links a
crawl of the same bytes gives, never a traceback.  The revisit runs on simulated time
over a web in memory (its downloader's clock is the loop's), so nothing here waits.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from fakeweb import A, FakeWeb, MockFetcher, Reply, fake_downloader, fast_settings, page
from miniweb import read_db
from webcrawl.crawler import links as links_module
from webcrawl.crawler.downloader import LocalDownloader
from webcrawl.crawler.engine import Crawler
from webcrawl.crawler.revisit.clock import SimulatedClock
from webcrawl.crawler.revisit.loop import RevisitCrawler, RevisitSettings
from webcrawl.crawler.settings import CrawlSettings

SETTINGS = fast_settings(scope_hosts=("*.test",))


def _body(text: str, encoding: str, prefix: bytes = b"") -> bytes:
    return prefix + text.encode(encoding)


#: (body, Content-Type charset label): each links to a non-ASCII path.
CASES: dict[str, tuple[bytes, str | None]] = {
    "unknown-label": (_body('<a href="/caf\u00e9">x</a><a href="/n1">', "utf-8"), "bogus"),
    # UTF-7 is no WHATWG label: ignored, the bytes read as UTF-8 ("+AOk-" stays text).
    "utf-7-label": (b'<a href="/caf+AOk-">x</a><a href="/n1">', "utf-7"),
    "meta-charset": (_body('<meta charset="windows-1251"><a href="/\u0436">x</a>'
                           '<a href="/n1">', "cp1251"), None),
    "meta-in-content": (_body('<meta http-equiv="Content-Type" content="text/html; '
                              'charset=iso-8859-7"><a href="/\u03b1">x</a><a href="/n1">',
                              "iso-8859-7"), None),
    "utf-16-bom": (_body('<a href="/caf\u00e9">x</a><a href="/n1">', "utf-16-le",
                         b"\xff\xfe"), "iso-8859-1"),
    "latin-1-label": (_body('<a href="/caf\u00e9">x</a><a href="/n1">', "latin-1"), "latin1"),
}


def _links_of(db: Path, src: str) -> set[str]:
    return {dst for s, dst in read_db(db)["edges"] if s == src}


async def _crawl(db: Path, web: FakeWeb) -> None:
    await Crawler(db, [f"{A}/"], SETTINGS, downloader=fake_downloader(web)).run()


async def _revisit(db: Path, web: FakeWeb, *, add_new: bool = True) -> int:
    clock = SimulatedClock(epoch=time.time())

    def make(settings: CrawlSettings, now: Callable[[], float]) -> LocalDownloader:
        return LocalDownloader(settings, clock=now, fetcher=MockFetcher(web, now))

    stats = await RevisitCrawler(
        db, RevisitSettings(policy="uniform", budget=10.0, max_visits=4, add_new=add_new),
        SETTINGS, clock=clock, downloader=make).run()
    return stats.added


@pytest.mark.parametrize("case", sorted(CASES))
async def test_a_changed_page_gives_the_crawls_links(tmp_path: Path, case: str) -> None:
    body, label = CASES[case]
    changed = Reply(200, body, "text/html", charset=label)
    # What a crawl of these bytes records.
    web = FakeWeb()
    web.add(f"{A}/", changed)
    await _crawl(tmp_path / "crawl.db", web)
    want = _links_of(tmp_path / "crawl.db", f"{A}/")
    assert f"{A}/n1" in want and len(want) == 2
    # A crawl of the page before it changed, then revisits that see the change.
    web = FakeWeb()
    web.add(f"{A}/", page("/old"), changed)
    web.add(f"{A}/old", page())
    db = tmp_path / "revisit.db"
    await _crawl(db, web)
    added = await _revisit(db, web)
    assert _links_of(db, f"{A}/") == want          # the link history's latest version
    assert added >= 1                              # the window took the new pages
    joined = {url for url, outcome in read_db(db)["outcomes"].items() if url in want}
    assert joined == want


async def test_a_changed_page_is_parsed_once(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Counted at the HTML parser itself: every parse of a page, by whichever caller."""
    calls: list[str] = []
    real = links_module.LexborHTMLParser

    def counting(html: str, *args: object, **kw: object) -> object:
        calls.append(html)
        return real(html, *args, **kw)  # type: ignore[arg-type]

    web = FakeWeb()
    versions = [page("/a", "/b"), page("/a", "/c"), page("/d"), page("/d", "/e")]
    web.add(f"{A}/", *versions)
    for path in "abcde":
        web.add(f"{A}/{path}", page())
    db = tmp_path / "c.db"
    await _crawl(db, web)
    monkeypatch.setattr(links_module, "LexborHTMLParser", counting)
    await _revisit(db, web)
    with sqlite3.connect(db) as conn:
        revisited = [url for (url,) in conn.execute(
            "SELECT u.url FROM fetches f JOIN urls u ON u.id = f.url_id"
            " WHERE f.kind = 'revisit' AND f.outcome = 'fetched' ORDER BY f.id")]
        changed = conn.execute("SELECT count(*) FROM fetches"
                               " WHERE kind = 'revisit' AND changed = 1").fetchone()[0]
    assert changed >= 1 and len(revisited) >= 3
    # One parse per revisited HTML body, shared by the link history and the window.
    assert len(calls) == len(revisited)
