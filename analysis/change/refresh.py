"""Revisit policies: how often to refresh each page under a total fetch budget.

A page changing as a Poisson process with rate ``lam`` and refreshed at fixed
intervals ``1/f`` (frequency ``f``) has, with ``r = lam / f``,

* mean freshness ``F(lam, f) = (1 - e^{-r}) / r``  (``= (1 - e^{-lam/f}) f / lam``);
* mean age ``A(lam, f) = (1/f) (1/2 - 1/r + (1 - e^{-r}) / r^2)``.

Derivation of the age: after a refresh at 0 the first change comes at ``tau ~
Exp(lam)`` and the age at ``t`` is ``(t - tau)^+``, with mean ``t - (1 - e^{-lam
t})/lam``; averaging over ``t`` in ``[0, 1/f)`` gives the formula above (``~ lam / (6
f^2)`` for ``r -> 0``, ``-> 1/(2f)`` for ``r -> inf``).

Policies (:func:`allocate`), each returning frequencies ``f_i >= 0`` with ``sum f_i =
budget``:

``uniform``       every page the same ``f``.
``proportional``  ``f_i`` proportional to ``lam_i``.
``optimal``       maximise ``sum w_i F(lam_i, f_i)`` (Cho and Garcia-Molina).  Lagrange:
                  ``w_i dF/df = w_i (1 - (1 + r) e^{-r}) / lam_i = mu`` for every page with
                  ``f_i > 0``; since ``dF/df`` rises to ``1/lam`` as ``f -> 0``, pages with
                  ``w_i / lam_i <= mu`` (changing too fast for the budget) get ``f_i = 0``.
                  For the others ``(1 + r) e^{-r} = 1 - mu lam / w``, solved in closed form
                  ``r = -1 - W_{-1}(-(1 - mu lam / w) / e)`` (Lambert W) and polished by
                  Newton; ``mu`` by a bracketed root find on ``sum f(mu) = budget``.
``optimal_age``   minimise ``sum w_i A(lam_i, f_i)``.  ``-dA/df = (r^2/2 - 1 + (1 + r)
                  e^{-r}) / lam^2 = mu / w`` for every page (the left side grows from 0 to
                  infinity with ``r``, so every changing page gets ``f > 0``; static pages
                  get 0), solved per page by vectorised Newton.

:class:`RevisitPlanner` keeps per-page visit histories and turns them into an
allocation and a due list for the revisit loop; it has no networking.

References
----------
.. [1] J. Cho and H. Garcia-Molina, "Synchronizing a database to improve freshness",
   SIGMOD 2000 (policies, the "uniform beats proportional" result, the example with
   rates 1..5).
.. [2] J. Cho and H. Garcia-Molina, "Effective page refresh policies for web
   crawlers", ACM TODS 28(4), 2003 (freshness and age metrics).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import optimize, special
from webcrawl.analysis.change.estimators import VisitHistory, map_rate, solve_monotone
from webcrawl.analysis.change.freshness import age_integral
from webcrawl.storage.arrays import FloatArray
from webcrawl.storage.errors import AnalysisError, ConfigError

__all__ = [
    "POLICIES",
    "PlannerSettings",
    "Policy",
    "RevisitPlanner",
    "allocate",
    "mean_age",
    "mean_freshness",
    "optimal_age_allocation",
    "optimal_freshness_allocation",
    "proportional_allocation",
    "uniform_allocation",
]

Policy = Literal["uniform", "proportional", "optimal", "optimal_age"]
POLICIES: tuple[str, ...] = get_args(Policy)

_SERIES_BELOW = 0.05


# --- per-page formulas -------------------------------------------------------------------

def mean_freshness(rate: ArrayLike, freq: ArrayLike) -> FloatArray:
    """Time-averaged freshness of Poisson pages refreshed at fixed intervals.

    ``(1 - e^{-r}) / r`` with ``r = lam / f``; 1 for ``lam = 0``, 0 for ``f = 0 < lam``.

    Examples
    --------
    >>> round(float(mean_freshness(1.0, 1.0)), 4)   # 1 - 1/e
    0.6321
    """
    lam = np.asarray(rate, dtype=np.float64)
    f = np.asarray(freq, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = lam / f
        val = -np.expm1(-r) / r
    return np.where(lam == 0, 1.0, np.where(f == 0, 0.0, val))


def mean_age(rate: ArrayLike, freq: ArrayLike) -> FloatArray:
    """Time-averaged age of Poisson pages refreshed at fixed intervals.

    ``(1/f) (1/2 - 1/r + (1 - e^{-r}) / r^2)`` with ``r = lam / f`` (see the module
    docstring); 0 for ``lam = 0``, ``inf`` for ``f = 0 < lam``.

    Examples
    --------
    >>> round(float(mean_age(1.0, 1.0)), 4)   # 1/2 - 1 + (1 - 1/e)
    0.1321
    """
    lam = np.asarray(rate, dtype=np.float64)
    f = np.asarray(freq, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        interval = 1.0 / f
        val = age_integral(lam, np.where(f > 0, interval, 0.0)) * f
    return np.where(lam == 0, 0.0, np.where(f == 0, np.inf, val))


# --- allocations -----------------------------------------------------------------------------

def _check(rate: ArrayLike, budget: float, weights: ArrayLike | None) -> tuple[FloatArray,
                                                                              FloatArray]:
    lam = np.asarray(rate, dtype=np.float64)
    if lam.ndim != 1 or lam.size == 0:
        raise ConfigError("rates must be a non-empty 1-d array")
    if np.any(~np.isfinite(lam)) or np.any(lam < 0):
        raise ConfigError("rates must be finite and non-negative")
    if not budget > 0:
        raise ConfigError(f"budget must be positive, got {budget}")
    w = np.ones_like(lam) if weights is None else np.asarray(weights, dtype=np.float64)
    if w.shape != lam.shape or np.any(~(w > 0)):
        raise ConfigError("weights must be positive, one per page")
    return lam, w


def uniform_allocation(rate: ArrayLike, budget: float) -> FloatArray:
    """Every page refreshed at ``budget / N``."""
    lam, _ = _check(rate, budget, None)
    return np.full(lam.size, budget / lam.size)


def proportional_allocation(rate: ArrayLike, budget: float) -> FloatArray:
    """``f_i = budget * lam_i / sum lam`` (uniform if no page changes)."""
    lam, _ = _check(rate, budget, None)
    total = lam.sum()
    return budget * lam / total if total > 0 else np.full(lam.size, budget / lam.size)


def _h(r: FloatArray) -> FloatArray:
    """``1 - (1 + r) e^{-r}`` (= lam dF/df), with its series for small ``r``."""
    series = r * r / 2 - r**3 / 3 + r**4 / 8 - r**5 / 30 + r**6 / 144
    return np.where(r < _SERIES_BELOW, series, -np.expm1(-r) - r * np.exp(-r))


def _g(r: FloatArray) -> FloatArray:
    """``r^2/2 - 1 + (1 + r) e^{-r}`` (= -lam^2 dA/df), with its series for small ``r``."""
    series = r**3 / 3 - r**4 / 8 + r**5 / 30 - r**6 / 144 + r**7 / 840 - r**8 / 5760
    return np.where(r < _SERIES_BELOW, series, r * r / 2 - _h(r))


def _freshness_freq(lam: FloatArray, w: FloatArray, mu: float) -> FloatArray:
    """Frequencies satisfying ``w (1 - (1 + r) e^{-r}) / lam = mu`` (0 where impossible)."""
    y = mu * lam / w
    on = (lam > 0) & (y < 1)
    f = np.zeros_like(lam)
    if not on.any():
        return f
    yo = y[on]
    r = -1.0 - special.lambertw(-(1.0 - yo) / np.e, -1).real
    # At y below ~1e-16 the argument rounds onto the branch point, where lambertw gives
    # nan (a budget far above the rates); h(r) ~ r^2/2 there, so start from sqrt(2 y).
    r = np.where(np.isfinite(r), r, np.sqrt(2 * yo))
    r = np.maximum(r, np.sqrt(2 * yo) * 0.5)
    for _ in range(3):  # Newton polish near the branch point, where W loses digits
        r = np.maximum(r - (_h(r) - yo) / (r * np.exp(-r)), 1e-300)
    f[on] = lam[on] / r
    return f


def _age_freq(lam: FloatArray, w: FloatArray, mu: float) -> FloatArray:
    """Frequencies satisfying ``w (r^2/2 - 1 + (1 + r) e^{-r}) / lam^2 = mu``."""
    on = lam > 0
    f = np.zeros_like(lam)
    if not on.any():
        return f
    y = mu * lam[on] ** 2 / w[on]
    # g(r) <= min(r^3/3, r^2/2) and g(r) >= r^2/2 - 1 bracket the root.
    lo = 0.999 * np.maximum(np.cbrt(3 * y), np.sqrt(2 * y))
    hi = np.sqrt(2 * (y + 1)) * 1.001

    def fun(r: FloatArray, active: NDArray[np.bool_]) -> tuple[FloatArray, FloatArray]:
        del active
        return _g(r) - y, r * -np.expm1(-r)

    r = solve_monotone(fun, lo, hi, increasing=True)
    f[on] = lam[on] / r
    return f


def _lagrange(freq_of: Callable[[float], FloatArray], budget: float, mu_hi: float,
              floor: float = 0.0) -> FloatArray:
    """Find ``mu`` with ``sum max(floor, freq_of(mu)) = budget`` (decreasing in ``mu``).

    With a floor this is still the optimum (KKT for a concave separable objective
    under ``f_i >= floor``: each page at ``max(floor, its unconstrained f(mu))``);
    the caller guarantees ``floor * N < budget``.
    """
    def freqs(log_mu: float) -> FloatArray:
        return np.maximum(freq_of(float(np.exp(log_mu))), floor)

    def excess(log_mu: float) -> float:
        return float(freqs(log_mu).sum()) - budget

    hi = np.log(mu_hi)
    while excess(hi) > 0:
        hi += 10.0
        if hi > 700:
            raise AnalysisError("cannot bracket the budget multiplier")
    lo = hi - 10.0
    while excess(lo) < 0:
        lo -= 10.0
        if lo < -700:
            raise AnalysisError("cannot spend the budget: no page changes")
    log_mu = optimize.brentq(excess, lo, hi, xtol=1e-14, rtol=1e-14)
    f = freqs(log_mu)
    # Spend the budget exactly (brentq leaves a relative error ~1e-14), floors untouched.
    above = f > floor
    if above.any():
        f[above] *= (budget - floor * float((~above).sum())) / f[above].sum()
    return np.asarray(f, dtype=np.float64)


def optimal_freshness_allocation(
    rate: ArrayLike, budget: float, weights: ArrayLike | None = None
) -> FloatArray:
    """Frequencies maximising ``sum w_i F(lam_i, f_i)`` subject to ``sum f_i = budget``.

    Parameters
    ----------
    rate : array_like
        Change rates ``lam_i >= 0``.
    budget : float
        Total refreshes per time unit.
    weights : array_like, optional
        Page importance ``w_i > 0`` (default 1).

    Returns
    -------
    ndarray
        ``f_i``; zero for static pages and for pages with ``w_i / lam_i <= mu``.

    Notes
    -----
    See the module docstring for the Lagrange condition and its closed-form solution.
    ``mu`` is found by Brent's method on ``log mu`` in ``(0, max w/lam)``; each
    evaluation is one vectorised pass.

    References
    ----------
    .. [1] Cho and Garcia-Molina, SIGMOD 2000, section 5 (example: rates 1..5,
       5 refreshes in all -> f = 1.15, 1.36, 1.35, 1.14, 0).

    Examples
    --------
    >>> f = optimal_freshness_allocation([1, 2, 3, 4, 5], 5.0)
    >>> [round(float(v), 2) for v in f]
    [1.15, 1.36, 1.35, 1.14, 0.0]
    """
    lam, w = _check(rate, budget, weights)
    if not np.any(lam > 0):
        return np.full(lam.size, budget / lam.size)
    mu_hi = float(np.max(w[lam > 0] / lam[lam > 0]))
    return _lagrange(lambda mu: _freshness_freq(lam, w, mu), budget, mu_hi)


def optimal_age_allocation(
    rate: ArrayLike, budget: float, weights: ArrayLike | None = None
) -> FloatArray:
    """Frequencies minimising ``sum w_i A(lam_i, f_i)`` subject to ``sum f_i = budget``.

    Every changing page gets ``f > 0`` (age grows without bound unrefreshed); for slow
    pages ``f ~ (w lam / (3 mu))^{1/3}``, for fast ones ``f ~ sqrt(w / (2 mu))``.

    References
    ----------
    .. [1] Cho and Garcia-Molina, TODS 2003, section 4 (age metric).

    Examples
    --------
    >>> f = optimal_age_allocation([1, 2, 3, 4, 5], 5.0)
    >>> bool(np.all(np.diff(f) > 0)), round(float(f.sum()), 6)
    (True, 5.0)
    """
    lam, w = _check(rate, budget, weights)
    if not np.any(lam > 0):
        return np.full(lam.size, budget / lam.size)
    # At mu_hi even the page needing it most has r >= 1: a safe upper bracket.
    mu_hi = float(np.max(w[lam > 0] / lam[lam > 0] ** 2)) * 1e3 * (1 + budget) ** 2
    return _lagrange(lambda mu: _age_freq(lam, w, mu), budget, mu_hi)


def allocate(
    policy: str, rate: ArrayLike, budget: float, weights: ArrayLike | None = None,
    min_frequency: float = 0.0,
) -> FloatArray:
    """Refresh frequencies for ``policy`` in :data:`POLICIES` (weights: optimal ones).

    With ``min_frequency > 0`` every page gets at least that frequency and the total
    is still ``budget``: each policy's frequencies become ``max(floor, f_i(mu))`` with
    the multiplier (or the proportional scale) re-solved so they sum to the budget,
    which is the constrained optimum for the optimal policies.  When ``N`` pages
    cannot all have the floor (``N * min_frequency >= budget``) every page gets
    ``budget / N``: the plan never exceeds the budget.

    Examples
    --------
    >>> f = allocate("optimal", [1, 2, 3, 4, 5], 5.0, min_frequency=0.5)
    >>> round(float(f.sum()), 9), round(float(f.min()), 9)
    (5.0, 0.5)
    """
    if not min_frequency >= 0:
        raise ConfigError(f"min_frequency must be >= 0, got {min_frequency}")
    if min_frequency == 0:
        return _allocate(policy, rate, budget, weights)
    lam, w = _check(rate, budget, weights)
    if policy not in POLICIES:
        raise ConfigError(f"unknown policy {policy!r}; choose from {', '.join(POLICIES)}")
    if min_frequency * lam.size >= budget or policy == "uniform" or not np.any(lam > 0):
        return np.full(lam.size, budget / lam.size)
    if policy == "proportional":
        return _lagrange(lambda mu: lam / mu, budget, float(lam.sum() / budget),
                         min_frequency)
    if policy == "optimal":
        return _lagrange(lambda mu: _freshness_freq(lam, w, mu), budget,
                         float(np.max(w[lam > 0] / lam[lam > 0])), min_frequency)
    mu_hi = float(np.max(w[lam > 0] / lam[lam > 0] ** 2)) * 1e3 * (1 + budget) ** 2
    return _lagrange(lambda mu: _age_freq(lam, w, mu), budget, mu_hi, min_frequency)


def _allocate(
    policy: str, rate: ArrayLike, budget: float, weights: ArrayLike | None = None
) -> FloatArray:
    if policy == "uniform":
        return uniform_allocation(rate, budget)
    if policy == "proportional":
        return proportional_allocation(rate, budget)
    if policy == "optimal":
        return optimal_freshness_allocation(rate, budget, weights)
    if policy == "optimal_age":
        return optimal_age_allocation(rate, budget, weights)
    raise ConfigError(f"unknown policy {policy!r}; choose from {', '.join(POLICIES)}")


# --- the planner the revisit loop drives -------------------------------------------------

@dataclass(frozen=True)
class PlannerSettings:
    """Settings of a :class:`RevisitPlanner` (times in days, rates per day).

    Attributes
    ----------
    policy : str
        One of :data:`POLICIES` (default ``"optimal"``).
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
    budget_per_day: float = 1000.0
    prior_changes: float = 1.0
    prior_days: float = 7.0
    recompute_every: int = 1000
    min_frequency: float = 0.0

    def __post_init__(self) -> None:
        if self.policy not in POLICIES:
            raise ConfigError(f"unknown policy {self.policy!r}; choose from {', '.join(POLICIES)}")
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
