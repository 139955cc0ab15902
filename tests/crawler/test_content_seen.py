"""The content-seen test (webcrawl.crawler.content_seen): against a brute-force oracle,
read back from a database, and through the WARC import and a revisit."""

from __future__ import annotations

import asyncio
import hashlib
import io
import random
import sqlite3
from pathlib import Path

import pytest
from miniweb import MiniWeb, html
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter
from webcrawl.crawler.content_seen import ContentSeen
from webcrawl.crawler.engine import Crawler
from webcrawl.crawler.ingest import import_warc
from webcrawl.crawler.revisit.loop import RevisitCrawler, RevisitSettings
from webcrawl.storage.records import FetchRecord, Outcome
from webcrawl.storage.store import CrawlStore, HostRow, UrlRow


def digest(body: str) -> str:
    return hashlib.blake2b(body.encode(), digest_size=16).hexdigest()


def oracle(events: list[tuple[int, str | None]]) -> dict[int, int | None]:
    """Each page's original after ``events``, by brute force: the holder of the same body
    that has held it since the earliest event."""
    holds: dict[int, tuple[str, int]] = {}  # page -> (digest, event index it got it)
    for k, (page, d) in enumerate(events):
        if d is None:
            holds.pop(page, None)
        elif holds.get(page, (None, 0))[0] != d:
            holds[page] = (d, k)
    out: dict[int, int | None] = {}
    for page, (d, _) in holds.items():
        first = min((k, p) for p, (e, k) in holds.items() if e == d)[1]
        out[page] = None if first == page else first
    return out


@pytest.mark.parametrize("seed", range(30))
def test_see_matches_the_oracle(seed: int) -> None:
    rng = random.Random(seed)
    seen = ContentSeen()
    stored: dict[int, int | None] = {}
    events: list[tuple[int, str | None]] = []
    bodies = [digest(str(b)) for b in range(rng.randint(1, 6))]
    for _ in range(rng.randint(1, 120)):
        page = rng.randrange(12)
        d = None if rng.random() < 0.1 else rng.choice(bodies)
        events.append((page, d))
        for url_id, original in seen.see(page, d):
            stored[url_id] = original
        truth = oracle(events)
        assert {p: seen.original(p) for p in range(12)} == {p: truth.get(p) for p in range(12)}
        # The stored column (the updates applied in order) says the same.
        assert {p: o for p, o in stored.items() if o is not None} == \
            {p: o for p, o in truth.items() if o is not None}
    assert seen.duplicates == sum(o is not None for o in oracle(events).values())


def test_a_page_seen_again_with_the_same_body_changes_nothing() -> None:
    seen = ContentSeen()
    assert seen.see(1, digest("a")) == []  # the first holder: nothing to store
    assert seen.see(2, digest("a")) == [(2, 1)]
    assert seen.see(2, digest("a")) == []
    assert seen.see(1, digest("b")) == [(2, None)]  # 2 holds "a" alone now
    assert seen.see(3, digest("b")) == [(3, 1)]
    assert (len(seen), seen.duplicates) == (3, 1)


def _write(path: Path, pages: list[tuple[str, str]]) -> None:
    """A crawl that fetched ``pages`` (url, body) in order, duplicates recorded by the
    content-seen test as the crawler records them."""
    seen = ContentSeen()

    async def write() -> None:
        async with await CrawlStore.open(path) as store:
            store.add_host(HostRow(0, "a.test"))
            for i, (url, body) in enumerate(pages):
                store.add_url(UrlRow(i, url, 0, 0, -1, Outcome.FETCHED, i))
                store.add_fetch(FetchRecord(i, i, 1.0 + i, 1.5 + i, Outcome.FETCHED,
                                            status=200, size=len(body), digest=digest(body)))
                for url_id, original in seen.see(i, digest(body)):
                    store.set_duplicate(url_id, original)

    asyncio.run(write())


