"""The HTTP/1.1 client: a request in, the response once its head has arrived.

:meth:`Http1Client.request` takes the origin's turn and a connection from its
:class:`~webcrawl.crawler.http1.pool.ConnectionPool` (kept alive, or new through the
:class:`~webcrawl.crawler.http1.dial.Dialer`), writes the request
(:mod:`~webcrawl.crawler.http1.wire`) and waits for the head of the answer; the safe
resend of :mod:`~webcrawl.crawler.http1.resend` happens here, within the request's total
timeout, and a request the server may have read is refused a resend at once
(:class:`~webcrawl.crawler.http1.resend.ReusedConnectionLost`).  The package's docstring
holds the whole contract.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Sequence

from webcrawl.crawler.http1.connection import Connection, Http1Response
from webcrawl.crawler.http1.dial import HAPPY_EYEBALLS_DELAY, Dialer, ProxyRoute, Resolver
from webcrawl.crawler.http1.pool import ConnectionPool
from webcrawl.crawler.http1.resend import RESENDABLE, Resend, ReusedConnectionLost
from webcrawl.crawler.http1.wire import (
    Origin,
    absolute_form,
    network_error,
    split_url,
)
from webcrawl.storage.errors import FetchError, FetchTimeoutError, NetworkError

__all__ = ["Http1Client"]


class Http1Client:
    """HTTP/1.1 with one kept-alive connection per origin (see the package docstring)."""

    def __init__(self, *, limit: int, keepalive: float, connect_timeout: float,
                 read_timeout: float, total_timeout: float, resolver: Resolver | None = None,
                 ssl_context: ssl.SSLContext | None = None,
                 happy_eyeballs_delay: float = HAPPY_EYEBALLS_DELAY,
                 proxy: ProxyRoute | None = None) -> None:
        if resolver is None:
            from webcrawl.crawler.resolve import HostGlobResolver

            resolver = HostGlobResolver(())
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.total_timeout = total_timeout
        #: requests sent a second time on a new connection (see the package docstring)
        self.resends = 0
        self._pool = ConnectionPool(limit=limit, keepalive=keepalive)
        self._dialer = Dialer(resolver, route=proxy, ssl_context=ssl_context,
                              happy_eyeballs_delay=happy_eyeballs_delay)
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            self._loop = self._pool.loop
        return self._loop

    @property
    def open_connections(self) -> int:
        """Connections open or being opened."""
        return self._pool.open_connections

    async def request(self, method: str, url: str,
                      headers: Sequence[tuple[str, str]]) -> Http1Response:
        """Send ``method url`` with ``Host`` and ``headers``; the response once its head is in.

        Raises NetworkError or FetchTimeoutError; HTTP statuses are returned.
        """
        try:
            origin, target, host_header = split_url(url)
            sent = (("Host", host_header), *headers)
            lines = "".join(f"{k}: {v}\r\n" for k, v in sent)
            request = f"{method} {target} HTTP/1.1\r\n{lines}\r\n".encode("latin-1")
        except ValueError as exc:  # UnicodeEncodeError included
            raise network_error(url, exc) from exc
        deadline = self.loop.time() + self.total_timeout
        conn = await self._acquire(origin, deadline, url)
        resent = False
        while True:
            resp = Http1Response(url, sent, conn)
            via = conn.via
            conn.send(resp, request if via is None else absolute_form(
                method, f"{origin[0]}://{host_header}{target}", lines, via), deadline)
            try:
                await resp._until_head()
            except Resend as exc:
                if resent or method not in RESENDABLE:  # once, and only safe methods
                    self._pool.pass_turn(origin)
                    raise NetworkError(str(exc)) from None
                resent = True
                self.resends += 1
                conn = await self._reconnect(origin, deadline, url)
                continue
            except ReusedConnectionLost as exc:
                if method not in RESENDABLE:  # the caller may send a safe method again
                    raise NetworkError(str(exc)) from None
                raise
            except BaseException:
                resp.close()
                raise
            return resp

    async def close(self) -> None:
        """Abort every connection; wait (a second at most) for their transports to go."""
        await self._pool.close()

    async def _acquire(self, origin: Origin, deadline: float, url: str) -> Connection:
        """The origin's turn and a connection to it (kept-alive or new)."""
        pool = self._pool
        if not pool.take_turn(origin):  # (no coroutine when the origin is free)
            await pool.wait_turn(origin, deadline, url)
        try:
            if pool.closed:
                raise NetworkError(f"client closed fetching {url}")
            conn = pool.reuse(origin)
            if conn is not None:
                return conn
            return await self._connect(origin, deadline, url)
        except BaseException:
            pool.pass_turn(origin)
            raise

    async def _reconnect(self, origin: Origin, deadline: float, url: str) -> Connection:
        """A new connection for a resend: the request still holds the origin's turn."""
        try:
            if self._pool.closed:
                raise NetworkError(f"client closed fetching {url}")
            return await self._connect(origin, deadline, url)
        except BaseException:
            self._pool.pass_turn(origin)
            raise

    async def _connect(self, origin: Origin, deadline: float, url: str) -> Connection:
        pool = self._pool
        await pool.take_slot(deadline, url)
        timer = asyncio.timeout(min(self.connect_timeout, deadline - self.loop.time()))
        try:
            async with timer:
                conn = Connection(pool, origin, self.read_timeout)
                transport, conn.via = await self._dialer.open(origin, conn)
                # (uvloop calls connection_made later, with call_soon: hence this call)
                conn.connection_made(transport)
        except BaseException as exc:
            pool.free_slot()
            if isinstance(exc, TimeoutError) and timer.expired():
                raise FetchTimeoutError(f"connect timeout fetching {url}") from None
            if isinstance(exc, FetchError) or not isinstance(exc, OSError):
                raise
            raise network_error(url, exc) from exc
        conn.counted = True  # only now: a failed attempt has no slot to give back
        return conn
