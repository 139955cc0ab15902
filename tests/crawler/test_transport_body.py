"""Bodies that end badly or arrive in a transfer coding.

* A body without Content-Length or chunked coding runs to the close: a clean close (FIN)
  ends it, a reset (RST, sent here with ``SO_LINGER`` 0) cuts it and is an error, never a
  complete 200.
* ``Transfer-Encoding: gzip`` (alone, read to the close, or before ``chunked``) is
  decoded like ``Content-Encoding``, under the same cap.
* A coding header sent on several lines is read as curl reads it (lib/http.c builds one
  decoder stack from every ``Content-Encoding`` line, in order, and refuses a sixth
  decoder, ``identity`` counted; so does curl 7.88.1 on these cases): the lines' codings
  are undone last listed first.
"""

from __future__ import annotations

import asyncio
import gzip
import zlib

import brotli
import pytest
from rawweb import RawRequest, RawServer, reset
from webcrawl.crawler.fetcher import Fetcher
from webcrawl.crawler.http1 import Http1Client
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.storage.errors import NetworkError

pytestmark = pytest.mark.timeout(30)

HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n"


@pytest.mark.parametrize("ending", ["fin", "rst"])
async def test_a_reset_cuts_a_body_read_to_the_close(ending: str) -> None:
    """The client has read part of the body when the server ends the connection."""
    part_read = asyncio.Event()

    async def answer(req: RawRequest, writer: asyncio.StreamWriter) -> bool:
        writer.write(HEAD + b"first part")
        await part_read.wait()
        if ending == "rst":
            reset(writer)
        return False  # the server closes (a FIN) when it was not reset

    async with RawServer(answer) as server:
        client = Http1Client(limit=4, keepalive=5.0, connect_timeout=5.0, read_timeout=5.0,
                             total_timeout=10.0)
        try:
            resp = await client.request("GET", server.url(), [])
            assert (resp.status, await resp.read()) == (200, b"first part")
            part_read.set()
            if ending == "fin":
                assert await resp.read() == b""  # complete: the close was its end
            else:
                with pytest.raises(NetworkError, match="reset before the end of the body"):
                    await resp.read()
            resp.close()
            assert client.open_connections == 0
        finally:
            await client.close()


async def test_fetcher_reports_a_reset_body_as_a_network_error() -> None:
    async def answer(req: RawRequest, writer: asyncio.StreamWriter) -> bool:
        writer.write(HEAD + b"x" * 50_000)
        await writer.drain()
        reset(writer)
        return False

    async with RawServer(answer) as server, Fetcher(CrawlSettings.polite_off()) as f:
        with pytest.raises(NetworkError, match=f"fetching {server.url()}"):
            await f.fetch(server.url())


def chunked(data: bytes, size: int = 1000) -> bytes:
    parts = [data[i:i + size] for i in range(0, len(data), size)]
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in parts) + b"0\r\n\r\n"


PAGE = b"<!doctype html><p>" + b"transfer coded " * 500 + b"</p>"


@pytest.mark.parametrize(("headers", "body", "closes"), [
    ("Transfer-Encoding: gzip, chunked", chunked(gzip.compress(PAGE)), False),
    ("Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked", chunked(gzip.compress(PAGE)),
     False),
    ("Transfer-Encoding: gzip", gzip.compress(PAGE), True),
    ("Transfer-Encoding: deflate, chunked", chunked(zlib.compress(PAGE)), False),
    ("Content-Encoding: gzip\r\nTransfer-Encoding: gzip, chunked",
     chunked(gzip.compress(gzip.compress(PAGE))), False),
], ids=["gzip-chunked", "two-header-lines", "gzip-to-close", "deflate-chunked",
        "content-and-transfer"])
