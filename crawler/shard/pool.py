"""The coordinator's side of the workers: who owns a host, batching, losses and restarts.

A :class:`WorkerPool` starts every worker on the crawl's first order, all at once
(through a ``spawn`` function returning a
:class:`~webcrawl.crawler.shard.transport.Transport`, so child processes and Ray actors
are interchangeable): started on its own first order, a worker's start-up (its imports,
about 3 s on a loaded machine) came after the first page had named its hosts, and
delayed every host it owned by that much.  It sends each worker the orders for its hosts
(``route``: the :class:`~webcrawl.crawler.shard.coordinator.ShardDownloader`'s assignment)
in batches -- every order made during one turn of the event loop goes in one send --
and hands each result to the callback its order was submitted with
(:meth:`WorkerPool.submit`: no task or future per order) or resolves the future of
:meth:`WorkerPool.request`.

A worker that is lost (its transport reports the end) is started again with the next
``generation``; every order it had not answered is sent again, re-timed by ``rewait``
(the coordinator counts the host as contacted at the moment of the loss, so the new
worker respects the politeness delay from the host's last possible contact).  Nothing
was written for those orders (a result is written only when it arrives), so the graph
stays exact.  After ``max_restarts`` losses of one worker the crawl stops with a
:class:`~webcrawl.storage.errors.CrawlError` (resumable).

:meth:`WorkerPool.close` sends every worker
:class:`~webcrawl.crawler.shard.protocol.StopWorker` and reads on (answers are dropped
then) until its last message,
:class:`~webcrawl.crawler.shard.protocol.WorkerStopped`: the pool sums the WARC counts
they carry (:attr:`WorkerPool.warc`; a worker lost earlier sent none).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from webcrawl.crawler.orders import FetchedAnswer, FetchOrder, OnDone, await_answer
from webcrawl.crawler.shard.protocol import (
    StartWorker,
    StopWorker,
    WorkerDone,
    WorkerOrder,
    WorkerStopped,
)
from webcrawl.crawler.shard.transport import Transport
from webcrawl.storage.errors import CrawlError

if TYPE_CHECKING:  # the archive loads only with --warc (its counts come unpickled)
    from webcrawl.crawler.archive import WarcCounts

__all__ = ["STOP_WAIT", "WorkerPool"]

log = logging.getLogger(__name__)

#: Seconds :meth:`WorkerPool.close` waits for the workers' last messages.
STOP_WAIT = 5.0

Task = FetchOrder
#: ``spawn(worker, generation)``: a transport to a new worker process (or actor)
Spawn = Callable[[int, int], Awaitable[Transport]]
#: called with an order's result, or with the error that ends the crawl (a worker lost
#: too often); it must not raise


@dataclass(slots=True)
class _Worker:
    index: int
    generation: int = 0
    transport: Transport | None = None
    ready: asyncio.Task[None] | None = None
    reader: asyncio.Task[None] | None = None
    restarting: bool = False
    #: orders sent (or to send) and not answered: order id -> (order, callback)
    pending: dict[int, tuple[Task, OnDone]] = field(default_factory=dict)
    outbox: list[WorkerOrder] = field(default_factory=list)
    losses: int = 0


class WorkerPool:
    """``workers`` workers behind one ``request`` call (see the module docstring)."""

    def __init__(self, workers: int, start: Callable[[int, int], StartWorker], spawn: Spawn,
                 rewait: Callable[[Task], Task], *, route: Callable[[str], int],
                 answered: Callable[[Task, FetchedAnswer], None] | None = None,
                 max_restarts: int = 10) -> None:
        self.size = workers
        self._route = route
        #: called with each answered order and its answer, before its callback
        self._answered = answered
        self._start = start
        self._spawn = spawn
        self._rewait = rewait
        self._max_restarts = max_restarts
        self._workers = [_Worker(i) for i in range(workers)]
        self._flush_scheduled = False
        self._closing = False
        self._sends: set[asyncio.Task[None]] = set()
        #: the first fatal error (a worker lost too often); requests then fail with it
        self.fatal: CrawlError | None = None
        #: orders sent and results received (the URL-exchange volume)
        self.orders_sent = 0
        self.batches_sent = 0
        self.batches_received = 0
        self.restarts = 0
        #: called after each batch of results was handed to the callbacks
        self.after_batch: Callable[[], None] | None = None
        #: workers whose last message came (at close), and their WARC counts summed
        #: (None: none came with counts); a worker lost before close sends none
        self.stopped = 0
        #: worker processes (or actors) started, restarts included
        self.launched = 0
        self.warc: WarcCounts | None = None

    @property
    def exchanged_bytes(self) -> tuple[int, int]:
        """Bytes sent to and received from the current workers (transports that count)."""
        sent = sum(getattr(w.transport, "bytes_sent", 0) for w in self._workers)
        received = sum(getattr(w.transport, "bytes_received", 0) for w in self._workers)
        return sent, received

    async def request(self, order: Task) -> WorkerDone:
        """Send ``order`` to its host's worker; the result when it arrives."""
        try:
            return await await_answer(self.submit, order)
        finally:
            self.forget(order.host, order.order)

    def submit(self, order: Task, on_done: OnDone) -> None:
        """Send ``order`` to its host's worker (in this loop turn's batch); ``on_done``
        gets its result.  Raises the pool's fatal error if there is one."""
        if self.fatal is not None:
            raise self.fatal
        w = self._workers[self._route(order.host)]
        if w.ready is None:
            loop = asyncio.get_running_loop()
            for idle in self._workers:
                if idle.ready is None:
                    idle.ready = loop.create_task(self._launch(idle))
        w.pending[order.order] = (order, on_done)
        w.outbox.append(order)
        self._schedule_flush()

    def forget(self, host: str, order: int) -> None:
        """Drop an unanswered order's callback (its result, if any, is ignored)."""
        self._workers[self._route(host)].pending.pop(order, None)

    async def close(self) -> None:
        """Stop every worker (orders not answered are dropped: nothing was written),
        taking each one's last message (:class:`WorkerStopped`: its WARC counts) if it
        comes within :data:`STOP_WAIT` seconds."""
        self._closing = True
        readers = []
        for w in self._workers:
            if w.ready is not None and not w.ready.done():
                w.ready.cancel()
            if w.reader is not None and not w.reader.done() and w.transport is not None:
                readers.append(w.reader)
                self._send(w.transport, [StopWorker()])
        if readers:
            _, late = await asyncio.wait(readers, timeout=STOP_WAIT)
            for task in late:
                task.cancel()
        for w in self._workers:
            if w.transport is not None:
                await w.transport.close()  # kept: its byte counts stay readable

    # -- internals ------------------------------------------------------------------
    async def _launch(self, w: _Worker) -> None:
        w.transport = await self._spawn(w.index, w.generation)
        self.launched += 1
        await w.transport.send([self._start(w.index, w.generation)])
        w.reader = asyncio.get_running_loop().create_task(self._read(w))
        self._schedule_flush()  # orders submitted while the worker started

    def _schedule_flush(self) -> None:
        if not self._flush_scheduled:
            self._flush_scheduled = True
            asyncio.get_running_loop().call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_scheduled = False
        for w in self._workers:
            if w.outbox and not w.restarting and w.reader is not None:
                assert w.transport is not None
                batch, w.outbox = w.outbox, []
                self.orders_sent += len(batch)
                self.batches_sent += 1
                self._send(w.transport, batch)

    def _send(self, transport: Transport, batch: list[WorkerOrder]) -> None:
        task = asyncio.get_running_loop().create_task(transport.send(batch))
        self._sends.add(task)
        task.add_done_callback(self._sends.discard)

    async def _read(self, w: _Worker) -> None:
        while True:
            assert w.transport is not None
            batch = await w.transport.receive()
            if batch is not None:
                self.batches_received += 1
                pending, answered = w.pending, self._answered
                for done in batch:
                    if isinstance(done, WorkerStopped):
                        self._stopped(done)
                        return
                    if self._closing:
                        continue  # answers after close() are dropped (see close)
                    entry = pending.pop(done.order, None)
                    if entry is not None:
                        if answered is not None:
                            answered(entry[0], done)
                        entry[1](done)
                if self.after_batch is not None and not self._closing:
                    self.after_batch()
                continue
            if self._closing:
                return
            await self._restart(w)
            if self.fatal is not None:
                return

    def _stopped(self, last: WorkerStopped) -> None:
        """A worker's last message: add its WARC counts."""
        self.stopped += 1
        if last.warc is not None:
            self.warc = last.warc if self.warc is None else self.warc + last.warc

    async def _restart(self, w: _Worker) -> None:
        w.losses += 1
        self.restarts += 1
        if w.losses > self._max_restarts:
            self.fatal = CrawlError(f"shard worker {w.index} was lost {w.losses} times; "
                                    "stopping (the crawl can be resumed)")
            for _, on_done in list(w.pending.values()):
                on_done(self.fatal)
            w.pending.clear()
            return
        log.warning("shard worker %d lost; starting it again (%d orders re-sent)",
                    w.index, len(w.pending))
        w.restarting = True
        try:
            if w.transport is not None:
                await w.transport.close()
            w.generation += 1
            w.transport = await self._spawn(w.index, w.generation)
            self.launched += 1
        finally:
            w.restarting = False
        # Every unanswered order, the ones still in the outbox included, goes once.
        w.outbox.clear()
        again = [self._rewait(order) for order, _ in w.pending.values()]
        await w.transport.send([self._start(w.index, w.generation), *again])
