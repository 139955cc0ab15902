"""Change analytics, and `webcrawl analyze changes` on a database written by CrawlStore."""

from __future__ import annotations

import email.utils
import json

import numpy as np
import pytest
from webcrawl.analysis.change.change_stats import (
    CENSORED_LABEL,
    CHANGE_BUCKETS,
    VisitLog,
    bucket_fractions,
    change_report,
    domain_class,
    mean_change_intervals,
    poisson_test,
    unchanged_curve,
    visible_lifespans,
)
from webcrawl.storage.records import FetchKind, FetchRecord, Outcome
from webcrawl.storage.store import CrawlStore, HostRow, UrlRow


def daily_log(rng, lam, days, *, last_modified=False, host=None, periodic=False):
    """Daily visits of pages with rates lam: flags 'changed since the previous visit'."""
    n = lam.size
    events = []
    for p in range(n):
        if periodic:  # regular changes with a little jitter: not Poisson
            t = np.arange(rng.uniform(0, 1 / lam[p]), days, 1 / lam[p])
            t = t + rng.uniform(-0.05, 0.05, t.size) / lam[p]
        else:
            t = np.sort(rng.uniform(0, days, rng.poisson(lam[p] * days)))
        events.append(t)
    visits = np.arange(0.0, days + 1e-9, 1.0)
    page = np.repeat(np.arange(n), visits.size)
    time = np.tile(visits, n)
    counts = np.concatenate([np.searchsorted(e, visits, side="right") for e in events])
    changed = np.r_[-1, (np.diff(counts) > 0).astype(np.int8)]
    changed[np.arange(n) * visits.size] = -1
    lm = np.full(time.size, np.nan)
    if last_modified:
        for p, e in enumerate(events):
            sl = slice(p * visits.size, (p + 1) * visits.size)
            k = np.searchsorted(e, visits, side="right")
            lm[sl] = np.where(k > 0, e[np.maximum(k - 1, 0)], np.nan)
    return VisitLog.from_arrays(page, time, np.ones(time.size, bool), changed,
                                last_modified=lm, host=host)


def test_buckets_against_hand_computed_intervals():
    lam = np.array([2.0, 1 / 3.0, 1 / 14.0, 1 / 60.0, 0.0])
    values = np.array([0.5, 3.0, 14.0, 60.0, np.inf, 1.0, 7.0, np.nan])
    np.testing.assert_allclose(bucket_fractions(values), np.array([2, 2, 1, 1, 1]) / 7)
    per = bucket_fractions(values[:5], groups=[0, 0, 1, 1, 1], n_groups=2)
    np.testing.assert_allclose(per, [[0.5, 0.5, 0, 0, 0], [0, 0, 1 / 3, 1 / 3, 1 / 3]])
    rng = np.random.default_rng(0)
    log = daily_log(rng, np.repeat(lam, 40), 240.0)
    iv = mean_change_intervals(log)
    # Each rate lands mostly in its own bucket (daily visits saturate the fast ones).
    buckets = np.searchsorted([b for _, b in CHANGE_BUCKETS[:-1]], iv)
    for k in range(5):
        assert np.mean(buckets[k * 40:(k + 1) * 40] == k) >= 0.7


def test_lifespans_both_methods():
    # Page 0 there throughout, 1 appears and disappears inside, 2 appears and stays.
    page = np.repeat([0, 1, 2], 11)
    time = np.tile(np.arange(11.0), 3)
    present = np.r_[np.ones(11, bool), (time[:11] >= 3) & (time[:11] <= 6),
                    time[:11] >= 8]
    log = VisitLog.from_arrays(page, time, present, np.full(33, -1))
    m1, m2 = visible_lifespans(log)
    np.testing.assert_allclose(m1, [10.0, 3.0, 2.0])
    np.testing.assert_allclose(m2, [20.0, 3.0, 4.0])


def test_half_changed_time_matches_poisson_theory():
    # Rate lam: P(unchanged after t) = e^{-lam t}; half at ln 2 / lam, on the daily grid.
    rng = np.random.default_rng(1)
    lam = 0.05
    log = daily_log(rng, np.full(2000, lam), 60.0)
    days, frac, half = unchanged_curve(log)
    assert half is not None and abs(half - np.log(2) / lam) <= 1.5
    np.testing.assert_allclose(frac[[10, 20]], np.exp(-lam * days[[10, 20]]), atol=0.03)


