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

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from webcrawl.analysis.change.allocation import POLICIES, allocate
from webcrawl.analysis.change.estimators import VisitHistory, map_rate
from webcrawl.analysis.change.objectives import check_objective
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
    """

    policy: str = "optimal"
    objective: str = "freshness"
    budget_per_day: float = 1000.0
    prior_changes: float = 1.0
    prior_days: float = 7.0
    recompute_every: int = 1000
    min_frequency: float = 0.0

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


class _Buffer:
    """A growable float/int/bool column (amortised doubling)."""

    def __init__(self, dtype: type) -> None:
        self.data: NDArray[np.generic] = np.zeros(64, dtype=dtype)
        self.size = 0

    def extend(self, values: ArrayLike) -> None:
        v = np.asarray(values, dtype=self.data.dtype).ravel()
        need = self.size + v.size
        if need > self.data.size:
            grown = np.zeros(max(need, 2 * self.data.size), dtype=self.data.dtype)
            grown[: self.size] = self.data[: self.size]
            self.data = grown
        self.data[self.size:need] = v
        self.size = need

    def view(self) -> NDArray[np.generic]:
        return self.data[: self.size]


class RevisitPlanner:
    """Per-page change-rate estimates and refresh schedule for the revisit loop.

    The loop tells the planner about every visit (:meth:`update`) and asks which pages
    are due (:meth:`next_due`, :meth:`next_due_time`).  Estimates are posterior modes
    under a Gamma prior (:func:`analysis.change.estimators.map_rate`, using Last-Modified when
    given); the allocation under ``settings.policy`` is recomputed, vectorised, every
    ``recompute_every`` visits.  Page keys are any hashable (the store's url ids).
    A page is due ``1 / f`` after its last visit.

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
        self._last_visit = _Buffer(np.float64)
        self._page = _Buffer(np.int64)
        self._interval = _Buffer(np.float64)
        self._changed = _Buffer(np.bool_)
        self._since = _Buffer(np.float64)
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
        ``last_modified`` is the Last-Modified time on the same clock, if the server
        sent one.
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
            self._last_visit.extend(np.full(len(new_keys), np.nan))
            self._stale = True
        idx = np.fromiter((self._index[k] for k in pages), dtype=np.int64, count=len(pages))
        last = self._last_visit.view()
        for j in range(idx.size):  # sequential: a page may appear twice in one batch
            i, t, c = int(idx[j]), float(times[j]), flags[j]
            prev = last[i]
            if c is not None and np.isfinite(prev) and t > prev:
                since = t - lms[j]
                usable = bool(c) and np.isfinite(since) and since >= 0
                self._page.extend([i])
                self._interval.extend([t - prev])
                self._changed.extend([bool(c)])
                self._since.extend([min(since, t - prev) if usable else np.nan])
                self._pending += 1
            if not np.isfinite(prev) or t > prev:
                last[i] = t
        if self._pending >= self.settings.recompute_every:
            self._stale = True

    # --- estimates and schedule -----------------------------------------------------
    #: Known rates instead of estimates (an oracle, for benchmarks: "optimal with the
    #: true rates"): ``rate_oracle(pages) -> rates per day`` in :attr:`pages` order.
    #: Set the attribute on an instance; None (default) estimates from the visits.
    rate_oracle: Callable[[Sequence[Hashable]], ArrayLike] | None = None

    def recompute(self) -> None:
        """Re-estimate every rate and reallocate the budget now."""
        n = len(self._keys)
        if n == 0:
            self._rates = self._freqs = np.zeros(0)
            self._stale = False
            return
        hist = VisitHistory(self._page.view().astype(np.int64),
                            self._interval.view().astype(np.float64),
                            self._changed.view().astype(bool),
                            self._since.view().astype(np.float64), n)
        s = self.settings
        self._rates = (
            map_rate(hist, prior_changes=s.prior_changes, prior_time=s.prior_days)
            if self.rate_oracle is None
            else np.asarray(self.rate_oracle(self._keys), dtype=np.float64))
        self._freqs = allocate(s.policy, self._rates, s.budget_per_day,
                               min_frequency=s.min_frequency)
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
