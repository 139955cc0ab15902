"""Sitemaps (sitemaps.org protocol 0.9) as a source of URLs (``--sitemaps``).

With ``sitemaps_follow`` on, the crawler reads a host's sitemaps right after its
robots.txt, in the same turn of the host (so still one request at a time, each
followed by the politeness wait): the ``Sitemap:`` lines of robots.txt that name the
same host, else ``/sitemap.xml``.  A sitemap index (``<sitemapindex>``) lists further
sitemaps, which are read too (one level: the protocol forbids nested indexes).  A
sitemap is XML (``<urlset>``/``<sitemapindex>`` with ``<loc>``), a plain text file of
one URL per line, or either of them gzip-compressed (``.gz`` or a gzip body).

Limits, from the protocol: at most ``sitemaps_max_urls`` (50,000) ``<loc>`` entries and
``sitemaps_max_bytes`` (50 MiB) uncompressed per file; and ours: at most
``sitemaps_max_files`` sitemap files per host.  A sitemap URL that robots.txt disallows
is not fetched.  Listed URLs must be on the sitemap's own host (the protocol's rule
against one site vouching for another); they enter the crawl like seeds (depth 0),
subject to scope, and robots.txt is checked before each is fetched.  Each is recorded
with its source (``url_sources``: ``sitemap`` and the sitemap URL).

Each ``<url>`` entry's ``<lastmod>`` (W3C datetime, :func:`w3c_datetime`) and
``<changefreq>`` are kept beside its ``<loc>`` (the protocol orders an entry's children
``loc``, ``lastmod``, ``changefreq``, ``priority``): the revisit loop reads them as change
signals (:mod:`webcrawl.crawler.revisit.sitemap_reads`).

The XML is never handed to an XML parser: ``<loc>`` values are cut out with a
regular expression and only the five predefined entities are decoded, so entity
expansion attacks ("billion laughs") and external entities have nothing to work on.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

__all__ = ["Sitemap", "SitemapReader", "host_sitemap_urls", "parse_sitemap", "w3c_datetime"]

_LOC = re.compile(rb"<(?:[A-Za-z0-9_]+:)?loc\b[^>]*>\s*(.*?)\s*</(?:[A-Za-z0-9_]+:)?loc\s*>",
                  re.S | re.I)
_INDEX = re.compile(rb"<(?:[A-Za-z0-9_]+:)?sitemapindex\b", re.I)
_CDATA = re.compile(rb"^<!\[CDATA\[(.*)\]\]>$", re.S)
_ENTITIES = {b"&amp;": b"&", b"&lt;": b"<", b"&gt;": b">", b"&quot;": b'"', b"&apos;": b"'"}
_ENTITY = re.compile(rb"&(?:amp|lt|gt|quot|apos);")
_GZIP_MAGIC = b"\x1f\x8b"
_LASTMOD = re.compile(rb"<(?:[A-Za-z0-9_]+:)?lastmod\b[^>]*>\s*(.*?)\s*</", re.S | re.I)
_CHANGEFREQ = re.compile(rb"<(?:[A-Za-z0-9_]+:)?changefreq\b[^>]*>\s*(.*?)\s*</", re.S | re.I)
#: Resolution in seconds of a W3C datetime given to the year, the month, the day.
_COARSE = {4: 366 * 86400.0, 7: 31 * 86400.0, 10: 86400.0}


def w3c_datetime(text: str) -> tuple[float, float] | None:
    """A sitemap ``lastmod`` (W3C datetime) as (POSIX seconds, resolution in seconds),
    None when it is not one; a time without a zone is taken as UTC.

    >>> w3c_datetime("2024-01-02T03:04:05+01:00"), w3c_datetime("2024-01-02")
    ((1704161045.0, 1.0), (1704153600.0, 86400.0))
    """
    text = text.strip()
    coarse = _COARSE.get(len(text))
    if coarse is not None and len(text) < 10:
        text += "-01" * ((10 - len(text)) // 3)
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.timestamp(), coarse or 1.0


@dataclass(slots=True)
class Sitemap:
    """One parsed sitemap file."""

    is_index: bool
    locs: list[str] = field(default_factory=list)
    #: entries beyond ``max_urls`` (ignored), or True if the body was cut at ``max_bytes``
    dropped: int = 0
    truncated: bool = False
    #: each entry's ``<lastmod>`` and ``<changefreq>`` text (None: not given), by ``locs``
    lastmods: list[str | None] = field(default_factory=list)
    changefreqs: list[str | None] = field(default_factory=list)


def _gunzip(body: bytes, max_bytes: int) -> tuple[bytes, bool]:
    """Decompress at most ``max_bytes``; (data, whether more was there)."""
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        data = inflater.decompress(body, max_bytes)
    except zlib.error:
        return b"", False
    return data, bool(inflater.unconsumed_tail)


def parse_sitemap(body: bytes, *, max_urls: int = 50_000,
                  max_bytes: int = 50 * 1024 * 1024) -> Sitemap:
    """Parse a sitemap or sitemap index (XML or text, gzip or not); never raises.

    >>> parse_sitemap(b'<urlset><url><loc>http://a.test/x?a=1&amp;b=2</loc></url></urlset>').locs
    ['http://a.test/x?a=1&b=2']
    """
    truncated = False
    if body.startswith(_GZIP_MAGIC):
        body, truncated = _gunzip(body, max_bytes)
    elif len(body) > max_bytes:
        body, truncated = body[:max_bytes], True
    head = body[:2048].lstrip(b"\xef\xbb\xbf \t\r\n")
    if head.startswith(b"<"):
        is_index = _INDEX.search(body[:4096]) is not None
        raw: list[bytes] = []
        stated: list[tuple[str | None, str | None]] = []
        matches = list(_LOC.finditer(body))
        for k, match in enumerate(matches):
            value = match.group(1)
            cdata = _CDATA.match(value)
            value = cdata.group(1) if cdata else _ENTITY.sub(lambda m: _ENTITIES[m.group(0)],
                                                             value)
            raw.append(value.strip())
            if len(stated) < max_urls:  # the rest of the entry: up to the next <loc>
                end = matches[k + 1].start() if k + 1 < len(matches) else len(body)
                stated.append((_text(_LASTMOD, body, match.end(), end),
                               _text(_CHANGEFREQ, body, match.end(), end)))
    else:
        is_index = False
        raw = [line.strip() for line in body.splitlines() if line.strip()]
        stated = [(None, None)] * min(len(raw), max_urls)
    locs = [v.decode("utf-8", "replace") for v in raw[:max_urls]]
    return Sitemap(is_index, locs, max(0, len(raw) - max_urls), truncated,
                   [m for m, _ in stated], [c for _, c in stated])


def _text(pattern: re.Pattern[bytes], body: bytes, start: int, end: int) -> str | None:
    """The first ``pattern`` element's text in ``body[start:end]``, or None."""
    found = pattern.search(body, start, end)
    return None if found is None else found.group(1).decode("utf-8", "replace")


