"""Refresh policies and the revisit planner."""

from __future__ import annotations

import doctest
import importlib

import numpy as np
import pytest
from scipy import optimize
from webcrawl.analysis.change.allocation import (
    allocate,
    optimal_age_allocation,
    optimal_freshness_allocation,
)
from webcrawl.analysis.change.objectives import mean_age, mean_freshness
from webcrawl.analysis.change.refresh import PlannerSettings, RevisitPlanner
from webcrawl.storage.errors import ConfigError


def test_doctests():
    assert doctest.testmod(importlib.import_module("webcrawl.analysis.change.refresh")).failed == 0


def test_published_example_rates_one_to_five():
    # Cho and Garcia-Molina: lam = 1..5 per day, 5 refreshes per day in all.
    f = optimal_freshness_allocation([1, 2, 3, 4, 5], 5.0)
    np.testing.assert_allclose(f, [1.15, 1.36, 1.35, 1.14, 0.0], atol=0.005)
    assert f.sum() == pytest.approx(5.0)


def _mixture(rng, n):
    return np.exp(rng.uniform(np.log(1 / 365), np.log(5), n))


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_uniform_beats_proportional_and_optimal_beats_both(seed):
    rng = np.random.default_rng(seed)
    lam = _mixture(rng, 500) * rng.uniform(0.5, 2)
    budget = lam.size * rng.uniform(0.05, 2.0)
    fresh = {p: mean_freshness(lam, allocate(p, lam, budget)).mean()
             for p in ("uniform", "proportional", "optimal")}
    assert fresh["uniform"] > fresh["proportional"]
    assert fresh["optimal"] >= fresh["uniform"]
    age = {p: mean_age(lam, allocate(p, lam, budget)).mean()
           for p in ("uniform", "proportional", "optimal_age")}
    assert age["optimal_age"] <= min(age["uniform"], age["proportional"])


def test_optimal_allocations_are_optimal_against_scipy():
    # A second implementation: a generic constrained optimiser on a small problem.
    lam = np.array([0.1, 0.5, 1.0, 2.0, 4.0, 8.0])
    budget = 6.0
    cons = {"type": "eq", "fun": lambda f: f.sum() - budget}
    bounds = [(1e-9, budget)] * lam.size
    x0 = np.full(lam.size, budget / lam.size)
    fresh = optimize.minimize(lambda f: -mean_freshness(lam, f).sum(), x0, bounds=bounds,
                              constraints=cons, method="SLSQP", options={"ftol": 1e-12})
    ours = optimal_freshness_allocation(lam, budget)
    assert mean_freshness(lam, ours).sum() >= -fresh.fun - 1e-7
    age = optimize.minimize(lambda f: mean_age(lam, f).sum(), x0, bounds=bounds,
                            constraints=cons, method="SLSQP", options={"ftol": 1e-12})
    ours_age = optimal_age_allocation(lam, budget)
    assert mean_age(lam, ours_age).sum() <= age.fun + 1e-7
    np.testing.assert_allclose(ours_age, age.x, rtol=1e-3)


def test_lagrange_condition_and_zero_frequency_pages():
    rng = np.random.default_rng(5)
    lam = _mixture(rng, 300)
    f = optimal_freshness_allocation(lam, 20.0)
    on = f > 0
    r = lam[on] / f[on]
    marginal = (1 - (1 + r) * np.exp(-r)) / lam[on]
    np.testing.assert_allclose(marginal, marginal[0], rtol=1e-8)
    # Pages given up on change so fast that even their first refresh is worth < mu.
    assert np.all(1 / lam[~on] <= marginal[0] * (1 + 1e-9))
    assert (~on).any() and lam[~on].min() > np.median(lam)


def test_mean_freshness_and_age_against_simulation():
    rng = np.random.default_rng(8)
    lam, f, horizon = 1.5, 1.0, 4000.0
    changes = np.cumsum(rng.exponential(1 / lam, int(lam * horizon * 1.2)))
    changes = changes[changes < horizon]
    refreshes = np.arange(0.0, horizon, 1 / f)
    # Per refresh interval, the first change after the refresh.
    idx = np.searchsorted(changes, refreshes, side="right")
    first = np.where(idx < changes.size, changes[np.minimum(idx, changes.size - 1)], np.inf)
    stale_from = np.minimum(first, refreshes + 1 / f)
    fresh_time = np.sum(stale_from - refreshes)
    age_time = np.sum((refreshes + 1 / f - stale_from) ** 2 / 2)
    n = refreshes.size
    assert fresh_time / horizon == pytest.approx(float(mean_freshness(lam, f)),
                                                 abs=4 * 0.5 / np.sqrt(n))
    assert age_time / horizon == pytest.approx(float(mean_age(lam, f)), rel=0.05)


