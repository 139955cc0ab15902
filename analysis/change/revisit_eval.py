"""Freshness and age of a revisited collection, from a crawl database.

A revisit run (``webcrawl revisit``, :mod:`webcrawl.crawler.revisit.loop`) leaves in the database,
per page of the collection (URLs fetched as HTML by the crawl), its *refreshes*: the
crawl fetch (the first refresh) and every successful revisit (2xx or 304; a 304 also
confirms the copy is current).  From them:

* :func:`evaluate_revisit` computes the exact time-averaged freshness and age of the
  local copy against ground truth (per URL, the true change times in simulated days),
  with :func:`analysis.change.freshness.evaluate_freshness`; wall-clock fetch times are mapped
  to simulated days by a :class:`SimClock`;
* :func:`estimated_revisit_freshness` computes what the crawler can say about itself
  without truth: the expected freshness and age under rates estimated from its own
  observations (:func:`revisit_rates`, the posterior mode of
  :func:`webcrawl.analysis.change.estimators.map_rate`), with
  :func:`webcrawl.analysis.change.freshness.estimated_freshness`.

A refresh's time is the midpoint of its request (the server answers in between).
Pages that went away (404/410) keep their last copy; the truth's change times say
whether it is fresh (the fixture's change process does not model deaths as changes).

References
----------
.. [1] J. Cho and H. Garcia-Molina, "Synchronizing a database to improve freshness",
   SIGMOD 2000 (freshness and age).
.. [2] J. Cho and H. Garcia-Molina, "Estimating frequency of change", ACM TOIT 3(3), 2003.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike
from webcrawl.analysis.change.estimators import VisitHistory, map_rate
from webcrawl.analysis.change.fetch_history import Refreshes, load_refreshes
from webcrawl.analysis.change.freshness import (
    FreshnessResult,
    estimated_freshness,
    evaluate_freshness,
)
from webcrawl.storage.arrays import FloatArray
from webcrawl.storage.errors import AnalysisError, ConfigError

__all__ = [
    "Refreshes",
    "RevisitEvaluation",
    "SimClock",
    "estimated_revisit_freshness",
    "evaluate_revisit",
    "load_refreshes",
    "revisit_rates",
]



@dataclass(frozen=True)
class SimClock:
    """Wall clock to simulated days: ``sim_day + (wall - wall_ref) / day_seconds``.

    One reference pair (a wall-clock instant and the simulated day at that instant,
    e.g. ``time.time()`` and ``server.sim_days()`` read together) and the real seconds
    per simulated day.
    """

    wall_ref: float
    sim_day: float
    day_seconds: float

    def __post_init__(self) -> None:
        if not self.day_seconds > 0:
            raise ConfigError(f"day_seconds must be positive, got {self.day_seconds}")

    def days(self, wall: ArrayLike) -> FloatArray:
        return np.asarray(self.sim_day + (np.asarray(wall, dtype=np.float64) - self.wall_ref)
                          / self.day_seconds, dtype=np.float64)


def revisit_rates(ref: Refreshes, day_seconds: float, *, prior_changes: float = 1.0,
                  prior_days: float = 7.0) -> FloatArray:
    """Change rates per day estimated from the refreshes' changed flags (posterior mode).

    Each refresh after the first closes an interval; intervals ending in an unknown
    flag are dropped (their time still separates the others).  The estimate is
    :func:`analysis.change.estimators.map_rate` with the revisit planner's default prior, so it
    is finite and positive for every page, the prior's ``prior_changes / prior_days``
    for a page never revisited.
    """
    if not day_seconds > 0:
        raise ConfigError(f"day_seconds must be positive, got {day_seconds}")
    same = ref.page[1:] == ref.page[:-1]
    dt = np.diff(ref.time) / day_seconds
    keep = same & (dt > 0) & (ref.changed[1:] >= 0)
    hist = VisitHistory.from_arrays(ref.page[1:][keep], dt[keep], ref.changed[1:][keep] == 1,
                                    n_pages=ref.n_pages)
    return map_rate(hist, prior_changes=prior_changes, prior_time=prior_days)


@dataclass(frozen=True, eq=False)
class RevisitEvaluation:
    """Freshness and age of a revisited collection over a window (simulated days)."""

    freshness: float
    age: float
    estimated_freshness: float
    estimated_age: float
    start: float
    end: float
    n_pages: int
    n_refreshes: int
    result: FreshnessResult

    def as_dict(self) -> dict[str, float | int]:
        return {"freshness": self.freshness, "age": self.age,
                "estimated_freshness": self.estimated_freshness,
                "estimated_age": self.estimated_age, "start": self.start, "end": self.end,
                "pages": self.n_pages, "refreshes": self.n_refreshes}


def _window(ref: Refreshes, start: float | None, end: float | None) -> tuple[float, float]:
    lo = ref.revisit_start if start is None else start
    hi = ref.revisit_end if end is None else end
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise AnalysisError("no revisit in the database: give the window explicitly")
    if not hi > lo:
        raise ConfigError("the window must have end > start")
    return lo, hi


def evaluate_revisit(
    db: str | Path,
    change_times: Mapping[str, ArrayLike],
    clock: SimClock,
    start: float | None = None,
    end: float | None = None,
    *,
    prior_changes: float = 1.0,
    prior_days: float = 7.0,
) -> RevisitEvaluation:
    """Time-averaged freshness and age of the collection against the true change times.

    Parameters
    ----------
    db : path
        The crawl database after a revisit run.
    change_times : mapping of URL to array of float
        Every collection URL's true change times, in simulated days (a URL missing from
        it is an error: the truth must cover the collection).
    clock : SimClock
        Maps the database's wall-clock times to simulated days.
    start, end : float, optional
        The window, wall-clock seconds (default: from the first revisit's start to the
        last one's end).
    prior_changes, prior_days : float
        Prior of the rate estimates behind the estimated figures.

    Returns
    -------
    RevisitEvaluation
        ``freshness`` and ``age`` (days) exact against the truth; ``estimated_freshness``
        and ``estimated_age`` as the crawler would estimate them (no truth).

    Notes
    -----
    Refreshes before the window count (the copy they made); the crawl fetch is each
    page's first refresh.  ``O((C + R) log(C + R))`` for C changes and R refreshes.

    References
    ----------
    .. [1] Cho and Garcia-Molina, SIGMOD 2000, definitions 1 and 2.
    """
    ref = load_refreshes(db)
    lo, hi = _window(ref, start, end)
    missing = [u for u in ref.urls if u not in change_times]
    if missing:
        raise AnalysisError(f"no true change times for {len(missing)} of the {ref.n_pages} "
                            f"pages (e.g. {missing[0]})")
    times = [np.asarray(change_times[u], dtype=np.float64) for u in ref.urls]
    cp = np.repeat(np.arange(ref.n_pages), [t.size for t in times])
    ct = np.concatenate(times) if times else np.zeros(0)
    s_lo, s_hi = (float(v) for v in clock.days([lo, hi]))
    res = evaluate_freshness(cp, ct, ref.page, clock.days(ref.time), ref.n_pages, s_lo, s_hi)
    ef, ea = _estimated(ref, clock.day_seconds, lo, hi, prior_changes, prior_days)
    return RevisitEvaluation(res.freshness, res.age, ef, ea, s_lo, s_hi, ref.n_pages,
                             int(ref.page.size), res)


def _estimated(ref: Refreshes, day_seconds: float, lo: float, hi: float,
               prior_changes: float, prior_days: float) -> tuple[float, float]:
    rates = revisit_rates(ref, day_seconds, prior_changes=prior_changes, prior_days=prior_days)
    origin = float(ref.time.min())
    return estimated_freshness(rates, ref.page, (ref.time - origin) / day_seconds,
                               (lo - origin) / day_seconds, (hi - origin) / day_seconds)


def estimated_revisit_freshness(
    db: str | Path,
    day_seconds: float,
    start: float | None = None,
    end: float | None = None,
    *,
    prior_changes: float = 1.0,
    prior_days: float = 7.0,
) -> tuple[float, float]:
    """Expected time-averaged (freshness, age in days) from the crawler's own observations.

    No ground truth: the rates are estimated from the stored changed flags
    (:func:`revisit_rates`) and the expectation taken under the Poisson model
    (:func:`webcrawl.analysis.change.freshness.estimated_freshness`).  ``day_seconds`` converts wall
    seconds to days (the revisit run's; 86400 on the real web).  Window as in
    :func:`evaluate_revisit`.

    References
    ----------
    .. [1] Cho and Garcia-Molina, TOIT 2003 (estimating the rates);
       SIGMOD 2000 (expected freshness of a Poisson page).
    """
    ref = load_refreshes(db)
    lo, hi = _window(ref, start, end)
    return _estimated(ref, day_seconds, lo, hi, prior_changes, prior_days)
