"""Change-rate estimators: statistical floor, bias, coverage, edge cases (seeded simulation)."""

from __future__ import annotations

import doctest
import importlib

import numpy as np
import pytest
from scipy import optimize, stats
from webcrawl.analysis.change.estimators import (
    VisitHistory,
    bias_reduced_rate,
    estimate_rates,
    last_modified_rate,
    map_rate,
    mle_rate,
    naive_rate,
)
from webcrawl.storage.errors import ConfigError

PAGES = 4000


def bernoulli_floor(lam, intervals):
    """Median relative error of an efficient estimator: 0.6745 * CR sd / lam.

    Each visit after t is Bernoulli(p = 1 - e^{-lam t}); its Fisher information about lam
    is t^2 e^{-lam t} / (1 - e^{-lam t}); the total is the sum over visits.
    """
    t = np.asarray(intervals, dtype=float)
    info = np.sum(t**2 * np.exp(-lam * t) / (1 - np.exp(-lam * t)))
    return stats.norm.ppf(0.75) / np.sqrt(info) / lam


def simulate_regular(rng, lam, n, interval, pages=PAGES):
    """Per page: X of n regular visits saw a change, and the censored ages (Last-Modified)."""
    ages = rng.exponential(1 / lam, size=(pages, n))  # time since last change at each visit
    changed = ages < interval
    return changed.sum(axis=1), np.minimum(ages, interval).sum(axis=1)


def median_rel_error(est, lam):
    return float(np.median(np.abs(est / lam - 1)))


def test_doctests():
    mod = importlib.import_module("webcrawl.analysis.change.estimators")
    assert doctest.testmod(mod).failed == 0


def test_floor_at_published_point_is_about_eleven_percent():
    # The number, recomputed: 100 visits at lam * I = 0.5.
    assert bernoulli_floor(0.5, np.ones(100)) == pytest.approx(0.11, abs=0.005)


@pytest.mark.parametrize("lam_i", [0.25, 0.5, 1.0, 2.0], ids=lambda v: f"lamI={v}")
def test_regular_estimators_reach_the_floor(lam_i):
    rng = np.random.default_rng(7)
    n, interval = 100, 1.0
    lam = lam_i / interval
    x, exposure = simulate_regular(rng, lam, n, interval)
    floor = bernoulli_floor(lam, np.full(n, interval))
    reg = bias_reduced_rate(np.full(PAGES, n), x, interval).rate
    hist = VisitHistory.regular(np.full(PAGES, n), x, interval)
    mle = mle_rate(hist).rate
    lm = last_modified_rate(np.full(PAGES, n), x, exposure).rate
    assert median_rel_error(reg, lam) <= 1.25 * floor
    assert median_rel_error(mle, lam) <= 1.25 * floor
    # Last-Modified carries more information than the Bernoulli bit: its own floor.
    p = 1 - np.exp(-lam * interval)
    lm_floor = stats.norm.ppf(0.75) / np.sqrt(n * p / lam**2) / lam
    assert lm_floor <= floor
    assert median_rel_error(lm, lam) <= 1.25 * lm_floor


@pytest.mark.parametrize("lam_i", [0.6, 1.0, 2.0], ids=lambda v: f"lamI={v}")
def test_bias_reduced_beats_naive_when_changes_are_frequent(lam_i):
    rng = np.random.default_rng(11)
    n, interval = 100, 1.0
    lam = lam_i / interval
    x, _ = simulate_regular(rng, lam, n, interval)
    naive = naive_rate(x, np.full(PAGES, n * interval)).rate
    reg = bias_reduced_rate(np.full(PAGES, n), x, interval).rate
    assert median_rel_error(reg, lam) < median_rel_error(naive, lam)
    # The naive estimator tends to f (1 - e^{-lam/f}), not lam.
    assert np.mean(naive) == pytest.approx((1 - np.exp(-lam_i)) / interval, rel=0.01)


def test_irregular_mle_reaches_its_floor_and_matches_brentq():
    rng = np.random.default_rng(3)
    lam, k = 0.8, 80
    t = rng.uniform(0.25, 2.5, size=(PAGES, k))
    changed = rng.random((PAGES, k)) < -np.expm1(-lam * t)
    hist = VisitHistory.from_arrays(np.repeat(np.arange(PAGES), k), t.ravel(), changed.ravel())
    est = mle_rate(hist).rate
    # Floor from each page's own intervals; compare the median error to the median floor.
    floors = np.array([bernoulli_floor(lam, row) for row in t[:200]])
    assert median_rel_error(est, lam) <= 1.25 * np.median(floors)
    for i in range(5):  # a second implementation: scipy's brentq on the score equation
        c, u = t[i][changed[i]], t[i][~changed[i]].sum()
        root = optimize.brentq(lambda x, c=c, u=u: np.sum(c / np.expm1(x * c)) - u, 1e-6, 100)
        assert est[i] == pytest.approx(root, rel=1e-9)


