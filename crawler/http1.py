"""A minimal HTTP/1.1 client on ``asyncio.Protocol`` and httptools, for the fetcher.

:class:`Http1Client` sends one request and returns an :class:`Http1Response` once the
final header block has arrived; the caller pulls the body with
:meth:`Http1Response.read` and always :meth:`~Http1Response.close` s it (closing an
unfinished body drops the connection: how a size cap stops a download).  It exists for
speed: on loopback aiohttp costs 122 µs of CPU per 1 KB request, this client 52 µs (24
against 85 under uvloop; ``benchmarks/bench_fetch.py``).

Contract
--------
* **Politeness** (Mercator): one connection per origin (scheme, host, port), at most one
  request in flight on it; requests to a busy origin wait their turn (FIFO).  ``limit``
  caps the open connections of all origins: at the cap the least recently used idle one
  is closed, else the request waits (FIFO).
* **Keep-alive**: after a complete response the connection goes idle, unless the server
  said ``Connection: close`` (or HTTP/1.0 without keep-alive), the body ran to the close,
  or bytes followed the message; an idle connection closes after ``keepalive`` seconds.
  A request is never re-sent: if the server drops a kept-alive connection under a request,
  that request fails with NetworkError (the engine's retry policy decides, after its
  polite wait, so every request on the wire is one the engine counted).
* **Parsing** (httptools' llhttp, as lenient as aiohttp's): 1xx interim responses are
  skipped; a body with neither Content-Length nor chunked coding runs to the close; a
  header block over :data:`HEADER_LIMIT` bytes fails.  At most about
  :data:`BUFFER_LIMIT` unread body bytes are buffered: reading from the socket pauses
  until the caller drains them.
* **Timeouts**: ``connect_timeout`` (name resolution, TCP and TLS), ``read_timeout``
  (between two arrivals of data, not counted while the caller is slow to read) and
  ``total_timeout`` (from the call, queueing included, to the end of the body) raise
  :class:`~webcrawl.storage.errors.FetchTimeoutError`.  One timer per request: arrivals of data
  only move a deadline, the timer is re-armed when it fires early.
* **Errors**: transport, parse and TLS failures raise :class:`~webcrawl.storage.errors.NetworkError`
  with a one-line message naming the URL; nothing of asyncio, ssl or httptools leaks.
* **TLS**: without an ``ssl_context`` the verified default one is built at the first
  https request (it loads the CA store, which a plain-http crawl never needs).  The TLS
  server name and ``Host`` are the URL's own host, whatever address the resolver gave.
* :meth:`Http1Client.close` aborts every connection, idle or busy, and waits (1 s at
  most) until the transports are gone.  Works under asyncio's loops and uvloop.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections import deque
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol, cast
from urllib.parse import urlsplit

import httptools
from webcrawl.storage.errors import FetchError, FetchTimeoutError, NetworkError

if TYPE_CHECKING:
    from webcrawl.crawler.resolve import ResolveResult

__all__ = ["Http1Client", "Http1Response"]

#: bytes of one response's header block (status line and headers) at most
HEADER_LIMIT = 64 * 1024
#: unread body bytes beyond which reading from the socket pauses
BUFFER_LIMIT = 256 * 1024
#: seconds close() waits for the aborted transports to be gone
_CLOSE_WAIT = 1.0
_DEFAULT_PORTS = {"http": 80, "https": 443}
_INF = float("inf")

Origin = tuple[str, str, int]  # scheme, host, port


class Resolver(Protocol):
    """What the client needs of :class:`webcrawl.crawler.resolve.HostGlobResolver`."""

    async def resolve(self, host: str, port: int = 0,
                      family: int = socket.AF_UNSPEC) -> list[ResolveResult]: ...


def _network_error(url: str, exc: BaseException) -> NetworkError:
    text = " ".join(str(exc).split())
    return NetworkError(f"{type(exc).__name__} fetching {url}" + (f": {text}" if text else ""))


def _split(url: str) -> tuple[Origin, str, str]:
    """The origin, the request target and the Host header of an http(s) URL."""
    parts = urlsplit(url)
    default = _DEFAULT_PORTS.get(parts.scheme)
    host = parts.hostname
    if default is None or not host:
        raise ValueError("not an http(s) URL with a host")
    port = parts.port or default
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    if " " in target or not target.isascii() or not target.isprintable():
        raise ValueError("request target with spaces, controls or non-ASCII characters")
    host_header = f"[{host}]" if ":" in host else host
    if port != default:
        host_header = f"{host_header}:{port}"
    return (parts.scheme, host, port), target, host_header


class Http1Response:
    """A response whose final header block has arrived; the body streams in."""

    __slots__ = ("_buffered", "_chunks", "_conn", "_eof", "_error", "_head", "_waiter",
                 "headers", "reason", "request_headers", "status", "url", "version")

    def __init__(self, url: str, request_headers: tuple[tuple[str, str], ...],
                 conn: _Connection) -> None:
        self.url = url
        self.status = 0
        self.reason = ""
        self.version = ""
        #: response headers as received (latin-1), in order, repeats kept
        self.headers: list[tuple[str, str]] = []
        #: request headers as sent, ``Host`` first
        self.request_headers = request_headers
        self._conn: _Connection | None = conn
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


class _Connection(asyncio.Protocol):
    """One connection: writes a request, parses its response (httptools callbacks)."""

    def __init__(self, client: Http1Client, origin: Origin) -> None:
        self._client = client
        self._loop = client.loop
        self._read_timeout = client.read_timeout
        self.origin = origin
        self.transport: asyncio.Transport | None = None
        self.counted = False         # holds one of the client's `limit` slots
        self.lost = False
        self.idle_timer: asyncio.TimerHandle | None = None
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
        assert self.transport is not None and self._resp is None
        self._reset()
        self._resp = resp
        self.transport.write(request)
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
        self._client._release(self, self._keep_alive and not self._extra and not self.lost)

    def _fail(self, error: BaseException) -> None:
        resp, self._resp = self._resp, None
        self._cancel_timer()
        if resp is not None:
            resp._end(error)
        self._client._release(self, False)

    # -- asyncio.Protocol ----------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if self.transport is None and not self.lost:
            # cast, not isinstance: uvloop's transports do not derive from asyncio's
            self.transport = cast(asyncio.Transport, transport)
            self._client._live.add(self)

    def data_received(self, data: bytes) -> None:
        resp = self._resp
        if resp is None:  # bytes nobody asked for: the connection is unusable
            self._client._discard(self, clean=False)
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

    def _parse_error(self, url: str, exc: Exception) -> NetworkError:
        if self._head_size > HEADER_LIMIT:
            return self._head_error(url)
        if isinstance(exc, httptools.HttpParserUpgrade):
            return NetworkError(f"unrequested protocol upgrade fetching {url}")
        return _network_error(url, exc)

    @staticmethod
    def _head_error(url: str) -> NetworkError:
        return NetworkError(f"header block over {HEADER_LIMIT} bytes fetching {url}")

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        self._client._live.discard(self)
        resp = self._resp
        if resp is not None:
            if self._head_done and not self._framed():
                self._complete = True  # the body ran to the close, as it said it would
                self._keep_alive = False
                self._finish()
            else:
                why = f": {' '.join(str(exc).split())}" if exc else ""
                self._fail(NetworkError(f"connection closed fetching {resp.url}{why}"))
        self._client._discard(self, clean=False)
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


class Http1Client:
    """HTTP/1.1 with one kept-alive connection per origin (see the module docstring)."""

    def __init__(self, *, limit: int, keepalive: float, connect_timeout: float,
                 read_timeout: float, total_timeout: float, resolver: Resolver | None = None,
                 ssl_context: ssl.SSLContext | None = None) -> None:
        if resolver is None:
            from webcrawl.crawler.resolve import HostGlobResolver

            resolver = HostGlobResolver(())
        self.limit = limit
        self.keepalive = keepalive
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.total_timeout = total_timeout
        self._resolver = resolver
        self._ssl = ssl_context
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False
        self._open = 0                                   # connections holding a slot
        self._slot_waiters: deque[asyncio.Future[None]] = deque()
        self._busy: dict[Origin, deque[asyncio.Future[None]]] = {}  # origin -> its queue
        self._idle: dict[Origin, _Connection] = {}       # least recently used first
        self._live: set[_Connection] = set()             # transports not yet lost

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        return self._loop

    @property
    def open_connections(self) -> int:
        """Connections open or being opened."""
        return self._open

    async def request(self, method: str, url: str,
                      headers: Sequence[tuple[str, str]]) -> Http1Response:
        """Send ``method url`` with ``Host`` and ``headers``; the response once its head is in.

        Raises NetworkError or FetchTimeoutError; HTTP statuses are returned.
        """
        try:
            origin, target, host_header = _split(url)
            sent = (("Host", host_header), *headers)
            lines = "".join(f"{k}: {v}\r\n" for k, v in sent)
            request = f"{method} {target} HTTP/1.1\r\n{lines}\r\n".encode("latin-1")
        except ValueError as exc:  # UnicodeEncodeError included
            raise _network_error(url, exc) from exc
        deadline = self.loop.time() + self.total_timeout
        conn = await self._acquire(origin, deadline, url)
        resp = Http1Response(url, sent, conn)
        conn.send(resp, request, deadline)
        try:
            await resp._until_head()
        except BaseException:
            resp.close()
            raise
        return resp

    async def close(self) -> None:
        """Abort every connection; wait (a second at most) for their transports to go."""
        self._closed = True
        for conn in list(self._live):
            conn.shut()
        for conn in list(self._idle.values()):
            self._discard(conn, clean=False)
        pending = [conn.gone() for conn in self._live]
        if pending:
            await asyncio.wait(pending, timeout=_CLOSE_WAIT)

    # -- connections -------------------------------------------------------------------
    async def _acquire(self, origin: Origin, deadline: float, url: str) -> _Connection:
        """The origin's turn and a connection to it (kept-alive or new)."""
        queue = self._busy.get(origin)
        if queue is None:
            self._busy[origin] = deque()
        else:
            await self._queue(queue, deadline, url, lambda: self._release_origin(origin))
        try:
            if self._closed:
                raise NetworkError(f"client closed fetching {url}")
            conn = self._idle.pop(origin, None)
            if conn is not None:
                self._cancel_idle(conn)
                assert conn.transport is not None
                if not conn.lost and not conn.transport.is_closing():
                    return conn
                self._discard(conn, clean=False)
            return await self._connect(origin, deadline, url)
        except BaseException:
            self._release_origin(origin)
            raise

    async def _queue(self, queue: deque[asyncio.Future[None]], deadline: float, url: str,
                     give_back: Callable[[], None]) -> None:
        """Wait in ``queue`` until handed the turn; ``give_back`` returns an unused turn."""
        fut = self.loop.create_future()
        queue.append(fut)
        try:
            async with asyncio.timeout_at(deadline):
                await fut
        except BaseException as exc:
            if fut.done() and not fut.cancelled():
                give_back()
            if isinstance(exc, TimeoutError):
                raise FetchTimeoutError(f"total timeout fetching {url} (queued)") from None
            raise

    def _release_origin(self, origin: Origin) -> None:
        queue = self._busy[origin]
        while queue:
            fut = queue.popleft()
            if not fut.done():
                fut.set_result(None)  # the turn passes on, the origin stays busy
                return
        del self._busy[origin]

    async def _connect(self, origin: Origin, deadline: float, url: str) -> _Connection:
        await self._take_slot(deadline, url)
        timer = asyncio.timeout(min(self.connect_timeout, deadline - self.loop.time()))
        try:
            async with timer:
                return await self._open_connection(origin)
        except BaseException as exc:
            self._free_slot()
            if isinstance(exc, TimeoutError) and timer.expired():
                raise FetchTimeoutError(f"connect timeout fetching {url}") from None
            if isinstance(exc, FetchError) or not isinstance(exc, OSError):
                raise
            raise _network_error(url, exc) from exc

    async def _open_connection(self, origin: Origin) -> _Connection:
        scheme, host, port = origin
        ctx = self._ssl_context() if scheme == "https" else None
        infos = await self._resolver.resolve(host, port, socket.AF_UNSPEC)
        error: OSError = OSError(f"no address for {host}")
        for info in infos:  # in the resolver's order, the first that connects
            try:
                conn = await self._open_to(origin, info, ctx)
            except OSError as exc:
                error = exc
                continue
            conn.counted = True  # only now: a failed attempt has no slot to give back
            return conn
        raise error

    async def _open_to(self, origin: Origin, info: ResolveResult,
                       ctx: ssl.SSLContext | None) -> _Connection:
        conn = _Connection(self, origin)
        transport, _ = await self.loop.create_connection(
            lambda: conn, info["host"], info["port"], ssl=ctx,
            server_hostname=origin[1] if ctx is not None else None,
            family=info["family"], proto=info["proto"], flags=info["flags"])
        conn.connection_made(transport)  # uvloop calls it later, with call_soon
        return conn

    def _ssl_context(self) -> ssl.SSLContext:
        if self._ssl is None:  # lazily: loading the CA store costs tens of ms
            self._ssl = ssl.create_default_context()
        return self._ssl

    async def _take_slot(self, deadline: float, url: str) -> None:
        if self._open < self.limit:
            self._open += 1
            return
        if self._idle:  # close the least recently used idle connection, take its slot
            conn = next(iter(self._idle.values()))
            conn.counted = False
            self._discard(conn, clean=True)
            return
        await self._queue(self._slot_waiters, deadline, url, self._free_slot)
        if self._closed:
            self._free_slot()
            raise NetworkError(f"client closed fetching {url}")

    def _free_slot(self) -> None:
        while self._slot_waiters:
            fut = self._slot_waiters.popleft()
            if not fut.done():
                fut.set_result(None)  # the slot passes on: _open unchanged
                return
        self._open -= 1

    def _release(self, conn: _Connection, reusable: bool) -> None:
        """The exchange on ``conn`` is over: keep it idle or close it; next in line."""
        origin = conn.origin
        if reusable and not self._closed and (not self._slot_waiters or self._busy[origin]):
            self._idle[origin] = conn
            conn.idle_timer = self.loop.call_later(self.keepalive, self._expire, conn)
        else:
            self._discard(conn, clean=reusable)
        self._release_origin(origin)

    def _expire(self, conn: _Connection) -> None:
        conn.idle_timer = None
        self._discard(conn, clean=True)

    @staticmethod
    def _cancel_idle(conn: _Connection) -> None:
        if conn.idle_timer is not None:
            conn.idle_timer.cancel()
            conn.idle_timer = None

    def _discard(self, conn: _Connection, clean: bool) -> None:
        """Close ``conn`` (idempotent); its slot goes to a waiter or back to the pool."""
        if self._idle.get(conn.origin) is conn:
            del self._idle[conn.origin]
        self._cancel_idle(conn)
        transport = conn.transport
        if transport is not None and not conn.lost and not transport.is_closing():
            if clean:
                transport.close()
            else:
                transport.abort()
        if conn.counted:
            conn.counted = False
            self._free_slot()
