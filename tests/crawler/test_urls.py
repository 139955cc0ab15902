"""URL normalisation: the documented rules, idempotence and hostile input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from webcrawl.crawler.urls import (
    _already_normal,
    _normalize_parsed,
    host_key,
    normalize_url,
    remove_dot_segments,
)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("HTTP://Example.COM/", "http://example.com/"),
        ("http://example.com", "http://example.com/"),
        ("http://example.com:80/a", "http://example.com/a"),
        ("https://example.com:443/a", "https://example.com/a"),
        ("https://example.com:8443/a", "https://example.com:8443/a"),
        ("http://example.com/a#frag", "http://example.com/a"),
        ("http://example.com/%7euser/%2f", "http://example.com/~user/%2F"),
        ("http://example.com/a b", "http://example.com/a%20b"),
        ("http://example.com/caf\u00e9", "http://example.com/caf%C3%A9"),
        ("http://example.com/100%", "http://example.com/100%25"),
        ("http://example.com/a/./b/../c", "http://example.com/a/c"),
        ("http://example.com/../../a", "http://example.com/a"),
        ("http://example.com/a/..", "http://example.com/"),
        ("http://example.com/?", "http://example.com/"),
        ("http://example.com/?b=2&a=1", "http://example.com/?b=2&a=1"),
        ("http://user:pw@example.com/", "http://example.com/"),
        ("http://example.com./", "http://example.com/"),
        ("http://b\u00fccher.example/", "http://xn--bcher-kva.example/"),
        ("http://[::1]:8080/x", "http://[::1]:8080/x"),
    ],
    ids=lambda v: v if len(v) < 40 else v[:40],
)
def test_documented_rules(url: str, expected: str) -> None:
    assert normalize_url(url) == expected


@pytest.mark.parametrize(
    "url",
    [
        "mailto:someone@example.com",
        "javascript:alert(1)",
        "data:text/html,hi",
        "file:///etc/passwd",
        "ftp://example.com/x",
        "//example.com/no-scheme",
        "http://",
        "http://example.com:99999/",
        "http://exa mple.com/",
        "",
    ],
)
def test_rejects_uncrawlable(url: str) -> None:
    assert normalize_url(url) is None


@pytest.mark.parametrize(
    ("href", "base", "expected"),
    [
        ("../x.html", "http://s.test:8400/a/b/c.html", "http://s.test:8400/a/x.html"),
        ("/root", "http://s.test:8400/a/b", "http://s.test:8400/root"),
        ("?q=1", "http://s.test/a/b", "http://s.test/a/b?q=1"),
        ("#top", "http://s.test/a/b", "http://s.test/a/b"),
        ("//other.test/p", "https://s.test/", "https://other.test/p"),
        ("  spaced.html  ", "http://s.test/d/", "http://s.test/d/spaced.html"),
        ("mailto:x@y", "http://s.test/", None),
    ],
)
def test_relative_resolution(href: str, base: str, expected: str | None) -> None:
    assert normalize_url(href, base) == expected


def test_remove_dot_segments_rfc3986_examples() -> None:
    # RFC 3986 section 5.2.4 worked examples.
    assert remove_dot_segments("/a/b/c/./../../g") == "/a/g"
    assert remove_dot_segments("/mid/content=5/../6") == "/mid/6"


def test_host_key_keeps_non_default_port() -> None:
    assert host_key("http://site3.test:8400/p/1") == "site3.test:8400"
    assert host_key("http://example.com/") == "example.com"
    assert host_key("http://example.com") == "example.com"


hrefs = st.one_of(
    st.text(max_size=200),
    st.builds(lambda a, b: a + b,
              st.sampled_from(["http://", "https://", "HTTP://", "ftp://", "javascript:",
                               "//", "/", "../", "?", "#", "mailto:", "data:"]),
              st.text(max_size=120)),
)
bases = st.sampled_from(["http://s.test:8400/a/b/c.html", "https://x.test/", None])


@settings(max_examples=400, deadline=None)
@given(href=hrefs, base=bases)
def test_hostile_hrefs_never_raise_and_only_http_comes_out(href: str, base: str | None) -> None:
    result = normalize_url(href, base)
    if result is not None:
        assert result.startswith(("http://", "https://"))
        assert "#" not in result
        assert " " not in result


@settings(max_examples=400, deadline=None)
@given(href=hrefs, base=bases)
def test_normalisation_is_idempotent(href: str, base: str | None) -> None:
    once = normalize_url(href, base)
    if once is not None:
        assert normalize_url(once) == once


RFC3986_BASE = "http://a/b/c/d;p?q"


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        # RFC 3986 section 5.4.1, normal examples (fragments dropped by our rule 5).
        ("g", "http://a/b/c/g"), ("./g", "http://a/b/c/g"), ("g/", "http://a/b/c/g/"),
        ("/g", "http://a/g"), ("//g", "http://g/"), ("?y", "http://a/b/c/d;p?y"),
        ("g?y", "http://a/b/c/g?y"), ("#s", "http://a/b/c/d;p?q"),
        ("g#s", "http://a/b/c/g"), ("g?y#s", "http://a/b/c/g?y"), (";x", "http://a/b/c/;x"),
        ("g;x", "http://a/b/c/g;x"), ("g;x?y#s", "http://a/b/c/g;x?y"),
        ("", "http://a/b/c/d;p?q"), (".", "http://a/b/c/"), ("./", "http://a/b/c/"),
        ("..", "http://a/b/"), ("../", "http://a/b/"), ("../g", "http://a/b/g"),
        ("../..", "http://a/"), ("../../", "http://a/"), ("../../g", "http://a/g"),
        # Section 5.4.2, abnormal examples.
        ("../../../g", "http://a/g"), ("../../../../g", "http://a/g"),
        ("/./g", "http://a/g"), ("/../g", "http://a/g"), ("g.", "http://a/b/c/g."),
        (".g", "http://a/b/c/.g"), ("g..", "http://a/b/c/g.."), ("..g", "http://a/b/c/..g"),
        ("./../g", "http://a/b/g"), ("./g/.", "http://a/b/c/g/"),
        ("g/./h", "http://a/b/c/g/h"), ("g/../h", "http://a/b/c/h"),
        ("g;x=1/./y", "http://a/b/c/g;x=1/y"), ("g;x=1/../y", "http://a/b/c/y"),
        ("g?y/./x", "http://a/b/c/g?y/./x"), ("g?y/../x", "http://a/b/c/g?y/../x"),
        # 'http:g' relative to an http base: the non-strict reading browsers use.
        ("http:g", "http://a/b/c/g"),
    ],
)
def test_rfc3986_reference_resolution(ref: str, expected: str) -> None:
    assert normalize_url(ref, RFC3986_BASE) == expected


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        ("0;", "http://s.test/dir/0;"),            # an empty parameter is kept
        ("0//x", "http://s.test/dir/0//x"),        # empty segments are kept
        ("..\\up\\x.html", "http://s.test/up/x.html"),  # backslash reads as slash
        ("\\\\other.test\\x", "http://other.test/x"),
        ("/a\\b?q=\\", "http://s.test/a/b?q=%5C"),  # ... but not in the query
        ("x\n.ht\tml", "http://s.test/dir/x.html"),  # tabs and newlines removed
    ],
)
def test_browser_rules_for_http(ref: str, expected: str) -> None:
    assert normalize_url(ref, "http://s.test/dir/page.html") == expected


# The normal-form shortcut of absolute URLs (``_already_normal``) against the full parser:
# whenever it answers, the full parser gives the same URL.

WPT_DATA = Path(__file__).parent / "data" / "urltestdata-http.json"
WPT_URLS = sorted({u for case in json.loads(WPT_DATA.read_text(encoding="utf-8"))["cases"]
                   for u in (case["input"], case.get("href"), case.get("base")) if u})


def test_already_normal_equals_full_parser_on_whatwg_data() -> None:
    answered = 0
    for url in WPT_URLS:
        fast = _already_normal(url)
        if fast is not None:
            answered += 1
            assert fast == _normalize_parsed(url), url
    assert answered > 100  # the shortcut is taken on the data's plain URLs


@pytest.mark.parametrize(("url", "expected"), [
    ("http://h.test/a/b.html", "http://h.test/a/b.html"),
    ("http://h.test", "http://h.test/"),
    ("https://h.test?q=1", "https://h.test/?q=1"),
    ("http://h.test/x?", "http://h.test/x"),
    ("http://h.test/x?#f", "http://h.test/x"),
    ("http://h.test:8400/x#f g\\h", "http://h.test:8400/x"),
    ("http://site1.test:8400/view?id=1&lang=en", "http://site1.test:8400/view?id=1&lang=en"),
    ("http://a-b_c.d1.test/~x/(y);z=1,2@:$!*+", "http://a-b_c.d1.test/~x/(y);z=1,2@:$!*+"),
], ids=repr)
def test_already_normal_forms(url: str, expected: str) -> None:
    assert _already_normal(url) == expected == _normalize_parsed(url)


@pytest.mark.parametrize("url", [
    "HTTP://h.test/", "http://H.test/", "http://h.test./", "http://h..test/", "http://1.2.3.4/",
    "http://h.0x7f/", "http://h.123/", "http://xn--bcher-kva.example/", "http://h.test:80/",
    "https://h.test:443/", "http://h.test:0/", "http://h.test:080/", "http://h.test:65536/",
    "http://u@h.test/", "http://h.test/a/./b", "http://h.test/a/..", "http://h.test/%7e",
    "http://h.test/a b", "http://h.test/é", "http://h.test/?q='", "http://h.test/?q=é",
    "http:///h.test/", " http://h.test/", "http://h.test/ ", "http://h.test\\x", "ftp://h.test/",
    "http://h.test/" + "a" * 8192,
], ids=repr)
def test_already_normal_leaves_the_rest_to_the_parser(url: str) -> None:
    assert _already_normal(url) is None


URL_PIECES = ["http://", "https://", "HTTP://", "//", "h", "H", ".", "..", "test", "0x7f", "1",
              "xn--", "-", "_", ":", ":80", ":443", ":8400", ":0", ":99999", "@", "/", "/.",
              "/..", "a", "%", "%7e", "%2F", "?", "?q=1", "'", "#", "#f", " ", "\t", "\\", "é",
              "~", "(", ";", "=", "&", "!", "*", "+", ","]


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(URL_PIECES), min_size=1, max_size=12).map("".join))
def test_already_normal_equals_full_parser_on_generated_urls(url: str) -> None:
    fast = _already_normal(url)
    assert fast is None or fast == _normalize_parsed(url)
