"""Visit histories of pages: the data every change-rate estimator reads.

:class:`VisitHistory` holds, flat, one entry per interval between two visits of a page:
its length, whether the visit at its end saw a change, and the time since the page's
last modification (Last-Modified) when known.  The estimators are in
:mod:`webcrawl.analysis.change.estimators` (which re-exports this class).

References
----------
.. [1] J. Cho and H. Garcia-Molina, "Estimating frequency of change", ACM TOIT 3(3), 2003.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from webcrawl.storage.arrays import BoolArray, FloatArray, IntArray
from webcrawl.storage.errors import ConfigError

__all__ = ["VisitHistory"]


@dataclass(frozen=True, eq=False)
class VisitHistory:
    """Visit histories of ``n_pages`` pages, flat: one entry per interval between visits.

    Attributes
    ----------
    page : ndarray of int64
        Page index (``0..n_pages-1``) of each interval.
    interval : ndarray of float64
        Time since the page's previous visit (> 0).
    changed : ndarray of bool
        Whether the visit at the end of the interval saw a change.
    since_modified : ndarray of float64
        Time from the page's last modification (Last-Modified) to the visit, ``nan``
        when unknown.  Only meaningful where ``changed``; clipped to the interval.
    n_pages : int
    """

    page: IntArray
    interval: FloatArray
    changed: BoolArray
    since_modified: FloatArray
    n_pages: int

    def __post_init__(self) -> None:
        k = self.page.shape[0]
        if not (self.interval.shape == self.changed.shape == self.since_modified.shape == (k,)):
            raise ConfigError("page, interval, changed, since_modified must have one length")
        if k and (self.page.min() < 0 or self.page.max() >= self.n_pages):
            raise ConfigError("page index out of range")
        if np.any(~(self.interval > 0)):
            raise ConfigError("intervals between visits must be positive")

    @classmethod
    def from_arrays(
        cls,
        page: ArrayLike,
        interval: ArrayLike,
        changed: ArrayLike,
        since_modified: ArrayLike | None = None,
        *,
        n_pages: int | None = None,
    ) -> VisitHistory:
        """Build from per-interval arrays (any order)."""
        p = np.asarray(page, dtype=np.int64)
        t = np.asarray(interval, dtype=np.float64)
        sm = (np.full(t.shape, np.nan) if since_modified is None
              else np.minimum(np.asarray(since_modified, dtype=np.float64), t))
        n = int(p.max()) + 1 if n_pages is None and p.size else int(n_pages or 0)
        return cls(p, t, np.asarray(changed, dtype=bool), sm, n)

    @classmethod
    def from_visits(
        cls,
        page: ArrayLike,
        time: ArrayLike,
        changed: ArrayLike,
        last_modified: ArrayLike | None = None,
        *,
        n_pages: int | None = None,
    ) -> VisitHistory:
        """Build from visit records: ``(page, time, changed[, last_modified time])``.

        The first visit of each page only starts its history (its ``changed`` is
        ignored); each later visit closes one interval.  Visits at the same time as the
        page's previous visit are dropped.  ``last_modified`` is the Last-Modified time
        on the same clock as ``time`` (``nan`` when absent).
        """
        p = np.asarray(page, dtype=np.int64)
        t = np.asarray(time, dtype=np.float64)
        c = np.asarray(changed, dtype=bool)
        lm = (np.full(t.shape, np.nan) if last_modified is None
              else np.asarray(last_modified, dtype=np.float64))
        order = np.lexsort((t, p))
        p, t, c, lm = p[order], t[order], c[order], lm[order]
        same_page = p[1:] == p[:-1]
        dt = np.diff(t)
        keep = same_page & (dt > 0)
        idx = np.flatnonzero(keep) + 1
        since = t[idx] - lm[idx]
        # Last-Modified is informative only if it falls inside the interval.
        since = np.where(c[idx] & (since >= 0), since, np.nan)
        n = int(p.max()) + 1 if n_pages is None and p.size else int(n_pages or 0)
        return cls.from_arrays(p[idx], dt[keep], c[idx], since, n_pages=n)

    @classmethod
    def regular(cls, n_visits: ArrayLike, n_changed: ArrayLike, interval: float) -> VisitHistory:
        """Histories with ``n_visits[i]`` intervals of length ``interval``, the first
        ``n_changed[i]`` of them with a change (order does not matter to any estimator)."""
        n = np.asarray(n_visits, dtype=np.int64)
        x = np.asarray(n_changed, dtype=np.int64)
        page = np.repeat(np.arange(n.size), n)
        rank = np.arange(page.size) - np.repeat(np.cumsum(n) - n, n)
        return cls.from_arrays(page, np.full(page.size, float(interval)), rank < x[page],
                               n_pages=n.size)

    # --- per-page sufficient statistics -------------------------------------------
    def _sum(self, weights: ArrayLike) -> FloatArray:
        return np.bincount(self.page, weights=np.asarray(weights, dtype=np.float64),
                           minlength=self.n_pages).astype(np.float64)

    @property
    def n_visits(self) -> IntArray:
        """Number of intervals (visits after the first) per page."""
        return np.bincount(self.page, minlength=self.n_pages).astype(np.int64)

    @property
    def n_changed(self) -> IntArray:
        """Number of visits that saw a change, per page (``X``)."""
        return np.bincount(self.page[self.changed], minlength=self.n_pages).astype(np.int64)

    @property
    def total_time(self) -> FloatArray:
        """Observed time per page (``T``: sum of intervals)."""
        return self._sum(self.interval)

    @property
    def unchanged_time(self) -> FloatArray:
        """Sum of the intervals that saw no change, per page."""
        return self._sum(np.where(self.changed, 0.0, self.interval))

    @property
    def has_last_modified(self) -> BoolArray:
        """Pages whose every changed visit carries a usable Last-Modified time."""
        missing = self.changed & np.isnan(self.since_modified)
        return np.asarray(np.bincount(self.page[missing], minlength=self.n_pages) == 0)

    @property
    def exposure(self) -> FloatArray:
        """Per page, time known to be free of changes: since-modified for visits that
        saw a change, the whole interval otherwise (``T`` of the Last-Modified
        estimator).  ``nan`` where a changed visit lacks Last-Modified."""
        part = np.where(self.changed, self.since_modified, self.interval)
        return self._sum(part)

    def interval_cv(self) -> FloatArray:
        """Coefficient of variation of each page's intervals (0 for regular visits)."""
        n = np.maximum(self.n_visits, 1)
        mean = self.total_time / n
        var = self._sum(self.interval**2) / n - mean**2
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.sqrt(np.maximum(var, 0.0)) / mean


