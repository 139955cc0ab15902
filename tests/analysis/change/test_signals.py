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


def _median_error(web: FixtureWeb, signals: bool) -> tuple[float, RevisitPlanner]:
    """Revisit every page daily (phase spread over the day), read each host's sitemap
    twice a day; the median relative error of the planner's rates against the truth."""
    n = web.pages
    planner = RevisitPlanner(PlannerSettings(policy="uniform", budget_per_day=float(n),
                                             signals=signals, recompute_every=10**9))
    keys = list(range(n))
    planner.update_many(keys, np.zeros(n), [None] * n)
    planner.set_hosts(keys, web.host_of.tolist())
    planner.set_changefreq(keys, changefreq_rate([changefreq_word(float(r)) for r in web.rates]))
    clock = PageClock(web.changes)
    version = np.zeros(n, dtype=np.int64)
    phase = (np.arange(n) + 0.5) / n
    events = sorted([(d + float(phase[p]), 0, p) for d in range(1, DAYS) for p in range(n)]
                    + [(r / READS_PER_DAY, 1, -1) for r in range(1, DAYS * READS_PER_DAY)])
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