def test_edge_rates_and_bad_input():
    assert mean_freshness(0.0, 0.0) == 1.0 and mean_freshness(1.0, 0.0) == 0.0
    assert mean_age(0.0, 1.0) == 0.0 and np.isinf(mean_age(1.0, 0.0))
    f = optimal_freshness_allocation([0.0, 1.0, 2.0], 3.0)
    assert f[0] == 0 and f.sum() == pytest.approx(3.0)
    with pytest.raises(ConfigError):
        allocate("best", [1.0], 1.0)
    with pytest.raises(ConfigError):
        allocate("uniform", [1.0], 0.0)
    with pytest.raises(ConfigError):
        PlannerSettings(policy="nope")
    with pytest.raises(ConfigError):
        PlannerSettings(budget_per_day=-1)


def test_planner_learns_rates_and_shifts_the_budget():
    rng = np.random.default_rng(12)
    lam = np.array([0.02] * 5 + [1.0] * 5)
    planner = RevisitPlanner(PlannerSettings(policy="optimal", budget_per_day=5.0,
                                             recompute_every=10))
    for page in range(lam.size):
        planner.update(page, 0.0)
    now, last = 0.0, np.zeros(lam.size)
    while now < 200:
        due = planner.next_due(now)
        for page in due:
            changed = rng.random() < -np.expm1(-lam[page] * (now - last[page]))
            planner.update(page, now, bool(changed))
            last[page] = now
        now += 0.1
    rates = planner.rates()
    assert np.all(rates[:5] < 0.1) and np.all(np.abs(rates[5:] / 1.0 - 1) < 0.5)
    f = planner.frequencies()
    np.testing.assert_allclose(f, optimal_freshness_allocation(rates, 5.0))
    assert f.sum() == pytest.approx(5.0)
    assert list(planner.pages) == list(range(10))
    assert planner.next_due_time() >= now - 0.1 - 1e-9


def test_planner_prior_and_min_frequency():
    planner = RevisitPlanner(PlannerSettings(budget_per_day=1.0, prior_changes=2.0,
                                             prior_days=4.0, min_frequency=0.3))
    planner.update_many(["a", "b", "c", "d"], [0.0] * 4, [None] * 4)
    np.testing.assert_allclose(planner.rates(), 0.5)
    # 4 pages x 0.3 > 1 a day: the floor cannot hold, the budget does (uniform).
    np.testing.assert_allclose(planner.frequencies(), 0.25)
    assert planner.next_due(now=100.0, limit=2) == ["a", "b"]


def test_freshness_allocation_with_a_budget_far_above_the_rates() -> None:
    # A budget like 1e4 fetches/s on a 86400 s day: mu ~ 1e-18, where lambertw's argument
    # rounds onto the branch point (it gave nan).  For r = lam/f -> 0, h(r) ~ r^2/2, so
    # the Lagrange condition gives f proportional to sqrt(w lam).
    from webcrawl.analysis.change.allocation import optimal_freshness_allocation

    lam = np.array([1e-3, 1 / 7, 0.5, 5.0, 5.0, 20.0])
    budget = 1e9
    f = optimal_freshness_allocation(lam, budget)
    assert np.all(np.isfinite(f)) and f.sum() == pytest.approx(budget)
    np.testing.assert_allclose(f / f.sum(), np.sqrt(lam) / np.sqrt(lam).sum(), rtol=1e-3)


@pytest.mark.parametrize("policy", ["uniform", "proportional", "optimal", "optimal_age"])
def test_min_frequency_never_exceeds_the_budget(policy):
    rng = np.random.default_rng(3)
    rates = np.r_[rng.exponential(1.0, 40), np.full(10, 30.0), np.zeros(5)]
    for floor in (0.01, 0.1, 0.3):     # 55 pages x 0.3 < 20
        f = allocate(policy, rates, 20.0, min_frequency=floor)
        assert f.sum() == pytest.approx(20.0, rel=1e-9)
        assert f.min() >= floor * (1 - 1e-9)
    np.testing.assert_allclose(allocate(policy, rates, 20.0, min_frequency=1.0), 20.0 / 55)


def test_min_frequency_optimum_matches_a_generic_solver():
    # maximise sum F(lam, f) with f >= 0.4, sum f = 5 (SLSQP as the oracle).
    from scipy import optimize
    lam = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    f = allocate("optimal", lam, 5.0, min_frequency=0.4)
    def neg(x):
        return -float(np.sum((1 - np.exp(-lam / x)) * x / lam))
    res = optimize.minimize(neg, np.full(5, 1.0), method="SLSQP",
                            bounds=[(0.4, None)] * 5,
                            constraints=[{"type": "eq", "fun": lambda x: x.sum() - 5.0}],
                            options={"ftol": 1e-12})
    np.testing.assert_allclose(f, res.x, atol=2e-3)
    assert f[-1] == pytest.approx(0.4)   # the page optimal gives up on sits on the floor
