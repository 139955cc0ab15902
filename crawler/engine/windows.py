"""A host's turn of pages: the window of its best URLs in the downloader's hands.

A turn hands the downloader up to ``downloader.window`` of the host's best URLs (1 in
process; a sharded crawl's ``shard_window``), refilled one for one as answers come back
while no other host waits for a slot: the downloader fetches them one at a time on the
host's politeness clock.  The turn ends, and the host is released to the frontier at the
time its clock gives, when the window is empty.

Taking a URL gives it the next fetch sequence number (``seq``) and checks robots.txt: an
excluded URL costs no request, is recorded at once, and ends the take, so the next take
is again the best URL among the ready hosts (see :meth:`HostWindows.take_allowed`).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

from webcrawl.crawler.frontier import Taken
from webcrawl.crawler.orders import Attempt, FetchedAnswer, FetchPage, PageDone
from webcrawl.crawler.robots import RobotsState
from webcrawl.storage.records import Outcome

if TYPE_CHECKING:
    from webcrawl.crawler.engine.core import Crawler

__all__ = ["DISPATCH_LEAD", "HostWindows"]

#: Seconds before a host's politeness wait ends at which a windowed downloader gets its
#: next order (it waits the rest on its own clock): it hides the order's trip to a
#: worker process.  Small, because a waiting order holds one of the ``concurrency`` slots.
DISPATCH_LEAD = 0.05


@dataclass(slots=True, eq=False)
class _Window:
    """A host's turn: the URLs handed to the downloader and not answered yet."""

    host_id: int
    host: str
    #: resolved when the window is empty and not refilled (or with the error to raise)
    ended: asyncio.Future[None]
    #: order (URL id) -> (taken, seq) of the URLs in the downloader's hands
    out: dict[int, tuple[Taken, int]] = field(default_factory=dict)
    #: order -> failed attempts already recorded as they happened
    recorded: dict[int, int] = field(default_factory=dict)
    answered: int = 0
    closed: bool = False


class HostWindows:
    """The turns of pages under way, and the takes' counters (see the module docstring)."""

    def __init__(self, crawl: Crawler) -> None:
        self.crawl = crawl
        self.size = max(1, crawl.downloader.window)
        #: hosts whose turn has URLs in the downloader's hands (one window per host)
        self._windows: dict[int, _Window] = {}
        #: URLs handed to the downloader (each a request): ``scope_max_pages`` counts them
        self.taken = 0
        #: the next fetch sequence number
        self.next_seq = 0
        self._cap = crawl.settings.scope_max_pages

    def max_pages_reached(self) -> bool:
        return self._cap is not None and self.taken >= self._cap

    def start(self, host_id: int) -> None:
        """A host's turn: hand the downloader a window of its best URLs."""
        crawl = self.crawl
        window = _Window(host_id, crawl.registry.host_name(host_id),
                         asyncio.get_running_loop().create_future())
        self._refill(window)
        if not window.out:
            crawl.frontier.release(host_id, crawl.downloader.ready_at(window.host))
            return
        self._windows[host_id] = window
        crawl.tasks.spawn(self._run(window))

    def _may_take(self, host_id: int, first: bool) -> bool:
        """Whether a host's window may take one more URL now: the dispatcher's rules for
        a take, a robots.txt still fresh, and (beyond the first) no other host waiting
        for a slot."""
        if first:
            return True  # the dispatcher checked its rules before it started the host
        crawl = self.crawl
        dispatch = crawl.dispatch
        if not dispatch.may_start() or crawl.robots.needs_fetch(host_id, time.monotonic()):
            return False
        return dispatch.free() or not crawl.frontier.has_ready()

    def _refill(self, window: _Window) -> None:
        """Top the window up to the downloader's window size while the host may take."""
        host_id, host = window.host_id, window.host
        size = self.size
        crawl = self.crawl
        downloader, rules = crawl.downloader, crawl.robots.rules(host_id)
        while len(window.out) < size and self._may_take(host_id, not window.out
                                                        and not window.answered):
            got = self.take_allowed(host_id)
            if got is None:
                return
            taken, seq, url = got
            order = taken.url_id
            window.out[order] = taken, seq
            downloader.submit(FetchPage(order, url, host,
                                        downloader.ready_at(host) - time.monotonic(),
                                        rules.crawl_delay or 0.0),
                              partial(self._page_done, window, order))

    def _page_done(self, window: _Window, order: int,
                   done: FetchedAnswer | BaseException) -> None:
        """The downloader's answer for a URL of ``window``."""
        if window.closed:
            return
        try:
            if isinstance(done, BaseException):
                raise done
            taken, seq = window.out.pop(order)
            window.answered += 1
            assert isinstance(done, PageDone)
            self.crawl.recorder.apply(taken, seq, done, window.recorded.pop(order, 0))
            if self.size > 1:  # a window of one ends with its answer
                self._refill(window)
        except BaseException as error:  # raised by the window's task
            window.closed = True
            if not window.ended.done():
                window.ended.set_exception(error)
            return
        if not window.out and not window.ended.done():
            window.ended.set_result(None)

    async def _run(self, window: _Window) -> None:
        """Hold the host's slot until its window is answered; then release the host."""
        crawl = self.crawl
        try:
            await window.ended
        finally:
            window.closed = True
            del self._windows[window.host_id]
            for order in window.out:  # cancelled: their answers are ignored
                crawl.downloader.forget(window.host, order)
            # A windowed downloader (shards) gets the host's next order up to
            # DISPATCH_LEAD early and waits out the rest: the order's trip overlaps
            # the politeness wait.
            lead = DISPATCH_LEAD if self.size > 1 else 0.0
            crawl.frontier.release(window.host_id, crawl.downloader.ready_at(window.host) - lead)

    def attempt_failed(self, order: int, attempt: Attempt) -> None:
        """A failed attempt, reported as it happens (in process): its row goes in now,
        so rows keep the order in which requests were made."""
        window = self._windows.get(self.crawl.registry.host_of(order))
        got = None if window is None else window.out.get(order)
        if window is None or got is None or window.closed:
            return
        recorded = window.recorded[order] = window.recorded.get(order, 0) + 1
        assert attempt.outcome is not None
        self.crawl.recorder.record(got[0], got[1], recorded, attempt, attempt.outcome)

    def take_allowed(self, host_id: int) -> tuple[Taken, int, str] | None:
        """The busy host's best URL with its seq and its text, if robots.txt allows it
        (None: the host has none left, or its best was excluded).

        An excluded URL costs no request: it is recorded, and the take ends there, so
        the next take is again the best URL among the ready hosts (the host is still
        ready: no request was made).  Taking the same host's next URL instead would
        depend on the turn being under way, which a crawl killed right after the
        exclusion and resumed cannot know: its order would differ."""
        crawl = self.crawl
        taken = crawl.frontier.take(host_id)
        if taken is None:
            return None
        seq = self.next_seq
        self.next_seq += 1
        url = crawl.registry.url(taken.url_id)
        if crawl.robots.allowed(host_id, url):
            self.taken += 1
            return taken, seq, url
        # RFC 9309 reads a robots.txt that stayed unreachable as "disallow all": the
        # URL is not requested, but it was not excluded by the host's rules either.
        unreachable = crawl.robots.rules(host_id).state is RobotsState.DISALLOW_ALL
        crawl.recorder.finish(taken, seq, Outcome.ROBOTS_UNREACHABLE if unreachable
                              else Outcome.ROBOTS_EXCLUDED)
        return None