def test_last_modified_correction_removes_the_bias_of_x_over_t():
    # Derivation check (see the docstring): X/T is biased high, the formula is not.
    rng = np.random.default_rng(5)
    n, interval = 20, 1.0
    for lam in (0.5, 2.0, 5.0):
        x, exposure = simulate_regular(rng, lam, n, interval, pages=20000)
        corrected = last_modified_rate(np.full(x.size, n), x, exposure).rate
        mle = x / exposure
        se = corrected.std() / np.sqrt(x.size)
        assert abs(corrected.mean() - lam) < 4 * se + 0.005 * lam
        assert mle.mean() - lam > 4 * se  # the uncorrected MLE is measurably biased


def _coverage_tolerance(m, nominal=0.95):
    # 4 Monte Carlo standard errors, plus 1% for the large-sample approximations.
    return 4 * np.sqrt(nominal * (1 - nominal) / m) + 0.01


def test_bias_reduced_interval_coverage_exact_and_simulated():
    n, interval, lam = 100, 1.0, 0.5
    p = 1 - np.exp(-lam * interval)
    xs = np.arange(n + 1)
    est = bias_reduced_rate(np.full(n + 1, n), xs, interval)
    inside = (est.lower <= lam) & (lam <= est.upper)
    exact = float(np.sum(stats.binom.pmf(xs, n, p)[inside]))
    assert abs(exact - 0.95) < 0.02  # Wilson's interval at this (n, p)
    rng = np.random.default_rng(1)
    x = rng.binomial(n, p, size=PAGES)
    sim = bias_reduced_rate(np.full(PAGES, n), x, interval)
    covered = np.mean((sim.lower <= lam) & (lam <= sim.upper))
    assert abs(covered - exact) < 4 * np.sqrt(exact * (1 - exact) / PAGES)


@pytest.mark.parametrize("lam", [0.2, 1.0, 3.0])
def test_mle_profile_interval_coverage(lam):
    rng = np.random.default_rng(int(lam * 10))
    k = 50
    t = rng.uniform(0.2, 2.0, size=(PAGES, k))
    changed = rng.random((PAGES, k)) < -np.expm1(-lam * t)
    hist = VisitHistory.from_arrays(np.repeat(np.arange(PAGES), k), t.ravel(), changed.ravel())
    est = mle_rate(hist)
    covered = np.mean((est.lower <= lam) & (lam <= est.upper))
    assert abs(covered - 0.95) < _coverage_tolerance(PAGES)


@pytest.mark.parametrize("lam", [0.2, 1.0, 4.0])
def test_last_modified_interval_coverage(lam):
    rng = np.random.default_rng(int(lam * 100))
    x, exposure = simulate_regular(rng, lam, 50, 1.0)
    est = last_modified_rate(np.full(PAGES, 50), x, exposure)
    covered = np.mean((est.lower <= lam) & (lam <= est.upper))
    assert abs(covered - 0.95) < _coverage_tolerance(PAGES)


def test_naive_interval_coverage_when_visits_are_frequent():
    rng = np.random.default_rng(9)
    lam, n = 0.02, 500  # lam * I = 0.02: at most one change between visits, nearly always
    x, _ = simulate_regular(rng, lam, n, 1.0)
    est = naive_rate(x, np.full(PAGES, float(n)))
    covered = np.mean((est.lower <= lam) & (lam <= est.upper))
    assert abs(covered - 0.95) < _coverage_tolerance(PAGES) + 0.01  # Garwood is conservative


def test_edge_cases_no_change_and_all_changed():
    hist = VisitHistory.regular([10, 10], [0, 10], 1.0)
    mle = mle_rate(hist)
    assert mle.rate[0] == 0 and mle.lower[0] == 0 and np.isfinite(mle.upper[0])
    assert mle.upper[0] == pytest.approx(stats.chi2.ppf(0.95, 1) / 2 / 10)
    assert np.isinf(mle.rate[1]) and np.isinf(mle.upper[1]) and mle.lower[1] > 0
    reg = bias_reduced_rate([10, 10], [0, 10], 1.0)
    assert reg.rate[0] == 0 and np.isfinite(reg.rate[1]) and np.isinf(reg.upper[1])
    assert reg.rate[1] == pytest.approx(np.log(21))
    lm = last_modified_rate([10, 10], [0, 10], [10.0, 4.0])
    assert lm.rate[0] == 0 and lm.rate[1] == pytest.approx(9 / 4.0)
    assert np.all(mle.lower <= np.where(np.isinf(mle.rate), np.inf, mle.rate))


