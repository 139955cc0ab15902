from __future__ import annotations

import doctest
import importlib
import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import zeta
from webcrawl.analysis.graph.degree_dist import (
    degree_distribution,
    degree_laws,
    degrees,
    fit_power_law,
)
from webcrawl.storage.errors import AnalysisError, ConfigError

X_MAX = 10**6  # truncation of the sampler: the mass beyond is below 1e-6 for alpha >= 2


def discrete_power_law(rng, alpha, x_min, size):
    """Exact samples of p(x) ~ x^-alpha on [x_min, X_MAX] by inverting the tabulated CDF."""
    support = np.arange(x_min, X_MAX + 1, dtype=np.float64)
    cdf = np.cumsum(support**-alpha)
    cdf /= cdf[-1]
    return (x_min + np.searchsorted(cdf, rng.random(size))).astype(np.int64)


def with_body(rng, alpha, x_min, size, body_fraction=0.5):
    """A power-law tail above x_min and a flat body below it (so x_min must be found)."""
    n_body = int(size * body_fraction)
    body = rng.integers(1, x_min, n_body)
    return np.concatenate([body, discrete_power_law(rng, alpha, x_min, size - n_body)])


def reference_fit_at(samples, x_min):
    """Pure-Python MLE and KS distance at one x_min, KS over every integer of the tail."""
    tail = sorted(int(x) for x in samples if x >= x_min)
    n = len(tail)
    alpha = 1 + n / sum(math.log(x / (x_min - 0.5)) for x in tail)
    norm = float(zeta(alpha, x_min))
    ks, seen, i = 0.0, 0, 0
    for x in range(x_min, tail[-1] + 1):
        while i < n and tail[i] == x:
            seen += 1
            i += 1
        model = 1 - float(zeta(alpha, x + 1)) / norm
        ks = max(ks, abs(seen / n - model))
    return alpha, ks, n


@pytest.mark.parametrize("alpha", [2.1, 2.5, 3.0])
@pytest.mark.parametrize("seed", [0, 1])
def test_recovers_known_exponent_and_x_min(alpha, seed):
    rng = np.random.default_rng(seed)
    fit = fit_power_law(with_body(rng, alpha, 10, 20_000))
    assert abs(fit.alpha - alpha) < 3 * fit.sigma
    assert 8 <= fit.x_min <= 20
    assert fit.sigma == pytest.approx((fit.alpha - 1) / math.sqrt(fit.n_tail))


@pytest.mark.parametrize("alpha", [2.1, 2.72])
def test_fixed_x_min_recovers_exponent(alpha):
    rng = np.random.default_rng(7)
    fit = fit_power_law(discrete_power_law(rng, alpha, 6, 20_000), x_min=6)
    assert fit.x_min == 6 and fit.n_tail == 20_000
    assert abs(fit.alpha - alpha) < 3 * fit.sigma


@pytest.mark.parametrize("x_min", [1, 3, 6, 9])
def test_fixed_x_min_matches_pure_python(x_min):
    samples = with_body(np.random.default_rng(3), 2.4, 6, 600)
    fit = fit_power_law(samples, x_min=x_min, min_tail=10)
    alpha, ks, n = reference_fit_at(samples, x_min)
    assert fit.alpha == pytest.approx(alpha, rel=1e-12)
    assert fit.ks == pytest.approx(ks, rel=1e-9)
    assert fit.n_tail == n


def test_unobserved_fixed_x_min_counts_the_gap():
    samples = np.array([5] * 30 + [6] * 10 + [9] * 5 + [20] * 5)  # nothing at 3 or 4
    fit = fit_power_law(samples, x_min=3, min_tail=10)
    alpha, ks, _ = reference_fit_at(samples, 3)
    assert fit.alpha == pytest.approx(alpha) and fit.ks == pytest.approx(ks)


