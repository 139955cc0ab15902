"""The change section of the crawl report (:mod:`analysis.report.document`): change rates,
freshness.

Rates are posterior modes (:func:`analysis.change.estimators.map_rate`) from the visit log of
every fetch with an HTTP answer
(:func:`analysis.change.fetch_history.history_visit_log`, Last-Modified
on a fitted server clock), compared with the truth when the caller gives it.

References
----------
.. [1] J. Cho and H. Garcia-Molina, "Estimating frequency of change", ACM TOIT 3(3), 2003.
.. [2] J. Cho and H. Garcia-Molina, "Synchronizing a database to improve freshness",
   SIGMOD 2000.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from analysis.change.fetch_history import DAY_SECONDS_KEYS, resolve_day_seconds
from analysis.report.html import Section, table

if TYPE_CHECKING:
    from analysis.change.change_stats import VisitLog
    from analysis.change.visit_history import VisitHistory
    from analysis.report.context import ReportContext

__all__ = ["DAY_SECONDS_KEYS", "changes_section"]



def changes_section(ctx: ReportContext, sec: Section) -> None:
    """The ``changes`` section: estimated change rates (vs truth if given), freshness."""
    from analysis.change.change_stats import CHANGE_BUCKETS, bucket_fractions
    from analysis.change.estimators import map_rate
    from analysis.change.fetch_history import history_visit_log
    from analysis.report.figures import rate_histogram_figure
    from storage.reader import FETCH_KINDS

    revisits = int(np.count_nonzero(ctx.fetches["kind"] == FETCH_KINDS.index("revisit")))
    if revisits == 0:
        sec.none("No revisit data: this crawl was not revisited, so there are no change "
                 "rates or freshness to show (webcrawl revisit adds them).")
        return
    day = _day_seconds(ctx)
    log, page_ids, t0 = history_visit_log(ctx.history, day, at="midpoint",
                                          server_clock="fitted")
    hist = log.history()
    est = map_rate(hist, prior_changes=ctx.settings.rate_prior_changes,
                   prior_time=ctx.settings.rate_prior_days)
    known = hist.n_visits > 0
    est[~known] = np.nan  # the prior alone says nothing about the page
    if not known.any():
        sec.none(f"{revisits} revisits, but no page was visited twice with an answer: "
                 "no change rate can be estimated.")
        return
    true = _true_rates(ctx, page_ids)
    rows: list[list[Any]] = [["revisits", revisits], ["pages with a rate estimate",
                                                       int(known.sum())],
                             ["length of a day on the clock", f"{day:g} s"],
                             ["estimator", "posterior mode (Gamma prior: "
                              f"{ctx.settings.rate_prior_changes:g} change in "
                              f"{ctx.settings.rate_prior_days:g} days), Last-Modified used"],
                             ["median estimated rate", f"{np.median(est[known]):.3g} / day"]]
    rows += _no_change_rows(hist, known)
    if true is not None:
        ok = known & np.isfinite(true) & (true > 0)
        if ok.any():
            rel = np.abs(est[ok] - true[ok]) / true[ok]
            ctx.rate_error = (float(np.median(rel)), int(ok.sum()))
            rows.append(["median relative error vs truth",
                         f"{ctx.rate_error[0]:.3f} over {ctx.rate_error[1]:,} pages"])
    rows += [[k, v] for k, v in ctx.inputs.change_facts.items()]
    sec.add(table(["", ""], rows, header=False))
    with np.errstate(divide="ignore"):  # a rate of 0: an infinite interval, the last bucket
        buckets = bucket_fractions(1.0 / est[known])
    sec.add("<h3>Pages by estimated mean change interval</h3>")
    sec.add(table([label for label, _ in CHANGE_BUCKETS],
                  [[f"{100.0 * b:.1f}%" for b in buckets]]))
    sec.image(rate_histogram_figure(est, true, bins=ctx.settings.rate_bins),
              "histogram of estimated change rates")
    _freshness(ctx, sec, log, est, (t0, day))


def _no_change_rows(hist: VisitHistory, known: np.ndarray) -> list[list[Any]]:
    """Pages with no change seen: their count and the upper bounds on their rates.

    Their posterior modes above are the prior's; what the data say is an upper bound
    (:func:`analysis.change.estimators.no_change_upper_bound`, one-sided 95%).
    """
    from analysis.change.estimators import no_change_upper_bound

    none = known & (hist.n_changed == 0)
    rows: list[list[Any]] = [["pages with a change seen", int((known & ~none).sum())],
                             ["pages with no change seen", int(none.sum())]]
    if none.any():
        days = hist.total_time[none]
        bound = no_change_upper_bound(days)
        pooled = float(no_change_upper_bound([float(days.sum())])[0])
        rows += [["their rates (95% upper bound, about 3 / days observed)",
                  f"below {np.median(bound):.3g} / day (median page, "
                  f"{np.median(days):.3g} days observed), below {bound.max():.3g} / day "
                  "for every one"],
                 ["their time-weighted mean rate (95% upper bound)",
                  f"below {pooled:.3g} / day (mean change interval above "
                  f"{1.0 / pooled:.3g} days)"]]
    return rows


def _day_seconds(ctx: ReportContext) -> float:
    """The report's ``seconds_per_day`` if set, else the stored one, else 86400."""
    return resolve_day_seconds(ctx.meta, ctx.settings.seconds_per_day)[0]


