"""``crawl --sitemaps --warc DIR``: every request of a crawl -- robots.txt, sitemaps,
pages -- goes through its one downloader, so the crawl writes one WARC set that
``warcio check`` accepts and that holds each exchange the server answered exactly once:
in one process, with worker processes, and over a resume."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from miniweb import MiniWeb, Page, html, read_db
from test_warc_output import warcio_check
from warcdata import fixture_web
from warcio.archiveiterator import ArchiveIterator
from webcrawl.crawler.cli import main
from webcrawl.crawler.engine import Crawler
from webcrawl.fixtures import serve_in_thread

NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'


def _site(web: MiniWeb) -> list[str]:
    """Two hosts: a.test names a sitemap index in robots.txt; b.test has a gzipped
    /sitemap.xml.  Some pages are reachable only through the sitemaps."""
    a, b = (lambda path: web.url("a.test", path)), (lambda path: web.url("b.test", path))
    web.add("a.test", "/robots.txt", Page(f"User-agent: *\nSitemap: {a('/index.xml')}\n",
                                          content_type="text/plain"))
    web.add("a.test", "/index.xml", Page(
        f'<sitemapindex {NS}><sitemap><loc>{a("/s1.xml")}</loc></sitemap></sitemapindex>',
        content_type="application/xml"))
    web.add("a.test", "/s1.xml", Page(
        f'<urlset {NS}>' + "".join(f"<url><loc>{a(f'/only{i}')}</loc></url>" for i in range(4))
        + "</urlset>", content_type="application/xml"))
    web.add("a.test", "/", html("/p1", b("/")))
    for path in ("/p1", *(f"/only{i}" for i in range(4))):
        web.add("a.test", path, html("/"))
    web.add("b.test", "/sitemap.xml", Page(gzip.compress(
        f'<urlset {NS}><url><loc>{b("/hidden")}</loc></url></urlset>'.encode()),
        content_type="application/gzip"))
    web.add("b.test", "/", html("/q"))
    web.add("b.test", "/q", html())
    web.add("b.test", "/hidden", html())
    return [a("/")]


def _exchanges(folder: Path) -> Counter[tuple[str, str]]:
    """(host, path) of every response record of every WARC file in ``folder``, after
    checking each file with ``warcio check``."""
    seen: Counter[tuple[str, str]] = Counter()
    for path in sorted(folder.iterdir()):
        warcio_check(path)
        with open(path, "rb") as f:
            for record in ArchiveIterator(f):
                if record.rec_type == "response":
                    parts = urlsplit(record.rec_headers.get_header("WARC-Target-URI"))
                    seen[(parts.hostname or "", parts.path)] += 1
    return seen


def _answered(web: MiniWeb) -> Counter[tuple[str, str]]:
    return Counter((h.host, h.path) for h in web.hits)


@pytest.mark.parametrize("workers", [1, 2], ids=["one-process", "two-workers"])
@pytest.mark.parametrize("resumed", [False, True], ids=["whole", "resumed"])
async def test_sitemaps_and_pages_land_in_one_warc_set(mini_web: MiniWeb, tmp_path: Path,
                                                       workers: int, resumed: bool) -> None:
    seeds = _site(mini_web)
    db, folder = tmp_path / "crawl.db", tmp_path / "warc"
    settings = mini_web.settings(scope_hosts=("*.test",), sitemaps_follow=True,
                                 warc_dir=str(folder), workers=workers,
                                 scope_max_pages=3 if resumed else None)
    stats = await Crawler(db, seeds, settings).run()
    if resumed:
        assert stats.stopped == "max_pages"
        # At once: the resumed run's files start in the same second as the first's.
        stats = await Crawler(db, resume=True, overrides={"scope_max_pages": None}).run()
    assert stats.stopped == "done"
    outcomes = read_db(db)["outcomes"]
    assert outcomes[mini_web.url("a.test", "/only3")] == "fetched"
    assert outcomes[mini_web.url("b.test", "/hidden")] == "fetched"
    names = [p.name for p in folder.iterdir()]
    assert len(names) == len(set(names)) >= workers
    # Each exchange the server answered is in the set exactly once: the sitemap files
    # (index, sitemap, gzipped sitemap), robots.txt and every page.
    answered = _answered(mini_web)
    assert _exchanges(folder) == answered
    assert {("a.test", "/index.xml"), ("a.test", "/s1.xml"), ("b.test", "/sitemap.xml")} \
        <= set(answered)
    if not resumed:  # a resume counts its own run only
        assert stats.sitemap_fetches == 3


def test_cli_crawl_sitemaps_and_warc_on_the_fixture_web(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The command that exited 1 with 'File exists' (two WARC writers, one per fetcher)."""
    folder = tmp_path / "warc"
    with serve_in_thread(fixture_web(pages=40, hosts=2)) as server:
        code = main(["crawl", server.seed_url, "--db", str(tmp_path / "c.db"), "--sitemaps",
                     "--warc", str(folder), "--resolve", "*.test=127.0.0.1",
                     "--allow-host", "*.test", "--min-delay", "0", "--delay-factor", "0",
                     "--json"])
    assert code == 0
    stats = json.loads(capsys.readouterr().out)
    seen = _exchanges(folder)
    assert stats["sitemap_fetches"] == 2  # /sitemap.xml of each host (404 here)
    assert ("site0.test", "/sitemap.xml") in seen and ("site1.test", "/sitemap.xml") in seen
    # Every request was answered: each is one response record of the set.
    assert sum(seen.values()) == stats["requests"]
