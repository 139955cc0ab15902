"""A vectorised safeguarded Newton root finder for monotone functions (element-wise).

Used by the change-rate estimators (:mod:`analysis.change.estimators`, which re-exports it) and
the refresh allocations (:mod:`webcrawl.analysis.change.objectives`,
:mod:`webcrawl.analysis.change.allocation`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from webcrawl.storage.arrays import BoolArray, FloatArray
from webcrawl.storage.errors import AnalysisError

__all__ = ["solve_monotone"]


def solve_monotone(
    fun: Callable[[FloatArray, BoolArray], tuple[FloatArray, FloatArray]],
    lo: FloatArray,
    hi: FloatArray,
    *,
    increasing: bool,
    geometric: bool = True,
    rtol: float = 1e-12,
    max_iter: int = 200,
) -> FloatArray:
    """Solve ``fun(x) = 0`` element-wise for monotone functions bracketed by ``[lo, hi]``.

    Parameters
    ----------
    fun : callable ``(x, active) -> (value, derivative)``
        Evaluated on the full array ``x``; ``active`` marks the elements still being
        solved (the others may be skipped).
    lo, hi : ndarray
        Brackets, ``lo < root <= hi`` (finite, and positive when ``geometric``).
    increasing : bool
        Sign of the function's slope.
    geometric : bool
        Bisect at the geometric (not arithmetic) mean when Newton leaves the bracket.

    Returns
    -------
    ndarray
        The roots.

    Raises
    ------
    AnalysisError
        If some root has not converged after ``max_iter`` steps.

    Notes
    -----
    Newton steps, replaced by a bisection whenever they leave the current bracket,
    which shrinks with every evaluation: quadratic convergence near the root,
    guaranteed convergence everywhere.
    """
    lo = np.array(lo, dtype=np.float64)
    hi = np.array(hi, dtype=np.float64)
    x = np.sqrt(lo * hi) if geometric else 0.5 * (lo + hi)
    active = np.ones(x.shape, dtype=bool)
    sign = 1.0 if increasing else -1.0
    for _ in range(max_iter):
        value, deriv = fun(x, active)
        value = sign * value
        below = value < 0
        lo = np.where(active & below, x, lo)
        hi = np.where(active & ~below, x, hi)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = x - value / (sign * deriv)
        mid = np.sqrt(lo * hi) if geometric else 0.5 * (lo + hi)
        # Strictly inside: a step onto the bracket's end would not shrink it (a jump in
        # the function, as where an allocation's pages drop to zero, made Newton bounce
        # between the two ends forever).
        ok = np.isfinite(step) & (step > lo) & (step < hi)
        new = np.where(value == 0, x, np.where(ok, step, mid))
        done = (np.abs(new - x) <= rtol * np.abs(x)) | (hi - lo <= rtol * hi)
        x = np.where(active, new, x)
        active &= ~done
        if not active.any():
            return x
    raise AnalysisError(f"rate root finding did not converge in {max_iter} iterations")


