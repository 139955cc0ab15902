"""URL conformance: the WHATWG URL test data (http and https) and w3lib's URL and
``<base href>`` tests, run through our parser and link extractor.

* ``data/urltestdata-http.json``: web-platform-tests ``url/resources/urltestdata.json``
  (3-Clause BSD licence; source and filter recorded in the file), the cases whose input,
  base or result is an http(s) URL.  Our documented normalisation
  (:mod:`webcrawl.crawler.urls`: fragment, user info, empty query and trailing host dots
  dropped; escapes normalised) is applied to each expected URL, then it must equal
  ours exactly; a failure must give None.
* w3lib (github.com/scrapy/w3lib, BSD licence) ``tests/test_url.py`` IDNA, encoding,
  port and percent-encoding cases and ``tests/test_html.py`` ``get_base_url`` cases.

Cases we answer differently on purpose are in ``DEVIATIONS`` (with our answer); each is
a row of the deviation table of docs/results/robustness.md (checked below).  Everything else passes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from webcrawl.crawler.encodings import lookup_label
from webcrawl.crawler.links import extract_links
from webcrawl.crawler.urls import normalize_escapes, normalize_url, remove_dot_segments

DATA = Path(__file__).parent / "data" / "urltestdata-http.json"
DEVIATION_TABLE = Path(__file__).resolve().parents[2] / "docs" / "results" / "robustness.md"
WPT: list[dict[str, Any]] = json.loads(DATA.read_text(encoding="utf-8"))["cases"]


def wpt_id(i: int) -> str:
    return f"wpt-{i}"


def our_form(case: dict[str, Any]) -> str | None:
    """The WHATWG result with our documented normalisation applied (None: failure or
    another scheme than http and https, which the crawler never follows)."""
    if case.get("failure") or case["protocol"] not in ("http:", "https:"):
        return None
    host = case["hostname"].rstrip(".") if not case["hostname"].startswith("[") \
        else case["hostname"]
    port = f":{case['port']}" if case["port"] else ""
    path = remove_dot_segments(normalize_escapes(case["pathname"]) or "/")
    query = normalize_escapes(case["search"][1:])
    return f"{case['protocol']}//{host}{port}{path}" + (f"?{query}" if query else "")


#: id -> (our answer, why).  Each id appears in the deviation table of docs/results/robustness.md.
DEVIATIONS: dict[str, tuple[str | None, str]] = {
    wpt_id(next(i for i, c in enumerate(WPT) if c["input"] == "http://./")):
        (None, "a host of dots only is no host"),
    wpt_id(next(i for i, c in enumerate(WPT) if c["input"] == "http://../")):
        (None, "a host of dots only is no host"),
    wpt_id(next(i for i, c in enumerate(WPT)
                if c["input"].startswith("http://!\"$&"))):
        (None, "quotes and other non-DNS characters in a host are refused"),
    "w3lib-idna-fail-empty-label": (
        f"http://.xn--{'éxamplé'.encode('punycode').decode()}.com/r%C3%A9sum%C3%A9?q=r%C3%A9sum%C3%A9",
        "w3lib keeps a host it cannot encode; browsers apply UTS #46 without DNS length checks"),
    "w3lib-idna-fail-long-label": (
        f"http://www.xn--{('éxamplé' * 11).encode('punycode').decode()}.com/"
        "r%C3%A9sum%C3%A9?q=r%C3%A9sum%C3%A9",
        "w3lib keeps a host it cannot encode; browsers apply UTS #46 without DNS length checks"),
    "w3lib-default-port": ("http://www.example.com/r%C3%A9sum%C3%A9?q=r%C3%A9sum%C3%A9",
                           "default ports are dropped (one URL per page)"),
    "w3lib-reserved-escape": ("https://example.com/a%23b%2Cc",
                              "escapes of reserved characters are kept (RFC 3986 6.2.2.2)"),
    "w3lib-sorted-query": ("http://www.example.com/do?price=%C2%A3500&a=5&z=3",
                           "query order is kept (servers may depend on it)"),
}


@pytest.mark.parametrize("i", range(len(WPT)), ids=[wpt_id(i) for i in range(len(WPT))])
def test_whatwg_url_case(i: int) -> None:
    case = WPT[i]
    expected = DEVIATIONS.get(wpt_id(i), (our_form(case), ""))[0]
    assert normalize_url(case["input"], case["base"]) == expected


IDNA_SITES = [  # w3lib test_safe_url_idna (expected: w3lib's answer, path '/' added)
    ("http://www.färgbolaget.nu/färgbolaget",
     "http://www.xn--frgbolaget-q5a.nu/f%C3%A4rgbolaget"),
    ("http://www.räksmörgås.se/?räksmörgås=yes",
     "http://www.xn--rksmrgs-5wao1o.se/?r%C3%A4ksm%C3%B6rg%C3%A5s=yes"),
    ("http://www.brændendekærlighed.com/brændende/kærlighed",
     "http://www.xn--brndendekrlighed-vobh.com/br%C3%A6ndende/k%C3%A6rlighed"),
    ("http://www.예비교사.com", "http://www.xn--9d0bm53a3xbzui.com/"),
    ("http://理容ナカムラ.com", "http://xn--lck1c3crb1723bpq4a.com/"),
    ("http://あーるいん.com", "http://xn--l8je6s7a45b.com/"),
    ("http://www.bücher.de/?q=bücher", "http://www.xn--bcher-kva.de/?q=b%C3%BCcher"),
    ("http://はじめよう.みんな/?query=サ&maxResults=5",
     "http://xn--p8j9a0d9c9a.xn--q9jyb4c/?query=%E3%82%B5&maxResults=5"),
    ("http://кто.рф/", "http://xn--j1ail.xn--p1ai/"),
    ("http://кто.рф/index.php?domain=Что",
     "http://xn--j1ail.xn--p1ai/index.php?domain=%D0%A7%D1%82%D0%BE"),
    ("http://내도메인.한국/", "http://xn--220b31d95hq8o.xn--3e0b707e/"),
    ("http://맨체스터시티축구단.한국/", "http://xn--2e0b17htvgtvj9haj53ccob62ni8d.xn--3e0b707e/"),
    ("http://nic.شبكة", "http://nic.xn--ngbc5azd/"),
    ("https://www.贷款.在线", "https://www.xn--0kwr83e.xn--3ds443g/"),
    ("https://www2.xn--0kwr83e.在线", "https://www2.xn--0kwr83e.xn--3ds443g/"),
    ("https://www3.贷款.xn--3ds443g", "https://www3.xn--0kwr83e.xn--3ds443g/"),
]


@pytest.mark.parametrize(("url", "expected"), IDNA_SITES, ids=[u for u, _ in IDNA_SITES])
def test_w3lib_idna(url: str, expected: str) -> None:
    assert normalize_url(url) == expected
    assert normalize_url(expected) == expected


LONG = "éxamplé" * 11
W3LIB_CASES: list[tuple[str, str | None, str, str | None]] = [
    # (id, page encoding label, input, w3lib's expected output)
    ("w3lib-enc-plain", None, "https://example.com", "https://example.com/"),
    ("w3lib-enc-path-utf8", None, "https://example.com/©", "https://example.com/%C2%A9"),
    ("w3lib-enc-path-always-utf8", "iso-8859-1", "https://example.com/©",
     "https://example.com/%C2%A9"),
    ("w3lib-enc-query-page-encoding", "iso-8859-1", "https://example.com?©",
     "https://example.com/?%A9"),
    ("w3lib-enc-query-http", "iso-8859-1", "http://example.com?©", "http://example.com/?%A9"),
    ("w3lib-idna-fail-empty-label", None, "http://.éxamplé.com/résumé?q=résumé",
     "http://.éxamplé.com/r%C3%A9sum%C3%A9?q=r%C3%A9sum%C3%A9"),
    ("w3lib-idna-fail-long-label", None, f"http://www.{LONG}.com/résumé?q=résumé",
     f"http://www.{LONG}.com/r%C3%A9sum%C3%A9?q=r%C3%A9sum%C3%A9"),
    ("w3lib-default-port", None, "http://www.example.com:80/résumé?q=résumé",
     "http://www.example.com:80/r%C3%A9sum%C3%A9?q=r%C3%A9sum%C3%A9"),
    ("w3lib-empty-port", None, "http://www.example.com:/résumé?q=résumé",
     "http://www.example.com/r%C3%A9sum%C3%A9?q=r%C3%A9sum%C3%A9"),
    ("w3lib-pct-upper", None, "http://www.example.com/r%c3%a9sum%c3%a9",
     "http://www.example.com/r%C3%A9sum%C3%A9"),
    ("w3lib-pct-latin1-path", None, "http://www.example.com/a%a3do",
     "http://www.example.com/a%A3do"),
    ("w3lib-pct-mixed", None, "http://www.example.com/a%a3do?q=r%c3%a9sum%c3%a9",
     "http://www.example.com/a%A3do?q=r%C3%A9sum%C3%A9"),
    ("w3lib-pct-latin1-both", None, "http://www.example.com/a%a3do?q=r%e9sum%e9",
     "http://www.example.com/a%A3do?q=r%E9sum%E9"),
    ("w3lib-reserved-escape", None, "https://example.com/a%23b%2cc#bash",
     "https://example.com/a%23b,c"),
    ("w3lib-pct-query-latin1", None, "http://www.example.com/do?k=b%a3",
     "http://www.example.com/do?k=b%A3"),
    ("w3lib-pct-query-utf8", None, "http://www.example.com/do?k=r%c3%a9sum%c3%a9",
     "http://www.example.com/do?k=r%C3%A9sum%C3%A9"),
    ("w3lib-space-path", None, "http://www.example.com/a do?a=1",
     "http://www.example.com/a%20do?a=1"),
    ("w3lib-space-escaped", None, "http://www.example.com/a %20do?a=1",
     "http://www.example.com/a%20%20do?a=1"),
    ("w3lib-non-ascii-path", None, "http://www.example.com/a do£.html?a=1",
     "http://www.example.com/a%20do%C2%A3.html?a=1"),
    ("w3lib-sorted-query", None, "http://www.example.com/do?price=£500&a=5&z=3",
     "http://www.example.com/do?a=5&price=%C2%A3500&z=3"),
]


@pytest.mark.parametrize(("label", "url", "expected"), [c[1:] for c in W3LIB_CASES],
                         ids=[c[0] for c in W3LIB_CASES])
def test_w3lib_url_case(label: str | None, url: str, expected: str | None,
                        request: pytest.FixtureRequest) -> None:
    case_id = request.node.callspec.id
    if case_id in DEVIATIONS:
        expected = DEVIATIONS[case_id][0]
    encoding = lookup_label(label) if label else None
    assert normalize_url(url, encoding=encoding) == expected


BASE_CASES = [  # w3lib test_html.py TestGetBaseUrl: (id, page URL, HTML, base expected)
    ("base-plain", "https://example.org",
     "<html><head><title>Dummy</title><base href='http://example.org/something' /></head>"
     "<body>blahablsdfsal&amp;</body></html>", "http://example.org/something"),
    ("base-after-many-open-tags", "http://example.com/",
     "<base " * 300 + '<base href="http://example.org/found/">', "http://example.org/found/"),
    ("base-in-comment", "http://page.test/", '<!-- <base href="http://example.com/"/> -->',
     "http://page.test/"),
    ("base-in-open-comment", "http://page.test/", '<!-- <base href="http://example.com/"/>',
     "http://page.test/"),
    ("base-after-comment", "http://page.test/",
     '<!-- <!--  <base href="http://example.com/"/> -- -->  '
     '<base href="http://example_2.com/"/> ', "http://example_2.com/"),
    ("base-after-comments", "http://page.test/",
     '<!-- <base href="http://example.com/"/> --> <!-- <base href="http://example_2.com/"/>'
     ' --> <base href="http://example_3.com/"/>', "http://example_3.com/"),
    ("base-in-script", "https://example.org",
     """<script>var t = "<base href='http://evil.example/'>";</script>""",
     "https://example.org"),
    ("base-after-script", "https://example.org",
     '<script><base href="http://evil.example/"></script>'
     '<base href="http://example.org/found/">', "http://example.org/found/"),
    ("base-in-open-script", "https://example.org", '<script><base href="http://evil.example/">',
     "https://example.org"),
    ("base-split-by-comment", "https://example.org",
     '<base h<!--c-->ref="http://example.com/">', "https://example.org"),
    ("base-absolute-path", "https://example.org",
     "<html><head><base href='/absolutepath' /></head></html>",
     "https://example.org/absolutepath"),
    ("base-no-scheme", "https://example.org",
     "<html><head><base href='//noscheme.com/path' /></head></html>",
     "https://noscheme.com/path"),
    ("base-attributes-before-href", "https://example.org",
     "<base id='my_base_tag' href='http://example.org/something' />",
     "http://example.org/something"),
    ("base-tag-name", "https://example.org",
     "<basefoo href='http://example.org/something' />", "https://example.org"),
]


@pytest.mark.parametrize(("page", "html", "base"), [c[1:] for c in BASE_CASES],
                         ids=[c[0] for c in BASE_CASES])
def test_w3lib_base_href(page: str, html: str, base: str) -> None:
    # The base URL is what an empty href resolves to (a link to the document's base).
    links = extract_links('<a href="">self</a>' + html, page)
    assert links.urls[0] == normalize_url(base)


def test_deviations_listed_once_in_readme_and_real() -> None:
    table = DEVIATION_TABLE.read_text(encoding="utf-8")
    reference = {wpt_id(i): our_form(c) for i, c in enumerate(WPT)}
    reference.update({c[0]: c[3] for c in W3LIB_CASES})
    for case_id, (ours, why) in DEVIATIONS.items():
        assert table.count(f"`{case_id}`") == 1, f"{case_id} ({why}) not in the docs' table"
        assert reference[case_id] != ours  # a real difference, not a stale entry
