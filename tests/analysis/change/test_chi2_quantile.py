"""The estimators' chi-squared quantile (through ``scipy.special``, so that the revisit
loop does not import scipy.stats) against scipy.stats itself, the reference."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from webcrawl.analysis.change.estimators import _chi2_ppf


def test_matches_scipy_stats_chi2_ppf() -> None:
    rng = np.random.default_rng(7)
    q = np.concatenate([rng.random(20_000), 1 - rng.random(1_000) * 1e-9,
                        rng.random(1_000) * 1e-9])
    df = rng.integers(1, 100_000, q.size).astype(np.float64)
    np.testing.assert_allclose(_chi2_ppf(q, df), stats.chi2.ppf(q, df), rtol=1e-12)


@pytest.mark.parametrize("confidence", [0.5, 0.9, 0.95, 0.99])
def test_one_degree_of_freedom(confidence: float) -> None:
    assert float(_chi2_ppf(confidence, 1)) == pytest.approx(stats.chi2.ppf(confidence, 1),
                                                            rel=1e-14)
