"""Issue 21 end to end: a loopback server sees which requests the crawler makes, and the
crawl database (read through the export) shows which links it recorded."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest
from miniweb import MiniWeb, Page, html
from webcrawl.crawler.cli import main
from webcrawl.crawler.engine import Crawler
from webcrawl.storage.export import export_edges

ROBOTS_PAD = "# " + "x" * 78 + "\n"


async def crawl(web: MiniWeb, tmp_path: Path, seeds: list[str], **settings: object) -> Path:
    db = tmp_path / "crawl.db"
    await Crawler(db, seeds, web.settings(**settings)).run()
    return db


def exported_edges(db: Path) -> set[tuple[str, str]]:
    """The recorded links as ``webcrawl export edges`` writes them: (src URL, dst URL)."""
    out = io.StringIO()
    export_edges(db, out)
    return {(src, dst) for src, dst, _ in
            (line.split("\t") for line in out.getvalue().splitlines()[1:])}


def robots_site(w: MiniWeb, robots: Page) -> None:
    w.add("a.test", "/robots.txt", robots)
    w.add("a.test", "/", html("/private", "/public"))
    w.add("a.test", "/private", html())
    w.add("a.test", "/public", html())


def paths(w: MiniWeb) -> set[str]:
    return {h.path for h in w.page_hits()}


# -- robots.txt ---------------------------------------------------------------------

@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
async def test_robots_over_512_kib_obeys_its_first_part(mini_web: MiniWeb, tmp_path: Path,
                                                        chunked: bool) -> None:
    body = "User-agent: *\nDisallow: /private\n" + ROBOTS_PAD * 8000  # ~650 KB
    assert len(body) > 512 * 1024
    robots_site(mini_web, Page(body=body, content_type="text/plain", chunked=chunked))
    await crawl(mini_web, tmp_path, [mini_web.url("a.test")])
    assert paths(mini_web) == {"/", "/public"}


@pytest.mark.parametrize("robots", [
    b"\xef\xbb\xbfUser-agent: *\nDisallow: /private\n",
    "User-agent: webc\nDisallow: /\n\nUser-agent: *\nDisallow: /private\n",
    "User-agent: webcrawl\nX-Unknown-Line: yes\nUser-agent: otherbot\nDisallow: /private\n",
], ids=["byte-order-mark", "group-needs-whole-product-token", "unknown-line-keeps-group"])
async def test_robots_groups_as_rfc_9309_reads_them(mini_web: MiniWeb, tmp_path: Path,
                                                    robots: str | bytes) -> None:
    robots_site(mini_web, Page(body=robots, content_type="text/plain"))
    await crawl(mini_web, tmp_path, [mini_web.url("a.test")])
    assert paths(mini_web) == {"/", "/public"}


async def test_robots_product_token_configured_and_checked(
        mini_web: MiniWeb, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    robots_site(mini_web, Page(body="User-agent: *\nDisallow: /\n\n"
                                    "User-agent: MyBot\nDisallow: /private\n",
                               content_type="text/plain"))
    base = ["crawl", mini_web.url("a.test"), "--resolve", "*.test=127.0.0.1",
            "--min-delay", "0", "--delay-factor", "0", "--quiet"]
    bad = await asyncio.to_thread(main, [*base, "--db", str(tmp_path / "bad.db"),
                                         "--robots-agent", "MyBot/2.1"])
    err = capsys.readouterr().err
    assert bad == 1 and err.count("\n") == 1 and "product token" in err
    assert mini_web.hits == [] and not (tmp_path / "bad.db").exists()
    good = await asyncio.to_thread(main, [*base, "--db", str(tmp_path / "ok.db"),
                                          "--robots-agent", "mybot"])
    assert good == 0
    assert paths(mini_web) == {"/", "/public"}


# -- User-Agent and contact ---------------------------------------------------------

def test_version_matches_pyproject() -> None:
    import tomllib

    from webcrawl.crawler.settings import VERSION
    from webcrawl.storage._version import __version__

    root = Path(__file__).resolve().parents[2]
    pyproject = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    # The version is dynamic: setuptools reads it from webcrawl.storage._version, as the UA does.
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {
        "attr": "webcrawl.storage._version.__version__"}
    assert __version__ == VERSION


@pytest.mark.parametrize("option", [["--contact", "ops@example.org\r\nX-Evil: 1"],
                                    ["--user-agent", "bot/1\nX-Evil: 1"],
                                    ["--contact", "a\x00b"]], ids=["contact", "ua", "nul"])
def test_control_characters_refused_at_parse_time(option: list[str], tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["crawl", "http://a.test/", "--db", str(tmp_path / "c.db"), *option])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and "control characters" in err
    assert not (tmp_path / "c.db").exists()


async def test_user_agent_names_product_version_contact(mini_web: MiniWeb,
                                                        tmp_path: Path) -> None:
    mini_web.add("a.test", "/", html())
    await crawl(mini_web, tmp_path, [mini_web.url("a.test")], fetch_contact="ops@example.org")
    agents = {h["User-Agent"] for h in mini_web.headers}
    from webcrawl.storage._version import __version__

    assert agents == {f"webcrawl/{__version__} (webcrawl, a polite research crawler; "
                      "contact: ops@example.org)"}


@pytest.mark.parametrize(("host", "contact", "warned"), [
    ("mirror.example.org", None, True), ("mirror.example.org", "ops@example.org", False),
    ("a.test", None, False), ("127.0.0.1", None, False)])
async def test_one_warning_without_contact_on_a_public_host(
        mini_web: MiniWeb, tmp_path: Path, caplog: pytest.LogCaptureFixture,
        host: str, contact: str | None, warned: bool) -> None:
    # The engine logs the warning; the CLI configures no handler, so Python's last-resort
    # handler prints it as one stderr line (pytest captures the record instead).
    mini_web.add(host, "/", html("/a", "/b"))
    for p in ("/a", "/b"):
        mini_web.add(host, p, html())
    argv = ["crawl", mini_web.url(host), "--db", str(tmp_path / "c.db"), "--quiet",
            "--resolve", "*=127.0.0.1", "--min-delay", "0", "--delay-factor", "0"]
    if contact:
        argv += ["--contact", contact]
    assert await asyncio.to_thread(main, argv) == 0
    lines = [r.getMessage() for r in caplog.records if "without a contact" in r.getMessage()]
    assert len(lines) == (1 if warned else 0), lines
    assert len(mini_web.page_hits()) >= 3


# -- hosts, links, encodings ------------------------------------------------------

def hosts_and_targets(w: MiniWeb) -> set[tuple[str, str]]:
    return {(h.host, h.raw) for h in w.page_hits()}


@pytest.mark.parametrize(("written", "wire"), [
    ("faß.test", "xn--fa-hia.test"), ("ςa.test", "xn--a-xmb.test"),
], ids=["sharp-s", "final-sigma"])
async def test_idna_2008_hosts(mini_web: MiniWeb, tmp_path: Path, written: str,
                               wire: str) -> None:
    port = mini_web.port
    mini_web.add("a.test", "/", html(f"http://{written}:{port}/p"))
    mini_web.add(wire, "/p", html())
    db = await crawl(mini_web, tmp_path, [mini_web.url("a.test")], scope_hosts=("*.test",))
    assert (wire, "/p") in hosts_and_targets(mini_web)
    assert exported_edges(db) == {(mini_web.url("a.test"), f"http://{wire}:{port}/p")}


@pytest.mark.parametrize(("charset", "body", "raw"), [
    ("windows-1252", "é".encode("cp1252"), "/s?q=%E9"),
    ("iso-8859-1", "é".encode("latin-1"), "/s?q=%E9"),        # a windows-1252 label
    ("shift_jis", "ツ".encode("cp932"), "/s?q=%83c"),
    ("utf-8", "é".encode(), "/s?q=%C3%A9"),
    ("windows-1252", "€".encode("cp1252") + b"&x=\xe2\x82", "/s?q=%80&x=%E2%82"),
], ids=["windows-1252", "latin1-label", "shift_jis", "utf-8", "bytes-kept"])
async def test_query_encoded_in_the_page_encoding(mini_web: MiniWeb, tmp_path: Path,
                                                  charset: str, body: bytes, raw: str) -> None:
    page = b'<!doctype html><a href="/s?q=' + body + b'">s</a>'
    mini_web.add("a.test", "/", Page(body=page, content_type=f"text/html; charset={charset}"))
    await crawl(mini_web, tmp_path, [mini_web.url("a.test")])
    assert [h.raw for h in mini_web.page_hits() if h.raw.startswith("/s")] == [raw]


@pytest.mark.parametrize(("content_type", "body", "raw"), [
    # utf-7 is no WHATWG label: ignored, the page falls back to UTF-8 (valid here), so
    # '+AD8-' stays literal text; a utf-7 decoder would have made it '?'.
    ("text/html; charset=utf-7", b'<a href="/u+AD8-q=1">u</a>', "/u+AD8-q=1"),
    # unknown label, invalid UTF-8: windows-1252, every byte a character, no U+FFFD.
    ("text/html; charset=x-nonsense", b'<a href="/v?q=\xe9\x81">v</a>', "/v?q=%E9%81"),
    # <meta> naming utf-7 is ignored too.
    ("text/html", b'<meta charset="utf-7"><a href="/w?q=\xe9">w</a>', "/w?q=%E9"),
], ids=["utf-7-header", "unknown-label", "utf-7-meta"])
async def test_refused_charsets_fall_back_like_browsers(mini_web: MiniWeb, tmp_path: Path,
                                                        content_type: str, body: bytes,
                                                        raw: str) -> None:
    mini_web.add("a.test", "/", Page(body=b"<!doctype html>" + body, content_type=content_type))
    db = await crawl(mini_web, tmp_path, [mini_web.url("a.test")])
    targets = [url for _, url in exported_edges(db)]
    assert len(targets) == 1 and "%EF%BF%BD" not in targets[0]
    assert targets[0] == mini_web.url("a.test", raw)


async def test_links_browsers_follow(mini_web: MiniWeb, tmp_path: Path) -> None:
    w, port = mini_web, mini_web.port
    w.add("a.test", "/", html(
        f"https:b.test:{port}/tls",            # another scheme: names a host
        f"///a.test:{port}/triple",            # any number of slashes before the host
        f"http://us[er]:p@ss@a.test:{port}/userinfo",  # host after the last '@'
        f"http://%61.test:{port}/pct-host",    # percent-encoded host
        "",                                    # href="": the page itself
        "#top",
    ))
    for p in ("/triple", "/userinfo", "/pct-host"):
        w.add("a.test", p, html())
    db = await crawl(w, tmp_path, [w.url("a.test")])
    a = w.url("a.test")
    assert exported_edges(db) == {
        (a, f"https://b.test:{port}/tls"), (a, w.url("a.test", "/triple")),
        (a, w.url("a.test", "/userinfo")), (a, w.url("a.test", "/pct-host")), (a, a)}
    assert {h.path for h in w.page_hits()} == {"/", "/triple", "/userinfo", "/pct-host"}


async def test_ip_spellings_are_one_server(mini_web: MiniWeb, tmp_path: Path) -> None:
    w, port = mini_web, mini_web.port
    spellings = ["127.0.0.1", "0x7f.0.0.1", "2130706433", "127.1", "0177.0.0.01", "127.0.1"]
    w.add("a.test", "/", html(*(f"http://{s}:{port}/x" for s in spellings),
                              "http://[::1]/v6", "http://[0:0:0:0:0:0:0:1]/v6",
                              "http://[0::1]:80/v6"))
    w.add("127.0.0.1", "/x", html())
    db = await crawl(w, tmp_path, [w.url("a.test")],
                     scope_hosts=("a.test", "127.0.0.1"))
    assert exported_edges(db) == {(w.url("a.test"), f"http://127.0.0.1:{port}/x"),
                                  (w.url("a.test"), "http://[::1]/v6")}
    assert [(h.host, h.path) for h in w.page_hits()].count(("127.0.0.1", "/x")) == 1


# -- the link cap ----------------------------------------------------------------------

def many_links(n: int) -> str:
    return html(*(f"/p{i}" for i in range(n)))


async def test_5000_links_kept_by_default(mini_web: MiniWeb, tmp_path: Path) -> None:
    mini_web.add("a.test", "/", many_links(5000))
    db = await crawl(mini_web, tmp_path, [mini_web.url("a.test")], scope_max_pages=1)
    assert len(exported_edges(db)) == 5000
    from webcrawl.storage.reader import CrawlReader

    with CrawlReader(db) as reader:
        assert reader.link_cuts() == []


async def test_cut_page_flagged_in_store_summary_and_report(
        mini_web: MiniWeb, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mini_web.add("a.test", "/", many_links(300))
    db = tmp_path / "cut.db"
    argv = ["crawl", mini_web.url("a.test"), "--db", str(db), "--resolve", "*.test=127.0.0.1",
            "--min-delay", "0", "--delay-factor", "0", "--max-pages", "1",
            "--max-links-per-page", "120"]
    assert await asyncio.to_thread(main, argv) == 0
    err = capsys.readouterr().err
    assert "1 pages with links cut at --max-links-per-page" in err
    edges = exported_edges(db)
    assert edges == {(mini_web.url("a.test"), mini_web.url("a.test", f"/p{i}"))
                     for i in range(120)}
    from webcrawl.storage.reader import CrawlReader

    with CrawlReader(db) as reader:
        cuts = reader.link_cuts()
        assert [(reader.url_strings([src])[0], kept, dropped) for src, kept, dropped in cuts] \
            == [(mini_web.url("a.test"), 120, 180)]
    report = tmp_path / "report.html"
    assert await asyncio.to_thread(main, ["report", "--db", str(db), "--out", str(report)]) == 0
    text = report.read_text(encoding="utf-8")
    assert "Pages whose links were cut" in text and mini_web.url("a.test") in text


async def test_cut_count_survives_resume(mini_web: MiniWeb, tmp_path: Path) -> None:
    mini_web.add("a.test", "/", many_links(300))
    db = tmp_path / "c.db"
    first = await Crawler(db, [mini_web.url("a.test")],
                          mini_web.settings(links_max_per_page=120, scope_max_pages=1)).run()
    assert first.links_cut_pages == 1
    # Resuming (here a finished crawl) counts the cuts recorded before, not only its own.
    again = await Crawler(db, [], mini_web.settings(links_max_per_page=120, scope_max_pages=1),
                          resume=True).run()
    assert again.links_cut_pages == 1 and again.resumed_pages == 1
