"""Strategy feedback: what a fetched page tells the crawl ordering.

Each fetched page's out-links go to the strategy (:meth:`Strategy.fetched
<webcrawl.analysis.ordering.strategies.Strategy.fetched>`), whose priority updates go to the
frontier at once.  A strategy that recomputes in bulk (PageRank) does so in a worker
thread when it asks to; the result is applied before the next URL is taken, never
whenever the thread happens to finish (the dispatcher takes nothing while one is
:attr:`pending <StrategyFeedback.pending>`), so a seeded crawl of one host fetches in the
same order every run, and in the same order as a virtual crawl
(:func:`webcrawl.analysis.ordering.virtual.virtual_crawl`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from webcrawl.storage import _testhooks

if TYPE_CHECKING:
    from webcrawl.crawler.engine.core import Crawler

__all__ = ["UPDATE_CHUNK", "StrategyFeedback"]

log = logging.getLogger(__name__)

#: Incremental priority updates applied between two yields to the event loop (see
#: StrategyFeedback._run).
UPDATE_CHUNK = 5000


class StrategyFeedback:
    """Feeds fetched pages to the strategy and applies its recomputations."""

    def __init__(self, crawl: Crawler) -> None:
        self.crawl = crawl
        self.task: asyncio.Task[Any] | None = None
        self._fetches_since = 0
        self._recomputed_at = time.monotonic()

    @property
    def pending(self) -> bool:
        """Whether a recomputation is under way (no URL is taken meanwhile)."""
        return self.task is not None

    def learn(self, url_id: int, out_links: Sequence[int]) -> None:
        crawl = self.crawl
        frontier, strategy = crawl.frontier, crawl.strategy
        for target, priority in strategy.fetched(url_id, out_links):
            frontier.update(target, priority)
        self._fetches_since += 1
        if self.task is None and strategy.wants_recompute(
                self._fetches_since, time.monotonic() - self._recomputed_at):
            snapshot = strategy.snapshot()
            self._fetches_since = 0
            self._recomputed_at = time.monotonic()
            self.task = asyncio.get_running_loop().create_task(self._run(snapshot))
            self.task.add_done_callback(self._done)

    async def _run(self, snapshot: Any) -> None:
        """Recompute in a worker thread, then apply the updates.

        The dispatcher takes no new URL meanwhile (fetches in flight go on), so the
        result is applied at the fetch count the recomputation was due at, whatever the
        thread's speed.  The pause is the recomputation's time: PageRank recomputes at
        geometric growth steps on large crawls, so it stays a small share of the crawl.

        A recomputation usually re-scores the whole frontier: :meth:`Frontier.update_many`
        then rebuilds the frontier's structures in one go, several times cheaper than
        per-URL updates (it holds the event loop for about 1 s per million frontier
        URLs).  A smaller batch is applied incrementally in chunks of
        :data:`UPDATE_CHUNK`, yielding to the event loop in between (requests in flight
        keep being served).
        """
        crawl = self.crawl
        updates = await asyncio.to_thread(_materialise, type(crawl.strategy).recompute,
                                          snapshot)
        frontier = crawl.frontier
        if frontier.rebuilds(len(updates)):
            frontier.update_many(updates)
        else:
            for start in range(0, len(updates), UPDATE_CHUNK):
                if start:
                    await asyncio.sleep(0)
                frontier.update_many(updates[start:start + UPDATE_CHUNK])

    def _done(self, task: asyncio.Task[None]) -> None:
        self.task = None
        self.crawl.tasks.wake()  # the dispatcher waits for this
        if not task.cancelled() and task.exception() is not None:
            log.error("strategy recompute failed", exc_info=task.exception())


def _materialise(fn: Any, snapshot: Any) -> list[tuple[int, float]]:
    """Run a recomputation and materialise its updates (still in the worker thread)."""
    _testhooks.reached("recompute")  # test-only: lets a kill land mid-recomputation
    return [(int(u), float(p)) for u, p in fn(snapshot)]
