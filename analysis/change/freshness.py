"""Freshness and age of a local collection: exact against ground truth, or expected.

Definitions (Cho and Garcia-Molina): the local copy of a page is *fresh* at time ``t``
if the page has not changed since the copy was fetched, ``F(t) = 1``, else ``0``; its
*age* ``A(t)`` is ``0`` while fresh, else ``t`` minus the time of the first change
the copy missed.  Kolobov et al.'s *harmonic staleness* ``S(t)`` is the harmonic
number ``H(n) = 1 + 1/2 + ... + 1/n`` of the ``n`` changes the copy missed (their
harmonic freshness is ``-S``).  The collection's ``F(t)``, ``A(t)`` and ``S(t)`` are
the means over pages.

:func:`evaluate_freshness` integrates all three exactly (piecewise, no sampling) from
the true change times and the crawler's refresh times; :func:`expected_freshness`,
:func:`expected_age` and :func:`estimated_freshness` give their expectations under
estimated Poisson rates when no truth exists.

Conventions: times are on one clock (days in this package); a change at the same
instant as a refresh is captured by it; a page has no copy before its first refresh
in the window and counts as stale from the window's start (age ``t - start``; harmonic
staleness ``H(1 + n)`` with ``n`` the changes since ``start``).

References
----------
.. [1] J. Cho and H. Garcia-Molina, "Synchronizing a database to improve freshness",
   SIGMOD 2000.
.. [2] J. Cho and H. Garcia-Molina, "The evolution of the web and implications for an
   incremental crawler", VLDB 2000.
.. [3] A. Kolobov, Y. Peres, C. Lu and E. Horvitz, "Staying up to date with online
   content changes using reinforcement learning for scheduling", NeurIPS 2019.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike
from webcrawl.storage.arrays import FloatArray, IntArray
from webcrawl.storage.errors import ConfigError

__all__ = [
    "FreshnessResult",
    "age_integral",
    "estimated_freshness",
    "evaluate_freshness",
    "expected_age",
    "expected_freshness",
]


# Below this ``lam * u`` the closed form of the age integral loses digits: use its series.
_SERIES_BELOW = 1e-3


@dataclass(frozen=True, eq=False)
class FreshnessResult:
    """Freshness and age of a collection over a window ``[start, end]``.

    Attributes
    ----------
    page_freshness, page_age, page_harmonic : ndarray, one per page
        Time averages over the window (``page_harmonic``: harmonic staleness).
    freshness, age : float
        The collection's time averages (means of the above).
    times : ndarray
        Breakpoints of the collection's step functions (sorted, first = start).
    fresh_count : ndarray
        Number of fresh pages on ``[times[k], times[k+1])``.
    stale_count, stale_since : ndarray
        Number of stale pages, and the sum of their first-missed-change times, on each
        segment: the total age there is ``stale_count * t - stale_since``.
    """

    page_freshness: FloatArray
    page_age: FloatArray
    freshness: float
    age: float
    times: FloatArray
    fresh_count: FloatArray
    stale_count: FloatArray
    stale_since: FloatArray
    n_pages: int
    page_harmonic: FloatArray = field(default_factory=lambda: np.zeros(0))

    @property
    def harmonic(self) -> float:
        """The collection's time-averaged harmonic staleness (mean of ``page_harmonic``)."""
        return float(self.page_harmonic.mean()) if self.page_harmonic.size else 0.0

    def _segment(self, t: ArrayLike) -> IntArray:
        return np.clip(np.searchsorted(self.times, np.asarray(t, np.float64), side="right") - 1,
                       0, self.times.size - 1).astype(np.int64)

    def freshness_at(self, t: ArrayLike) -> FloatArray:
        """Collection freshness ``F(t)`` (fraction of fresh pages)."""
        return self.fresh_count[self._segment(t)] / self.n_pages

    def age_at(self, t: ArrayLike) -> FloatArray:
        """Collection age ``A(t)`` (mean age over pages)."""
        k = self._segment(t)
        total = self.stale_count[k] * np.asarray(t, np.float64) - self.stale_since[k]
        return np.asarray(total / self.n_pages, dtype=np.float64)


def _sorted_pairs(page: ArrayLike, time: ArrayLike) -> tuple[IntArray, FloatArray]:
    p = np.asarray(page, dtype=np.int64)
    t = np.asarray(time, dtype=np.float64)
    if p.shape != t.shape:
        raise ConfigError("page and time arrays must have one length")
    order = np.lexsort((t, p))
    return p[order], t[order]


