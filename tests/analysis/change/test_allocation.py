"""Allocations under a budget and per-host limits, checked against scipy.optimize."""

from __future__ import annotations

import doctest
import importlib
import math

import numpy as np
import pytest
from scipy import integrate, optimize
from webcrawl.analysis.change.allocation import (
    allocate,
    polite_allocation,
    throttle,
)
from webcrawl.analysis.change.objectives import OBJECTIVES, multiplier_for, page_utility
from webcrawl.storage.errors import ConfigError


@pytest.mark.parametrize("module", ["objectives", "allocation"])
def test_doctests(module):
    mod = importlib.import_module(f"webcrawl.analysis.change.{module}")
    assert doctest.testmod(mod).failed == 0


# --- an independent oracle -------------------------------------------------------------------
# The utilities written out again from their definitions (harmonic staleness by numerical
# integration of Ein), optimised by SLSQP with the budget and every host's limit as
# linear inequality constraints.

def _freshness(lam: float, f: float) -> float:
    return (1.0 - math.exp(-lam / f)) * f / lam if f > 0 else 0.0


def _age(lam: float, f: float) -> float:
    r = lam / f
    return (0.5 - 1.0 / r + (1.0 - math.exp(-r)) / r**2) / f


def _ein(x: float) -> float:
    return integrate.quad(lambda s: -math.expm1(-s) / s if s > 0 else 1.0, 0.0, x,
                          epsabs=1e-14, epsrel=1e-12)[0]


def _harmonic(lam: float, f: float) -> float:
    r = lam / f
    return _ein(r) - 1.0 - math.expm1(-r) / r


def _utility(objective: str, lam: np.ndarray, w: np.ndarray, f: np.ndarray) -> float:
    total = 0.0
    for li, wi, fi in zip(lam.tolist(), w.tolist(), f.tolist(), strict=True):
        if li == 0:
            continue
        if objective == "freshness":
            total += wi * _freshness(li, fi)
        elif objective == "age":
            total -= wi * _age(li, fi)
        else:
            total -= wi * _harmonic(li, fi)
    return total


def _oracle(objective, lam, w, host, limit, budget, floor=0.0):
    n = lam.size
    lower = max(floor, 1e-7)
    cons = [{"type": "ineq", "fun": lambda f: budget - f.sum()}]
    for h in range(limit.size):
        if np.isfinite(limit[h]):
            mask = host == h
            cons.append({"type": "ineq", "fun": lambda f, m=mask, c=limit[h]: c - f[m].sum()})
    start = np.full(n, lower)
    room = min(budget, float(np.sum(np.minimum(limit, budget)))) - lower * n
    for h in range(limit.size):  # a feasible start: each host's even share of its room
        mask = host == h
        start[mask] += min(limit[h] - lower * mask.sum(), room / limit.size) / mask.sum()
    res = optimize.minimize(lambda f: -_utility(objective, lam, w, f), start,
                            bounds=[(lower, budget)] * n, constraints=cons, method="SLSQP",
                            options={"ftol": 1e-12, "maxiter": 2000})
    assert res.success, res.message
    return res.x, -res.fun


def _case(seed: int, objective: str):
    rng = np.random.default_rng(seed)
    n_hosts = int(rng.integers(2, 5))
    host = np.repeat(np.arange(n_hosts), rng.integers(2, 5, n_hosts))
    n = host.size
    lam = np.exp(rng.uniform(np.log(0.05), np.log(6.0), n))
    w = np.exp(rng.uniform(-1, 1, n))
    budget = float(n * rng.uniform(0.4, 2.0))
    limit = np.full(n_hosts, np.inf)
    # One host held well below what an unconstrained optimum would give it, one maybe.
    limit[0] = budget * rng.uniform(0.05, 0.2)
    if rng.random() < 0.5:
        limit[1] = budget * rng.uniform(0.05, 0.3)
    return lam, w, host, limit, budget


