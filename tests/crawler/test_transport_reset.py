"""A server that reads a request on a kept-alive connection and then resets it.

From outside, that server looks like one that closed an idle connection with the request
unread in its buffer: a reset (RST) and no answer; the kernel's TCP counters cannot tell
them apart (the reset may overtake the server's delayed ACK).  So the request is never
sent again at once: the client raises ``ReusedConnectionLost`` and the downloader puts it
back for the host's next politeness slot, sends it once more on a new connection, and
counts no failed attempt.  Checked from the server's side -- which requests arrived, on
which connection, and that the second came after the host's clock said it could -- under
asyncio's loop and uvloop, over http and https.  The times compared are ``monotonic``
clock readings ordered by cause (the server reads, then resets; the downloader sets the
host's next time after it saw the reset; the request goes out after that time), so the
inequalities hold however slow the machine is.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from http1tools import client_of, event_loops, get, run_on
from rawweb import RawRequest, RawServer, reset, response, tls_for
from webcrawl.crawler.downloader import DownloaderLink, LocalDownloader
from webcrawl.crawler.http1 import ReusedConnectionLost
from webcrawl.crawler.http1.resend import Resend, unanswered
from webcrawl.crawler.orders import FetchPage, PageDone, await_answer
from webcrawl.crawler.politeness import sleep_for
from webcrawl.crawler.resolve import HostGlobResolver, parse_rules
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.storage.errors import NetworkError

pytestmark = pytest.mark.timeout(60)

HOST = "site.test"
#: the host's politeness wait in these tests (seconds)
DELAY = 0.2
SCHEMES = [pytest.param("http", id="http"), pytest.param("https", id="https")]


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> tuple[ssl.SSLContext, Path]:
    return tls_for(HOST, tmp_path_factory.mktemp("tls"))


async def read_then_reset(req: RawRequest, writer: asyncio.StreamWriter) -> bool:
    """Answer a connection's first request; read any later one and reset."""
    if req.conn == 0 and req.path != "/1":
        reset(writer)
        return False
    writer.write(response(req.path.encode()))
    return True


def _server(answer: Any, scheme: str, tls: tuple[ssl.SSLContext, Path]) -> RawServer:
    return RawServer(answer, ssl_context=tls[0] if scheme == "https" else None)


async def _fetch_1_then_2(downloader: LocalDownloader, server: RawServer,
                          scheme: str) -> list[PageDone]:
    done = []
    for order, path in enumerate(("/1", "/2")):
        answer = await await_answer(downloader.submit, FetchPage(
            order, server.url(path, HOST, scheme), HOST, wait=0.0, crawl_delay=0.0))
        assert isinstance(answer, PageDone)
        done.append(answer)
    return done


async def _client_is_refused_a_resend(scheme: str, tls: tuple[ssl.SSLContext, Path]) -> None:
    ctx = ssl.create_default_context(cafile=str(tls[1]))
    resolver = HostGlobResolver(parse_rules([f"{HOST}=127.0.0.1"]))
    async with _server(read_then_reset, scheme, tls) as server, \
            client_of(ssl_context=ctx, resolver=resolver) as client:
        assert (await get(client, server.url("/1", HOST, scheme)))[1] == b"/1"
        with pytest.raises(ReusedConnectionLost, match="reset before any response fetching"):
            await get(client, server.url("/2", HOST, scheme))
        assert client.resends == 0
    assert [(r.conn, r.path) for r in server.requests] == [(0, "/1"), (0, "/2")]


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("new_loop", event_loops())
def test_the_client_never_resends_a_request_the_server_read(
        new_loop: Callable[[], asyncio.AbstractEventLoop], scheme: str,
        tls: tuple[ssl.SSLContext, Path]) -> None:
    run_on(new_loop, _client_is_refused_a_resend(scheme, tls))


