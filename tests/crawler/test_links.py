"""Link extraction: tags, base href, nofollow, meta robots, schemes, caps, fast paths."""

from __future__ import annotations

import pytest

from crawler.links import _Resolver, extract_links
from crawler.urls import normalize_url

PAGE = "http://site1.test:8400/a/b/page.html?x=1"


def test_tags_base_and_order() -> None:
    html = """<html><head><base href="/base/dir/"></head><body>
    <a href="one.html">1</a><area href="/two.html"><iframe src="//other.test/if"></iframe>
    <img src="/img.png"><link href="/css.css">
    <a href="mailto:a@b.c">m</a><a href="javascript:x()">j</a><a href="tel:123">t</a>
    <a href="one.html#frag">dup</a><a>no href</a><a href="">empty</a>
    </body></html>"""
    links = extract_links(html, PAGE)
    # href="" is a link to the document's base URL, as browsers follow it (issue 21).
    assert links.urls == ["http://site1.test:8400/base/dir/one.html",
                          "http://site1.test:8400/two.html", "http://other.test/if",
                          "http://site1.test:8400/base/dir/"]
    frames = extract_links('<html><frameset><frame src="f1.html"><frame src="/f2">'
                           '</frameset></html>', PAGE)
    assert frames.urls == ["http://site1.test:8400/a/b/f1.html", "http://site1.test:8400/f2"]


def test_nofollow_flags_and_meta_robots() -> None:
    html = """<meta name="ROBOTS" content="NoIndex, NoFollow">
    <a href="/a" rel="nofollow">a</a><a href="/b" rel="external nofollow">b</a>
    <a href="/b">b again, followed</a><a href="/c">c</a>"""
    links = extract_links(html, PAGE)
    assert links.nofollow == {"http://site1.test:8400/a"}
    assert links.meta_nofollow and links.meta_noindex
    plain = extract_links('<meta name="description" content="nofollow"><a href="/x">', PAGE)
    assert not plain.meta_nofollow and not plain.meta_noindex
    ours = extract_links('<meta name="webcrawl" content="none"><a href="/x">', PAGE)
    assert ours.meta_nofollow and ours.meta_noindex


def test_cap_links_per_page() -> None:
    html = "".join(f'<a href="/p{i}">x</a><a href="/p{i}">again</a>' for i in range(50))
    links = extract_links(html, PAGE, max_links=10)
    assert links.urls == [f"http://site1.test:8400/p{i}" for i in range(10)]
    assert links.cut == 40  # distinct targets dropped, duplicates not counted twice
    assert extract_links(html, PAGE, max_links=50).cut == 0


@pytest.mark.parametrize("href", [
    "/x/../y", "//Other.TEST:80/a/./b", "HTTP://SITE1.test:8400/%7euser", "https://h.test/",
    "/", "//h.test", "  /sp aced  ", "/a?b=c#d", "/%70rivate/p1.html", "http:rel", "?q=1",
    "../up.html", "x.html", "#frag", "", "/\\back", "//[::1]:8080/x", "https://h.test:443/x",
    "/a/b/../../../../c", "http://h.test/a%2fb", "ftp://h.test/", "//", "///x", "/\tx\n",
    "../../../../g", "./", ".", "..", "../", "g;x?y#s", "g;x=1/../y", "%2E%2E/x", "a/%2e/b",
    "./a:b", "a:b", "mailto:x", "1.html", "g/./h/../i", "..g", "g..", "./../g", "g/", "Ü.html",
    "a b/c", "x/../../..", "./g/.", "g?y/./x", "g#s/../x", "..%2Fx", "\xa0/x", "?q=é",
    "/p?q=é&r=ツ", "//user@h.test/x", "https:h.test/x", "http://0x7f.1/",
], ids=repr)
@pytest.mark.parametrize("base", [PAGE, "https://h.test/", "http://[::1]:81/d/e",
                                  "http://h.test/a/b/c/d;p?q"])
def test_fast_resolver_equals_normalize_url(href: str, base: str) -> None:
    assert _Resolver(base)(href) == normalize_url(href, base)
    assert _Resolver(base, "cp1252")(href) == normalize_url(href, base, "cp1252")
