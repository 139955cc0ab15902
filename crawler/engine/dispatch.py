"""The dispatcher: which host's turn starts next, and when.

Whenever a slot may be free or a host may be ready, :meth:`Dispatcher.fill` takes, while
fewer than ``concurrency`` requests are in flight, the ready host whose best URL the
strategy ranks best (:class:`~webcrawl.crawler.frontier.Frontier`), and starts its turn
(:meth:`webcrawl.crawler.engine.core.Crawler.start_host`).  A host is busy until its
turn ends and then waits out its politeness delay; so at most one request per host is
ever in flight, over one kept-alive connection.

Scheduling is event-driven: a host that starts waiting gets a timer (``loop.call_at``)
at the end of its wait, whose callback runs :meth:`Dispatcher.fill` at once, so the
request starts in the event-loop turn the wait ends in (no polling, no dispatcher round
trip).  The dispatcher coroutine (:meth:`Dispatcher.run`) only reacts to task ends,
stops, parked tasks and recomputations, and never waits for the store: the store
writes in the background, and while it is :attr:`backlogged
<webcrawl.storage.store.CrawlStore.backlogged>` no new fetch starts (back-pressure
without blocking), until its next commit.

A task that must wait inside its turn (a retry's backoff, ``Retry-After``, a host's
politeness wait) does not hold one of the ``concurrency`` slots while it waits: it
*parks* (:meth:`Dispatcher.park`), giving its slot back, and the dispatcher resumes it
once its time has come and a slot is free, before starting new hosts.  So hosts
answering 429 with ``Retry-After: 600`` never starve the others.

A pending strategy recomputation holds new takes back: its result always lands at the
fetch count it was due at, as in a virtual crawl (deterministic orderings).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from webcrawl.crawler.engine.core import Crawler

__all__ = ["Dispatcher"]

log = logging.getLogger(__name__)


class Dispatcher:
    """The concurrency slots of one crawl, its parked tasks and its hosts' timers."""

    def __init__(self, crawl: Crawler) -> None:
        self.crawl = crawl
        self.concurrency = crawl.settings.concurrency
        #: tasks waiting without a slot: (resume time, tie-break, future), see park()
        self._parked: list[tuple[float, int, asyncio.Future[None]]] = []
        self._n_parked = 0                           # of the crawl's tasks, parked
        self._park_seq = itertools.count()
        #: per-host politeness timers (see on_wait); live while run() runs
        self._timers: dict[int, asyncio.TimerHandle] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._abort = False                          # a second stop: no grace

    def open(self, loop: asyncio.AbstractEventLoop) -> None:
        """From now on every host that starts waiting gets its timer."""
        self._loop = loop
        self.crawl.frontier.on_wait = self.on_wait

    def close(self) -> None:
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        self._loop = None
        self.crawl.frontier.on_wait = None

    def abort(self) -> None:
        """A second stop: requests under way are not waited for."""
        self._abort = True

    def in_flight(self) -> int:
        """Tasks holding a slot (started and not parked)."""
        return len(self.crawl.tasks) - self._n_parked

    def free(self) -> bool:
        """Whether a slot is free."""
        return self.in_flight() < self.concurrency

    # -- the loop ---------------------------------------------------------------------
    async def run(self) -> None:
        """Start turns until the frontier is empty, the page limit or a stop."""
        crawl = self.crawl
        tasks, frontier, store, windows = crawl.tasks, crawl.frontier, crawl.store, crawl.windows
        assert store is not None
        store.on_commit(tasks.wake)  # a backlogged store caught up
        while not tasks.stopping:
            self.fill()
            if not tasks and (not frontier or windows.max_pages_reached()):
                break
            crawl.update_stats()
            if store.backlogged and not self.in_flight():
                await store.flush()  # nothing else would make it commit sooner
                continue
            # Hosts wake by their own timers; this loop waits for task ends, stops,
            # recomputations and the earliest parked task.
            wake_at = self._parked[0][0] if self._parked else None
            await tasks.wait(wake_at if self.free() else None)
        if tasks.stopping:
            crawl.stats.stopped = "memory_limit" if crawl.memory_full else "stopped"
            return
        # URLs left by a page limit stay in the frontier (no outcome): a resume with a
        # higher limit takes them.
        crawl.stats.stopped = "max_pages" if windows.max_pages_reached() else "done"

    async def drain(self) -> None:
        """A stop: let the requests under way answer (and be recorded) for up to
        ``stop_grace`` seconds.  Nothing new is taken (``fill`` and window refills
        check the stop); tasks parked in a wait (a retry's backoff) are not under way
        and are cancelled with the rest."""
        tasks, grace = self.crawl.tasks, self.crawl.settings.stop_grace
        deadline = time.monotonic() + grace
        while self.in_flight() > 0 and not self._abort and tasks.fatal is None:
            if time.monotonic() >= deadline:
                log.info("stop: %d requests still under way after %.0f s: dropped",
                         self.in_flight(), grace)
                return
            await tasks.wait(deadline)

    def may_start(self) -> bool:
        """Whether a new take may start now, slots aside: no stop, no recomputation
        pending, the page limit not reached, the store not backlogged."""
        crawl = self.crawl
        store = crawl.store
        assert store is not None
        return not (crawl.tasks.stopping or crawl.feedback.pending
                    or crawl.windows.max_pages_reached() or store.backlogged)

    def fill(self) -> None:
        """Resume parked tasks, then start ready hosts, while slots are free.

        Synchronous: host timers, the dispatcher and task ends call it.
        """
        crawl = self.crawl
        if crawl.tasks.stopping or self._loop is None:
            return
        now = time.monotonic()
        self._resume_parked(now)
        frontier = crawl.frontier
        while self.free() and self.may_start():
            host_id = frontier.pop_ready(now)
            if host_id is None:
                break
            crawl.start_host(host_id, now)

    # -- host timers --------------------------------------------------------------------
    def on_wait(self, host_id: int, ready_at: float) -> None:
        """A host waits until monotonic ``ready_at``: (re)arm its timer."""
        loop = self._loop
        if loop is None:
            return
        old = self._timers.pop(host_id, None)
        if old is not None:
            old.cancel()
        self._timers[host_id] = loop.call_at(ready_at, self._host_ready, host_id, ready_at)

    def _host_ready(self, host_id: int, ready_at: float) -> None:
        """Timer callback: the host's wait is over; start it (and whatever else is ready)."""
        self._timers.pop(host_id, None)
        if time.monotonic() < ready_at:
            # asyncio may run a timer up to its clock resolution early: never early here.
            self.on_wait(host_id, ready_at)
            return
        tasks = self.crawl.tasks
        try:
            self.fill()
        except Exception as error:  # re-raised by the crawl's run()
            # A timer callback has no caller: an error here (the store's write error
            # above all) would only be logged by asyncio, with a traceback on stderr.
            tasks.fail(error)
            return
        if not tasks:
            tasks.wake()  # nothing runs: the dispatcher checks whether it is done

    # -- parked tasks -------------------------------------------------------------------
    def _resume_parked(self, now: float) -> None:
        """Give free slots to parked tasks whose wait is over (oldest deadline first)."""
        parked = self._parked
        while parked and parked[0][0] <= now and self.free():
            fut = heapq.heappop(parked)[2]
            if fut.done():  # its task was cancelled while parked (already uncounted)
                continue
            self._n_parked -= 1
            fut.set_result(None)

    async def park(self, seconds: float) -> None:
        """Sleep ``seconds`` without holding a slot; the dispatcher resumes the task."""
        if seconds <= 0:
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._parked, (time.monotonic() + seconds, next(self._park_seq), fut))
        self._n_parked += 1
        self.crawl.tasks.wake()  # a slot is free now
        try:
            await fut
        except asyncio.CancelledError:
            if fut.cancelled():  # cancelled while parked: the dispatcher never counted it
                self._n_parked -= 1
            raise
