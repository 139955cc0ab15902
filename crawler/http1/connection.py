"""One HTTP/1.1 connection and the response streaming in on it.

:class:`Connection` (an ``asyncio.Protocol``) writes one request at a time and parses its
answer with httptools' llhttp (as lenient as aiohttp's): 1xx interim responses are
skipped; a body with neither Content-Length nor chunked coding runs to the close and is
complete when the server closes cleanly (FIN), a NetworkError when the connection is
reset (RST) first; a header block over :data:`~webcrawl.crawler.http1.wire.HEADER_LIMIT`
bytes fails; bytes after a complete response make the connection unusable.  At most
about :data:`~webcrawl.crawler.http1.wire.BUFFER_LIMIT` unread body bytes are buffered:
reading from the socket pauses until the caller drains them.

:class:`Http1Response` is handed out once the final header block has arrived; the caller
pulls the body with :meth:`Http1Response.read` and always
:meth:`~Http1Response.close` s it (closing an unfinished body drops the connection).

Timers: one per request, re-armed when it fires early; arrivals of data only move the
read deadline (not counted while the caller is slow to read), the total deadline is the
request's.  When the exchange ends the connection goes back to its
:class:`~webcrawl.crawler.http1.pool.ConnectionPool`, reusable or not (``Connection:
close``, HTTP/1.0 without keep-alive, a body run to the close, extra bytes, a
``Keep-Alive: timeout`` too short to reuse it).  A reused connection that closes before
any byte of the answer decides with :mod:`webcrawl.crawler.http1.resend` whether the
request may be sent again.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, cast

import httptools
from webcrawl.crawler.http1.resend import Resend, peer_took_all, unanswered
from webcrawl.crawler.http1.wire import BUFFER_LIMIT, HEADER_LIMIT, Origin, network_error
from webcrawl.storage.errors import FetchTimeoutError, NetworkError

if TYPE_CHECKING:
    from webcrawl.crawler.http1.pool import ConnectionPool
    from webcrawl.crawler.proxy import Proxy

__all__ = ["KEEPALIVE_MARGIN", "Connection", "Http1Response", "keepalive_timeout"]

#: seconds taken off a server's ``Keep-Alive: timeout=N``: the server's clock starts
#: when it sends the response, ours when it has arrived, and a request needs time to
#: travel back
KEEPALIVE_MARGIN = 1.0
_INF = float("inf")


def keepalive_timeout(value: str) -> float | None:
    """The ``timeout`` parameter of a ``Keep-Alive`` header, None if absent or bad."""
    for param in value.split(","):
        name, eq, number = param.partition("=")
        if eq and name.strip().lower() == "timeout":
            try:
                seconds = float(number.strip().strip('"'))
            except ValueError:
                return None
            return seconds if seconds >= 0 else None
    return None


class Http1Response:
    """A response whose final header block has arrived; the body streams in."""

    __slots__ = ("_buffered", "_chunks", "_conn", "_eof", "_error", "_head", "_waiter",
                 "headers", "reason", "request_headers", "status", "url", "version")

    def __init__(self, url: str, request_headers: tuple[tuple[str, str], ...],
                 conn: Connection) -> None:
        self.url = url
        self.status = 0
        self.reason = ""
        self.version = ""
        #: response headers as received (latin-1), in order, repeats kept
        self.headers: list[tuple[str, str]] = []
        #: request headers as sent, ``Host`` first (a proxy's credentials are not kept)
        self.request_headers = request_headers
        self._conn: Connection | None = conn
        self._chunks: list[bytes] = []
        self._buffered = 0
        self._head = False
        self._eof = False
        self._error: BaseException | None = None
        self._waiter: asyncio.Future[None] | None = None

    async def read(self) -> bytes:
        """The body bytes received since the last call; ``b""`` at the end."""
        while True:
            if self._error is not None:
                raise self._error
            if self._chunks:
                chunks = self._chunks
                data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
                chunks.clear()
                self._buffered = 0
                if self._conn is not None:
                    self._conn.drained()
                return data
            if self._eof:
                return b""
            await self._wait()

    def close(self) -> None:
        """Done with this response: an unfinished body drops its connection."""
        if self._eof or self._error is not None:
            return
        self._error = NetworkError(f"response closed fetching {self.url}")
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.abandon(self)

    async def _until_head(self) -> None:
        while not self._head and self._error is None:
            await self._wait()
        if self._error is not None:
            raise self._error

    async def _wait(self) -> None:
        self._waiter = asyncio.get_running_loop().create_future()
        try:
            await self._waiter
        finally:
            self._waiter = None

    # -- called by the connection ------------------------------------------------------
    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _push(self, data: bytes) -> None:
        self._chunks.append(data)
        self._buffered += len(data)
        self._wake()

    def _end(self, error: BaseException | None) -> None:
        if error is None:
            self._eof = True
        elif self._error is None:
            self._error = error
        self._conn = None
        self._wake()


class Connection(asyncio.Protocol):
    """One connection: writes a request, parses its response (httptools callbacks)."""

    # slots: with these 31 attributes in an instance dict a request cost 2,600 more
    # instructions (callgrind, bare client loop: 1.6% of the request)
    __slots__ = ("_complete", "_extra", "_fin", "_head_bytes", "_head_done", "_head_size",
                 "_headers", "_interim", "_keep_alive", "_keep_alive_header", "_loop",
                 "_lost_waiter", "_parser", "_paused", "_peer_took", "_pool", "_read_deadline",
                 "_read_timeout", "_reason", "_resp", "_timer", "_timer_at", "_total_deadline",
                 "_used", "counted", "idle_timer", "keepalive", "lost", "origin", "transport",
                 "via")

    def __init__(self, pool: ConnectionPool, origin: Origin, read_timeout: float) -> None:
        self._pool = pool
        self._loop = pool.loop
        self._read_timeout = read_timeout
        self.origin = origin
        self.transport: asyncio.Transport | None = None
        self.counted = False         # holds one of the pool's `limit` slots
        self.lost = False
        self.idle_timer: asyncio.TimerHandle | None = None
        #: the http proxy requests go through in absolute form (None: direct or tunnel)
        self.via: Proxy | None = None
        #: seconds the connection may stay idle: the pool's, or less when the server
        #: announced a shorter ``Keep-Alive: timeout``
        self.keepalive = pool.keepalive
        self._used = False           # an exchange was completed on it: it is being reused
        self._fin = False            # the peer closed (FIN) while a request had no answer
        self._peer_took: bool | None = None  # at that FIN: the peer acknowledged all we sent
        self._keep_alive_header: str | None = None  # of the current response
        self._lost_waiter: asyncio.Future[None] | None = None
        self._parser = httptools.HttpResponseParser(self)
        # aiohttp's leniencies, so servers it accepts are accepted here too
        self._parser.set_dangerous_leniencies(lenient_headers=True,
                                              lenient_optional_cr_before_lf=True,
                                              lenient_spaces_after_chunk_size=True)
        self._resp: Http1Response | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = _INF
        self._total_deadline = _INF
        self._read_deadline = _INF
        self._paused = False
        self._reset()

    def _reset(self) -> None:
        self._head_bytes = 0         # bytes received before the final header block ended
        self._head_size = 0          # size of the current header block
        self._reason = b""
        self._headers: list[tuple[str, str]] = []
        self._head_done = False
        self._interim = False
        self._complete = False
        self._keep_alive = False
        self._extra = False

    # -- the request -------------------------------------------------------------------
    def send(self, resp: Http1Response, request: bytes, deadline: float) -> None:
        transport = self.transport
        assert transport is not None and self._resp is None
        self._reset()
        self._resp = resp
        transport.write(request)
        self._total_deadline = deadline
        self._read_deadline = self._loop.time() + self._read_timeout
        self._arm(min(deadline, self._read_deadline))

    def _arm(self, when: float) -> None:
        self._timer_at = when
        self._timer = self._loop.call_at(when, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        if self._resp is None:
            return
        due = min(self._total_deadline, self._read_deadline)
        if self._loop.time() < due:
            self._arm(due)
            return
        kind = "read" if self._read_deadline <= self._total_deadline else "total"
        self._fail(FetchTimeoutError(f"{kind} timeout fetching {self._resp.url}"))

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def drained(self) -> None:
        """The reader emptied the buffer: read from the socket again."""
        if self._paused and self.transport is not None and not self.lost:
            self._paused = False
            self.transport.resume_reading()
            self._read_deadline = self._loop.time() + self._read_timeout
            if self._read_deadline < self._timer_at:
                self._cancel_timer()
                self._arm(self._read_deadline)

    def abandon(self, resp: Http1Response) -> None:
        if self._resp is resp:
            self._fail(NetworkError(f"response closed fetching {resp.url}"))

    def shut(self) -> None:
        """Abort, failing the request in flight (the client is closing)."""
        if self._resp is not None:
            self._fail(NetworkError(f"client closed fetching {self._resp.url}"))
        elif self.transport is not None and not self.lost:
            self.transport.abort()

    def gone(self) -> asyncio.Future[None]:
        """A future done once the transport has called connection_lost."""
        if self._lost_waiter is None:
            self._lost_waiter = self._loop.create_future()
            if self.lost:
                self._lost_waiter.set_result(None)
        return self._lost_waiter

    def _finish(self) -> None:
        resp, self._resp = self._resp, None
        assert resp is not None
        self._cancel_timer()
        resp._end(None)
        if self._paused and not self.lost:
            assert self.transport is not None
            self._paused = False  # idle: watch for the server closing it
            self.transport.resume_reading()
        if self._keep_alive_header is not None:
            server = keepalive_timeout(self._keep_alive_header)
            self._keep_alive_header = None
            if server is not None:
                self.keepalive = min(self._pool.keepalive, server - KEEPALIVE_MARGIN)
                if self.keepalive <= 0:
                    self._keep_alive = False  # it would close before we could reuse it
        self._used = True
        self._pool.release(self, self._keep_alive and not self._extra and not self.lost)

    def _fail(self, error: BaseException) -> None:
        resp, self._resp = self._resp, None
        self._cancel_timer()
        if resp is not None:
            resp._end(error)
        self._pool.release(self, False)

    def _nothing_received(self) -> bool:
        return not self._head_done and self._head_bytes == 0

    # -- asyncio.Protocol ----------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if self.transport is None and not self.lost:
            # cast, not isinstance: uvloop's transports do not derive from asyncio's
            self.transport = cast(asyncio.Transport, transport)
            self._pool.live.add(self)

    def data_received(self, data: bytes) -> None:
        resp = self._resp
        if resp is None:  # bytes nobody asked for: the connection is unusable
            self._pool.discard(self, clean=False)
            return
        if not self._paused:
            self._read_deadline = self._loop.time() + self._read_timeout
        try:
            self._parser.feed_data(data)
        except (httptools.HttpParserError, httptools.HttpParserUpgrade) as exc:
            if not self._complete:
                self._fail(self._parse_error(resp.url, exc))
                return
            self._extra = True
        if self._complete:
            self._finish()
        elif not self._head_done:
            self._head_bytes += len(data)
            if self._head_bytes > HEADER_LIMIT:
                self._fail(self._head_error(resp.url))

    def eof_received(self) -> bool | None:
        if self._used and self._resp is not None and self._nothing_received():
            # now, while the socket is surely open: connection_lost may come after it closed
            self._fin = True
            self._peer_took = peer_took_all(self.transport)
        return None

    def _parse_error(self, url: str, exc: Exception) -> NetworkError:
        if self._head_size > HEADER_LIMIT:
            return self._head_error(url)
        if isinstance(exc, httptools.HttpParserUpgrade):
            return NetworkError(f"unrequested protocol upgrade fetching {url}")
        return network_error(url, exc)

    @staticmethod
    def _head_error(url: str) -> NetworkError:
        return NetworkError(f"header block over {HEADER_LIMIT} bytes fetching {url}")

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        self._pool.live.discard(self)
        resp = self._resp
        if resp is not None:
            why = f": {' '.join(str(exc).split())}" if exc else ""
            if self._head_done and not self._framed():
                if exc is None:
                    self._complete = True  # the body ran to the close, as it said it would
                    self._keep_alive = False
                    self._finish()
                else:  # a reset is no end of a body: what came is a truncated copy
                    self._fail(NetworkError(f"connection reset before the end of the body "
                                            f"fetching {resp.url}{why}"))
            elif self._used and self._nothing_received():
                # a reused connection lost before any answer (see resend.py): under TLS
                # the FIN may come without eof_received, so the counters are read now
                took = self._peer_took if self._fin else peer_took_all(self.transport)
                error = unanswered(resp.url, reset=exc is not None and not self._fin,
                                   took=took, why=why)
                if isinstance(error, Resend):
                    self._resp = None
                    self._cancel_timer()
                    resp._end(error)
                    # the origin's turn stays with the request: it is sent again at once
                else:
                    self._fail(error)
            else:
                self._fail(NetworkError(f"connection closed fetching {resp.url}{why}"))
        self._pool.discard(self, clean=False)
        if self._lost_waiter is not None and not self._lost_waiter.done():
            self._lost_waiter.set_result(None)

    def _framed(self) -> bool:
        """Whether the body's end was announced (Content-Length or chunked)."""
        for name, value in self._headers:
            lname = name.lower()
            if lname == "content-length" or (lname == "transfer-encoding"
                                              and "chunked" in value.lower()):
                return True
        return False

    # -- httptools callbacks -------------------------------------------------------------
    def on_message_begin(self) -> None:
        if self._complete:
            self._extra = True
            raise _Extra  # stop parsing: a second answer to one request
        self._head_size = 0
        self._reason = b""
        self._headers = []
        self._interim = False

    def on_status(self, status: bytes) -> None:
        self._reason += status
        self._head_size += len(status)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._head_size += len(name) + len(value) + 4
        if self._head_size > HEADER_LIMIT:
            raise _HeaderTooLarge
        self._headers.append((name.decode("latin-1"), value.decode("latin-1")))
        if len(name) == 10 and name.lower() == b"keep-alive":
            self._keep_alive_header = self._headers[-1][1]

    def on_headers_complete(self) -> None:
        status = self._parser.get_status_code()
        if status < 200:
            self._interim = True  # 100 Continue, 103 Early Hints: the answer follows
            return
        resp = self._resp
        assert resp is not None
        resp.status = status
        resp.reason = self._reason.decode("latin-1").strip()
        resp.version = self._parser.get_http_version()
        resp.headers = self._headers
        resp._head = True
        self._head_done = True
        resp._wake()

    def on_body(self, body: bytes) -> None:
        resp = self._resp
        assert resp is not None
        resp._push(body)
        if resp._buffered > BUFFER_LIMIT and not self._paused:
            assert self.transport is not None
            self._paused = True
            self.transport.pause_reading()
            self._read_deadline = _INF  # the reader is slow, not the server

    def on_message_complete(self) -> None:
        if self._interim:
            return
        self._complete = True
        self._keep_alive = self._parser.should_keep_alive()


class _Extra(Exception):
    """Bytes after a complete response."""


class _HeaderTooLarge(Exception):
    """A header block over HEADER_LIMIT."""
