"""PageRank orderings: PageRank of the known graph, recomputed every K fetches or S seconds.

Three schedules of one implementation (:class:`PageRankOrder`):

* ``pagerank``: recomputed after ``max(every, growth x fetched)`` fetches (or ``seconds``
  seconds live), with the push estimate in between (below);
* ``batch-pagerank`` (Baeza-Yates et al. [3]_): recomputed every ``every`` fetches
  exactly; between two recomputations a new URL waits at the teleport share (no
  estimate);
* ``partial-pagerank`` ([3]_): the same fixed period, and between recomputations a new
  URL's priority is the PageRank its fetched parents push to it (Baeza-Yates et al.'s
  temporary PageRank of a page: the sum of its known parents' PageRank over their
  out-degree).

References
----------
.. [1] J. Cho, H. Garcia-Molina, L. Page, "Efficient crawling through URL ordering",
   WWW 1998.
.. [2] M. Najork, J. L. Wiener, "Breadth-first crawling yields high-quality pages",
   WWW 2001.
.. [3] R. Baeza-Yates, C. Castillo, M. Marin, A. Rodriguez, "Crawling a country:
   better strategies than breadth-first for web page ordering", WWW 2005.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from webcrawl.analysis.ordering.strategies._growable import EdgeList, GrowableArray
from webcrawl.analysis.ordering.strategies.base import (
    PriorityUpdates,
    Strategy,
    StrategyOption,
)
from webcrawl.analysis.ordering.strategies.registry import register_strategy
from webcrawl.storage.errors import ConfigError

__all__ = [
    "BatchPageRank",
    "PageRankOrder",
    "PageRankOrderSettings",
    "PageRankSnapshot",
    "PartialPageRank",
]

#: Default period of ``batch-pagerank`` and ``partial-pagerank``, in fetches.
DEFAULT_PERIOD = 1000


@dataclass(frozen=True, slots=True)
class PageRankOrderSettings:
    """Settings of the ``pagerank`` strategy.

    Attributes
    ----------
    every_fetches : int
        Recompute after ``max(every_fetches, every_growth * fetched)`` fetches since the
        last recomputation (default 1000).
    every_growth : float
        ... so on a large crawl PageRank is recomputed each time the crawl has grown by
        this fraction (default 0.1): a recomputation costs O(known graph) and updates
        every frontier URL, so recomputing at a fixed interval would make the total
        work quadratic in the crawl's size; geometric growth keeps it near-linear.
        Crawls under ``every_fetches / every_growth`` pages (10,000 by default) are
        unaffected.
    every_seconds : float
        ... or after this many seconds, if at least one page was fetched (default 30;
        for slow, polite crawls). Virtual crawls ignore time, so they recompute at the
        same fetch counts.
    alpha : float
        Damping factor (default 0.85).
    tol : float
        L1 tolerance on the probability vector, passed to
        :func:`analysis.graph.pagerank_alg.pagerank` (default 1e-6: the scores are then within
        about 6e-6 in L1, plenty for a ranking, and warm starts need few iterations).
    max_iter : int
        Iteration cap per recomputation (default 200).
    push : bool
        Between recomputations, push each fetched page's priority to its unfetched
        children (default True); False leaves new URLs at the teleport share until
        the next recomputation (``batch-pagerank``).
    """

    every_fetches: int = 20
    every_growth: float = 0.1
    every_seconds: float = 30.0
    alpha: float = 0.85
    tol: float = 1e-6
    max_iter: int = 200
    push: bool = True

    def __post_init__(self) -> None:
        if self.every_fetches < 1:
            raise ConfigError(f"every_fetches must be >= 1, got {self.every_fetches}")
        if not self.every_growth >= 0:
            raise ConfigError(f"every_growth must be >= 0, got {self.every_growth}")
        if not self.every_seconds > 0:
            raise ConfigError(f"every_seconds must be > 0, got {self.every_seconds}")
        if not 0.0 < self.alpha < 1.0:
            raise ConfigError(f"alpha must be in (0, 1), got {self.alpha}")
        if not self.tol > 0:
            raise ConfigError(f"tol must be > 0, got {self.tol}")
        if self.max_iter < 1:
            raise ConfigError(f"max_iter must be >= 1, got {self.max_iter}")


_DEFAULTS = PageRankOrderSettings()


class _ResultSlot:
    """Where a recomputation leaves its scores for the strategy to absorb."""

    __slots__ = ("lock", "scores")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.scores: np.ndarray | None = None


@dataclass(frozen=True, slots=True)
class PageRankSnapshot:
    """What a recomputation needs; every array is private to the snapshot."""

    n: int
    src: np.ndarray
    dst: np.ndarray
    ids: np.ndarray
    fetched: np.ndarray
    x0: np.ndarray
    settings: PageRankOrderSettings
    slot: _ResultSlot = field(repr=False)


@register_strategy
class PageRankOrder(Strategy):
    """Priority = PageRank of the known graph, scaled to mean 1 over known URLs.

    The known graph has a node per discovered URL (fetched pages and frontier) and
    the fetched pages' distinct out-links as edges; frontier URLs are dangling
    (their out-links are unknown) and spread their rank uniformly, the usual
    PageRank treatment.  Every :attr:`PageRankOrderSettings.every_fetches` fetches
    (or every 10% of growth on large crawls, see :class:`PageRankOrderSettings`)
    or :attr:`~PageRankOrderSettings.every_seconds` seconds the caller takes a
    :meth:`snapshot` (O(1) for the edges, a copy of two per-URL arrays) and runs
    :meth:`recompute` in a worker thread; it warm-starts from the previous scores.

    Between recomputations (the default priority): a new URL starts at the teleport
    share ``1 - alpha`` (the mean-1 PageRank of a page nobody links to), and each
    fetch of page p adds ``alpha * priority(p) / outdeg(p)`` to every unfetched child
    -- one step of the power iteration pushed along the new edges, so a URL linked
    from important pages climbs before the next recomputation.  The next
    recomputation replaces these estimates with the true PageRank.

    The scores a recomputation produces are absorbed at the start of the next
    :meth:`fetched` call (so estimates continue from them), and the caller applies
    the returned updates to the frontier.  Virtual crawls call everything
    synchronously at the same fetch counts, so their order is deterministic.
    """

    name = "pagerank"
    OPTIONS: ClassVar[Mapping[str, StrategyOption]] = {
        "every": StrategyOption(int, _DEFAULTS.every_fetches,
                                "recompute after at least this many fetches"),
        "growth": StrategyOption(float, _DEFAULTS.every_growth,
                                 "... or once the crawl grew by this fraction, if more"),
        "seconds": StrategyOption(float, _DEFAULTS.every_seconds,
                                  "... or after this many seconds (live crawls)"),
        "alpha": StrategyOption(float, _DEFAULTS.alpha, "damping factor"),
    }

    def __init__(self, *, seed: int = 0, settings: PageRankOrderSettings | None = None,
                 options: Mapping[str, Any] | None = None) -> None:
        super().__init__(seed=seed, options=options)
        self.settings = settings or self.settings_from(self.options)
        # url id <-> local node index; not held while they are equal (a live crawl
        # announces ids 0, 1, 2, ... in order), built at the first id out of order.
        self._identity = True
        self._local = GrowableArray(np.int32, -1)  # url id -> local node index
        self._ids = GrowableArray(np.int64, -1)  # local node index -> url id
        self._fetched = GrowableArray(np.bool_, False)  # by local index
        self._estimate = GrowableArray(np.float64, 0.0)  # by local index
        self._edges = EdgeList()
        self._n = 0
        self._fetches = 0
        self._slot = _ResultSlot()
        #: Number of recomputations absorbed so far.
        self.recomputations = 0

    def discovered(self, url_id: int, depth: int) -> float:
        local = self._n
        self._n += 1
        if self._identity and url_id != local:
            self._materialise(local)
        if not self._identity:
            self._local.ensure(url_id)[url_id] = local
            self._ids.ensure(local)[local] = url_id
        self._fetched.ensure(local)
        estimate = self._estimate.ensure(local)
        estimate[local] = 1.0 - self.settings.alpha
        return float(estimate[local])

    def discovered_many(self, url_ids: np.ndarray, depth: int) -> np.ndarray:
        first = self._n
        m = len(url_ids)
        if not m or not self._identity or not np.array_equal(
                url_ids, np.arange(first, first + m)):
            return super().discovered_many(url_ids, depth)
        self._n += m
        self._fetched.ensure(self._n - 1)
        estimate = self._estimate.ensure(self._n - 1)
        estimate[first:self._n] = 1.0 - self.settings.alpha
        return estimate[first:self._n].copy()

    def _materialise(self, n: int) -> None:
        """Hold the id mapping from now on: the first ``n`` ids map to themselves."""
        self._identity = False
        if n:
            self._local.ensure(n - 1)[:n] = np.arange(n)
            self._ids.ensure(n - 1)[:n] = np.arange(n)

    def _local_of(self, url_ids: np.ndarray) -> np.ndarray:
        return url_ids if self._identity else self._local.data[url_ids]

    @classmethod
    def settings_from(cls, options: Mapping[str, Any]) -> PageRankOrderSettings:
        """The schedule the strategy's options describe."""
        return PageRankOrderSettings(every_fetches=options["every"],
                                     every_growth=options["growth"],
                                     every_seconds=options["seconds"], alpha=options["alpha"])

    def fetched(self, url_id: int, out_links: Sequence[int]) -> PriorityUpdates:
        self._absorb()
        p = url_id if self._identity else int(self._local.data[url_id])
        self._fetched.data[p] = True
        self._fetches += 1
        ids = np.unique(np.asarray(out_links, dtype=np.int64))
        if ids.size == 0:
            return []
        targets = self._local_of(ids)
        self._edges.extend(p, targets)
        if not self.settings.push:
            return []
        estimate = self._estimate.data
        open_mask = ~self._fetched.data[targets]
        open_targets = targets[open_mask]
        estimate[open_targets] += self.settings.alpha * estimate[p] / ids.size
        return list(zip(ids[open_mask].tolist(), estimate[open_targets].tolist(), strict=True))

    @property
    def fetch_scheduled(self) -> bool:
        return bool(np.isinf(self.settings.every_seconds))

    def wants_recompute(self, fetches_since: int, seconds_since: float) -> bool:
        s = self.settings
        if fetches_since >= max(s.every_fetches, s.every_growth * self._fetches):
            return True
        return fetches_since > 0 and seconds_since >= s.every_seconds

    def snapshot(self) -> PageRankSnapshot:
        n = self._n
        src, dst = self._edges.view()
        return PageRankSnapshot(
            n=n,
            src=src,
            dst=dst,
            # never rewritten: a view is a snapshot
            ids=np.arange(n) if self._identity else self._ids.data[:n],
            fetched=self._fetched.data[:n].copy(),
            x0=self._estimate.data[:n].copy(),
            settings=self.settings,
            slot=self._slot,
        )

    @staticmethod
    def recompute(snapshot: PageRankSnapshot) -> PriorityUpdates:
        """PageRank of the snapshot's graph (mean 1); updates for its unfetched URLs."""
        import scipy.sparse as sp
        from webcrawl.analysis.graph.pagerank_alg import pagerank

        n, s = snapshot.n, snapshot.settings
        if n == 0:
            return []
        adjacency = sp.csr_array(
            (np.ones(snapshot.src.size), (snapshot.src, snapshot.dst)), shape=(n, n)
        )
        x0 = snapshot.x0 / snapshot.x0.sum()
        result = pagerank(
            adjacency, alpha=s.alpha, tol=s.tol, max_iter=s.max_iter, normalize="mean", x0=x0
        )
        scores = np.asarray(result.scores, dtype=np.float64)
        with snapshot.slot.lock:
            snapshot.slot.scores = scores
        open_nodes = np.flatnonzero(~snapshot.fetched)
        return list(
            zip(snapshot.ids[open_nodes].tolist(), scores[open_nodes].tolist(), strict=True)
        )

    def _absorb(self) -> None:
        """Continue the estimates from the latest finished recomputation, if any."""
        with self._slot.lock:
            scores, self._slot.scores = self._slot.scores, None
        if scores is not None:
            self._estimate.data[: scores.size] = scores
            self.recomputations += 1

    def priority(self, url_id: int) -> float:
        """Current priority estimate of ``url_id``."""
        local = url_id if self._identity else self._local.data[url_id]
        return float(self._estimate.data[local])


