"""The shard protocol on Ray actors: ``webcrawl crawl --ray ADDRESS``.

Ray (the optional extra ``webcrawl[cluster]``) replaces only the transport: the
coordinator (the crawl engine with a
:class:`~webcrawl.crawler.shard.coordinator.ShardDownloader`: the single SQLite writer,
the URL registry, frontier and strategy) runs where the command runs, and each worker
(a :class:`~webcrawl.crawler.downloader.LocalDownloader`: the politeness clocks,
connections, retries and link extraction of the hosts assigned to it) runs in a Ray
actor, one process per actor, placed by Ray on any node of the cluster (``SPREAD``: one
per node before two on one).

:class:`RayTransport` is the three-method :class:`~webcrawl.crawler.shard.transport.Transport`
over one actor: ``send`` is a remote call handing the actor a batch of orders,
``receive`` a long-poll remote call returning the batch of results finished since the
last one (everything that finished while the previous batch travelled).  What crosses
the network is therefore exactly the shard protocol's pickled messages (URLs out;
response metadata and normalised links back; never a page body, only the sitemap files
of ``--sitemaps``), plus Ray's own control traffic.

A lost actor (its process killed, its node gone) makes ``receive`` return None; the
:class:`~webcrawl.crawler.shard.pool.WorkerPool` then starts a new actor for the same hosts --
Ray places it on a node that is still alive -- and re-sends every unanswered order,
re-timed from the moment of the loss.  Nothing was written for those orders, and
everything that was is in the crawl database (the coordinator's whole state:
:mod:`webcrawl.crawler.resume`), so the graph stays exact; a lost coordinator is a
``--resume`` away.

``ray`` is imported only when a Ray crawl starts (never by ``webcrawl --help``), and
this module type-checks without it.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import os
import socket
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from webcrawl.crawler.archive import WarcCounts
from webcrawl.crawler.downloader import LocalDownloader
from webcrawl.crawler.engine import Crawler
from webcrawl.crawler.near_batch import sketch_answers
from webcrawl.crawler.orders import FetchOrder, await_answer
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.crawler.shard.coordinator import ShardDownloader
from webcrawl.crawler.shard.protocol import (
    StartWorker,
    StopWorker,
    WorkerDone,
    WorkerOrder,
    WorkerReply,
    WorkerStopped,
)
from webcrawl.crawler.shard.transport import Transport
from webcrawl.crawler.shard.worker import worker_downloader
from webcrawl.storage.errors import ConfigError

__all__ = [
    "RayShardWorker",
    "RayTransport",
    "cluster_cpus",
    "connect_ray",
    "open_ray_crawler",
    "ray_downloader",
    "spawn_actor",
]

#: Seconds to wait for the Ray head's port to accept a connection.
_PROBE_WAIT = 5.0
#: Seconds an actor gets to stop after the crawl before it is killed.
_STOP_WAIT = 5.0


def _ray() -> Any:
    """The ``ray`` module, or a :class:`ConfigError` naming the extra to install."""
    try:
        return importlib.import_module("ray")
    except ImportError:
        raise ConfigError("--ray needs Ray: pip install 'webcrawl[cluster]'") from None


class RayShardWorker:
    """A shard worker inside a Ray actor (made remote by :func:`spawn_actor`).

    The actor is asynchronous: ``submit`` starts one task per order on the actor's
    event loop and returns at once; ``results`` waits until at least one order is
    answered and returns every answer ready.  Ray may run two calls of an async actor
    in either order, so fetch orders wait for the :class:`StartWorker` order.
    """

    def __init__(self) -> None:
        self._worker: LocalDownloader | None = None
        self._started = asyncio.Event()
        self._ready = asyncio.Event()
        self._outbox: list[WorkerReply] = []
        self._tasks: set[asyncio.Task[WorkerDone]] = set()
        self._failure: BaseException | None = None
        self._stopped_counts: WarcCounts | None = None

    def pid(self) -> int:
        """The actor's process id (tests kill it)."""
        return os.getpid()

    async def submit(self, orders: Sequence[WorkerOrder]) -> None:
        """Start answering ``orders`` (a batch; a :class:`StartWorker` comes first once)."""
        fetches: list[FetchOrder] = []
        for order in orders:
            if isinstance(order, StartWorker):
                if self._worker is None:
                    self._worker, link = worker_downloader(order)
                    await self._worker.open(link)
                    self._started.set()
            elif isinstance(order, StopWorker):
                await self.stop()
                self._outbox.append(WorkerStopped(self._stopped_counts))  # the last message
                self._ready.set()
                return
            else:
                fetches.append(order)
        if not fetches:
            return
        await self._started.wait()
        assert self._worker is not None
        loop = asyncio.get_running_loop()
        for order in fetches:
            task = loop.create_task(await_answer(self._worker.submit, order))
            self._tasks.add(task)
            task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[WorkerDone]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:  # a bug: results() raises it, the coordinator replaces us
            self._failure = exc
        else:
            self._outbox.append(task.result())
        self._ready.set()

    async def results(self) -> list[WorkerReply]:
        """Every answer ready, once there is at least one (a long poll)."""
        await self._ready.wait()
        self._ready.clear()
        if self._failure is not None:
            raise self._failure
        batch, self._outbox = self._outbox, []
        sketch_answers(batch)  # (near_duplicates) the batch's page texts, sketched at once
        return batch

    async def stop(self) -> None:
        """Drop the orders in flight and close the connections."""
        for task in list(self._tasks):
            task.cancel()
        if self._worker is not None:
            worker, self._worker = self._worker, None
            await worker.aclose()
            self._stopped_counts = worker.warc_counts()  # its files closed: final


