"""The change section of the crawl report (:mod:`webcrawl.analysis.report.document`): change rates,
freshness.

Rates are posterior modes (:func:`analysis.change.estimators.map_rate`) from the visit log of
every fetch with an HTTP answer
(:func:`webcrawl.analysis.change.fetch_history.history_visit_log`, Last-Modified
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
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from webcrawl.analysis.change.fetch_history import DAY_SECONDS_KEYS, resolve_day_seconds
from webcrawl.analysis.report.html import Section, table

if TYPE_CHECKING:
    from webcrawl.analysis.change.change_stats import VisitLog
    from webcrawl.analysis.change.visit_history import VisitHistory
    from webcrawl.analysis.report.context import ReportContext

__all__ = ["DAY_SECONDS_KEYS", "changes_section"]



def changes_section(ctx: ReportContext, sec: Section) -> None:
    """The ``changes`` section: estimated change rates (vs truth if given), freshness."""
    from webcrawl.analysis.change.estimators import map_rate
    from webcrawl.analysis.change.fetch_history import history_visit_log
    from webcrawl.analysis.report.figures import rate_histogram_figure
    from webcrawl.storage.reader import FETCH_KINDS

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
    win = _window(ctx, log, hist, known, t0, day)
    rows: list[list[Any]] = [["revisits", revisits], ["pages with a rate estimate",
                                                       int(known.sum())],
                             ["length of a day on the clock", f"{day:g} s"],
                             ["observation window", win.sentence()],
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
    ctx.figures["changes"] = {
        "revisits": revisits, "days": win.days, "pages": int(known.sum()),
        "changed_pages": int(np.count_nonzero(known & (hist.n_changed > 0))),
        "median_rate": float(np.median(est[known])),
        "rate_error": ctx.rate_error[0] if ctx.rate_error else None}
    sec.add(table(["", ""], rows, header=False))
    _interval_table(sec, log, win)
    seen = known & (hist.n_changed > 0)
    drawn = np.where(seen, est, np.nan)
    sec.image(rate_histogram_figure(drawn, None if true is None else np.where(seen, true, np.nan),
                                    bins=ctx.settings.rate_bins,
                                    title=f"Estimated change rates ({win.days:.3g}-day "
                                          "window)"),
              "histogram of estimated change rates",
              caption=f"Pages with a change seen ({int(seen.sum()):,}) over the "
                      f"{win.days:.3g}-day window. The {int((known & ~seen).sum()):,} "
                      "pages with no change seen are censored, not drawn: their rate is "
                      "only bounded above (table above).")
    _freshness(ctx, sec, log, est, (t0, day), win)


@dataclass(frozen=True)
class _Window:
    """The observation window of the change section, days since the first fetch."""

    start: float
    end: float
    revisit_start: float
    revisit_end: float
    median_span: float

    @property
    def days(self) -> float:
        return self.end - self.start

    def sentence(self) -> str:
        return (f"{self.days:.3g} days: from the first fetch (day {self.start:.3g}) to the "
                f"last revisit (day {self.end:.3g}); the revisits ran from day "
                f"{self.revisit_start:.3g} to day {self.revisit_end:.3g} "
                f"({self.revisit_end - self.revisit_start:.3g} days); each page is observed "
                f"from its first to its last answered visit (median {self.median_span:.3g} "
                "days)")


def _window(ctx: ReportContext, log: VisitLog, hist: VisitHistory, known: np.ndarray,
            t0: float, day: float) -> _Window:
    from webcrawl.storage.reader import FETCH_KINDS

    f = ctx.fetches
    rev = f["kind"] == FETCH_KINDS.index("revisit")
    return _Window(float(log.time.min()), float(log.time.max()),
                   (float(f["started_at"][rev].min()) - t0) / day,
                   (float(f["ended_at"][rev].max()) - t0) / day,
                   float(np.median(hist.total_time[known])))


def _interval_table(sec: Section, log: VisitLog, win: _Window) -> None:
    """Pages by mean change interval, in the buckets the window can tell apart, and the
    censored pages (no change seen) in a column of their own."""
    from webcrawl.analysis.change.change_stats import (
        bucket_fractions,
        mean_change_intervals,
        window_buckets,
    )

    buckets = window_buckets(win.days)
    censored = (f"no change seen (censored: interval >= the page's observed span, median "
                f"{win.median_span:.3g} days)")
    columns = (*buckets[:-1], (buckets[-1][0], float(np.finfo(np.float64).max)),
               (censored, math.inf))
    intervals = mean_change_intervals(log)
    fractions = bucket_fractions(intervals, columns)
    counted = int(np.count_nonzero(~np.isnan(intervals)))
    sec.add(f"<h3>Pages by mean change interval ({win.days:.3g}-day window)</h3>")
    sec.text(f"Shares of the {counted:,} pages visited at least twice with an answer. "
             f"Intervals as webcrawl analyze changes estimates them, in the buckets of Cho "
             f"and Garcia-Molina that a {win.days:.3g}-day window can tell apart (theirs was "
             "four months). A page with no change seen is censored: its interval is only "
             "known to be at least its observed span, so it is counted apart, never as a "
             "long interval.")
    sec.add(table([label for label, _ in columns], [[f"{100.0 * b:.1f}%" for b in fractions]]))


def _no_change_rows(hist: VisitHistory, known: np.ndarray) -> list[list[Any]]:
    """Pages with no change seen: their count and the upper bounds on their rates.

    Their posterior modes above are the prior's; what the data say is an upper bound
    (:func:`webcrawl.analysis.change.estimators.no_change_upper_bound`, one-sided 95%).
    """
    from webcrawl.analysis.change.estimators import no_change_upper_bound

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
               clock: tuple[float, float], win: _Window) -> None:
    """Observed freshness at revisits, expected freshness under the estimates, and the
    truth when given; ``clock`` is (wall time of day 0, seconds per day)."""
    from webcrawl.analysis.change.freshness import estimated_freshness, expected_freshness
    from webcrawl.analysis.report.figures import freshness_figure

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
    sec.add(f"<h3>Freshness ({win.days:.3g}-day window)</h3>")
    policy = _policy_sentence(ctx.meta)
    if policy:
        sec.text(policy)
    sec.text(f"Expected time-averaged freshness over the {end - start:.3g}-day window (day "
             f"{start:.3g} to day {end:.3g}): {mean_f:.3f}; expected age {mean_a:.3g} days "
             "(Cho and Garcia-Molina).")
    sec.image(freshness_figure(curves, title=f"Freshness of the collection ({win.days:.3g}-"
                                             f"day window)"),
              "freshness of the collection over time",
              caption=f"Expected freshness over the whole {win.days:.3g}-day window (day "
                      f"{start:.3g} to {end:.3g}); revisits, and so the observed points, only "
                      f"from day {win.revisit_start:.3g} to day {win.revisit_end:.3g} "
                      f"({win.revisit_end - win.revisit_start:.3g} days).")


#: What each revisit policy is, for the report's freshness section.
_POLICY_WORDS = {
    "uniform": "every page as often as the next",
    "proportional": "each page in proportion to its estimated change rate",
    "optimal": "the optimum for the fetch budget alone (Cho and Garcia-Molina), held to "
               "each host's politeness only when fetching",
    "optimal_age": "the age-minimising optimum for the fetch budget alone (Cho and "
                   "Garcia-Molina)",
    "polite_optimal": "the optimum under the fetch budget and every host's politeness "
                      "limit (Kolobov et al. 2019)",
}
#: The objectives of the optimal policies, in the papers' terms.
_OBJECTIVE_WORDS = {
    "freshness": "binary freshness (Cho and Garcia-Molina)",
    "age": "age (Cho and Garcia-Molina)",
    "harmonic": "harmonic staleness (Kolobov et al.)",
}


def _policy_sentence(meta: dict[str, str]) -> str:
    """The policy (and, for the optimal ones, the objective and importance) the last
    revisit ran with, from the crawl's meta keys; empty when none is stored."""
    policy = meta.get("revisit_policy")
    if not policy:
        return ""
    text = (f"Revisit policy: {policy.replace('_', '-')}, "
            f"{_POLICY_WORDS.get(policy, 'not one webcrawl knows')}")
    if policy in ("optimal", "optimal_age", "polite_optimal"):
        objective = meta.get("revisit_objective", "age" if policy == "optimal_age"
                             else "freshness")
        text += (f"; objective {_OBJECTIVE_WORDS.get(objective, objective)}, page "
                 f"importance {meta.get('revisit_importance', 'uniform')}")
    return text + "."


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
