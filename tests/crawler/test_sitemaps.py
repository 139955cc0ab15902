"""Sitemaps (sitemaps.org 0.9): parsing and limits, and ``--sitemaps`` end to end."""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import pytest
from miniweb import MiniWeb, Page, html, read_db
from webcrawl.crawler.engine import Crawler
from webcrawl.crawler.sitemaps import parse_sitemap, w3c_datetime
from webcrawl.storage.export import export_edges
from webcrawl.storage.reader import CrawlReader

NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'


def urlset(*locs: str) -> bytes:
    body = "".join(f"<url><loc>{loc}</loc><lastmod>2024-01-01</lastmod></url>" for loc in locs)
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset {NS}>{body}</urlset>'.encode()


def index(*locs: str) -> bytes:
    body = "".join(f"<sitemap><loc>{loc}</loc></sitemap>" for loc in locs)
    return f'<?xml version="1.0"?><sitemapindex {NS}>{body}</sitemapindex>'.encode()


# -- parsing ------------------------------------------------------------------------

def test_urlset_entities_cdata_and_whitespace() -> None:
    body = (f'<urlset {NS}><url><loc> http://a.test/x?a=1&amp;b=&lt;2&gt; </loc></url>'
            '<url><loc><![CDATA[http://a.test/y?c=1&d=2]]></loc></url></urlset>').encode()
    sm = parse_sitemap(body)
    assert not sm.is_index
    assert sm.locs == ["http://a.test/x?a=1&b=<2>", "http://a.test/y?c=1&d=2"]


def test_each_entry_keeps_its_own_lastmod_and_changefreq() -> None:
    # sitemaps.org 0.9: an entry's children come in the order loc, lastmod, changefreq,
    # priority; either may be missing, and must not be borrowed from the next entry.
    body = (f'<urlset {NS}><url><loc>http://a.test/a</loc><lastmod>2005-01-01</lastmod>'
            '<changefreq>monthly</changefreq><priority>0.8</priority></url>'
            '<url><loc>http://a.test/b</loc><changefreq>weekly</changefreq></url>'
            '<url><loc>http://a.test/c</loc>'
            '<lastmod>2004-12-23T18:00:15+00:00</lastmod></url>'
            '<url><loc>http://a.test/d</loc></url></urlset>').encode()
    sm = parse_sitemap(body)
    assert sm.lastmods == ["2005-01-01", None, "2004-12-23T18:00:15+00:00", None]
    assert sm.changefreqs == ["monthly", "weekly", None, None]
    assert parse_sitemap(b"http://a.test/a\nhttp://a.test/b\n").lastmods == [None, None]


def test_w3c_datetime_forms_and_resolution() -> None:
    # The W3C Datetime profile's examples (https://www.w3.org/TR/NOTE-datetime).
    assert w3c_datetime("1997") == (852076800.0, 366 * 86400.0)
    assert w3c_datetime("1997-07") == (867715200.0, 31 * 86400.0)
    assert w3c_datetime("1997-07-16") == (869011200.0, 86400.0)
    assert w3c_datetime("1997-07-16T19:20+01:00") == (869077200.0, 1.0)
    assert w3c_datetime("1997-07-16T19:20:30.45+01:00") == (869077230.45, 1.0)
    assert w3c_datetime("1997-07-16T18:20:30Z") == (869077230.0, 1.0)
    assert w3c_datetime("yesterday") is None


def test_index_gzip_and_text() -> None:
    assert parse_sitemap(gzip.compress(index("http://a.test/s1.xml"))).is_index
    assert parse_sitemap(gzip.compress(index("http://a.test/s1.xml"))).locs == \
        ["http://a.test/s1.xml"]
    assert parse_sitemap(b"http://a.test/1\n\n  http://a.test/2 \r\n").locs == \
        ["http://a.test/1", "http://a.test/2"]


def test_limits() -> None:
    many = urlset(*(f"http://a.test/{i}" for i in range(60)))
    sm = parse_sitemap(many, max_urls=50)
    assert len(sm.locs) == 50 and sm.dropped == 10
    big = gzip.compress(many)
    cut = parse_sitemap(big, max_bytes=200)
    assert cut.truncated and len(cut.locs) < 60


def test_entity_expansion_is_never_performed() -> None:
    laughs = (b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
              + b"".join(b'<!ENTITY lol%d "%s">' % (i, b"&lol%d;" % (i - 1) * 10)
                         for i in range(1, 10))
              + b']><urlset><url><loc>http://a.test/&lol9;</loc></url></urlset>')
    assert parse_sitemap(laughs).locs == ["http://a.test/&lol9;"]


def test_garbage_never_raises() -> None:
    for body in (b"", b"\x1f\x8bnot gzip", b"<urlset><loc>", b"\xff\xfe\x00<"):
        parse_sitemap(body)


# -- end to end ------------------------------------------------------------------------

