"""Sitemap lastmod as a change signal, against the fixture web's truth.

The same revisit window (every page revisited once a day for 20 days) is estimated with
and without the sitemap (read twice a day, as the fixture serves it: ``lastmod`` the
last change, or on a lying host also a later false touch; ``changefreq`` the bucket
nearest the page's rate, the prior's centre).  More than half of the fixture's pages
change less than once in 20 days: no 20-day window says much about them, and there the
``changefreq`` prior is what helps; ``lastmod`` helps the pages that change several
times a day, whose daily revisits saturate.  Truthful lastmod
must at least halve the median relative error of the rate estimates; a lying one must
be detected (its host distrusted) and leave the error no worse than without signals.
"""

from __future__ import annotations

import numpy as np
import pytest
from webcrawl.analysis.change.refresh import PlannerSettings, RevisitPlanner
from webcrawl.analysis.change.signals import changefreq_rate
from webcrawl.fixtures.changes import PageClock
from webcrawl.fixtures.config import FixtureConfig
from webcrawl.fixtures.web import FixtureWeb, changefreq_word

DAYS = 20
READS_PER_DAY = 2


def _web(mode: str, seed: int) -> FixtureWeb:
    return FixtureWeb.build(FixtureConfig(pages=200, hosts=4, seed=seed,
                                          robots_disallow_fraction=0.0,
                                          sitemap_lastmod=(mode,)))


def _median_error(web: FixtureWeb, signals: bool, *, start: float = 0.0,
                  changefreq: bool = True) -> tuple[float, RevisitPlanner]:
    """Revisit every page daily from day ``start`` (phase spread over the day), read each
    host's sitemap twice a day; the median relative error of the planner's rates
    against the truth."""
    n = web.pages
    planner = RevisitPlanner(PlannerSettings(policy="uniform", budget_per_day=float(n),
                                             signals=signals, recompute_every=10**9))
    keys = list(range(n))
    planner.update_many(keys, np.full(n, start), [None] * n)
    planner.set_hosts(keys, web.host_of.tolist())
    if changefreq:
        planner.set_changefreq(keys, changefreq_rate([changefreq_word(float(r))
                                                      for r in web.rates]))
    clock = PageClock(web.changes)
    version = np.array([clock.state(p, start)[0] for p in range(n)], dtype=np.int64)
    phase = (np.arange(n) + 0.5) / n
    events = sorted([(start + d + float(phase[p]), 0, p) for d in range(1, DAYS)
                     for p in range(n)]
                    + [(start + r / READS_PER_DAY, 1, -1)
                       for r in range(1, DAYS * READS_PER_DAY)])
    for t, kind, p in events:
        if kind == 1:
            lastmod = [web.lastmod_at(q, t) for q in keys]
            planner.read_sitemap(keys, t, [np.nan if v is None else v for v in lastmod])
            continue
        v, _last = clock.state(p, t)
        planner.update(p, t, bool(v != version[p]))
        version[p] = v
    est = planner.rates()
    live = web.rates > 0
    return float(np.median(np.abs(est[live] - web.rates[live]) / web.rates[live])), planner


@pytest.mark.parametrize("seed", [1, 2])
def test_truthful_lastmod_halves_the_rate_error(seed):
    web = _web("true", seed)
    without, _ = _median_error(web, signals=False)
    with_signals, planner = _median_error(web, signals=True)
    assert with_signals <= 0.5 * without, (with_signals, without)
    sitemap_ok, _ = planner.signals.trusted(web.hosts + 1)
    assert sitemap_ok[1:].all()  # a truthful sitemap is never contradicted


@pytest.mark.parametrize("seed", [1, 2])
def test_lying_lastmod_is_detected_and_costs_nothing(seed):
    web = _web("lie", seed)
    without, _ = _median_error(web, signals=False)
    with_signals, planner = _median_error(web, signals=True)
    sitemap_ok, _ = planner.signals.trusted(web.hosts + 1)
    assert not sitemap_ok[1:].any()  # every lying host is distrusted
    assert with_signals <= without * (1 + 1e-9), (with_signals, without)


# Without ``changefreq``, ``lastmod`` must carry the gain alone.  Over a window that starts
# at the pages' creation it has little to add for the pages that change less often than
# daily (the daily revisits already see each of their changes): the gain comes from the
# first read, whose ``lastmod`` tells how long each page has gone unchanged before the
# window, so the pages here are a year old when the revisits begin.
YEAR = 365.0


@pytest.mark.parametrize("seed", [1, 2])
def test_lastmod_alone_reaches_back_before_the_window(seed):
    web = _web("true", seed)
    without, _ = _median_error(web, signals=False, start=YEAR, changefreq=False)
    with_signals, _ = _median_error(web, signals=True, start=YEAR, changefreq=False)
    # Measured 0.53 and 0.55 of the error without signals (seeds 1, 2; 0.95 and 0.80
    # without the first read): not the half that lastmod and changefreq together reach.
    assert with_signals <= 0.6 * without, (with_signals, without)


@pytest.mark.parametrize("seed", [1, 2])
def test_lastmod_at_creation_is_not_counted_as_a_change(seed):
    # A window from the pages' creation: every never-changed page's lastmod is its
    # creation, and counting it as a change would double those pages' rates.
    web = _web("true", seed)
    without, _ = _median_error(web, signals=False, changefreq=False)
    with_signals, _ = _median_error(web, signals=True, changefreq=False)
    assert with_signals <= without, (with_signals, without)


def test_first_read_is_change_free_time_since_lastmod():
    planner = RevisitPlanner(PlannerSettings(recompute_every=10**9))
    planner.update_many(["a", "b"], [0.0, 0.0], [None, None])
    planner.read_sitemap(["a", "b"], 1.0, [-29.0, 1.0])  # b: lastmod at the read
    hist = planner.history()
    assert hist.page.tolist() == [0]
    assert hist.interval.tolist() == [30.0]
    assert hist.changed.tolist() == [False]
    # The posterior mode with the Gamma(1 change, 7 days) prior: 1 / (30 + 7).
    assert planner.rates()[0] == pytest.approx(1 / 37)
