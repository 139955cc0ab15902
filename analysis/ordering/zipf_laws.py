"""Zipf degree sequences for random graph models: drawn from the probability law, or
with the counts Bennouas and de Montgolfier's definition fixes.

Section 2.2 of "Random web crawls" defines a Zipf law twice: as a probability law,
``log Prob(X = d) = -gamma log d`` (:func:`zipf_degrees`, independent draws), and "in
other words, the number of vertices with degree d is k d^-gamma"
(:func:`zipf_degree_counts`, exact counts).  :data:`DEGREE_LAWS` names the two.

References
----------
.. [1] T. Bennouas and F. de Montgolfier, "Random web crawls", WWW 2007, section 2.2.
.. [2] A. Clauset, C. R. Shalizi and M. E. J. Newman, "Power-law distributions in
   empirical data", SIAM Review 51(4), 2009.
"""

from __future__ import annotations

import numpy as np
from webcrawl.storage.errors import ConfigError

__all__ = ["DEGREE_LAWS", "zipf_degree_counts", "zipf_degrees"]

#: Readings of "set according to a Zipf law" (see :func:`random_web_crawl`, Notes):
#: ``counts`` the paper's own definition (section 2.2, :func:`zipf_degree_counts`),
#: ``sampled`` independent draws from the probability law (:func:`zipf_degrees`).
DEGREE_LAWS: tuple[str, ...] = ("counts", "sampled")


def zipf_degrees(
    n: int,
    exponent: float,
    rng: np.random.Generator,
    *,
    min_degree: int = 1,
    max_degree: int | None = None,
) -> np.ndarray:
    """Draw ``n`` degrees from the truncated Zipf law ``P(d) ∝ d**-exponent``.

    Parameters
    ----------
    n : int
        Number of degrees.
    exponent : float
        Zipf exponent (> 1).
    rng : numpy.random.Generator
        Random source.
    min_degree : int, default 1
        Smallest degree ``d_min``.
    max_degree : int, optional
        Largest degree (default ``max(n, min_degree)``): a page cannot usefully link
        to or be linked from more distinct pages than exist.

    Returns
    -------
    ndarray of int64, shape (n,)
        Degrees with ``P(d) = d**-exponent / sum_{k=d_min}^{d_max} k**-exponent``.

    Examples
    --------
    >>> d = zipf_degrees(1000, 2.1, np.random.default_rng(0))
    >>> bool(d.min() >= 1 and d.max() <= 1000)
    True

    Notes
    -----
    Exact inverse-CDF sampling: the CDF over ``d_min..d_max`` is tabulated once
    (O(d_max) memory) and uniform draws are located with ``searchsorted``.

    References
    ----------
    .. [1] A. Clauset, C. R. Shalizi and M. E. J. Newman, "Power-law distributions in
       empirical data", SIAM Review 51(4), 2009.
    """
    if exponent <= 1.0:
        raise ConfigError(f"Zipf exponent must be > 1, got {exponent}")
    if min_degree < 1:
        raise ConfigError(f"min_degree must be >= 1, got {min_degree}")
    cap = max(n, min_degree) if max_degree is None else max_degree
    if cap < min_degree:
        raise ConfigError(f"max_degree {cap} is below min_degree {min_degree}")
    support = np.arange(min_degree, cap + 1, dtype=np.float64)
    cdf = np.cumsum(support**-exponent)
    cdf /= cdf[-1]
    picks = np.searchsorted(cdf, rng.random(n), side="right")
    return np.minimum(picks, support.size - 1).astype(np.int64) + min_degree


def zipf_degree_counts(
    n: int, exponent: float, rng: np.random.Generator, *, min_degree: int = 1
) -> np.ndarray:
    """A degree sequence in which the number of pages of degree d is ``k * d**-exponent``.

    This is the definition of a Zipf law in Bennouas and de Montgolfier ([1]_,
    section 2.2): "the number of vertices with degree d is k d^-gamma (k depends on
    the number of vertices n)".  It fixes *counts*, not probabilities: a degree
    occurs only while ``k d**-exponent`` rounds to at least one page, so the largest
    degree is about ``(2 k)**(1 / exponent)`` (780 for n = 1e6 and exponent 2.1),
    where independent draws from the same law reach about ``n**(1 / (exponent - 1))``
    (some 290,000).

    Parameters
    ----------
    n : int
        Number of pages (>= 1).
    exponent : float
        Zipf exponent gamma (> 1).
    rng : numpy.random.Generator
        Shuffles the sequence over the pages.
    min_degree : int, default 1
        Smallest degree ``d_min``.

    Returns
    -------
    ndarray of int64, shape (n,)
        Degrees in random page order; exactly ``N(d)`` pages have degree d.

    Raises
    ------
    ConfigError
        On ``n < 1``, ``exponent <= 1`` or ``min_degree < 1``.

    Examples
    --------
    >>> d = zipf_degree_counts(1_000_000, 2.1, np.random.default_rng(0))
    >>> int(d.max()), int((d == 1).sum())
    (780, 641173)

    Notes
    -----
    ``k`` solves ``sum_d N(d) = n`` with ``N(d) = k d**-exponent`` over
    ``d_min <= d <= D``, D the last degree with ``N(D) >= 1/2`` (fixed point, a few
    vectorised passes).  The real counts are rounded by largest remainder so that
    they sum to n exactly; the rounding is the only freedom, and it is
    deterministic, so only the page order is random.

    References
    ----------
    .. [1] T. Bennouas and F. de Montgolfier, "Random web crawls", WWW 2007,
       section 2.2 (the Zipf law) and 4.2 (degrees "set according to two
       independent Zipf laws").
    """
    if n < 1:
        raise ConfigError(f"n must be >= 1, got {n}")
    if exponent <= 1.0:
        raise ConfigError(f"Zipf exponent must be > 1, got {exponent}")
    if min_degree < 1:
        raise ConfigError(f"min_degree must be >= 1, got {min_degree}")
    top = min_degree + n  # more degrees than pages can never be needed
    for _ in range(20):
        support = np.arange(min_degree, top + 1, dtype=np.float64)
        k = n / float(np.sum(support**-exponent))
        new_top = max(min_degree, int(np.floor((2.0 * k) ** (1.0 / exponent))))
        if new_top == top:
            break
        top = new_top
    support = np.arange(min_degree, top + 1, dtype=np.float64)
    real = support**-exponent * (n / float(np.sum(support**-exponent)))
    counts = np.floor(real).astype(np.int64)
    short = n - int(counts.sum())
    if short > 0:  # largest remainders first, ties to the smaller degree
        counts[np.argsort(-(real - counts), kind="stable")[:short]] += 1
    degrees = np.repeat(support.astype(np.int64), counts)
    return rng.permutation(degrees)
