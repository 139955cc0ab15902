"""What a refresh schedule is worth: freshness, age and harmonic staleness per page.

A page changes as a Poisson process with rate ``lam`` and is refreshed at fixed
intervals ``1/f``.  With ``r = lam / f``, over one interval:

* **binary freshness** (Cho and Garcia-Molina [1]_): the copy is fresh until the first
  change; mean ``F = (1 - e^{-r}) / r``.
* **age** (Cho and Garcia-Molina [2]_): time since the first missed change; mean
  ``A = (1/f) (1/2 - 1/r + (1 - e^{-r}) / r^2)``.
* **harmonic staleness** (Kolobov, Peres, Lu and Horvitz [3]_): a copy that has missed
  ``n`` changes costs the harmonic number ``H(n) = 1 + 1/2 + ... + 1/n`` (each further
  missed change matters less); their *harmonic freshness* is ``-H``.  ``u`` after a
  refresh the missed changes are Poisson with mean ``lam u``, and ``E[H(N)] =
  Ein(lam u)`` with ``Ein(x) = int_0^x (1 - e^{-s})/s ds`` (from ``H(n) = int_0^1 (1 -
  x^n)/(1 - x) dx``); averaged over the interval, mean ``S = Ein(r) - 1 + (1 -
  e^{-r})/r`` (about ``r/2`` for small ``r``, ``ln r + 0.577 - 1`` for large).

Kolobov et al. derive the harmonic objective for refreshes at Poisson times of rate
``rho``, where the missed changes at a random instant are geometric and ``E[H] = ln(1
+ lam/rho)``; the revisit loop refreshes at fixed intervals, for which the formula above
is the same penalty's exact mean (fixed intervals give a lower penalty than Poisson
ones at every rate, by convexity).

Each objective is a concave utility ``U(f)`` of the frequency (``F``, ``-A``, ``-S``),
and an optimal allocation equalises the weighted marginal utility ``w U'(f)`` with a
Lagrange multiplier ``m``.  With ``y`` the scaled multiplier, the condition is
``phi(r) = y`` for an increasing ``phi``:

============  =====================================  ====================  ==========
objective     ``phi(r)``                             ``y``                 ``f -> 0``
============  =====================================  ====================  ==========
freshness     ``1 - (1 + r) e^{-r}``                 ``m lam / w``         ``phi -> 1``
age           ``r^2/2 - 1 + (1 + r) e^{-r}``         ``m lam^2 / w``       ``phi -> inf``
harmonic      ``r - 1 + e^{-r}``                     ``m lam / w``         ``phi -> inf``
============  =====================================  ====================  ==========

so :func:`frequency_at` gives ``f = lam / r`` for every page at once (Lambert W with a
Newton polish for freshness, a safeguarded vectorised Newton for the others).  A page
with ``phi`` bounded (freshness) is given up on (``f = 0``) when ``y >= 1``; age and
harmonic staleness grow without bound unrefreshed, so every changing page gets some
``f > 0``.  Static pages (``lam = 0``) are always fresh and get ``f = 0``.

References
----------
.. [1] J. Cho and H. Garcia-Molina, "Synchronizing a database to improve freshness",
   SIGMOD 2000.
.. [2] J. Cho and H. Garcia-Molina, "Effective page refresh policies for web
   crawlers", ACM TODS 28(4), 2003.
.. [3] A. Kolobov, Y. Peres, C. Lu and E. Horvitz, "Staying up to date with online
   content changes using reinforcement learning for scheduling", NeurIPS 2019.
"""

from __future__ import annotations

import math
from typing import Literal, get_args

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special
from webcrawl.analysis.change.freshness import age_integral
from webcrawl.analysis.change.monotone import solve_monotone
from webcrawl.storage.arrays import FloatArray
from webcrawl.storage.errors import ConfigError

__all__ = [
    "OBJECTIVES",
    "Objective",
    "check_objective",
    "frequency_at",
    "frequency_slope",
    "mean_age",
    "mean_freshness",
    "mean_harmonic_staleness",
    "multiplier_for",
    "page_utility",
]

Objective = Literal["freshness", "age", "harmonic"]
OBJECTIVES: tuple[str, ...] = get_args(Objective)

# Below this r the closed forms lose digits to cancellation: their series are used.
_SERIES_BELOW = 0.05
_HARMONIC_SERIES_BELOW = 0.1


def check_objective(objective: str) -> Objective:
    """``objective`` if it is one of :data:`OBJECTIVES`, else a ConfigError."""
    if objective not in OBJECTIVES:
        raise ConfigError(f"unknown objective {objective!r}; choose from "
                          f"{', '.join(OBJECTIVES)}")
    return objective  # type: ignore[return-value]


