"""Per-host politeness slots (Mercator's rules, Heritrix-style bounds).

* At most one request in flight per host (the frontier hands a host to one worker).
* After a request that took ``t`` seconds the host is not contacted again before
  ``max(min_delay, delay_factor * t)`` capped at ``max_delay`` (Mercator: factor 10;
  Heritrix: ``5 t`` clamped to [3 s, 30 s]);
* robots.txt ``Crawl-delay`` raises that wait (clamped to ``polite_max_crawl_delay``);
* ``Retry-After`` on 429/503 raises it further (clamped to ``polite_max_retry_after``).

Clocks are ``time.monotonic()``; each host slot has its own.  Waits go through
:func:`sleep_until`, which re-checks that clock: an event loop may wake a timer early
(uvloop's clock has millisecond resolution), and a host must never be contacted before
its time.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime

from webcrawl.crawler.settings import CrawlSettings

__all__ = ["HostSlot", "PolitenessPolicy", "parse_retry_after", "sleep_for", "sleep_until"]


@dataclass(slots=True)
class HostSlot:
    """A host's politeness state (Scrapy's downloader ``Slot``)."""

    host_id: int
    name: str
    #: monotonic time before which the host must not be contacted
    ready_at: float = 0.0
    #: robots.txt Crawl-delay (already clamped), 0 if none
    crawl_delay: float = 0.0
    #: requests made to the host (pages, retries, robots.txt)
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
        slot.ready_at = max(slot.ready_at,
                            ended + self.delay(ended - started, slot.crawl_delay, retry_after))
        return slot.ready_at


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or an HTTP date), or None."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
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
