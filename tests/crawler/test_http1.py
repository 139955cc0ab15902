"""The HTTP/1.1 client against scripted loopback servers (:mod:`rawweb`).

Keep-alive and the one-connection-per-origin rule are asserted from the server's side
(connections opened and closed, requests in flight); timeouts by their outcome, never by
a duration.
"""

from __future__ import annotations

import asyncio
import gc
import ssl
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import webcrawl.crawler.http1.dial
from http1tools import client_of, event_loops, get, make_client, run_on, until
from rawweb import RawRequest, RawServer, response, tls_for
from webcrawl.crawler.http1.wire import HEADER_LIMIT
from webcrawl.crawler.resolve import HostGlobResolver, make_ssl_context, parse_rules
from webcrawl.storage.errors import FetchTimeoutError, NetworkError

pytestmark = pytest.mark.timeout(30)


# -- keep-alive and politeness ---------------------------------------------------------
async def test_keep_alive_reuses_one_connection() -> None:
    async with RawServer() as server, client_of() as client:
        for path in ("/a", "/b?x=1", "/c"):
            resp, body = await get(client, server.url(path))
            assert (resp.status, resp.reason, body) == (200, "OK", path.encode())
        assert resp.request_headers == (("Host", f"127.0.0.1:{server.port}"),
                                        ("User-Agent", "test/1"))
        assert resp.headers == [("Content-Length", "2")]
    assert server.connections == 1
    assert [r.line for r in server.requests] == [
        "GET /a HTTP/1.1", "GET /b?x=1 HTTP/1.1", "GET /c HTTP/1.1"]
    assert server.requests[0].header("Host") == f"127.0.0.1:{server.port}"


async def test_one_connection_per_origin_in_fifo_order() -> None:
    async def slow(req: RawRequest, writer: asyncio.StreamWriter) -> bool:
        await asyncio.sleep(0.01)  # lets the other requests pile up meanwhile
        writer.write(response(req.path.encode()))
        return True

    async with RawServer(slow) as one, RawServer(slow) as other, client_of() as client:
        urls = [one.url(f"/{i}") for i in range(6)] + [other.url("/x"), other.url("/y")]
        results = await asyncio.gather(*(get(client, u) for u in urls))
    assert [body for _, body in results] == [u.split(":", 2)[2][5:].encode() for u in urls]
    assert (one.connections, one.max_in_flight) == (1, 1)
    assert (other.connections, other.max_in_flight) == (1, 1)
    assert [r.path for r in one.requests] == [f"/{i}" for i in range(6)]


async def test_global_limit_waits_then_evicts_idle() -> None:
    go = asyncio.Event()

    async def held(req: RawRequest, writer: asyncio.StreamWriter) -> bool:
        await go.wait()
        writer.write(response())
        return True

    async with RawServer(held) as a, RawServer() as b, client_of(limit=1) as client:
        first = asyncio.create_task(get(client, a.url()))
        await until(lambda: a.in_flight == 1)
        second = asyncio.create_task(get(client, b.url()))
        for _ in range(20):
            await asyncio.sleep(0)
        assert b.connections == 0  # the only slot is busy: b waits
        go.set()
        await asyncio.gather(first, second)
        # a's idle connection was closed to make room for b's
        await a.wait_closed(1)
        assert (a.connections, b.connections, client.open_connections) == (1, 1, 1)


async def test_connection_close_is_honoured() -> None:
    async def closing(req: RawRequest, writer: asyncio.StreamWriter) -> bool:
        writer.write(response(b"bye", "200 OK", "Connection: close"))
        return True  # the server would go on: the client must close

    async with RawServer(closing) as server, client_of() as client:
        for _ in range(2):
            assert (await get(client, server.url()))[1] == b"bye"
        await server.wait_closed(1)
    assert server.connections == 2


