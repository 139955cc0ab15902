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
* **Connecting** (RFC 8305, happy eyeballs): a host with several addresses gets them
  raced, families interleaved (IPv6 first when the resolver lists it first): the next
  address is tried ``happy_eyeballs_delay`` seconds after the previous attempt started,
  or at once when it fails; the first TCP connection to complete wins and the others
  are cancelled.  A single address is connected directly.
* **Proxies** (``proxy``, see :mod:`webcrawl.crawler.proxy`): an http origin's requests go
  to its proxy in absolute form (``GET http://host/path``); an https origin gets a
  ``CONNECT host:port`` tunnel through the proxy, then TLS to the origin (server name
  and certificate checked against the origin host).  Connections stay one per origin.
* **Keep-alive**: after a complete response the connection goes idle, unless the server
  said ``Connection: close`` (or HTTP/1.0 without keep-alive), the body ran to the close,
  or bytes followed the message; an idle connection closes after ``keepalive`` seconds,
  or earlier when the response said ``Keep-Alive: timeout=N`` (then after
  ``N - KEEPALIVE_MARGIN`` seconds, so it is never reused just as the server drops it).
* **One safe resend**: a GET (or HEAD) on a *reused* connection that closes before any
  byte of the response arrived is sent once more, at once, on a new connection, within
  the same total timeout; the caller sees one request.  Only when the server cannot have
  read it: on Linux the kernel's TCP counters (``TCP_INFO``) must show bytes of the
  request that the server's TCP never acknowledged (the server had closed before the
  request arrived).  A request the server's TCP took whole and then dropped (a server
  that reads and resets) is not resent: it fails with NetworkError and the engine's
  retry decides after its polite wait, so the server never sees a request the engine did
  not space out.  Where the counters cannot be read (not Linux, or TLS under uvloop,
  whose TLS layer closes the socket before it reports a close without ``close_notify``)
  the resend is made as curl and aiohttp make it.
* **Parsing** (httptools' llhttp, as lenient as aiohttp's): 1xx interim responses are
  skipped; a body with neither Content-Length nor chunked coding runs to the close; it
  is complete when the server closes cleanly (FIN) and a NetworkError when the
  connection is reset (RST) first; a header block over :data:`HEADER_LIMIT` bytes fails.
  At most about :data:`BUFFER_LIMIT` unread body bytes are buffered: reading from the
  socket pauses until the caller drains them.