def host_sitemap_urls(robots_sitemaps: list[str], origin: str) -> list[str]:
    """Where a host's sitemaps are: its robots.txt ``Sitemap:`` lines, else
    ``/sitemap.xml`` at its ``origin``."""
    from webcrawl.crawler.urls import normalize_url

    listed = [u for u in (normalize_url(x) for x in robots_sitemaps) if u is not None]
    return listed or [f"{origin}/sitemap.xml"]


#: GET a URL, returning (status, body) or None when unreachable; the caller waits out
#: politeness before and after each call.
FetchBody = Callable[[str], Awaitable[tuple[int, bytes] | None]]


class SitemapReader:
    """Read one host's sitemaps (index first, then the sitemaps it lists).

    :meth:`read` fetches them one after another through ``fetch``; a caller that must
    place each request itself (the revisit loop, on its own clock) steps instead:
    :meth:`start`, then :meth:`next_url` and :meth:`take` until :meth:`next_url` is None.

    Parameters
    ----------
    fetch : callable or None
        ``await fetch(url)`` -> ``(status, body)`` or None; polite waits are its job
        (None: only the stepping methods are used).
    allowed : callable
        ``allowed(url)``: whether robots.txt lets us fetch this sitemap URL.
    same_host : callable
        ``same_host(url)``: whether a URL is on the host being read (normalised URLs).
    max_files, max_urls, max_bytes : int
        The limits (``sitemaps_`` settings).
    """

    def __init__(self, fetch: FetchBody | None, allowed: Callable[[str], bool],
                 same_host: Callable[[str], bool], *, max_files: int, max_urls: int,
                 max_bytes: int) -> None:
        self.fetch, self.allowed, self.same_host = fetch, allowed, same_host
        self.max_files, self.max_urls, self.max_bytes = max_files, max_urls, max_bytes
        #: sitemap files fetched (requests made)
        self.files = 0
        #: each listed URL's ``lastmod`` and ``changefreq`` text, as its first listing says
        self.stated: dict[str, tuple[str | None, str | None]] = {}
        self._found: dict[str, str] = {}
        self._queue: list[tuple[str, int]] = []
        self._level: dict[str, int] = {}

    async def read(self, sitemap_urls: list[str]) -> list[tuple[str, str]]:
        """(listed URL as written, sitemap URL) pairs, in order; duplicates removed."""
        assert self.fetch is not None
        self.start(sitemap_urls)
        while (url := self.next_url()) is not None:
            self.take(url, await self.fetch(url))
        return self.found()

    def start(self, sitemap_urls: list[str]) -> None:
        """Begin a read at these sitemap URLs (forgetting any earlier read)."""
        self.files, self.stated, self._found = 0, {}, {}
        self._queue, self._level = [(u, 0) for u in sitemap_urls], {}

    def next_url(self) -> str | None:
        """The next sitemap file to fetch (counted as fetched), or None: the read is done."""
        while self._queue and self.files < self.max_files:
            url, level = self._queue.pop(0)
            if url in self._level or not self.same_host(url) or not self.allowed(url):
                continue
            self._level[url] = level
            self.files += 1
            return url
        return None

    def take(self, url: str, answer: tuple[int, bytes] | None) -> None:
        """The answer to the sitemap file ``url`` (from :meth:`next_url`)."""
        from webcrawl.crawler.urls import normalize_url

        if answer is None or not 200 <= answer[0] < 300:
            return
        sitemap = parse_sitemap(answer[1], max_urls=self.max_urls, max_bytes=self.max_bytes)
        for loc, lastmod, freq in zip(sitemap.locs, sitemap.lastmods, sitemap.changefreqs,
                                      strict=True):
            target = normalize_url(loc, url)
            if target is None or not self.same_host(target):
                continue
            if sitemap.is_index:
                if self._level[url] == 0:  # the protocol forbids an index of indexes
                    self._queue.append((target, 1))
            elif target not in self._found:
                self._found[target] = url
                self.stated[target] = (lastmod, freq)

    def found(self) -> list[tuple[str, str]]:
        """(listed URL, sitemap URL) pairs read so far, in order; duplicates removed."""
        return list(self._found.items())