def test_poisson_test_accepts_poisson_and_rejects_periodic():
    rng = np.random.default_rng(2)
    lam = np.exp(rng.uniform(np.log(0.05), np.log(0.3), 100))
    # The null is calibrated (p-values over seeds look uniform); at a 1% level with 199
    # replicates, a Poisson web passes, a periodic one fails.
    pois = poisson_test(daily_log(rng, lam, 200.0, last_modified=True), n_sim=199, seed=3)
    assert pois.pvalue > 0.01 and pois.n_intervals > 1000
    jittered = poisson_test(daily_log(rng, lam, 200.0), n_sim=199, seed=3)
    assert jittered.pvalue > 0.01
    sims = 49
    periodic = poisson_test(daily_log(rng, lam, 200.0, periodic=True), n_sim=sims, seed=3)
    # Smallest attainable p-value: no replicate as extreme as the data.
    assert periodic.pvalue == pytest.approx(1 / (1 + sims))
    assert periodic.statistic > 3 * pois.statistic


def test_digest_fills_unknown_changes():
    log = VisitLog.from_arrays([0, 0, 0, 0], [0.0, 1.0, 2.0, 3.0], [True] * 4, [-1] * 4,
                               digest=["a", "a", "b", "b"])
    assert log.changed.tolist() == [-1, 0, 1, 0]


async def _write_db(path, rng):
    store = await CrawlStore.open(path)
    names = ["site0.test", "site1.test"]
    for h, name in enumerate(names):
        store.add_host(HostRow(id=h, name=name))
    lam = np.r_[np.full(10, 1.5), np.full(10, 0.02)]
    t0 = 1_700_000_000.0
    seq = 0
    for u in range(lam.size):
        store.add_url(UrlRow(id=u, url=f"http://{names[u // 10]}/p{u}", host_id=u // 10,
                             depth=1, discovered_seq=-1))
        changes = np.sort(rng.uniform(-5, 30, rng.poisson(lam[u] * 35)))
        version = None
        for day in range(30):
            at = t0 + day * 86400.0
            k = int(np.searchsorted(changes, day, side="right"))
            lm = email.utils.formatdate(t0 + changes[k - 1] * 86400.0, usegmt=True) if k else None
            gone = u == 19 and day >= 20
            store.add_fetch(FetchRecord(
                url_id=u, seq=seq, started_at=at, ended_at=at + 0.1,
                outcome=Outcome.HTTP_ERROR if gone else Outcome.FETCHED,
                status=404 if gone else 200, digest=None if gone else f"v{k}",
                last_modified=None if gone else lm,
                kind=FetchKind.CRAWL if day == 0 else FetchKind.REVISIT,
                changed=None if day == 0 or gone else bool(k != version)))
            version = k
            seq += 1
        store.set_outcome(u, Outcome.FETCHED, u)
    await store.aclose()


