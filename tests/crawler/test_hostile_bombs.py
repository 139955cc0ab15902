"""Compression bombs against the body cap (issue 19).

``fetch_max_body`` caps the *decoded* body for every content coding: a page (or a
robots.txt) that inflates to 100 MB or 1 GiB ends ``too_large`` with exactly the cap
kept, whatever its Content-Length says.  Peak memory is measured by
``benchmarks/bench_bombs.py`` (figures in docs/results/robustness.md), not here.
"""

from __future__ import annotations

import asyncio
import gzip
import sqlite3
import zlib
from pathlib import Path

import pytest
from miniweb import MiniWeb, Page, html
from webcrawl.crawler.codings import PIECE, BodyDecoder, CorruptBody, UnsupportedCoding
from webcrawl.crawler.engine import Crawler
from webcrawl.crawler.fetcher import Fetcher
from webcrawl.fixtures.bombs import brotli_bomb, deflate_bomb, gzip_bomb

pytestmark = pytest.mark.timeout(120)

MiB = 1 << 20
CAP = 5 * MiB          # the default fetch_max_body
ROBOTS_CAP = 512 * 1024  # the default robots_max_size


@pytest.fixture(scope="module")
def bombs() -> dict[str, bytes]:
    return {"gzip100m": gzip_bomb(100 * MiB), "gzip1g": gzip_bomb(1 << 30),
            "deflate": deflate_bomb(100 * MiB), "rawdeflate": deflate_bomb(100 * MiB,
                                                                           wrapped=False),
            "br": brotli_bomb(100 * MiB), "robots": gzip_bomb(200 * MiB)}


# -- the decoder alone ---------------------------------------------------------------
@pytest.mark.parametrize("coding", ["gzip", "deflate", "rawdeflate", "br"])
def test_decoder_recovers_bodies_exactly_in_bounded_pieces(coding: str) -> None:
    size = 3 * MiB + 12345
    data = {"gzip": lambda: gzip_bomb(size), "deflate": lambda: deflate_bomb(size),
            "rawdeflate": lambda: deflate_bomb(size, wrapped=False),
            "br": lambda: brotli_bomb(size)}[coding]()
    header = "deflate" if coding == "rawdeflate" else coding
    dec = BodyDecoder(header)
    out = bytearray()
    longest = 0
    for start in range(0, len(data), 1000):  # odd feeding boundaries
        for piece in dec.feed(data[start:start + 1000]):
            longest = max(longest, len(piece))
            out += piece
    # the independent decoder of the standard library / brotli agrees
    if coding == "br":
        import brotli
        expected = brotli.decompress(data)
    else:
        expected = zlib.decompress(data, {"gzip": 31, "deflate": 15, "rawdeflate": -15}[coding])
    assert bytes(out) == expected and len(out) == size
    assert longest <= PIECE


def test_decoder_chained_codings_and_multi_member_gzip() -> None:
    body = b"<p>" + bytes(range(256)) * 1000
    twice = gzip.compress(gzip.compress(body))
    assert b"".join(BodyDecoder("gzip, gzip").feed(twice)) == body
    members = gzip.compress(body[:1000]) + gzip.compress(body[1000:])
    assert b"".join(BodyDecoder("gzip").feed(members)) == body
    assert b"".join(BodyDecoder("identity").feed(body)) == body
    assert b"".join(BodyDecoder(None).feed(body)) == body


def test_decoder_rejects_corrupt_and_unknown() -> None:
    with pytest.raises(CorruptBody):
        list(BodyDecoder("gzip").feed(b"\x1f\x8b\x08\x00garbage-garbage-garbage"))
    with pytest.raises(UnsupportedCoding):
        BodyDecoder("compress")


# -- the fetcher -----------------------------------------------------------------------
async def test_fetcher_yields_to_the_loop_while_reading_a_bomb(
        mini_web: MiniWeb, bombs: dict[str, bytes]) -> None:
    """A ticker task gets a turn at least once per decoded MiB of one bomb."""
    w = mini_web
    w.add("a.test", "/bomb", Page(body=bombs["gzip1g"], headers={"Content-Encoding": "gzip"}))
    cap = 64 * MiB
    ticks = 0
    done = False

    async def ticker() -> None:
        nonlocal ticks
        while not done:
            ticks += 1
            await asyncio.sleep(0)

    async with Fetcher(w.settings(fetch_max_body=cap, fetch_total_timeout=60.0,
                                  fetch_read_timeout=30.0)) as fetcher:
        task = asyncio.create_task(ticker())
        await asyncio.sleep(0)
        before = ticks
        result = await fetcher.fetch(w.url("a.test", "/bomb"))
        during = ticks - before
        done = True
        await task
    assert result.too_large and result.size == cap
    assert result.body.startswith(b"<!doctype html>")
    assert during >= cap // MiB - 1