def test_map_rate_is_finite_and_reduces_to_the_mle_without_prior():
    rng = np.random.default_rng(2)
    k = 30
    t = rng.uniform(0.5, 1.5, size=(50, k))
    changed = rng.random((50, k)) < -np.expm1(-1.0 * t)
    changed[0] = True  # every visit saw a change: MLE infinite
    changed[1] = False
    hist = VisitHistory.from_arrays(np.repeat(np.arange(50), k), t.ravel(), changed.ravel())
    prior = map_rate(hist, prior_changes=1.0, prior_time=7.0)
    assert np.all(np.isfinite(prior)) and np.all(prior > 0)
    weak = map_rate(hist, prior_changes=0.0, prior_time=1e-12)
    mle = mle_rate(hist).rate
    inner = np.isfinite(mle) & (mle > 0)
    np.testing.assert_allclose(weak[inner], mle[inner], rtol=1e-6)


def test_map_rate_uses_last_modified_when_given():
    # All visits with Last-Modified: closed form (K + X) / (E0 + exposure).
    rng = np.random.default_rng(4)
    lam, n = 2.0, 40
    ages = rng.exponential(1 / lam, size=(10, n))
    changed = ages < 1.0
    since = np.where(changed, ages, np.nan)
    hist = VisitHistory.from_arrays(np.repeat(np.arange(10), n), np.ones(10 * n),
                                    changed.ravel(), since.ravel())
    got = map_rate(hist, prior_changes=1.0, prior_time=7.0)
    want = (changed.sum(1) + 1.0) / (np.minimum(ages, 1.0).sum(1) + 7.0)
    np.testing.assert_allclose(got, want, rtol=1e-9)


def test_from_visits_builds_intervals_and_last_modified():
    hist = VisitHistory.from_visits(
        page=[1, 0, 0, 0, 1], time=[0.0, 0.0, 1.0, 3.0, 2.0],
        changed=[False, False, True, False, True], last_modified=[np.nan, np.nan, 0.5, 0.5, 1.5])
    assert hist.n_pages == 2
    np.testing.assert_array_equal(hist.n_visits, [2, 1])
    np.testing.assert_array_equal(hist.n_changed, [1, 1])
    np.testing.assert_allclose(hist.total_time, [3.0, 2.0])
    np.testing.assert_allclose(hist.exposure, [0.5 + 2.0, 0.5])


def test_estimate_rates_picks_per_page():
    regular = VisitHistory.regular([50], [20], 1.0)
    auto = estimate_rates(regular)
    assert auto.rate[0] == pytest.approx(bias_reduced_rate([50], [20], 1.0).rate[0])
    irregular = VisitHistory.from_arrays([0] * 4, [1.0, 2.0, 1.0, 3.0], [True, False, True, False])
    assert estimate_rates(irregular).rate[0] == pytest.approx(np.log(1.4))


def test_bad_input_raises_config_error():
    with pytest.raises(ConfigError):
        bias_reduced_rate([10], [11], 1.0)
    with pytest.raises(ConfigError):
        naive_rate([1], [0.0])
    with pytest.raises(ConfigError):
        VisitHistory.from_arrays([0], [-1.0], [True])
    with pytest.raises(ConfigError):
        bias_reduced_rate([10], [1], 1.0, confidence=1.5)


def test_fixture_web_rates_recovered_at_the_floor():
    # 100 simulated days of daily visits to the fixture web's pages with known rates.
    web_mod = pytest.importorskip("webcrawl.fixtures.web")
    config = importlib.import_module("webcrawl.fixtures.config")
    web = web_mod.FixtureWeb.build(config.FixtureConfig(pages=2000, hosts=5, seed=9))
    days, interval = 100, 1.0
    lam = web.rates
    pages = np.flatnonzero((web.birth == 0) & np.isinf(web.death)
                           & (lam * interval >= 0.05) & (lam * interval <= 2.0))
    visits = np.arange(0.0, days + 0.5, interval)
    x = np.empty(pages.size, dtype=np.int64)
    for j, p in enumerate(pages):
        versions = np.searchsorted(web.change_times(int(p), float(days)), visits, side="right")
        x[j] = np.count_nonzero(np.diff(versions))
    lam_p = lam[pages]
    est = bias_reduced_rate(np.full(pages.size, days), x, interval).rate
    # Per page, the Cramer-Rao sd; the error over sd is |N(0,1)|-like, median 0.6745.
    info = days * interval**2 * np.exp(-lam_p * interval) / -np.expm1(-lam_p * interval)
    ratio = np.abs(est - lam_p) / (1 / np.sqrt(info))
    assert pages.size > 300
    assert np.median(ratio) <= 1.25 * stats.norm.ppf(0.75)
    naive = naive_rate(x, np.full(pages.size, days * interval)).rate
    fast = lam_p * interval > 0.5
    assert (np.median(np.abs(est[fast] / lam_p[fast] - 1))
            < np.median(np.abs(naive[fast] / lam_p[fast] - 1)))