async def test_cli_on_a_store_written_database(tmp_path, capsys):
    from webcrawl.crawler.cli import main

    db = tmp_path / "crawl.db"
    await _write_db(db, np.random.default_rng(4))
    out = tmp_path / "plots"
    assert main(["analyze", "changes", "--db", str(db), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "site0.test" in text and "Poisson test" in text and "Visible lifespan" in text
    for name in ("change_intervals.png", "change_intervals_by_domain.png", "lifespan.png",
                 "unchanged.png", "poisson.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["analyze", "changes", "--db", str(db), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    # site0 pages change 1.5 times a day: daily visits see a change nearly every day.
    assert report["by_host"]["site0.test"]["<= 1 day"] == 1.0
    assert report["by_host"]["site1.test"]["<= 1 day"] == 0.0
    assert report["days_until_half_changed"] is not None
    assert report["pages"] == 20


def test_cli_missing_db_is_one_line_error(tmp_path, capsys):
    from webcrawl.crawler.cli import main

    assert main(["analyze", "changes", "--db", str(tmp_path / "nope.db")]) != 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nope.db" in err


def test_report_on_empty_log_raises():
    from webcrawl.storage.errors import EmptyGraphError

    with pytest.raises(EmptyGraphError):
        change_report(VisitLog.from_arrays([], [], [], []))


def test_unchanged_pages_are_censored_at_the_window_not_binned():
    # 34 daily visits.  Page 0 changes at every visit, page 1 never, page 2 once.
    days = np.arange(35.0)
    page = np.repeat([0, 1, 2], days.size)
    time = np.tile(days, 3)
    changed = np.r_[np.r_[-1, np.ones(34)], np.r_[-1, np.zeros(34)],
                    np.r_[-1, np.zeros(16), 1, np.zeros(17)]].astype(np.int8)
    log = VisitLog.from_arrays(page, time, np.ones(time.size, bool), changed,
                               host=[0, 0, 1], host_names=["a.example.com", "b.gov"])
    report = change_report(log)
    assert report.window_days == 34.0 and report.median_span_days == 34.0
    d = report.to_dict()
    buckets = d["change_interval_buckets"]
    assert buckets[CENSORED_LABEL] == pytest.approx(1 / 3) == report.censored_fraction
    assert buckets["> 4 months"] == 0.0          # nothing is known to be that slow
    assert buckets["<= 1 day"] == pytest.approx(1 / 3)
    assert sum(buckets.values()) == pytest.approx(1.0)
    assert d["by_host"]["a.example.com"][CENSORED_LABEL] == 0.5
    assert d["by_domain_class"]["com"][CENSORED_LABEL] == 0.5
    assert d["by_domain_class"]["gov"][CENSORED_LABEL] == 0.0
    assert d["window_days"] == 34.0


def test_domain_classes_as_in_the_paper():
    assert [domain_class(h) for h in ("www.stanford.edu", "nasa.gov", "a.org", "b.net",
                                      "x.COM", "site3.test:8080")] == \
        ["edu", "gov", "net/org", "net/org", "com", "test"]


def test_poisson_figure_null_is_the_simulated_one_not_exp1():
    # Daily visits of fast pages, no Last-Modified: the visit grid hides changes, so
    # normalised intervals of Poisson pages are far from Exp(1) yet match the null.
    from scipy import stats
    rng = np.random.default_rng(5)
    lam = np.exp(rng.uniform(np.log(0.3), np.log(0.8), 150))
    pt = poisson_test(daily_log(rng, lam, 120.0), n_sim=19, seed=1)
    assert pt.pvalue > 0.05 and pt.null_normalised.size > pt.normalised.size
    to_null = stats.ks_2samp(pt.normalised, pt.null_normalised).statistic
    to_exp = stats.kstest(pt.normalised, "expon").statistic
    assert to_exp > 3 * to_null


def test_span_over_changes_saturates_at_the_visit_interval_beside_one_over_rate():
    # Visits every 2 days for 20 days; page 0 changed before every one of them (its
    # true interval is shorter than the visits can see), page 1 at every other visit.
    days = np.arange(0.0, 21.0, 2.0)
    page = np.repeat([0, 1], days.size)
    time = np.tile(days, 2)
    changed = np.r_[np.r_[-1, np.ones(10)], np.r_[-1, np.tile([1, 0], 5)]].astype(np.int8)
    log = VisitLog.from_arrays(page, time, np.ones(time.size, bool), changed)
    paper = change_report(log, intervals="paper")
    estimate = change_report(log)
    # The paper's span / changes: 20 / 10 = 2 days and 20 / 5 = 4 days.
    assert paper.bucket_overall[1] == 1.0 and paper.interval_method == "paper"
    # 1 / rate does not saturate: -ln(0.5 / 10.5) / 2 = 1.52 changes a day for page 0.
    assert estimate.bucket_overall[0] == 0.5 and estimate.bucket_overall[1] == 0.5
    # Both reports carry both overall rows, whichever drives the tables.
    for r in (paper, estimate):
        np.testing.assert_array_equal(r.bucket_overall_paper, paper.bucket_overall)
        np.testing.assert_array_equal(r.bucket_overall_estimate, estimate.bucket_overall)
    by_method = paper.to_dict()["change_interval_buckets_by_method"]
    assert by_method["paper"]["1 day - 1 week"] == 1.0
    assert by_method["estimate"]["<= 1 day"] == 0.5
    from webcrawl.storage.errors import ConfigError

    with pytest.raises(ConfigError):
        change_report(log, intervals="median")
