"""Hostile input to link extraction: arbitrary bytes, broken and huge markup, odd hrefs.

Properties (hypothesis): nothing raises, only normalised http(s) URLs come out (the
normalisation is idempotent on them), at most ``max_links`` targets, nofollow flags a
subset.  URL normalisation's own properties live in ``test_urls.py``; these extend
them to extraction.  Memory: a page of a million links and a 100 MB body stay within a
bound derived from ``fetch_max_body`` and ``links_max_per_page`` (measured as peak RSS
growth of a child process, since lexbor's DOM lives outside Python's allocator).
"""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap

import pytest
from aiohttp import web as aioweb
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from webcrawl.crawler.fetcher import decode_body
from webcrawl.crawler.links import extract_links
from webcrawl.crawler.urls import normalize_url
from webcrawl.fixtures import FaultSpec, FixtureConfig, FixtureWeb
from webcrawl.fixtures.html import PageRenderer

PAGE = "http://site.test:8080/dir/page.html?q=1"
MAX_LINKS = 50


def check(html: str, page: str = PAGE, max_links: int = MAX_LINKS) -> list[str]:
    links = extract_links(html, page, max_links=max_links)
    assert len(links.urls) <= max_links
    assert len(set(links.urls)) == len(links.urls)
    assert links.nofollow <= set(links.urls)
    for url in links.urls:
        assert url.startswith(("http://", "https://")), url
        assert normalize_url(url) == url
    return links.urls


hrefs = st.one_of(
    st.text(max_size=80),
    st.sampled_from(["javascript:alert(1)", "data:text/html,<a href=http://x.test/>",
                     "file:///etc/passwd", "ftp://site.test/x", "mailto:a@b", "//", "///x",
                     "http://", "http://[::1", "http://a b.test/", "\\\\evil.test\\x",
                     "http:/\\evil.test/", "https://user:pw@site.test:99999/",
                     "http://site.test:8080/\x00/", "#", "?", "../" * 50, " \t\n"]),
    st.builds(lambda s, t: s + t, st.sampled_from(["http://", "https://", "//", "/", ""]),
              st.text(alphabet=st.characters(codec="utf-8"), max_size=40)),
)
attr_quote = st.sampled_from(['"', "'", ""])
tags = st.sampled_from(["a", "A", "area", "iframe", "frame", "base", "div", "p", "table",
                        "script", "style", "template", "svg", "math", "noscript", "textarea"])


@st.composite
def broken_html(draw: st.DrawFn) -> str:
    parts = []
    for _ in range(draw(st.integers(0, 25))):
        tag = draw(tags)
        attr = "src" if tag in ("iframe", "frame") else "href"
        q = draw(attr_quote)
        parts.append(draw(st.sampled_from([
            f"<{tag} {attr}={q}{draw(hrefs)}{q}>", f"</{tag}>", "<!--", "-->", "<", ">",
            "<![CDATA[", "]]>", "&amp", "&#0;", "\x00", f"<{tag} rel=nofollow {attr}=",
            draw(st.text(max_size=20))])))
    return "".join(parts)


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=2000), st.sampled_from([None, "utf-8", "latin-1", "utf-16", "bogus"]))
def test_arbitrary_bytes(body: bytes, charset: str | None) -> None:
    check(decode_body(body, charset))


@settings(max_examples=300, deadline=None)
@given(broken_html())
def test_broken_html(html: str) -> None:
    check(html)


@settings(max_examples=300, deadline=None)
@given(st.lists(hrefs, max_size=30), st.one_of(st.none(), hrefs))
def test_arbitrary_hrefs_and_base(links: list[str], base: str | None) -> None:
    from html import escape

    head = "" if base is None else f'<base href="{escape(base)}">'
    body = "".join(f'<a href="{escape(h)}">x</a>' for h in links)
    urls = check(f"<html><head>{head}</head><body>{body}</body></html>")
    if base is None:
        # Every href that normalises is found, in document order, once (as the HTML
        # tokenizer delivers it: newlines normalised, NUL replaced); an empty href is a
        # link to the page itself, as browsers follow it (issue 21).
        parsed = [h.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "\ufffd")
                  for h in links]
        want = list(dict.fromkeys(u for h in parsed if (u := normalize_url(h, PAGE))))
        assert urls == want[:MAX_LINKS]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 2_000_000), st.sampled_from(["/", "http://site.test/", "?", "#"]))
def test_huge_attribute_values(size: int, prefix: str) -> None:
    huge = prefix + "a" * size
    urls = check(f'<a href="{huge}">x</a><a title="{"t" * size}" href="/ok">y</a>')
    assert "http://site.test:8080/ok" in urls


