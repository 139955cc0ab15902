"""The crawl state's memory budget (``memory_limit``): spill first, then stop cleanly.

The crawl state is what grows with the URLs a crawl discovers: the URL-seen set and the
per-URL tables (:class:`~webcrawl.crawler.registry.CrawlRegistry`), the frontier
(:class:`~webcrawl.crawler.frontier.Frontier`) and the hosts.  Each part counts its own
bytes (``nbytes``: numpy arrays exactly, Python containers at a stated per-entry
estimate), plus :data:`COPY_BYTES` a URL for the copy a growing array makes (a merge of
recent fingerprints, a frontier array's growth: the old and the new array are both
resident for a moment).  A :class:`MemoryBudget` adds them up every :data:`CHECK_EVERY`
new URLs, or every host count of them if that is more (the parts keep their sums as
they change, so a check costs O(1); a spill is O(hosts), amortised O(1) a URL), and
samples the process's resident memory (``/proc/self/statm``).
The crawl ticks once per page, with the page's new URLs.

Over the limit -- the state counted, or the resident memory grown since the budget was
made (the crawl's start) by more than the limit -- it first spills: the registry writes
out its buffered URL text and merges its recent fingerprints, the frontier writes its
hosts' overflows to its spill file (keeping at most a few hundred ids a host in
memory), then the hosts' in-memory heaps are halved (down to one URL each), their other
URLs moving to the overflows -- which changes no ordering, only where URLs wait.  If
the counted state is still over the limit, what is left is the compact per-URL state
itself (about 40-70 bytes a URL, by ordering), which cannot spill:
:meth:`MemoryBudget.check` then returns a one-line message and the crawl stops cleanly,
resumable with a higher limit -- never an out-of-memory kill.  Between two checks the
state grows by at most the URLs of one check interval and one page's links.

The process's resident memory is this state plus a fixed overhead: what it held when
the crawl started (the interpreter and the libraries, about 85 MiB measured, see
``docs/results/frontier.md``) and :data:`OVERHEAD` (160 MiB) for the caches and buffers
whose size does not grow with the URLs: SQLite's page cache of the crawl database (64
MiB), the URL normalisation caches (64 MiB), the store's batches, the URL text buffer,
pages being fetched and parsed and the allocator's free lists (32 MiB).  A crawl that
passes :data:`~webcrawl.crawler.seen.COMPILED_MIN` URLs with numba installed (the
``fast`` extra) also loads the compiled loops of the URL-seen test and the frontier:
numba and LLVM, about 140 MiB more of fixed overhead (138 MiB measured), after which the
first check of the resident memory may spill the frontier once.
"""

from __future__ import annotations

import logging
import os

from webcrawl.crawler.frontier import Frontier
from webcrawl.crawler.registry import CrawlRegistry
from webcrawl.storage.store import CACHE_KIB

__all__ = ["OVERHEAD", "MemoryBudget", "format_bytes", "resident_bytes"]

log = logging.getLogger(__name__)

#: Fewest new URLs between two checks of the budget.
CHECK_EVERY = 256
#: Estimated bytes of a host's in-memory state (slot, robots rules, dict entries).
HOST_BYTES = 600
#: Bytes a URL for the copy an array makes while it grows (the fingerprint and id
#: arrays at a merge, 12; the frontier's per-URL arrays, 13: never both at once).
COPY_BYTES = 13
#: The URL normalisation caches (:mod:`webcrawl.crawler.urls`, :mod:`webcrawl.crawler.links`:
#: 131,072 URLs, two strings and a cache entry each, about 45 MiB for 60-character URLs).
URL_CACHES = 64 << 20
#: The other buffers: the store's batches, the URL text buffer, pages being fetched and
#: parsed, the allocator's free lists.
BUFFERS = 32 << 20
#: Resident memory a crawl may hold beyond its start-up size and the limit: bounded
#: caches and buffers that do not grow with the URLs (SQLite's page cache of the crawl
#: database, :data:`URL_CACHES`, :data:`BUFFERS`).
OVERHEAD = CACHE_KIB * 1024 + URL_CACHES + BUFFERS


def resident_bytes() -> int | None:
    """The process's resident memory now (Linux ``/proc/self/statm``; None elsewhere)."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, IndexError, ValueError):
        return None


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
        #: resident memory when the budget was made (the crawl's start), and the
        #: largest seen at a check since (None: not measurable here)
        self.start_rss = resident_bytes()
        self.peak_rss = self.start_rss
        self._rss_spilled = False

    def used(self) -> int:
        """Bytes of the crawl state now."""
        return (self.registry.nbytes + self.frontier.nbytes
                + HOST_BYTES * self.registry.host_count + COPY_BYTES * len(self.registry))

    def _rss_over(self) -> bool:
        """Whether resident memory grew past the limit since the start (and note it)."""
        rss = resident_bytes()
        if rss is None or self.start_rss is None:
            return False
        self.peak_rss = max(self.peak_rss or 0, rss)
        return rss - self.start_rss > self.limit

    def tick(self, new: int = 1) -> str | None:
        """``new`` new URLs (a page's): check every :data:`CHECK_EVERY` of them, at
        the page that reaches it (see :meth:`check`)."""
        self._since += new
        if self._since < CHECK_EVERY or self._since < self.registry.host_count:
            return None
        return self.check()

    def check(self) -> str | None:
        """Spill while over the limit; None, or the message of a state that cannot fit."""
        self._since = 0
        used = self.used()
        frontier = self.frontier
        # Resident memory past the limit (the counted state undercounts) spills the
        # frontier all the way once: it does not shrink back, so it is not re-checked.
        pressed = self._rss_over() and not self._rss_spilled
        self._rss_spilled |= pressed
        if used > self.limit or pressed:
            self.registry.spill()
            frontier.spill_overflows()
            used = self.used()
        while (used > self.limit or pressed) and frontier.head > 1:
            frontier.shrink_heads(frontier.head // 2)
            frontier.spill_overflows()
            log.info("memory limit %s: frontier heads shrunk to %d URLs a host",
                     format_bytes(self.limit), frontier.head)
            used = self.used()
        self.peak = max(self.peak, used)
        if used <= self.limit:
            return None
        return (f"memory limit {format_bytes(self.limit)} reached by the crawl state "
                f"({format_bytes(used)} for {len(self.registry):,} URLs and "
                f"{self.registry.host_count:,} hosts, frontier spilled)")