* **Timeouts**: ``connect_timeout`` (name resolution, the race of all addresses, the
  proxy's CONNECT and TLS: everything before the request is written), ``read_timeout``
  (between two arrivals of data, not counted while the caller is slow to read) and
  ``total_timeout`` (from the call, queueing, connecting and a resend included, to the
  end of the body) raise :class:`~webcrawl.storage.errors.FetchTimeoutError`.  A resend
  opens its connection under a fresh ``connect_timeout``, cut to what is left of the
  total.  One timer per request: arrivals of data only move a deadline, the timer is
  re-armed when it fires early.
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
import struct
from collections import deque
from collections.abc import Callable, Sequence
from itertools import chain, zip_longest
from typing import TYPE_CHECKING, Protocol, cast
from urllib.parse import urlsplit

import httptools
from webcrawl.storage.errors import FetchError, FetchTimeoutError, NetworkError

if TYPE_CHECKING:
    from webcrawl.crawler.proxy import Proxy
    from webcrawl.crawler.resolve import ResolveResult

__all__ = ["Http1Client", "Http1Response"]

#: bytes of one response's header block (status line and headers) at most
HEADER_LIMIT = 64 * 1024
#: unread body bytes beyond which reading from the socket pauses
BUFFER_LIMIT = 256 * 1024
#: seconds between starting connection attempts to a host's addresses (RFC 8305's
#: recommended "Connection Attempt Delay")
HAPPY_EYEBALLS_DELAY = 0.25
#: seconds taken off a server's ``Keep-Alive: timeout=N``: the server's clock starts
#: when it sends the response, ours when it has arrived, and a request needs time to
#: travel back
KEEPALIVE_MARGIN = 1.0
#: methods resent once when a reused connection turns out closed (safe, idempotent)
RESENDABLE = frozenset(("GET", "HEAD"))
#: seconds close() waits for the aborted transports to be gone
_CLOSE_WAIT = 1.0
_DEFAULT_PORTS = {"http": 80, "https": 443}
_INF = float("inf")
# struct tcp_info (linux/tcp.h): tcpi_bytes_acked at 120 (Linux 4.1), tcpi_bytes_sent
# and tcpi_bytes_retrans at 200 (Linux 4.19); the SYN counts as one acknowledged byte
_TCP_INFO = getattr(socket, "TCP_INFO", None)
_TCP_INFO_SIZE = 216
_ACKED = struct.Struct("=Q")
_SENT = struct.Struct("=QQ")

Origin = tuple[str, str, int]  # scheme, host, port


class Resolver(Protocol):
    """What the client needs of :class:`webcrawl.crawler.resolve.HostGlobResolver`."""

    async def resolve(self, host: str, port: int = 0,
                      family: int = socket.AF_UNSPEC) -> list[ResolveResult]: ...


#: picks the proxy of an origin (scheme, host, port); None: connect directly
ProxyRoute = Callable[[str, str, int], "Proxy | None"]


class ProxyError(OSError):
    """A proxy refused to open a tunnel, or did not answer like an HTTP proxy."""


class _Resend(NetworkError):
    """The reused connection closed before the server can have read the request."""


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


def _peer_took_all(transport: asyncio.BaseTransport | None) -> bool | None:
    """Whether the peer's TCP acknowledged every byte sent on ``transport``'s socket.

    False means bytes (of the request in flight: all before it were answered) never
    reached the peer's TCP, so no server can have read the request; None: the kernel
    does not say (not Linux, older than 4.19, or the socket is gone).
    """
    if _TCP_INFO is None or transport is None:
        return None
    sock = transport.get_extra_info("socket")
    if sock is None:
        return None
    try:
        info = sock.getsockopt(socket.IPPROTO_TCP, _TCP_INFO, _TCP_INFO_SIZE)
    except OSError:
        return None
    if len(info) < _TCP_INFO_SIZE:
        return None
    acked: int = _ACKED.unpack_from(info, 120)[0] - 1  # less the SYN
    sent: int
    retransmitted: int
    sent, retransmitted = _SENT.unpack_from(info, 200)
    return acked >= sent - retransmitted


def _keepalive_timeout(value: str) -> float | None:
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


def _interleave(infos: list[ResolveResult]) -> list[ResolveResult]:
    """RFC 8305 section 4: alternate address families, the first listed family first."""
    first = infos[0]["family"]
    same = [i for i in infos if i["family"] == first]
    other = [i for i in infos if i["family"] != first]
    return [i for i in chain.from_iterable(zip_longest(same, other)) if i is not None]


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
        #: request headers as sent, ``Host`` first (a proxy's credentials are not kept)
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

    # slots: with these 30 attributes in an instance dict a request cost 2,600 more
    # instructions (callgrind, bare client loop: 1.6% of the request)
    __slots__ = ("_client", "_complete", "_extra", "_head_bytes", "_head_done", "_head_size",
                 "_headers", "_interim", "_keep_alive", "_keep_alive_header", "_loop",
                 "_lost_waiter", "_parser", "_paused", "_peer_took", "_read_deadline",
                 "_read_timeout", "_reason", "_resp", "_timer", "_timer_at", "_total_deadline",
                 "_used", "counted", "idle_timer", "keepalive", "lost", "origin", "transport",
                 "via")

    def __init__(self, client: Http1Client, origin: Origin) -> None:
        self._client = client
        self._loop = client.loop
        self._read_timeout = client.read_timeout
        self.origin = origin
        self.transport: asyncio.Transport | None = None
        self.counted = False         # holds one of the client's `limit` slots
        self.lost = False
        self.idle_timer: asyncio.TimerHandle | None = None
        #: the http proxy requests go through in absolute form (None: direct or tunnel)
        self.via: Proxy | None = None
        #: seconds the connection may stay idle: the client's, or less when the server
        #: announced a shorter ``Keep-Alive: timeout``
        self.keepalive = client.keepalive
        self._used = False           # an exchange was completed on it: it is being reused
        self._peer_took: bool | None = None  # at EOF: the peer acknowledged all we sent
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
            server = _keepalive_timeout(self._keep_alive_header)
            self._keep_alive_header = None
            if server is not None:
                self.keepalive = min(self._client.keepalive, server - KEEPALIVE_MARGIN)
                if self.keepalive <= 0:
                    self._keep_alive = False  # it would close before we could reuse it
        self._used = True
        self._client._release(self, self._keep_alive and not self._extra and not self.lost)

    def _fail(self, error: BaseException) -> None:
        resp, self._resp = self._resp, None
        self._cancel_timer()
        if resp is not None:
            resp._end(error)
        self._client._release(self, False)

    def _nothing_received(self) -> bool:
        return not self._head_done and self._head_bytes == 0

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

    def eof_received(self) -> bool | None:
        if self._used and self._resp is not None and self._nothing_received():
            # now, while the socket is surely open: connection_lost may come after it closed
            self._peer_took = _peer_took_all(self.transport)
        return None

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
            why = f": {' '.join(str(exc).split())}" if exc else ""
            if self._head_done and not self._framed():
                if exc is None:
                    self._complete = True  # the body ran to the close, as it said it would
                    self._keep_alive = False
                    self._finish()
                else:  # a reset is no end of a body: what came is a truncated copy
                    self._fail(NetworkError(f"connection reset before the end of the body "
                                            f"fetching {resp.url}{why}"))
            elif self._used and self._nothing_received() and self._safe_to_resend():
                self._resp = None
                self._cancel_timer()
                resp._end(_Resend(f"connection closed before any response fetching {resp.url}"))
                # the origin's turn stays with the request: it is sent again at once
            else:
                self._fail(NetworkError(f"connection closed fetching {resp.url}{why}"))
        self._client._discard(self, clean=False)
        if self._lost_waiter is not None and not self._lost_waiter.done():
            self._lost_waiter.set_result(None)

    def _safe_to_resend(self) -> bool:
        """No server can have read the request (see the module docstring)."""
        took = self._peer_took if self._peer_took is not None else _peer_took_all(self.transport)
        return not took

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


class _Tunnel(asyncio.Protocol):
    """The ``CONNECT`` exchange with a proxy, before TLS to the origin starts over it."""

    def __init__(self, loop: asyncio.AbstractEventLoop, proxy: Proxy, authority: str) -> None:
        self._proxy = proxy
        self._authority = authority
        self._head = bytearray()
        self._done: asyncio.Future[None] = loop.create_future()
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if self.transport is None:
            self.transport = cast(asyncio.Transport, transport)

    async def established(self) -> asyncio.Transport:
        """Send ``CONNECT``; the transport once the proxy answered 2xx (else ProxyError)."""
        assert self.transport is not None
        auth = self._proxy.authorization
        self.transport.write((
            f"CONNECT {self._authority} HTTP/1.1\r\nHost: {self._authority}\r\n"
            + (f"Proxy-Authorization: {auth}\r\n" if auth else "") + "\r\n").encode("latin-1"))
        await self._done
        return self.transport

    def _settle(self, error: BaseException | None) -> None:
        if self._done.done():
            return
        if error is None:
            self._done.set_result(None)
        else:
            self._done.set_exception(error)

    def data_received(self, data: bytes) -> None:
        self._head += data
        end = self._head.find(b"\r\n\r\n")
        if end < 0:
            if len(self._head) > HEADER_LIMIT:
                self._settle(ProxyError(f"proxy {self._proxy}: CONNECT answer over "
                                        f"{HEADER_LIMIT} bytes"))
            return
        line = bytes(self._head[:self._head.find(b"\r\n")]).decode("latin-1")
        version, _, rest = line.partition(" ")
        code, _, reason = rest.partition(" ")
        if not version.startswith("HTTP/1.") or not (code.isdigit() and len(code) == 3):
            self._settle(ProxyError(f"proxy {self._proxy} does not speak HTTP: {line[:80]!r}"))
        elif not 200 <= int(code) < 300:
            self._settle(ProxyError(f"proxy {self._proxy} answered {code} {reason.strip()} "
                                    f"to CONNECT {self._authority}"))
        elif end + 4 < len(self._head):  # the origin's TLS speaks only after the client
            self._settle(ProxyError(f"proxy {self._proxy} sent bytes after its CONNECT answer"))
        else:
            self._settle(None)

    def connection_lost(self, exc: Exception | None) -> None:
        why = f": {exc}" if exc else ""
        self._settle(ProxyError(f"proxy {self._proxy} closed the connection during "
                                f"CONNECT {self._authority}{why}"))


class Http1Client:
    """HTTP/1.1 with one kept-alive connection per origin (see the module docstring)."""

    def __init__(self, *, limit: int, keepalive: float, connect_timeout: float,
                 read_timeout: float, total_timeout: float, resolver: Resolver | None = None,
                 ssl_context: ssl.SSLContext | None = None,
                 happy_eyeballs_delay: float = HAPPY_EYEBALLS_DELAY,
                 proxy: ProxyRoute | None = None) -> None:
        if resolver is None:
            from webcrawl.crawler.resolve import HostGlobResolver

            resolver = HostGlobResolver(())
        self.limit = limit
        self.keepalive = keepalive
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.total_timeout = total_timeout
        self.happy_eyeballs_delay = happy_eyeballs_delay
        #: requests sent a second time on a new connection (see the module docstring)
        self.resends = 0
        self._resolver = resolver
        self._route = proxy
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
        resent = False
        while True:
            resp = Http1Response(url, sent, conn)
            via = conn.via
            conn.send(resp, request if via is None else _absolute_form(
                method, f"{origin[0]}://{host_header}{target}", lines, via), deadline)
            try:
                await resp._until_head()
            except _Resend as exc:
                if resent or method not in RESENDABLE:  # once, and only safe methods
                    self._release_origin(origin)
                    raise NetworkError(str(exc)) from None
                resent = True
                self.resends += 1
                conn = await self._reconnect(origin, deadline, url)
                continue
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

    async def _reconnect(self, origin: Origin, deadline: float, url: str) -> _Connection:
        """A new connection for a resend: the request still holds the origin's turn."""
        try:
            if self._closed:
                raise NetworkError(f"client closed fetching {url}")
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
                conn = await self._open_connection(origin)
        except BaseException as exc:
            self._free_slot()
            if isinstance(exc, TimeoutError) and timer.expired():
                raise FetchTimeoutError(f"connect timeout fetching {url}") from None
            if isinstance(exc, FetchError) or not isinstance(exc, OSError):
                raise
            raise _network_error(url, exc) from exc
        conn.counted = True  # only now: a failed attempt has no slot to give back
        return conn

    async def _open_connection(self, origin: Origin) -> _Connection:
        """A connected (and, for https, TLS-wrapped) connection to ``origin``."""
        scheme, host, port = origin
        proxy = self._route(scheme, host, port) if self._route is not None else None
        conn = _Connection(self, origin)
        if proxy is None:
            ctx = self._ssl_context() if scheme == "https" else None
            conn.connection_made(await self._dial(host, port, lambda: conn, ctx, host))
        elif scheme == "http":
            conn.connection_made(await self._dial(proxy.host, proxy.port, lambda: conn))
            conn.via = proxy
        else:
            ctx = self._ssl_context()
            authority = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
            tunnel = _Tunnel(self.loop, proxy, authority)
            raw = await self._dial(proxy.host, proxy.port, lambda: tunnel)
            tunnel.connection_made(raw)
            try:
                await tunnel.established()
                tls = await self.loop.start_tls(raw, conn, ctx, server_hostname=host)
            except BaseException:
                raw.abort()
                raise
            if tls is None:  # the loop says so when the transport closed meanwhile
                raise ProxyError(f"proxy {proxy} closed the tunnel to {authority}")
            conn.connection_made(tls)
        # (uvloop calls connection_made later, with call_soon: hence the calls above)
        return conn

    async def _dial(self, host: str, port: int, factory: Callable[[], asyncio.Protocol],
                    ctx: ssl.SSLContext | None = None,
                    server_hostname: str | None = None) -> asyncio.Transport:
        """A transport to ``host:port``: one address directly, several raced."""
        infos = await self._resolver.resolve(host, port, socket.AF_UNSPEC)
        if not infos:
            raise OSError(f"no address for {host}")
        if len(infos) == 1:
            info = infos[0]
            transport, _ = await self.loop.create_connection(
                factory, info["host"], info["port"], ssl=ctx,
                server_hostname=server_hostname if ctx is not None else None,
                family=info["family"], proto=info["proto"], flags=info["flags"])
        else:
            sock = await self._race(infos)
            try:
                transport, _ = await self.loop.create_connection(
                    factory, sock=sock, ssl=ctx,
                    server_hostname=server_hostname if ctx is not None else None)
            except BaseException:
                sock.close()
                raise
        return transport

    async def _race(self, infos: list[ResolveResult]) -> socket.socket:
        """RFC 8305: the first TCP connection of staggered attempts; the others cancelled."""
        pending: set[asyncio.Task[socket.socket]] = set()
        errors: list[BaseException] = []
        try:
            for info in _interleave(infos):
                pending.add(self.loop.create_task(self._tcp(info)))
                sock = await self._first(pending, errors, self.happy_eyeballs_delay)
                if sock is not None:
                    return sock
            while pending:  # every address tried: wait for the rest
                sock = await self._first(pending, errors, None)
                if sock is not None:
                    return sock
        finally:
            for task in pending:
                task.cancel()  # a cancelled attempt closes its socket
        raise errors[0]

    @staticmethod
    async def _first(pending: set[asyncio.Task[socket.socket]], errors: list[BaseException],
                     timeout: float | None) -> socket.socket | None:
        """A connected socket of ``pending`` within ``timeout``; None when the time is up
        or an attempt failed (both start the next address)."""
        done, _ = await asyncio.wait(pending, timeout=timeout,
                                     return_when=asyncio.FIRST_COMPLETED)
        pending -= done
        winner = None
        for task in done:
            exc = task.exception()
            if exc is not None:
                errors.append(exc)
            elif winner is None:
                winner = task.result()
            else:
                task.result().close()  # connected in the same turn: one is enough
        return winner

    async def _tcp(self, info: ResolveResult) -> socket.socket:
        sock = socket.socket(info["family"], socket.SOCK_STREAM, info["proto"])
        try:
            sock.setblocking(False)
            await self.loop.sock_connect(sock, (info["host"], info["port"]))
        except BaseException:
            sock.close()
            raise
        return sock

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
            conn.idle_timer = self.loop.call_later(conn.keepalive, self._expire, conn)
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


def _absolute_form(method: str, url: str, lines: str, proxy: Proxy) -> bytes:
    """A request for an http proxy: the whole URL as the target, its credentials added."""
    auth = f"Proxy-Authorization: {proxy.authorization}\r\n" if proxy.authorization else ""
    return f"{method} {url} HTTP/1.1\r\n{lines}{auth}\r\n".encode("latin-1")