class RayTransport:
    """A :class:`~crawler.shard.transport.Transport` to one :class:`RayShardWorker` actor."""

    def __init__(self, actor: Any) -> None:
        self.actor = actor
        self._ray = _ray()
        self._gone = False

    async def send(self, orders: Sequence[WorkerOrder]) -> None:
        try:
            await self.actor.submit.remote(list(orders))
        except self._ray.exceptions.RayError:
            self._gone = True  # receive() reports it

    async def receive(self) -> list[WorkerReply] | None:
        if self._gone:
            return None
        try:
            batch: list[WorkerReply] = await self.actor.results.remote()
        except self._ray.exceptions.RayError:
            self._gone = True
            return None
        return batch

    async def close(self) -> None:
        if not self._gone:
            with contextlib.suppress(self._ray.exceptions.RayError, TimeoutError):
                await asyncio.wait_for(self.actor.stop.remote(), _STOP_WAIT)
        self._ray.kill(self.actor, no_restart=True)
        self._gone = True


def connect_ray(address: str) -> None:
    """Join the Ray cluster at ``address`` (``HOST:PORT`` of its head) as a driver.

    No dashboard, no usage statistics; the workers import this package, which must be
    installed (same version) on every node.  Joining twice is a no-op.
    """
    ray = _ray()
    if ray.is_initialized():
        return
    # Ray retries an unreachable head for minutes; one TCP probe answers in seconds.
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise ConfigError(f"--ray wants HOST:PORT of a Ray head, got {address!r}")
    try:
        socket.create_connection((host, int(port)), timeout=_PROBE_WAIT).close()
    except OSError as exc:
        raise ConfigError(f"cannot reach the Ray head at {address}: "
                          f"{exc.strerror or type(exc).__name__}") from None
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    try:
        ray.init(address=address, include_dashboard=False, log_to_driver=False,
                 configure_logging=False)
    except (ConnectionError, ValueError, RuntimeError) as exc:
        raise ConfigError(f"cannot join the Ray cluster at {address}: "
                          f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
                          ) from None


async def spawn_actor(worker: int, generation: int) -> Transport:
    """A new :class:`RayShardWorker` actor (Ray places it; a lost one is not restarted by
    Ray: the worker pool starts the next generation itself and re-sends its orders)."""
    ray = _ray()
    actor_class = ray.remote(RayShardWorker)
    actor = actor_class.options(num_cpus=1, max_restarts=0,
                                scheduling_strategy="SPREAD").remote()
    return RayTransport(actor)


def cluster_cpus() -> int:
    """Whole CPUs of the joined cluster (the default number of actors)."""
    return max(1, int(_ray().cluster_resources().get("CPU", 1)))


def open_ray_crawler(db: str | Path, seeds: Iterable[str] = (), *, address: str,
                     resume: bool = False,
                     overrides: Mapping[str, Any] | None = None) -> Crawler:
    """A crawl whose workers are Ray actors (a :class:`ShardDownloader` over
    :func:`spawn_actor`).

    Joins the cluster at ``address``; the number of actors is the settings' ``workers``
    when above 1, else one per CPU of the cluster (each actor reserves one CPU).
    """
    connect_ray(address)
    return Crawler(db, seeds, resume=resume, overrides=overrides, downloader=ray_downloader)


def ray_downloader(settings: CrawlSettings, seeds: Sequence[str]) -> ShardDownloader:
    """A :class:`ShardDownloader` on Ray actors (``workers`` > 1, else one per CPU)."""
    if settings.workers <= 1:
        settings = replace(settings, workers=cluster_cpus())
    return ShardDownloader(settings, seeds, spawn=spawn_actor)
