"""URL traps end by default, each bound counted in the summary (issue 19)."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web as aioweb
from miniweb import html
from webcrawl.crawler.engine import Crawler
from webcrawl.crawler.progress import format_summary
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.crawler.traps import TRAP_RULES, TrapGuard, path_pattern

pytestmark = pytest.mark.timeout(120)


# -- the rules alone -----------------------------------------------------------------
def test_defaults_are_on() -> None:
    s = CrawlSettings()
    assert s.scope_max_url_length == 2048 and s.scope_max_path_repeat == 3
    assert s.scope_max_query_params == 32
    assert s.scope_max_query_variants == 1000
    assert s.scope_max_pattern_urls == 10_000


@pytest.mark.parametrize("at_once", [False, True], ids=["check-count", "check-counting"])
def test_each_rule_fires_at_its_bound(at_once: bool) -> None:
    """Each rule at its bound; the URLs let in counted by ``count`` after ``check`` or
    by ``check(count=True)`` (the scope's one pass)."""
    g = TrapGuard(CrawlSettings(scope_max_url_length=60, scope_max_path_repeat=2,
                                scope_max_query_params=3, scope_max_query_variants=4,
                                scope_max_pattern_urls=5))
    h = "a.test"
    assert g.check("http://a.test/" + "x" * 46, h) is None          # 60 chars
    assert g.check("http://a.test/" + "x" * 47, h) == "url_length"
    assert g.check("http://a.test/a/b/a/b/c", h) is None
    assert g.check("http://a.test/a/b/a/b/a", h) == "path_repeat"
    assert g.check("http://a.test/q?a=1&b=2&c=3", h) is None
    assert g.check("http://a.test/q?a=1&b=2&c=3&d=4", h) == "query_params"
    for i in range(4):
        url = f"http://a.test/s?sid=x{i}y"
        assert g.check(url, h, count=at_once) is None
        if not at_once:
            g.count(url, h)
    assert g.check("http://a.test/s?sid=x9y", h) == "query_variants"
    assert g.check("http://b.test/s?sid=x9y", "b.test") is None  # per host
    for month in range(1, 6):
        url = f"http://a.test/calendar/2024/{month}"
        assert g.check(url, h, count=at_once) is None
        if not at_once:
            g.count(url, h)
    assert g.check("http://a.test/calendar/2025/1", h) == "path_pattern"
    assert g.check("http://a.test/calendar/", h) is None  # another shape
    assert dict(g.fired) == {rule: 1 for rule in TRAP_RULES} | {"query_variants": 1}


def test_none_turns_the_counting_rules_off() -> None:
    g = TrapGuard(CrawlSettings(scope_max_query_params=None, scope_max_query_variants=None,
                                scope_max_pattern_urls=None))
    for i in range(3000):
        url = f"http://a.test/cal/{i}?sid={i}&" + "&".join(f"p{k}=1" for k in range(40))
        assert g.check(url[:2000], "a.test") is None
        g.count(url[:2000], "a.test")
    assert not g.fired


def test_path_pattern_shapes() -> None:
    assert path_pattern("/a3/p12.html", None) == "/a#/p#.html"
    assert path_pattern("/view", "lang=en&id=3") == "/view?id&lang"
    assert path_pattern("/view", "") == "/view?"


# -- live: a site full of traps ends -----------------------------------------------------
class TrapSite:
    """Calendar, session-id, relative-path, long-URL and parameter traps on one host."""

    def __init__(self) -> None:
        self.port = 0
        self._runner: aioweb.AppRunner | None = None

    async def _handle(self, request: aioweb.Request) -> aioweb.Response:
        p = request.path
        if p == "/":
            links = ["/calendar/2024/1", "/session?sid=1", "/deep/a/",
                     "/long?x=" + "y" * 3000, "/params?" + "&".join(f"k{i}=1" for i in range(40))]
        elif p.startswith("/calendar/"):
            year, month = (int(x) for x in p.split("/")[2:4])
            nxt = (year + month // 12, month % 12 + 1)
            prv = (year - (month == 1), 12 if month == 1 else month - 1)
            links = [f"/calendar/{nxt[0]}/{nxt[1]}", f"/calendar/{prv[0]}/{prv[1]}"]
        elif p == "/session":
            sid = int(request.query.get("sid", "1"))
            links = [f"/session?sid={sid * 2}", f"/session?sid={sid * 2 + 1}"]
        elif p.startswith("/deep/"):
            links = ["a/", "b/"]
        else:
            return aioweb.Response(status=404)
        # Each page names its address, so no two bodies are equal: the content-seen test
        # (a repeated body's links are not read) would end the /deep/ trap before its rule.
        return aioweb.Response(text=html(*links, extra=f"<title>{request.path_qs}</title>"),
                               content_type="text/html")

    async def start(self) -> None:
        app = aioweb.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = aioweb.AppRunner(app, handle_signals=False, access_log=None)
        await self._runner.setup()
        site = aioweb.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    async def stop(self) -> None:
        assert self._runner is not None
        await self._runner.cleanup()


@pytest.fixture
async def trap_site() -> AsyncIterator[TrapSite]:
    site = TrapSite()
    await site.start()
    try:
        yield site
    finally:
        await site.stop()


async def test_trap_site_crawl_ends_with_every_bound_counted(trap_site: TrapSite,
                                                             tmp_path: Path) -> None:
    # the counting bounds scaled down so the test is quick; the rules are the defaults'
    settings = CrawlSettings.polite_off(resolve=("*.test=127.0.0.1",),
                                        scope_max_query_variants=30,
                                        scope_max_pattern_urls=40)
    db = tmp_path / "c.db"
    crawler = Crawler(db, [f"http://t.test:{trap_site.port}/"], settings)
    stats = await crawler.run()
    assert stats.stopped == "done"  # the frontier ran dry: every trap ended
    assert {r for r, n in stats.traps.items() if n} == set(TRAP_RULES)
    with sqlite3.connect(db) as conn:
        urls = [u for (u,) in conn.execute("SELECT url FROM urls WHERE outcome = 'fetched'")]
    assert sum("/calendar/" in u for u in urls) == 40
    assert sum("/session?" in u for u in urls) == 30
    assert max(u.count("/a/") + u.count("/b/") for u in urls if "/deep/" in u) <= 6
    summary = format_summary(stats)
    for rule in TRAP_RULES:
        assert f"{rule} {stats.traps[rule]}" in summary
    assert stats.as_dict()["traps"] == dict(sorted(stats.traps.items()))