# -- whole crawls ----------------------------------------------------------------------
def _rows(db: Path) -> tuple[dict[str, tuple[str, int | None]], dict[str, int | None]]:
    conn = sqlite3.connect(db)
    try:
        pages = {url: (outcome, size) for url, outcome, size in conn.execute(
            "SELECT u.url, u.outcome, f.size FROM urls u LEFT JOIN fetches f"
            " ON f.url_id = u.id")}
        robots = {name: (None if body is None else len(body.encode()))
                  for name, body in conn.execute("SELECT name, robots_body FROM hosts")}
    finally:
        conn.close()
    return pages, robots


async def test_bombs_end_too_large_with_the_cap_kept(
        mini_web: MiniWeb, bombs: dict[str, bytes], tmp_path: Path) -> None:
    w = mini_web
    paths = {"/gzip100m": ("gzip100m", "gzip"), "/gzip1g": ("gzip1g", "gzip"),
             "/deflate": ("deflate", "deflate"), "/rawdeflate": ("rawdeflate", "deflate"),
             "/br": ("br", "br")}
    small = gzip.compress(html("/after").encode())
    w.add("a.test", "/", Page(body=small, headers={"Content-Encoding": "gzip"}))
    w.add("a.test", "/after", html(*paths, "/chunked1g"))
    for path, (name, coding) in paths.items():
        w.add("a.test", path, Page(body=bombs[name], headers={"Content-Encoding": coding}))
    w.add("a.test", "/chunked1g", Page(body=bombs["gzip1g"], chunked=True,
                                       headers={"Content-Encoding": "gzip"}))
    db = tmp_path / "c.db"
    await Crawler(db, [w.url("a.test")], w.settings(fetch_total_timeout=60.0,
                                                    fetch_read_timeout=30.0)).run()
    pages, _ = _rows(db)
    # an ordinary gzip page is decoded and its links followed (the cap is not a blanket)
    assert pages[w.url("a.test")] == ("fetched", len(html("/after")))
    assert pages[w.url("a.test", "/after")][0] == "fetched"
    for path in [*paths, "/chunked1g"]:
        assert pages[w.url("a.test", path)] == ("too_large", CAP), path


async def test_robots_bomb_is_cut_at_robots_max_size(
        mini_web: MiniWeb, bombs: dict[str, bytes], tmp_path: Path) -> None:
    w = mini_web
    w.add("a.test", "/robots.txt", Page(body=bombs["robots"], content_type="text/plain",
                                        headers={"Content-Encoding": "gzip"}))
    w.add("a.test", "/", html("/x"))
    w.add("a.test", "/x", html())
    db = tmp_path / "c.db"
    await Crawler(db, [w.url("a.test")], w.settings()).run()
    pages, robots = _rows(db)
    stored = robots[f"a.test:{w.port}"]
    assert stored is not None and stored <= ROBOTS_CAP
    # the kept prefix holds no rule, so the site stays crawlable
    assert pages[w.url("a.test", "/x")][0] == "fetched"


async def test_corrupt_and_unknown_codings_are_network_errors(
        mini_web: MiniWeb, tmp_path: Path) -> None:
    w = mini_web
    w.add("a.test", "/", html("/corrupt", "/unknown"))
    w.add("a.test", "/corrupt", Page(body=b"\x1f\x8b\x08\x00" + b"\xff" * 500,
                                     headers={"Content-Encoding": "gzip"}))
    w.add("a.test", "/unknown", Page(body=b"whatever",
                                     headers={"Content-Encoding": "x-made-up"}))
    db = tmp_path / "c.db"
    await Crawler(db, [w.url("a.test")], w.settings(retry_attempts=1)).run()
    pages, _ = _rows(db)
    assert pages[w.url("a.test", "/corrupt")][0] == "network_error"
    assert pages[w.url("a.test", "/unknown")][0] == "network_error"


async def test_big_pages_are_parsed_off_the_event_loop(
        mini_web: MiniWeb, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pages of links_thread_above bytes or more are parsed in a worker thread."""
    import threading

    import webcrawl.crawler.downloader
    from webcrawl.crawler.links import extract_links

    threads: dict[str, str] = {}

    def spy(body: bytes, url: str, **kwargs: object) -> object:
        threads[url] = threading.current_thread().name
        return extract_links(body, url, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(webcrawl.crawler.downloader, "extract_links", spy)
    w = mini_web
    w.add("a.test", "/", html("/big", "/small"))
    w.add("a.test", "/big", html("/from-big") + "<p>x</p>" * 5000)  # ~40 KB
    w.add("a.test", "/small", html("/from-small"))
    w.add("a.test", "/from-big", html())
    w.add("a.test", "/from-small", html())
    db = tmp_path / "c.db"
    await Crawler(db, [w.url("a.test")], w.settings(links_thread_above=20_000)).run()
    main = threading.main_thread().name
    assert threads[w.url("a.test", "/big")] != main
    assert threads[w.url("a.test", "/small")] == main
    pages, _ = _rows(db)
    # the links of both were recorded and followed alike
    assert pages[w.url("a.test", "/from-big")][0] == "fetched"
    assert pages[w.url("a.test", "/from-small")][0] == "fetched"
