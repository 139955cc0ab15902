"""robots.txt in a crawl: a host's first turn fetches it, and its rules then apply.

A host whose robots.txt is unknown or expired spends its turn on fetching it, through
the downloader like any request (:class:`~webcrawl.crawler.orders.FetchRobots`).  The
answer is parsed here (:class:`~webcrawl.crawler.robots.RobotsCache`: 2xx rules, 4xx allow
all, 5xx or unreachable disallow all until a retry succeeds), stored with the host, and
its Crawl-delay told to the downloader, which keeps the host's clock; the host is then
released to the frontier at the time that clock gives (or, for a file to fetch again,
at its retry time).  A file that cannot be fetched is reported with its cause
(:mod:`~webcrawl.crawler.engine.dead_hosts`).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from webcrawl.crawler.orders import FetchRobots, RobotsDone, await_answer
from webcrawl.crawler.robots import RobotsState

if TYPE_CHECKING:
    from webcrawl.crawler.engine.core import Crawler

__all__ = ["RobotsTurn", "robots_order"]


def robots_order(host_id: int) -> int:
    """The order id of a host's robots.txt fetch (page orders are URL ids, >= 0)."""
    return -1 - 2 * host_id


class RobotsTurn:
    """A host's robots.txt turn (see the module docstring)."""

    def __init__(self, crawl: Crawler) -> None:
        self.crawl = crawl

    def start(self, host_id: int) -> None:
        self.crawl.tasks.spawn(self._fetch(host_id))

    async def _fetch(self, host_id: int) -> None:
        crawl = self.crawl
        registry, downloader = crawl.registry, crawl.downloader
        host = registry.host_name(host_id)
        done = await await_answer(downloader.submit, FetchRobots(
            robots_order(host_id), registry.robots_url(host_id), host,
            downloader.ready_at(host) - time.monotonic()))
        assert isinstance(done, RobotsDone)
        crawl.stats.requests += done.requests
        self.learned(host_id, done.status, done.body, done.error)

    def learned(self, host_id: int, status: int | None, body: str | None,
                error: str | None = None) -> None:
        """Apply a fetched robots.txt (``status`` None: unreachable, ``error`` says why)
        and free the host."""
        crawl = self.crawl
        assert crawl.store is not None
        host = crawl.registry.host_name(host_id)
        if status is not None and 300 <= status < 400:
            status, error = None, f"HTTP {status} without a usable Location"
        elif status == 429:
            status = 503  # a rate limit on robots.txt: unavailable, retry later
        rules = crawl.robots.learn(host_id, status, body)
        crawl.stats.robots_fetches += 1
        downloader = crawl.downloader
        downloader.set_crawl_delay(host, rules.crawl_delay)
        ready_at = downloader.ready_at(host)
        if rules.state is RobotsState.UNAVAILABLE:
            ready_at = max(ready_at, rules.retry_at)
        crawl.dead_hosts.robots_answer(host_id, status, error, rules)
        crawl.store.update_host(host_id, robots_status=status, robots_body=body,
                                robots_fetched_at=time.time(), crawl_delay=rules.crawl_delay)
        crawl.frontier.release(host_id, ready_at)