@register_strategy
class BatchPageRank(PageRankOrder):
    """Baeza-Yates et al.'s batch PageRank: recomputed every ``every`` fetches exactly.

    Between two recomputations the frontier keeps the last PageRank; a URL discovered
    since waits at the teleport share ``1 - alpha`` (the mean-1 PageRank of a page no
    known page links to), behind the scored ones, first discovered first.  Time never
    triggers a recomputation, live or virtual, so a live crawl's order is reproducible.
    """

    name = "batch-pagerank"
    OPTIONS: ClassVar[Mapping[str, StrategyOption]] = {
        "every": StrategyOption(int, DEFAULT_PERIOD, "recompute every this many fetches"),
        "alpha": StrategyOption(float, _DEFAULTS.alpha, "damping factor"),
    }
    _push: ClassVar[bool] = False

    def __init__(self, *, seed: int = 0, settings: PageRankOrderSettings | None = None,
                 options: Mapping[str, Any] | None = None) -> None:
        super().__init__(seed=seed, settings=settings, options=options)
        self._recomputed_at = 0  # fetches counted by the last snapshot

    def wants_recompute(self, fetches_since: int, seconds_since: float) -> bool:
        """Due every ``every`` fetches the strategy has seen, whoever counts: a resumed
        crawl (which replays the stored fetches into the strategy) keeps the schedule."""
        del fetches_since, seconds_since
        return self._fetches - self._recomputed_at >= self.settings.every_fetches

    def snapshot(self) -> PageRankSnapshot:
        self._recomputed_at = self._fetches
        return super().snapshot()

    @classmethod
    def settings_from(cls, options: Mapping[str, Any]) -> PageRankOrderSettings:
        return PageRankOrderSettings(every_fetches=options["every"], every_growth=0.0,
                                     every_seconds=float("inf"), alpha=options["alpha"],
                                     push=cls._push)


@register_strategy
class PartialPageRank(BatchPageRank):
    """Baeza-Yates et al.'s partial PageRank: batch PageRank every ``every`` fetches,
    and in between a new URL's priority is the PageRank its fetched parents push to it
    (each fetch of page p adds ``alpha * priority(p) / outdeg(p)`` to every unfetched
    child, see :class:`PageRankOrder`).
    """

    name = "partial-pagerank"
    _push: ClassVar[bool] = True
