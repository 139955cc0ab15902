"""HTTP fetching over :mod:`webcrawl.crawler.http1`: one kept-alive connection per origin.

Contract
--------
:class:`Fetcher` (used as ``async with``; :meth:`Fetcher.aclose` closes it) performs
single GET requests: :meth:`Fetcher.fetch` returns a :class:`FetchResult` for every HTTP
status (statuses are returned, never raised) and raises
:class:`~webcrawl.storage.errors.NetworkError` (connect, reset, DNS, TLS, malformed response,
undecodable content coding) or :class:`~webcrawl.storage.errors.FetchTimeoutError` (connect, read
and total timeouts) on transport failure; nothing of the HTTP client leaks.

* Redirects are *not* followed: the engine records each hop (``location`` is set for 3xx).
* Politeness: one connection per origin, one request in flight on it, at most
  ``concurrency + 8`` connections (head-room for robots.txt), kept alive
  ``fetch_keepalive`` seconds (less when the server's ``Keep-Alive: timeout`` is
  shorter).  A request is sent again at once only when a reused connection closed
  before the server can have read it (:mod:`webcrawl.crawler.http1`): one fetch, one
  request the server saw.  When the server may have read it,
  :class:`~webcrawl.crawler.http1.ReusedConnectionLost` (a NetworkError) is raised: the
  downloader sends it again at the host's next politeness slot.
* Connecting: a host's addresses are raced (happy eyeballs, the next one after
  ``fetch_happy_eyeballs_delay`` seconds); the ``proxy`` setting, else the environment's
  ``http_proxy``/``https_proxy``/``no_proxy``, picks a proxy (:mod:`webcrawl.crawler.proxy`),
  except for hosts a ``resolve`` rule pins to an address, which are always connected
  directly (the rules are a sandbox).
* The *decoded* body is capped (``max_body``, default ``fetch_max_body``): content codings
  and transfer codings other than chunked (``Transfer-Encoding: gzip``) are undone here as
  the body streams in (:mod:`webcrawl.crawler.codings`; a header sent on several lines
  lists the codings of all of them, as curl reads it), and at the cap the download stops
  and the connection is dropped (``too_large``, the cap's bytes kept).  The event loop
  gets a turn every :data:`_YIELD_EVERY` decoded bytes.
* Headers sent: ``Host``, ``User-Agent``, ``Accept``, ``Accept-Encoding`` (exactly the
  codings decoded), and ``If-None-Match``/``If-Modified-Since`` for revisits; no cookies.
  ``request_headers`` are those bytes as sent, ``headers`` the response's as received;
  the WARC archive (``warc_dir``) records both.
* HTML detection: the Content-Type, else sniffing the first bytes; decoding as browsers
  do (:mod:`webcrawl.crawler.encodings`: WHATWG charset labels only, else UTF-8 if valid, else
  windows-1252).
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from webcrawl.crawler.codings import (
    ACCEPT_ENCODING,
    BodyDecoder,
    CorruptBody,
    UnsupportedCoding,
    listed_codings,
)
from webcrawl.crawler.encodings import decode_page, page_encoding
from webcrawl.crawler.http1 import Http1Client, Http1Response
from webcrawl.crawler.politeness import parse_retry_after
from webcrawl.crawler.proxy import Proxy, proxy_routes
from webcrawl.crawler.resolve import HostGlobResolver, make_ssl_context, parse_rules
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.storage.errors import FetchError, NetworkError

if TYPE_CHECKING:
    from webcrawl.crawler.archive import WarcArchive

__all__ = ["FetchResult", "FetchTransport", "Fetcher", "decode_body", "is_html"]

_HTML_TYPES = frozenset(("text/html", "application/xhtml+xml"))
_SNIFF_TYPES = frozenset(("", "application/octet-stream", "unknown/unknown"))
_HTML_MARKERS = (b"<!doctype html", b"<html", b"<head", b"<body", b"<script", b"<iframe",
                 b"<h1", b"<div", b"<font", b"<table", b"<a", b"<style", b"<title",
                 b"<b", b"<br", b"<p", b"<!--")
#: connections beyond ``concurrency``: robots.txt fetches run beside page fetches
_ROBOTS_HEADROOM = 8
#: decoded bytes between two forced turns of the event loop while reading one body
_YIELD_EVERY = 1 << 20


@dataclass(slots=True)
class FetchResult:
    """One HTTP response (or its absence is an exception)."""

    url: str
    status: int
    content_type: str            # media type, lower-case, no parameters ('' if none)
    charset: str | None          # declared in Content-Type
    body: bytes                  # possibly cut at the size cap
    too_large: bool
    location: str | None         # raw Location header of a 3xx
    etag: str | None
    last_modified: str | None
    retry_after: float | None    # seconds, from Retry-After
    started_at: float            # wall clock
    ended_at: float
    elapsed: float               # monotonic seconds, request start to body end
    ended_mono: float
    date: str | None = None      # the server's Date header, verbatim (revisits use it)
    reason: str | None = None    # the status line's reason phrase
    headers: tuple[tuple[str, str], ...] = ()          # response headers, as received
    request_headers: tuple[tuple[str, str], ...] = ()  # request headers, as sent

    @property
    def size(self) -> int:
        return len(self.body)

    @property
    def digest(self) -> str:
        return hashlib.blake2b(self.body, digest_size=16).hexdigest()

    @property
    def is_html(self) -> bool:
        return is_html(self.content_type, self.body)

    def text(self) -> str:
        return decode_body(self.body, self.charset)


def is_html(content_type: str, body: bytes) -> bool:
    """HTML by media type; an absent or generic type is sniffed from the first bytes."""
    if content_type in _HTML_TYPES:
        return True
    if content_type not in _SNIFF_TYPES:
        return False
    head = body[:512].lstrip(b"\xef\xbb\xbf\t\n\x0c\r ").lower()
    return any(head.startswith(m) and head[len(m): len(m) + 1] in (b" ", b">")
               for m in _HTML_MARKERS)


def decode_body(body: bytes, declared: str | None) -> str:
    """Decode as browsers do (:mod:`webcrawl.crawler.encodings`: BOM, declared charset, ``<meta>``,
    else UTF-8 if valid else windows-1252; only WHATWG labels count, so ``utf-7`` and
    unknown names are ignored)."""
    return decode_page(body, page_encoding(body, declared))


def _charset(params: str) -> str | None:
    """The ``charset`` parameter of a Content-Type's parameters, unquoted; None if absent
    or empty.  As aiohttp's (email-parser) reading, except for RFC 822 comments and
    semicolons inside quotes, which no WHATWG label holds anyway."""
    for param in params.split(";"):
        name, eq, value = param.partition("=")
        if eq and name.strip().lower() == "charset":
            value = value.strip()
            if len(value) >= 2 and value[0] == value[-1] == '"':
                value = value[1:-1].replace('\\"', '"').replace("\\\\", "\\")
            return value or None
    return None


def _utf8(value: str | None) -> str | None:
    """A header value (read as latin-1) as UTF-8 text if it is that, as aiohttp read it:
    servers put raw UTF-8 in Location headers, and browsers follow them so."""
    if value is None or value.isascii():
        return value
    try:
        return value.encode("latin-1").decode("utf-8")
    except UnicodeDecodeError:
        return value


class FetchTransport(Protocol):
    """What a downloader sends its requests through (httpx's transports): a
    :class:`Fetcher` over the network, or a test's fake web answering from memory."""

    async def __aenter__(self) -> Any:
        """Get ready (a bad TLS setting fails here)."""

    async def aclose(self) -> None:
        """Close every connection (and the WARC file)."""

    async def fetch(self, url: str, *, etag: str | None = None,
                    last_modified: str | None = None,
                    max_body: int | None = None) -> FetchResult:
        """GET ``url`` once (see :meth:`Fetcher.fetch`)."""


class Fetcher:
    """One :class:`~webcrawl.crawler.http1.Http1Client` configured from :class:`CrawlSettings`."""

    def __init__(self, settings: CrawlSettings) -> None:
        self.settings = settings
        self._client: Http1Client | None = None
        self.archive: WarcArchive | None = None
        self._headers: tuple[tuple[str, str], ...] = (
            ("User-Agent", settings.fetch_user_agent),
            ("Accept", "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5"),
            ("Accept-Encoding", ACCEPT_ENCODING),
        )

    async def __aenter__(self) -> Fetcher:
        s = self.settings
        # Only a CA file or --insecure needs a context now (a bad CA file fails here,
        # before the crawl starts); the default one is built at the first https request.
        ctx = make_ssl_context(s.tls_ca_file, s.tls_insecure) \
            if s.tls_ca_file or s.tls_insecure else None
        resolver = HostGlobResolver(parse_rules(s.resolve))
        routes = proxy_routes(s.proxy, os.environ)  # a bad proxy fails here, before the crawl
        route = None
        if routes is not None:
            def route(scheme: str, host: str, port: int) -> Proxy | None:
                return None if resolver.ruled(host, port) else routes.for_origin(scheme, host, port)
        if s.warc_dir is not None:
            from webcrawl.crawler.archive import WarcArchive

            self.archive = WarcArchive(s)
        self._client = Http1Client(
            limit=s.concurrency + _ROBOTS_HEADROOM, keepalive=s.fetch_keepalive,
            connect_timeout=s.fetch_connect_timeout, read_timeout=s.fetch_read_timeout,
            total_timeout=s.fetch_total_timeout, resolver=resolver, ssl_context=ctx,
            happy_eyeballs_delay=s.fetch_happy_eyeballs_delay, proxy=route)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    @property
    def resends(self) -> int:
        """Requests sent a second time at once because a reused connection had been
        closed before the server could read them (:mod:`webcrawl.crawler.http1`)."""
        return self._client.resends if self._client is not None else 0

    async def aclose(self) -> None:
        if self.archive is not None:
            self.archive.close()
        if self._client is not None:
            await self._client.close()
            self._client = None

    async def fetch(self, url: str, *, etag: str | None = None,
                    last_modified: str | None = None,
                    max_body: int | None = None) -> FetchResult:
        """GET ``url`` once; raise NetworkError/FetchTimeoutError on transport failure."""
        if self._client is None:
            raise RuntimeError("Fetcher used outside 'async with'")
        cap = self.settings.fetch_max_body if max_body is None else max_body
        headers = self._headers
        if etag:
            headers += (("If-None-Match", etag),)
        if last_modified:
            headers += (("If-Modified-Since", last_modified),)
        started_at = time.time()
        t0 = time.monotonic()
        try:
            resp = await self._client.request("GET", url, headers)
            try:
                h = {k.lower(): v for k, v in reversed(resp.headers)}  # the first of repeats
                coding, transfer = h.get("content-encoding"), h.get("transfer-encoding")
                if coding is not None:  # every line counts (RFC 9110 5.3), as in curl
                    coding = listed_codings(resp.headers, "content-encoding")
                if transfer is not None:
                    transfer = listed_codings(resp.headers, "transfer-encoding")
                body, too_large = await self._read(resp, coding, transfer, cap)
            finally:
                resp.close()
        except FetchError:
            raise
        except (OSError, ValueError) as exc:
            raise NetworkError(f"{type(exc).__name__} fetching {url}: {exc}") from exc
        t1 = time.monotonic()
        status = resp.status
        media, _, params = h.get("content-type", "").partition(";")
        raw = tuple(resp.headers)
        result = FetchResult(
            url=url, status=status, content_type=media.strip().lower(),
            charset=_charset(params) if params else None, body=body, too_large=too_large,
            location=_utf8(h.get("location")) if 300 <= status < 400 else None,
            etag=h.get("etag"), last_modified=h.get("last-modified"),
            retry_after=parse_retry_after(h.get("retry-after"))
            if status in (429, 503) else None,
            started_at=started_at, ended_at=started_at + (t1 - t0), elapsed=t1 - t0,
            ended_mono=t1, date=h.get("date"), reason=resp.reason, headers=raw,
            request_headers=resp.request_headers)
        if self.archive is not None:
            self.archive.record(url, started_at=started_at,
                                request_headers=resp.request_headers, status=status,
                                reason=resp.reason, headers=raw, body=body,
                                truncated=too_large)
        return result

    @staticmethod
    async def _read(resp: Http1Response, coding: str | None, transfer: str | None,
                    cap: int) -> tuple[bytes, bool]:
        """Up to ``cap`` *decoded* bytes of the body, and whether there was more.

        The raw stream is decoded here, a bounded piece at a time, so a body that
        inflates a thousandfold still costs at most ``cap`` bytes of memory and ``cap``
        bytes of decompression work; the event loop gets a turn every
        :data:`_YIELD_EVERY` decoded bytes even when the socket buffer is full.  The
        caller closes ``resp``, which drops the connection of an unfinished body.
        """
        try:
            decoder = BodyDecoder(coding, transfer)
            body = bytearray()
            since_yield = 0
            while raw := await resp.read():
                for piece in decoder.feed(raw):
                    body += piece
                    if len(body) > cap:
                        del body[cap:]
                        return bytes(body), True
                    since_yield += len(piece)
                    if since_yield >= _YIELD_EVERY:
                        since_yield = 0
                        await asyncio.sleep(0)
        except (UnsupportedCoding, CorruptBody) as exc:
            raise NetworkError(f"{exc} fetching {resp.url}") from exc
        return bytes(body), False