async def test_transfer_codings_are_decoded(headers: str, body: bytes, closes: bool) -> None:
    async def answer(req: RawRequest, writer: asyncio.StreamWriter) -> bool:
        writer.write(f"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n{headers}\r\n\r\n"
                     .encode() + body)
        return not closes

    async with RawServer(answer) as server, Fetcher(CrawlSettings.polite_off()) as f:
        for _ in range(2):
            result = await f.fetch(server.url())
            assert (result.status, result.body, result.too_large) == (200, PAGE, False)
    assert server.connections == (2 if closes else 1)


async def test_a_transfer_coded_bomb_stops_at_the_cap() -> None:
    bomb = gzip.compress(b"\0" * 20_000_000, compresslevel=9)  # ~20 KB on the wire

    async def answer(req: RawRequest, writer: asyncio.StreamWriter) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
                     + chunked(bomb, 4096))
        return True

    async with RawServer(answer) as server, \
            Fetcher(CrawlSettings.polite_off(fetch_max_body=100_000)) as f:
        result = await f.fetch(server.url())
    assert (result.too_large, result.size, result.body.count(0)) == (True, 100_000, 100_000)


async def test_an_unknown_transfer_coding_is_a_network_error() -> None:
    async def answer(req: RawRequest, writer: asyncio.StreamWriter) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: compress, chunked\r\n\r\n"
                     + chunked(b"\x1f\x9d whatever"))
        return True

    async with RawServer(answer) as server, Fetcher(CrawlSettings.polite_off()) as f:
        with pytest.raises(NetworkError, match="unsupported Transfer-Encoding 'compress'"):
            await f.fetch(server.url())


def _gzip(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


@pytest.mark.parametrize(("lines", "body"), [
    (["gzip", "gzip"], _gzip(_gzip(PAGE))),
    (["gzip", "br"], brotli.compress(_gzip(PAGE))),
    (["br", "gzip"], _gzip(brotli.compress(PAGE))),
    (["deflate, gzip", "identity"], _gzip(zlib.compress(PAGE))),
    (["identity", "gzip"], _gzip(PAGE)),
    (["gzip", ""], _gzip(PAGE)),
    (["gzip, gzip", "gzip", "gzip"], _gzip(_gzip(_gzip(_gzip(PAGE))))),
    (["gzip, gzip, gzip", "identity, gzip"], _gzip(_gzip(_gzip(_gzip(PAGE))))),
], ids=["gzip-gzip", "gzip-br", "br-gzip", "deflate-gzip-identity", "identity-gzip",
        "gzip-empty", "four", "five-with-identity"])
async def test_content_encoding_lines_are_decoded_like_curl(lines: list[str],
                                                             body: bytes) -> None:
    head = "".join(f"Content-Encoding: {line}\r\n" for line in lines)

    async def answer(req: RawRequest, writer: asyncio.StreamWriter) -> bool:
        writer.write(f"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n{head}"
                     f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
        return True

    async with RawServer(answer) as server, Fetcher(CrawlSettings.polite_off()) as f:
        result = await f.fetch(server.url())
    assert (result.status, result.body, result.is_html) == (200, PAGE, True)


@pytest.mark.parametrize("lines", [["gzip, gzip, gzip", "identity, identity, gzip"],
                                   ["identity"] * 6],
                         ids=["six-over-two-lines", "six-identity"])
async def test_more_than_five_codings_are_refused_like_curl(lines: list[str]) -> None:
    body = _gzip(_gzip(_gzip(_gzip(PAGE))))
    head = "".join(f"Content-Encoding: {line}\r\n" for line in lines)

    async def answer(req: RawRequest, writer: asyncio.StreamWriter) -> bool:
        writer.write(f"HTTP/1.1 200 OK\r\n{head}Content-Length: {len(body)}\r\n\r\n"
                     .encode() + body)
        return True

    async with RawServer(answer) as server, Fetcher(CrawlSettings.polite_off()) as f:
        with pytest.raises(NetworkError, match="more than 5 codings in Content-Encoding"):
            await f.fetch(server.url())
