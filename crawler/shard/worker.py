"""A shard worker: fetches, decodes and extracts links for the hosts it owns.

A worker holds no database and no URL registry.  It owns its hosts' politeness
clocks (one :class:`~webcrawl.crawler.politeness.HostSlot` per host, the engine's
:class:`~webcrawl.crawler.politeness.PolitenessPolicy`), its own kept-alive connections
(:class:`~webcrawl.crawler.fetcher.Fetcher`, one connection per host) and the retry loop
(:class:`~webcrawl.crawler.retry.RetryPolicy`), and answers each order of the coordinator.
The coordinator sends a host's URLs ahead of need (``shard_window`` of them): each
host's orders run one at a time, in the order they arrived, by one task per host with
work (a per-host back queue, as in Mercator), so the host's next fetch starts the
moment its politeness wait ends, with no round trip to the coordinator in between:

* :class:`~webcrawl.crawler.shard.protocol.FetchPage`: wait out the host's delay (its own clock,
  and at least the order's ``wait``: the coordinator's view, which is how a restarted
  worker respects a host's last contact), fetch with retries, and for a 2xx HTML page
  extract and normalise its links (:func:`webcrawl.crawler.links.extract_links`, in a thread
  above ``links_thread_above`` bytes);
* :class:`~webcrawl.crawler.shard.protocol.FetchRobots`: fetch robots.txt
  (:func:`webcrawl.crawler.robots.fetch_robots_file`); the coordinator parses it.

Results leave in batches: everything that finished in the same event-loop turn (or,
with ``shard_flush_interval`` > 0, within that many seconds of the first one; at most
:data:`FLUSH_SIZE`) goes in one frame.  The worker exits
when its input ends (the coordinator closed it, or died), dropping orders in flight,
and on Linux asks the kernel to SIGKILL it when its parent dies, so no orphan keeps
contacting a host.  Run as ``python -m webcrawl.crawler.shard`` (the pipe transport does it).
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from collections import deque
from collections.abc import Callable
from dataclasses import replace

from webcrawl.crawler import eventloop
from webcrawl.crawler.fetcher import Fetcher, FetchResult
from webcrawl.crawler.links import PageLinks, extract_links
from webcrawl.crawler.politeness import HostSlot, PolitenessPolicy, sleep_for, sleep_until
from webcrawl.crawler.retry import RetryPolicy, is_retryable_status
from webcrawl.crawler.robots import fetch_robots_file
from webcrawl.crawler.scope import Scope
from webcrawl.crawler.shard.protocol import (
    Attempt,
    FetchPage,
    FetchRobots,
    OnDone,
    PageDone,
    RobotsDone,
    StartWorker,
    StopWorker,
    WorkerDone,
    WorkerOrder,
    await_answer,
)
from webcrawl.crawler.shard.transport import encode_frame, read_frame
from webcrawl.storage import _testhooks
from webcrawl.storage.errors import FetchError, FetchTimeoutError, HTTPStatusError
from webcrawl.storage.records import Outcome

__all__ = ["ShardWorker", "serve"]

log = logging.getLogger(__name__)

#: Results that make a worker send its batch at once.
FLUSH_SIZE = 256

#: called with an order's answer, or with the exception of a bug


def _failed_outcome(exc: FetchError) -> Outcome:
    if isinstance(exc, FetchTimeoutError):
        return Outcome.TIMEOUT
    if isinstance(exc, HTTPStatusError):
        return Outcome.HTTP_ERROR
    return Outcome.NETWORK_ERROR


def _attempt(result: FetchResult, outcome: Outcome | None = None,
             error: str | None = None) -> Attempt:
    return Attempt(started_at=result.started_at, ended_at=result.ended_at, outcome=outcome,
                   status=result.status, error=error, content_type=result.content_type,
                   size=result.size, digest=result.digest if result.body else None,
                   etag=result.etag, last_modified=result.last_modified,
                   location=result.location, too_large=result.too_large,
                   is_html=result.is_html, retry_after=result.retry_after)


class ShardWorker:
    """The fetching half of a sharded crawl for one set of hosts (module docstring)."""

    def __init__(self, start: StartWorker) -> None:
        s = start.settings
        if s.warc_dir is not None:  # one archive file series per worker
            s = replace(s, warc_prefix=f"{s.warc_prefix}-w{start.worker}")
        self.settings = s
        self.worker = start.worker
        self.politeness = PolitenessPolicy(s)
        self.retry = RetryPolicy(s)
        self.scope = Scope(s, start.seeds)
        self._slots: dict[str, HostSlot] = {}
        #: per host: its orders not started yet, in arrival order (the back queue),
        #: each with the monotonic time it may start at and its callback
        self._queues: dict[str, deque[tuple[FetchPage | FetchRobots, float, OnDone]]] = {}
        #: per host with queued orders: the one task answering them, in order
        self._runners: dict[str, asyncio.Task[None]] = {}
        self.fetcher = Fetcher(s)

    async def __aenter__(self) -> ShardWorker:
        await self.fetcher.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        """Drop the orders not answered (their results would never be read)."""
        for task in list(self._runners.values()):
            task.cancel()
        await self.fetcher.aclose()

    def _slot(self, host: str, not_before: float) -> HostSlot:
        slot = self._slots.get(host)
        if slot is None:
            slot = self._slots[host] = HostSlot(len(self._slots), host)
        slot.ready_at = max(slot.ready_at, not_before)
        return slot

    def submit(self, order: FetchPage | FetchRobots, on_done: OnDone) -> None:
        """Answer ``order`` after the host's earlier orders (its ``wait`` counts from now);
        ``on_done`` gets the answer, or the exception of a bug."""
        host = order.host
        queue = self._queues.get(host)
        if queue is None:
            queue = self._queues[host] = deque()
        queue.append((order, time.monotonic() + order.wait, on_done))
        if host not in self._runners:
            self._runners[host] = asyncio.get_running_loop().create_task(
                self._run_host(host, queue))

    async def _run_host(self, host: str, queue: deque[tuple[FetchPage | FetchRobots, float,
                                                           OnDone]]) -> None:
        try:
            while queue:
                order, not_before, on_done = queue.popleft()
                try:
                    if isinstance(order, FetchPage):
                        done: WorkerDone = await self.fetch_page(order, not_before)
                    else:
                        done = await self.fetch_robots(order, not_before)
                except Exception as exc:  # a bug: the caller decides (serve ends)
                    on_done(exc)
                else:
                    on_done(done)
        finally:
            del self._runners[host]

    async def handle(self, order: FetchPage | FetchRobots) -> WorkerDone:
        """:meth:`submit` as a coroutine: the answer to ``order``."""
        return await await_answer(self.submit, order)

    async def fetch_robots(self, order: FetchRobots, not_before: float) -> RobotsDone:
        slot = self._slot(order.host, not_before)
        await sleep_until(slot.ready_at)
        started = time.monotonic()
        status, body, requests = await fetch_robots_file(
            self.fetcher, order.url, order.host, self.settings, self.scope.host_allowed)
        ended = time.monotonic()
        # Without the file's Crawl-delay (the coordinator parses it and sends it with
        # the next order, in the wait and in crawl_delay).
        self.politeness.after_request(slot, started, ended)
        return RobotsDone(order.order, status, body, ended - started,
                          slot.ready_at - time.monotonic(), requests)

    async def fetch_page(self, order: FetchPage, not_before: float) -> PageDone:
        slot = self._slot(order.host, not_before)
        slot.crawl_delay = order.crawl_delay
        politeness, fetcher, url = self.politeness, self.fetcher, order.url
        await sleep_until(slot.ready_at)
        failed: list[Attempt] = []
        attempts = 0

        async def attempt_once() -> FetchResult:
            nonlocal attempts
            attempts += 1
            t0, wall0 = time.monotonic(), time.time()
            try:
                result = await fetcher.fetch(url)
            except FetchError as exc:
                t1 = time.monotonic()
                politeness.after_request(slot, t0, t1)
                failed.append(Attempt(wall0, wall0 + (t1 - t0), _failed_outcome(exc),
                                      error=type(exc).__name__))
                raise
            politeness.after_request(slot, t0, result.ended_mono, result.retry_after)
            if is_retryable_status(result.status) and attempts < self.settings.retry_attempts:
                failed.append(_attempt(result, Outcome.HTTP_ERROR, "HTTPStatusError"))
                raise HTTPStatusError(result.status, result.retry_after)
            return result

        def ready_in() -> float:
            return slot.ready_at - time.monotonic()

        try:
            result = await self.retry.call(attempt_once, ready_in, sleep_for)
        except FetchError:
            return PageDone(order.order, tuple(failed), None, None, ready_in())
        try:
            links = await self._links(result, url)
        except Exception as exc:  # a parser failure: never lose the URL (as the engine)
            log.exception("processing %s failed", url)
            failed.append(_attempt(result, Outcome.NETWORK_ERROR, type(exc).__name__))
            return PageDone(order.order, tuple(failed), None, None, ready_in())
        return PageDone(order.order, tuple(failed), _attempt(result), links, ready_in())

    async def _links(self, result: FetchResult, url: str) -> PageLinks | None:
        s = self.settings
        if (not 200 <= result.status < 300 or result.too_large or not result.is_html):
            return None
        if result.size >= s.links_thread_above:
            return await asyncio.to_thread(extract_links, result.body, url,
                                           max_links=s.links_max_per_page,
                                           agent=s.fetch_robots_agent, charset=result.charset)
        return extract_links(result.body, url, max_links=s.links_max_per_page,
                             agent=s.fetch_robots_agent, charset=result.charset)


async def serve(reader: asyncio.StreamReader, write: Callable[[bytes], None]) -> None:
    """Answer the orders read from ``reader`` until it ends (or :class:`StopWorker`)."""
    first = await read_frame(reader)
    if not first or not isinstance(first[0], StartWorker):
        return
    start: StartWorker = first[0]
    loop = asyncio.get_running_loop()
    outbox: list[WorkerDone] = []
    failure: list[BaseException] = []

    interval = start.settings.shard_flush_interval
    timer: list[asyncio.Handle] = []

    def flush() -> None:
        timer.clear()
        write(encode_frame(outbox))
        outbox.clear()
        _testhooks.kill_at("shard_worker_batch")

    def done(result: WorkerDone | BaseException) -> None:
        if isinstance(result, BaseException):  # a bug: end; the coordinator restarts us
            failure.append(result)
            reader.feed_eof()
            return
        outbox.append(result)
        if len(outbox) >= FLUSH_SIZE:
            if timer:
                timer[0].cancel()
            flush()
        elif not timer:
            timer.append(loop.call_later(interval, flush) if interval > 0
                         else loop.call_soon(flush))

    async with ShardWorker(start) as worker:
        pending: list[WorkerOrder] = list(first[1:])
        while True:
            for order in pending:
                if isinstance(order, StopWorker):
                    return
                if isinstance(order, FetchPage | FetchRobots):
                    worker.submit(order, done)
            batch = await read_frame(reader)
            if batch is None:
                break
            pending = batch
    if failure:
        raise failure[0]


def _die_with_parent() -> None:
    """Linux: SIGKILL this process when its parent dies (prctl PR_SET_PDEATHSIG)."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    import signal

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


async def _stdio_main() -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 24)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    # Non-blocking: a coordinator slow to read never stalls this worker's fetches.
    out, _ = await loop.connect_write_pipe(asyncio.Protocol, sys.stdout.buffer)

    def write(data: bytes) -> None:
        out.write(data)

    await serve(reader, write)


def main() -> None:
    """Entry point of ``python -m webcrawl.crawler.shard`` (orders on stdin, results on stdout)."""
    _die_with_parent()
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING,
                        format="webcrawl worker: %(message)s")
    eventloop.run(_stdio_main())


if __name__ == "__main__":
    main()
