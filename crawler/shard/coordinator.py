"""The coordinator of a sharded crawl: the engine, with fetching handed to workers.

:class:`ShardedCrawler` is a :class:`~crawler.engine.Crawler` whose two fetching steps,
a page and a robots.txt, are orders to the worker owning the host
(:class:`~crawler.shard.pool.WorkerPool`).  Everything else is the engine's, unchanged:
the dispatcher and its frontier (one request in flight per host), the strategy (global
rankings -- backlink, pagerank, opic -- stay global: they see every link), the URL
registry, the scope, robots.txt rules, and the store, of which the coordinator is the
only writer.  A worker's result is recorded with the engine's own record path
(``_finish_result``), all records of one fetch enqueued with no ``await`` in between,
so the store's batches keep a fetch whole; a resume is the engine's resume.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from analysis.ordering.strategies import Strategy
from crawler.engine import Crawler, CrawlStats
from crawler.fetcher import FetchResult
from crawler.frontier import Taken
from crawler.settings import CrawlSettings
from crawler.shard.pool import Spawn, WorkerPool
from crawler.shard.protocol import (
    Attempt,
    FetchPage,
    FetchRobots,
    PageDone,
    RobotsDone,
    StartWorker,
)
from crawler.shard.transport import PipeTransport, Transport
from storage import _testhooks
from storage.store import ResumeState

__all__ = ["DISPATCH_LEAD", "ShardedCrawler", "open_crawler", "spawn_process"]


#: Seconds before a host's politeness wait ends at which its next order is sent (the
#: worker waits the rest, on its own clock): it hides the order's trip to the worker.
#: Small, because a waiting order holds one of the ``concurrency`` slots.
DISPATCH_LEAD = 0.05


@dataclass(slots=True)
class _Shipped(FetchResult):
    """A worker's response without its body (size, digest and type travel instead)."""

    shipped_size: int = 0
    shipped_digest: str = ""
    shipped_html: bool = False

    @property
    def size(self) -> int:
        return self.shipped_size

    @property
    def digest(self) -> str:
        return self.shipped_digest

    @property
    def is_html(self) -> bool:
        return self.shipped_html


def _result(url: str, a: Attempt) -> FetchResult:
    assert a.status is not None
    return _Shipped(url=url, status=a.status, content_type=a.content_type, charset=None,
                    body=b"", too_large=a.too_large, location=a.location, etag=a.etag,
                    last_modified=a.last_modified, retry_after=a.retry_after,
                    started_at=a.started_at, ended_at=a.ended_at,
                    elapsed=a.ended_at - a.started_at, ended_mono=0.0,
                    shipped_size=a.size, shipped_digest=a.digest or "",
                    shipped_html=a.is_html)


async def spawn_process(worker: int, generation: int) -> Transport:
    """A worker child process; a restarted one never inherits a test kill point."""
    env = {"WEBCRAWL_TEST_KILL": ""} if generation else None
    return await PipeTransport.spawn(env)


