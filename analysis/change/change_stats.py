"""Change analytics of a revisited collection, as in Cho and Garcia-Molina's web study.

From a :class:`VisitLog` (every visit of every page: time, whether the page was there,
whether it changed, Last-Modified): the fraction of pages by average change interval
(overall, per host and per domain class: .com, .edu, ...), the visible lifespan of
pages (both methods of the paper), the time until 50% of the pages changed, and a test
of the Poisson model.  :func:`change_report` computes them all;
:func:`webcrawl.analysis.report.change_figures.plot_change_report` writes one PNG each.

Times are in days.

Censoring: a page with no change seen during its observed span ``s`` has a change
interval longer than ``s`` and nothing more is known; it is a censored observation,
reported as such ("no change seen") with the window stated, never put in a bucket.
Cho and Garcia-Molina's "> 4 months" bucket is that censored class for their
four-month window; on a shorter window it would mislabel every unchanged page.

References
----------
.. [1] J. Cho and H. Garcia-Molina, "The evolution of the web and implications for an
   incremental crawler", VLDB 2000, sections 3.1-3.4 and figures 2-6.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats
from webcrawl.analysis.change.estimators import (
    RateEstimate,
    VisitHistory,
    estimate_rates,
    no_change_upper_bound,
)
from webcrawl.storage.arrays import FloatArray, IntArray
from webcrawl.storage.errors import ConfigError, EmptyGraphError

__all__ = [
    "CENSORED_LABEL",
    "CHANGE_BUCKETS",
    "LIFESPAN_BUCKETS",
    "ChangeReport",
    "PoissonTest",
    "VisitLog",
    "bucket_fractions",
    "change_report",
    "domain_class",
    "mean_change_intervals",
    "poisson_test",
    "unchanged_curve",
    "visible_lifespans",
    "window_buckets",
]


#: (label, upper edge in days) of the paper's change-interval buckets (figure 2).
CHANGE_BUCKETS: tuple[tuple[str, float], ...] = (
    ("<= 1 day", 1.0), ("1 day - 1 week", 7.0), ("1 week - 1 month", 30.0),
    ("1 - 4 months", 120.0), ("> 4 months", math.inf))
#: Label of the censored class: pages with no change seen in their observed span.
CENSORED_LABEL = "no change seen (censored)"
#: The change buckets plus the censored class, as :func:`change_table` columns.
_TABLE_BUCKETS: tuple[tuple[str, float], ...] = (
    *CHANGE_BUCKETS[:-1], (CHANGE_BUCKETS[-1][0], float(np.finfo(np.float64).max)),
    (CENSORED_LABEL, math.inf))
#: Names of the bucket edges, for the open-ended bucket of a short window.
_EDGE_NAMES = {1.0: "1 day", 7.0: "1 week", 30.0: "1 month", 120.0: "4 months"}


def window_buckets(window_days: float) -> tuple[tuple[str, float], ...]:
    """The change-interval buckets a ``window_days`` observation can tell apart.

    The paper's buckets (:data:`CHANGE_BUCKETS`) whose upper edge lies within the
    window, then one open-ended bucket ``"> <edge>"`` for every longer interval: a
    page that changed within a 34-day window has its interval estimated, but whether
    it is 2 or 5 months is an extrapolation, so that window has no "1 - 4 months" or
    "> 4 months" column.  Pages with no change seen are not in any of these buckets:
    they are censored (:data:`CENSORED_LABEL`).  A window of four months or more gives
    the paper's buckets unchanged.

    Parameters
    ----------
    window_days : float
        Length of the observation, days.

    Returns
    -------
    tuple of (label, upper edge in days)
        For :func:`bucket_fractions`; the last edge is ``inf``.

    Examples
    --------
    >>> [label for label, _ in window_buckets(34.0)]
    ['<= 1 day', '1 day - 1 week', '1 week - 1 month', '> 1 month']
    >>> window_buckets(200.0) == CHANGE_BUCKETS
    True

    References
    ----------
    .. [1] J. Cho and H. Garcia-Molina, "The evolution of the web and implications
       for an incremental crawler", VLDB 2000, figure 2 (a four-month window).
    """
    kept = [(label, edge) for label, edge in CHANGE_BUCKETS[:-1] if edge <= window_days]
    if not kept:
        return ((f"any interval (window {window_days:.3g} days)", math.inf),)
    if len(kept) == len(CHANGE_BUCKETS) - 1:
        return CHANGE_BUCKETS                    # the paper's own "> 4 months"
    return (*kept, (f"> {_EDGE_NAMES[kept[-1][1]]}", math.inf))


#: Lifespan buckets (figure 4).
LIFESPAN_BUCKETS: tuple[tuple[str, float], ...] = (
    ("<= 1 week", 7.0), ("1 week - 1 month", 30.0), ("1 - 4 months", 120.0),
    ("> 4 months", math.inf))


@dataclass(frozen=True, eq=False)
class VisitLog:
    """Every visit of every page, flat.

    Attributes
    ----------
    page : ndarray of int64
        Page index (``0..n_pages-1``) of each visit.
    time : ndarray of float64
        Visit time, days.
    present : ndarray of bool
        The page was there (2xx or 304).
    changed : ndarray of int8
        1 changed since the previous visit, 0 not, -1 unknown (first visit, failures).
    last_modified : ndarray of float64
        Last-Modified time (days, same clock), ``nan`` when absent.
    host : ndarray of int64, per page
        Host index into ``host_names``.
    host_names : list of str
    """

    page: IntArray
    time: FloatArray
    present: NDArray[np.bool_]
    changed: NDArray[np.int8]
    last_modified: FloatArray
    host: IntArray
    host_names: Sequence[str] = field(default_factory=list)

    @property
    def n_pages(self) -> int:
        return int(self.host.size)

    @classmethod
    def from_arrays(
        cls,
        page: ArrayLike,
        time: ArrayLike,
        present: ArrayLike,
        changed: ArrayLike,
        *,
        last_modified: ArrayLike | None = None,
        host: ArrayLike | None = None,
        host_names: Sequence[str] | None = None,
        digest: Sequence[Any] | None = None,
    ) -> VisitLog:
        """Build a log, sorted by (page, time).  Unknown ``changed`` (-1) on a present
        visit is filled from ``digest`` when given (different from the page's previous
        present visit's digest)."""
        p = np.asarray(page, dtype=np.int64)
        t = np.asarray(time, dtype=np.float64)
        pr = np.asarray(present, dtype=bool)
        ch = np.asarray(changed, dtype=np.int8)
        lm = (np.full(t.shape, np.nan) if last_modified is None
              else np.asarray(last_modified, dtype=np.float64))
        if not (p.shape == t.shape == pr.shape == ch.shape == lm.shape):
            raise ConfigError("visit arrays must have one length")
        order = np.lexsort((t, p))
        p, t, pr, ch, lm = p[order], t[order], pr[order], ch[order].copy(), lm[order]
        if digest is not None:
            d = np.asarray(digest, dtype=object)[order]
            idx = np.flatnonzero(pr)
            prev = np.r_[-1, idx[:-1]]
            same_page = np.r_[False, p[idx[1:]] == p[idx[:-1]]]
            fill = same_page & (ch[idx] < 0) & np.array([x is not None for x in d[idx]])
            prev_d = d[np.maximum(prev, 0)]
            ch[idx[fill]] = (d[idx[fill]] != prev_d[fill]).astype(np.int8)
        n = int(p.max()) + 1 if p.size else 0
        hosts = np.zeros(n, np.int64) if host is None else np.asarray(host, dtype=np.int64)
        names = list(host_names) if host_names is not None else [
            str(h) for h in range(int(hosts.max()) + 1 if hosts.size else 0)]
        return cls(p, t, pr, ch, lm, hosts, names)

    def history(self) -> VisitHistory:
        """The change history between consecutive *present* visits of each page."""
        keep = self.present
        return VisitHistory.from_visits(self.page[keep], self.time[keep],
                                        self.changed[keep] == 1, self.last_modified[keep],
                                        n_pages=self.n_pages)


def mean_change_intervals(log: VisitLog, method: str = "estimate") -> FloatArray:
    """Average change interval per page, days.

    ``method="paper"``: observed span / changes seen, as Cho and Garcia-Molina did; it
    saturates at the visit interval (a page changing twice a day, visited daily, shows
    about 1.16 days).  ``method="estimate"`` (default): ``1 / lam_hat`` with
    :func:`analysis.change.estimators.estimate_rates` (bias-reduced for regular visits, MLE or
    Last-Modified otherwise), which does not saturate; where that estimate is 0 although
    a change was seen (Last-Modified with one interval), the observed span / changes.
    ``inf`` exactly when no change was seen (censored), ``nan`` for pages seen fewer
    than twice.
    """
    hist = log.history()
    x = hist.n_changed
    seen = hist.n_visits > 0
    if method == "paper":
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.where(x > 0, hist.total_time / np.maximum(x, 1), np.inf)
    elif method == "estimate":
        rate = estimate_rates(hist).rate
        # The Last-Modified estimator's (n - 1) / T is 0 at X = n = 1: a change was seen,
        # so the page is not censored; its interval is then the observed span (X / T).
        with np.errstate(divide="ignore", invalid="ignore"):
            rate = np.where((x > 0) & ~(rate > 0), x / hist.total_time, rate)
        with np.errstate(divide="ignore"):
            out = np.where(x > 0, 1.0 / rate, np.inf)
    else:
        raise ConfigError(f"unknown interval method {method!r}: 'estimate' or 'paper'")
    return np.where(seen, out, np.nan)


def bucket_fractions(
    values: ArrayLike, buckets: Sequence[tuple[str, float]] = CHANGE_BUCKETS,
    groups: ArrayLike | None = None, n_groups: int | None = None,
) -> FloatArray:
    """Fraction of the (non-nan) values in each bucket; per group if ``groups`` given.

    Returns shape ``(len(buckets),)``, or ``(n_groups, len(buckets))``.
    """
    v = np.asarray(values, dtype=np.float64)
    ok = ~np.isnan(v)
    edges = np.array([edge for _, edge in buckets[:-1]])
    b = np.searchsorted(edges, v[ok], side="left")  # value == edge goes to the lower bucket
    k = len(buckets)
    if groups is None:
        counts = np.bincount(b, minlength=k).astype(np.float64)
        return np.asarray(counts / max(counts.sum(), 1.0), dtype=np.float64)
    g = np.asarray(groups, dtype=np.int64)[ok]
    m = int(n_groups if n_groups is not None else (g.max() + 1 if g.size else 0))
    counts = np.bincount(g * k + b, minlength=m * k).reshape(m, k).astype(np.float64)
    return np.asarray(counts / np.maximum(counts.sum(axis=1, keepdims=True), 1.0),
                      dtype=np.float64)


def domain_class(host: str) -> str:
    """Cho and Garcia-Molina's domain class of a host: its top-level domain, with
    .net and .org pooled as "net/org" (their figure 2b: com, net/org, edu, gov)."""
    tld = host.rstrip(".").rsplit(".", 1)[-1].lower().split(":")[0]
    return "net/org" if tld in ("net", "org") else tld


def _window(log: VisitLog) -> tuple[float, float, float]:
    if log.time.size == 0:
        raise EmptyGraphError("no visits to analyse")
    same = log.page[1:] == log.page[:-1]
    gaps = np.diff(log.time)[same]
    tol = float(np.median(gaps)) if gaps.size else 0.0
    return float(log.time.min()), float(log.time.max()), tol


def visible_lifespans(log: VisitLog, tol: float | None = None) -> tuple[FloatArray, FloatArray]:
    """Visible lifespan of every page seen at least once, by the paper's two methods.

    Method 1: last minus first visit at which the page was there.  Method 2: the same,
    doubled for pages already there at the window's start or still there at its end
    (cases a, c, d of the paper's figure 3), whose true lifespan is longer than what
    was seen.  "At the start" means first seen within ``tol`` (default: the median
    revisit interval) of the first visit of the whole log; likewise at the end.
    """
    start, end, default_tol = _window(log)
    tol = default_tol if tol is None else tol
    pr = log.present
    first = np.full(log.n_pages, np.inf)
    last = np.full(log.n_pages, -np.inf)
    np.minimum.at(first, log.page[pr], log.time[pr])
    np.maximum.at(last, log.page[pr], log.time[pr])
    seen = np.isfinite(first)
    span = (last - first)[seen]
    cut = (first[seen] <= start + tol) | (last[seen] >= end - tol)
    return span, np.where(cut, 2 * span, span)


def unchanged_curve(log: VisitLog, tol: float | None = None) -> tuple[FloatArray, FloatArray,
                                                                       float | None]:
    """Fraction of the pages present at the start that have not changed yet, over time.

    A page stops counting as unchanged at the first visit that saw a change or found
    it gone ("changed or replaced", figure 5).  Returns ``(days since start, fraction,
    days until half changed or None if that never happened in the window)``.
    """
    start, _end, default_tol = _window(log)
    tol = default_tol if tol is None else tol
    first_visit = np.full(log.n_pages, np.inf)
    np.minimum.at(first_visit, log.page[log.present], log.time[log.present])
    tracked = first_visit <= start + tol
    event = (log.changed == 1) | ~log.present
    event &= tracked[log.page] & (log.time > first_visit[log.page])
    first_event = np.full(log.n_pages, np.inf)
    np.minimum.at(first_event, log.page[event], log.time[event])
    grid = np.unique(log.time) - start
    n = int(tracked.sum())
    if n == 0:
        return grid, np.ones_like(grid), None
    ev = np.sort(first_event[tracked]) - start
    frac = 1.0 - np.searchsorted(ev, grid, side="right") / n
    half = np.flatnonzero(frac <= 0.5)
    return grid, frac, (float(grid[half[0]]) if half.size else None)


@dataclass(frozen=True, eq=False)
class PoissonTest:
    """KS test of change intervals against the exponential law.

    ``skipped`` says why the test was not run (no page changed often enough; a
    collection where nothing changed is the common case); ``statistic`` and ``pvalue``
    are ``nan`` then.
    """

    statistic: float
    pvalue: float
    n_intervals: int
    n_pages: int
    normalised: FloatArray  # intervals / their page's mean interval
    skipped: str | None = None
    #: The same statistic's input under the simulated null (pooled replicates): what
    #: Poisson pages look like through these visits; plot this, not Exp(1).
    null_normalised: FloatArray = field(default_factory=lambda: np.zeros(0))


def _normalised_intervals(page: IntArray, t: FloatArray) -> FloatArray:
    """Intervals between consecutive event times per page, over the page's mean."""
    order = np.lexsort((t, page))
    page, t = page[order], t[order]
    same = page[1:] == page[:-1]
    gaps = np.diff(t)[same]
    gp = page[1:][same]
    sums = np.bincount(gp, weights=gaps, minlength=int(page.max()) + 1 if page.size else 0)
    counts = np.bincount(gp, minlength=sums.size)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(gaps / (sums[gp] / counts[gp]), dtype=np.float64)


def _ks_exp(x: FloatArray) -> float:
    return float(stats.kstest(x, "expon").statistic) if x.size else 0.0


#: Replicates of the simulated null kept for plotting (PoissonTest.null_normalised).
_NULL_KEPT = 20


def poisson_test(
    log: VisitLog, *, min_changes: int = 4, n_sim: int = 199, seed: int = 0
) -> PoissonTest:
    """Test whether pages change as Poisson processes (the paper's figure 6, as a test).

    Parameters
    ----------
    log : VisitLog
    min_changes : int
        Pages with fewer detected changes are left out.
    n_sim : int
        Monte Carlo replicates of the null distribution.
    seed : int
        For the jitter and the replicates.

    Returns
    -------
    PoissonTest
        With ``skipped`` set (and ``nan`` statistic and p-value) when no page has
        ``min_changes`` detected changes, for instance when nothing changed at all.

    Notes
    -----
    Change times are the Last-Modified times when known, else uniform in the interval
    between the visit that saw the change and the one before.  Each page's intervals
    are divided by its mean interval, so pages with different rates pool; the
    statistic is the KS distance between the pooled intervals and ``Exp(1)``.  Visits
    hide changes (two changes between visits look like one), and the scale is
    estimated, so the KS table does not apply: the null distribution is simulated
    through the same observation process.  Each replicate draws, per page, Poisson
    change times at the page's estimated rate (bias-reduced) over its observed window,
    lets its actual visits detect them (the last change before each visit, timed by
    Last-Modified where the page gave it, else jittered the same way), and recomputes
    the statistic.
    """
    if min_changes < 2 or n_sim < 1:
        raise ConfigError("need min_changes >= 2 and n_sim >= 1")
    rng = np.random.default_rng(seed)
    pr = log.present
    page, t, ch, lm = log.page[pr], log.time[pr], log.changed[pr], log.last_modified[pr]
    same = np.r_[False, page[1:] == page[:-1]]
    prev_t = np.r_[np.nan, t[:-1]]
    hit = same & (ch == 1)
    exact = hit & (lm > prev_t) & (lm <= t)
    n = log.n_pages
    counts = np.bincount(page[hit], minlength=n)
    usable = counts >= min_changes
    page_exact = np.bincount(page[hit & ~exact], minlength=n) == 0

    if not usable.any():
        seen = int(counts.sum())
        reason = ("no change was seen in any page" if seen == 0 else
                  f"no page has {min_changes} or more detected changes ({seen} changes "
                  f"in {int(np.count_nonzero(counts))} pages)")
        return PoissonTest(math.nan, math.nan, 0, 0, np.zeros(0),
                           skipped=f"{reason}: too few change intervals to test")

    def observe(ev_page: IntArray, ev_t: FloatArray, visit_of: IntArray) -> FloatArray:
        # The last event before each detecting visit; jitter where no Last-Modified.
        if ev_page.size == 0:
            return np.zeros(0)
        order = np.lexsort((ev_t, visit_of))
        ev_page, ev_t, visit_of = ev_page[order], ev_t[order], visit_of[order]
        last = np.r_[visit_of[1:] != visit_of[:-1], True]
        ev_page, ev_t, visit_of = ev_page[last], ev_t[last], visit_of[last]
        jitter = prev_t[visit_of] + rng.random(visit_of.size) * (t[visit_of] - prev_t[visit_of])
        when = np.where(page_exact[ev_page], ev_t, jitter)
        return _normalised_intervals(ev_page, when)

    sel = hit & usable[page]
    idx = np.flatnonzero(sel)
    x = observe(page[idx], np.where(exact[idx], lm[idx], t[idx]), idx)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return PoissonTest(math.nan, math.nan, 0, 0, x,
                           skipped="no finite change interval to test")
    d_obs = _ks_exp(x)
    # Null: Poisson pages at their bias-reduced rates, seen by the same visits.
    intervals = np.bincount(page[same], minlength=n)
    lo = np.full(n, np.inf)
    hi = np.full(n, -np.inf)
    np.minimum.at(lo, page, t)
    np.maximum.at(hi, page, t)
    k_true = -np.log((intervals - counts + 0.5) / (intervals + 0.5)) * intervals
    span = float(np.max(hi[usable] - lo[usable])) + 1.0
    key = page * span + (t - np.where(np.isfinite(lo), lo, 0.0)[page])
    pages_used = np.flatnonzero(usable)
    exceed = 0
    null: list[FloatArray] = []
    for _ in range(n_sim):
        m = rng.poisson(k_true[pages_used])
        ev_page = np.repeat(pages_used, m)
        ev_t = lo[ev_page] + rng.random(ev_page.size) * (hi[ev_page] - lo[ev_page])
        visit = np.searchsorted(key, ev_page * span + (ev_t - lo[ev_page]), side="left")
        # Events at or before the page's first visit are never reported as changes.
        ok = (visit < key.size) & same[np.minimum(visit, key.size - 1)]
        sim = observe(ev_page[ok], ev_t[ok], visit[ok])
        sim = sim[np.isfinite(sim)]
        exceed += _ks_exp(sim) >= d_obs
        if len(null) < _NULL_KEPT:
            null.append(sim)
    return PoissonTest(d_obs, (1 + exceed) / (1 + n_sim), int(x.size), int(usable.sum()), x,
                       null_normalised=np.concatenate(null))


@dataclass(frozen=True, eq=False)
class ChangeReport:
    """Everything ``webcrawl analyze changes`` prints and plots.

    Attributes
    ----------
    window_days : float
        Days from the log's first visit to its last: every figure is conditioned on
        it (Cho and Garcia-Molina's was four months).
    bucket_overall, bucket_by_host, bucket_by_class : ndarray
        Fractions of pages per change-interval bucket, the last column the censored
        class (no change seen); see :func:`change_report`.
    host_names, class_names : sequence of str
        Row labels of the per-host and per-domain-class tables.
    pages_by_host, pages_by_class : ndarray of int64
        Pages visited at least twice per row.
    median_span_days : float
        Median observed span of those pages: where the censored pages are censored.
    interval_method : {"estimate", "paper"}
        How the per-host and per-class tables estimate a page's average change
        interval (:func:`mean_change_intervals`).
    bucket_overall_estimate, bucket_overall_paper : ndarray
        The overall row under each method side by side: ``1 / rate`` (the
        bias-reduced estimate) and the paper's observed span / changes seen.
    poisson : PoissonTest
        With the simulated null's intervals for the figure.
    """

    n_pages: int
    n_visits: int
    window_days: float
    bucket_overall: FloatArray
    bucket_by_host: FloatArray
    host_names: Sequence[str]
    pages_by_host: IntArray
    lifespan_method1: FloatArray
    lifespan_method2: FloatArray
    lifespan_buckets1: FloatArray
    lifespan_buckets2: FloatArray
    unchanged_days: FloatArray
    unchanged_fraction: FloatArray
    half_changed_days: float | None
    poisson: PoissonTest
    #: per page: rate estimate (changes per day) with its confidence interval; a page
    #: with no change seen has rate 0 and the upper bound of
    #: :func:`~webcrawl.analysis.change.estimators.no_change_upper_bound` (``nan`` if not revisited)
    rates: RateEstimate
    #: per page: visits that saw a change, and days observed (sum of revisit intervals)
    changes_seen: IntArray
    observed_days: FloatArray
    #: per page: host index into ``host_names``
    host: IntArray
    class_names: Sequence[str] = ()
    bucket_by_class: FloatArray = field(default_factory=lambda: np.zeros((0, 6)))
    pages_by_class: IntArray = field(default_factory=lambda: np.zeros(0, np.int64))
    median_span_days: float = 0.0
    interval_method: str = "estimate"
    bucket_overall_estimate: FloatArray = field(default_factory=lambda: np.zeros(6))
    bucket_overall_paper: FloatArray = field(default_factory=lambda: np.zeros(6))

    @property
    def unchanged(self) -> NDArray[np.bool_]:
        """Pages observed for a while (revisited with an answer) without any change seen."""
        return np.asarray((self.observed_days > 0) & (self.changes_seen == 0))

    @property
    def pooled_upper_bound(self) -> float:
        """Upper bound on the time-weighted mean rate of the unchanged pages, per day.

        Independent Poisson pages with rates ``lam_i`` watched for ``T_i`` days show
        ``Poisson(sum lam_i T_i)`` changes in all; none seen bounds ``sum lam_i T_i`` by
        ``-ln(1 - confidence)``, so the mean rate weighted by observed time is below
        ``-ln(1 - confidence) / sum T_i`` (no common rate assumed).  ``nan`` if no page
        is unchanged.
        """
        total = float(self.observed_days[self.unchanged].sum())
        if total <= 0:
            return math.nan
        return float(no_change_upper_bound([total], confidence=self.rates.confidence)[0])

    def rate_summary(self) -> dict[str, Any]:
        """Counts of pages with and without changes, and the upper bounds of the latter."""
        seen = self.observed_days > 0
        un = self.unchanged
        upper = self.rates.upper[un]
        days = self.observed_days[un]

        def stats_of(values: FloatArray) -> dict[str, float] | None:
            if values.size == 0:
                return None
            return {"min": float(values.min()), "median": float(np.median(values)),
                    "max": float(values.max())}

        by_host: dict[str, Any] = {}
        for h, name in enumerate(self.host_names):
            mine = un & (self.host == h)
            if mine.any():
                by_host[name] = {"pages": int(mine.sum()),
                                 "observed_days": stats_of(self.observed_days[mine]),
                                 "upper_rate_per_day": stats_of(self.rates.upper[mine])}
        return {"confidence": self.rates.confidence,
                "pages_revisited": int(seen.sum()),
                "pages_with_changes": int((seen & (self.changes_seen > 0)).sum()),
                "pages_without_changes": int(un.sum()),
                "unchanged_observed_days": stats_of(days),
                "unchanged_upper_rate_per_day": stats_of(upper),
                "unchanged_pooled_upper_rate_per_day": (
                    None if not un.any() else self.pooled_upper_bound),
                "unchanged_by_host": by_host}

    @property
    def censored_fraction(self) -> float:
        """Pages with no change seen in their observed span (censored)."""
        return float(self.bucket_overall[-1])

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary (no per-page arrays)."""
        labels = [label for label, _ in _TABLE_BUCKETS]

        def rows(names: Sequence[str], table: FloatArray) -> dict[str, Any]:
            return {name: dict(zip(labels, row.tolist(), strict=True))
                    for name, row in zip(names, table, strict=True)}

        return {
            "pages": self.n_pages, "visits": self.n_visits, "window_days": self.window_days,
            "median_observed_span_days": self.median_span_days,
            "censored_fraction": self.censored_fraction,
            "change_interval_buckets": dict(zip(labels, self.bucket_overall.tolist(),
                                                strict=True)),
            "interval_method": self.interval_method,
            "change_interval_buckets_by_method": {
                "estimate": dict(zip(labels, self.bucket_overall_estimate.tolist(),
                                     strict=True)),
                "paper": dict(zip(labels, self.bucket_overall_paper.tolist(), strict=True))},
            "by_host": rows(self.host_names, self.bucket_by_host),
            "by_domain_class": rows(self.class_names, self.bucket_by_class),
            "lifespan_buckets": {
                "method1": dict(zip([lb for lb, _ in LIFESPAN_BUCKETS],
                                    self.lifespan_buckets1.tolist(), strict=True)),
                "method2": dict(zip([lb for lb, _ in LIFESPAN_BUCKETS],
                                    self.lifespan_buckets2.tolist(), strict=True))},
            "days_until_half_changed": self.half_changed_days,
            "rates": self.rate_summary(),
            "poisson_test": {"ks_statistic": _finite_or_none(self.poisson.statistic),
                             "p_value": _finite_or_none(self.poisson.pvalue),
                             "intervals": self.poisson.n_intervals,
                             "pages": self.poisson.n_pages,
                             "skipped": self.poisson.skipped},
        }


def _finite_or_none(value: float) -> float | None:
    return value if math.isfinite(value) else None


def change_report(log: VisitLog, *, seed: int = 0, confidence: float = 0.95,
                  intervals: str = "estimate") -> ChangeReport:
    """All change analytics of a visit log (see the module docstring).

    ``intervals`` names how a page's average change interval is estimated for the
    bucket tables (:func:`mean_change_intervals`): ``"estimate"`` (``1 / rate``, the
    default) or ``"paper"`` (Cho and Garcia-Molina's observed span / changes seen,
    which saturates at the visit interval).  The overall row is also given under both
    (``bucket_overall_estimate``, ``bucket_overall_paper``).

    ``bucket_overall``, ``bucket_by_host`` and ``bucket_by_class`` have six columns:
    the five change-interval buckets of the paper's figure 2 for pages where a
    change was seen, and :data:`CENSORED_LABEL` for pages where none was (their
    interval is only known to exceed their observed span, at most ``window_days``).
    Rows sum to 1 over the pages visited at least twice.

    A log in which no page changed is a normal input: every rate is 0 with its upper
    bound (about ``3 / observed days`` at 95%), and the Poisson test is skipped with the
    reason in :attr:`PoissonTest.skipped`.

    References
    ----------
    .. [1] J. Cho and H. Garcia-Molina, "The evolution of the web and implications
       for an incremental crawler", VLDB 2000, figure 2 (a: all pages; b: by domain).
    """
    start, end, _ = _window(log)
    hist = log.history()
    rates = estimate_rates(hist, confidence=confidence)
    by_method = {m: mean_change_intervals(log, m) for m in ("estimate", "paper")}
    if intervals not in by_method:
        raise ConfigError(f"unknown interval method {intervals!r}: 'estimate' or 'paper'")
    method, chosen = intervals, by_method[intervals]
    m1, m2 = visible_lifespans(log)
    days, frac, half = unchanged_curve(log)
    n_hosts = len(log.host_names)
    classes = [domain_class(h) for h in log.host_names]
    class_names = sorted(set(classes))
    class_of_host = np.asarray([class_names.index(c) for c in classes], dtype=np.int64)
    page_class = class_of_host[log.host] if log.host.size else log.host
    spans = hist.total_time[hist.n_visits > 0]
    return ChangeReport(
        n_pages=log.n_pages, n_visits=int(log.time.size), window_days=end - start,
        bucket_overall=bucket_fractions(chosen, _TABLE_BUCKETS),
        bucket_by_host=bucket_fractions(chosen, _TABLE_BUCKETS, groups=log.host,
                                        n_groups=n_hosts),
        host_names=log.host_names,
        pages_by_host=np.bincount(log.host[~np.isnan(chosen)], minlength=n_hosts),
        class_names=class_names,
        bucket_by_class=bucket_fractions(chosen, _TABLE_BUCKETS, groups=page_class,
                                         n_groups=len(class_names)),
        pages_by_class=np.bincount(page_class[~np.isnan(chosen)],
                                   minlength=len(class_names)),
        median_span_days=float(np.median(spans)) if spans.size else 0.0,
        interval_method=method,
        bucket_overall_estimate=bucket_fractions(by_method["estimate"], _TABLE_BUCKETS),
        bucket_overall_paper=bucket_fractions(by_method["paper"], _TABLE_BUCKETS),
        lifespan_method1=m1, lifespan_method2=m2,
        lifespan_buckets1=bucket_fractions(m1, LIFESPAN_BUCKETS),
        lifespan_buckets2=bucket_fractions(m2, LIFESPAN_BUCKETS),
        unchanged_days=days, unchanged_fraction=frac, half_changed_days=half,
        poisson=poisson_test(log, seed=seed), rates=rates,
        changes_seen=hist.n_changed.astype(np.int64),
        observed_days=hist.total_time.astype(np.float64), host=log.host)