@pytest.mark.parametrize("depth", [1_000, 20_000])
@pytest.mark.parametrize("tag", ["div", "b", "table", "a"])
def test_deeply_nested_markup(depth: int, tag: str) -> None:
    html = f"<{tag}>" * depth + '<a href="/deep">deep</a>' + f"</{tag}>" * depth
    assert "http://site.test:8080/deep" in check(html)


def test_links_cap_keeps_document_order() -> None:
    html = "".join(f'<a href="/p{i}">x</a>' for i in range(5000))
    urls = check(html, max_links=1000)
    assert urls == [f"http://site.test:8080/p{i}" for i in range(1000)]


def test_malformed_fixture_pages_give_exactly_their_truth_links() -> None:
    # Malformed pages are broken HTML whose links the HTML5 algorithm still defines.
    web = FixtureWeb.build(FixtureConfig(
        pages=400, hosts=4, seed=7, nofollow_fraction=0.3, base_href_fraction=0.3,
        query_fraction=0.2, duplicate_fraction=0.3, faults=FaultSpec.parse("malformed:0.9")))
    renderer = PageRenderer(web, 8400)
    page_urls = {web.url_of(p, 8400) for p in range(web.pages)}
    checked = 0
    for page in range(web.pages):
        if web.fault_of(page) != "malformed":
            continue
        lo, hi = web.indptr[page], web.indptr[page + 1]
        truth = {web.url_of(int(t), 8400): bool(f)
                 for t, f in zip(web.dst[lo:hi], web.nofollow[lo:hi], strict=True)}
        links = extract_links(renderer.render(page, 0).decode(), web.url_of(page, 8400))
        assert {u for u in links.urls if u in page_urls} == set(truth), page
        assert {u for u in links.nofollow if u in page_urls} == {u for u, f in truth.items() if f}
        checked += 1
    assert checked > 300


# -- memory -----------------------------------------------------------------------

CAP = 2 * 1024 * 1024          # fetch_max_body of the memory tests
#: Allowed peak RSS growth: the fetcher's buffers (a few times the cap), the decoded
#: text, and lexbor's DOM (about 20 times the markup), plus interpreter slack.
RSS_BOUND = 40 * CAP + 48 * 1024 * 1024
HUGE = 100 * 1024 * 1024       # what the hostile server would send
ANCHOR = b'<a href="/p%d.html">x</a>'

CHILD = textwrap.dedent("""
    import asyncio, json, resource, sys
    from webcrawl.crawler.fetcher import Fetcher
    from webcrawl.crawler.links import extract_links
    from webcrawl.crawler.settings import CrawlSettings

    url, cap, max_links = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    settings = CrawlSettings.polite_off(fetch_max_body=cap, links_max_per_page=max_links)

    def rss():
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

    async def main():
        # A million-link page as the engine sees it: cut at the body cap.
        page = b"".join(b'<a href="/p%d.html">x</a>' % i for i in range(1_000_000))
        before = rss()
        links = extract_links(page[:cap].decode(), "http://big.test/", max_links=max_links)
        extract_growth = rss() - before
        del page
        before = rss()
        async with Fetcher(settings) as fetcher:
            result = await fetcher.fetch(url)
        links2 = extract_links(result.text(), url, max_links=max_links)
        print(json.dumps({"links": len(links.urls), "extract_growth": extract_growth,
                          "too_large": result.too_large, "size": result.size,
                          "links2": len(links2.urls), "fetch_growth": rss() - before}))

    asyncio.run(main())
""")


async def test_million_links_and_100mb_body_stay_within_the_caps() -> None:
    sent = 0

    async def endless_links(request: aioweb.Request) -> aioweb.StreamResponse:
        nonlocal sent
        resp = aioweb.StreamResponse(headers={"Content-Type": "text/html"})
        resp.enable_chunked_encoding()  # no Content-Length: the cap must cut the stream
        await resp.prepare(request)
        i = 0
        try:
            while sent < HUGE:
                chunk = b"".join(ANCHOR % (i + k) for k in range(2000))
                i += 2000
                await resp.write(chunk)
                sent += len(chunk)
        except ConnectionResetError:
            pass
        return resp

    app = aioweb.Application()
    app.router.add_get("/{tail:.*}", endless_links)
    runner = aioweb.AppRunner(app, handle_signals=False, access_log=None)
    await runner.setup()
    site = aioweb.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-c", CHILD, f"http://127.0.0.1:{port}/big", str(CAP),
            str(MAX_LINKS), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(proc.communicate(), 60)
    finally:
        await runner.cleanup()
    assert proc.returncode == 0, err.decode()
    result = json.loads(out)
    assert result["links"] == MAX_LINKS and result["links2"] == MAX_LINKS
    assert result["too_large"] and result["size"] == CAP
    assert result["extract_growth"] <= RSS_BOUND, result
    assert result["fetch_growth"] <= RSS_BOUND, result
    assert sent < HUGE // 4  # the client hung up near the cap, not after 100 MB
