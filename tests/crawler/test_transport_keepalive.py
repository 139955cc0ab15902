"""Stale keep-alive: servers that close idle connections, ``Keep-Alive: timeout``, the
one safe resend.

The stale connection is made by the server itself, never by a sleep racing a timer: it
answers and closes at once without saying so (no ``Connection: close``), as Apache or
Node do when their keep-alive timeout runs out just as the client reuses the
connection.  The request written into it reaches a closed socket, which the server's
TCP resets without reading it.  What the server saw is asserted from its side, request
by request, and by the fixture server's politeness audit.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from http1tools import client_of, event_loops, get, run_on
from rawweb import RawRequest, RawServer, response
from webcrawl.crawler.fetcher import Fetcher
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.fixtures import FixtureConfig, FixtureServer, FixtureWeb
from webcrawl.storage.errors import NetworkError

pytestmark = pytest.mark.timeout(60)


async def answer_then_close(req: RawRequest, writer: asyncio.StreamWriter) -> bool:
    """Answer as if the connection stayed open, then close it."""
    writer.write(response(req.path.encode()))
    return False


async def _stale_round_trip() -> None:
    async with RawServer(answer_then_close) as server, client_of() as client:
        assert (await get(client, server.url("/1")))[1] == b"/1"
        # at once: the server's close has not been seen when /2 is written
        resp, body = await get(client, server.url("/2"))
        assert (resp.status, body, client.resends) == (200, b"/2", 1)
    # /2 reached the server once, on the second connection: the first write was reset
    assert [(r.conn, r.path) for r in server.requests] == [(0, "/1"), (1, "/2")]


@pytest.mark.parametrize("new_loop", event_loops())
def test_a_stale_connection_is_resent_once_under_each_loop(
        new_loop: Callable[[], asyncio.AbstractEventLoop]) -> None:
    run_on(new_loop, _stale_round_trip())


async def test_fetcher_reuses_a_silently_closed_connection_without_failing() -> None:
    settings = CrawlSettings.polite_off(fetch_total_timeout=20.0)
    async with RawServer(answer_then_close) as server, Fetcher(settings) as f:
        first = await f.fetch(server.url("/a"))
        second = await f.fetch(server.url("/b"))
    assert (first.status, first.body, second.status, second.body) == (200, b"/a", 200, b"/b")
    assert [(r.conn, r.path) for r in server.requests] == [(0, "/a"), (1, "/b")]


async def test_only_get_and_head_are_resent() -> None:
    async with RawServer(answer_then_close) as server, client_of() as client:
        await get(client, server.url("/1"))
        with pytest.raises(NetworkError, match="connection closed"):
            await get(client, server.url("/2"), method="POST")
        assert client.resends == 0
    assert [r.path for r in server.requests] == ["/1"]


async def test_a_new_connection_closing_unanswered_is_not_resent() -> None:
    async def close(req: RawRequest, writer: asyncio.StreamWriter) -> bool:
        return False  # the server takes the request and closes: it had it

    async with RawServer(close) as server, client_of() as client:
        with pytest.raises(NetworkError, match="connection closed"):
            await get(client, server.url("/"))
        assert client.resends == 0
    assert len(server.requests) == 1


@pytest.mark.parametrize(("header", "connections"), [
    ("Keep-Alive: timeout=1", 2),            # 1 s less the margin: not kept at all
    ("Keep-Alive: timeout=1, max=100", 2),
    ("Keep-Alive: max=5, timeout=0", 2),
    ("Keep-Alive: timeout=30", 1),
    ("Keep-Alive: max=100", 1),              # no timeout: the client's own applies
    ("Keep-Alive: timeout=x", 1),
], ids=["timeout-1", "timeout-1-max", "timeout-0", "timeout-30", "max-only", "garbage"])
async def test_keep_alive_timeout_below_the_margin_closes_at_once(
        header: str, connections: int) -> None:
    async def answer(req: RawRequest, writer: asyncio.StreamWriter) -> bool:
        writer.write(response(req.path.encode(), "200 OK", header))
        return True

    async with RawServer(answer) as server, client_of(keepalive=30.0) as client:
        for path in ("/1", "/2"):
            assert (await get(client, server.url(path)))[1] == path.encode()
        assert client.resends == 0
    assert server.connections == connections


async def test_keep_alive_timeout_shortens_the_idle_time() -> None:
    """``timeout=2``: the client closes the idle connection itself, long before its own
    30 s (the test's timeout would end it first otherwise)."""
    async def answer(req: RawRequest, writer: asyncio.StreamWriter) -> bool:
        writer.write(response(b"ok", "200 OK", "Keep-Alive: timeout=2"))
        return True

    async with RawServer(answer) as server, client_of(keepalive=300.0) as client:
        await get(client, server.url())
        await server.wait_closed(1)
        assert client.open_connections == 0


def test_the_default_keepalive_is_below_common_servers() -> None:
    # Apache's KeepAliveTimeout and Node's server.keepAliveTimeout are both 5 s
    assert CrawlSettings().fetch_keepalive < 5.0


class SilentlyClosingServer(FixtureServer):
    """The fixture web, but every connection is closed right after its response, without
    ``Connection: close``: each reuse by the client meets a closed connection."""

    async def _handle(self, request: Any) -> Any:
        resp = await super()._handle(request)
        if request.transport is not None and not request.raw_path.startswith("/__fixture__"):
            request.transport.close()
        return resp


async def test_the_audit_counts_a_resent_fetch_once() -> None:
    """Fetches back to back, each on a connection the server has just closed: every one
    is answered, with no error, and the server's audit logs one request per fetch."""
    web = FixtureWeb.build(FixtureConfig(pages=20, hosts=1, seed=5))
    settings = CrawlSettings.polite_off(resolve=("*.test=127.0.0.1",), fetch_total_timeout=10.0)
    async with SilentlyClosingServer(web) as server, Fetcher(settings) as f:
        urls = [server.base_urls[0] + "robots.txt"] + [server.url_of(p) for p in range(5)]
        results = [await f.fetch(url) for url in urls]
        report = server.audit(max_concurrency=1, min_gap=0.0)
        assert f.resends == len(urls) - 1  # every reuse met the closed connection
    assert [r.status for r in results] == [200] * len(urls)
    assert report["requests"] == len(urls)
    assert report["violation_count"] == 0, report["failures"]
    assert report["hosts"]["site0.test"]["connections"] == len(urls)
