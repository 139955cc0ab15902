"""The crawl-ordering interface: a strategy ranks discovered URLs.

One implementation serves both the live crawler (through the frontier, which adds
per-host politeness on top) and virtual crawls in ``analysis.ordering.virtual`` (which replay
a strategy over a captured graph with no network).  A strategy only ever sees integer
URL ids, in the order the crawl discovers and fetches them.

Protocol, in the order the caller drives it:

1. ``discovered(url_id, depth)`` once per new URL (seeds first, then each fetched
   page's new out-links in document order) -> the URL's initial priority.
2. ``fetched(url_id, out_links)`` after a page was fetched and its new out-links were
   announced with ``discovered``; ``out_links`` holds every distinct out-link target
   (new or already known, fetched or not).  Returns priority updates for unfetched
   URLs whose priority changed.  Updates for URLs already taken are ignored by callers.
3. Optionally, bulk recomputation (PageRank-like strategies): when
   ``wants_recompute(fetches_since, seconds_since)`` is true the caller takes a cheap
   ``snapshot()`` on its own thread, runs ``recompute(snapshot)`` (a pure function,
   safe in a worker thread, so requests in flight go on) and applies the returned
   updates before it takes the next URL.  Virtual crawls call it synchronously at the
   same fetch counts, so a live crawl on one host and its virtual replay agree.

Ordering rule: **higher priority is taken first; ties go to the URL discovered first.**

Register a custom strategy with :func:`register_strategy` (see ``analysis.ordering.strategies``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar

__all__ = ["PriorityUpdates", "Strategy"]

#: ``(url_id, new_priority)`` pairs.
PriorityUpdates = Iterable[tuple[int, float]]


class Strategy(ABC):
    """Base class of crawl orderings; subclasses set :attr:`name`."""

    #: The name used by ``webcrawl crawl --strategy NAME``.
    name: ClassVar[str] = ""

    def __init__(self, *, seed: int = 0) -> None:
        self.seed = seed

    @abstractmethod
    def discovered(self, url_id: int, depth: int) -> float:
        """Return the priority of a newly discovered URL."""

    def fetched(self, url_id: int, out_links: Sequence[int]) -> PriorityUpdates:
        """Learn a fetched page's out-links; return changed priorities (default: none)."""
        del url_id, out_links
        return ()

    def wants_recompute(self, fetches_since: int, seconds_since: float) -> bool:
        """Whether a bulk recomputation is due (default: never)."""
        del fetches_since, seconds_since
        return False

    def snapshot(self) -> Any:
        """A cheap, immutable copy of what :meth:`recompute` needs."""
        return None

    @staticmethod
    def recompute(snapshot: Any) -> PriorityUpdates:
        """Recompute priorities from a snapshot; pure, runs in a worker thread."""
        del snapshot
        return ()
