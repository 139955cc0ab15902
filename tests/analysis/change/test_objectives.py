"""Freshness, age and harmonic staleness per page, and the marginal condition."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats
from webcrawl.analysis.change.objectives import (
    OBJECTIVES,
    frequency_at,
    frequency_slope,
    mean_harmonic_staleness,
    multiplier_for,
    page_utility,
)
from webcrawl.storage.errors import ConfigError


def _harmonic_by_quadrature(lam: float, f: float) -> float:
    """E[H(N(u))] for N(u) ~ Poisson(lam u), summed term by term, averaged over [0, 1/f)."""
    n = np.arange(400)
    harmonic = np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, 400))])

    def at(u: float) -> float:
        return float((stats.poisson.pmf(n, lam * u) * harmonic).sum())

    return integrate.quad(at, 0.0, 1.0 / f, epsabs=1e-13, epsrel=1e-11)[0] * f


@pytest.mark.parametrize(("lam", "f"), [(1e-3, 1.0), (0.05, 1.0), (0.099, 1.0), (0.101, 1.0),
                                        (1.0, 1.0), (3.0, 0.5), (40.0, 1.0)])
def test_harmonic_staleness_against_the_poisson_sum(lam, f):
    assert mean_harmonic_staleness(lam, f) == pytest.approx(_harmonic_by_quadrature(lam, f),
                                                            rel=1e-9)


def test_harmonic_staleness_against_simulation():
    # One page refreshed every day for 20,000 days; the missed changes' harmonic number
    # integrated over time from the simulated change times.
    rng = np.random.default_rng(3)
    lam, horizon = 2.0, 20_000.0
    changes = np.cumsum(rng.exponential(1 / lam, int(lam * horizon * 1.2)))
    changes = changes[changes < horizon]
    day = np.floor(changes).astype(np.int64)
    rank = np.arange(changes.size) - np.searchsorted(day, day)  # 0-based rank in its day
    # The j-th change of a day (1-based) adds 1/j from its time to the day's end.
    total = float(np.sum((np.ceil(changes) - changes) / (rank + 1)))
    assert total / horizon == pytest.approx(float(mean_harmonic_staleness(lam, 1.0)), rel=0.01)


def test_limits_and_static_pages():
    assert mean_harmonic_staleness(0.0, 0.0) == 0.0
    assert np.isinf(mean_harmonic_staleness(1.0, 0.0))
    assert np.all(frequency_at("harmonic", [0.0, 1.0], 1.0, 0.5)[:1] == 0.0)
    with pytest.raises(ConfigError, match="objective"):
        page_utility("staleness", 1.0, 1.0)


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_frequency_at_inverts_the_marginal_utility(objective):
    rng = np.random.default_rng(11)
    lam = np.exp(rng.uniform(np.log(1 / 365), np.log(20), 400))
    w = np.exp(rng.uniform(-2, 2, 400))
    for m in (1e-5, 1e-2, 0.3, 3.0):
        f = frequency_at(objective, lam, w, m)
        on = f > 0
        # Central difference of the utility: w dU/df = m where f > 0.
        eps = 1e-4 * f[on]  # the means carry ~1e-9 relative rounding near their series
        du = (page_utility(objective, lam[on], f[on] + eps)
              - page_utility(objective, lam[on], f[on] - eps)) / (2 * eps)
        np.testing.assert_allclose(w[on] * du, m, rtol=1e-4)
        np.testing.assert_allclose(multiplier_for(objective, lam[on], w[on], f[on]), m,
                                   rtol=1e-9)
        if objective == "freshness":  # given up on exactly when even f -> 0 is worth < m
            np.testing.assert_array_equal(~on, w / lam <= m)
        else:
            assert on.all()
        # The slope against a finite difference in m.
        f2 = frequency_at(objective, lam, w, m * (1 + 1e-6))
        both = on & (f2 > 0)
        slope = frequency_slope(objective, lam, w, f, m)
        np.testing.assert_allclose((f2[both] - f[both]) / (m * 1e-6), slope[both], rtol=1e-4)
