"""The crawl-ordering interface: a strategy ranks discovered URLs.

One implementation serves both the live crawler (through the frontier, which adds
per-host politeness on top) and virtual crawls in ``analysis.ordering.virtual`` (which replay
a strategy over a captured graph with no network).  A strategy only ever sees integer
URL ids, in the order the crawl discovers and fetches them.

Protocol, in the order the caller drives it:

1. ``discovered(url_id, depth)`` once per new URL (seeds first, then each fetched
   page's new out-links in document order) -> the URL's initial priority; or
   ``discovered_many(url_ids, depth)`` for a page's new out-links at once (the same
   priorities and state as ``discovered`` for each in order).
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

Two optional parts, declared by the class:

* :attr:`Strategy.host_order`: how the frontier chooses among hosts that may be
  contacted.  ``"best-url"`` (every strategy but one): the host holding the URL the
  strategy ranks best; ``"most-pending"`` (``larger-sites-first``): the host with the
  most frontier URLs, ties to the host holding the best-ranked URL; within the chosen
  host the strategy's own order applies either way.  A site-level rule lives in the
  frontier, which knows every host's pending count exactly in O(1), rather than in
  per-URL priorities (which would all change whenever a host's count does).
* :attr:`Strategy.needs` and :meth:`Strategy.bind`: what the strategy must be told
  besides URL ids -- ``"url"`` (each id's normalised URL: ``historical``) or
  ``"final_scores"`` (the final graph's PageRank: ``omniscient``, virtual crawls
  only).  The caller passes a :class:`StrategyContext` to :meth:`bind` before the
  first ``discovered``.

Named options (``--strategy-opt KEY=VALUE``) are declared in :attr:`Strategy.OPTIONS`
and given to the constructor as ``options``; :func:`get_strategy` also accepts a
*spec*, the name with its options (``batch-pagerank?every=500``), which is what a crawl
stores as its strategy (:mod:`analysis.ordering.strategies.registry`).

Register a custom strategy with :func:`register_strategy` (see ``analysis.ordering.strategies``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np
from webcrawl.storage.errors import ConfigError

__all__ = ["HostOrder", "PriorityUpdates", "Strategy", "StrategyContext", "StrategyOption"]

#: ``(url_id, new_priority)`` pairs.
PriorityUpdates = Iterable[tuple[int, float]]
#: How the frontier chooses among contactable hosts (module docstring).
HostOrder = Literal["best-url", "most-pending"]


@dataclass(frozen=True, slots=True)
class StrategyOption:
    """A named option of a strategy: its type (``int``, ``float`` or ``str``), default
    and one line of help."""

    kind: type
    default: Any
    help: str

    def parse(self, name: str, value: Any) -> Any:
        """``value`` converted to the option's type (ConfigError naming the option)."""
        try:
            parsed = self.kind(value)
        except (TypeError, ValueError):
            raise ConfigError(f"strategy option {name}: {self.kind.__name__} expected, "
                              f"got {value!r}") from None
        if isinstance(parsed, float) and not np.isfinite(parsed):
            raise ConfigError(f"strategy option {name} must be finite, got {value!r}")
        return parsed


@dataclass(frozen=True, slots=True)
class StrategyContext:
    """What a crawl tells a strategy besides URL ids (see :attr:`Strategy.needs`).

    Attributes
    ----------
    url_of : callable, optional
        ``url_of(url_id)``: the URL's normalised text.
    final_scores : ndarray, optional
        PageRank of the final graph by URL id (virtual crawls only: a live crawl
        cannot know it).
    """

    url_of: Callable[[int], str] | None = None
    final_scores: np.ndarray | None = None


class Strategy(ABC):
    """Base class of crawl orderings; subclasses set :attr:`name`."""

    #: The name used by ``webcrawl crawl --strategy NAME``.
    name: ClassVar[str] = ""
    #: Named options (``--strategy-opt KEY=VALUE``): name -> :class:`StrategyOption`.
    OPTIONS: ClassVar[Mapping[str, StrategyOption]] = {}
    #: How the frontier chooses among contactable hosts (module docstring).
    host_order: ClassVar[HostOrder] = "best-url"
    #: What :meth:`bind` must provide: ``"url"`` and/or ``"final_scores"``.
    needs: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, *, seed: int = 0, options: Mapping[str, Any] | None = None) -> None:
        self.seed = seed
        #: whether :meth:`bind` gave the strategy what :attr:`needs` names
        self.bound = False
        #: every option's value (defaults filled in)
        self.options: dict[str, Any] = self.parse_options(options or {})

    @classmethod
    def parse_options(cls, given: Mapping[str, Any]) -> dict[str, Any]:
        """Every option of the class, ``given`` ones parsed, others at their default."""
        unknown = sorted(set(given) - set(cls.OPTIONS))
        if unknown:
            known = ", ".join(sorted(cls.OPTIONS)) or "none"
            raise ConfigError(f"strategy {cls.name!r} has no option {unknown[0]!r} "
                              f"(its options: {known})")
        return {key: (opt.parse(key, given[key]) if key in given else opt.default)
                for key, opt in cls.OPTIONS.items()}

    def bind(self, context: StrategyContext) -> None:
        """Receive what :attr:`needs` names (default: nothing is needed)."""
        del context

    @abstractmethod
    def discovered(self, url_id: int, depth: int) -> float:
        """Return the priority of a newly discovered URL."""

    def discovered_many(self, url_ids: np.ndarray, depth: int) -> np.ndarray:
        """:meth:`discovered` for each of ``url_ids`` in order (all at ``depth``): their
        priorities (``float64``).  Strategies override it with one vectorised step."""
        discovered = self.discovered
        return np.fromiter((discovered(u, depth) for u in url_ids.tolist()),
                           dtype=np.float64, count=len(url_ids))

    def fetched(self, url_id: int, out_links: Sequence[int]) -> PriorityUpdates:
        """Learn a fetched page's out-links; return changed priorities (default: none)."""
        del url_id, out_links
        return ()

    @property
    def fetch_scheduled(self) -> bool:
        """Whether :meth:`wants_recompute` depends on fetch counts alone (default False).

        A resumed crawl then replays the recomputations where the crawl made them (its
        order continues exactly); otherwise it recomputes once, after the replay.
        """
        return False

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
