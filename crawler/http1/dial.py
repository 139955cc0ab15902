"""Connecting to an origin: name resolution, happy eyeballs, an http proxy's ``CONNECT``
tunnel, and TLS.

:meth:`Dialer.open` gives a transport to an origin wired to the caller's protocol:

* **direct**: the host's addresses (from the resolver, ``--resolve`` rules included)
  are raced as RFC 8305 says when there are several: families interleaved (the first
  listed family first), the next address tried ``happy_eyeballs_delay`` seconds after
  the previous attempt started, or at once when it fails; the first TCP connection wins
  and the others are cancelled.  A single address is connected directly.  https gets
  TLS with the URL's host as server name, whatever address it resolved to.
* **through an http proxy** (the ``route`` gives the origin's proxy): an http origin
  is a connection to the proxy, its requests written in absolute form (the proxy is
  returned for that); an https origin gets ``CONNECT host:port`` through the proxy,
  then TLS to the origin over the tunnel (server name and certificate the origin's).
  A proxy that refuses, or does not answer as one, raises :class:`ProxyError`.

Without an ``ssl_context`` the verified default one is built at the first https
origin: it loads the CA store, which a plain-http crawl never needs.  Errors are the
loop's (OSError, ssl errors, TimeoutError from the caller's timer): the client turns
them into one-line fetch errors.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import Callable
from itertools import chain, zip_longest
from typing import TYPE_CHECKING, Protocol, cast

from webcrawl.crawler.http1.wire import HEADER_LIMIT, Origin

if TYPE_CHECKING:
    from webcrawl.crawler.proxy import Proxy
    from webcrawl.crawler.resolve import ResolveResult

__all__ = ["HAPPY_EYEBALLS_DELAY", "Dialer", "ProxyError", "ProxyRoute", "Resolver",
           "interleave"]

#: seconds between starting connection attempts to a host's addresses (RFC 8305's
#: recommended "Connection Attempt Delay")
HAPPY_EYEBALLS_DELAY = 0.25


class Resolver(Protocol):
    """What the dialer needs of :class:`webcrawl.crawler.resolve.HostGlobResolver`."""

    async def resolve(self, host: str, port: int = 0,
                      family: int = socket.AF_UNSPEC) -> list[ResolveResult]: ...


#: picks the proxy of an origin (scheme, host, port); None: connect directly
ProxyRoute = Callable[[str, str, int], "Proxy | None"]


class ProxyError(OSError):
    """A proxy refused to open a tunnel, or did not answer like an HTTP proxy."""


def interleave(infos: list[ResolveResult]) -> list[ResolveResult]:
    """RFC 8305 section 4: alternate address families, the first listed family first."""
    first = infos[0]["family"]
    same = [i for i in infos if i["family"] == first]
    other = [i for i in infos if i["family"] != first]
    return [i for i in chain.from_iterable(zip_longest(same, other)) if i is not None]


class Dialer:
    """Opens transports to origins (see the module docstring)."""

    def __init__(self, resolver: Resolver, *, route: ProxyRoute | None = None,
                 ssl_context: ssl.SSLContext | None = None,
                 happy_eyeballs_delay: float = HAPPY_EYEBALLS_DELAY) -> None:
        self.happy_eyeballs_delay = happy_eyeballs_delay
        self._resolver = resolver
        self._route = route
        self._ssl = ssl_context

    async def open(self, origin: Origin, protocol: asyncio.Protocol
                   ) -> tuple[asyncio.Transport, Proxy | None]:
        """A connected (for https, TLS-wrapped) transport to ``origin`` for ``protocol``,
        and the http proxy its requests go through in absolute form (None: direct, or a
        tunnel).  ``protocol.connection_made`` is the caller's to call: uvloop calls it
        later, with call_soon."""
        scheme, host, port = origin
        proxy = self._route(scheme, host, port) if self._route is not None else None
        if proxy is None:
            ctx = self._ssl_context() if scheme == "https" else None
            return await self._dial(host, port, lambda: protocol, ctx, host), None
        if scheme == "http":
            return await self._dial(proxy.host, proxy.port, lambda: protocol), proxy
        ctx = self._ssl_context()
        authority = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        loop = asyncio.get_running_loop()
        tunnel = _Tunnel(loop, proxy, authority)
        raw = await self._dial(proxy.host, proxy.port, lambda: tunnel)
        tunnel.connection_made(raw)
        try:
            await tunnel.established()
            tls = await loop.start_tls(raw, protocol, ctx, server_hostname=host)
        except BaseException:
            raw.abort()
            raise
        if tls is None:  # the loop says so when the transport closed meanwhile
            raise ProxyError(f"proxy {proxy} closed the tunnel to {authority}")
        return tls, None

    async def _dial(self, host: str, port: int, factory: Callable[[], asyncio.Protocol],
                    ctx: ssl.SSLContext | None = None,
                    server_hostname: str | None = None) -> asyncio.Transport:
        """A transport to ``host:port``: one address directly, several raced."""
        loop = asyncio.get_running_loop()
        infos = await self._resolver.resolve(host, port, socket.AF_UNSPEC)
        if not infos:
            raise OSError(f"no address for {host}")
        if len(infos) == 1:
            info = infos[0]
            transport, _ = await loop.create_connection(
                factory, info["host"], info["port"], ssl=ctx,
                server_hostname=server_hostname if ctx is not None else None,
                family=info["family"], proto=info["proto"], flags=info["flags"])
        else:
            sock = await self._race(infos)
            try:
                transport, _ = await loop.create_connection(
                    factory, sock=sock, ssl=ctx,
                    server_hostname=server_hostname if ctx is not None else None)
            except BaseException:
                sock.close()
                raise
        return transport

    async def _race(self, infos: list[ResolveResult]) -> socket.socket:
        """RFC 8305: the first TCP connection of staggered attempts; the others cancelled."""
        loop = asyncio.get_running_loop()
        pending: set[asyncio.Task[socket.socket]] = set()
        errors: list[BaseException] = []
        try:
            for info in interleave(infos):
                pending.add(loop.create_task(_tcp(loop, info)))
                sock = await _first(pending, errors, self.happy_eyeballs_delay)
                if sock is not None:
                    return sock
            while pending:  # every address tried: wait for the rest
                sock = await _first(pending, errors, None)
                if sock is not None:
                    return sock
        finally:
            for task in pending:
                task.cancel()  # a cancelled attempt closes its socket
        raise errors[0]

    def _ssl_context(self) -> ssl.SSLContext:
        if self._ssl is None:  # lazily: loading the CA store costs tens of ms
            self._ssl = ssl.create_default_context()
        return self._ssl


async def _first(pending: set[asyncio.Task[socket.socket]], errors: list[BaseException],
                 timeout: float | None) -> socket.socket | None:
    """A connected socket of ``pending`` within ``timeout``; None when the time is up or
    an attempt failed (both start the next address)."""
    done, _ = await asyncio.wait(pending, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
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


async def _tcp(loop: asyncio.AbstractEventLoop, info: ResolveResult) -> socket.socket:
    sock = socket.socket(info["family"], socket.SOCK_STREAM, info["proto"])
    try:
        sock.setblocking(False)
        await loop.sock_connect(sock, (info["host"], info["port"]))
    except BaseException:
        sock.close()
        raise
    return sock


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