def test_from_db_reads_the_recorded_duplicates(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    bodies = ["a", "b", "a", "c", "b", "a"]
    _write(db, [(f"http://a.test/{i}", b) for i, b in enumerate(bodies)])
    with sqlite3.connect(db) as conn:
        stored = dict(conn.execute("SELECT id, duplicate_of FROM urls"))
    assert stored == {0: None, 1: None, 2: 0, 3: None, 4: 1, 5: 0}
    seen = ContentSeen.from_db(db)
    assert {i: seen.original(i) for i in range(6)} == stored
    # A later page with a known body is a duplicate of the first page that had it.
    assert seen.see(6, digest("b")) == [(6, 1)]


def test_from_db_of_a_file_written_before_the_test(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    _write(db, [(f"http://a.test/{i}", b) for i, b in enumerate(["x", "y", "x"])])
    with sqlite3.connect(db) as conn:  # as schema version 4 left it: no column
        conn.execute("ALTER TABLE urls DROP COLUMN duplicate_of")
        conn.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")
    seen = ContentSeen.from_db(db)
    assert [seen.original(i) for i in range(3)] == [None, None, 0]  # in crawl order


def _warc(path: Path, records: list[tuple[str, bytes]]) -> None:
    with open(path, "wb") as out:
        writer = WARCWriter(out, gzip=True)
        for url, body in records:
            headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html")],
                                       protocol="HTTP/1.1")
            writer.write_record(writer.create_warc_record(
                url, "response", payload=io.BytesIO(body), length=len(body),
                http_headers=headers))


@pytest.mark.parametrize("read", [False, True], ids=["default", "links-from-duplicates"])
def test_warc_import_records_copies(tmp_path: Path, read: bool) -> None:
    from webcrawl.crawler.settings import CrawlSettings

    home = b'<html><a href="/b">b</a></html>'
    records = [("http://a.test/", home), ("http://a.test/b", b"<html>b</html>"),
               ("https://a.test/", home),                # the https copy of the home page
               ("https://a.test/", b"<html>new</html>")]  # later: no longer a copy
    found = []
    for n in (3, 4):
        warc, db = tmp_path / f"w{n}.warc.gz", tmp_path / f"w{n}.db"
        _warc(warc, records[:n])
        import_warc([warc], db, settings=CrawlSettings(links_from_duplicates=read))
        with sqlite3.connect(db) as conn:
            dup = dict(conn.execute("SELECT u.url, o.url FROM urls u JOIN urls o"
                                    " ON o.id = u.duplicate_of"))
            links = {u for (u,) in conn.execute("SELECT url FROM urls JOIN links ON src = id")}
        found.append((dup, "https://a.test/" in links))
    # The copy's links are not read (unless asked); the new bytes of its later fetch
    # make it no one's duplicate, and are read.
    assert found == [({"https://a.test/": "http://a.test/"}, read), ({}, True)]


def test_warc_import_copy_is_collapsed(tmp_path: Path) -> None:
    from webcrawl.analysis.graph import load_graph

    home = b'<html><a href="/b">b</a><a href="https://a.test/">s</a></html>'
    warc = tmp_path / "w.warc.gz"
    _warc(warc, [("http://a.test/", home), ("http://a.test/b", b"<html>b</html>"),
                 ("https://a.test/", home)])
    db = tmp_path / "w.db"
    import_warc([warc], db)
    with sqlite3.connect(db) as conn:
        dup = conn.execute("SELECT u.url, o.url FROM urls u JOIN urls o"
                           " ON o.id = u.duplicate_of").fetchall()
    assert dup == [("https://a.test/", "http://a.test/")]
    g = load_graph(db)
    assert sorted(g.urls) == ["http://a.test/", "http://a.test/b"]
    assert g.m == 1 and g.duplicates_collapsed == 1  # the link to the copy: a self-loop


async def test_revisit_finds_a_page_that_became_a_copy(mini_web: MiniWeb,
                                                       tmp_path: Path) -> None:
    web = mini_web
    body_x, body_y = "<html><body>x</body></html>", "<html><body>y</body></html>"
    web.add("a.test", "/", html("/x", "/y", "/z"))
    web.add("a.test", "/x", body_x)
    web.add("a.test", "/y", body_y)
    web.add("a.test", "/z", body_x)
    db = tmp_path / "c.db"
    settings = web.settings(scope_hosts=("*.test",))
    await Crawler(db, [web.url("a.test")], settings).run()

    def duplicates() -> dict[str, str]:
        with sqlite3.connect(db) as conn:
            return dict(conn.execute("SELECT u.url, o.url FROM urls u JOIN urls o"
                                     " ON o.id = u.duplicate_of").fetchall())

    url = web.url
    assert duplicates() == {url("a.test", "/z"): url("a.test", "/x")}
    # /y becomes a copy of x's old body; /x itself changes: /z, holding that body since
    # the crawl, becomes its first page, whichever page the revisit sees first.
    web.add("a.test", "/y", body_x)
    web.add("a.test", "/x", "<html><body>x, edited</body></html>")
    revisit = RevisitSettings(policy="uniform", budget=200.0, max_visits=16, day_seconds=1.0)
    await RevisitCrawler(db, revisit, settings).run()
    with sqlite3.connect(db) as conn:
        revisited = {u for (u,) in conn.execute(
            "SELECT DISTINCT u.url FROM fetches f JOIN urls u ON u.id = f.url_id"
            " WHERE f.kind = 'revisit' AND f.status = 200")}
    assert {url("a.test", "/x"), url("a.test", "/y")} <= revisited
    assert duplicates() == {url("a.test", "/y"): url("a.test", "/z")}
