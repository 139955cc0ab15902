"""The crawl's live counters and final summary (:class:`CrawlStats`).

Counts are by outcome; the groups they are summed over (URLs requested, answered,
failed) are :mod:`webcrawl.crawler.outcomes`', the one place they are spelled.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from webcrawl.crawler.outcomes import FAILED, REQUESTED

if TYPE_CHECKING:
    from webcrawl.crawler.archive import WarcCounts

__all__ = ["CrawlStats"]


@dataclass(slots=True)
class CrawlStats:
    """Live counters (read by :mod:`webcrawl.crawler.progress`) and the final summary."""

    started: float = field(default_factory=time.monotonic)
    ended: float | None = None
    outcomes: Counter[str] = field(default_factory=Counter)
    #: URLs kept out by each trap bound of :mod:`webcrawl.crawler.traps` (this run)
    traps: Counter[str] = field(default_factory=Counter)
    requests: int = 0
    robots_fetches: int = 0
    retries: int = 0
    frontier: int = 0
    busy_hosts: int = 0
    queued_hosts: int = 0      # hosts holding URLs in the frontier
    hosts: int = 0
    urls: int = 0
    stopped: str = "running"   # 'done', 'max_fetches', 'memory_limit', 'stopped'
    resumed_pages: int = 0     # pages of the crawl before this run (resume)
    links_cut_pages: int = 0   # pages whose links were cut at links_max_per_page
    sitemap_fetches: int = 0   # sitemap files requested (--sitemaps)
    state_bytes: int = 0       # largest crawl state seen (crawler.budget), bytes
    #: this run's WARC output (``--warc``): records written, identical-payload revisit
    #: records among them and the body bytes those did not store again; None: no WARC
    #: written in this process (none asked for, or worker processes wrote it)
    warc: WarcCounts | None = None
    #: host -> why its robots.txt could not be fetched ("connection refused", ...), for
    #: the hosts whose robots.txt is unreachable now (their URLs wait or end
    #: ``robots_unreachable``)
    unreachable: dict[str, str] = field(default_factory=dict)
    #: seed URL -> why its request failed (a network error or a timeout after retries)
    failed_seeds: dict[str, str] = field(default_factory=dict)

    @property
    def pages(self) -> int:
        """URLs that were requested and ended (any HTTP answer or error)."""
        o = self.outcomes
        return sum(o[k] for k in REQUESTED)

    @property
    def errors(self) -> int:
        o = self.outcomes
        return sum(o[k] for k in FAILED)

    @property
    def elapsed(self) -> float:
        return (self.ended or time.monotonic()) - self.started

    @property
    def rate(self) -> float:
        """Pages per second of this run (a resumed crawl's earlier pages excluded)."""
        done = self.pages - self.resumed_pages
        return done / self.elapsed if self.elapsed > 0 else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"fetches": self.pages, "seconds": round(self.elapsed, 3),
                "fetches_per_second": round(self.rate, 1), "requests": self.requests,
                "robots_fetches": self.robots_fetches, "retries": self.retries,
                "urls": self.urls, "hosts": self.hosts, "frontier": self.frontier,
                "links_cut_pages": self.links_cut_pages,
                "sitemap_fetches": self.sitemap_fetches, "state_bytes": self.state_bytes,
                "warc": None if self.warc is None else self.warc.as_dict(),
                "stopped": self.stopped, "outcomes": dict(sorted(self.outcomes.items())),
                "traps": dict(sorted(self.traps.items())),
                "unreachable": dict(sorted(self.unreachable.items())),
                "failed_seeds": dict(sorted(self.failed_seeds.items()))}
