"""Link extraction: tags, base href, nofollow, meta robots, schemes, caps, fast paths.

The fast paths are checked against slow references on generated input: the resolver
against ``normalize_url``, ``extract_links`` against ``reference_links`` (lexbor's CSS
selectors and ``normalize_url``, the extraction as it was before the tag walks).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from selectolax.lexbor import LexborHTMLParser
from webcrawl.crawler.encodings import decode_page, page_encoding, url_encoding
from webcrawl.crawler.links import PageLinks, _Resolver, extract_links
from webcrawl.crawler.urls import normalize_url
from webcrawl.fixtures.config import FixtureConfig
from webcrawl.fixtures.html import PageRenderer
from webcrawl.fixtures.web import FixtureWeb

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



@pytest.mark.parametrize(("content", "nofollow", "noindex"), [
    ("noindex, nofollow", True, True), ("noindex,nofollow", True, True),
    ("noindex nofollow", True, True), (" NOFOLLOW\tNOINDEX ", True, True),
    ("noindex , nofollow", True, True), ("nofollow", True, False), ("none", True, True),
    ("index follow", False, False), ("noindexnofollow", False, False),
    ("max-snippet:-1 nofollow", True, False),
], ids=["comma-space", "comma", "space", "tab-upper", "space-comma-space", "one", "none",
        "index-follow", "glued", "with-other-rules"])
def test_meta_robots_directives_split_on_commas_and_spaces(content: str, nofollow: bool,
                                                           noindex: bool) -> None:
    links = extract_links(f'<meta name="robots" content="{content}"><a href="/x">', PAGE)
    assert (links.meta_nofollow, links.meta_noindex) == (nofollow, noindex)

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


def reference_links(text: str, page_url: str, encoding: str | None = None, *,
                    max_links: int = 10_000, agent: str = "webcrawl") -> PageLinks:
    """Extraction as it was before the tag walks and the resolver's fast paths, with
    lexbor's CSS selectors and ``normalize_url`` on every href, from decoded ``text``."""
    tree = LexborHTMLParser(text)
    result = PageLinks()
    base = page_url
    base_node = tree.css_first("base[href]")
    if base_node is not None:
        base = normalize_url(base_node.attributes.get("href") or "", page_url,
                             encoding) or page_url
    for node in tree.css("meta[name]"):
        attrs = node.attributes
        name = (attrs.get("name") or "").strip().lower()
        if name not in ("robots", agent.lower()):
            continue
        tokens = {t.strip() for t in re.split(r"[\s,]", (attrs.get("content") or "").lower())}
        if "none" in tokens:
            result.meta_nofollow = result.meta_noindex = True
            break
        result.meta_nofollow |= "nofollow" in tokens
        result.meta_noindex |= "noindex" in tokens
    seen: dict[str, bool] = {}
    dropped: set[str] = set()
    for node in tree.css("a[href], area[href], frame[src], iframe[src]"):
        attrs = node.attributes
        raw = attrs.get("href") if node.tag in ("a", "area") else attrs.get("src")
        if raw is None:
            continue
        url = normalize_url(raw, base, encoding)
        if url is None:
            continue
        rel = attrs.get("rel")
        nofollow = rel is not None and "nofollow" in rel.lower().split()
        if url not in seen:
            if len(seen) >= max_links:
                dropped.add(url)
                continue
            seen[url] = nofollow
        elif seen[url] and not nofollow:
            seen[url] = False
    result.urls = list(seen)
    result.nofollow = {url for url, flag in seen.items() if flag}
    result.cut = len(dropped)
    return result


ENCODINGS = [None, "utf-8", "cp1252", "cp932"]
HREF_PIECES = [
    "", "/", "//", "../", "./", "..", ".", "a", "b.html", "g;x", "%2E", "%2e%2E/", "%7e", "%",
    "%zz", "é", "ツ", "\xa0", " ", "\t", "\n", "\\", "?", "?q=1", "?q=é&r='", "#", "#f", ":",
    "@", "h.test", "Other.TEST:80", "[::1]:8080", "user@h.test", "0x7f.1", "mailto:",
    "javascript:", "tel:", "data:", "ftp:", "file:", "x-y.z+w:", "a1:", "HTTP:", "https:",
    "http:", "Http://", "HTTPS://", "http://", "https://",
]
hrefs = st.one_of(
    st.lists(st.sampled_from(HREF_PIECES), max_size=8).map("".join),
    st.text(max_size=30),
)
BASE_PATHS = ["", "/", "/a", "/a/b/", "/a//b/", "/a/b/c/d;p", "/%7e/x", "/é/ツ", "/a/./b/../c"]
bases = st.builds(
    lambda scheme, host, path, query, frag: normalize_url(scheme + host + path + query + frag),
    st.sampled_from(["http://", "https://", "HTTP://"]),
    st.sampled_from(["h.test", "H.Test:8400", "[::1]:81", "127.0.0.1", "faß.example",
                     "site1.test:80"]),
    st.sampled_from(BASE_PATHS), st.sampled_from(["", "?q", "?q=é", "?a/b", "?"]),
    st.sampled_from(["", "#f"]),
).filter(lambda base: base is not None)