@pytest.mark.parametrize(("head", "reused"), [
    (b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\n", False),
    (b"HTTP/1.1 200 OK\r\n\r\n", False),
    (b"HTTP/1.0 200 OK\r\nContent-Length: 10\r\n\r\n", False),
    (b"HTTP/1.0 200 OK\r\nContent-Length: 10\r\nConnection: keep-alive\r\n\r\n", True),
], ids=["1.0-until-close", "1.1-until-close", "1.0-length", "1.0-keep-alive"])
async def test_http10_and_bodies_until_close(head: bytes, reused: bool) -> None:
    async def answer(req: RawRequest, writer: asyncio.StreamWriter) -> bool:
        writer.write(head + b"hello")
        await writer.drain()
        writer.write(b"world")
        return b"Content-Length" in head  # else the close ends the body

    async with RawServer(answer) as server, client_of() as client:
        for _ in range(2):
            resp, body = await get(client, server.url())
            assert (resp.status, body) == (200, b"helloworld")
    assert server.connections == (1 if reused else 2)


async def test_chunked_body() -> None:
    async def chunked(req: RawRequest, writer: asyncio.StreamWriter) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        for part in (b"<p>", b"x" * 70_000, b"</p>"):
            writer.write(b"%x\r\n%s\r\n" % (len(part), part))
            await writer.drain()
        writer.write(b"0\r\n\r\n")
        return True

    async with RawServer(chunked) as server, client_of() as client:
        for _ in range(2):
            assert (await get(client, server.url()))[1] == b"<p>" + b"x" * 70_000 + b"</p>"
    assert server.connections == 1


async def test_interim_responses_are_skipped() -> None:
    async def interim(req: RawRequest, writer: asyncio.StreamWriter) -> bool:
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        await writer.drain()
        writer.write(b"HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n"
                     + response(b"final", "200 OK", "X-A: 1"))
        return True

    async with RawServer(interim) as server, client_of() as client:
        for _ in range(2):
            resp, body = await get(client, server.url())
            assert (resp.status, body, resp.headers) == \
                    (200, b"final", [("Content-Length", "5"), ("X-A", "1")])
    assert server.connections == 1


async def test_large_body_read_slowly_arrives_whole() -> None:
    """More than BUFFER_LIMIT unread pauses the socket; draining resumes it."""
    big = bytes(range(256)) * 8192  # 2 MiB

    async def answer(req: RawRequest, writer: asyncio.StreamWriter) -> bool:
        writer.write(response(big))
        return True

    async with RawServer(answer) as server, client_of() as client:
        resp = await client.request("GET", server.url(), [])
        out = bytearray()
        while chunk := await resp.read():
            out += chunk
            for _ in range(5):
                await asyncio.sleep(0)
        assert bytes(out) == big
        assert (await get(client, server.url()))[1] == big
    assert server.connections == 1


# -- failures ----------------------------------------------------------------------------
async def stall(server: RawServer) -> bool:
    await server.stop.wait()
    return False


@pytest.mark.parametrize("kind", ["many-headers", "endless-header", "endless-interim"])
async def test_header_block_cap(kind: str) -> None:
    async def answer(req: RawRequest, writer: asyncio.StreamWriter) -> bool:
        if kind == "many-headers":
            lines = "".join(f"X-{i}: {'v' * 90}\r\n" for i in range(HEADER_LIMIT // 90 + 10))
            writer.write(f"HTTP/1.1 200 OK\r\n{lines}Content-Length: 0\r\n\r\n".encode())
            return True
        if kind == "endless-header":
            writer.write(b"HTTP/1.1 200 OK\r\nX-Long: " + b"v" * (2 * HEADER_LIMIT))
        else:
            writer.write(b"HTTP/1.1 100 Continue\r\n\r\n" * (HEADER_LIMIT // 20))
        return await stall(server)

    async with RawServer(answer) as server, client_of() as client:
        with pytest.raises(NetworkError, match="header block over"):
            await get(client, server.url())


@pytest.mark.parametrize("answer", [
    b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
    b"garbage\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n",
    b"",
], ids=["truncated", "not-http", "bad-length", "closed-silently"])
async def test_broken_responses_are_network_errors(answer: bytes) -> None:
    async def broken(req: RawRequest, writer: asyncio.StreamWriter) -> bool:
        writer.write(answer)
        return False

    async with RawServer(broken) as server, client_of() as client:
        with pytest.raises(NetworkError, match=f"fetching {server.url()}"):
            await get(client, server.url())
        assert client.open_connections == 0


async def test_connect_refused() -> None:
    async with RawServer() as server:
        url = server.url()
    async with client_of() as client:
        with pytest.raises(NetworkError, match=f"fetching {url}"):
            await get(client, url)
        assert client.open_connections == 0


@pytest.mark.parametrize(("when", "timeouts", "kind"), [
    ("before-head", dict(read_timeout=0.1), "read"),
    ("mid-body", dict(read_timeout=0.1), "read"),
    ("dripping", dict(read_timeout=5.0, total_timeout=0.3), "total"),
])
async def test_timeouts(when: str, timeouts: dict[str, float], kind: str) -> None:
    async def answer(req: RawRequest, writer: asyncio.StreamWriter) -> bool:
        if when == "before-head":
            return await stall(server)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nstart")
        if when == "mid-body":
            return await stall(server)
        while not server.stop.is_set():  # a byte now and then, never the end
            writer.write(b"x")
            await asyncio.sleep(0.02)
        return False

    async with RawServer(answer) as server, client_of(**timeouts) as client:
        with pytest.raises(FetchTimeoutError, match=f"{kind} timeout fetching"):
            await get(client, server.url())
        assert client.open_connections == 0


async def test_extra_bytes_after_a_response_drop_the_connection() -> None:
    async def chatty(req: RawRequest, writer: asyncio.StreamWriter) -> bool:
        writer.write(response(b"ok") + b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nextra")
        return True

    async with RawServer(chatty) as server, client_of() as client:
        for _ in range(2):
            resp, body = await get(client, server.url())
            assert (resp.status, body) == (200, b"ok")
    assert server.connections == 2


async def test_server_closing_an_idle_connection_means_a_new_one() -> None:
    async def once(req: RawRequest, writer: asyncio.StreamWriter) -> bool:
        writer.write(response(req.path.encode()))
        return False  # close after the answer, though it said keep-alive

    async with RawServer(once) as server, client_of() as client:
        assert (await get(client, server.url("/1")))[1] == b"/1"
        await until(lambda: client.open_connections == 0)
        assert (await get(client, server.url("/2")))[1] == b"/2"
    assert server.connections == 2
    assert [(r.conn, r.path) for r in server.requests] == [(0, "/1"), (1, "/2")]


async def test_a_dropped_kept_alive_connection_is_not_resent() -> None:
    """The server read /2, then closed without an answer (as a resetting page does): a
    resend would hit it twice with no polite wait (see test_transport_keepalive)."""
    async def drop_second(req: RawRequest, writer: asyncio.StreamWriter) -> bool:
        if req.path == "/2":
            return False  # close without an answer
        writer.write(response(req.path.encode()))
        return True

    async with RawServer(drop_second) as server, client_of() as client:
        assert (await get(client, server.url("/1")))[1] == b"/1"
        with pytest.raises(NetworkError, match="connection closed"):
            await get(client, server.url("/2"))
        assert client.resends == 0
        assert (await get(client, server.url("/3")))[1] == b"/3"
    # /2 went out once: no silent second attempt on a fresh connection
    assert [(r.conn, r.path) for r in server.requests] == [(0, "/1"), (0, "/2"), (1, "/3")]


async def test_closing_an_unfinished_body_drops_the_connection() -> None:
    async def big(req: RawRequest, writer: asyncio.StreamWriter) -> bool:
        writer.write(response(b"x" * 1_000_000))
        return True

    async with RawServer(big) as server, client_of() as client:
        resp = await client.request("GET", server.url(), [])
        assert await resp.read()
        resp.close()
        with pytest.raises(NetworkError):
            await resp.read()
        await server.wait_closed(1)
        assert client.open_connections == 0
        assert len((await get(client, server.url()))[1]) == 1_000_000
    assert server.connections == 2


async def test_close_aborts_idle_and_busy_connections() -> None:
    async def hold(req: RawRequest, writer: asyncio.StreamWriter) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nsome")
        return await stall(busy)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        async with RawServer() as idle, RawServer(hold) as busy:
            client = make_client()
            await get(client, idle.url())
            resp = await client.request("GET", busy.url(), [])
            assert await resp.read() == b"some"
            await client.close()
            with pytest.raises(NetworkError, match="client closed"):
                await resp.read()
            assert client.open_connections == 0
            assert not client._pool.live  # every transport called connection_lost
            await idle.wait_closed(1)  # (busy's handler is stalled: it reads nothing)
            with pytest.raises(NetworkError, match="client closed"):
                await client.request("GET", idle.url(), [])
        del client, resp
        gc.collect()
    assert [w for w in caught if issubclass(w.category, ResourceWarning)] == []


async def test_unsendable_urls() -> None:
    async with client_of() as client:
        for url in ("ftp://a.test/", "http:///x", "http://a.test/a b", "http://a.test/é",
                    "http://a.test:99999/"):
            with pytest.raises(NetworkError, match="fetching"):
                await client.request("GET", url, [])


# -- TLS -----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> tuple[ssl.SSLContext, Path]:
    return tls_for("secure.test", tmp_path_factory.mktemp("tls"))


async def test_tls_verified_unverified_and_insecure(
        tls: tuple[ssl.SSLContext, Path], caplog: pytest.LogCaptureFixture) -> None:
    server_ctx, ca_file = tls
    resolver = HostGlobResolver(parse_rules(["secure.test=127.0.0.1"]))
    async with RawServer(ssl_context=server_ctx) as server:
        url = server.url("/s", host="secure.test", scheme="https")
        for ctx, ok in ((make_ssl_context(str(ca_file), False), True),
                        (make_ssl_context(None, False), False),  # system CAs only
                        (make_ssl_context(None, True), True)):
            async with client_of(resolver=resolver, ssl_context=ctx) as client:
                if ok:
                    resp, body = await get(client, url)
                    assert (resp.status, body) == (200, b"/s")
                else:
                    with pytest.raises(NetworkError, match=r"(?i)certificate"):
                        await get(client, url)
    assert server.requests[0].header("Host") == f"secure.test:{server.port}"
    assert "verification is disabled" in caplog.text


async def test_default_tls_context_is_built_at_the_first_https_request(
        tls: tuple[ssl.SSLContext, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[ssl.SSLContext] = []
    real = ssl.create_default_context

    def counting(*args: Any, **kwargs: Any) -> ssl.SSLContext:
        made.append(real(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(webcrawl.crawler.http1.dial.ssl, "create_default_context", counting)
    resolver = HostGlobResolver(parse_rules(["*.test=127.0.0.1"]))
    async with RawServer() as plain, RawServer(ssl_context=tls[0]) as secure, \
            client_of(resolver=resolver) as client:
        await get(client, plain.url())
        assert made == []
        with pytest.raises(NetworkError, match=r"(?i)certificate"):  # system CAs only
            await get(client, secure.url(host="secure.test", scheme="https"))
        assert len(made) == 1


# -- both event loops ---------------------------------------------------------------------
async def _round_trips() -> None:
    async def answer(req: RawRequest, writer: asyncio.StreamWriter) -> bool:
        if req.path == "/stall":
            return await stall(server)
        if req.path == "/close":
            writer.write(b"HTTP/1.0 200 OK\r\n\r\nuntil-close")
            return False
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                     b"3\r\nabc\r\n0\r\n\r\n")
        return True

    async with RawServer(answer) as server:
        async with client_of(read_timeout=0.1) as client:
            assert (await get(client, server.url("/a")))[1] == b"abc"
            assert (await get(client, server.url("/b")))[1] == b"abc"
            assert (await get(client, server.url("/close")))[1] == b"until-close"
            with pytest.raises(FetchTimeoutError):
                await get(client, server.url("/stall"))
            await get(client, server.url("/c"))
        assert client.open_connections == 0 and not client._pool.live
    assert server.connections == 3


@pytest.mark.parametrize("new_loop", event_loops())
def test_round_trips_under_each_event_loop(
        new_loop: Callable[[], asyncio.AbstractEventLoop]) -> None:
    run_on(new_loop, _round_trips())


def test_the_fetch_path_imports_no_aiohttp() -> None:
    """Crawl workers import the fetcher, engine and resolver: aiohttp costs 0.15 s each."""
    import subprocess
    import sys

    script = ("import sys, webcrawl.crawler.fetcher, webcrawl.crawler.engine, "
              "webcrawl.crawler.downloader, webcrawl.crawler.shard.worker, "
              "webcrawl.crawler.resolve\nprint('aiohttp' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=60, check=True)
    assert out.stdout.strip() == "False"
