"""Per-page change-rate estimates of a crawl database, as a table (``export rates``).

The rates are those of ``webcrawl analyze changes``: the visit log of
:func:`~webcrawl.analysis.change.fetch_history.load_visit_log` and
:func:`~webcrawl.analysis.change.estimators.estimate_rates` with ``method="auto"``; this module
only lays them out one row per page with the estimator each page got.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import numpy as np
from numpy.typing import NDArray
from webcrawl.analysis.change.estimators import auto_estimators, estimate_rates
from webcrawl.analysis.change.fetch_history import (
    history_visit_log,
    read_history,
    resolve_day_seconds,
)

__all__ = ["RATE_COLUMNS", "PageRates", "export_rates", "page_rates"]

#: Columns of :func:`export_rates`.
RATE_COLUMNS = ("url", "url_id", "visits", "changes", "estimator", "rate_per_day",
                "lower_95", "upper_95", "day_seconds")


@dataclass(frozen=True, slots=True, eq=False)
class PageRates:
    """One entry per page with at least one visit (an HTTP answer).

    ``visits`` counts the page's present visits (2xx or 304); ``changes`` the changes
    observed between consecutive ones; ``rate`` (changes per day of ``day_seconds``)
    with its ``confidence`` interval ``lower``..``upper`` is nan for a page seen once.
    """

    url_ids: NDArray[np.int64]
    urls: list[str]
    visits: NDArray[np.int64]
    changes: NDArray[np.int64]
    estimator: NDArray[np.str_]
    rate: NDArray[np.float64]
    lower: NDArray[np.float64]
    upper: NDArray[np.float64]
    day_seconds: float
    confidence: float


def page_rates(db: str | Path, seconds_per_day: float | None = None, *,
               confidence: float = 0.95) -> PageRates:
    """Every visited page's change rate, estimated as ``analyze changes`` does.

    Parameters
    ----------
    db : str or Path
        The crawl database (crawl and revisit fetches).
    seconds_per_day : float, optional
        Length of a day on the crawl's clock.  Default: the one the revisit stored
        (:func:`~webcrawl.analysis.change.fetch_history.resolve_day_seconds`), else 86400.
    confidence : float, default 0.95
        Level of the intervals.

    Returns
    -------
    PageRates

    Raises
    ------
    AnalysisError
        No fetch has an HTTP answer.

    References
    ----------
    .. [1] J. Cho and H. Garcia-Molina, "Estimating frequency of change", ACM TOIT 3(3),
       2003 (the estimators of :mod:`webcrawl.analysis.change.estimators`).

    Examples
    --------
    >>> rates = page_rates("crawl.db", seconds_per_day=0.2)  # doctest: +SKIP
    >>> rates.estimator[:3]  # doctest: +SKIP
    array(['last_modified', 'last_modified', 'mle'], dtype='<U13')
    """
    history = read_history(db)
    seconds_per_day, _ = resolve_day_seconds(history.meta, seconds_per_day)
    loaded = history_visit_log(history, seconds_per_day)
    hist = loaded.log.history()
    est = estimate_rates(hist, confidence=confidence)
    visits = np.bincount(loaded.log.page[loaded.log.present], minlength=loaded.log.n_pages)
    pos = np.searchsorted(history.urls.ids, loaded.url_ids)
    urls = [history.urls.urls[i] for i in pos.tolist()] if history.urls.urls else []
    return PageRates(url_ids=loaded.url_ids, urls=urls, visits=visits.astype(np.int64),
                     changes=hist.n_changed.astype(np.int64),
                     estimator=auto_estimators(hist), rate=est.rate, lower=est.lower,
                     upper=est.upper, day_seconds=float(seconds_per_day),
                     confidence=confidence)


def export_rates(db: str | Path, out: TextIO, fmt: str = "tsv", *,
                 seconds_per_day: float | None = None) -> int:
    """Write :func:`page_rates` as rows of :data:`RATE_COLUMNS` (``tsv`` or ``jsonl``).

    Rates without a value (a page seen once) are empty (JSON ``null``); an unbounded
    upper limit is ``inf``.  Returns the number of rows.
    """
    from webcrawl.storage.export import write_rows

    r = page_rates(db, seconds_per_day)
    rows = zip(r.urls, r.url_ids.tolist(), r.visits.tolist(), r.changes.tolist(),
               [e or None for e in r.estimator.tolist()], _floats(r.rate),
               _floats(r.lower), _floats(r.upper), [r.day_seconds] * len(r.urls), strict=True)
    return write_rows(out, RATE_COLUMNS, rows, fmt)


def _floats(values: NDArray[np.float64]) -> list[float | None]:
    return [None if v != v else v for v in values.tolist()]