def site(w: MiniWeb, robots: str) -> None:
    port = w.port
    w.add("a.test", "/robots.txt", Page(body=robots, content_type="text/plain"))
    w.add("a.test", "/", html("/linked"))
    w.add("a.test", "/linked", html())
    w.add("a.test", "/sitemap_index.xml.gz", Page(
        body=gzip.compress(index(f"http://a.test:{port}/sm1.xml",
                                 f"http://a.test:{port}/sm2.txt",
                                 f"http://b.test:{port}/foreign.xml")),
        content_type="application/gzip"))
    w.add("a.test", "/sm1.xml", Page(body=urlset(
        f"http://a.test:{port}/only-in-sitemap", f"http://a.test:{port}/private/x",
        f"http://a.test:{port}/linked", f"http://b.test:{port}/other-host",
        f"http://a.test:{port}/report.pdf"), content_type="application/xml"))
    w.add("a.test", "/sm2.txt", Page(body=f"http://a.test:{port}/from-text\n",
                                     content_type="text/plain"))
    for p in ("/only-in-sitemap", "/private/x", "/from-text"):
        w.add("a.test", p, html())


def edges(db: Path) -> set[tuple[str, str]]:
    out = io.StringIO()
    export_edges(db, out)
    return {(a, b) for a, b, _ in (r.split("\t") for r in out.getvalue().splitlines()[1:])}


async def test_sitemaps_from_robots_txt(mini_web: MiniWeb, tmp_path: Path) -> None:
    w, port = mini_web, mini_web.port
    site(w, f"User-agent: *\nDisallow: /private/\n"
            f"Sitemap: http://a.test:{port}/sitemap_index.xml.gz\n")
    db = tmp_path / "c.db"
    stats = await Crawler(db, [w.url("a.test")], w.settings(sitemaps_follow=True)).run()
    requested = [h.path for h in w.hits if h.host == "a.test"]
    assert requested[0] == "/robots.txt"
    assert requested[1:4] == ["/sitemap_index.xml.gz", "/sm1.xml", "/sm2.txt"]
    assert set(requested[4:]) == {"/", "/linked", "/only-in-sitemap", "/from-text"}
    assert not any(h.host == "b.test" for h in w.hits)   # never another host's sitemap
    assert stats.sitemap_fetches == 3
    with CrawlReader(db) as reader:
        sources = {reader.url_strings([i])[0]: (src, via)
                   for i, src, via in reader.url_sources()}
    sm1 = f"http://a.test:{port}/sm1.xml"
    # The sitemap is read before the seed page, so it also finds /linked first.
    assert sources == {
        w.url("a.test", "/only-in-sitemap"): ("sitemap", sm1),
        w.url("a.test", "/linked"): ("sitemap", sm1),
        w.url("a.test", "/private/x"): ("sitemap", sm1),
        w.url("a.test", "/report.pdf"): ("sitemap", sm1),
        w.url("a.test", "/from-text"): ("sitemap", f"http://a.test:{port}/sm2.txt"),
    }
    outcomes = read_db(db)["outcomes"]
    assert outcomes[w.url("a.test", "/private/x")] == "robots_excluded"
    assert outcomes[w.url("a.test", "/report.pdf")] == "out_of_scope"
    assert outcomes[w.url("a.test", "/only-in-sitemap")] == "fetched"
    assert f"http://b.test:{port}/other-host" not in outcomes  # another host's URL: dropped
    # Sitemap URLs add no links to the graph: the edges are the pages' links.
    assert edges(db) == {(w.url("a.test"), w.url("a.test", "/linked"))}


async def test_default_sitemap_xml_and_off_by_default(mini_web: MiniWeb,
                                                      tmp_path: Path) -> None:
    w, port = mini_web, mini_web.port
    w.add("a.test", "/", html())
    w.add("a.test", "/sitemap.xml", Page(body=urlset(f"http://a.test:{port}/listed"),
                                         content_type="text/xml"))
    w.add("a.test", "/listed", html())
    await Crawler(tmp_path / "off.db", [w.url("a.test")], w.settings()).run()
    assert {h.path for h in w.hits} == {"/robots.txt", "/"}
    w.hits.clear()
    await Crawler(tmp_path / "on.db", [w.url("a.test")],
                  w.settings(sitemaps_follow=True)).run()
    assert [h.path for h in w.hits][:2] == ["/robots.txt", "/sitemap.xml"]
    assert {h.path for h in w.hits} == {"/robots.txt", "/sitemap.xml", "/", "/listed"}


@pytest.mark.parametrize("robots", ["User-agent: *\nDisallow: /sitemap\n"])
async def test_disallowed_sitemap_not_fetched(mini_web: MiniWeb, tmp_path: Path,
                                              robots: str) -> None:
    w = mini_web
    w.add("a.test", "/robots.txt", Page(body=robots, content_type="text/plain"))
    w.add("a.test", "/", html())
    w.add("a.test", "/sitemap.xml", Page(body=urlset(w.url("a.test", "/x"))))
    await Crawler(tmp_path / "c.db", [w.url("a.test")], w.settings(sitemaps_follow=True)).run()
    assert "/sitemap.xml" not in {h.path for h in w.hits}


async def test_cli_sitemaps_option(mini_web: MiniWeb, tmp_path: Path) -> None:
    import asyncio

    from webcrawl.crawler.cli import main

    w = mini_web
    w.add("a.test", "/", html())
    w.add("a.test", "/sitemap.xml", Page(body=urlset(w.url("a.test", "/listed"))))
    w.add("a.test", "/listed", html())
    argv = ["crawl", w.url("a.test"), "--db", str(tmp_path / "c.db"), "--quiet", "--sitemaps",
            "--resolve", "*.test=127.0.0.1", "--min-delay", "0", "--delay-factor", "0"]
    assert await asyncio.to_thread(main, argv) == 0
    assert {h.path for h in w.hits} == {"/robots.txt", "/sitemap.xml", "/", "/listed"}
