"""Order-only crawl-quality metrics: what the pages of a crawl order are worth.

Functions of the crawl order and the final graph's PageRank alone (no links):
slices of a crawl (:func:`slice_bounds`, :func:`time_slice_bounds`),
:func:`pagerank_capture`, :func:`slice_mean_pagerank`, :func:`top_n_fetched` and
:func:`top_n_mean_slice`.
:func:`webcrawl.analysis.ordering.quality.crawl_quality` computes them all.

References
----------
.. [1] M. Najork and J. L. Wiener, "Breadth-first crawling yields high-quality pages",
   Proc. 10th International World Wide Web Conference, 2001.
.. [2] T. Bennouas and F. de Montgolfier, "Random web crawls", Proc. 16th
   International World Wide Web Conference, 2007.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from webcrawl.storage.errors import ConfigError, EmptyGraphError

__all__ = [
    "capture_at_times",
    "default_top_ns",
    "ideal_order",
    "pagerank_capture",
    "rank_positions",
    "slice_bounds",
    "slice_mean_pagerank",
    "time_slice_bounds",
    "top_n_fetched",
    "top_n_mean_slice",
]


# --------------------------------------------------------------------------- slices


def slice_bounds(pages: int, slices: int) -> np.ndarray:
    """Boundaries ``0 = b_0 < b_1 < ... < b_S = pages`` of S slices of equal page counts.

    S is ``min(slices, pages)`` so that no slice is empty.

    Examples
    --------
    >>> slice_bounds(10, 4).tolist()
    [0, 2, 5, 8, 10]
    """
    if pages < 1:
        raise EmptyGraphError("the crawl order is empty")
    s = max(1, min(slices, pages))
    return np.rint(np.linspace(0, pages, s + 1)).astype(np.int64)


def time_slice_bounds(fetch_times: np.ndarray, slices: int) -> np.ndarray:
    """Boundaries of S slices of equal duration over ``fetch_times`` (non-decreasing).

    Slice i holds the fetches with ``t0 + i w <= t < t0 + (i + 1) w`` (the last one is
    closed); slices with no fetch are empty (their per-slice metrics are NaN).
    """
    times = np.asarray(fetch_times, dtype=np.float64)
    if times.size < 1:
        raise EmptyGraphError("the crawl order is empty")
    if not np.isfinite(times).all():
        raise ConfigError("some fetch times are missing: slice by pages instead")
    if np.any(np.diff(times) < 0):
        raise ConfigError("fetch times must be non-decreasing in fetch order")
    edges = np.linspace(times[0], times[-1], slices + 1)[1:-1]
    inner = np.searchsorted(times, edges, side="left")
    return np.concatenate(([0], inner, [times.size])).astype(np.int64)


def default_top_ns(n: int) -> tuple[int, ...]:
    """1, 10, 100, ... up to n (at least (1,))."""
    return tuple(10**e for e in range(int(math.log10(max(n, 1))) + 1))


def rank_positions(scores: np.ndarray) -> np.ndarray:
    """Rank of each node by descending score (0 = best; ties -> lower index first)."""
    by_score = np.argsort(-scores, kind="stable")
    rank = np.empty(scores.size, dtype=np.int64)
    rank[by_score] = np.arange(scores.size)
    return rank


# ------------------------------------------------------------- order-only metrics


def pagerank_capture(order: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Cumulative fraction of the total PageRank held by the first k pages of ``order``.

    Parameters
    ----------
    order : ndarray of int
        Node indices in fetch order.
    scores : ndarray of float
        Final-graph PageRank of every node (any scale).

    Returns
    -------
    ndarray of float64, length ``len(order) + 1``
        Entry k is the fraction after k pages (entry 0 is 0).

    Examples
    --------
    >>> pagerank_capture(np.array([2, 0]), np.array([1.0, 1.0, 2.0])).tolist()
    [0.0, 0.5, 0.75]

    References
    ----------
    .. [1] Bennouas and de Montgolfier 2007, figure 11 "PageRank capture".
    """
    scores = np.asarray(scores, dtype=np.float64)
    total = scores.sum()
    if not total > 0:
        raise ConfigError("scores must have a positive sum")
    return np.concatenate(([0.0], np.cumsum(scores[np.asarray(order)]) / total))


def capture_at_times(order: np.ndarray, ended: np.ndarray, scores: np.ndarray,
                     times: np.ndarray) -> np.ndarray:
    """PageRank fraction held by the pages of ``order`` whose fetch ended by each time.

    Parameters
    ----------
    order : ndarray of int
        Node indices in fetch order.
    ended : ndarray of float
        When each fetch of ``order`` ended (any clock; fetches may end out of order).
    scores : ndarray of float
        Final PageRank (any positive scale).
    times : ndarray of float
        The times asked about, on the clock of ``ended``.

    Examples
    --------
    >>> capture_at_times(np.array([0, 1, 2]), np.array([1.0, 3.0, 2.0]),
    ...                  np.array([0.5, 0.25, 0.25]), np.array([0.0, 2.0, 3.0])).tolist()
    [0.0, 0.75, 1.0]
    """
    by_end = np.argsort(ended, kind="stable")
    cumulative = np.concatenate(([0.0], np.cumsum(scores[order[by_end]])))
    done = np.searchsorted(ended[by_end], times, side="right")
    # (a sum in another order may exceed the total by a rounding error)
    return np.asarray(np.minimum(cumulative[done] / scores.sum(), 1.0), dtype=np.float64)


