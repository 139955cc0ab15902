"""The revisit loop: keep a crawled collection fresh within a fetch budget (incremental crawl).

See :mod:`webcrawl.crawler.revisit.loop` for the contract.
"""

from __future__ import annotations

from webcrawl.crawler.revisit.link_history import (
    LinkHistory,
)
from webcrawl.crawler.revisit.loop import (
    REVISIT_POLICIES,
    RevisitCrawler,
    RevisitSettings,
    RevisitStats,
    TokenBucket,
    body_digest,
    revisit,
    run_with_progress,
    volatile_pattern,
)
from webcrawl.crawler.revisit.window import (
    NewPage,
    PageWindow,
)

__all__ = [
    "REVISIT_POLICIES",
    "LinkHistory",
    "NewPage",
    "PageWindow",
    "RevisitCrawler",
    "RevisitSettings",
    "RevisitStats",
    "TokenBucket",
    "body_digest",
    "revisit",
    "run_with_progress",
    "volatile_pattern",
]
