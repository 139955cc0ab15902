"""The downloader seam: one object that fetches, retries and classifies.

The code that decides *what* to fetch -- the crawl engine
(:class:`~webcrawl.crawler.engine.Crawler`) and the revisit loop -- hands
:mod:`orders <webcrawl.crawler.orders>` to a :class:`Downloader` and gets typed answers
back.  How the fetches run is the downloader's business (Scrapy's Downloader, httpx's
transports):

* :class:`LocalDownloader`: in this process, on this event loop;
* :class:`~webcrawl.crawler.shard.coordinator.ShardDownloader`: in worker processes (or Ray
  actors), each of which runs a :class:`LocalDownloader` for the hosts it owns.

Every request a crawl makes -- pages, robots.txt, sitemaps, revisits -- is an order
to the one downloader of the process.  A :class:`LocalDownloader` keeps the politeness
clock of every host it contacts (:class:`~webcrawl.crawler.politeness.HostSlots`: the one
clock of a host in this process), one kept-alive connection per host
(:class:`~webcrawl.crawler.fetcher.Fetcher`, the one WARC writer of the process) and the
single retry policy (:class:`~webcrawl.crawler.retry.RetryPolicy`).  Each host's orders
run one at a time, in arrival order, by one task per host with work (a per-host back
queue, as in Mercator), each after the order's ``wait`` and the host's clock:

* :class:`~webcrawl.crawler.orders.FetchPage`: fetch with retries (every attempt an
  :class:`~webcrawl.crawler.orders.Attempt`, failed ones classified by
  :func:`~webcrawl.crawler.outcomes.error_outcome`; a request whose kept-alive
  connection was lost when the server may have read it is sent again within its attempt,
  at the host's next politeness slot), and for a 2xx HTML page extract and
  normalise its links (:func:`webcrawl.crawler.links.extract_links`, in a thread above
  ``links_thread_above`` bytes);
* :class:`~webcrawl.crawler.orders.FetchRobots`: fetch robots.txt
  (:func:`webcrawl.crawler.robots.fetch_robots_file`); the orderer parses it;
* :class:`~webcrawl.crawler.orders.FetchFile`: fetch one file once and hand its body
  back (a sitemap; the orderer parses it).

The orderer asks :meth:`Downloader.ready_at` when a host may be contacted again, and
tells :meth:`Downloader.set_crawl_delay` what a host's robots.txt asks; it keeps no
clock of its own.  Every answer also carries ``ready_in``, the host's remaining wait,
for a downloader in another process (:mod:`webcrawl.crawler.shard`), whose coordinator
keeps its hosts' clocks from them.  The waits themselves go through the link's
``sleep`` (seconds): the engine's gives its concurrency slot back while a host waits
out a ``Retry-After``.  In process, a failed attempt is also reported as it happens
(``on_failed``), so its row lands in the order the requests were made, as in the
crawl's WARC.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from webcrawl.crawler.links import PageLinks, extract_links
from webcrawl.crawler.orders import (
    Attempt,
    FetchFile,
    FetchOrder,
    FetchPage,
    FetchRobots,
    FileDone,
    OnDone,
    PageDone,
    RobotsDone,
)
from webcrawl.crawler.outcomes import error_cause, error_outcome
from webcrawl.crawler.politeness import HostSlot, HostSlots, sleep_for
from webcrawl.crawler.retry import RetryPolicy, is_retryable_status
from webcrawl.crawler.robots import fetch_robots_file
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.storage.errors import FetchError, HTTPStatusError, ReusedConnectionLost
from webcrawl.storage.records import Outcome

if TYPE_CHECKING:
    from webcrawl.crawler.archive import WarcArchive, WarcCounts
    from webcrawl.crawler.fetcher import FetchResult, FetchTransport

__all__ = ["Downloader", "DownloaderLink", "HostClocks", "LocalDownloader", "attempt_of"]

log = logging.getLogger(__name__)

#: ``sleep(seconds)``: how a downloader waits (politeness, retry backoff)
Sleep = Callable[[float], Awaitable[None]]


def _no_wake() -> None:
    pass


def _no_meta(key: str, value: str) -> None:
    pass


def _any_host(host: str) -> bool:
    return True


@dataclass(slots=True)
class DownloaderLink:
    """What a downloader may ask of the code it serves (every field has a default)."""

    #: whether a host (``host[:port]``) is in scope: robots.txt redirects stay inside
    host_allowed: Callable[[str], bool] = _any_host
    #: ``sleep(seconds)`` for politeness waits and retry backoff (never early); the
    #: engine's gives its concurrency slot back while a host waits
    sleep: Sleep = sleep_for
    #: ``on_failed(order, attempt)``: an attempt that failed, as it happens (before the
    #: order's answer, which lists it again); None: only in the answer
    on_failed: Callable[[int, Attempt], None] | None = None
    #: tells the engine that answers were handled (new URLs may make hosts ready)
    wake: Callable[[], None] = _no_wake
    #: the crawl's stored meta table (empty for a new crawl)
    meta: Mapping[str, str] = field(default_factory=dict)
    #: stores one meta key with the crawl (once the crawl's database is open)
    set_meta: Callable[[str, str], None] = _no_meta
    #: the crawl continues earlier runs (a resume, or a shard worker started again):
    #: the WARC archive reads back the payloads its earlier files hold
    resumed: bool = False
    #: the crawl's WARC file prefix, when this downloader's own is a shard worker's
    #: series of it (``{prefix}-w{N}``): a resume reads every earlier series
    warc_prefix: str | None = None


class Downloader(Protocol):
    """What the crawl engine fetches through (see the module docstring)."""

    #: URLs of one host a turn may hand over at once (1: one at a time)
    window: int

    async def open(self, link: DownloaderLink | None = None) -> None:
        """Get ready (before the crawl's database opens: bad TLS settings fail first)."""

    def submit(self, order: FetchOrder, on_done: OnDone) -> None:
        """Answer ``order`` after the host's earlier orders; ``on_done`` gets the answer,
        or the exception that ended it."""

    def forget(self, host: str, order: int) -> None:
        """Drop an unanswered order's callback (its answer, if any, is ignored)."""

    def ready_at(self, host: str) -> float:
        """The monotonic time from which ``host`` may be contacted again (the host's
        politeness clock; 0 for a host never contacted)."""

    def set_crawl_delay(self, host: str, seconds: float | None) -> None:
        """``host``'s robots.txt asks for this Crawl-delay (None: none); it counts from
        the host's last request."""

    def contacts_unknown(self) -> None:
        """Every host's last contact is unknown (a resumed crawl: the requests in flight
        at a stop were not recorded): each counts as contacted now."""

    async def aclose(self) -> None:
        """Stop; orders not answered are dropped."""

    def warc_counts(self) -> WarcCounts | None:
        """What the WARC archive wrote (None: no archive, or one this process does not
        see: worker processes archive on their own)."""


class HostClocks:
    """The clock part of :class:`Downloader`, kept by a downloader's
    :class:`~webcrawl.crawler.politeness.HostSlots` (``slots``)."""

    slots: HostSlots

    def ready_at(self, host: str) -> float:
        return self.slots.ready_at(host)

    def set_crawl_delay(self, host: str, seconds: float | None) -> None:
        self.slots.set_crawl_delay(self.slots.slot(host), seconds)

    def contacts_unknown(self) -> None:
        self.slots.contacted_now()


def attempt_of(result: FetchResult, outcome: Outcome | None = None,
               error: str | None = None) -> Attempt:
    """A response's metadata as an :class:`Attempt` (its body stays behind)."""
    return Attempt(started_at=result.started_at, ended_at=result.ended_at, outcome=outcome,
                   status=result.status, error=error, content_type=result.content_type,
                   size=result.size, digest=result.digest if result.body else None,
                   etag=result.etag, last_modified=result.last_modified,
                   location=result.location, too_large=result.too_large,
                   is_html=result.is_html, retry_after=result.retry_after)


def failed_attempt(exc: FetchError, wall0: float, elapsed: float) -> Attempt:
    """A request that raised ``exc``: its outcome and, as its error, the exception's
    class and cause (``NetworkError: connection refused``)."""
    return Attempt(wall0, wall0 + elapsed, error_outcome(exc),
                   error=f"{type(exc).__name__}: {error_cause(exc)}")


class LocalDownloader(HostClocks):
    """Fetching in this process (see the module docstring); what it needs of its user
    (scope, how to wait) comes with :meth:`open`'s :class:`DownloaderLink`.

    ``clock`` is the clock of the hosts' politeness slots (``time.monotonic``; a revisit
    under simulated time passes its own); ``fetcher`` what requests go through (a
    :class:`~webcrawl.crawler.fetcher.Fetcher` of the settings; a test's fake web answers
    from memory, as httpx's ``MockTransport`` does).
    """

    window = 1

    def __init__(self, settings: CrawlSettings, *,
                 clock: Callable[[], float] = time.monotonic,
                 fetcher: FetchTransport | None = None) -> None:
        self.settings = settings
        self.slots = HostSlots(settings, clock)
        self.retry = RetryPolicy(settings)
        if fetcher is None:
            # Imported here: the HTTP client is only needed where pages are fetched, not
            # in the coordinator of worker processes (some 25 ms of its start).
            from webcrawl.crawler.fetcher import Fetcher

            fetcher = Fetcher(settings)
        self.fetcher: FetchTransport = fetcher
        self._link = DownloaderLink()
        # The fetcher measures requests on time.monotonic: its end time is used as it
        # is when the slots are on that clock (no post-processing counted as the
        # server's time), else the slots' clock is read.
        self._real_clock = clock is time.monotonic
        #: per host: its orders not started yet, in arrival order (the back queue),
        #: each with the clock time it may start at and its callback
        self._queues: dict[str, deque[tuple[FetchOrder, float, OnDone]]] = {}
        #: per host with queued orders: the one task answering them, in order
        self._runners: dict[str, asyncio.Task[None]] = {}

    async def open(self, link: DownloaderLink | None = None) -> None:
        """Open the connection pool (bad TLS settings fail here)."""
        self._link = link or DownloaderLink()
        await self.fetcher.__aenter__()
        archive = self._archive()
        if archive is not None and self._link.resumed:
            archive.recall(self._link.warc_prefix)

    async def __aenter__(self) -> LocalDownloader:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Drop the orders not answered (their answers would never be read); closing
        twice is harmless."""
        runners = list(self._runners.values())
        for task in runners:
            task.cancel()
        if runners:
            await asyncio.gather(*runners, return_exceptions=True)
        await self.fetcher.aclose()

    def forget(self, host: str, order: int) -> None:
        """Nothing to do: an order in this process answers its own callback."""

    def warc_counts(self) -> WarcCounts | None:
        archive = self._archive()
        return archive.counts if archive is not None else None

    def _archive(self) -> WarcArchive | None:
        """The fetcher's WARC archive (None: none, or a test's fetcher)."""
        from webcrawl.crawler.fetcher import Fetcher

        return self.fetcher.archive if isinstance(self.fetcher, Fetcher) else None

    # -- the hosts' clocks ------------------------------------------------------------
    def _slot(self, host: str, not_before: float, crawl_delay: float | None) -> HostSlot:
        slot = self.slots.slot(host)
        if not_before > slot.ready_at:
            slot.ready_at = not_before
        if crawl_delay is not None:
            self.slots.set_crawl_delay(slot, crawl_delay)
        return slot

    async def _wait_for(self, slot: HostSlot) -> None:
        sleep, clock = self._link.sleep, self.slots.clock
        await sleep(slot.ready_at - clock())
        while clock() < slot.ready_at:  # a sleep never ends a wait early
            await sleep(slot.ready_at - clock())

    # -- orders -----------------------------------------------------------------------
    def submit(self, order: FetchOrder, on_done: OnDone) -> None:
        """Answer ``order`` after the host's earlier orders (its ``wait`` counts from now)."""
        host = order.host
        queue = self._queues.get(host)
        if queue is None:
            queue = self._queues[host] = deque()
        queue.append((order, self.slots.clock() + order.wait, on_done))
        if host not in self._runners:
            self._runners[host] = asyncio.get_running_loop().create_task(
                self._run_host(host, queue))

    async def _run_host(self, host: str,
                        queue: deque[tuple[FetchOrder, float, OnDone]]) -> None:
        try:
            while queue:
                order, not_before, on_done = queue.popleft()
                try:
                    done: PageDone | RobotsDone | FileDone
                    if isinstance(order, FetchPage):
                        done = await self.fetch_page(order, not_before)
                    elif isinstance(order, FetchRobots):
                        done = await self.fetch_robots(order, not_before)
                    else:
                        done = await self.fetch_file(order, not_before)
                except Exception as exc:  # a bug: the orderer decides
                    on_done(exc)
                else:
                    on_done(done)
        finally:
            del self._runners[host]

    async def _request(self, slot: HostSlot, url: str, *, etag: str | None = None,
                       last_modified: str | None = None,
                       max_body: int | None = None) -> FetchResult:
        """One GET of ``url`` on ``slot``'s clock (the one place a request is counted
        against its host's politeness)."""
        clock = self.slots.clock
        started = clock()
        try:
            result = await self.fetcher.fetch(url, etag=etag, last_modified=last_modified,
                                              max_body=max_body)
        except FetchError:
            self.slots.after_request(slot, started, clock())
            raise
        ended = result.ended_mono if self._real_clock else clock()
        self.slots.after_request(slot, started, ended, result.retry_after)
        return result

    # -- robots.txt -------------------------------------------------------------------
    async def fetch_robots(self, order: FetchRobots, not_before: float) -> RobotsDone:
        slot = self._slot(order.host, not_before, None)
        await self._wait_for(slot)
        clock = self.slots.clock
        started = clock()
        status, body, requests, error = await fetch_robots_file(
            self.fetcher, order.url, order.host, self.settings, self._link.host_allowed)
        ended = clock()
        # Without the file's Crawl-delay: the orderer parses the file and tells it
        # (set_crawl_delay, and with the host's next order).
        self.slots.after_request(slot, started, ended)
        return RobotsDone(order.order, status, body, ended - started,
                          self.slots.ready_in(slot), requests, error)

    # -- files (sitemaps) ---------------------------------------------------------------
    async def fetch_file(self, order: FetchFile, not_before: float) -> FileDone:
        slot = self._slot(order.host, not_before, order.crawl_delay)
        await self._wait_for(slot)
        started = self.slots.clock()
        try:
            result = await self._request(slot, order.url, max_body=order.max_body)
        except FetchError as exc:
            cause = error_cause(exc)
            log.info("%s unreachable: %s", order.url, cause)
            return FileDone(order.order, None, b"", self.slots.clock() - started,
                            self.slots.ready_in(slot), 1, cause)
        return FileDone(order.order, result.status, result.body, result.elapsed,
                        self.slots.ready_in(slot), 1, date=result.date)

    # -- pages ------------------------------------------------------------------------
    async def fetch_page(self, order: FetchPage, not_before: float) -> PageDone:
        slot = self._slot(order.host, not_before, order.crawl_delay)
        url = order.url
        limit = order.attempts or self.settings.retry_attempts
        await self._wait_for(slot)
        failed: list[Attempt] = []
        attempts = 0
        on_failed = self._link.on_failed

        def fail(a: Attempt) -> None:
            failed.append(a)
            if on_failed is not None:
                on_failed(order.order, a)

        async def attempt_once() -> FetchResult:
            nonlocal attempts
            attempts += 1
            t0, wall0 = time.monotonic(), time.time()
            try:
                try:
                    result = await self._request(slot, url, etag=order.etag,
                                                 last_modified=order.last_modified)
                except ReusedConnectionLost:
                    # The server may have read the request before its kept-alive
                    # connection was lost: put back for the host's next politeness slot
                    # and sent once more (on a new connection), never at once.  Like
                    # the client's at-once resend it is no attempt of its own, but it
                    # counts for the host's clock (``_request`` counted it).
                    await self._wait_for(slot)
                    t0, wall0 = time.monotonic(), time.time()
                    result = await self._request(slot, url, etag=order.etag,
                                                 last_modified=order.last_modified)
            except FetchError as exc:
                fail(failed_attempt(exc, wall0, time.monotonic() - t0))
                raise
            if not order.keep_body:
                # One event-loop turn before parsing: requests that other hosts' timers
                # started in the turn this response arrived in go out first instead of
                # waiting behind its link extraction (~1 ms).
                await asyncio.sleep(0)
            if is_retryable_status(result.status) and attempts < limit:
                fail(attempt_of(result, Outcome.HTTP_ERROR, "HTTPStatusError"))
                raise HTTPStatusError(result.status, result.retry_after)
            return result

        def ready_in() -> float:
            return self.slots.ready_in(slot)

        try:
            if limit <= 1:
                result = await attempt_once()
            else:
                result = await self.retry.call(attempt_once, ready_in, self._link.sleep)
        except FetchError:
            return PageDone(order.order, tuple(failed), None, None, ready_in())
        if order.keep_body:
            return PageDone(order.order, tuple(failed), attempt_of(result), None, ready_in(),
                            result)
        try:
            links = await self._links(result, url)
        except Exception as exc:  # a parser failure: never lose the URL
            log.exception("processing %s failed", url)
            fail(attempt_of(result, Outcome.NETWORK_ERROR, type(exc).__name__))
            return PageDone(order.order, tuple(failed), None, None, ready_in())
        return PageDone(order.order, tuple(failed), attempt_of(result), links, ready_in())

    async def _links(self, result: FetchResult, url: str) -> PageLinks | None:
        """A 2xx HTML page's links (big pages parsed in a thread: the loop keeps serving
        the other fetches); None for anything else."""
        s = self.settings
        if not 200 <= result.status < 300 or result.too_large or not result.is_html:
            return None
        # With the near-duplicate test in a process of its own, the page goes there and
        # its text is found there, out of this loop's thread.
        text = s.near_duplicates and not s.near_process
        keep_html = s.near_duplicates and s.near_process
        if result.size >= s.links_thread_above:
            return await asyncio.to_thread(extract_links, result.body, url,
                                           max_links=s.links_max_per_page,
                                           agent=s.fetch_robots_agent, charset=result.charset,
                                           text=text, keep_html=keep_html)
        return extract_links(result.body, url, max_links=s.links_max_per_page,
                             agent=s.fetch_robots_agent, charset=result.charset,
                             text=text, keep_html=keep_html)
