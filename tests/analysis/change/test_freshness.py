"""Freshness and age: exact integration against a pure-Python reference and simulation."""

from __future__ import annotations

import doctest
import importlib

import numpy as np
import pytest
from webcrawl.analysis.change.estimators import VisitHistory, estimate_rates
from webcrawl.analysis.change.freshness import (
    estimated_freshness,
    evaluate_freshness,
    expected_age,
    expected_freshness,
)
from webcrawl.analysis.change.objectives import mean_age, mean_freshness


def test_doctests():
    assert doctest.testmod(importlib.import_module("analysis.change.freshness")).failed == 0


def reference(changes, refreshes, start, end, t):
    """Freshness and age of one page at time t, straight from the definitions."""
    past = [r for r in refreshes if r <= t]
    if not past:
        return 0.0, t - start
    r = max(past)
    missed = [c for c in changes if r < c <= t]
    if not missed:
        return 1.0, 0.0
    return 0.0, t - min(missed)


def test_exact_against_reference_on_random_small_cases():
    rng = np.random.default_rng(0)
    n, start, end = 6, 2.0, 12.0
    cp = rng.integers(0, n, 40)
    ct = rng.uniform(0, 14, 40)
    rp = rng.integers(0, n, 30)
    rt = np.round(rng.uniform(0, 14, 30), 1)
    rt[:3] = ct[:3]  # a change at the same instant as a refresh is captured by it
    rp[:3] = cp[:3]
    res = evaluate_freshness(cp, ct, rp, rt, n, start, end)
    grid = np.linspace(start, end, 20001)[:-1] + 0.00025
    f_ref = np.zeros((n, grid.size))
    a_ref = np.zeros((n, grid.size))
    for p in range(n):
        ch = list(ct[cp == p])
        rf = list(rt[rp == p])
        for k, t in enumerate(grid):
            f_ref[p, k], a_ref[p, k] = reference(ch, rf, start, end, t)
    np.testing.assert_allclose(res.page_freshness, f_ref.mean(axis=1), atol=2e-3)
    np.testing.assert_allclose(res.page_age, a_ref.mean(axis=1), rtol=2e-3, atol=2e-3)
    # The collection curves, at the sample points.
    np.testing.assert_allclose(res.freshness_at(grid[::50]), f_ref.mean(axis=0)[::50])
    np.testing.assert_allclose(res.age_at(grid[::50]), a_ref.mean(axis=0)[::50], atol=1e-9)
    assert res.freshness == pytest.approx(res.page_freshness.mean())


def _poisson_changes(rng, lam, horizon):
    counts = rng.poisson(lam * horizon)
    page = np.repeat(np.arange(lam.size), counts)
    return page, rng.uniform(0, horizon, counts.sum())


def test_fixed_interval_refresh_matches_the_formulas():
    rng = np.random.default_rng(1)
    lam = np.exp(rng.uniform(np.log(0.05), np.log(3), 400))
    f, horizon = 0.5, 200.0
    cp, ct = _poisson_changes(rng, lam, horizon)
    phase = rng.uniform(0, 1 / f, lam.size)  # stagger the pages' refresh clocks
    k = int(horizon * f) + 2
    rt = (phase[:, None] + np.arange(-1, k - 1)[None, :] / f).ravel()
    rp = np.repeat(np.arange(lam.size), k)
    res = evaluate_freshness(cp, ct, rp, rt, lam.size, 0.0, horizon)
    assert res.freshness == pytest.approx(mean_freshness(lam, f).mean(), abs=0.01)
    assert res.age == pytest.approx(mean_age(lam, f).mean(), rel=0.05)
    # The crawler's own estimate with the true rates agrees with the truth ...
    est_f, est_a = estimated_freshness(lam, rp, rt, 0.0, horizon)
    assert est_f == pytest.approx(res.freshness, abs=0.01)
    assert est_a == pytest.approx(res.age, rel=0.05)