def _true_rates(ctx: ReportContext, page_ids: np.ndarray) -> np.ndarray | None:
    truth = ctx.inputs.true_rates
    if truth is None:
        return None
    pos = np.searchsorted(ctx.urls.ids, page_ids)
    return np.array([truth.get(ctx.urls.urls[p], math.nan) for p in pos.tolist()])


def _freshness(ctx: ReportContext, sec: Section, log: VisitLog, est: np.ndarray,
               clock: tuple[float, float]) -> None:
    """Observed freshness at revisits, expected freshness under the estimates, and the
    truth when given; ``clock`` is (wall time of day 0, seconds per day)."""
    from analysis.change.freshness import estimated_freshness, expected_freshness
    from analysis.report.figures import freshness_figure

    pres = log.present
    page, t = log.page[pres], log.time[pres]
    start, end = float(log.time.min()), float(log.time.max())
    if not end > start:
        return
    points = ctx.settings.freshness_points
    edges = np.linspace(start, end, points + 1)
    seen = log.changed[pres] >= 0
    which = np.clip(np.searchsorted(edges, t[seen], side="right") - 1, 0, points - 1)
    n_bin = np.bincount(which, minlength=points)
    fresh_bin = np.bincount(which, weights=(log.changed[pres][seen] == 0), minlength=points)
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = np.where(n_bin > 0, fresh_bin / np.maximum(n_bin, 1), np.nan)
    rated = np.isfinite(est[page])
    grid = edges[1:]
    expected = np.array([_expected_at(est, page[rated], t[rated], at, expected_freshness)
                         for at in grid])
    curves: dict[str, tuple[Any, Any]] = {
        "revisits that found the copy unchanged": (0.5 * (edges[:-1] + edges[1:]), observed),
        "expected under the estimated rates": (grid, expected)}
    if ctx.inputs.truth_freshness is not None:
        wall, fresh = ctx.inputs.truth_freshness
        curves["true (fixture ground truth)"] = ((np.asarray(wall) - clock[0]) / clock[1], fresh)
    keep = np.isfinite(est)
    remap = np.cumsum(keep) - 1
    mean_f, mean_a = estimated_freshness(est[keep], remap[page[rated]], t[rated], start, end)
    sec.add("<h3>Freshness</h3>")
    sec.text(f"Expected time-averaged freshness over the {end - start:.3g}-day window: "
             f"{mean_f:.3f}; expected age {mean_a:.3g} days (Cho and Garcia-Molina).")
    sec.image(freshness_figure(curves), "freshness of the collection over time")


def _expected_at(rate: np.ndarray, page: np.ndarray, t: np.ndarray, at: float,
                 expected_freshness: Callable[..., np.ndarray]) -> float:
    """Mean expected freshness at ``at`` of the pages visited by then (last visit <= at)."""
    before = t <= at
    if not before.any():
        return math.nan
    last = np.full(rate.size, -np.inf)
    np.maximum.at(last, page[before], t[before])
    have = np.isfinite(last)
    return float(np.mean(expected_freshness(rate[have], last[have], at)))
