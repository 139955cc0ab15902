"""Issue 21 end to end: a loopback server sees which requests the crawler makes, and the
crawl database (read through the export) shows which links it recorded."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest
from miniweb import MiniWeb, Page, html

from crawler.cli import main
from crawler.engine import Crawler
from storage.export import export_edges, export_pages

ROBOTS_PAD = "# " + "x" * 78 + "\n"


async def crawl(web: MiniWeb, tmp_path: Path, seeds: list[str], **settings: object) -> Path:
    db = tmp_path / "crawl.db"
    await Crawler(db, seeds, web.settings(**settings)).run()
    return db


def exported_edges(db: Path) -> set[tuple[str, str]]:
    """The recorded links as ``webcrawl export`` writes them, as (src URL, dst URL)."""
    pages, edges = io.StringIO(), io.StringIO()
    export_pages(db, pages)
    export_edges(db, edges)
    rows = [line.split("\t") for line in pages.getvalue().splitlines()]
    url_col = rows[0].index("url")
    id_col = rows[0].index("id") if "id" in rows[0] else None
    assert id_col is not None
    urls = {r[id_col]: r[url_col] for r in rows[1:]}
    return {(urls[s], urls[d]) for s, d, _ in
            (line.split("\t") for line in edges.getvalue().splitlines()[1:])}


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

    from crawler.settings import VERSION
    from storage._version import __version__

    root = Path(__file__).resolve().parents[2]
    pyproject = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    # The version is dynamic: setuptools reads it from storage._version, as the UA does.
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {
        "attr": "storage._version.__version__"}
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
    from storage._version import __version__

    assert agents == {f"webcrawl/{__version__} (+https://github.com/webcrawl/webcrawl; "
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
