"""The politeness-aware optimal policy through the live revisit loop (simulated clock).

A fixture web whose biggest host holds half the pages and asks ``Crawl-delay: 2`` (10
requests per simulated day of 20 s) is crawled at day 0 (the crawl ignores the delay:
it takes no time) and revisited under the budget of half a visit per page and day, by
Cho's optimal (planned for the budget alone, held to the delay when fetching) and by
the politeness-aware optimal.  On the simulated clock the visits depend on the seed and
the settings only, so the run is the same on any machine.
"""

from __future__ import annotations

import asyncio
import sqlite3

import numpy as np
import pytest
from scipy import optimize
from simserved import EPOCH, ServerClock, sim_settings
from webcrawl.analysis.change.objectives import page_utility
from webcrawl.analysis.change.revisit_eval import SimClock, evaluate_revisit, load_refreshes
from webcrawl.crawler import RevisitCrawler, RevisitSettings, crawl
from webcrawl.crawler.revisit.clock import SimulatedClock
from webcrawl.fixtures import FixtureConfig, FixtureWeb, serve_in_thread

DAY = 20.0          # simulated seconds per day
DELAY = 2.0         # the big host's Crawl-delay: DAY / DELAY = 10 requests a day
DAYS = 12


def _slsqp(rates: np.ndarray, big: np.ndarray, budget: float, limit: float) -> float:
    """Expected freshness per page of the optimum, by SLSQP (independent of ours)."""
    cons = [{"type": "ineq", "fun": lambda f: budget - f.sum()},
            {"type": "ineq", "fun": lambda f: limit - f[big].sum()}]
    start = np.where(big, 0.5 * limit / big.sum(), 0.5 * (budget - limit) / (~big).sum())
    res = optimize.minimize(lambda f: -page_utility("freshness", rates, f).sum(), start,
                            bounds=[(1e-9, budget)] * rates.size, constraints=cons,
                            method="SLSQP", options={"ftol": 1e-12, "maxiter": 1000})
    return float(-res.fun / rates.size)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    web = FixtureWeb.build(FixtureConfig(
        pages=60, hosts=4, seed=5, robots_disallow_fraction=0.0, day_seconds=DAY,
        host_weights=(0.5, 0.5 / 3, 0.5 / 3, 0.5 / 3), host_crawl_delays=((0, DELAY),)))
    clock = ServerClock()
    work = tmp_path_factory.mktemp("polite")
    base = work / "crawl.db"
    out = {}
    with serve_in_thread(web, clock=clock.monotonic) as server:
        crawl([server.seed_url], base, sim_settings(polite_max_crawl_delay=0.0))
        with sqlite3.connect(base) as conn:  # the crawl happened at simulated day 0
            conn.execute("UPDATE fetches SET started_at = ?, ended_at = ?", (EPOCH, EPOCH))
        index = {web.url_of(p, server.port): p for p in range(web.pages)}
        for policy in ("optimal", "polite_optimal"):
            db = work / f"{policy}.db"
            with sqlite3.connect(base) as src, sqlite3.connect(db) as dst:
                src.backup(dst)
            with sqlite3.connect(db) as conn:
                url_of = dict(conn.execute("SELECT id, url FROM urls").fetchall())
            clock.current = sim = SimulatedClock(epoch=EPOCH)
            sim.advance_to(DAY)  # revisits from day 1
            collection = load_refreshes(db).urls  # the pages the crawl fetched as HTML
            n = len(collection)
            true = {u: float(web.rates[index[u]]) for u in collection}
            settings = RevisitSettings(policy=policy, budget=0.5 * n / DAY,
                                       duration=DAYS * DAY, day_seconds=DAY)
            crawler = RevisitCrawler(db, settings, sim_settings(), true_rates=true, clock=sim,
                                     overrides={"polite_max_crawl_delay": 60.0})
            asyncio.run(crawler.run())
            out[policy] = (crawler, db, url_of, collection)
    return web, index, out


def _fetched(db, index, url_of):
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT url_id, started_at FROM fetches WHERE kind = 'revisit' "
                            "ORDER BY started_at").fetchall()
    return [(index[url_of[u]], t) for u, t in rows]


def test_big_host_limit_is_read_from_the_politeness_rule(runs):
    _web, _index, out = runs
    for crawler, *_ in out.values():
        big = {h for h, per_day in crawler.host_limits.items() if np.isfinite(per_day)}
        assert len(big) == 1
        assert crawler.host_limits[big.pop()] == pytest.approx(DAY / DELAY)


def test_every_revisit_of_the_big_host_waits_its_crawl_delay(runs):
    web, index, out = runs
    for _crawler, db, url_of, _collection in out.values():
        times = [t for p, t in _fetched(db, index, url_of) if web.host_of[p] == 0]
        # Busy (Cho's plan asks more of it than it allows), yet never faster than allowed.
        assert DAYS * DAY / DELAY / 2 < len(times) <= DAYS * DAY / DELAY + 1
        assert np.diff(times).min() >= DELAY - 1e-6


def test_polite_plan_reaches_the_independent_optimum(runs):
    web, index, out = runs
    crawler, _db, url_of, _collection = out["polite_optimal"]
    pages = np.array([index[url_of[int(k)]] for k in crawler.planner.pages])
    rates, big = web.rates[pages], web.host_of[pages] == 0
    freq = crawler.planner.frequencies()
    budget = 0.5 * pages.size
    assert freq[big].sum() <= DAY / DELAY * (1 + 1e-9)
    assert freq.sum() == pytest.approx(budget)
    ours = float(page_utility("freshness", rates, freq).mean())
    assert ours >= 0.98 * _slsqp(rates, big, budget, DAY / DELAY)
    # Cho's plan asks more of the big host than it allows: politeness binds here.
    cho = out["optimal"][0].planner.frequencies()
    assert cho[big].sum() > 1.2 * DAY / DELAY


def test_polite_optimal_is_fresher_than_cho_throttled_on_the_live_loop(runs):
    web, index, out = runs
    fresh = {}
    for policy, (_crawler, db, _url_of, collection) in out.items():
        change = {u: web.change_times(index[u], DAYS + 2.0) for u in collection}
        ev = evaluate_revisit(db, change, SimClock(EPOCH, 0.0, DAY), EPOCH + DAY,
                              EPOCH + (DAYS + 1) * DAY)
        fresh[policy] = ev.freshness
    assert fresh["polite_optimal"] > fresh["optimal"], fresh