def evaluate_freshness(
    change_page: ArrayLike,
    change_time: ArrayLike,
    refresh_page: ArrayLike,
    refresh_time: ArrayLike,
    n_pages: int,
    start: float,
    end: float,
) -> FreshnessResult:
    """Exact freshness and age of a collection against the true change times.

    Parameters
    ----------
    change_page, change_time : array_like
        Every true change: its page index and time (any order).
    refresh_page, refresh_time : array_like
        Every refresh (fetch) of a page by the crawler (any order).
    n_pages : int
    start, end : float
        The window.  Refreshes before ``start`` count (the copy they made); refreshes
        after ``end`` do not.

    Returns
    -------
    FreshnessResult

    Notes
    -----
    For each refresh at ``r`` followed by the page's next refresh (or the window end)
    at ``e``, let ``c`` be the page's first change after ``r``.  The copy is fresh on
    ``[r, min(c, e))`` and stale on ``[c, e)`` with age ``t - c``, whose integral is
    ``(e - c)^2 / 2``, clipped to the window.  The first change after each refresh is
    found for all refreshes at once by merging the two event lists sorted by (page,
    time, kind) and a reversed running minimum: ``O((C + R) log(C + R))``.

    References
    ----------
    .. [1] Cho and Garcia-Molina, SIGMOD 2000, definitions 1 and 2.

    Examples
    --------
    >>> res = evaluate_freshness([0], [4.0], [0, 0], [0.0, 6.0], 1, 0.0, 10.0)
    >>> res.freshness, res.age   # fresh on [0,4) and [6,10); age 0..2 on [4,6)
    (0.8, 0.2)
    """
    if not end > start:
        raise ConfigError("the window must have end > start")
    if n_pages <= 0:
        raise ConfigError("need at least one page")
    cp, ct = _sorted_pairs(change_page, change_time)
    rp, rt = _sorted_pairs(refresh_page, refresh_time)
    keep = rt <= end
    rp, rt = rp[keep], rt[keep]
    width = end - start

    # Segment end: the page's next refresh, else the window end.
    last_of_page = np.ones(rp.size, dtype=bool)
    last_of_page[:-1] = rp[1:] != rp[:-1]
    seg_end = np.where(last_of_page, end, np.roll(rt, -1))
    first_change = _first_change_after(cp, ct, rp, rt)

    fresh_from = np.maximum(rt, start)
    fresh_to = np.minimum(first_change, seg_end)
    fresh_len = np.maximum(fresh_to - fresh_from, 0.0)
    stale = first_change < seg_end
    c = np.where(stale, first_change, seg_end)
    stale_from = np.maximum(c, start)
    age_int = np.where(stale & (seg_end > start),
                       ((seg_end - c) ** 2 - (stale_from - c) ** 2) / 2, 0.0)

    # Before the first refresh in or before the window: no copy, stale since start.
    first_ref = np.full(n_pages, end)
    np.minimum.at(first_ref, rp, rt)
    pre_to = np.clip(first_ref, start, end)
    pre_len = pre_to - start

    page_fresh = np.bincount(rp, weights=fresh_len, minlength=n_pages) / width
    page_age = (np.bincount(rp, weights=age_int, minlength=n_pages) + pre_len**2 / 2) / width

    # Collection step functions from +/- events.
    has_pre = pre_len > 0
    seg_stale = stale & (seg_end > stale_from)
    ev_t = np.concatenate([fresh_from[fresh_len > 0], fresh_to[fresh_len > 0],
                           stale_from[seg_stale], seg_end[seg_stale],
                           np.full(int(has_pre.sum()), start), pre_to[has_pre]])
    nf = int((fresh_len > 0).sum())
    ns = int(seg_stale.sum())
    npre = int(has_pre.sum())
    d_fresh = np.concatenate([np.ones(nf), -np.ones(nf), np.zeros(2 * ns + 2 * npre)])
    d_stale = np.concatenate([np.zeros(2 * nf), np.ones(ns), -np.ones(ns),
                              np.ones(npre), -np.ones(npre)])
    cs = c[seg_stale]
    d_since = np.concatenate([np.zeros(2 * nf), cs, -cs,
                              np.full(npre, start), -np.full(npre, start)])
    order = np.argsort(ev_t, kind="stable")
    ev_t = ev_t[order]
    times, first_idx = np.unique(ev_t, return_index=True)
    last_idx = np.r_[first_idx[1:], ev_t.size] - 1

    def steps(delta: FloatArray) -> FloatArray:
        cum = np.cumsum(delta[order])
        return cum[last_idx] if cum.size else np.zeros(0)

    fresh_count, stale_count, stale_since = steps(d_fresh), steps(d_stale), steps(d_since)
    if times.size == 0 or times[0] > start:
        times = np.r_[start, times]
        fresh_count = np.r_[0.0, fresh_count]
        stale_count = np.r_[0.0, stale_count]
        stale_since = np.r_[0.0, stale_since]
    page_harm = _harmonic_integral(cp, ct, rp, rt, n_pages, start, end, first_ref) / width
    return FreshnessResult(page_fresh, page_age, float(page_fresh.mean()),
                           float(page_age.mean()), times, np.rint(fresh_count),
                           np.rint(stale_count), stale_since, n_pages, page_harm)


