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
  is closed, else the request waits (FIFO).  (:mod:`~webcrawl.crawler.http1.pool`)
* **Connecting** (RFC 8305, happy eyeballs): a host with several addresses gets them
  raced, families interleaved (IPv6 first when the resolver lists it first): the next
  address is tried ``happy_eyeballs_delay`` seconds after the previous attempt started,
  or at once when it fails; the first TCP connection to complete wins and the others
  are cancelled.  A single address is connected directly.
  (:mod:`~webcrawl.crawler.http1.dial`)
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
  read it (:mod:`~webcrawl.crawler.http1.resend` says how that is known); when it may
  have (a reset, or a close the kernel's counters cannot tell) the request fails with
  :class:`ReusedConnectionLost`, a NetworkError that the crawler retries at the host's
  next politeness slot, never at once.
* **Parsing** (httptools' llhttp, as lenient as aiohttp's): 1xx interim responses are
  skipped; a body with neither Content-Length nor chunked coding runs to the close; it
  is complete when the server closes cleanly (FIN) and a NetworkError when the
  connection is reset (RST) first; a header block over ``HEADER_LIMIT`` bytes fails.
  At most about ``BUFFER_LIMIT`` unread body bytes are buffered: reading from the
  socket pauses until the caller drains them.  (:mod:`~webcrawl.crawler.http1.connection`)
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

Modules: :mod:`~webcrawl.crawler.http1.client` (the request and its resend),
:mod:`~webcrawl.crawler.http1.pool` (turns, slots, idle connections),
:mod:`~webcrawl.crawler.http1.dial` (resolving, happy eyeballs, proxies, TLS),
:mod:`~webcrawl.crawler.http1.connection` (one connection's exchange and the response),
:mod:`~webcrawl.crawler.http1.wire` (what is written, the read limits),
:mod:`~webcrawl.crawler.http1.resend` (when a request may be sent again).
"""

from __future__ import annotations

from webcrawl.crawler.http1.client import Http1Client
from webcrawl.crawler.http1.connection import Http1Response
from webcrawl.crawler.http1.dial import ProxyError
from webcrawl.crawler.http1.resend import ReusedConnectionLost

__all__ = ["Http1Client", "Http1Response", "ProxyError", "ReusedConnectionLost"]
