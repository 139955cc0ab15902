"""Sitemaps in a crawl (``sitemaps_follow``): a host's second turn reads them.

Right after a host's robots.txt allowed it, its next turn reads its sitemaps
(:class:`~webcrawl.crawler.sitemaps.SitemapReader`: the ``Sitemap:`` lines of robots.txt
on the same host, else ``/sitemap.xml``), one file at a time, each an order to the
downloader (:class:`~webcrawl.crawler.orders.FetchFile`) like any request: on the host's
politeness clock, counted in its requests, archived in the crawl's WARC.  Listed URLs
enter the crawl like seeds (depth 0, :data:`SITEMAP_SEQ`), within scope, each recorded
with its source (``url_sources``).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from webcrawl.crawler.orders import FetchFile, FileDone, await_answer
from webcrawl.crawler.sitemaps import SitemapReader, host_sitemap_urls
from webcrawl.crawler.urls import host_key

if TYPE_CHECKING:
    from webcrawl.crawler.engine.core import Crawler

__all__ = ["SITEMAP_SEQ", "SitemapTurn", "sitemap_order"]

#: ``urls.discovered_seq`` of a URL first listed in a sitemap (seeds have -1).
SITEMAP_SEQ = -2


def sitemap_order(host_id: int) -> int:
    """The order id of a host's sitemap fetches (one at a time; robots.txt's are odd)."""
    return -2 - 2 * host_id


class SitemapTurn:
    """A host's sitemap turn (see the module docstring)."""

    def __init__(self, crawl: Crawler) -> None:
        self.crawl = crawl
        self._read: set[int] = set()  # hosts whose sitemaps were read

    def due(self, host_id: int) -> bool:
        """Whether the host's sitemaps are still to be read (asked once per host)."""
        if host_id in self._read:
            return False
        self._read.add(host_id)
        return True

    def start(self, host_id: int) -> None:
        self.crawl.tasks.spawn(self._read_sitemaps(host_id))

    async def _read_sitemaps(self, host_id: int) -> None:
        """Use a host's turn to read its sitemaps (one polite request at a time)."""
        crawl = self.crawl
        assert crawl.store is not None
        s, registry, downloader = crawl.settings, crawl.registry, crawl.downloader
        host, origin = registry.host_name(host_id), registry.origin(host_id)
        rules = crawl.robots.rules(host_id)

        async def fetch(url: str) -> tuple[int, bytes] | None:
            crawl.stats.sitemap_fetches += 1
            done = await await_answer(downloader.submit, FetchFile(
                sitemap_order(host_id), url, host, downloader.ready_at(host) - time.monotonic(),
                rules.crawl_delay or 0.0, s.sitemaps_max_bytes))
            assert isinstance(done, FileDone)
            crawl.stats.requests += done.requests
            return None if done.status is None else (done.status, done.body)

        reader = SitemapReader(
            fetch, lambda u: crawl.robots.allowed(host_id, u),
            lambda u: host_key(u) == host and u.startswith(origin),
            max_files=s.sitemaps_max_files, max_urls=s.sitemaps_max_urls,
            max_bytes=s.sitemaps_max_bytes)
        try:
            for url, via in await reader.read(host_sitemap_urls(rules.sitemaps, origin)):
                if url not in registry:
                    url_id = crawl.discovery.register(url, 0, SITEMAP_SEQ)
                    crawl.store.add_url_source(url_id, "sitemap", via)
        finally:
            crawl.frontier.release(host_id, downloader.ready_at(host))
