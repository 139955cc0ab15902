"""The coordinator's downloader: fetching handed to worker processes (or Ray actors).

A :class:`ShardDownloader` is a :class:`~webcrawl.crawler.downloader.Downloader` given to the
crawl engine (:class:`~webcrawl.crawler.engine.Crawler`): the engine stays the coordinator
-- dispatcher and frontier, strategy (global rankings such as backlink, pagerank and
opic stay global: they see every link), URL registry, scope, robots.txt rules, and the
store, of which it is the only writer -- and each order goes to the worker that owns its
host (:class:`~webcrawl.crawler.shard.pool.WorkerPool`).  A worker runs a
:class:`~webcrawl.crawler.downloader.LocalDownloader` for its hosts, so a page is fetched,
retried and classified by the same code whether the crawl is sharded or not.

Its ``window`` is ``shard_window``: a host's turn hands its worker up to that many of
the host's best URLs at once, refilled one for one as answers come back while no other
host waits for a slot; the worker fetches them one at a time on the host's politeness
clock, so a host's next request never waits for a round trip through the coordinator.
A globally ranked strategy's re-rankings reach a host up to ``shard_window`` fetches
late.

**Clocks.**  A host's politeness clock is kept by the worker that fetches it; in the
coordinator's process, this downloader keeps the one clock of each host
(:class:`~webcrawl.crawler.politeness.HostSlots`) from the ready times the answers report,
which is what the engine asks (:meth:`ShardDownloader.ready_at`) to know when to offer a
host again.  An order's ``wait`` carries it to the worker: a worker started again after
a loss knows nothing of its hosts' last contacts, and their re-sent orders count the
host as contacted at the loss.

**Which worker owns a host.**  Each host goes, when its first order is made, to the
worker owning the fewest hosts (ties to the lowest index), and the assignment is stored
with the crawl (meta key ``shard_host:<host>``), so a resume with the same number of
workers keeps it.  A hash of the name would be stable without storage, but a few real
host names do not spread: CRC-32 modulo 2 was seen to put 13 real documentation hosts
on one worker, and puts 9 of the 13 of the balance test on one.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from webcrawl.crawler.downloader import DownloaderLink, HostClocks
from webcrawl.crawler.orders import FetchedAnswer, FetchOrder, OnDone, RobotsDone
from webcrawl.crawler.politeness import HostSlots
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.crawler.shard.forks import ForkServer
from webcrawl.crawler.shard.pool import Spawn, WorkerPool
from webcrawl.crawler.shard.protocol import StartWorker
from webcrawl.crawler.shard.transport import PipeTransport, Transport
from webcrawl.storage.errors import ConfigError

if TYPE_CHECKING:
    from webcrawl.crawler.archive import WarcCounts

__all__ = ["META_SHARD_HOST", "ShardDownloader", "spawn_process"]

log = logging.getLogger(__name__)

#: Meta key prefix of a host's worker (``shard_host:<host[:port]>`` -> worker index);
#: the value is ``[worker, workers]`` as JSON.
META_SHARD_HOST = "shard_host:"


async def spawn_process(worker: int, generation: int, forks: ForkServer) -> Transport:
    """A worker process forked by ``forks``; a restarted one never inherits a test kill
    point."""
    env = {"WEBCRAWL_TEST_KILL": ""} if generation else {}
    return PipeTransport(await forks.start_worker(env))


class ShardDownloader(HostClocks):
    """Fetching in ``settings.workers`` worker processes (see the module docstring).

    A Crawl-delay (:meth:`set_crawl_delay`) counts here at once; the host's worker gets
    it with the host's next order.

    Parameters
    ----------
    settings : CrawlSettings
        The crawl's settings (each worker gets them).
    seeds : sequence of str
        The crawl's seeds (the workers' scope is built from them).
    spawn : callable, optional
        ``spawn(worker, generation)`` starts one worker and returns its transport
        (Ray actors: ``ray_transport.spawn_actor``).  By default a worker is a process
        forked by a fork server (:func:`spawn_process`), itself forked off this process
        at once when that is safe (no event loop running, one thread), else started
        with the first worker (:mod:`webcrawl.crawler.shard.forks`).
    """

    def __init__(self, settings: CrawlSettings, seeds: Sequence[str] = (), *,
                 spawn: Spawn | None = None) -> None:
        self.settings = settings
        self.seeds = tuple(seeds)
        self.window = settings.shard_window
        self._link = DownloaderLink()
        self._owner: dict[str, int] = {}
        self._hosts_of = [0] * settings.workers
        #: the coordinator's clock of each host, from the answers' ready times
        self.slots = HostSlots(settings)
        #: the fork server of the worker processes (None: not started, or spawn given)
        self.forks: ForkServer | None = None
        self._forks_lock = asyncio.Lock()
        if spawn is None:
            if not ForkServer.supported():
                raise ConfigError("worker processes are forked, and this system has no "
                                  "fork(): crawl with --workers 1, or on Ray (--ray)")
            self.forks = ForkServer.fork_here()
        self.pool = WorkerPool(settings.workers, self._start_order, spawn or self._fork,
                               self._rewait, route=self.worker_of, answered=self._answered)

    async def open(self, link: DownloaderLink | None = None) -> None:
        """Take the engine's link, and the stored host assignment of a resumed crawl."""
        self._link = link or DownloaderLink()
        self.pool.after_batch = self._link.wake
        workers = self.pool.size
        for key, value in self._link.meta.items():
            if key.startswith(META_SHARD_HOST):
                worker, of = json.loads(value)
                if of == workers and 0 <= worker < workers:
                    self._owner[key[len(META_SHARD_HOST):]] = worker
                    self._hosts_of[worker] += 1

    def worker_of(self, host: str) -> int:
        """The worker owning ``host``; a new host goes to the one owning fewest hosts."""
        owner = self._owner.get(host)
        if owner is None:
            hosts = self._hosts_of
            owner = self._owner[host] = hosts.index(min(hosts))
            hosts[owner] += 1
            self._link.set_meta(META_SHARD_HOST + host, json.dumps([owner, len(hosts)]))
        return owner

    @property
    def assignment(self) -> dict[str, int]:
        """Host -> worker, for every host ordered so far."""
        return dict(self._owner)

    def submit(self, order: FetchOrder, on_done: OnDone) -> None:
        self.pool.submit(order, on_done)

    def forget(self, host: str, order: int) -> None:
        self.pool.forget(host, order)

    def _answered(self, order: FetchOrder, done: FetchedAnswer) -> None:
        """An answer arrived: its host's clock learns when it may be contacted again."""
        elapsed = done.elapsed if isinstance(done, RobotsDone) else None
        self.slots.reported(self.slots.slot(order.host), done.ready_in, elapsed)

    async def aclose(self) -> None:
        try:
            await self.pool.close()
        finally:
            if self.forks is not None:
                await self.forks.aclose()

    async def _fork(self, worker: int, generation: int) -> Transport:
        """The default ``spawn``: a worker forked by this crawl's fork server (started
        now if it is not yet, or again if it was lost)."""
        async with self._forks_lock:  # the workers start together: one server
            if self.forks is None:
                self.forks = await ForkServer.exec_new()
        forks = self.forks
        try:
            return await spawn_process(worker, generation, forks)
        except ConnectionError:
            async with self._forks_lock:
                if self.forks is forks:
                    log.warning("the shard workers' fork server was lost; starting it again")
                    await forks.aclose()
                    self.forks = await ForkServer.exec_new()
            return await spawn_process(worker, generation, self.forks)

    def warc_counts(self) -> WarcCounts | None:
        """What the workers' archives wrote, summed from their last messages (after
        :meth:`aclose`; None without ``--warc``).  A worker process lost to a kill sends
        none: the records its files hold up to the loss are on disk but not counted
        (a warning says how many worker processes are left out)."""
        if self.settings.warc_dir is None:
            return None
        if missing := self.pool.launched - self.pool.stopped:
            log.warning("the WARC counts leave out %d worker process%s lost or not "
                        "stopping in time (the records they wrote are in their files)",
                        missing, "" if missing == 1 else "es")
        from webcrawl.crawler.archive import WarcCounts  # with --warc only

        return self.pool.warc or WarcCounts()

    def _start_order(self, worker: int, generation: int) -> StartWorker:
        return StartWorker(worker, self.pool.size, self.settings, self.seeds, generation,
                           resumed=self._link.resumed)

    def _rewait(self, order: FetchOrder) -> FetchOrder:
        """Re-time an order of a lost worker: its host counts as contacted just now."""
        self.slots.contacted_now(order.host)
        return replace(order, wait=self.slots.ready_in(self.slots.slot(order.host)))

    def stats(self) -> dict[str, Any]:
        """The exchange's volume (orders, batches, bytes, restarts)."""
        sent, received = self.pool.exchanged_bytes
        return {"orders_sent": self.pool.orders_sent, "batches_sent": self.pool.batches_sent,
                "batches_received": self.pool.batches_received, "bytes_sent": sent,
                "bytes_received": received, "restarts": self.pool.restarts}