# --- per-page means -------------------------------------------------------------------------

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

    ``(1/f) (1/2 - 1/r + (1 - e^{-r}) / r^2)`` with ``r = lam / f`` (the expected age
    ``u - (1 - e^{-lam u})/lam`` at ``u`` after a refresh, averaged over the interval);
    0 for ``lam = 0``, ``inf`` for ``f = 0 < lam``.

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


def _harmonic_mean_of_r(r: FloatArray) -> FloatArray:
    """``Ein(r) - 1 + (1 - e^{-r})/r``, by its series ``sum (-1)^{k+1} r^k / (k (k+1)!)``
    for small ``r``."""
    small = r < _HARMONIC_SERIES_BELOW
    series = sum(((-1.0) ** (k + 1) / (k * math.factorial(k + 1))) * r**k for k in range(1, 9))
    rl = np.where(small, 1.0, r)
    closed = special.exp1(rl) + np.log(rl) + np.euler_gamma - 1.0 - np.expm1(-rl) / rl
    return np.asarray(np.where(small, series, closed), dtype=np.float64)


def mean_harmonic_staleness(rate: ArrayLike, freq: ArrayLike) -> FloatArray:
    """Time-averaged harmonic staleness ``E[H(N)]`` of Poisson pages refreshed at fixed
    intervals (``N``: changes the copy has missed; see the module docstring).

    ``Ein(r) - 1 + (1 - e^{-r})/r`` with ``r = lam / f``; 0 for ``lam = 0``, ``inf`` for
    ``f = 0 < lam``.  Kolobov et al.'s harmonic freshness is its negative.

    Examples
    --------
    >>> round(float(mean_harmonic_staleness(1.0, 1.0)), 4)   # Ein(1) - 1/e
    0.4287
    >>> round(float(mean_harmonic_staleness(1e-4, 1.0)), 8)   # ~ r/2 for small r
    5e-05
    """
    lam = np.asarray(rate, dtype=np.float64)
    f = np.asarray(freq, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where((lam > 0) & (f > 0), lam / np.where(f > 0, f, 1.0), 1.0)
    val = _harmonic_mean_of_r(r)
    return np.where(lam == 0, 0.0, np.where(f == 0, np.inf, val))


def page_utility(objective: str, rate: ArrayLike, freq: ArrayLike) -> FloatArray:
    """The concave utility an allocation maximises, per page: ``F``, ``-A`` or ``-S``."""
    obj = check_objective(objective)
    if obj == "freshness":
        return mean_freshness(rate, freq)
    if obj == "age":
        return -mean_age(rate, freq)
    return -mean_harmonic_staleness(rate, freq)


# --- the marginal condition ------------------------------------------------------------------

def _h(r: FloatArray) -> FloatArray:
    """``1 - (1 + r) e^{-r}`` (freshness's ``phi``), with its series for small ``r``."""
    series = r * r / 2 - r**3 / 3 + r**4 / 8 - r**5 / 30 + r**6 / 144
    return np.where(r < _SERIES_BELOW, series, -np.expm1(-r) - r * np.exp(-r))


def _g(r: FloatArray) -> FloatArray:
    """``r^2/2 - 1 + (1 + r) e^{-r}`` (age's ``phi``), with its series for small ``r``."""
    series = r**3 / 3 - r**4 / 8 + r**5 / 30 - r**6 / 144 + r**7 / 840 - r**8 / 5760
    return np.where(r < _SERIES_BELOW, series, r * r / 2 - _h(r))


def _k(r: FloatArray) -> FloatArray:
    """``r - 1 + e^{-r}`` (harmonic staleness's ``phi``), with its series for small ``r``."""
    series = r * r / 2 - r**3 / 6 + r**4 / 24 - r**5 / 120 + r**6 / 720
    return np.where(r < _SERIES_BELOW, series, r + np.expm1(-r))


def _phi(obj: Objective, r: FloatArray) -> FloatArray:
    return _h(r) if obj == "freshness" else _g(r) if obj == "age" else _k(r)


def _dphi(obj: Objective, r: FloatArray) -> FloatArray:
    if obj == "freshness":
        return np.asarray(r * np.exp(-r))
    one_minus = -np.expm1(-r)
    return np.asarray(r * one_minus if obj == "age" else one_minus)


def _scale(obj: Objective, lam: FloatArray, w: FloatArray) -> FloatArray:
    """``y / m``: ``lam / w`` (freshness, harmonic) or ``lam^2 / w`` (age)."""
    return np.asarray(lam * lam / w if obj == "age" else lam / w)


def _solve_r(obj: Objective, y: FloatArray) -> FloatArray:
    """``r`` with ``phi(r) = y`` element-wise (``y > 0``; ``y < 1`` for freshness)."""
    if y.size == 0:
        return y.copy()
    if obj == "freshness":
        r = -1.0 - special.lambertw(-(1.0 - y) / np.e, -1).real
        # Near the branch point (a budget far above the rates) W loses digits and, below
        # y ~ 1e-16, gives nan; h(r) = r^2/2 (1 - 2r/3 + ...) there, so sqrt(2 y) is a
        # start within O(r) of the root.
        r = np.where(np.isfinite(r) & (y > 1e-6), r, np.sqrt(2 * y))
        for _ in range(4):  # Newton polish
            r = np.maximum(r - (_h(r) - y) / (r * np.exp(-r)), 1e-300)
        return np.asarray(r, dtype=np.float64)
    if obj == "age":
        # g(r) <= min(r^3/3, r^2/2) and g(r) >= r^2/2 - 1 bracket the root.
        lo = 0.999 * np.maximum(np.cbrt(3 * y), np.sqrt(2 * y))
        hi = np.sqrt(2 * (y + 1)) * 1.001
    else:
        # k(r) <= min(r, r^2/2); k(r) >= r - 1, and k(r) >= r^2/3 for r <= 1.
        lo = 0.999 * np.maximum(np.sqrt(2 * y), y)
        hi = 1.001 * np.where(3 * y <= 1, np.sqrt(3 * y), y + 1.0)

    def fun(r: FloatArray, active: NDArray[np.bool_]) -> tuple[FloatArray, FloatArray]:
        del active
        return _phi(obj, r) - y, _dphi(obj, r)

    return solve_monotone(fun, lo, hi, increasing=True)


def frequency_at(objective: str, rate: ArrayLike, weights: ArrayLike,
                 multiplier: ArrayLike) -> FloatArray:
    """Frequencies at which each page's weighted marginal utility equals ``multiplier``.

    Parameters
    ----------
    objective : {"freshness", "age", "harmonic"}
    rate, weights : array_like
        ``lam_i >= 0`` and ``w_i > 0``.
    multiplier : array_like
        ``m > 0``, scalar or one per page (a host's multiplier for its pages).

    Returns
    -------
    ndarray
        ``f_i = lam_i / r_i`` with ``phi(r_i) = m lam_i^p / w_i`` (module docstring); 0
        for static pages and, for freshness, for pages with ``m lam / w >= 1``.
        Decreasing in ``m``.

    Examples
    --------
    >>> f = frequency_at("harmonic", [1.0, 4.0], [1.0, 1.0], 0.1)
    >>> bool(f[1] > f[0] > 0)
    True
    """
    obj = check_objective(objective)
    lam = np.asarray(rate, dtype=np.float64)
    w = np.broadcast_to(np.asarray(weights, dtype=np.float64), lam.shape)
    m = np.broadcast_to(np.asarray(multiplier, dtype=np.float64), lam.shape)
    y = m * _scale(obj, lam, w)
    on = (lam > 0) & (y > 0)
    if obj == "freshness":
        on &= y < 1
    f = np.zeros(lam.shape)
    f[on] = lam[on] / _solve_r(obj, y[on])
    return f


def frequency_slope(objective: str, rate: ArrayLike, weights: ArrayLike,
                    freq: ArrayLike, multiplier: ArrayLike) -> FloatArray:
    """``df/dm`` of :func:`frequency_at` at its result ``freq`` (0 where ``f = 0``).

    From ``phi(lam / f) = m s`` (``s`` the scale): ``df/dm = -s f^2 / (lam phi'(r))``.
    """
    obj = check_objective(objective)
    lam = np.asarray(rate, dtype=np.float64)
    w = np.broadcast_to(np.asarray(weights, dtype=np.float64), lam.shape)
    f = np.asarray(freq, dtype=np.float64)
    del multiplier  # the slope follows from f alone
    on = (f > 0) & (lam > 0)
    out = np.zeros(lam.shape)
    r = lam[on] / f[on]
    den = lam[on] * _dphi(obj, r)
    # phi' underflows to 0 only far beyond the last page worth refreshing (r > ~700),
    # where the frequency is a floor and does not move with m.
    out[on] = np.where(den > 0, -_scale(obj, lam[on], w[on]) * f[on] ** 2
                       / np.where(den > 0, den, 1.0), 0.0)
    return out


def multiplier_for(objective: str, rate: ArrayLike, weights: ArrayLike,
                   freq: ArrayLike) -> FloatArray:
    """The multiplier at which :func:`frequency_at` gives each page the frequency ``freq``
    (``w U'(f)``, the page's weighted marginal utility); ``nan`` for static pages."""
    obj = check_objective(objective)
    lam = np.asarray(rate, dtype=np.float64)
    w = np.broadcast_to(np.asarray(weights, dtype=np.float64), lam.shape)
    f = np.broadcast_to(np.asarray(freq, dtype=np.float64), lam.shape)
    out = np.full(lam.shape, np.nan)
    on = (lam > 0) & (f > 0)
    out[on] = _phi(obj, lam[on] / f[on]) / _scale(obj, lam[on], w[on])
    return out