def test_estimate_from_observations_without_truth():
    # ... and with rates it estimated from what it saw at those refreshes.
    rng = np.random.default_rng(2)
    lam = np.exp(rng.uniform(np.log(0.05), np.log(2), 300))
    f, horizon = 1.0, 100.0
    cp, ct = _poisson_changes(rng, lam, horizon)
    k = int(horizon * f)
    rt = np.tile(np.arange(k) / f, lam.size)
    rp = np.repeat(np.arange(lam.size), k)
    truth = evaluate_freshness(cp, ct, rp, rt, lam.size, 0.0, horizon)
    # What the crawler observes: did the page change between consecutive refreshes?
    order = np.lexsort((ct, cp))
    cp, ct = cp[order], ct[order]
    key = rp * (horizon + 1) + rt
    ckey = cp * (horizon + 1) + ct
    counts = np.searchsorted(ckey, key, side="right")
    changed = np.diff(counts.reshape(lam.size, k), axis=1) > 0
    hist = VisitHistory.regular(np.full(lam.size, k - 1), changed.sum(axis=1), 1 / f)
    est = estimate_rates(hist).rate
    est_f, _ = estimated_freshness(est, rp, rt, 0.0, horizon)
    assert est_f == pytest.approx(truth.freshness, abs=0.02)


def test_expected_point_values():
    lam = np.array([0.0, 1.0, 2.0])
    np.testing.assert_allclose(expected_freshness(lam, 0.0, 1.0), np.exp(-lam))
    np.testing.assert_allclose(expected_age(lam, 0.0, 1.0),
                               [0.0, 1 - (1 - np.exp(-1)), 1 - (1 - np.exp(-2)) / 2])
    # Small rates: the series branch is continuous with the closed form.
    small = expected_age(1e-4, 0.0, 1.0)
    assert small == pytest.approx(1e-4 / 2 - 1e-8 / 6, rel=1e-6)


def test_never_refreshed_page_is_stale_from_start():
    res = evaluate_freshness([], [], [1], [5.0], 2, 0.0, 10.0)
    assert res.page_freshness.tolist() == [0.0, 0.5]
    assert res.page_age.tolist() == [5.0, 1.25]


def test_fixture_web_ground_truth():
    fixtures_web = pytest.importorskip("webcrawl.fixtures.web")
    config = importlib.import_module("webcrawl.fixtures.config")
    web = fixtures_web.FixtureWeb.build(config.FixtureConfig(pages=300, hosts=3, seed=4))
    horizon, f = 100.0, 1.0
    pages = np.arange(web.pages)
    alive = (web.birth == 0) & np.isinf(web.death)
    pages = pages[alive]
    times = [web.change_times(int(p), horizon) for p in pages]
    cp = np.repeat(np.arange(pages.size), [t.size for t in times])
    ct = np.concatenate(times) if times else np.zeros(0)
    k = int(horizon * f)
    rt = np.tile(np.arange(k) / f, pages.size)
    rp = np.repeat(np.arange(pages.size), k)
    res = evaluate_freshness(cp, ct, rp, rt, pages.size, 0.0, horizon)
    want = mean_freshness(web.rates[pages], f).mean()
    assert res.freshness == pytest.approx(want, abs=0.02)


def test_harmonic_staleness_by_hand():
    # Page 0: refreshed at 0 and 5, changes at 2, 3 and 6: H = 1 on [2, 3), 1 + 1/2 on
    # [3, 5), 1 on [6, 10): 1 + 3 + 4 = 8.  Page 1: never refreshed, a change at 4:
    # H(1) on [0, 4), H(2) on [4, 10): 4 + 9 = 13.
    res = evaluate_freshness([0, 0, 0, 1], [2.0, 3.0, 6.0, 4.0], [0, 0], [0.0, 5.0], 2,
                             0.0, 10.0)
    np.testing.assert_allclose(res.page_harmonic, [0.8, 1.3])
    assert res.harmonic == pytest.approx(1.05)


def test_harmonic_staleness_against_a_time_grid():
    rng = np.random.default_rng(4)
    n, start, end = 4, 0.0, 10.0
    cp, ct = rng.integers(0, n, 50), rng.uniform(-2, 12, 50)
    rp = np.r_[np.arange(n - 1), rng.integers(0, n, 15)]
    rt = np.r_[np.full(n - 1, -1.0), rng.uniform(-1, 11, 15)]
    res = evaluate_freshness(cp, ct, rp, rt, n, start, end)
    grid = (np.arange(20000) + 0.5) / 20000 * (end - start) + start
    for i in range(n):
        refs = np.sort(rt[(rp == i) & (rt <= end)])
        changes = np.sort(ct[cp == i])
        last = np.searchsorted(refs, grid, side="right") - 1
        base = np.where(last >= 0, refs[np.maximum(last, 0)], start)
        missed = (np.searchsorted(changes, grid, side="right")
                  - np.searchsorted(changes, base, side="right"))
        missed = np.where(last >= 0, missed, missed + 1)
        harmonic = np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, 60))])[missed]
        assert res.page_harmonic[i] == pytest.approx(harmonic.mean(), abs=2e-3)
