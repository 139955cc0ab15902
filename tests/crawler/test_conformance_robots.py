"""robots.txt conformance: Google's reference parser tests and RFC 9309's examples.

Cases transcribed (inputs and expected answers) from
github.com/google/robotstxt ``robots_test.cc`` (Apache License 2.0) and from RFC 9309
sections 2.2.2, 2.2.3, 5.1 and 5.2.  The tests are ours.  Cases where we deliberately
answer differently are in :data:`DEVIATIONS` with our answer, and each of them is listed
in the deviation table of ``docs/guide/robots.md`` (checked below).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from rawweb import RawRequest, RawServer, response
from webcrawl.crawler.fetcher import Fetcher
from webcrawl.crawler.robots import (
    RobotsCache,
    RobotsTxt,
    fetch_robots_file,
    is_valid_product_token,
    robots_path,
)
from webcrawl.crawler.settings import CrawlSettings

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guide" / "robots.md"
ESCAPED_STAR = "User-agent: *\nDisallow: /path/file-with-a-%2A.html\n"
ESCAPED_DOLLAR = "User-agent: *\nDisallow: /path/foo-%24\n"

SYSTEM = "user-agent: FooBot\ndisallow: /\n"
GROUPS = ("allow: /foo/bar/\n\nuser-agent: FooBot\ndisallow: /\nallow: /x/\n"
          "user-agent: BarBot\ndisallow: /\nallow: /y/\n\n\nallow: /w/\n"
          "user-agent: BazBot\n\nuser-agent: FooBot\nallow: /z/\ndisallow: /\n")
CASE_UA = "User-Agent: {}\nAllow: /x/\nDisallow: /\n"
FISH = "user-agent: FooBot\ndisallow: /\nallow: {}\n"
RFC_5_1 = ("User-Agent: *\nDisallow: *.gif$\nDisallow: /example/\nAllow: /publications/\n\n"
           "User-Agent: foobot\nDisallow:/\nAllow:/example/page.html\n"
           "Allow:/example/allowed.gif\n\nUser-Agent: barbot\nUser-Agent: bazbot\n"
           "Disallow: /example/page.html\n\nUser-Agent: quxbot\n\nEOF\n")
RFC_5_2 = ("User-Agent: foobot\nAllow: /example/page/\n"
           "Disallow: /example/page/disallowed.gif\n")

# (id, robots.txt, agent, url, allowed)
CASES: list[tuple[str, str, str, str, bool]] = [
    # GoogleOnly_SystemTest
    ("system-empty-file", "", "FooBot", "", True),
    ("system-empty-agent", SYSTEM, "", "", True),
    ("system-empty-url", SYSTEM, "FooBot", "", False),
    ("system-all-empty", "", "", "", True),
    # ID_LineSyntax_Line
    ("line-correct", SYSTEM, "FooBot", "http://foo.bar/x/y", False),
    ("line-incorrect", "foo: FooBot\nbar: /\n", "FooBot", "http://foo.bar/x/y", True),
    ("line-no-colon", "user-agent FooBot\ndisallow /\n", "FooBot", "http://foo.bar/x/y", False),
    # ID_LineSyntax_Groups
    ("groups-foo-x", GROUPS, "FooBot", "http://foo.bar/x/b", True),
    ("groups-foo-z", GROUPS, "FooBot", "http://foo.bar/z/d", True),
    ("groups-foo-y", GROUPS, "FooBot", "http://foo.bar/y/c", False),
    ("groups-bar-y", GROUPS, "BarBot", "http://foo.bar/y/c", True),
    ("groups-bar-w", GROUPS, "BarBot", "http://foo.bar/w/a", True),
    ("groups-bar-z", GROUPS, "BarBot", "http://foo.bar/z/d", False),
    ("groups-baz-z", GROUPS, "BazBot", "http://foo.bar/z/d", True),
    ("groups-outside-foo", GROUPS, "FooBot", "http://foo.bar/foo/bar/", False),
    ("groups-outside-bar", GROUPS, "BarBot", "http://foo.bar/foo/bar/", False),
    ("groups-outside-baz", GROUPS, "BazBot", "http://foo.bar/foo/bar/", False),
    # ID_LineSyntax_Groups_OtherRules
    *[(f"other-rules-{name}-{agent}",
       f"User-agent: BarBot\n{line}\nUser-agent: *\nDisallow: /\n".replace("BarBot", first),
       agent, "http://foo.bar/", False)
      for name, first, line in (("sitemap", "BarBot", "Sitemap: https://foo.bar/sitemap"),
                                ("unknown", "FooBot", "Invalid-Unknown-Line: unknown"))
      for agent in ("FooBot", "BarBot")],
    # ID_REPLineNamesCaseInsensitive
    *[(f"key-case-{name}-{path}", text, "FooBot", f"http://foo.bar/{path}/y", path == "x")
      for name, text in (("upper", "USER-AGENT: FooBot\nALLOW: /x/\nDISALLOW: /\n"),
                         ("lower", "user-agent: FooBot\nallow: /x/\ndisallow: /\n"),
                         ("camel", "uSeR-aGeNt: FooBot\nAlLoW: /x/\ndIsAlLoW: /\n"))
      for path in ("x", "a")],
    # ID_UserAgentValueCaseInsensitive
    *[(f"agent-case-{value}-{agent}-{path}", CASE_UA.format(value), agent,
       f"http://foo.bar/{path}/y", path == "x")
      for value in ("FOO BAR", "foo bar", "FoO bAr") for agent in ("Foo", "foo")
      for path in ("x", "a")],
    # GoogleOnly_AcceptUserAgentUpToFirstSpace
    ("agent-up-to-space", "User-Agent: *\nDisallow: /\nUser-Agent: Foo Bar\nAllow: /x/\n"
     "Disallow: /\n", "Foo", "http://foo.bar/x/y", True),
    ("agent-with-space-never-matches", "User-Agent: *\nDisallow: /\nUser-Agent: Foo Bar\n"
     "Allow: /x/\nDisallow: /\n", "Foo Bar", "http://foo.bar/x/y", False),
    # ID_GlobalGroups_Secondary
    ("global-empty", "", "FooBot", "http://foo.bar/x/y", True),
    ("global-specific-wins", "user-agent: *\nallow: /\nuser-agent: FooBot\ndisallow: /\n",
     "FooBot", "http://foo.bar/x/y", False),
    ("global-applies", "user-agent: *\nallow: /\nuser-agent: FooBot\ndisallow: /\n",
     "BarBot", "http://foo.bar/x/y", True),
    ("global-none", "user-agent: FooBot\nallow: /\nuser-agent: BarBot\ndisallow: /\n"
     "user-agent: BazBot\ndisallow: /\n", "QuxBot", "http://foo.bar/x/y", True),
    # ID_AllowDisallow_Value_CaseSensitive
    ("value-case-lower", "user-agent: FooBot\ndisallow: /x/\n", "FooBot",
     "http://foo.bar/x/y", False),
    ("value-case-upper", "user-agent: FooBot\ndisallow: /X/\n", "FooBot",
     "http://foo.bar/x/y", True),
    # ID_LongestMatch
    ("longest-1", "user-agent: FooBot\ndisallow: /x/page.html\nallow: /x/\n", "FooBot",
     "http://foo.bar/x/page.html", False),
    ("longest-2a", "user-agent: FooBot\nallow: /x/page.html\ndisallow: /x/\n", "FooBot",
     "http://foo.bar/x/page.html", True),
    ("longest-2b", "user-agent: FooBot\nallow: /x/page.html\ndisallow: /x/\n", "FooBot",
     "http://foo.bar/x/", False),
    ("longest-empty-tie", "user-agent: FooBot\ndisallow: \nallow: \n", "FooBot",
     "http://foo.bar/x/page.html", True),
    ("longest-root-tie", "user-agent: FooBot\ndisallow: /\nallow: /\n", "FooBot",
     "http://foo.bar/x/page.html", True),
    ("longest-x", "user-agent: FooBot\ndisallow: /x\nallow: /x/\n", "FooBot",
     "http://foo.bar/x", False),
    ("longest-x-slash", "user-agent: FooBot\ndisallow: /x\nallow: /x/\n", "FooBot",
     "http://foo.bar/x/", True),
    ("longest-same-tie", "user-agent: FooBot\ndisallow: /x/page.html\nallow: /x/page.html\n",
     "FooBot", "http://foo.bar/x/page.html", True),
    ("longest-wild-1", "user-agent: FooBot\nallow: /page\ndisallow: /*.html\n", "FooBot",
     "http://foo.bar/page.html", False),
    ("longest-wild-2", "user-agent: FooBot\nallow: /page\ndisallow: /*.html\n", "FooBot",
     "http://foo.bar/page", True),
    ("longest-wild-3", "user-agent: FooBot\nallow: /x/page.\ndisallow: /*.html\n", "FooBot",
     "http://foo.bar/x/page.html", True),
    ("longest-wild-4", "user-agent: FooBot\nallow: /x/page.\ndisallow: /*.html\n", "FooBot",
     "http://foo.bar/x/y.html", False),
    ("specific-group-1", "User-agent: *\nDisallow: /x/\nUser-agent: FooBot\nDisallow: /y/\n",
     "FooBot", "http://foo.bar/x/page", True),
    ("specific-group-2", "User-agent: *\nDisallow: /x/\nUser-agent: FooBot\nDisallow: /y/\n",
     "FooBot", "http://foo.bar/y/page", False),
    # ID_Encoding
    ("enc-query-unencoded", "User-agent: FooBot\nDisallow: /\n"
     "Allow: /foo/bar?qux=taz&baz=http://foo.bar?tar&par\n", "FooBot",
     "http://foo.bar/foo/bar?qux=taz&baz=http://foo.bar?tar&par", True),
    ("enc-utf8-pattern", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/ツ\n", "FooBot",
     "http://foo.bar/foo/bar/%E3%83%84", True),
    ("enc-utf8-pattern-raw-url", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/ツ\n",
     "FooBot", "http://foo.bar/foo/bar/ツ", False),
    ("enc-pct-pattern", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%E3%83%84\n",
     "FooBot", "http://foo.bar/foo/bar/%E3%83%84", True),
    ("enc-pct-pattern-raw-url", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%E3%83%84\n",
     "FooBot", "http://foo.bar/foo/bar/ツ", False),
    ("enc-unreserved-plain-url", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%62%61%7A\n",
     "FooBot", "http://foo.bar/foo/bar/baz", False),
    ("enc-unreserved-escaped-url", "User-agent: FooBot\nDisallow: /\n"
     "Allow: /foo/bar/%62%61%7A\n", "FooBot", "http://foo.bar/foo/bar/%62%61%7A", True),
    # ID_SpecialCharacters
    *[(f"special-star-{i}", "User-agent: FooBot\nDisallow: /foo/bar/quz\nAllow: /foo/*/qux\n",
       "FooBot", f"http://foo.bar{path}", ok)
      for i, (path, ok) in enumerate((("/foo/bar/quz", False), ("/foo/quz", True),
                                      ("/foo//quz", True), ("/foo/bax/quz", True)))],
    *[(f"special-dollar-{i}", "User-agent: FooBot\nDisallow: /foo/bar$\nAllow: /foo/bar/qux\n",
       "FooBot", f"http://foo.bar{path}", ok)
      for i, (path, ok) in enumerate((("/foo/bar", False), ("/foo/bar/qux", True),
                                      ("/foo/bar/", True), ("/foo/bar/baz", True)))],
    ("special-comment-1", "User-agent: FooBot\n# Disallow: /\nDisallow: /foo/quz#qux\n"
     "Allow: /\n", "FooBot", "http://foo.bar/foo/bar", True),
    ("special-comment-2", "User-agent: FooBot\n# Disallow: /\nDisallow: /foo/quz#qux\n"
     "Allow: /\n", "FooBot", "http://foo.bar/foo/quz", False),
    # GoogleOnly_IndexHTMLisDirectory
    ("index-html-dir", "User-Agent: *\nAllow: /allowed-slash/index.html\nDisallow: /\n",
     "foobot", "http://foo.com/allowed-slash/", True),
    ("index-html-htm", "User-Agent: *\nAllow: /allowed-slash/index.html\nDisallow: /\n",
     "foobot", "http://foo.com/allowed-slash/index.htm", False),
    ("index-html-exact", "User-Agent: *\nAllow: /allowed-slash/index.html\nDisallow: /\n",
     "foobot", "http://foo.com/allowed-slash/index.html", True),
    ("index-html-other", "User-Agent: *\nAllow: /allowed-slash/index.html\nDisallow: /\n",
     "foobot", "http://foo.com/anyother-url", False),
    # GoogleOnly_DocumentationChecks
    *[(f"doc-fish-{i}", FISH.format("/fish"), "FooBot", f"http://foo.bar{p}", ok)
      for i, (p, ok) in enumerate((
          ("/bar", False), ("/fish", True), ("/fish.html", True), ("/fish/salmon.html", True),
          ("/fishheads", True), ("/fishheads/yummy.html", True), ("/fish.html?id=anything", True),
          ("/Fish.asp", False), ("/catfish", False), ("/?id=fish", False)))],
    *[(f"doc-fishstar-{i}", FISH.format("/fish*"), "FooBot", f"http://foo.bar{p}", ok)
      for i, (p, ok) in enumerate((
          ("/bar", False), ("/fish", True), ("/fish.html", True), ("/fish/salmon.html", True),
          ("/fishheads", True), ("/fishheads/yummy.html", True), ("/fish.html?id=anything", True),
          ("/Fish.bar", False), ("/catfish", False), ("/?id=fish", False)))],
    *[(f"doc-fishdir-{i}", FISH.format("/fish/"), "FooBot", f"http://foo.bar{p}", ok)
      for i, (p, ok) in enumerate((
          ("/bar", False), ("/fish/", True), ("/fish/salmon", True), ("/fish/?salmon", True),
          ("/fish/salmon.html", True), ("/fish/?id=anything", True), ("/fish", False),
          ("/fish.html", False), ("/Fish/Salmon.html", False)))],
    *[(f"doc-php-{i}", FISH.format("/*.php"), "FooBot", f"http://foo.bar{p}", ok)
      for i, (p, ok) in enumerate((
          ("/bar", False), ("/filename.php", True), ("/folder/filename.php", True),
          ("/folder/filename.php?parameters", True), ("//folder/any.php.file.html", True),
          ("/filename.php/", True), ("/index?f=filename.php/", True), ("/php/", False),
          ("/index?php", False), ("/windows.PHP", False)))],
    *[(f"doc-php-end-{i}", FISH.format("/*.php$"), "FooBot", f"http://foo.bar{p}", ok)
      for i, (p, ok) in enumerate((
          ("/bar", False), ("/filename.php", True), ("/folder/filename.php", True),
          ("/filename.php?parameters", False), ("/filename.php/", False),
          ("/filename.php5", False), ("/php/", False), ("/filename?php", False),
          ("/aaaphpaaa", False), ("//windows.PHP", False)))],
    *[(f"doc-fish-php-{i}", FISH.format("/fish*.php"), "FooBot", f"http://foo.bar{p}", ok)
      for i, (p, ok) in enumerate((
          ("/bar", False), ("/fish.php", True), ("/fishheads/catfish.php?parameters", True),
          ("/Fish.PHP", False)))],
    ("doc-order-1", "user-agent: FooBot\nallow: /p\ndisallow: /\n", "FooBot",
     "http://example.com/page", True),
    ("doc-order-2", "user-agent: FooBot\nallow: /folder\ndisallow: /folder\n", "FooBot",
     "http://example.com/folder/page", True),
    ("doc-order-3", "user-agent: FooBot\nallow: /page\ndisallow: /*.htm\n", "FooBot",
     "http://example.com/page.htm", False),
    ("doc-order-4a", "user-agent: FooBot\nallow: /$\ndisallow: /\n", "FooBot",
     "http://example.com/", True),
    ("doc-order-4b", "user-agent: FooBot\nallow: /$\ndisallow: /\n", "FooBot",
     "http://example.com/page.html", False),
    # RFC 9309 section 5.1 (Simple Example): one line per agent and path.
    *[(f"rfc-5.1-{agent}-{path}", RFC_5_1, agent, f"http://www.example.com{path}", ok)
      for agent, path, ok in (
          ("otherbot", "/example/x", False), ("otherbot", "/a.gif", False),
          ("otherbot", "/publications/x", True), ("otherbot", "/other", True),
          ("foobot", "/other", False), ("foobot", "/example/page.html", True),
          ("foobot", "/example/allowed.gif", True), ("foobot", "/example/other.gif", False),
          ("barbot", "/example/page.html", False), ("bazbot", "/example/page.html", False),
          ("barbot", "/example/other", True), ("quxbot", "/example/page.html", True),
          ("quxbot", "/a.gif", True))],
    # RFC 9309 section 5.2 (Longest Match)
    ("rfc-5.2-allowed", RFC_5_2, "foobot", "http://www.example.com/example/page/", True),
    ("rfc-5.2-disallowed", RFC_5_2, "foobot",
     "http://www.example.com/example/page/disallowed.gif", False),
    # RFC 9309 section 2.2.3 (special characters)
    ("rfc-2.2.3-dollar", "User-agent: *\nDisallow: /\nAllow: /this/path/exactly$\n", "x",
     "http://e.com/this/path/exactly", True),
    ("rfc-2.2.3-dollar-more", "User-agent: *\nDisallow: /\nAllow: /this/path/exactly$\n", "x",
     "http://e.com/this/path/exactly/more", False),
    ("rfc-2.2.3-star", "User-agent: *\nDisallow: /\nAllow: /this/*/exactly\n", "x",
     "http://e.com/this/any/thing/exactly", True),
    # ... and its escaped special characters: %2A is a literal '*', %24 a literal '$'
    ("rfc-2.2.3-escaped-star", ESCAPED_STAR, "x",
     "https://www.example.com/path/file-with-a-*.html", False),
    ("rfc-2.2.3-escaped-star-encoded-url", ESCAPED_STAR, "x",
     "https://www.example.com/path/file-with-a-%2a.html", False),
    ("rfc-2.2.3-escaped-star-no-wildcard", ESCAPED_STAR, "x",
     "https://www.example.com/path/file-with-a-b.html", True),
    ("rfc-2.2.3-escaped-dollar", ESCAPED_DOLLAR, "x", "https://www.example.com/path/foo-$",
     False),
    ("rfc-2.2.3-escaped-dollar-no-anchor", ESCAPED_DOLLAR, "x",
     "https://www.example.com/path/foo-", True),
    ("rfc-2.2.3-escaped-dollar-prefix", ESCAPED_DOLLAR, "x",
     "https://www.example.com/path/foo-$/more", False),
    ("rfc-2.2.3-literal-dollar-inside", "User-agent: *\nDisallow: /a$b\n", "x",
     "https://www.example.com/a$b/c", False),
    ("rfc-2.2.3-star-matches-escaped", "User-agent: *\nDisallow: /*.html\n"
     "Allow: /path/file-with-a-%2A\n", "x", "https://www.example.com/path/file-with-a-*", True),
    # RFC 9309 section 2.2.2: /robots.txt is implicitly allowed; percent-encoding table.
    ("rfc-2.2.2-robots-txt", "User-agent: *\nDisallow: /\n", "x", "http://e.com/robots.txt",
     True),
    ("rfc-2.2.2-reserved-kept", "User-agent: *\nDisallow: /foo/bar?baz=https%3A%2F%2Ffoo.bar\n",
     "x", "http://e.com/foo/bar?baz=https%3A%2F%2Ffoo.bar", False),
    ("rfc-2.2.2-reserved-distinct", "User-agent: *\n"
     "Disallow: /foo/bar?baz=https%3A%2F%2Ffoo.bar\n", "x",
     "http://e.com/foo/bar?baz=https://foo.bar", True),
    ("rfc-2.2.2-unreserved-decoded", "User-agent: *\nDisallow: /foo/bar/%62%61%7A\n", "x",
     "http://e.com/foo/bar/baz", False),
    ("rfc-2.2.2-utf8", "User-agent: *\nDisallow: /foo/bar/ツ\n", "x",
     "http://e.com/foo/bar/%E3%83%84", False),
    # Issue 21's Protego quirks, in the same form.
    ("product-token-not-prefix", "User-agent: webc\nDisallow: /\n\nUser-agent: *\nAllow: /\n",
     "webcrawl", "http://a.test/x", True),
    ("unknown-line-keeps-group", "User-agent: webcrawl\nFoo: bar\nUser-agent: other\n"
     "Disallow: /x\n", "webcrawl", "http://a.test/x", False),
]

#: Cases where our answer differs from the reference's on purpose (id -> our answer).
#: Each is a row of the deviation table of docs/results/robustness.md.
DEVIATIONS: dict[str, bool] = {
    # RFC 9309 section 2.2.2: a URL is percent-encoded before matching, so a raw
    # non-ASCII path matches the encoded pattern (Google expects the caller to encode).
    "enc-utf8-pattern-raw-url": True,
    "enc-pct-pattern-raw-url": True,
    # RFC 9309 section 2.2.2's table: %62%61%7A is matched as "baz" (Google: as written).
    "enc-unreserved-plain-url": True,
    # Google-only: "index.html" allowed means "/" allowed; not in RFC 9309.
    "index-html-dir": False,
}


@pytest.mark.parametrize(("robots", "agent", "url", "expected"),
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_reference_case(robots: str, agent: str, url: str, expected: bool,
                        request: pytest.FixtureRequest) -> None:
    case_id = request.node.callspec.id
    want = DEVIATIONS.get(case_id, expected)
    assert RobotsTxt.parse(robots).allowed(url, agent) is want


def test_case_ids_unique_and_deviations_listed_in_the_guide() -> None:
    ids = [c[0] for c in CASES]
    assert len(ids) == len(set(ids))
    guide = GUIDE.read_text(encoding="utf-8")
    expected = {c[0]: c[4] for c in CASES}
    for case_id, ours in DEVIATIONS.items():
        assert expected[case_id] is not ours  # a real difference, not a stale entry
        assert f"`{case_id}`" in guide, f"{case_id} missing from the deviation table of {GUIDE}"


@pytest.mark.parametrize(("token", "valid"), [
    ("Foobot", True), ("Foobot-Bar", True), ("Foo_Bar", True), ("", False), ("ツ", False),
    ("Foobot*", False), (" Foobot ", False), ("Foobot/2.1", False), ("Foobot Bar", False),
])
def test_valid_product_token(token: str, valid: bool) -> None:
    # ID_VerifyValidUserAgentsToObey; RFC 9309 section 2.2.1
    assert is_valid_product_token(token) is valid


@pytest.mark.parametrize("eol", ["\n", "\r\n", "\r", "mixed", "no-final"])
def test_line_endings(eol: str) -> None:
    # ID_LinesNumbersAreCountedCorrectly: four directives in two groups, any line ending.
    lines = ["User-Agent: foo", "Allow: /some/path", "User-Agent: bar", "", "", "Disallow: /"]
    if eol == "mixed":
        text = "User-Agent: foo\nAllow: /some/path\r\nUser-Agent: bar\n\r\n\nDisallow: /"
    elif eol == "no-final":
        text = "\n".join(lines)
    else:
        text = eol.join(lines) + eol
    rt = RobotsTxt.parse(text)
    assert rt.allowed("http://a/other", "foo") and not rt.allowed("http://a/other", "bar")


@pytest.mark.parametrize(("prefix", "group_seen"), [
    (b"\xef\xbb\xbf", True), (b"\xef\xbb", True), (b"\xef", True), (b"\xef\x11\xbf", False),
], ids=["full", "partial-2", "partial-1", "broken"])
def test_byte_order_mark(prefix: bytes, group_seen: bool) -> None:
    # ID_UTF8ByteOrderMarkIsSkipped: a (partial) BOM is skipped; a broken one spoils line 1.
    rt = RobotsTxt.parse(prefix + b"User-Agent: foo\nDisallow: /AnyValue\n")
    assert rt.allowed("http://a/AnyValue", "foo") is not group_seen
    text = RobotsTxt.parse("\ufeffUser-Agent: foo\nDisallow: /AnyValue\n")
    assert not text.allowed("http://a/AnyValue", "foo")


@pytest.mark.parametrize(("prefix", "group_seen"), [
    (b"\xef\xbb\xbf", True), (b"\xef\xbb", True), (b"\xef", True), (b"\xef\x11\xbf", False),
    (b"", True),
], ids=["full", "partial-2", "partial-1", "broken", "none"])
async def test_byte_order_mark_as_the_crawler_reads_it(prefix: bytes, group_seen: bool) -> None:
    """The same file, fetched over HTTP and handed to the parser as the crawler does it
    (decoded text, stored and restored as text): the same answers as from bytes."""
    async def robots(req: RawRequest, writer: asyncio.StreamWriter) -> bool:
        writer.write(response(prefix + b"User-Agent: foo\nDisallow: /AnyValue\n", "200 OK",
                              "Content-Type: text/plain"))
        return True

    settings = CrawlSettings.polite_off(fetch_robots_agent="foo")
    async with RawServer(robots) as server, Fetcher(settings) as fetcher:
        status, body, _, _ = await fetch_robots_file(
            fetcher, server.url("/robots.txt"), "127.0.0.1", settings, lambda host: True)
    assert status == 200 and isinstance(body, str)
    fresh = RobotsCache(settings)
    fresh.learn(1, status, body)
    restored = RobotsCache(settings)
    restored.restore(1, status, body, None)  # a resumed crawl reads the stored text
    for cache in (fresh, restored):
        assert cache.allowed(1, server.url("/AnyValue")) is not group_seen


def test_byte_order_mark_only_at_start() -> None:
    rt = RobotsTxt.parse(b"User-Agent: foo\n\xef\xbb\xbfDisallow: /AnyValue\n")
    assert rt.allowed("http://a/AnyValue", "foo")


@pytest.mark.parametrize("where", ["end", "start"])
def test_sitemap_anywhere(where: str) -> None:
    # ID_NonStandardLineExample_Sitemap
    body = "User-Agent: foo\nAllow: /some/path\nUser-Agent: bar\n\n\n"
    line = "Sitemap: http://foo.bar/sitemap.xml\n"
    rt = RobotsTxt.parse(body + line if where == "end" else line + body)
    assert rt.sitemaps == ["http://foo.bar/sitemap.xml"]


def test_line_too_long() -> None:
    # GoogleOnly_LineTooLong: a line is cut at 2083 * 8 - 1 characters.
    max_len = 2083 * 8
    eol = 1
    longline = "/x/" + "a" * (max_len - 3 - len("disallow: ") + eol - 3)
    rt = RobotsTxt.parse(f"user-agent: FooBot\ndisallow: {longline}/qux\n")
    assert rt.allowed("http://foo.bar/fux", "FooBot")
    assert not rt.allowed(f"http://foo.bar{longline}/fux", "FooBot")
    n = max_len - 3 - len("allow: ") + eol - 3
    line_a, line_b = "/x/" + "a" * n, "/x/" + "b" * n
    rt = RobotsTxt.parse(f"user-agent: FooBot\ndisallow: /\nallow: {line_a}/qux\n"
                         f"allow: {line_b}/qux\n")
    assert not rt.allowed("http://foo.bar/", "FooBot")
    assert rt.allowed(f"http://foo.bar{line_a}/qux", "FooBot")
    assert rt.allowed(f"http://foo.bar{line_b}/fux", "FooBot")


@pytest.mark.parametrize(("url", "path"), [
    ("", "/"), ("http://www.example.com", "/"), ("http://www.example.com/", "/"),
    ("http://www.example.com/a", "/a"), ("http://www.example.com/a/", "/a/"),
    ("http://www.example.com/a/b?c=http://d.e/", "/a/b?c=http://d.e/"),
    ("http://www.example.com/a/b?c=d&e=f#fragment", "/a/b?c=d&e=f"), ("example.com", "/"),
    ("example.com/", "/"), ("example.com/a", "/a"), ("example.com/a/", "/a/"),
    ("example.com/a/b?c=d&e=f#fragment", "/a/b?c=d&e=f"), ("a", "/"), ("a/", "/"),
    ("/a", "/a"), ("a/b", "/b"), ("example.com?a", "/?a"), ("example.com/a;b#c", "/a;b"),
    ("//a/b/c", "/b/c"),
])
def test_path_params_query(url: str, path: str) -> None:
    # TestGetPathParamsQuery
    assert robots_path(url) == path


@pytest.mark.parametrize(("pattern", "path"), [
    ("http://www.example.com", "/x"), ("/a/b/c", "/a/b/c"), ("á", "/á"), ("%aa", "/%aa"),
])
def test_pattern_escaping(pattern: str, path: str) -> None:
    # TestMaybeEscapePattern ("á" -> %C3%A1, "%aa" -> %AA), seen through matching.
    escaped = {"á": "%C3%A1", "%aa": "%AA"}.get(pattern, pattern)
    rt = RobotsTxt.parse(f"User-agent: *\nDisallow: /{escaped.lstrip('/')}\n")
    rt_raw = RobotsTxt.parse(f"User-agent: *\nDisallow: /{pattern.lstrip('/')}\n")
    url = "http://e.com/" + escaped.lstrip("/")
    assert not rt.allowed(url, "x") and not rt_raw.allowed(url, "x")
