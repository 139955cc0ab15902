"""Per-host politeness slots (Mercator's rules, Heritrix-style bounds).

* At most one request in flight per host (the frontier hands a host to one worker).
* After a request that took ``t`` seconds the host is not contacted again before
  ``max(min_delay, delay_factor * t)`` capped at ``max_delay`` (Mercator: factor 10;
  Heritrix: ``5 t`` clamped to [3 s, 30 s]);
* robots.txt ``Crawl-delay`` raises that wait (clamped to ``polite_max_crawl_delay``);
* ``Retry-After`` on 429/503 raises it further (clamped to ``polite_max_retry_after``).

A host's clock lives in one place per process: the :class:`HostSlots` of the
downloader that contacts it (Scrapy's downloader slots).  The crawl engine and the
revisit loop ask that downloader when a host may be contacted
(:meth:`webcrawl.crawler.downloader.Downloader.ready_at`); they keep no clock of their
own.  A downloader whose requests run in other processes (the shard coordinator's) keeps
its slots from the ready times their answers report.

Clocks are ``time.monotonic()`` unless a slot table is given another clock (a revisit
under simulated time).  Waits go through :func:`sleep_until`, which re-checks that
clock: an event loop may wake a timer early (uvloop's clock has millisecond
resolution), and a host must never be contacted before its time.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from webcrawl.crawler.settings import CrawlSettings

__all__ = ["HostSlot", "HostSlots", "PolitenessPolicy", "parse_retry_after", "sleep_for",
           "sleep_until"]


@dataclass(slots=True)
class HostSlot:
    """A host's politeness state (Scrapy's downloader ``Slot``)."""

    name: str
    #: clock time before which the host must not be contacted
    ready_at: float = 0.0
    #: robots.txt Crawl-delay (already clamped), 0 if none
    crawl_delay: float = 0.0
    #: the last request's end (clock time) and length: a Crawl-delay learnt after it
    #: counts from that request, as if it had been known then
    last_end: float = -math.inf
    last_elapsed: float = 0.0
    #: requests made to the host (pages, retries, robots.txt, sitemaps)
    requests: int = 0


class PolitenessPolicy:
    """Computes when a host may be contacted again."""

    def __init__(self, settings: CrawlSettings) -> None:
        self.delay_factor = settings.polite_delay_factor
        self.min_delay = settings.polite_min_delay
        self.max_delay = settings.polite_max_delay
        self.max_crawl_delay = settings.polite_max_crawl_delay
        self.max_retry_after = settings.polite_max_retry_after

    def delay(self, elapsed: float, crawl_delay: float = 0.0,
              retry_after: float | None = None) -> float:
        """Seconds to wait after a request that took ``elapsed`` seconds."""
        wait = min(self.max_delay, max(self.min_delay, self.delay_factor * elapsed))
        wait = max(wait, min(crawl_delay, self.max_crawl_delay))
        if retry_after is not None:
            wait = max(wait, min(retry_after, self.max_retry_after))
        return wait

    def clamp_crawl_delay(self, value: float | None) -> float:
        return 0.0 if value is None or value <= 0 else min(float(value), self.max_crawl_delay)

    def after_request(self, slot: HostSlot, started: float, ended: float,
                      retry_after: float | None = None) -> float:
        """Record a request on ``slot``; return (and store) its next allowed time."""
        slot.requests += 1
        slot.last_end, slot.last_elapsed = ended, ended - started
        slot.ready_at = max(slot.ready_at,
                            ended + self.delay(ended - started, slot.crawl_delay, retry_after))
        return slot.ready_at


class HostSlots:
    """The politeness clock of every host one downloader contacts (see the module docstring).

    Parameters
    ----------
    settings : CrawlSettings
        The ``polite_`` settings (:class:`PolitenessPolicy`).
    clock : callable, default ``time.monotonic``
        The clock every time of a slot is on.
    """

    def __init__(self, settings: CrawlSettings,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.policy = PolitenessPolicy(settings)
        self.clock = clock
        self._slots: dict[str, HostSlot] = {}
        #: clock time from which a host not met yet counts as contacted (None: never)
        self._unknown_since: float | None = None

    def __len__(self) -> int:
        return len(self._slots)

    def slot(self, host: str) -> HostSlot:
        """The slot of ``host`` (``host[:port]``), made on first use."""
        slot = self._slots.get(host)
        if slot is None:
            slot = self._slots[host] = HostSlot(host)
            if self._unknown_since is not None:
                self._contacted(slot, self._unknown_since)
        return slot

    def ready_at(self, host: str) -> float:
        """When ``host`` may be contacted again (on this table's clock; 0: at once)."""
        slot = self._slots.get(host)
        if slot is None:
            return 0.0 if self._unknown_since is None else self.slot(host).ready_at
        return slot.ready_at

    def ready_in(self, slot: HostSlot) -> float:
        """Seconds from now before ``slot``'s host may be contacted (negative: ready)."""
        return slot.ready_at - self.clock()

    def after_request(self, slot: HostSlot, started: float, ended: float,
                      retry_after: float | None = None) -> None:
        """A request to the host started and ended (this clock's times)."""
        self.policy.after_request(slot, started, ended, retry_after)

    def reported(self, slot: HostSlot, ready_in: float, elapsed: float | None = None) -> None:
        """A request made elsewhere (another process) ended now; its host may be
        contacted again in ``ready_in`` seconds.  ``elapsed``: how long it took, so a
        Crawl-delay learnt from it counts from it."""
        now = self.clock()
        slot.ready_at = max(slot.ready_at, now + ready_in)
        if elapsed is not None:
            slot.last_end, slot.last_elapsed = now, elapsed

    def set_crawl_delay(self, slot: HostSlot, crawl_delay: float | None) -> None:
        """The host's robots.txt Crawl-delay (clamped here); a new value counts from the
        host's last request."""
        delay = self.policy.clamp_crawl_delay(crawl_delay)
        if delay != slot.crawl_delay:
            slot.crawl_delay = delay
            slot.ready_at = max(slot.ready_at, slot.last_end + self.policy.delay(
                slot.last_elapsed, delay))

    def contacted_now(self, host: str | None = None) -> None:
        """``host``'s last contact is unknown (its orders are sent again after a lost
        worker): it counts as contacted now.  ``None``: every host, those not met yet
        included (a resumed crawl, whose last requests may have gone unrecorded)."""
        now = self.clock()
        if host is None:
            self._unknown_since = now
        for slot in self._slots.values() if host is None else (self.slot(host),):
            self._contacted(slot, now)

    def _contacted(self, slot: HostSlot, now: float) -> None:
        slot.last_end, slot.last_elapsed = now, 0.0
        slot.ready_at = max(slot.ready_at, now + self.policy.delay(0.0, slot.crawl_delay))


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or an HTTP date), or None."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    # Imported here: HTTP dates are rare, email.utils costs 4 ms at every start.
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    now = time.time() if now is None else now
    return max(0.0, when.timestamp() - now)


async def sleep_until(deadline: float) -> None:
    """Sleep until ``time.monotonic() >= deadline``, never returning early.

    One timer in the common case; a second, short one only when the loop woke the
    first before the deadline (its clock is coarser than ``time.monotonic()``).
    """
    while (wait := deadline - time.monotonic()) > 0:
        await asyncio.sleep(wait)


async def sleep_for(seconds: float) -> None:
    """``asyncio.sleep(seconds)`` that never wakes early (see :func:`sleep_until`)."""
    if seconds > 0:
        await sleep_until(time.monotonic() + seconds)
