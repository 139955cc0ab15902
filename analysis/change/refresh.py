"""The revisit planner: per-page change-rate estimates and the refresh schedule they give.

:class:`RevisitPlanner` keeps per-page visit histories (and, when given, each page's host,
the hosts' politeness limits and the pages' importance) and turns them into an
allocation (:mod:`webcrawl.analysis.change.allocation`) and a due list for the revisit
loop; it has no networking.

References
----------
.. [1] J. Cho and H. Garcia-Molina, "Synchronizing a database to improve freshness",
   SIGMOD 2000.
.. [2] A. Kolobov, Y. Peres, E. Lubetzky and E. Horvitz, "Optimal freshness crawl under
   politeness constraints", SIGIR 2019.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from webcrawl.analysis.change._column import Column
from webcrawl.analysis.change.allocation import POLICIES, allocate
from webcrawl.analysis.change.estimators import VisitHistory, map_rate
from webcrawl.analysis.change.objectives import check_objective
from webcrawl.analysis.change.signals import ChangeSignals
from webcrawl.storage.arrays import FloatArray
from webcrawl.storage.errors import ConfigError

__all__ = [
    "PlannerSettings",
    "RevisitPlanner",
]


# --- the planner the revisit loop drives -------------------------------------------------

@dataclass(frozen=True)
class PlannerSettings:
    """Settings of a :class:`RevisitPlanner` (times in days, rates per day).

    Attributes
    ----------
    policy : str
        One of :data:`webcrawl.analysis.change.allocation.POLICIES` (default
        ``"optimal"``).
    objective : str
        What the optimal policies optimise, one of
        :data:`webcrawl.analysis.change.objectives.OBJECTIVES` (default
        ``"freshness"``; ``optimal_age`` implies ``"age"``).
    budget_per_day : float
        Total refreshes per day (default 1000; the revisit loop converts from R/s).
    prior_changes : float
        Pseudo-changes of the Gamma prior on each rate (default 1).
    prior_days : float
        Pseudo-observation days of the prior (default 7): a page with no history is
        estimated at ``prior_changes / prior_days`` changes per day, and the prior
        weighs like ``prior_days`` of exactly-observed time.
    recompute_every : int
        Visits between two reallocations (default 1000); new pages also trigger one.
    min_frequency : float
        Floor on every page's frequency, per day (default 0): with a floor, pages the
        optimal policy gives up on are still probed now and then.  The floor comes
        out of the budget (see :func:`allocate`): frequencies still sum to
        ``budget_per_day``.
    signals : bool
        Use the change signals sites give (default True): sitemap ``lastmod`` and
        ``changefreq`` and Last-Modified, each on the hosts where the revisits have not
        found it false (:mod:`webcrawl.analysis.change.signals`).  False: the revisits'
        changed-since-last-visit bits alone.
    """

    policy: str = "optimal"
    objective: str = "freshness"
    budget_per_day: float = 1000.0
    prior_changes: float = 1.0
    prior_days: float = 7.0
    recompute_every: int = 1000
    min_frequency: float = 0.0
    signals: bool = True

    def __post_init__(self) -> None:
        if self.policy not in POLICIES:
            raise ConfigError(f"unknown policy {self.policy!r}; choose from {', '.join(POLICIES)}")
        check_objective(self.objective)
        if self.policy == "optimal_age" and self.objective != "age":
            object.__setattr__(self, "objective", "age")
        if not self.budget_per_day > 0:
            raise ConfigError("budget_per_day must be positive")
        if not self.prior_changes >= 0 or not self.prior_days > 0:
            raise ConfigError("prior_changes must be >= 0 and prior_days > 0")
        if self.recompute_every < 1:
            raise ConfigError("recompute_every must be at least 1")
        if not self.min_frequency >= 0:
            raise ConfigError("min_frequency must be >= 0")


class RevisitPlanner:
    """Per-page change-rate estimates and refresh schedule for the revisit loop.

    The loop tells the planner about every visit (:meth:`update`), each page's host
    (:meth:`set_hosts`), the hosts' politeness limits (:meth:`set_host_limits`), the
    pages' importance (:meth:`set_weights`) and what sitemaps say (:meth:`read_sitemap`,
    :meth:`set_changefreq`), and asks which pages are due (:meth:`next_due`,
    :meth:`next_due_time`).  Estimates are posterior modes under a Gamma prior
    (:func:`webcrawl.analysis.change.estimators.map_rate`), from the revisits' changed
    bits and Last-Modified, or from the sitemap's ``lastmod`` where the host's is
    trusted (:mod:`webcrawl.analysis.change.signals`); the allocation under
    ``settings.policy`` is recomputed, vectorised, every ``recompute_every``
    observations.  Page keys are any hashable (the store's url ids), host keys too.  A
    page is due ``1 / f`` after its last visit.

    Examples
    --------
    >>> planner = RevisitPlanner(PlannerSettings(budget_per_day=2.0))
    >>> planner.update("a", 0.0); planner.update("b", 0.0)
    >>> planner.next_due(now=0.5)
    []
    >>> planner.next_due(now=1.0)       # uniform until something is learned
    ['a', 'b']
    """

    def __init__(self, settings: PlannerSettings | None = None) -> None:
        self.settings = settings or PlannerSettings()
        self._keys: list[Hashable] = []
        self._index: dict[Hashable, int] = {}
        self._last_visit = Column(np.float64, np.nan)
        self._host = Column(np.int64, 0)        # 0: no host given (never limited)
        self._weight = Column(np.float64, 1.0)
        self._host_index: dict[Hashable, int] = {}
        self._host_limit: dict[int, float] = {}
        self._page = Column(np.int64)
        self._interval = Column(np.float64)
        self._changed = Column(np.bool_)
        self._since = Column(np.float64)         # visit time - Last-Modified, raw
        self.signals = ChangeSignals()
        self._rates = np.zeros(0)
        self._freqs = np.zeros(0)
        self._pending = 0
        self._stale = True

    # --- observations -----------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._keys)

    @property
    def pages(self) -> Sequence[Hashable]:
        """Page keys in the planner's index order (the order of the arrays it returns)."""
        return self._keys

    def update(
        self,
        page: Hashable,
        visit_time: float,
        changed: bool | None = None,
        last_modified: float | None = None,
    ) -> None:
        """Record a visit at ``visit_time`` (days).

        The first visit of a page (or ``changed=None``) only registers it and sets its
        last-visit time; later ones add an observation ``(interval, changed)``.
        ``last_modified`` is the Last-Modified time on the same clock, if the answer
        (a 2xx: a 304 says nothing new) carried one.
        """
        self.update_many([page], [visit_time], [changed],
                         None if last_modified is None else [last_modified])

    def update_many(
        self,
        pages: Sequence[Hashable],
        visit_times: ArrayLike,
        changed: Iterable[bool | None],
        last_modified: ArrayLike | None = None,
    ) -> None:
        """Record many visits at once (same meaning as :meth:`update`, in time order)."""
        times = np.asarray(visit_times, dtype=np.float64)
        flags = list(changed)
        lms = (np.full(times.size, np.nan) if last_modified is None
               else np.asarray(last_modified, dtype=np.float64))
        if not (len(pages) == times.size == len(flags) == lms.size):
            raise ConfigError("pages, visit_times and changed must have one length")
        new_keys = [k for k in dict.fromkeys(pages) if k not in self._index]
        for key in new_keys:
            self._index[key] = len(self._keys)
            self._keys.append(key)
        if new_keys:
            n = len(self._keys)
            for col in (self._last_visit, self._host, self._weight):
                col.resize(n)
            self._stale = True
        idx = np.fromiter((self._index[k] for k in pages), dtype=np.int64, count=len(pages))
        last = self._last_visit.view()
        host = self._host.view()
        for j in range(idx.size):  # sequential: a page may appear twice in one batch
            i, t, c = int(idx[j]), float(times[j]), flags[j]
            prev = last[i]
            if c is not None and np.isfinite(prev) and t > prev:
                self._page.extend([i])
                self._interval.extend([t - prev])
                self._changed.extend([bool(c)])
                self._since.extend([t - lms[j]])
                self.signals.visit(i, float(prev), t, bool(c), float(lms[j]), int(host[i]))
                self._pending += 1
            if not np.isfinite(prev) or t > prev:
                last[i] = t
        if self._pending >= self.settings.recompute_every:
            self._stale = True

    def _indices(self, pages: Sequence[Hashable], *, known_only: bool) -> tuple[
            np.ndarray, np.ndarray]:
        """Planner indices of ``pages`` and which of them the planner knows."""
        found = np.fromiter((self._index.get(k, -1) for k in pages), dtype=np.int64,
                            count=len(pages))
        ok = found >= 0
        if not known_only and not ok.all():
            missing = pages[int(np.flatnonzero(~ok)[0])]
            raise ConfigError(f"page {missing!r} was never visited: register it first")
        return found, ok

    def set_hosts(self, pages: Sequence[Hashable], hosts: Sequence[Hashable]) -> None:
        """The host of each page (any hashable key), for the per-host limits and signals."""
        idx, _ = self._indices(pages, known_only=False)
        if len(hosts) != idx.size:
            raise ConfigError("pages and hosts must have one length")
        for key in dict.fromkeys(hosts):
            self._host_index.setdefault(key, len(self._host_index) + 1)
        self._host.view()[idx] = [self._host_index[h] for h in hosts]
        self._stale = True

    def set_host_limits(self, limits: Mapping[Hashable, float]) -> None:
        """Refreshes per day each host allows (politeness; ``inf`` or absent: none).

        Only the ``polite_optimal`` policy plans with them; the others plan for the
        budget alone and are held to the limits when they fetch.
        """
        new: dict[int, float] = {}
        for key, per_day in limits.items():
            if not per_day > 0:
                raise ConfigError(f"host {key!r}: a limit must be positive, got {per_day}")
            new[self._host_index.setdefault(key, len(self._host_index) + 1)] = float(per_day)
        if new != self._host_limit:
            self._host_limit = new
            self._stale = True

    def set_weights(self, pages: Sequence[Hashable], weights: ArrayLike) -> None:
        """Importance of pages (positive; 1 by default), for the optimal policies."""
        idx, _ = self._indices(pages, known_only=False)
        w = np.asarray(weights, dtype=np.float64)
        if w.shape != idx.shape or np.any(~(w > 0)) or np.any(~np.isfinite(w)):
            raise ConfigError("weights must be positive and finite, one per page")
        self._weight.view()[idx] = w
        self._stale = True

    def read_sitemap(self, pages: Sequence[Hashable], time: float, lastmod: ArrayLike,
                     resolution: ArrayLike | None = None) -> None:
        """A sitemap read at ``time`` (days): each listed page's ``lastmod`` (days,
        ``nan`` when missing; pages the planner does not know are skipped)."""
        idx, ok = self._indices(pages, known_only=True)
        values = np.asarray(lastmod, dtype=np.float64)
        extra = {} if resolution is None else {
            "resolution": np.broadcast_to(np.asarray(resolution, np.float64), values.shape)[ok]}
        before = self.signals.sitemap_history()[0].size
        self.signals.read_sitemap(idx[ok], time, values[ok], host=self._host.view()[idx[ok]],
                                  **extra)
        self._pending += self.signals.sitemap_history()[0].size - before
        if self._pending >= self.settings.recompute_every:
            self._stale = True

    def set_changefreq(self, pages: Sequence[Hashable], per_day: ArrayLike) -> None:
        """Sitemap ``changefreq`` of pages as changes per day (``nan``: none), the
        centre of each page's prior (:func:`webcrawl.analysis.change.signals.changefreq_rate`)."""
        idx, ok = self._indices(pages, known_only=True)
        self.signals.set_changefreq(idx[ok], np.asarray(per_day, dtype=np.float64)[ok])
        self._stale = True

    # --- estimates and schedule -----------------------------------------------------
    #: Known rates instead of estimates (an oracle, for benchmarks: "optimal with the
    #: true rates"): ``rate_oracle(pages) -> rates per day`` in :attr:`pages` order.
    #: Set the attribute on an instance; None (default) estimates from the visits.
    rate_oracle: Callable[[Sequence[Hashable]], ArrayLike] | None = None

    def history(self) -> VisitHistory:
        """The observations the estimates come from: each page's revisits, or its
        sitemap reads where its host's ``lastmod`` is trusted (signals on)."""
        n = len(self._keys)
        n_hosts = len(self._host_index) + 1
        host = self._host.view()[:n].astype(np.int64)
        page = self._page.view().astype(np.int64)
        interval = self._interval.view().astype(np.float64)
        changed = self._changed.view().astype(bool)
        raw = self._since.view().astype(np.float64)
        if not self.settings.signals:
            return VisitHistory(page, interval, changed, np.full(page.size, np.nan), n)
        sitemap_ok, lm_ok = self.signals.trusted(n_hosts)
        usable = changed & np.isfinite(raw) & (raw >= 0) & lm_ok[host[page]]
        since = np.where(usable, np.minimum(np.where(usable, raw, 0.0), interval), np.nan)
        sp, si, sc, ss = self.signals.sitemap_history()
        by_sitemap = (np.bincount(sp, minlength=n) > 0) & sitemap_ok[host]
        keep, take = ~by_sitemap[page], by_sitemap[sp]
        return VisitHistory(np.concatenate([page[keep], sp[take]]),
                            np.concatenate([interval[keep], si[take]]),
                            np.concatenate([changed[keep], sc[take]]),
                            np.concatenate([since[keep], ss[take]]), n)

    def _prior_time(self, n: int) -> ArrayLike:
        s = self.settings
        if not s.signals or s.prior_changes <= 0:
            return s.prior_days
        stated = self.signals.prior_rate(n)
        good = np.isfinite(stated) & (stated > 0)
        return np.where(good, s.prior_changes / np.where(good, stated, 1.0), s.prior_days)

    def recompute(self) -> None:
        """Re-estimate every rate and reallocate the budget now."""
        n = len(self._keys)
        if n == 0:
            self._rates = self._freqs = np.zeros(0)
            self._stale = False
            return
        s = self.settings
        self._rates = (
            map_rate(self.history(), prior_changes=s.prior_changes,
                     prior_time=self._prior_time(n))
            if self.rate_oracle is None
            else np.asarray(self.rate_oracle(self._keys), dtype=np.float64))
        limits = np.full(len(self._host_index) + 1, np.inf)
        for h, per_day in self._host_limit.items():
            limits[h] = per_day
        self._freqs = allocate(s.policy, self._rates, s.budget_per_day,
                               self._weight.view()[:n].astype(np.float64), s.min_frequency,
                               objective=s.objective, host=self._host.view()[:n],
                               host_limit=limits)
        self._pending = 0
        self._stale = False

    def _fresh(self) -> None:
        if self._stale or self._freqs.size != len(self._keys):
            self.recompute()

    def rates(self) -> FloatArray:
        """Current rate estimates (per day), in :attr:`pages` order."""
        self._fresh()
        return self._rates

    def frequencies(self) -> FloatArray:
        """Current refresh frequencies (per day), in :attr:`pages` order."""
        self._fresh()
        return self._freqs

    def due_times(self) -> FloatArray:
        """When each page is next due: last visit + ``1/f`` (``inf`` when ``f = 0``)."""
        f = self.frequencies()
        with np.errstate(divide="ignore"):
            return np.asarray(self._last_visit.view() + np.where(f > 0, 1.0 / f, np.inf),
                              dtype=np.float64)

    def next_due(self, now: float, limit: int | None = None) -> list[Hashable]:
        """Pages due at ``now``, most overdue first (at most ``limit``)."""
        due = self.due_times()
        idx = np.flatnonzero(due <= now)
        idx = idx[np.argsort(due[idx], kind="stable")]
        if limit is not None:
            idx = idx[:limit]
        return [self._keys[i] for i in idx]

    def next_due_time(self) -> float:
        """The earliest due time of any page (``inf`` if none will ever be due)."""
        due = self.due_times()
        return float(due.min()) if due.size else float("inf")
