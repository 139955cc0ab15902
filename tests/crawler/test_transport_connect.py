"""Connecting to a host with several addresses: happy eyeballs (RFC 8305).

The address that does not answer is a loopback listener whose accept queue is full: the
kernel drops every SYN to it, so a connect there neither succeeds nor fails (as with a
dead IPv6 route).  The listener's queue is read from the kernel (TCP_INFO of a listening
socket: the queue length and its limit), not guessed, so the hole is there before the
test starts.  The connect timeout is set far above anything the test waits: a request
that is answered at all was answered by the second address before it.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import socket
import struct
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from http1tools import event_loops, get, make_client, run_on
from rawweb import RawServer
from webcrawl.crawler.fetcher import Fetcher
from webcrawl.crawler.http1 import Http1Client
from webcrawl.crawler.http1.dial import interleave
from webcrawl.crawler.resolve import HostGlobResolver, ResolveResult, parse_rules
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.storage.errors import NetworkError

pytestmark = [pytest.mark.timeout(60),
              pytest.mark.skipif(not hasattr(socket, "TCP_INFO"), reason="needs Linux TCP_INFO")]

#: far above the test's own timeout: reaching it means the second address was never tried
CONNECT_TIMEOUT = 120.0


def _accept_queue(listener: socket.socket) -> tuple[int, int]:
    """(connections waiting in the accept queue, the queue's limit) of a listener."""
    info = listener.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 32)
    queued, limit = struct.unpack_from("=II", info, 24)  # tcpi_unacked, tcpi_sacked
    return queued, limit


@contextlib.contextmanager
def unanswering_port() -> Iterator[int]:
    """A loopback port whose SYNs are dropped: a listener never accepting, queue full."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        fillers: list[socket.socket] = []
        try:
            while True:
                queued, limit = _accept_queue(listener)
                if queued > limit:
                    break
                fillers.append(socket.create_connection(listener.getsockname(), timeout=5))
            yield listener.getsockname()[1]
        finally:
            for sock in fillers:
                sock.close()


class TwoAddresses:
    """A resolver answering every name with the given ports of 127.0.0.1, in order."""

    def __init__(self, *ports: int) -> None:
        self.ports = ports

    async def resolve(self, host: str, port: int = 0, family: int = 0) -> list[ResolveResult]:
        return [ResolveResult(hostname=host, host="127.0.0.1", port=p, family=socket.AF_INET,
                              proto=0, flags=socket.AI_NUMERICHOST) for p in self.ports]


def client(resolver: Any, **overrides: Any) -> Http1Client:
    timeouts = dict(connect_timeout=CONNECT_TIMEOUT, read_timeout=CONNECT_TIMEOUT,
                    total_timeout=CONNECT_TIMEOUT)
    return make_client(resolver=resolver, **{**timeouts, **overrides})


async def status_body(c: Http1Client, url: str) -> tuple[int, bytes]:
    resp, body = await get(c, url)
    return resp.status, body


async def test_second_address_answers_when_the_first_never_does() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with unanswering_port() as dead:
            async with RawServer() as live:
                c = client(TwoAddresses(dead, live.port))
                try:
                    assert await status_body(c, "http://dual.test/x") == (200, b"/x")
                    assert await status_body(c, "http://dual.test/y") == (200, b"/y")  # kept alive
                    assert c.open_connections == 1
                finally:
                    await c.close()
        gc.collect()
    assert live.connections == 1
    assert [r.header("Host") for r in live.requests] == ["dual.test", "dual.test"]
    # the attempt to the silent address was cancelled and its socket closed
    assert [w for w in caught if issubclass(w.category, ResourceWarning)] == []


async def _race_through_a_resolve_rule() -> None:
    with unanswering_port() as dead:
        async with RawServer() as live:
            rule = f"dual.test:80=127.0.0.1:{dead},127.0.0.1:{live.port}"
            settings = CrawlSettings.polite_off(
                resolve=(rule,), fetch_connect_timeout=CONNECT_TIMEOUT,
                fetch_total_timeout=CONNECT_TIMEOUT, fetch_read_timeout=CONNECT_TIMEOUT)
            async with Fetcher(settings) as f:
                result = await f.fetch("http://dual.test/page")
    assert (result.status, result.body) == (200, b"/page")
    assert [r.path for r in live.requests] == ["/page"]


@pytest.mark.parametrize("new_loop", event_loops())
def test_fetcher_races_the_addresses_of_a_resolve_rule(
        new_loop: Callable[[], asyncio.AbstractEventLoop]) -> None:
    run_on(new_loop, _race_through_a_resolve_rule())


async def test_a_refusing_first_address_is_left_at_once() -> None:
    async with RawServer() as gone:
        refused = gone.port
    async with RawServer() as live:
        # a delay longer than the test: only the refusal can start the second attempt
        c = client(TwoAddresses(refused, live.port), happy_eyeballs_delay=CONNECT_TIMEOUT)
        try:
            assert await status_body(c, "http://dual.test/") == (200, b"/")
        finally:
            await c.close()


async def test_every_address_failing_is_one_network_error() -> None:
    ports = []
    for _ in range(2):
        async with RawServer() as gone:
            ports.append(gone.port)
    c = client(TwoAddresses(*ports))
    try:
        with pytest.raises(NetworkError, match=r"fetching http://dual\.test/"):
            await status_body(c, "http://dual.test/")
        assert c.open_connections == 0
    finally:
        await c.close()


def _info(host: str, family: int) -> ResolveResult:
    return ResolveResult(hostname="h", host=host, port=80, family=family, proto=0, flags=0)


@pytest.mark.parametrize(("families", "expected"), [
    ("6664", "6466"), ("4446", "4644"), ("6644", "6464"), ("66", "66"), ("4", "4"), ("646", "646"),
], ids=["v6-first", "v4-first", "two-each", "one-family", "single", "already-mixed"])
def test_families_are_interleaved(families: str, expected: str) -> None:
    # RFC 8305 section 4: alternate families, starting with the resolver's first
    fam = {"6": socket.AF_INET6, "4": socket.AF_INET}
    infos = [_info(f"{f}-{i}", fam[f]) for i, f in enumerate(families)]
    ordered = interleave(infos)
    assert "".join(i["host"][0] for i in ordered) == expected
    for f in "46":  # each family keeps its own order
        mine = [i["host"] for i in ordered if i["host"][0] == f]
        assert mine == sorted(mine, key=lambda h: int(h[2:]))


async def test_resolve_rule_lists_addresses_in_order() -> None:
    resolver = HostGlobResolver(parse_rules(["dual.test:443=[::1]:8443,127.0.0.1"]))
    answers = await resolver.resolve("dual.test", 443)
    assert [(a["host"], a["port"], a["family"]) for a in answers] == [
        ("::1", 8443, socket.AF_INET6), ("127.0.0.1", 443, socket.AF_INET)]
