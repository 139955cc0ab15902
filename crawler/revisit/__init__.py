"""The revisit loop: keep a crawled collection fresh within a fetch budget (incremental crawl).

::

    from webcrawl.crawler.revisit import RevisitSettings, revisit

    stats = revisit("crawl.db", RevisitSettings(policy="uniform", budget=300, duration=60))

See :mod:`webcrawl.crawler.revisit.loop` for the contract.
"""

from __future__ import annotations

from webcrawl.crawler.revisit.loop import RevisitCrawler, revisit
from webcrawl.crawler.revisit.progress import RevisitStats
from webcrawl.crawler.revisit.settings import REVISIT_POLICIES, RevisitSettings

__all__ = [
    "REVISIT_POLICIES",
    "RevisitCrawler",
    "RevisitSettings",
    "RevisitStats",
    "revisit",
]