@settings(max_examples=1000, deadline=None)
@given(hrefs, bases, st.sampled_from(ENCODINGS))
def test_resolver_equals_normalize_url_on_generated_hrefs(href: str, base: str,
                                                          encoding: str | None) -> None:
    assert _Resolver(base, encoding)(href) == normalize_url(href, base, encoding)


PAGES = [PAGE, "https://h.test/", "http://[::1]:81/d/e", "http://h.test/a/b/c/d;p?q=é"]
attribute_values = st.one_of(hrefs, st.sampled_from(["one.html", "/two", "../up/", "#top",
                                                     "mailto:a@b.c", "//other.test/x"]))


@st.composite
def documents(draw: st.DrawFn) -> str:
    """HTML mixing every link element, with and without its attribute, and their decoys."""
    parts = []
    for _ in range(draw(st.integers(0, 20))):
        value = draw(attribute_values).replace('"', "&quot;")
        tag = draw(st.sampled_from(["a", "A", "area", "AREA", "iframe", "frame", "base",
                                    "BASE"]))
        # Mostly the tag's own attribute, in either case, sometimes another one.
        own = "src" if tag.lower() in ("iframe", "frame") else "href"
        attr = draw(st.sampled_from([own, own, own, own.upper(), "href", "src", "xlink:href"]))
        form = draw(st.sampled_from([f'{attr}="{value}"'] * 3 + [attr, 'title="t"',
                                                                 f'{attr}=""']))
        rel = draw(st.sampled_from(["", ' rel="nofollow"', " REL=NOFOLLOW",
                                    ' rel="external nofollow"', ' rel="nofollowing"']))
        parts.append(draw(st.sampled_from([
            f"<{tag} {form}{rel}>text</{tag}>", f"<{tag} {form}{rel}>",
            f"<!-- <{tag} {form}> -->", f'<svg><base xlink:href="{value}"></svg>',
            '<meta name="robots" content="nofollow">', '<META NAME=ROBOTS CONTENT="NOINDEX">',
            '<meta name="webcrawl" content="none">', '<meta content="nofollow">',
            '<meta name="googlebot" content="none">', "<meta name>",
            '<meta name="robots" content="noindex nofollow">',
            '<meta name="robots" content="noindex,\tnofollow">',
            "<div>", "</div>", "<p>", "<table><tr><td>", "<svg>", "</svg>", "<math>",
            "</math>", "<template>", "</template>", "<frameset>", "</frameset>",
            "<noscript>", "</noscript>", "<textarea>", "</textarea>", "<select>", "text",
        ])))
    return "".join(parts)


@settings(max_examples=600, deadline=None)
@given(documents(), st.sampled_from(PAGES), st.sampled_from([None, "cp1252"]),
       st.sampled_from([3, 10_000]))
def test_extract_links_equals_css_reference(html: str, page: str, charset: str | None,
                                            max_links: int) -> None:
    if charset is None:
        want = reference_links(html, page, max_links=max_links)
        assert extract_links(html, page, max_links=max_links) == want
        return
    body = html.encode(charset, "replace")  # as bytes: decoded, queries in its encoding
    codec = page_encoding(body, charset)
    want = reference_links(decode_page(body, codec), page, url_encoding(codec),
                           max_links=max_links)
    assert extract_links(body, page, max_links=max_links, charset=charset) == want


