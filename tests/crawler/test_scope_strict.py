"""Strict scope: nothing outside the configured scope is ever requested.

An in-scope site (``site.test`` on server A) links out of scope in every way we know:
absolute and protocol-relative links, a sibling port, user-info and backslash tricks,
frames, a redirect (and a redirect chain) leaving the scope, a ``<base href>`` pointing
out, a robots.txt with an out-of-scope ``Sitemap:`` line, a robots.txt that redirects
out, odd schemes.  Server B poses as every out-of-scope host (the ``--resolve`` rule
``*`` sends every name to loopback, and B also listens where the sibling port points):
it must receive zero requests.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from miniweb import MiniWeb, Page, html, read_db
from webcrawl.crawler.engine import Crawler
from webcrawl.crawler.urls import host_key

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
async def outside() -> object:
    web_ = MiniWeb()
    await web_.start()
    try:
        yield web_
    finally:
        await web_.stop()


def build_site(inside: MiniWeb, outside: MiniWeb, robots_redirect: bool = False) -> None:
    b = outside.port
    evil = f"http://evil.test:{b}"
    # Server B answers anything (so a leak would be visible, not a 404 that looks safe).
    for host in ("evil.test", "site.test", "other.test", "127.0.0.1"):
        for path in ("/", "/x", "/r", "/sitemap.xml", "/robots.txt", "/dir/a.html", "/f"):
            outside.add(host, path, html("/"))
    robots = (Page(status=301, headers={"Location": f"{evil}/robots.txt"}, body=b"")
              if robots_redirect else
              Page(body=f"User-agent: *\nDisallow: /private/\nSitemap: {evil}/sitemap.xml\n",
                   content_type="text/plain"))
    inside.add("site.test", "/robots.txt", robots)
    inside.add("site.test", "/", html(
        f"{evil}/x", f"//evil.test:{b}/x", f"http://site.test:{b}/x",
        f"http://site.test:{inside.port}@evil.test:{b}/x",
        f"http://evil.test:{b}\\@site.test:{inside.port}/x",
        f"http:/\\evil.test:{b}/x", f"http:\\\\evil.test:{b}/x", f"HTTP://EVIL.TEST:{b}/x",
        "file:///etc/passwd", "data:text/html,<a href=http://evil.test/>x</a>",
        "javascript:location='http://evil.test/'", f"ftp://evil.test:{b}/x",
        f"ws://evil.test:{b}/x", "/go", "/chain", "/based", "/frames",
        extra=f'<link rel="sitemap" href="{evil}/sitemap.xml">'
              f'<meta http-equiv="refresh" content="0; url={evil}/r">'))
    inside.add("site.test", "/go", Page(status=302, headers={"Location": f"{evil}/r"}))
    inside.add("site.test", "/chain", Page(status=301, headers={"Location": "/chain2"}))
    inside.add("site.test", "/chain2", Page(status=302,
                                            headers={"Location": f"//evil.test:{b}/r"}))
    inside.add("site.test", "/based", html(
        "dir/a.html", "f", extra=f'<base href="{evil}/">'))
    inside.add("site.test", "/frames", f'<frameset><frame src="{evil}/f">'
                                       f'<iframe src="//other.test:{b}/f"></iframe></frameset>')


def check_no_escape(inside: MiniWeb, outside: MiniWeb, db: Path) -> None:
    assert outside.hits == []
    assert {h.host for h in inside.hits} == {"site.test"}
    data = read_db(db)
    fetched = {u for u, *_ in data["fetches"]}
    assert fetched and all(u.startswith(f"http://site.test:{inside.port}/") for u in fetched)
    assert all(u.startswith(("http://", "https://")) for u in data["urls"].values())
    # Escapes are recorded as out-of-scope URLs (edges kept), never fetched.
    leaked = [u for u in data["urls"].values() if host_key(u) != f"site.test:{inside.port}"]
    assert leaked and all(data["outcomes"][u] == "out_of_scope" for u in leaked)
    for path in ("/", "/based", "/frames"):
        assert (f"http://site.test:{inside.port}{path}",) in {(u,) for u in fetched}


@pytest.mark.parametrize("resolve", [("*.test=127.0.0.1",), ("*=127.0.0.1",)],
                         ids=["test-glob", "star"])
async def test_nothing_outside_scope_is_fetched(mini_web: MiniWeb, outside: MiniWeb,
                                                tmp_path: Path, resolve: tuple[str]) -> None:
    build_site(mini_web, outside)
    db = tmp_path / "c.db"
    settings = mini_web.settings(resolve=resolve)
    stats = await Crawler(db, [mini_web.url("site.test", "/")], settings).run()
    assert stats.stopped == "done"
    check_no_escape(mini_web, outside, db)
    outcomes = read_db(db)["outcomes"]
    assert outcomes[mini_web.url("site.test", "/go")] == "redirect"
    assert outcomes[f"http://evil.test:{outside.port}/r"] == "out_of_scope"


async def test_robots_redirect_out_of_scope_is_not_followed(mini_web: MiniWeb,
                                                            outside: MiniWeb,
                                                            tmp_path: Path) -> None:
    build_site(mini_web, outside, robots_redirect=True)
    db = tmp_path / "c.db"
    settings = mini_web.settings(robots_max_attempts=1)
    await Crawler(db, [mini_web.url("site.test", "/")], settings).run()
    assert outside.hits == []
    # Without a robots.txt it may read, the crawler stays off the host.
    assert [h.path for h in mini_web.hits] == ["/robots.txt"]


async def test_cli_resolve_star_does_not_widen_scope(mini_web: MiniWeb, outside: MiniWeb,
                                                     tmp_path: Path) -> None:
    build_site(mini_web, outside)
    db = tmp_path / "c.db"
    cmd = [sys.executable, "-m", "webcrawl.crawler.cli", "crawl", mini_web.url("site.test", "/"),
           "--db", str(db), "--resolve", "*=127.0.0.1", "--delay-factor", "0",
           "--min-delay", "0", "--max-delay", "0", "--timeout", "5", "--quiet"]
    import asyncio

    proc = await asyncio.create_subprocess_exec(*cmd, stderr=subprocess.PIPE)
    _, err = await asyncio.wait_for(proc.communicate(), 50)
    assert proc.returncode == 0, err.decode()
    check_no_escape(mini_web, outside, db)
