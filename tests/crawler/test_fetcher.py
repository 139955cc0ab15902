"""The fetcher: headers, conditional requests, politeness, the cap, HTML detection, decoding."""

from __future__ import annotations

import asyncio

import pytest
from miniweb import MiniWeb, Page, html
from rawweb import RawRequest, RawServer, response
from webcrawl.crawler.fetcher import Fetcher, _charset, decode_body, is_html


async def test_user_agent_and_conditional_get(mini_web: MiniWeb) -> None:
    mini_web.add("a.test", "/", Page(body=html(), etag='"v1"',
                                     headers={"Last-Modified": "Mon, 01 Jan 2024 00:00:00 GMT"}))
    settings = mini_web.settings(fetch_user_agent="testbot/1 (+http://example.org/bot)")
    async with Fetcher(settings) as f:
        first = await f.fetch(mini_web.url("a.test"))
        assert first.status == 200 and first.etag == '"v1"'
        assert first.last_modified == "Mon, 01 Jan 2024 00:00:00 GMT"
        again = await f.fetch(mini_web.url("a.test"), etag=first.etag,
                              last_modified=first.last_modified)
        assert again.status == 304 and again.body == b""
    assert mini_web.headers[0]["User-Agent"] == "testbot/1 (+http://example.org/bot)"
    assert mini_web.headers[1]["If-None-Match"] == '"v1"'
    assert mini_web.headers[1]["If-Modified-Since"] == "Mon, 01 Jan 2024 00:00:00 GMT"
    assert "If-None-Match" not in mini_web.headers[0]


async def test_one_connection_per_host(mini_web: MiniWeb) -> None:
    """Concurrent fetches of one host share one kept-alive connection, one at a time."""

    async def slow(req: RawRequest, writer: asyncio.StreamWriter) -> bool:
        await asyncio.sleep(0.01)  # lets the other fetches pile up meanwhile
        writer.write(response(html().encode(), "200 OK", "Content-Type: text/html"))
        return True

    async with RawServer(slow) as server, Fetcher(mini_web.settings()) as f:
        results = await asyncio.gather(*(f.fetch(server.url(f"/{i}", host="a.test"))
                                         for i in range(5)))
        assert [r.status for r in results] == [200] * 5
    assert (server.connections, server.max_in_flight) == (1, 1)
    assert [r.path for r in server.requests] == [f"/{i}" for i in range(5)]


async def test_result_fields_and_headers_as_sent(mini_web: MiniWeb) -> None:
    async def answer(req: RawRequest, writer: asyncio.StreamWriter) -> bool:
        status, extra = {"/moved": ("301 Moved", ["Location: /caf\xc3\xa9", "Retry-After: 5"]),
                         "/busy": ("503 Busy", ["Retry-After: 7", "Location: /no"])
                         }.get(req.path, ("200 OK", []))
        writer.write(response(b"<p>caf\xe9", status, "content-type: Text/HTML; Charset=\"latin1\"",
                              "ETag: \"e1\"", "Date: Mon, 01 Jan 2024 00:00:00 GMT",
                              "X-Twice: 1", "X-Twice: 2", *extra))
        return True

    async with RawServer(answer) as server, Fetcher(mini_web.settings()) as f:
        ok = await f.fetch(server.url("/"), etag='"e0"')
        moved = await f.fetch(server.url("/moved"))
        busy = await f.fetch(server.url("/busy"))
    assert (ok.status, ok.reason, ok.content_type, ok.charset) == (200, "OK", "text/html", "latin1")
    assert (ok.etag, ok.date, ok.text()) == ('"e1"', "Mon, 01 Jan 2024 00:00:00 GMT", "<p>café")
    assert (ok.location, ok.retry_after) == (None, None)
    assert ("X-Twice", "1") in ok.headers and ("X-Twice", "2") in ok.headers
    assert ok.headers[1] == ("content-type", 'Text/HTML; Charset="latin1"')  # as received
    assert [k for k, _ in ok.request_headers] == [
        "Host", "User-Agent", "Accept", "Accept-Encoding", "If-None-Match"]
    sent = server.requests[0]
    assert ok.request_headers == tuple(sent.headers)  # exactly what went on the wire
    assert (moved.status, moved.reason, moved.location, moved.retry_after) == \
        (301, "Moved", "/café", None)  # raw UTF-8 in Location, read as aiohttp read it
    assert (busy.location, busy.retry_after) == (None, 7.0)


async def test_cap_drops_the_connection(mini_web: MiniWeb) -> None:
    async def big(req: RawRequest, writer: asyncio.StreamWriter) -> bool:
        writer.write(response(b"x" * 1_000_000, "200 OK", "Content-Type: text/plain"))
        return True

    async with RawServer(big) as server, \
            Fetcher(mini_web.settings(fetch_max_body=1000)) as f:
        first = await f.fetch(server.url())
        assert (first.too_large, first.size) == (True, 1000)
        await server.wait_closed(1)  # the rest was not downloaded
        second = await f.fetch(server.url(), max_body=2_000_000)
        assert (second.too_large, second.size) == (False, 1_000_000)
    assert server.connections == 2


@pytest.mark.parametrize(("params", "expected"), [
    ("; charset=UTF-8", "UTF-8"), ('; charset="utf-8"', "utf-8"), ("; CHARSET = koi8-r", "koi8-r"),
    (";;charset=x", "x"), ("; foo=bar", None), ("; charset=", None), ("; charset", None),
    ("; charset=a; charset=b", "a"), ('; charset="utf\\"8"', 'utf"8'),
])
def test_charset_as_aiohttp_reads_it(params: str, expected: str | None) -> None:
    assert _charset(params) == expected
    from aiohttp.helpers import parse_content_type  # the reference

    assert (parse_content_type("text/html" + params)[1].get("charset") or None) == expected


@pytest.mark.parametrize(("ctype", "body", "expected"), [
    ("text/html", b"", True), ("application/xhtml+xml", b"<x/>", True),
    ("", b"\xef\xbb\xbf  <!DOCTYPE html><p>", True), ("application/octet-stream", b"<HTML>", True),
    ("", b"%PDF-1.4", False), ("", b"<ab>", False), ("image/png", b"<html>", False),
])
def test_is_html(ctype: str, body: bytes, expected: bool) -> None:
    assert is_html(ctype, body) is expected


@pytest.mark.parametrize(("body", "declared", "expected"), [
    ("café".encode("windows-1252"), "windows-1252", "café"),
    ("café".encode(), None, "café"),
    ('<meta charset="iso-8859-1">café'.encode("latin-1"), None, '<meta charset="iso-8859-1">café'),
    ("café".encode("windows-1252"), "utf-8", "caf\ufffd"),
    ("café".encode(), "no-such-codec", "café"),
])
def test_decode_body(body: bytes, declared: str | None, expected: str) -> None:
    assert decode_body(body, declared) == expected