def ideal_order(scores: np.ndarray, candidates: np.ndarray | None = None) -> np.ndarray:
    """The ``ideal`` curve's order: ``candidates`` (default all nodes) by decreasing score.

    Its capture after k pages is the largest any k of the candidates can hold, so no
    crawl order of those pages lies above it (ties: lower node first).

    Examples
    --------
    >>> ideal_order(np.array([0.1, 0.5, 0.1, 0.3])).tolist()
    [1, 3, 0, 2]
    """
    nodes = np.arange(scores.size) if candidates is None else np.flatnonzero(candidates)
    return nodes[np.argsort(-scores[nodes], kind="stable")].astype(np.int64)


def slice_mean_pagerank(order: np.ndarray, scores: np.ndarray,
                        bounds: np.ndarray) -> np.ndarray:
    """Average PageRank (normalised to mean 1 over all nodes) of each slice's pages.

    Returns one value per slice (NaN for an empty slice).

    References
    ----------
    .. [1] Najork and Wiener 2001, figure 1 (average PageRank per day of crawl).
    """
    scores = np.asarray(scores, dtype=np.float64)
    normalised = scores * (scores.size / scores.sum())
    cum = np.concatenate(([0.0], np.cumsum(normalised[np.asarray(order)])))
    counts = np.diff(bounds)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, np.diff(cum[bounds]) / np.maximum(counts, 1), np.nan)


def top_n_fetched(order: np.ndarray, scores: np.ndarray, bounds: np.ndarray,
                  top_ns: Sequence[int], *,
                  rank: np.ndarray | None = None) -> dict[int, np.ndarray]:
    """Fraction of the top-N pages (by final PageRank) fetched by the end of each slice.

    Ties in PageRank go to the lower node index.  Returns ``{N: array per slice end}``
    for each N <= n.  ``rank`` is ``rank_positions(scores)`` if already computed.

    References
    ----------
    .. [1] Najork and Wiener 2001, figures 2 and 3 (when the top-N pages were crawled).
    """
    if rank is None:
        rank = rank_positions(np.asarray(scores, dtype=np.float64))
    rank = rank[np.asarray(order)]
    out: dict[int, np.ndarray] = {}
    for n_top in top_ns:
        if n_top > scores.size:
            continue
        found = np.concatenate(([0], np.cumsum(rank < n_top)))
        out[int(n_top)] = found[bounds[1:]] / n_top
    return out




def top_n_mean_slice(order: np.ndarray, scores: np.ndarray, bounds: np.ndarray,
                     top_ns: Sequence[int], *,
                     rank: np.ndarray | None = None) -> dict[int, tuple[float, int]]:
    """Average slice (1-based "crawl day") on which the top-N pages were fetched.

    Najork and Wiener's summary of a crawl order: for the N pages of highest final
    PageRank, the mean of the slice number in which each was fetched (slice 1 holds
    the first pages of the order).  A breadth-first crawl fetches the best pages early,
    so the figure is well below the middle slice.

    Parameters
    ----------
    order : ndarray of int
        Node indices in fetch order.
    scores : ndarray of float
        Final-graph PageRank of every node.
    bounds : ndarray of int
        Slice boundaries (:func:`slice_bounds` or :func:`time_slice_bounds`).
    top_ns : sequence of int
        The N values (those above the node count are skipped).
    rank : ndarray of int, optional
        :func:`rank_positions` of ``scores``, if already computed.

    Returns
    -------
    dict
        ``{N: (mean slice, fetched)}``: the mean slice number over the top-N pages the
        order fetched (NaN if none) and how many of them it fetched.  Ties in PageRank
        go to the lower node index.

    Examples
    --------
    >>> top_n_mean_slice(np.array([2, 0, 1, 3]), np.array([4.0, 1.0, 3.0, 2.0]),
    ...                  np.array([0, 2, 4]), [1, 2])
    {1: (1.0, 1), 2: (1.0, 2)}

    References
    ----------
    .. [1] Najork and Wiener 2001, section 4 (average day on which the top N pages
       were crawled, N = 1, 10, 100, ...).
    """
    order = np.asarray(order)
    if not np.issubdtype(order.dtype, np.integer):
        order = order.astype(np.int64)
    if rank is None:
        rank = rank_positions(np.asarray(scores, dtype=np.float64))
    rank = rank[order]
    slice_of = np.searchsorted(np.asarray(bounds)[1:], np.arange(order.size),
                               side="right") + 1
    out: dict[int, tuple[float, int]] = {}
    for n_top in top_ns:
        if n_top > scores.size:
            continue
        hit = rank < n_top
        count = int(np.count_nonzero(hit))
        out[int(n_top)] = (float(slice_of[hit].mean()) if count else math.nan, count)
    return out
