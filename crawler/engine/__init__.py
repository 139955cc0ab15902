"""The crawl engine: what to fetch, and in which order (the downloader fetches).

::

    from webcrawl.crawler.engine import Crawler, crawl

    stats = crawl(["http://site.test/"], "crawl.db")

:class:`Crawler` (in :mod:`~webcrawl.crawler.engine.core`) holds a crawl's state and
composes its parts, one module each: the dispatcher, the robots.txt, sitemap and page
turns of a host, page recording, URL discovery, strategy feedback and the naming of
dead hosts.  Every request goes through one downloader (:mod:`webcrawl.crawler.downloader`),
which keeps the hosts' politeness clocks.
"""

from __future__ import annotations

from webcrawl.crawler.engine.core import Crawler, DownloaderFactory, crawl, default_downloader
from webcrawl.crawler.engine.stats import CrawlStats

__all__ = ["CrawlStats", "Crawler", "DownloaderFactory", "crawl", "default_downloader"]
