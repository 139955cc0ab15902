"""The polite asyncio crawler: crawl, revisit, import WARC files.

Crawl a fixture web served by ``webcrawl fixture serve --port 8400``, then keep it fresh::

    import asyncio

    from webcrawl.crawler import CrawlSettings, RevisitCrawler, RevisitSettings, crawl

    settings = CrawlSettings(scope_hosts=("*.test",), resolve=("*.test=127.0.0.1",))
    stats = crawl(["http://site0.test:8400/"], "crawl.db", settings)
    asyncio.run(RevisitCrawler("crawl.db", RevisitSettings(duration=60), settings).run())

The public API is the table below; each name loads its module on first use, so
``import webcrawl.crawler.urls`` (the fixture web's URL normaliser) pulls in no aiohttp.
``revisit()`` lives in :mod:`webcrawl.crawler.revisit` (the name is the subpackage's); every
other module (frontier, robots, politeness, fetcher, ...) is importable by its own name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from webcrawl.storage._facade import lazy_attributes
from webcrawl.storage._version import __version__ as __version__

if TYPE_CHECKING:  # `X as X`: explicit re-exports for type checkers
    from webcrawl.crawler.engine import Crawler as Crawler
    from webcrawl.crawler.engine import CrawlStats as CrawlStats
    from webcrawl.crawler.engine import crawl as crawl
    from webcrawl.crawler.ingest import WarcImport as WarcImport
    from webcrawl.crawler.ingest import import_warc as import_warc
    from webcrawl.crawler.revisit import RevisitCrawler as RevisitCrawler
    from webcrawl.crawler.revisit import RevisitSettings as RevisitSettings
    from webcrawl.crawler.revisit import RevisitStats as RevisitStats
    from webcrawl.crawler.settings import CrawlSettings as CrawlSettings
    from webcrawl.crawler.urls import normalize_url as normalize_url

#: The public API: name -> the module that defines it (imported on first use).
_LAZY = {
    # crawl: seeds -> a crawl database
    "crawl": "webcrawl.crawler.engine",
    "CrawlSettings": "webcrawl.crawler.settings",  # every tunable, with its default
    "CrawlStats": "webcrawl.crawler.engine",  # what crawl() returns
    "Crawler": "webcrawl.crawler.engine",  # the engine: resume, your own strategy
    # revisit: keep a crawled collection fresh within a fetch budget
    "RevisitCrawler": "webcrawl.crawler.revisit",
    "RevisitSettings": "webcrawl.crawler.revisit",
    "RevisitStats": "webcrawl.crawler.revisit",
    # bring your own data: WARC files -> a crawl database
    "import_warc": "webcrawl.crawler.ingest",
    "WarcImport": "webcrawl.crawler.ingest",  # what import_warc() returns
    # THE URL normalisation (the crawl's and the fixture web's truth)
    "normalize_url": "webcrawl.crawler.urls",
}

__all__ = sorted(_LAZY)
__getattr__, __dir__ = lazy_attributes(__name__, _LAZY)
