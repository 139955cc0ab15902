"""The fetcher: headers, conditional requests, HTML detection, decoding."""

from __future__ import annotations

import pytest
from miniweb import MiniWeb, Page, html

from crawler.fetcher import Fetcher, decode_body, is_html


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
    for i in range(5):
        mini_web.add("a.test", f"/{i}", html())
    async with Fetcher(mini_web.settings()) as f:
        for i in range(5):
            await f.fetch(mini_web.url("a.test", f"/{i}"))
        session = f._session
        assert session is not None
        connector = session.connector
        assert connector is not None and connector.limit_per_host == 1


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
