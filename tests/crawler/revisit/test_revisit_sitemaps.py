"""Sitemap change signals through the live revisit loop (simulated clock).

A fixture web whose hosts serve ``/sitemap.xml`` with truthful ``lastmod`` (and
``changefreq``) is crawled with sitemaps at day 0 and revisited for ``DAYS`` simulated
days, every page about once a day, with the sitemaps read every half day (on by
default: the crawl read them) and without them.  The first host asks ``Crawl-delay``,
so its sitemap requests share its one politeness clock with its revisits.  On the
simulated clock the run depends on the seed and the settings only.
"""

from __future__ import annotations

import asyncio
import sqlite3

import numpy as np
import pytest
from simserved import EPOCH, ServerClock, sim_settings
from webcrawl.crawler import RevisitCrawler, RevisitSettings, crawl
from webcrawl.crawler.revisit.clock import SimulatedClock
from webcrawl.fixtures import FixtureConfig, FixtureWeb, serve_in_thread

DAY = 20.0          # simulated seconds per day
DELAY = 0.5         # the first host's Crawl-delay (seconds)
DAYS = 10
INTERVAL = 0.5      # days between two sitemap reads of a host


def _runs(tmp_path_factory, mode):
    """The web with every host's sitemap in ``mode``, revisited with and without it."""
    web = FixtureWeb.build(FixtureConfig(
        pages=60, hosts=2, seed=3, robots_disallow_fraction=0.0, day_seconds=DAY,
        sitemap_lastmod=(mode,), host_crawl_delays=((0, DELAY),)))
    clock = ServerClock()
    work = tmp_path_factory.mktemp(f"sitemaps-{mode}")
    base = work / "crawl.db"
    out = {}
    with serve_in_thread(web, clock=clock.monotonic) as server:
        crawl([server.seed_url], base, sim_settings(polite_max_crawl_delay=0.0,
                                                 sitemaps_follow=True))
        with sqlite3.connect(base) as conn:  # the crawl happened at simulated day 0
            conn.execute("UPDATE fetches SET started_at = ?, ended_at = ?", (EPOCH, EPOCH))
        index = {web.url_of(p, server.port): p for p in range(web.pages)}
        for name, sitemaps in (("with", None), ("without", False)):
            db = work / f"{name}.db"
            with sqlite3.connect(base) as src, sqlite3.connect(db) as dst:
                src.backup(dst)
            clock.current = sim = SimulatedClock(epoch=EPOCH)
            sim.advance_to(DAY)  # revisits from day 1
            settings = RevisitSettings(policy="uniform", budget=web.pages / DAY,
                                       duration=DAYS * DAY, day_seconds=DAY,
                                       sitemaps=sitemaps, sitemap_interval=INTERVAL)
            crawler = RevisitCrawler(db, settings, sim_settings(), clock=sim,
                                     overrides={"polite_max_crawl_delay": 60.0})
            asyncio.run(crawler.run())
            with sqlite3.connect(db) as conn:
                url_of = dict(conn.execute("SELECT id, url FROM urls").fetchall())
            out[name] = (crawler, db, url_of)
    return web, index, out


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return _runs(tmp_path_factory, "true")


@pytest.fixture(scope="module")
def lying(tmp_path_factory):
    """Sitemaps whose ``lastmod`` also moves at false touches, once a page a day."""
    return _runs(tmp_path_factory, "lie")


def _median_error(web, index, crawler, url_of):
    pages = np.array([index[url_of[int(k)]] for k in crawler.planner.pages])
    truth, est = web.rates[pages], crawler.planner.rates()
    live = truth > 0
    return float(np.median(np.abs(est[live] - truth[live]) / truth[live]))


def test_sitemaps_default_to_the_crawls_choice_and_are_read_every_interval(runs):
    _web, _index, out = runs
    with_reads, without = out["with"][0].sitemaps, out["without"][0].sitemaps
    assert without is None
    assert with_reads is not None
    reads = DAYS / INTERVAL  # at day 1, 1.5, ..., DAYS + 0.5
    days = {h: [d for g, d in with_reads.fetched if g == h] for h, _ in with_reads.fetched}
    assert len(days) == 2
    for host_days in days.values():
        assert len(host_days) == reads
        # At most once an interval; a read due while its host must wait waits too.
        gaps = np.diff(host_days)
        assert gaps.min() >= INTERVAL - 1e-9
        assert gaps.max() <= INTERVAL + DELAY / DAY + 1e-9


def test_planner_received_lastmod_and_trusts_a_truthful_sitemap(runs):
    web, _index, out = runs
    crawler = out["with"][0]
    page, _interval, _changed, _since = crawler.planner.signals.sitemap_history()
    keys = list(crawler.planner.pages)
    assert set(page.tolist()) == set(range(len(keys)))  # every collection page
    sitemap_ok, _ = crawler.planner.signals.trusted(web.hosts + 1)
    assert sitemap_ok.all()
    prior = crawler.planner.signals.prior_rate(len(keys))
    assert np.isfinite(prior).all()  # changefreq told for every page


def test_truthful_lastmod_halves_the_rate_error(runs):
    web, index, out = runs
    with_signals = _median_error(web, index, out["with"][0], out["with"][2])
    without = _median_error(web, index, out["without"][0], out["without"][2])
    assert with_signals <= 0.5 * without, (with_signals, without)


def test_sitemap_requests_wait_on_the_hosts_one_politeness_clock(runs):
    _web, _index, out = runs
    crawler, db, _url_of = out["with"]
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT url_id, started_at FROM fetches "
                            "WHERE kind = 'revisit'").fetchall()
    big = {h for h, limit in crawler.host_limits.items() if np.isfinite(limit)}
    assert len(big) == 1
    host = big.pop()
    # The planned limit leaves room for the host's sitemap reads.
    assert crawler.host_limits[host] == pytest.approx(DAY / DELAY - 1 / INTERVAL)
    with sqlite3.connect(db) as conn:
        on_host = {u for (u,) in conn.execute("SELECT id FROM urls WHERE host_id = ?",
                                               (host,))}
    visits = [(t - EPOCH) / DAY for u, t in rows if u in on_host]
    sitemap = [d for h, d in crawler.sitemaps.fetched if h == host]
    times = np.sort(np.array(visits + sitemap)) * DAY
    assert np.diff(times).min() >= DELAY - 1e-6


def test_lying_lastmod_is_detected_and_costs_nothing(lying):
    web, index, out = lying
    crawler = out["with"][0]
    planner = crawler.planner
    # The planner numbers the hosts it is told of from 1 (0: no host).
    sitemap_ok, _ = planner.signals.trusted(web.hosts + 1)
    assert not sitemap_ok[1:].any()  # every lying host is caught by its revisits
    # Discounted: the estimates come from the revisits alone (one observation each),
    # none from a sitemap read.
    with sqlite3.connect(out["with"][1]) as conn:
        (revisits,) = conn.execute("SELECT COUNT(*) FROM fetches "
                                   "WHERE kind = 'revisit'").fetchone()
    assert planner.signals.sitemap_history()[0].size > 0
    assert planner.history().page.size == revisits
    with_signals = _median_error(web, index, crawler, out["with"][2])
    without = _median_error(web, index, out["without"][0], out["without"][2])
    assert with_signals <= without, (with_signals, without)
