"""The crawl engine against a tiny multi-host server: outcomes, links, failure modes."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from miniweb import MiniWeb, Page, html, read_db
from webcrawl.crawler.engine import Crawler


async def crawl(web: MiniWeb, tmp_path: Path, seeds: list[str], **settings: object) -> dict:
    db = tmp_path / "crawl.db"
    crawler = Crawler(db, seeds, web.settings(**settings))
    stats = await crawler.run()
    data = read_db(db)
    data["stats"] = stats
    return data


async def test_small_site_edges_and_outcomes(mini_web: MiniWeb, tmp_path: Path) -> None:
    w = mini_web
    w.add("a.test", "/", html("/p1", "/p2", "mailto:x@y.z", "javascript:void(0)", "#top"))
    w.add("a.test", "/p1", html("/p2", "/", "/img.png", "/doc"))
    w.add("a.test", "/doc", Page(body=b"%PDF-1.4", content_type="application/pdf"))
    w.add("a.test", "/p2", html("http://b.test/", "/missing"))
    w.add("a.test", "/img.png", Page(body=b"\x89PNG....", content_type="image/png"))
    w.add("b.test", "/", html("/"))
    data = await crawl(w, tmp_path, [w.url("a.test")])
    u = w.url
    assert data["edges"] == {
        (u("a.test"), u("a.test", "/p1")), (u("a.test"), u("a.test", "/p2")),
        (u("a.test"), u("a.test")),  # '#top': a fragment link is a self-link
        (u("a.test", "/p1"), u("a.test", "/p2")), (u("a.test", "/p1"), u("a.test")),
        (u("a.test", "/p1"), u("a.test", "/img.png")), (u("a.test", "/p1"), u("a.test", "/doc")),
        (u("a.test", "/p2"), "http://b.test/"), (u("a.test", "/p2"), u("a.test", "/missing")),
    }
    assert data["outcomes"] == {
        u("a.test"): "fetched", u("a.test", "/p1"): "fetched", u("a.test", "/p2"): "fetched",
        u("a.test", "/img.png"): "out_of_scope",  # binary extension: never fetched
        u("a.test", "/missing"): "http_error", u("a.test", "/doc"): "not_html",
        "http://b.test/": "out_of_scope",
    }
    # No page fetched twice; robots.txt first.
    paths = [h.path for h in w.hits]
    assert paths[0] == "/robots.txt"
    assert len(paths) == len(set(paths))


async def test_retries_then_http_error(mini_web: MiniWeb, tmp_path: Path) -> None:
    w = mini_web
    w.add("a.test", "/", html("/flaky", "/broken"))
    w.add("a.test", "/flaky", Page(body=html(), fail_first=2, fail_status=503))
    w.add("a.test", "/broken", Page(body=html(), fail_first=99, fail_status=500))
    data = await crawl(w, tmp_path, [w.url("a.test")], retry_attempts=3)
    assert data["outcomes"][w.url("a.test", "/flaky")] == "fetched"
    assert data["outcomes"][w.url("a.test", "/broken")] == "http_error"
    rows = {(url, attempt): (outcome, status) for url, _, outcome, status, attempt, *_ in
            data["fetches"]}
    flaky, broken = w.url("a.test", "/flaky"), w.url("a.test", "/broken")
    assert rows[(flaky, 1)] == ("http_error", 503)
    assert rows[(flaky, 3)] == ("fetched", 200)
    assert [rows[(broken, k)] for k in (1, 2, 3)] == [("http_error", 500)] * 3
    assert (broken, 4) not in rows
    assert len(w.page_hits()) == 1 + 3 + 3


async def test_retry_after_is_honoured(mini_web: MiniWeb, tmp_path: Path) -> None:
    w = mini_web
    w.add("a.test", "/", html("/limited"))
    w.add("a.test", "/limited", Page(body=html(), fail_first=1, fail_status=429,
                                     headers={"Retry-After": "1"}))
    data = await crawl(w, tmp_path, [w.url("a.test")])
    assert data["outcomes"][w.url("a.test", "/limited")] == "fetched"
    hits = [h for h in w.hits if h.path == "/limited"]
    assert [h.status for h in hits] == [429, 200]
    assert hits[1].start - hits[0].end >= 0.95


async def test_timeout_reset_and_too_large(mini_web: MiniWeb, tmp_path: Path) -> None:
    w = mini_web
    w.add("a.test", "/", html("/slow", "/reset", "/big", "/bigchunked"))
    w.add("a.test", "/slow", Page(body=html(), delay=1.5))
    w.add("a.test", "/reset", Page(reset=True))
    w.add("a.test", "/big", Page(body=html("/never") + " " * 5000))
    w.add("a.test", "/bigchunked", Page(body=html("/never") + " " * 50000, chunked=True))
    data = await crawl(w, tmp_path, [w.url("a.test")], retry_attempts=2,
                       fetch_read_timeout=0.3, fetch_max_body=4096)
    o = data["outcomes"]
    assert o[w.url("a.test", "/slow")] == "timeout"
    assert o[w.url("a.test", "/reset")] == "network_error"
    assert o[w.url("a.test", "/big")] == "too_large"
    assert o[w.url("a.test", "/bigchunked")] == "too_large"
    assert w.url("a.test", "/never") not in o  # too-large pages are not parsed
    attempts = [(url, a) for url, _, _, _, a, *_ in data["fetches"]]
    assert (w.url("a.test", "/slow"), 2) in attempts
    assert (w.url("a.test", "/reset"), 2) in attempts


@pytest.mark.parametrize(("ctype", "body", "expected"), [
    ("application/octet-stream", "<!DOCTYPE html><html><a href='/x'>x</a></html>", "fetched"),
    (None, "<html><body><a href='/x'>x</a></body></html>", "fetched"),
    ("application/pdf", "%PDF-1.4 <a href='/x'>", "not_html"),
    ("text/plain", "<html><a href='/x'>x</a></html>", "not_html"),
], ids=["octet-sniffed", "missing-sniffed", "pdf", "text-plain"])
async def test_html_detection(mini_web: MiniWeb, tmp_path: Path, ctype: str | None,
                              body: str, expected: str) -> None:
    w = mini_web
    w.add("a.test", "/", Page(body=body, content_type=ctype))
    w.add("a.test", "/x", html())
    data = await crawl(w, tmp_path, [w.url("a.test")])
    assert data["outcomes"][w.url("a.test")] == expected
    assert (w.url("a.test", "/x") in data["outcomes"]) == (expected == "fetched")


@pytest.mark.parametrize(("ctype", "encoding"), [
    ("text/html", "windows-1252"),               # no charset anywhere: UTF-8 with replacement
    ("text/html; charset=utf-8", "windows-1252"),  # wrong charset
    ("text/html; charset=bogus-42", "utf-8"),     # unknown charset
    ("text/html; charset=windows-1252", "windows-1252"),
], ids=["nocharset", "badcharset", "unknown", "declared"])
async def test_charsets_never_lose_links(mini_web: MiniWeb, tmp_path: Path, ctype: str,
                                         encoding: str) -> None:
    w = mini_web
    body = html("/caf%C3%A9", "/next", extra="<title>Café déjà vu</title>").encode(encoding)
    w.add("a.test", "/", Page(body=body, content_type=ctype))
    w.add("a.test", "/next", html())
    data = await crawl(w, tmp_path, [w.url("a.test")])
    assert data["outcomes"][w.url("a.test")] == "fetched"
    assert (w.url("a.test"), w.url("a.test", "/next")) in data["edges"]
    assert (w.url("a.test"), w.url("a.test", "/caf%C3%A9")) in data["edges"]


async def test_redirect_chain_loop_and_scope(mini_web: MiniWeb, tmp_path: Path) -> None:
    w = mini_web
    w.add("a.test", "/", html("/r1", "/loop1", "/away", "/far0"))
    w.add("a.test", "/r1", Page(status=301, headers={"Location": "/r2"}))
    w.add("a.test", "/r2", Page(status=302, headers={"Location": w.url("a.test", "/final")}))
    w.add("a.test", "/final", html())
    w.add("a.test", "/loop1", Page(status=302, headers={"Location": "/loop2"}))
    w.add("a.test", "/loop2", Page(status=302, headers={"Location": "/loop1"}))
    w.add("a.test", "/away", Page(status=302, headers={"Location": "http://elsewhere.test/"}))
    for i in range(4):
        w.add("a.test", f"/far{i}", Page(status=302, headers={"Location": f"/far{i + 1}"}))
    data = await crawl(w, tmp_path, [w.url("a.test")], fetch_max_redirects=2)
    o, u = data["outcomes"], w.url
    assert o[u("a.test", "/r1")] == o[u("a.test", "/r2")] == "redirect"
    assert o[u("a.test", "/final")] == "fetched"
    assert (u("a.test", "/r1"), u("a.test", "/r2")) in data["edges"]
    assert (u("a.test", "/r2"), u("a.test", "/final")) in data["edges"]
    assert o[u("a.test", "/loop1")] == o[u("a.test", "/loop2")] == "redirect"
    assert (u("a.test", "/loop2"), u("a.test", "/loop1")) in data["edges"]
    assert o["http://elsewhere.test/"] == "out_of_scope"
    # far0 -> far1 -> far2 followed (2 hops); far3 is beyond the limit.
    assert [o[u("a.test", f"/far{i}")] for i in range(4)] == \
        ["redirect", "redirect", "redirect", "out_of_scope"]
    paths = [h.path for h in w.page_hits()]
    assert len(paths) == len(set(paths))


@pytest.mark.parametrize(("robots", "expected"), [
    (Page(status=404), "fetched"),
    (Page(status=403), "fetched"),
    # RFC 9309 2.3.1.4: a 5xx or a network error is "unreachable": disallow all, but
    # nothing was excluded by the host's rules.
    (Page(status=500), "robots_unreachable"),
    (Page(reset=True), "robots_unreachable"),
    (Page(body="User-agent: *\nDisallow: /", content_type="text/plain"), "robots_excluded"),
    (Page(body="User-agent: webcrawl\nDisallow: /\n\nUser-agent: *\nAllow: /",
          content_type="text/plain"), "robots_excluded"),
    (Page(body="User-agent: *\nDisallow: /private/", content_type="text/plain"), "fetched"),
], ids=["404", "403", "500", "unreachable", "disallow-all", "disallow-us", "other-path"])
async def test_robots_status(mini_web: MiniWeb, tmp_path: Path, robots: Page,
                             expected: str) -> None:
    w = mini_web
    w.add("a.test", "/robots.txt", robots)
    w.add("a.test", "/", html("/p"))
    w.add("a.test", "/p", html())
    data = await crawl(w, tmp_path, [w.url("a.test")], robots_max_attempts=2,
                       robots_retry_delay=0.1)
    assert data["outcomes"][w.url("a.test")] == expected
    robots_hits = [h for h in w.hits if h.path == "/robots.txt"]
    assert robots_hits and w.hits[0].path == "/robots.txt"
    if expected != "fetched":
        assert w.page_hits() == []
    if robots.status >= 500 or robots.reset:
        # retried once after robots_retry_delay, then gave up: disallow all
        assert data["stats"].robots_fetches == 2


async def test_robots_rules_per_path(mini_web: MiniWeb, tmp_path: Path) -> None:
    w = mini_web
    w.add("a.test", "/robots.txt", Page(
        body="User-agent: *\nDisallow: /private/\nAllow: /private/ok\n", content_type="text/plain"))
    w.add("a.test", "/", html("/private/secret", "/private/ok", "/public"))
    for p in ("/private/secret", "/private/ok", "/public"):
        w.add("a.test", p, html())
    data = await crawl(w, tmp_path, [w.url("a.test")])
    o = data["outcomes"]
    assert o[w.url("a.test", "/private/secret")] == "robots_excluded"
    assert o[w.url("a.test", "/private/ok")] == "fetched"
    assert "/private/secret" not in [h.path for h in w.hits]


async def test_scope_limits(mini_web: MiniWeb, tmp_path: Path) -> None:
    w = mini_web
    w.add("a.test", "/", html("/d1", "/a/a/a/a/x", "/" + "l" * 300, "http://b.test/"))
    w.add("a.test", "/d1", html("/d2"))
    w.add("a.test", "/d2", html())
    w.add("b.test", "/", html())
    data = await crawl(w, tmp_path, [w.url("a.test")], scope_max_depth=1,
                       scope_max_url_length=200, scope_max_path_repeat=3)
    o = data["outcomes"]
    assert o[w.url("a.test", "/d1")] == "fetched"
    assert o[w.url("a.test", "/d2")] == "out_of_scope"        # depth 2
    assert o[w.url("a.test", "/a/a/a/a/x")] == "out_of_scope"  # path repetition
    assert o[w.url("a.test", "/" + "l" * 300)] == "out_of_scope"
    assert o["http://b.test/"] == "out_of_scope"
    # every link is still an edge
    assert (w.url("a.test", "/d1"), w.url("a.test", "/d2")) in data["edges"]


@pytest.fixture
def refused_port() -> Iterator[int]:
    """A loopback port that refuses connections for the whole test: bound (so nothing
    else can listen there) but never listening."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