def _harmonic_integral(cp: IntArray, ct: FloatArray, rp: IntArray, rt: FloatArray,
                       n_pages: int, start: float, end: float,
                       first_ref: FloatArray) -> FloatArray:
    """Per page, ``int_start^end H(n(t)) dt``: the j-th change a copy misses adds ``1/j``
    from its time to the next refresh (the window's end), clipped to the window.

    Changes and refreshes are merged in (page, time) order with a change before a
    refresh at the same instant (captured by it); each change's rank is its distance
    from the last refresh before it, and its end the first refresh after it.
    Before a page's first refresh there is no copy: ``1`` from ``start`` plus ``1/(j +
    1)`` for the j-th change after ``start``.
    """
    kind = np.r_[np.zeros(cp.size, np.int8), np.ones(rp.size, np.int8)]
    pages = np.r_[cp, rp]
    times = np.r_[ct, rt]
    order = np.lexsort((kind, times, pages))
    pages, times, is_ref = pages[order], times[order], kind[order] == 1
    pos = np.arange(order.size)
    last_ref = np.maximum.accumulate(np.where(is_ref, pos, -1)) if pos.size else pos
    nxt = np.where(is_ref, pos, order.size)
    next_ref = np.minimum.accumulate(nxt[::-1])[::-1] if pos.size else pos
    change = ~is_ref
    p, t = pages[change], times[change]
    lr, nr = last_ref[change], next_ref[change]
    copied = (lr >= 0) & (pages[np.maximum(lr, 0)] == p)
    has_next = (nr < order.size) & (pages[np.minimum(nr, order.size - 1)] == p)
    seg_end = np.where(has_next, times[np.minimum(nr, order.size - 1)], end)
    # Rank after the last refresh; before any, among the page's changes after start.
    page_first = np.searchsorted(pages, p)  # the page's first event (a change, here)
    after_start = np.cumsum(change & (times > start))[change]
    before_page = np.cumsum(change & (times > start))[np.maximum(page_first - 1, 0)]
    before_page = np.where(page_first > 0, before_page, 0)
    pre_rank = 1 + (after_start - before_page)
    rank = np.where(copied, pos[change] - lr, pre_rank)
    length = np.clip(np.minimum(seg_end, end) - np.maximum(t, start), 0.0, None)
    keep = copied | (t > start)
    total = np.bincount(p[keep], weights=(length / rank)[keep], minlength=n_pages)
    # The missing copy itself: 1 from start to the first refresh.
    return np.asarray(total + (np.clip(first_ref, start, end) - start), dtype=np.float64)


def _first_change_after(cp: IntArray, ct: FloatArray, rp: IntArray, rt: FloatArray) -> FloatArray:
    """For each refresh ``(rp, rt)``, the time of its page's first change after ``rt``
    (``inf`` if none); a change at exactly ``rt`` is before it."""
    kind = np.r_[np.zeros(cp.size, np.int8), np.ones(rp.size, np.int8)]
    pages = np.r_[cp, rp]
    times = np.r_[ct, rt]
    order = np.lexsort((kind, times, pages))
    is_change = kind[order] == 0
    pos = np.arange(order.size)
    nxt = np.where(is_change, pos, order.size)
    # Next change position at or after each position.
    nxt = np.minimum.accumulate(nxt[::-1])[::-1]
    where_refresh = np.flatnonzero(~is_change)
    cand = nxt[where_refresh]
    valid = cand < order.size
    cand_c = np.minimum(cand, order.size - 1)
    same = valid & (pages[order][cand_c] == pages[order][where_refresh])
    result_sorted = np.where(same, times[order][cand_c], np.inf)
    # Back to the order of (rp, rt), which is sorted by (page, time) already.
    out = np.empty(rp.size)
    out[order[where_refresh] - cp.size] = result_sorted
    return out