def test_scan_picks_the_smallest_ks_candidate():
    samples = with_body(np.random.default_rng(5), 2.3, 5, 400)
    fit = fit_power_law(samples, min_tail=20)
    scores = {}
    for x_min in np.unique(samples):
        if (samples >= x_min).sum() >= 20:
            scores[int(x_min)] = reference_fit_at(samples, int(x_min))[1]
    best = min(scores, key=lambda k: (scores[k], k))
    assert fit.x_min == best
    assert fit.ks == pytest.approx(scores[best], rel=1e-9)


def test_degrees_hand_made():
    # 0 -> 1 (twice, a weight 2), 0 -> 2, 1 -> 2, 3 isolated.
    adj = sp.csr_array(([2.0, 1.0, 1.0], ([0, 0, 1], [1, 2, 2])), shape=(4, 4))
    np.testing.assert_array_equal(degrees(adj, "out"), [2, 1, 0, 0])
    np.testing.assert_array_equal(degrees(adj, "in"), [0, 1, 2, 0])
    values, counts = degree_distribution(adj, "in")
    np.testing.assert_array_equal(values, [0, 1, 2])
    np.testing.assert_array_equal(counts, [2, 1, 1])
    with pytest.raises(ConfigError):
        degrees(adj, "both")


def test_degree_laws_on_a_configuration_graph():
    """In-degree drawn from a power law, wired at random: the fit sees the drawn law."""
    rng = np.random.default_rng(11)
    n = 20_000
    in_deg = np.minimum(discrete_power_law(rng, 2.5, 1, n), n - 1)
    dst = np.repeat(np.arange(n), in_deg)
    src = rng.integers(0, n, dst.size)
    adj = sp.csr_array((np.ones(dst.size), (src, dst)), shape=(n, n))
    laws = degree_laws(adj)
    np.testing.assert_array_equal(np.repeat(laws.in_values, laws.in_counts),
                                  np.sort(degrees(adj, "in")))
    assert laws.in_counts.sum() == n and laws.out_counts.sum() == n
    assert abs(laws.in_fit.alpha - 2.5) < 3 * laws.in_fit.sigma


def test_degree_laws_on_the_fixture_web():
    """The zipf fixture web is built with in 2.1, out 2.72 (Broder et al.)."""
    config_mod = pytest.importorskip("webcrawl.fixtures.config")
    models = pytest.importorskip("webcrawl.fixtures.models")
    config = config_mod.FixtureConfig(model="zipf", pages=50_000, seed=1)
    rng = np.random.default_rng(config.seed)
    src, dst = models.generate_edges(config, models.assign_hosts(config, rng), rng)
    adj = sp.csr_array((np.ones(src.size), (src, dst)), shape=(config.pages,) * 2)
    laws = degree_laws(adj)
    assert abs(laws.in_fit.alpha - config.zipf_in_exponent) < 0.1
    # Repeated targets of one page are merged into one link, which thins the largest
    # out-degrees: the realised out-law is a little steeper than the drawn one.
    assert 0 <= laws.out_fit.alpha - config.zipf_out_exponent < 0.2


def test_too_few_samples():
    with pytest.raises(AnalysisError):
        fit_power_law([1, 2, 3], min_tail=10)
    with pytest.raises(AnalysisError):
        fit_power_law([0] * 100)  # zeros are not power-law samples
    laws = degree_laws(sp.csr_array(([1.0], ([0], [1])), shape=(3, 3)))
    assert laws.in_fit is None and laws.out_fit is None


@pytest.mark.parametrize("kwargs", [dict(min_tail=1), dict(x_min=0)], ids=["min_tail", "x_min"])
def test_bad_parameters(kwargs):
    with pytest.raises(ConfigError):
        fit_power_law(np.arange(1, 100), **kwargs)


def test_docstring_examples_run():
    result = doctest.testmod(importlib.import_module("webcrawl.analysis.graph.degree_dist"))
    assert result.failed == 0 and result.attempted > 0