async def test_allowed_hosts_and_max_pages(mini_web: MiniWeb, tmp_path: Path,
                                           refused_port: int) -> None:
    w = mini_web
    b_root = f"http://b.test:{refused_port}/"
    w.add("a.test", "/", html(*[f"/p{i}" for i in range(10)], b_root))
    for i in range(10):
        w.add("a.test", f"/p{i}", html())
    w.add("b.test", "/", html())
    data = await crawl(w, tmp_path, [w.url("a.test")], scope_hosts=("*.test",),
                       scope_max_pages=5)
    o = data["outcomes"]
    counts = {k: list(o.values()).count(k) for k in set(o.values())}
    assert counts["fetched"] + counts.get("http_error", 0) == 5
    assert counts[None] == 12 - 5  # still queued: nothing is abandoned by a limit
    assert data["stats"].stopped == "max_fetches"
    # Resuming through the library with a higher limit takes the rest, in the crawl's
    # stored scope (b.test stays allowed by the stored '*.test'; its port refuses
    # connections, so its robots.txt stays unreachable and its URL is not requested).
    crawler = Crawler(tmp_path / "crawl.db", resume=True,
                      overrides={"scope_max_pages": 20, "robots_retry_delay": 0.01})
    assert crawler.settings.scope_hosts == ("*.test",)
    assert crawler.settings.resolve == ("*.test=127.0.0.1",)
    assert crawler.notes == ("overriding the crawl's stored settings: "
                             "scope_max_pages 5 -> 20; robots_retry_delay 30.0 -> 0.01",)
    stats = await crawler.run()
    assert stats.stopped == "done"
    o = read_db(tmp_path / "crawl.db")["outcomes"]
    assert o.pop(b_root) == "robots_unreachable"
    assert sorted(o.values()) == ["fetched"] * 11
    assert stats.unreachable == {f"b.test:{refused_port}": "connection refused"}


async def test_processing_failure_is_recorded_not_lost(mini_web: MiniWeb, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import logging

    import webcrawl.crawler.downloader as downloader
    real = downloader.extract_links

    def flaky(body: str, page_url: str, **kw: object) -> object:
        if page_url.endswith("/bad"):
            raise RuntimeError("parser exploded")
        return real(body, page_url, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(downloader, "extract_links", flaky)
    logging.getLogger("webcrawl.crawler.downloader").disabled = True
    try:
        w = mini_web
        w.add("a.test", "/", html("/bad", "/good"))
        w.add("a.test", "/bad", html("/never"))
        w.add("a.test", "/good", html())
        data = await crawl(w, tmp_path, [w.url("a.test")])
    finally:
        logging.getLogger("webcrawl.crawler.downloader").disabled = False
    o = data["outcomes"]
    assert o[w.url("a.test", "/bad")] == "network_error"
    assert o[w.url("a.test", "/good")] == "fetched"
    assert data["stats"].stopped == "done"
    errors = [e for url, *_, e in data["fetches"] if url.endswith("/bad")]
    assert errors == ["RuntimeError"]