@pytest.mark.parametrize("objective", OBJECTIVES)
@pytest.mark.parametrize("seed", range(6))
def test_polite_allocation_matches_scipy(objective, seed):
    lam, w, host, limit, budget = _case(seed, objective)
    ours = polite_allocation(lam, budget, host, limit, objective=objective, weights=w)
    f = ours.freq
    spent = np.bincount(host, weights=f, minlength=limit.size)
    assert f.sum() <= budget * (1 + 1e-12)
    assert np.all(spent <= limit * (1 + 1e-12))
    oracle_f, oracle_value = _oracle(objective, lam, w, host, limit, budget)
    value = _utility(objective, lam, w, f)
    # Ours is at least as good as the general solver's, and they agree.
    assert value >= oracle_value - 1e-7 * max(1.0, abs(oracle_value))
    np.testing.assert_allclose(f, oracle_f, rtol=2e-3, atol=2e-4 * budget / lam.size)


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_polite_allocation_with_a_floor_matches_scipy(objective):
    lam, w, host, limit, budget = _case(40, objective)
    floor = 0.02 * budget / lam.size
    ours = polite_allocation(lam, budget, host, limit, objective=objective, weights=w,
                             min_frequency=floor).freq
    assert ours.min() >= floor * (1 - 1e-12)
    _, oracle_value = _oracle(objective, lam, w, host, limit, budget, floor)
    assert _utility(objective, lam, w, ours) >= oracle_value - 1e-7 * abs(oracle_value)


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_kkt_conditions_on_a_large_problem(objective):
    # 20 hosts of Zipf-like sizes, 3 of them limited; the KKT conditions of the
    # optimum: one marginal utility per host for every page refreshed, equal to the
    # global multiplier on hosts below their limit and above it on hosts at it.
    rng = np.random.default_rng(7)
    n = 3000
    host = np.minimum(rng.zipf(1.5, n) - 1, 19)
    lam = np.exp(rng.uniform(np.log(1 / 365), np.log(5), n))
    w = np.exp(rng.normal(0, 1, n))
    budget = 0.5 * n
    limit = np.full(20, np.inf)
    limit[[0, 1, 5]] = [100.0, 40.0, 1000.0]
    a = polite_allocation(lam, budget, host, limit, objective=objective, weights=w)
    spent = np.bincount(host, weights=a.freq, minlength=20)
    assert a.freq.sum() == pytest.approx(budget, rel=1e-10)
    np.testing.assert_allclose(spent[a.binding], limit[a.binding], rtol=1e-10)
    assert a.binding[0] and a.binding[1] and not a.binding[5]
    on = a.freq > 0
    marginal = multiplier_for(objective, lam[on], w[on], a.freq[on])
    np.testing.assert_allclose(marginal, a.host_multiplier[host[on]], rtol=1e-8)
    assert np.all(a.host_multiplier[a.binding] > a.multiplier)
    np.testing.assert_allclose(a.host_multiplier[~a.binding], a.multiplier)
    if objective == "freshness":  # pages given up on: not worth it even at f -> 0
        assert np.all(w[~on] / lam[~on] <= a.host_multiplier[host[~on]] * (1 + 1e-9))
    else:
        assert on.all()


def test_without_limits_it_is_chos_optimum():
    lam = np.array([1, 2, 3, 4, 5], dtype=float)
    f = polite_allocation(lam, 5.0, [0, 0, 1, 1, 1], [np.inf, np.inf]).freq
    np.testing.assert_allclose(f, [1.15, 1.36, 1.35, 1.14, 0.0], atol=0.005)
    np.testing.assert_allclose(f, allocate("optimal", lam, 5.0), rtol=1e-10)


def test_limits_tighter_than_the_budget_leave_budget_unspent():
    # Every host limited, together below the budget: each host spends its limit and
    # allocates it among its pages as Cho's optimum for that host alone would.
    lam = np.array([0.5, 1.0, 2.0, 0.2, 4.0])
    host = np.array([0, 0, 0, 1, 1])
    a = polite_allocation(lam, 100.0, host, [3.0, 2.0])
    assert a.multiplier == 0.0 and a.binding.all()
    np.testing.assert_allclose(np.bincount(host, weights=a.freq), [3.0, 2.0], rtol=1e-12)
    np.testing.assert_allclose(a.freq[:3], allocate("optimal", lam[:3], 3.0), rtol=1e-9)


