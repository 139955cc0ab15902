"""The coordinator of a sharded crawl: the engine, with fetching handed to workers.

:class:`ShardedCrawler` is a :class:`~webcrawl.crawler.engine.Crawler` whose two fetching steps,
a page and a robots.txt, are orders to the worker owning the host
(:class:`~webcrawl.crawler.shard.pool.WorkerPool`).  A host's turn hands its worker a *window*
of up to ``shard_window`` of its best URLs at once, refilled one for one as results
come back, while no other host waits for a slot: the worker fetches them one at a time
on the host's politeness clock, so a host's next request never waits for a round trip
through the coordinator (one request per host in flight stays the worker's rule).
The window's URLs are the host's best when taken: a globally ranked strategy's
re-rankings reach a host up to ``shard_window`` fetches late.  Results are handled by
callbacks, a batch at a time (no task or future per page).  Everything else is the
engine's, unchanged: the dispatcher and its frontier, the strategy (global
rankings -- backlink, pagerank, opic -- stay global: they see every link), the URL
registry, the scope, robots.txt rules, and the store, of which the coordinator is the
only writer.  A worker's result is recorded with the engine's own record path
(``_finish_result``), all records of one fetch enqueued with no ``await`` in between,
so the store's batches keep a fetch whole; a resume is the engine's resume.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from webcrawl.analysis.ordering.strategies import Strategy
from webcrawl.crawler.engine import Crawler, CrawlStats
from webcrawl.crawler.fetcher import FetchResult
from webcrawl.crawler.frontier import Taken
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.crawler.shard.pool import Spawn, WorkerPool
from webcrawl.crawler.shard.protocol import (
    Attempt,
    FetchPage,
    FetchRobots,
    PageDone,
    RobotsDone,
    StartWorker,
    WorkerDone,
)
from webcrawl.crawler.shard.transport import PipeTransport, Transport
from webcrawl.storage import _testhooks
from webcrawl.storage.store import ResumeState

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


@dataclass(slots=True, eq=False)
class _Window:
    """A host's turn: the URLs handed to its worker and not answered yet."""

    host_id: int
    #: resolved when the window is empty and not refilled (or with the error to raise)
    ended: asyncio.Future[None]
    #: order (URL id) -> (taken, seq) of the URLs in the worker's hands
    out: dict[int, tuple[Taken, int]] = field(default_factory=dict)
    closed: bool = False


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

    Takes the :class:`~webcrawl.crawler.engine.Crawler` arguments, and ``spawn`` (default:
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
        self.pool.after_batch = self._after_batch
        self._window_size = self.settings.shard_window
        #: hosts whose turn has URLs in a worker's hands (at most one window per host)
        self._windows: dict[int, _Window] = {}

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

    # -- a host's window of URLs ------------------------------------------------------
    def _start_pages(self, host_id: int) -> None:
        """A host's turn: hand its worker a window of URLs (module docstring)."""
        loop = self._loop
        assert loop is not None
        window = _Window(host_id, loop.create_future())
        self._refill(window)
        if not window.out:
            self.frontier.release(host_id, self.registry.slot(host_id).ready_at)
            return
        self._windows[host_id] = window
        self._tasks.spawn(self._run_window(window))

    def _may_take(self, host_id: int) -> bool:
        """Whether a host's window may take one more URL now (the engine's rules for a
        take, a robots.txt still fresh, and no other host waiting for a slot)."""
        store = self.store
        assert store is not None
        if (self._tasks.stopping or self._recompute is not None
                or self._max_pages_reached() or store.backlogged
                or self.robots.needs_fetch(host_id, time.monotonic())):
            return False
        return self._in_flight() < self.settings.concurrency or not self.frontier.has_ready()

    def _refill(self, window: _Window) -> None:
        """Top the window up to ``shard_window`` URLs while the host may take more."""
        host_id = window.host_id
        size = self._window_size
        registry, pool = self.registry, self.pool
        slot = registry.slot(host_id)
        while len(window.out) < size and self._may_take(host_id):
            got = self._take_allowed(host_id)
            if got is None:
                return
            order = got[0].url_id
            window.out[order] = got
            pool.submit(FetchPage(order, registry.url(order), slot.name,
                                  slot.ready_at - time.monotonic(), slot.crawl_delay),
                        partial(self._page_done, window, order))

    def _page_done(self, window: _Window, order: int, done: WorkerDone | BaseException
                   ) -> None:
        """A worker's answer for a URL of ``window`` (called by the pool's reader)."""
        if window.closed:
            return
        try:
            if isinstance(done, BaseException):
                raise done
            taken, seq = window.out.pop(order)
            assert isinstance(done, PageDone)
            slot = self.registry.slot(window.host_id)
            slot.ready_at = max(slot.ready_at, time.monotonic() + done.ready_in)
            self._apply(taken, seq, done)
            self._refill(window)
        except BaseException as error:  # raised by the window's task
            window.closed = True
            if not window.ended.done():
                window.ended.set_exception(error)
            return
        if not window.out and not window.ended.done():
            window.ended.set_result(None)

    async def _run_window(self, window: _Window) -> None:
        """Hold the host's slot until its window is answered; then release the host."""
        slot = self.registry.slot(window.host_id)
        try:
            await window.ended
        finally:
            window.closed = True
            del self._windows[window.host_id]
            for order in window.out:  # cancelled: their results are ignored
                self.pool.forget(slot.name, order)
            # The host's next order leaves up to DISPATCH_LEAD early and its worker
            # waits out the rest: the round trip overlaps the politeness wait.
            self.frontier.release(window.host_id, slot.ready_at - DISPATCH_LEAD)

    def _after_batch(self) -> None:
        """Results were recorded: new URLs may have made hosts ready."""
        self._tasks.wake()

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

    The settings are those of :class:`~webcrawl.crawler.engine.Crawler` (on resume, the stored
    ones with ``overrides`` applied), so ``--workers`` can change on a resume.
    """
    seeds = list(seeds)
    crawler = Crawler(db, seeds, resume=resume, overrides=overrides)
    if crawler.settings.workers > 1:
        return ShardedCrawler(db, seeds, resume=resume, overrides=overrides)
    return crawler
