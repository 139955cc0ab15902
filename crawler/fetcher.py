"""HTTP fetching with aiohttp: one shared, kept-alive connector; one connection per host.

:class:`Fetcher` performs single GET requests (redirects are *not* followed: the
engine records each hop) with connect/read/total timeouts and a cap on the *decoded*
body (content codings are undone here as the body streams in, see
:mod:`crawler.codings`), decides whether a response is HTML (Content-Type, else
sniffing the first bytes), and decodes it as browsers do (:mod:`crawler.encodings`:
WHATWG charset labels only, else UTF-8 if valid, else windows-1252).  Conditional headers
(``If-None-Match``/``If-Modified-Since``) support revisits.  Transport failures are
converted at this boundary to :class:`~storage.errors.NetworkError` and
:class:`~storage.errors.FetchTimeoutError`; HTTP statuses are returned, never raised.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import aiohttp
from yarl import URL

from crawler.codings import ACCEPT_ENCODING, BodyDecoder, CorruptBody, UnsupportedCoding
from crawler.encodings import decode_page, page_encoding
from crawler.politeness import parse_retry_after
from crawler.resolve import HostGlobResolver, make_ssl_context, parse_rules
from crawler.settings import CrawlSettings
from storage.errors import FetchTimeoutError, NetworkError

if TYPE_CHECKING:
    from crawler.archive import WarcArchive

__all__ = ["FetchResult", "Fetcher", "decode_body", "is_html"]

_HTML_TYPES = frozenset(("text/html", "application/xhtml+xml"))
_SNIFF_TYPES = frozenset(("", "application/octet-stream", "unknown/unknown"))
_HTML_MARKERS = (b"<!doctype html", b"<html", b"<head", b"<body", b"<script", b"<iframe",
                 b"<h1", b"<div", b"<font", b"<table", b"<a", b"<style", b"<title",
                 b"<b", b"<br", b"<p", b"<!--")
_CHUNK = 1 << 16
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
    """Decode as browsers do (:mod:`crawler.encodings`: BOM, declared charset, ``<meta>``,
    else UTF-8 if valid else windows-1252; only WHATWG labels count, so ``utf-7`` and
    unknown names are ignored)."""
    return decode_page(body, page_encoding(body, declared))


class Fetcher:
    """A shared aiohttp session configured from :class:`CrawlSettings`."""

    def __init__(self, settings: CrawlSettings) -> None:
        self.settings = settings
        self._session: aiohttp.ClientSession | None = None
        self.archive: WarcArchive | None = None
        self._headers = {
            "User-Agent": settings.fetch_user_agent,
            "Accept": "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5",
            "Accept-Encoding": ACCEPT_ENCODING,
        }

    async def __aenter__(self) -> Fetcher:
        s = self.settings
        if s.warc_dir is not None:
            from crawler.archive import WarcArchive

            self.archive = WarcArchive(s)
        connector = aiohttp.TCPConnector(
            limit=s.concurrency + 8,   # head-room for robots.txt fetches
            limit_per_host=1,          # Mercator: one connection per web server
            keepalive_timeout=s.fetch_keepalive,
            resolver=HostGlobResolver(parse_rules(s.resolve)),
            ssl=make_ssl_context(s.tls_ca_file, s.tls_insecure),
            ttl_dns_cache=300,
        )
        timeout = aiohttp.ClientTimeout(total=s.fetch_total_timeout,
                                        sock_connect=s.fetch_connect_timeout,
                                        sock_read=s.fetch_read_timeout)
        self._session = aiohttp.ClientSession(connector=connector, timeout=timeout,
                                              headers=self._headers, auto_decompress=False,
                                              cookie_jar=aiohttp.DummyCookieJar())
        # aiohttp silently re-sends a GET once when a kept-alive connection drops; that
        # request would be unrecorded, unpaced and beyond retry_attempts: every request
        # must be the engine's own (the retry policy decides, after the polite wait).
        self._session._retry_connection = False
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self.archive is not None:
            self.archive.close()
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def fetch(self, url: str, *, etag: str | None = None,
                    last_modified: str | None = None,
                    max_body: int | None = None) -> FetchResult:
        """GET ``url`` once; raise NetworkError/FetchTimeoutError on transport failure."""
        if self._session is None:
            raise RuntimeError("Fetcher used outside 'async with'")
        cap = self.settings.fetch_max_body if max_body is None else max_body
        headers: dict[str, str] = {}
        if etag:
            headers["If-None-Match"] = etag
        if last_modified:
            headers["If-Modified-Since"] = last_modified
        started_at = time.time()
        t0 = time.monotonic()
        try:
            async with self._session.get(URL(url, encoded=True), allow_redirects=False,
                                         headers=headers or None) as resp:
                body, too_large = await self._read(resp, cap)
                h = resp.headers
                ctype = h.get("Content-Type", "")
                media, _, params = ctype.partition(";")
                charset = resp.charset if params else None
                status = resp.status
                location = h.get("Location") if 300 <= status < 400 else None
                retry_after = parse_retry_after(h.get("Retry-After")) \
                    if status in (429, 503) else None
                etag_out, lm_out = h.get("ETag"), h.get("Last-Modified")
                raw = tuple((k.decode("latin-1"), v.decode("latin-1"))
                            for k, v in resp.raw_headers)
                sent = tuple(resp.request_info.headers.items())
                reason = resp.reason
        except (TimeoutError, aiohttp.ServerTimeoutError) as exc:
            raise FetchTimeoutError(f"timeout fetching {url}") from exc
        except (aiohttp.ClientError, OSError, ValueError) as exc:
            raise NetworkError(f"{type(exc).__name__} fetching {url}: {exc}") from exc
        t1 = time.monotonic()
        result = FetchResult(url=url, status=status, content_type=media.strip().lower(),
                           charset=charset, body=body, too_large=too_large,
                           location=location, etag=etag_out, last_modified=lm_out,
                           retry_after=retry_after, started_at=started_at,
                           ended_at=started_at + (t1 - t0), elapsed=t1 - t0, ended_mono=t1,
                           date=h.get("Date"), reason=reason, headers=raw,
                           request_headers=sent)
        if self.archive is not None:
            self.archive.record(url, started_at=started_at, request_headers=sent,
                                status=status, reason=reason, headers=raw, body=body,
                                truncated=too_large)
        return result

    @staticmethod
    async def _read(resp: aiohttp.ClientResponse, cap: int) -> tuple[bytes, bool]:
        """Up to ``cap`` *decoded* bytes of the body, and whether there was more.

        The raw stream is decoded here (the session does not auto-decompress), a bounded
        piece at a time, so a body that inflates a thousandfold still costs at most
        ``cap`` bytes of memory and ``cap`` bytes of decompression work; the event loop
        gets a turn every :data:`_YIELD_EVERY` decoded bytes even when the socket
        buffer is full.
        """
        try:
            decoder = BodyDecoder(resp.headers.get("Content-Encoding"))
        except UnsupportedCoding as exc:
            resp.close()
            raise NetworkError(str(exc)) from exc
        body = bytearray()
        since_yield = 0
        try:
            async for raw in resp.content.iter_chunked(_CHUNK):
                for piece in decoder.feed(raw):
                    body += piece
                    if len(body) > cap:
                        resp.close()  # stop downloading what we will not keep
                        del body[cap:]
                        return bytes(body), True
                    since_yield += len(piece)
                    if since_yield >= _YIELD_EVERY:
                        since_yield = 0
                        await asyncio.sleep(0)
        except CorruptBody as exc:
            resp.close()
            raise NetworkError(str(exc)) from exc
        return bytes(body), False