def age_integral(rate: ArrayLike, u: ArrayLike) -> FloatArray:
    """``int_0^u E[age](s) ds`` after a refresh: ``u^2/2 - u/lam + (1 - e^{-lam u})/lam^2``.

    The expected age ``s`` after a refresh is ``s - (1 - e^{-lam s})/lam`` (the copy is
    stale since the first change ``tau ~ Exp(lam)``: ``E[(s - tau)^+]``).  Computed as
    ``phi(x) / lam^2`` with ``x = lam u`` and ``phi(x) = x^2/2 - x + 1 - e^{-x}``, by its
    series ``x^3/6 - x^4/24 + x^5/120`` for small ``x``; ``0`` when ``lam = 0``.
    """
    lam = np.asarray(rate, dtype=np.float64)
    uu = np.asarray(u, dtype=np.float64)
    x = lam * uu
    small = x < _SERIES_BELOW
    phi_series = x**3 / 6 - x**4 / 24 + x**5 / 120
    phi = np.where(small, phi_series, x * x / 2 - x - np.expm1(-np.where(small, 1.0, x)))
    with np.errstate(divide="ignore", invalid="ignore"):
        # Small x: phi / lam^2 = u^2 (x/6 - x^2/24 + ...), finite at lam = 0.
        return np.where(small, uu * uu * (x / 6 - x * x / 24 + x**3 / 120), phi / lam**2)


def expected_freshness(rate: ArrayLike, last_visit: ArrayLike, at: float | ArrayLike) -> FloatArray:
    """Probability each copy is fresh at time ``at``: ``e^{-lam (at - t_last)}``."""
    lam = np.asarray(rate, dtype=np.float64)
    dt = np.maximum(np.asarray(at, np.float64) - np.asarray(last_visit, np.float64), 0.0)
    return np.exp(-lam * dt)


def expected_age(rate: ArrayLike, last_visit: ArrayLike, at: float | ArrayLike) -> FloatArray:
    """Expected age of each copy at ``at``: ``d - (1 - e^{-lam d})/lam``, ``d = at - t_last``."""
    lam = np.asarray(rate, dtype=np.float64)
    d = np.maximum(np.asarray(at, np.float64) - np.asarray(last_visit, np.float64), 0.0)
    x = lam * d
    with np.errstate(divide="ignore", invalid="ignore"):
        exact = d + np.expm1(-x) / lam
    return np.where(x < _SERIES_BELOW, d * (x / 2 - x * x / 6), exact)


def estimated_freshness(
    rate: ArrayLike,
    refresh_page: ArrayLike,
    refresh_time: ArrayLike,
    start: float,
    end: float,
) -> tuple[float, float]:
    """Expected time-averaged freshness and age of the collection under Poisson ``rate``.

    What the crawler can report about itself without ground truth: it knows when it
    refreshed each page and has rate estimates.  After a refresh at ``r`` the copy is
    fresh at ``r + u`` with probability ``e^{-lam u}`` and has expected age
    ``u - (1 - e^{-lam u})/lam``; both are integrated exactly over each refresh
    interval clipped to the window.  Pages never refreshed by ``end`` count as stale
    from ``start``.

    Returns
    -------
    (freshness, age) : tuple of float
        Means over pages of the time averages, comparable to
        :attr:`FreshnessResult.freshness` and :attr:`FreshnessResult.age`.

    Examples
    --------
    >>> f, a = estimated_freshness([0.0, 1e9], [0, 1], [0.0, 0.0], 0.0, 1.0)
    >>> round(f, 6)   # a static page is always fresh, a very fast one never
    0.5
    """
    if not end > start:
        raise ConfigError("the window must have end > start")
    lam = np.asarray(rate, dtype=np.float64)
    n_pages = lam.size
    rp, rt = _sorted_pairs(refresh_page, refresh_time)
    keep = rt <= end
    rp, rt = rp[keep], rt[keep]
    last_of_page = np.ones(rp.size, dtype=bool)
    last_of_page[:-1] = rp[1:] != rp[:-1]
    seg_end = np.where(last_of_page, end, np.roll(rt, -1))
    ua = np.maximum(start - rt, 0.0)
    ub = np.maximum(seg_end - rt, ua)
    lr = lam[rp]
    x_ab = lr * (ub - ua)
    with np.errstate(divide="ignore", invalid="ignore"):
        fresh = np.where(lr > 0, np.exp(-lr * ua) * -np.expm1(-x_ab) / lr, ub - ua)
    age = age_integral(lr, ub) - age_integral(lr, ua)
    first_ref = np.full(n_pages, end)
    np.minimum.at(first_ref, rp, rt)
    pre = np.clip(first_ref, start, end) - start
    width = end - start
    page_f = np.bincount(rp, weights=fresh, minlength=n_pages) / width
    page_a = (np.bincount(rp, weights=age, minlength=n_pages) + pre**2 / 2) / width
    return float(page_f.mean()), float(page_a.mean())
