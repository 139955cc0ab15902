"""The crawl state's memory budget (``memory_limit``): spill first, then stop cleanly.

The crawl state is what grows with the URLs a crawl discovers: the URL-seen set and the
per-URL tables (:class:`~webcrawl.crawler.registry.CrawlRegistry`), the frontier
(:class:`~webcrawl.crawler.frontier.Frontier`) and the hosts.  Each part counts its own
bytes (``nbytes``: numpy arrays exactly, Python containers at a stated per-entry
estimate); a :class:`MemoryBudget` adds them up every :data:`CHECK_EVERY` new URLs, or
every host count of them if that is more (a check is O(hosts): amortised O(1) a URL).

Over the limit, it first spills: the registry writes out its buffered URL text and
merges its recent fingerprints into the sorted arrays, then the hosts' in-memory heaps
are halved (down to one URL each), their other URLs moving to the hosts' compact
overflows -- which changes no ordering, only where URLs wait.  If the state is still
over the limit, what is left is the compact per-URL state itself (about 40-70 bytes a
URL, by ordering), which cannot spill: :meth:`MemoryBudget.check` then returns a
one-line message and the crawl stops cleanly, resumable with a higher limit -- never an
out-of-memory kill.  Between two checks the state grows by at most the URLs of one
check interval, the measure of how far past the limit it can get.

The process's resident memory is this state plus the interpreter, the libraries and
the I/O buffers (the store's batches, connections, pages being parsed): a fixed
overhead the budget does not count (see ``docs/results/frontier.md`` for the figures).
"""

from __future__ import annotations

import logging

from webcrawl.crawler.frontier import Frontier
from webcrawl.crawler.registry import CrawlRegistry

__all__ = ["MemoryBudget", "format_bytes"]

log = logging.getLogger(__name__)

#: Fewest new URLs between two checks of the budget.
CHECK_EVERY = 256
#: Estimated bytes of a host's in-memory state (slot, robots rules, dict entries).
HOST_BYTES = 600


def format_bytes(n: float) -> str:
    """``n`` bytes in binary units, as ``--memory-limit`` takes them (``1.5G``)."""
    for unit in ("", "K", "M", "G"):
        if abs(n) < 1024 or unit == "G":
            return f"{n:.0f}{unit}" if unit == "" else f"{n:.1f}{unit}"
        n /= 1024
    raise AssertionError  # pragma: no cover


class MemoryBudget:
    """Keeps a crawl's state under ``limit`` bytes (see the module docstring)."""

    def __init__(self, limit: int, registry: CrawlRegistry, frontier: Frontier) -> None:
        self.limit = limit
        self.registry = registry
        self.frontier = frontier
        self._since = 0
        #: the largest state seen at a check (bytes)
        self.peak = 0

    def used(self) -> int:
        """Bytes of the crawl state now."""
        return (self.registry.nbytes + self.frontier.nbytes
                + HOST_BYTES * self.registry.host_count)

    def tick(self) -> str | None:
        """One new URL: check every :data:`CHECK_EVERY` of them (see :meth:`check`)."""
        self._since += 1
        if self._since < CHECK_EVERY or self._since < self.registry.host_count:
            return None
        return self.check()

    def check(self) -> str | None:
        """Spill while over the limit; None, or the message of a state that cannot fit."""
        self._since = 0
        used = self.used()
        frontier = self.frontier
        if used > self.limit:
            self.registry.spill()
            used = self.used()
        while used > self.limit and frontier.head > 1:
            frontier.shrink_heads(frontier.head // 2)
            log.info("memory limit %s: frontier heads shrunk to %d URLs a host",
                     format_bytes(self.limit), frontier.head)
            used = self.used()
        self.peak = max(self.peak, used)
        if used <= self.limit:
            return None
        return (f"memory limit {format_bytes(self.limit)} reached by the crawl state "
                f"({format_bytes(used)} for {len(self.registry):,} URLs and "
                f"{self.registry.host_count:,} hosts, frontier spilled)")
