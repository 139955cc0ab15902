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

The XML is never handed to an XML parser: ``<loc>`` values are cut out with a
regular expression and only the five predefined entities are decoded, so entity
expansion attacks ("billion laughs") and external entities have nothing to work on.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

__all__ = ["Sitemap", "SitemapReader", "parse_sitemap"]

_LOC = re.compile(rb"<(?:[A-Za-z0-9_]+:)?loc\b[^>]*>\s*(.*?)\s*</(?:[A-Za-z0-9_]+:)?loc\s*>",
                  re.S | re.I)
_INDEX = re.compile(rb"<(?:[A-Za-z0-9_]+:)?sitemapindex\b", re.I)
_CDATA = re.compile(rb"^<!\[CDATA\[(.*)\]\]>$", re.S)
_ENTITIES = {b"&amp;": b"&", b"&lt;": b"<", b"&gt;": b">", b"&quot;": b'"', b"&apos;": b"'"}
_ENTITY = re.compile(rb"&(?:amp|lt|gt|quot|apos);")
_GZIP_MAGIC = b"\x1f\x8b"


@dataclass(slots=True)
class Sitemap:
    """One parsed sitemap file."""

    is_index: bool
    locs: list[str] = field(default_factory=list)
    #: entries beyond ``max_urls`` (ignored), or True if the body was cut at ``max_bytes``
    dropped: int = 0
    truncated: bool = False


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
        for match in _LOC.finditer(body):
            value = match.group(1)
            cdata = _CDATA.match(value)
            value = cdata.group(1) if cdata else _ENTITY.sub(lambda m: _ENTITIES[m.group(0)],
                                                             value)
            raw.append(value.strip())
    else:
        is_index = False
        raw = [line.strip() for line in body.splitlines() if line.strip()]
    locs = [v.decode("utf-8", "replace") for v in raw[:max_urls]]
    return Sitemap(is_index, locs, max(0, len(raw) - max_urls), truncated)


#: GET a URL, returning (status, body) or None when unreachable; the caller waits out
#: politeness before and after each call.
FetchBody = Callable[[str], Awaitable[tuple[int, bytes] | None]]


class SitemapReader:
    """Read one host's sitemaps (index first, then the sitemaps it lists).

    Parameters
    ----------
    fetch : callable
        ``await fetch(url)`` -> ``(status, body)`` or None; polite waits are its job.
    allowed : callable
        ``allowed(url)``: whether robots.txt lets us fetch this sitemap URL.
    same_host : callable
        ``same_host(url)``: whether a URL is on the host being read (normalised URLs).
    max_files, max_urls, max_bytes : int
        The limits (``sitemaps_`` settings).
    """

    def __init__(self, fetch: FetchBody, allowed: Callable[[str], bool],
                 same_host: Callable[[str], bool], *, max_files: int, max_urls: int,
                 max_bytes: int) -> None:
        self.fetch, self.allowed, self.same_host = fetch, allowed, same_host
        self.max_files, self.max_urls, self.max_bytes = max_files, max_urls, max_bytes
        #: sitemap files fetched (requests made)
        self.files = 0

    async def read(self, sitemap_urls: list[str]) -> list[tuple[str, str]]:
        """(listed URL as written, sitemap URL) pairs, in order; duplicates removed."""
        from webcrawl.crawler.urls import normalize_url

        found: dict[str, str] = {}
        queue = [(u, 0) for u in sitemap_urls]
        seen: set[str] = set()
        while queue and self.files < self.max_files:
            url, level = queue.pop(0)
            if url in seen or not self.same_host(url) or not self.allowed(url):
                continue
            seen.add(url)
            self.files += 1
            answer = await self.fetch(url)
            if answer is None or not 200 <= answer[0] < 300:
                continue
            sitemap = parse_sitemap(answer[1], max_urls=self.max_urls, max_bytes=self.max_bytes)
            for loc in sitemap.locs:
                target = normalize_url(loc, url)
                if target is None or not self.same_host(target):
                    continue
                if sitemap.is_index:
                    if level == 0:  # the protocol forbids an index of indexes
                        queue.append((target, 1))
                elif target not in found:
                    found[target] = url
        return list(found.items())
