"""Revisit allocations: how often to refresh each page, under a budget and per-host limits.

A policy turns change rates ``lam_i`` into refresh frequencies ``f_i >= 0`` (per time
unit) that spend at most ``budget`` in all (:func:`allocate`):

``uniform``         every page the same ``f``.
``proportional``    ``f_i`` proportional to ``lam_i``.
``optimal``         maximise ``sum w_i U(lam_i, f_i)`` under the budget alone (Cho and
                    Garcia-Molina [1]_ for binary freshness, [2]_ for age), ``U`` one of
                    the objectives of :mod:`webcrawl.analysis.change.objectives`.  A crawler
                    that plans this way and is then held to each host's politeness limit
                    at fetch time gets :func:`throttle` of it: a host asked for more than
                    it allows is served at its limit, and the budget its pages were given
                    beyond it is not spent elsewhere.
``polite_optimal``  the same objective under the budget **and** every host's limit
                    ``sum_{i in h} f_i <= R_h`` (:func:`polite_allocation`): the problem of
                    Kolobov, Peres, Lubetzky and Horvitz [3]_.

The politeness-aware optimum (KKT of a concave separable objective under linear
constraints): a global multiplier ``mu >= 0`` for the budget and one ``nu_h >= 0`` per
host, with ``w_i U'(f_i) = mu + nu_h`` for every page refreshed.  A host is either below
its limit (``nu_h = 0``: its pages are allocated at the global ``mu``) or at it, when
its pages are allocated at the multiplier ``m_h`` that spends exactly ``R_h`` on them,
which does not depend on ``mu``.  So each page is allocated at ``max(mu, m_h)``: the
host multipliers are found first, for all hosts at once (one vectorised safeguarded
Newton iteration over hosts, each evaluation a pass over the pages and a ``bincount``
by host), then ``mu`` by a scalar root find on the total.  Water-filling, per host:
a host's limit caps its level, and the budget fills every host up to the common level
``mu``.

References
----------
.. [1] J. Cho and H. Garcia-Molina, "Synchronizing a database to improve freshness",
   SIGMOD 2000 (the policies, the "uniform beats proportional" result, the example
   with rates 1..5).
.. [2] J. Cho and H. Garcia-Molina, "Effective page refresh policies for web
   crawlers", ACM TODS 28(4), 2003 (age).
.. [3] A. Kolobov, Y. Peres, E. Lubetzky and E. Horvitz, "Optimal freshness crawl
   under politeness constraints", SIGIR 2019 (per-host rate limits and page
   importance inside the optimisation).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import optimize
from webcrawl.analysis.change.monotone import solve_monotone
from webcrawl.analysis.change.objectives import (
    check_objective,
    frequency_at,
    frequency_slope,
    multiplier_for,
)
from webcrawl.storage.arrays import BoolArray, FloatArray, IntArray
from webcrawl.storage.errors import AnalysisError, ConfigError

__all__ = [
    "POLICIES",
    "Allocation",
    "Policy",
    "allocate",
    "optimal_age_allocation",
    "optimal_freshness_allocation",
    "polite_allocation",
    "proportional_allocation",
    "throttle",
    "uniform_allocation",
]

Policy = Literal["uniform", "proportional", "optimal", "optimal_age", "polite_optimal"]
POLICIES: tuple[str, ...] = get_args(Policy)

# The outer multiplier's lower bracket is pushed down by this factor until the total
# exceeds the budget; 100 steps reach 1e-300 from any start.
_BRACKET_STEP = 1e3
_BRACKET_TRIES = 100


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
    if w.shape != lam.shape or np.any(~(w > 0)) or np.any(~np.isfinite(w)):
        raise ConfigError("weights must be positive and finite, one per page")
    return lam, w


def _check_hosts(n: int, host: ArrayLike | None,
                 host_limit: ArrayLike | None) -> tuple[IntArray, FloatArray]:
    """Host index per page and limit per host (one unlimited host when not given)."""
    if host is None:
        if host_limit is not None:
            raise ConfigError("host limits need the host of every page")
        return np.zeros(n, dtype=np.int64), np.full(1, np.inf)
    h = np.asarray(host)
    if h.shape != (n,) or (h.size and (not np.issubdtype(h.dtype, np.integer) or h.min() < 0)):
        raise ConfigError("host must give a host index >= 0 for every page")
    h = h.astype(np.int64)
    n_hosts = int(h.max()) + 1 if h.size else 0
    if host_limit is None:
        return h, np.full(n_hosts, np.inf)
    limit = np.asarray(host_limit, dtype=np.float64)
    if limit.ndim != 1 or limit.size < n_hosts or np.any(np.isnan(limit)) or np.any(limit <= 0):
        raise ConfigError("host_limit must give a positive limit (inf: none) for every host")
    return h, limit


def uniform_allocation(rate: ArrayLike, budget: float) -> FloatArray:
    """Every page refreshed at ``budget / N``."""
    lam, _ = _check(rate, budget, None)
    return np.full(lam.size, budget / lam.size)


def proportional_allocation(rate: ArrayLike, budget: float) -> FloatArray:
    """``f_i = budget * lam_i / sum lam`` (uniform if no page changes)."""
    lam, _ = _check(rate, budget, None)
    total = lam.sum()
    return budget * lam / total if total > 0 else np.full(lam.size, budget / lam.size)


def throttle(freq: ArrayLike, host: ArrayLike, host_limit: ArrayLike) -> FloatArray:
    """What a plan gets when each host is held to its limit at fetch time.

    Every page of a host asked for ``D_h > R_h`` refreshes per time unit is served
    ``R_h / D_h`` as often; the fetches the plan gave those pages beyond the limit are
    lost (a due-time scheduler has no other page due to spend them on).

    Examples
    --------
    >>> throttle([2.0, 2.0, 1.0], [0, 0, 1], [1.0, 5.0]).tolist()
    [0.5, 0.5, 1.0]
    """
    f = np.asarray(freq, dtype=np.float64)
    h, limit = _check_hosts(f.size, host, host_limit)
    demand = np.bincount(h, weights=f, minlength=limit.size)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(demand > limit, limit / demand, 1.0)
    return np.asarray(f * scale[h], dtype=np.float64)


@dataclass(frozen=True, eq=False)
class Allocation:
    """An optimal allocation with its multipliers (see the module docstring).

    Attributes
    ----------
    freq : ndarray
        Refresh frequency of each page.
    multiplier : float
        ``mu``, the budget's multiplier (0 when the hosts' limits leave budget unspent).
    host_multiplier : ndarray
        ``max(mu, m_h)``: the weighted marginal utility every page of host ``h``
        refreshed above the floor is allocated at.
    binding : ndarray of bool
        Hosts held at their limit (``m_h > mu``).
    """

    freq: FloatArray
    multiplier: float
    host_multiplier: FloatArray
    binding: BoolArray

    @property
    def budget_spent(self) -> float:
        return float(self.freq.sum())


def polite_allocation(
    rate: ArrayLike,
    budget: float,
    host: ArrayLike | None = None,
    host_limit: ArrayLike | None = None,
    *,
    objective: str = "freshness",
    weights: ArrayLike | None = None,
    min_frequency: float = 0.0,
) -> Allocation:
    """The allocation maximising ``sum w_i U(lam_i, f_i)`` under the budget and per-host
    limits.

    Parameters
    ----------
    rate : array_like
        Change rates ``lam_i >= 0``.
    budget : float
        Refreshes per time unit in all, at most.
    host : array_like of int, optional
        Host index of each page (default: all on one unlimited host: Cho's problem).
    host_limit : array_like, optional
        Refreshes per time unit each host allows (``inf``: no limit; default none).
    objective : {"freshness", "age", "harmonic"}
        What ``U`` is (:mod:`webcrawl.analysis.change.objectives`).
    weights : array_like, optional
        Page importance ``w_i > 0`` (default 1).
    min_frequency : float
        Floor on every page's frequency.  A host whose limit cannot give each of its
        ``n_h`` pages the floor gives each ``R_h / n_h``; when ``N`` floors exceed the
        budget each page gets at most ``budget / N``.

    Returns
    -------
    Allocation
        ``freq`` sums to ``min(budget, what the limits allow)``, each binding host's
        pages to its limit exactly.

    Notes
    -----
    Exact up to the root finders' relative tolerance (1e-12): KKT conditions of a
    concave problem are sufficient.  The host multipliers are bracketed, per host, by
    the marginal utilities of its pages at the even share ``R_h / n_h`` (at the largest
    every page gets at most the share, at the smallest at least), the global one by
    those at ``budget / N``.  Cost: ``O(N)`` per iteration, about 10 to 30 iterations
    for the hosts and as many for ``mu``.

    References
    ----------
    .. [1] Kolobov, Peres, Lubetzky and Horvitz, SIGIR 2019 (the problem).
    .. [2] Cho and Garcia-Molina, SIGMOD 2000, section 5 (the single-constraint case).

    Examples
    --------
    Two hosts; the first allows 1 refresh per day although its pages would get more:

    >>> a = polite_allocation([1, 2, 3, 1, 2, 3], 6.0, [0, 0, 0, 1, 1, 1], [1.0, 10.0])
    >>> round(float(a.freq[:3].sum()), 9), round(float(a.freq.sum()), 9)
    (1.0, 6.0)
    >>> a.binding.tolist()
    [True, False]
    """
    obj = check_objective(objective)
    lam, w = _check(rate, budget, weights)
    if not (np.isfinite(min_frequency) and min_frequency >= 0):
        raise ConfigError(f"min_frequency must be >= 0, got {min_frequency}")
    h, limit = _check_hosts(lam.size, host, host_limit)
    n_hosts = limit.size
    count = np.bincount(h, minlength=n_hosts).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(count > 0, limit / np.maximum(count, 1), np.inf)
    floor = np.minimum(np.minimum(min_frequency, budget / lam.size), share[h])
    changing = lam > 0
    host_changing = np.bincount(h, weights=changing, minlength=n_hosts) > 0
    # Hosts whose limit only covers the floors are fixed at their even share.
    saturated = np.isfinite(limit) & (count * np.minimum(min_frequency,
                                                         budget / lam.size) >= limit)
    limited = np.isfinite(limit) & ~saturated & host_changing

    def freqs(m_page: FloatArray) -> FloatArray:
        return np.maximum(floor, frequency_at(obj, lam, w, m_page))

    m_host = np.zeros(n_hosts)
    m_host[saturated] = np.inf
    if limited.any():
        m_host[limited] = _host_multipliers(obj, lam, w, h, limit, floor, limited, freqs)
    page_floor_only = m_host[h] == np.inf

    def total_at(mu: float) -> tuple[float, float]:
        level = np.maximum(mu, m_host[h])
        f = np.where(page_floor_only, floor, freqs(np.where(page_floor_only, 1.0, level)))
        above = (f > floor) & (level == mu) & ~page_floor_only
        slope = frequency_slope(obj, lam, w, f, level)
        return float(f.sum()), float(slope[above].sum())

    fixed_total = float(np.sum(np.where(np.isfinite(limit), limit, 0.0)[limited | saturated]))
    free = ~(limited | saturated) & host_changing
    cap_total = fixed_total + float(floor[~(limited | saturated)[h]].sum())
    if not free.any() and cap_total <= budget * (1 + 1e-12):
        mu = 0.0  # the limits bind before the budget does: every host at its limit
    else:
        mu = _global_multiplier(obj, lam, w, budget, changing, total_at)
    level = np.maximum(mu, m_host[h])
    f = np.where(page_floor_only, floor, freqs(np.where(page_floor_only, 1.0, level)))
    binding = m_host > mu
    f = _spend_exactly(f, floor, h, limit, binding & ~saturated, budget if mu > 0 else None)
    return Allocation(f, mu, np.maximum(mu, m_host), binding)


def _host_multipliers(obj: str, lam: FloatArray, w: FloatArray, h: IntArray,
                      limit: FloatArray, floor: FloatArray, limited: BoolArray,
                      freqs: Callable[[FloatArray], FloatArray]) -> FloatArray:
    """``m_h`` with ``sum_{i in h} max(floor_i, f_i(m_h)) = R_h`` for the ``limited``
    hosts, solved together."""
    n_hosts = limit.size
    # The even share of what the floors of static pages leave to the changing ones: at
    # a multiplier below every changing page's marginal utility there, the host spends
    # at least its limit; above every one, at most.
    on = (lam > 0) & limited[h]
    static_floor = np.bincount(h, weights=np.where(lam > 0, 0.0, floor), minlength=n_hosts)
    n_on = np.bincount(h[on], minlength=n_hosts)
    share = (limit - static_floor) / np.maximum(n_on, 1)
    at_share = multiplier_for(obj, lam[on], w[on], share[h][on])
    lo = np.full(n_hosts, np.inf)
    hi = np.zeros(n_hosts)
    np.minimum.at(lo, h[on], at_share)
    np.maximum.at(hi, h[on], at_share)
    slot = np.full(n_hosts, -1, dtype=np.int64)
    slot[limited] = np.arange(int(limited.sum()))
    page_slot = slot[h]
    in_solve = page_slot >= 0
    m_full = np.ones(n_hosts)

    def demand(m: FloatArray, active: NDArray[np.bool_]) -> tuple[FloatArray, FloatArray]:
        del active
        m_full[limited] = m
        level = m_full[h]
        f = freqs(level)
        slope = np.where(f > floor, frequency_slope(obj, lam, w, f, level), 0.0)
        k = int(limited.sum())
        total = np.bincount(page_slot[in_solve], weights=f[in_solve], minlength=k)
        deriv = np.bincount(page_slot[in_solve], weights=slope[in_solve], minlength=k)
        return np.asarray(total - limit[limited], dtype=np.float64), deriv.astype(np.float64)

    return solve_monotone(demand, 0.5 * lo[limited], 2.0 * hi[limited], increasing=False)


def _global_multiplier(obj: str, lam: FloatArray, w: FloatArray, budget: float,
                       changing: BoolArray,
                       total_at: Callable[[float], tuple[float, float]]) -> float:
    """``mu`` with ``total_at(mu) = budget`` (the total decreases in ``mu``)."""
    at_share = multiplier_for(obj, lam[changing], w[changing],
                              np.full(int(changing.sum()), budget / lam.size))
    hi = 2.0 * float(at_share.max())
    lo = 0.5 * float(at_share.min())
    for _ in range(_BRACKET_TRIES):
        if total_at(lo)[0] >= budget:
            break
        lo /= _BRACKET_STEP
    else:
        raise AnalysisError("cannot bracket the budget multiplier")

    def fun(mu: FloatArray, active: NDArray[np.bool_]) -> tuple[FloatArray, FloatArray]:
        del active
        total, slope = total_at(float(mu[0]))
        return np.array([total - budget]), np.array([slope])

    return float(solve_monotone(fun, np.array([lo]), np.array([hi]), increasing=False)[0])


def _spend_exactly(f: FloatArray, floor: FloatArray, h: IntArray, limit: FloatArray,
                   binding: BoolArray, budget: float | None) -> FloatArray:
    """Rescale the frequencies above their floors so that each binding host spends its
    limit and the others the rest of the budget exactly (the root finders leave a
    relative error ~1e-12)."""
    f = f.copy()
    above = f > floor
    n_hosts = limit.size
    held = binding[h]
    spent = np.bincount(h, weights=f, minlength=n_hosts)
    floors = np.bincount(h, weights=np.where(above, 0.0, f), minlength=n_hosts)
    var = spent - floors
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(binding & (var > 0), (limit - floors) / var, 1.0)
    f[above & held] *= scale[h][above & held]
    if budget is not None:
        rest = above & ~held
        target = budget - float(f[~rest].sum())
        have = float(f[rest].sum())
        if have > 0 and target > 0:
            f[rest] *= target / have
    return f


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
    :func:`polite_allocation` with no host limit: the Lagrange condition ``w_i (1 - (1 +
    r) e^{-r}) / lam_i = mu`` solved in closed form (Lambert W), ``mu`` by a safeguarded
    Newton iteration on the total.

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
    lam, _ = _check(rate, budget, weights)
    if not np.any(lam > 0):
        return np.full(lam.size, budget / lam.size)
    return polite_allocation(lam, budget, weights=weights).freq


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
    lam, _ = _check(rate, budget, weights)
    if not np.any(lam > 0):
        return np.full(lam.size, budget / lam.size)
    return polite_allocation(lam, budget, objective="age", weights=weights).freq


def _proportional_floor(lam: FloatArray, budget: float, floor: float) -> FloatArray:
    """``max(floor, lam / mu)`` summing to ``budget`` (``floor * N < budget``)."""
    def excess(log_mu: float) -> float:
        return float(np.maximum(lam / np.exp(log_mu), floor).sum()) - budget

    start = float(np.log(lam.sum() / budget))
    log_mu = optimize.brentq(excess, start - 1.0, start + 50.0, xtol=1e-14, rtol=1e-14)
    f = np.maximum(lam / np.exp(log_mu), floor)
    above = f > floor
    f[above] *= (budget - floor * float((~above).sum())) / f[above].sum()
    return np.asarray(f, dtype=np.float64)


def allocate(
    policy: str, rate: ArrayLike, budget: float, weights: ArrayLike | None = None,
    min_frequency: float = 0.0, *, objective: str | None = None,
    host: ArrayLike | None = None, host_limit: ArrayLike | None = None,
) -> FloatArray:
    """Refresh frequencies for ``policy`` in :data:`POLICIES`.

    ``objective`` (default freshness; ``optimal_age`` is ``optimal`` with ``age``) and
    ``weights`` apply to the optimal policies; ``host`` and ``host_limit`` to
    ``polite_optimal`` only (the others plan for the budget alone: see
    :func:`throttle` for what politeness then makes of their plans).

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
    if policy not in POLICIES:
        raise ConfigError(f"unknown policy {policy!r}; choose from {', '.join(POLICIES)}")
    if not min_frequency >= 0:
        raise ConfigError(f"min_frequency must be >= 0, got {min_frequency}")
    if policy == "optimal_age":
        if objective not in (None, "age"):
            raise ConfigError("optimal_age minimises age: give no other objective")
        objective = "age"
    obj = check_objective(objective or "freshness")
    lam, w = _check(rate, budget, weights)
    if policy == "polite_optimal":
        return polite_allocation(lam, budget, host, host_limit, objective=obj, weights=w,
                                 min_frequency=min_frequency).freq
    if policy == "uniform" or not np.any(lam > 0) or min_frequency * lam.size >= budget:
        return np.full(lam.size, budget / lam.size)
    if policy == "proportional":
        if min_frequency > 0:
            return _proportional_floor(lam, budget, min_frequency)
        return proportional_allocation(lam, budget)
    return polite_allocation(lam, budget, objective=obj, weights=w,
                             min_frequency=min_frequency).freq