def test_floors_a_host_cannot_afford_and_static_pages():
    # Host 0 allows 1 fetch for its 4 pages, below the floor: each gets 1/4.  Static
    # pages are never worth a refresh beyond their floor.
    lam = np.array([1.0, 2.0, 3.0, 0.5, 0.0, 1.0, 0.0])
    host = np.array([0, 0, 0, 0, 1, 1, 2])
    a = polite_allocation(lam, 5.0, host, [1.0, np.inf, np.inf], min_frequency=0.3)
    np.testing.assert_allclose(a.freq[:4], 0.25)
    assert a.freq[4] == pytest.approx(0.3) and a.freq[6] == pytest.approx(0.3)
    assert a.freq.sum() == pytest.approx(5.0)


def test_harmonic_and_age_refresh_every_changing_page():
    lam = np.array([0.01, 1.0, 50.0, 0.0])
    for objective in ("age", "harmonic"):
        f = allocate("optimal", lam, 1.0, objective=objective)
        assert np.all(f[:3] > 0) and f[3] == 0
    assert allocate("optimal", lam, 1.0)[2] == 0.0  # freshness gives up on the 50/day page


def test_importance_moves_frequency_to_important_pages():
    lam = np.ones(4)
    f = allocate("optimal", lam, 2.0, weights=[1.0, 1.0, 4.0, 4.0])
    assert f[2] > f[0] and f[2] == pytest.approx(f[3])
    assert page_utility("freshness", lam, f).sum() < page_utility(
        "freshness", lam, np.full(4, 0.5)).sum()  # unweighted freshness pays for it


def test_throttle_and_polite_optimal_against_it():
    rng = np.random.default_rng(2)
    lam = np.exp(rng.uniform(np.log(0.01), np.log(3), 300))
    host = (np.arange(300) >= 90).astype(np.int64) + (np.arange(300) >= 200)
    limit = np.array([15.0, np.inf, np.inf])  # 30% of the pages on a host allowing 15/day
    cho = allocate("optimal", lam, 150.0)
    throttled = throttle(cho, host, limit)
    assert throttled[:90].sum() == pytest.approx(15.0) and throttled.sum() < 150.0
    polite = allocate("polite_optimal", lam, 150.0, host=host, host_limit=limit)
    assert polite.sum() == pytest.approx(150.0)
    gain = page_utility("freshness", lam, polite).mean() - page_utility(
        "freshness", lam, throttled).mean()
    assert gain > 0.01


def test_bad_input_is_refused():
    with pytest.raises(ConfigError, match="host"):
        polite_allocation([1.0, 2.0], 1.0, [0], [1.0])
    with pytest.raises(ConfigError, match="host_limit"):
        polite_allocation([1.0, 2.0], 1.0, [0, 1], [1.0, 0.0])
    with pytest.raises(ConfigError, match="objective"):
        allocate("optimal", [1.0], 1.0, objective="fame")
    with pytest.raises(ConfigError, match="policy"):
        allocate("lambdacrawl", [1.0], 1.0)
    with pytest.raises(ConfigError, match="age"):
        allocate("optimal_age", [1.0], 1.0, objective="harmonic")



def test_newton_never_bounces_between_the_bracket_ends():
    # A decreasing function with a jump at 1.5 whose Newton steps from 2 land exactly
    # on 1 and from 1 exactly on 2 (as a page set dropping to zero can make the total
    # of an allocation): the safeguard must bisect, converging on the jump.
    from webcrawl.analysis.change.monotone import solve_monotone

    def fun(x, active):
        del active
        return np.where(x < 1.5, 2.0 - x, 1.0 - x), np.full(x.shape, -1.0)

    root = solve_monotone(fun, np.array([0.5]), np.array([8.0]), increasing=False)
    assert root[0] == pytest.approx(1.5, rel=1e-9)


def test_budget_inside_the_jump_where_many_pages_are_given_up():
    # 100 pages at 4 changes a day are given up on at mu = w / lam = 0.25, where each
    # drops from lam / r (r ~ 37 at y = 1 - 1e-16) to 0: in floating point the total
    # jumps there.  A budget inside the jump must still be spent, not loop forever.
    from webcrawl.analysis.change.objectives import frequency_at

    lam = np.r_[np.full(100, 4.0), np.full(200, 0.1)]
    budget = float(frequency_at("freshness", lam[100:], 1.0, 0.25 * (1 + 1e-9)).sum()) + 5.0
    f = allocate("optimal", lam, budget)
    assert f.sum() == pytest.approx(budget, rel=1e-12)
    assert np.ptp(f[:100]) <= 1e-9 * f[:100].max() and np.ptp(f[100:]) < 1e-9