@pytest.mark.parametrize(("html", "urls"), [
    ('<a href="1"></a><iframe src="2"></iframe><a href="3"></a><map><area href="4"></map>'
     '<iframe src="5"></iframe><a href="6"></a>',
     ["/a/b/1", "/a/b/2", "/a/b/3", "/a/b/4", "/a/b/5", "/a/b/6"]),
    ('<iframe src="1"></iframe><iframe><a href="in-iframe"></a></iframe><iframe src="2">'
     "</iframe>", ["/a/b/1", "/a/b/2"]),
    ('<frameset><frame src="f1"><frame><frame src="/f2"></frameset>', ["/a/b/f1", "/f2"]),
    ('<area href="m1"><a>no href</a><area href="m2">', ["/a/b/m1", "/a/b/m2"]),
    ('<a href="x">x</a><p><base href="/late/"><a href="y">', ["/late/x", "/late/y"]),
    ('<base href="/first/"><base href="/second/"><a href="x">', ["/first/x"]),
    ('<base target="_top"><base href="/b/"><a href="x">', ["/b/x"]),
    ('<A HREF="X"></A><AREA HREF="/Y"><IFRAME SRC="Z"></IFRAME>',
     ["/a/b/X", "/Y", "/a/b/Z"]),
    ('<BASE HREF="/up/"><A HREF="x">', ["/up/x"]),
    ('<a href="">self</a><a href="#top">self again</a><a href="x">', ["/a/b/page.html?x=1",
                                                                      "/a/b/x"]),
    ('<base href=""><a href="x">', ["/a/b/x"]),
    ('<svg><base xlink:href="/svg/"></svg><base href="/b/"><a href="x">', ["/a/b/x"]),
    ('<base xlink:href="/html/"><base href="/b/"><a href="x">', ["/b/x"]),
    ('<svg><a href="s">s</a><a xlink:href="x">x</a></svg><a href="t">', ["/a/b/s", "/a/b/t"]),
    ("<!-- <a href=\"c\"> --><template><a href=\"t\"></template><a href=\"d\">", ["/a/b/d"]),
], ids=["mixed-kinds", "iframes-only", "frames", "areas-only", "base-after-links",
        "first-base", "base-without-href-skipped", "uppercase", "uppercase-base",
        "empty-href", "empty-base", "svg-base-xlink", "html-base-xlink-ignored", "svg-links",
        "comment-template"])
def test_document_order_and_base(html: str, urls: list[str]) -> None:
    links = extract_links(html, PAGE)
    assert links.urls == ["http://site1.test:8400" + u for u in urls]
    assert links == reference_links(html, PAGE)


def test_uppercase_meta_and_rel() -> None:
    html = ('<META NAME="ROBOTS" CONTENT="NOFOLLOW"><A HREF="/x" REL="NOFOLLOW">x</A>'
            '<A HREF="/y" REL="Nofollow External">y</A><A HREF="/z">z</A>')
    links = extract_links(html, PAGE)
    assert links.meta_nofollow and not links.meta_noindex
    assert links.nofollow == {"http://site1.test:8400/x", "http://site1.test:8400/y"}
    assert links == reference_links(html, PAGE)


# The resolver against normalize_url on independent hrefs: every input of the WHATWG URL
# test data (against its own base and the bases above), and every link of the fixture web.

WPT_CASES = json.loads((Path(__file__).parent / "data" / "urltestdata-http.json")
                       .read_text(encoding="utf-8"))["cases"]
WPT_BASES = sorted({base for case in WPT_CASES
                    if (base := normalize_url(case["base"] or "")) is not None})


@pytest.mark.parametrize("base", [PAGE, "https://h.test/", "http://[::1]:81/d/e",
                                  "http://h.test/a/b/c/d;p?q", *WPT_BASES[:20]])
@pytest.mark.parametrize("encoding", [None, "cp1252"])
def test_resolver_equals_normalize_url_on_whatwg_inputs(base: str, encoding: str | None) -> None:
    for case in WPT_CASES:
        href = case["input"]
        assert _Resolver(base, encoding)(href) == normalize_url(href, base, encoding), href


def test_resolver_equals_normalize_url_against_whatwg_bases() -> None:
    checked = 0
    for case in WPT_CASES:
        base = normalize_url(case["base"] or "")
        if base is not None:
            checked += 1
            assert _Resolver(base)(case["input"]) == normalize_url(case["input"], base), case
    assert checked > 150


def test_resolver_equals_normalize_url_on_fixture_links() -> None:
    web = FixtureWeb.build(FixtureConfig(pages=400, hosts=5, seed=3))
    renderer = PageRenderer(web, 8400)
    hrefs = 0
    for page in range(web.pages):
        url = web.url_of(page, 8400)
        resolve = _Resolver(url, "utf-8")
        for node in LexborHTMLParser(renderer.render(page, 0)).tags("a"):
            href = node.attributes.get("href")
            if href is not None:
                hrefs += 1
                assert resolve(href) == normalize_url(href, url, "utf-8"), (url, href)
    assert hrefs > 4 * web.pages