class ShardedCrawler(Crawler):
    """A crawl whose fetching runs in ``settings.workers`` worker processes.

    Takes the :class:`~crawler.engine.Crawler` arguments, and ``spawn`` (default:
    :func:`spawn_process`), which starts one worker and returns its transport.
    """

    def __init__(self, db: str | Path, seeds: Iterable[str] = (),
                 settings: CrawlSettings | None = None, *, resume: bool = False,
                 strategy: Strategy | None = None,
                 overrides: Mapping[str, Any] | None = None,
                 spawn: Spawn | None = None) -> None:
        super().__init__(db, seeds, settings, resume=resume, strategy=strategy,
                         overrides=overrides)
        self.pool = WorkerPool(self.settings.workers, self._start_order,
                               spawn or spawn_process, self._rewait)

    async def run(self) -> CrawlStats:
        try:
            return await super().run()
        finally:
            await self.pool.close()

    def _restore(self, state: ResumeState) -> None:
        """The engine's resume; then every host counts as contacted just now.

        The crawl that was killed may have had requests in flight whose records were
        never committed (and its workers may have been mid-request when they died), so
        the database cannot tell a host's last contact: each host first waits its full
        politeness delay.
        """
        super()._restore(state)
        now = time.monotonic()
        for slot in self.registry.slots():
            slot.ready_at = max(slot.ready_at,
                                now + self.politeness.delay(0.0, slot.crawl_delay))

    def _start_order(self, worker: int, generation: int) -> StartWorker:
        return StartWorker(worker, self.pool.size, self.settings, tuple(self.seeds),
                           generation)

    def _rewait(self, order: FetchPage | FetchRobots) -> FetchPage | FetchRobots:
        """Re-time an order of a lost worker: its host counts as contacted just now."""
        host_id = (self.registry.host_of(order.order) if isinstance(order, FetchPage)
                   else -1 - order.order)
        slot = self.registry.slot(host_id)
        now = time.monotonic()
        self.politeness.after_request(slot, now, now)
        return replace(order, wait=slot.ready_at - now)

    async def _fetch_robots(self, host_id: int) -> None:
        slot = self.registry.slot(host_id)
        done = await self.pool.request(FetchRobots(
            -1 - host_id, self.registry.robots_url(host_id), slot.name,
            slot.ready_at - time.monotonic()))
        assert isinstance(done, RobotsDone)
        self.stats.requests += done.requests
        ended = time.monotonic()
        self._robots_learned(host_id, done.status, done.body, ended - done.elapsed, ended)

    async def _fetch_page(self, taken: Taken, seq: int) -> None:
        slot = self.registry.slot(taken.host_id)
        try:
            done = await self.pool.request(FetchPage(
                taken.url_id, self.registry.url(taken.url_id), slot.name,
                slot.ready_at - time.monotonic(), slot.crawl_delay))
            assert isinstance(done, PageDone)
            slot.ready_at = max(slot.ready_at, time.monotonic() + done.ready_in)
            self._apply(taken, seq, done)
        finally:
            # The host's next order leaves up to DISPATCH_LEAD early and its worker
            # waits out the rest: the round trip overlaps the politeness wait.
            self.frontier.release(taken.host_id, slot.ready_at - DISPATCH_LEAD)

    def _apply(self, taken: Taken, seq: int, done: PageDone) -> None:
        """Record a worker's answer as the engine records a fetch (no await in here)."""
        url = self.registry.url(taken.url_id)
        requests = len(done.failed) + (done.result is not None)
        self.stats.requests += requests
        self.stats.retries += max(0, requests - 1)
        self.registry.slot(taken.host_id).requests += requests
        for n, a in enumerate(done.failed, 1):
            assert a.outcome is not None
            self._record(taken, seq, n, a.started_at, a.ended_at, a.outcome,
                         _result(url, a) if a.status is not None else None, error=a.error)
        if done.result is None:
            outcome = done.failed[-1].outcome
            assert outcome is not None
            self._finish(taken, seq, outcome)
        else:
            self._finish_result(taken, seq, len(done.failed) + 1, _result(url, done.result),
                                done.links)
        _testhooks.kill_at("shard_page")


def open_crawler(db: str | Path, seeds: Iterable[str] = (), *, resume: bool = False,
                 overrides: Mapping[str, Any] | None = None) -> Crawler:
    """The crawl to run: a :class:`ShardedCrawler` when its settings ask for workers > 1.

    The settings are those of :class:`~crawler.engine.Crawler` (on resume, the stored
    ones with ``overrides`` applied), so ``--workers`` can change on a resume.
    """
    seeds = list(seeds)
    crawler = Crawler(db, seeds, resume=resume, overrides=overrides)
    if crawler.settings.workers > 1:
        return ShardedCrawler(db, seeds, resume=resume, overrides=overrides)
    return crawler
