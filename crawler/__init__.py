"""The polite asyncio crawler.

Crawl a fixture web served by ``webcrawl fixture serve --port 8400``::

    from crawler import CrawlSettings, crawl

    stats = crawl(["http://site0.test:8400/"], "crawl.db",
                  CrawlSettings(scope_hosts=("*.test",), resolve=("*.test=127.0.0.1",)))
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from crawler.settings import CrawlSettings

if TYPE_CHECKING:
    from crawler.engine import Crawler, CrawlStats

__all__ = ["CrawlSettings", "CrawlStats", "Crawler", "crawl"]


def crawl(seeds: Iterable[str], db: str | Path, settings: CrawlSettings | None = None,
          *, resume: bool = False) -> CrawlStats:
    """Run a crawl to completion in a new event loop; return its statistics."""
    from crawler.engine import Crawler

    crawler = Crawler(db, seeds, settings, resume=resume)
    return asyncio.run(crawler.run())


def __getattr__(name: str) -> Any:
    # Lazy: ``import crawler`` (e.g. for crawler.urls) must not pull in aiohttp.
    if name in ("Crawler", "CrawlStats"):
        from crawler import engine

        return getattr(engine, name)
    raise AttributeError(f"module 'crawler' has no attribute {name!r}")