async def _downloader_puts_it_back(scheme: str, tls: tuple[ssl.SSLContext, Path]) -> None:
    # one attempt per URL: the put-back is no retry
    settings = CrawlSettings.polite_off(
        polite_min_delay=DELAY, polite_max_delay=DELAY, retry_attempts=1,
        resolve=(f"{HOST}=127.0.0.1",), tls_ca_file=str(tls[1]))
    async with _server(read_then_reset, scheme, tls) as server:
        downloader = LocalDownloader(settings)
        waits: list[tuple[float, float, int]] = []  # seconds, the host's next time, requests

        async def sleep(seconds: float) -> None:
            waits.append((seconds, downloader.slots.slot(HOST).ready_at, len(server.requests)))
            await sleep_for(seconds)

        await downloader.open(DownloaderLink(sleep=sleep))
        try:
            done = await _fetch_1_then_2(downloader, server, scheme)
        finally:
            await downloader.aclose()
    second = done[1]
    assert second.failed == ()  # no failed attempt: one attempt, answered
    assert second.result is not None and second.result.status == 200
    seen = [(r.conn, r.path) for r in server.requests]
    assert seen == [(0, "/1"), (0, "/2"), (1, "/2")]
    read, again = server.requests[1].at, server.requests[2].at
    # the wait begun while the server had read /2 once: to the host's next time, which
    # is a politeness delay after the reset, and /2 came again only after it
    ready_at = max(ready for _, ready, count in waits if count == 2)
    assert read + DELAY <= ready_at <= again
    assert downloader.slots.slot(HOST).requests == 3  # the host's clock counted all three


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("new_loop", event_loops())
def test_the_downloader_puts_the_request_back_for_the_hosts_next_slot(
        new_loop: Callable[[], asyncio.AbstractEventLoop], scheme: str,
        tls: tuple[ssl.SSLContext, Path]) -> None:
    run_on(new_loop, _downloader_puts_it_back(scheme, tls))


async def answer_then_close(req: RawRequest, writer: asyncio.StreamWriter) -> bool:
    """Answer as if the connection stayed open, then close it (a FIN, and for https no
    ``close_notify``): the next request reaches a closed socket, unread."""
    writer.write(response(req.path.encode()))
    return False


async def _stale_is_fetched_once(scheme: str, tls: tuple[ssl.SSLContext, Path]) -> None:
    settings = CrawlSettings.polite_off(resolve=(f"{HOST}=127.0.0.1",),
                                        tls_ca_file=str(tls[1]), retry_attempts=1)
    async with _server(answer_then_close, scheme, tls) as server, \
            LocalDownloader(settings) as downloader:
        done = await _fetch_1_then_2(downloader, server, scheme)
    assert all(d.failed == () and d.result is not None and d.result.status == 200
               for d in done)
    # Sent again at once (the counters showed /2 unread) or at the host's next slot
    # (https under uvloop: no counters after a close without close_notify): the server
    # read /2 once either way.
    assert [(r.conn, r.path) for r in server.requests] == [(0, "/1"), (1, "/2")]


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("new_loop", event_loops())
def test_a_stale_connection_costs_the_server_one_request(
        new_loop: Callable[[], asyncio.AbstractEventLoop], scheme: str,
        tls: tuple[ssl.SSLContext, Path]) -> None:
    run_on(new_loop, _stale_is_fetched_once(scheme, tls))


@pytest.mark.parametrize(("reset_first", "took", "kind"), [
    (True, False, ReusedConnectionLost),   # the case: the ACK never went out
    (True, True, ReusedConnectionLost),
    (True, None, ReusedConnectionLost),    # https: the socket is gone
    (False, False, Resend),                # a FIN, the request never reached its TCP
    (False, None, ReusedConnectionLost),   # a FIN, the counters cannot say
    (False, True, NetworkError),           # a FIN after its TCP took the request
], ids=["rst-unacked", "rst-acked", "rst-unknown", "fin-unacked", "fin-unknown", "fin-acked"])
def test_what_a_lost_reused_connection_means(reset_first: bool, took: bool | None,
                                             kind: type[NetworkError]) -> None:
    error = unanswered("http://h.test/", reset=reset_first, took=took)
    assert type(error) is kind
