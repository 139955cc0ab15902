"""The two papers' ordering experiments on a graph whose every page is known.

:func:`country_comparison` is Baeza-Yates et al.'s: each ordering replayed in simulated
time under politeness (:func:`~webcrawl.analysis.ordering.timed.timed_crawl`), judged by
the share of the final graph's PageRank it holds after a fraction of the pages and
after a fraction of the simulated time [1]_.  :func:`hot_page_comparison` is Cho,
Garcia-Molina and Page's: each ordering replayed one page at a time
(:func:`~webcrawl.analysis.ordering.virtual.virtual_crawl`), judged by the share of the
*hot pages* (backlink count ``IB(P) >= G`` in the whole graph) crawled after a fraction
of the pages, their ``P_ST`` of the "crawl and stop" model [2]_.

Both read the whole graph's figures (PageRank, in-links) as the papers did: their
graphs were complete crawls, so a fraction is a fraction of every page.

References
----------
.. [1] R. Baeza-Yates, C. Castillo, M. Marin, A. Rodriguez, "Crawling a country:
   better strategies than breadth-first for web page ordering", WWW 2005.
.. [2] J. Cho, H. Garcia-Molina, L. Page, "Efficient crawling through URL ordering",
   WWW 1998 (section 2: importance IB(P), hot pages, the crawl-and-stop model).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from webcrawl.analysis.graph.captured import CapturedGraph
from webcrawl.analysis.ordering.strategies import Strategy
from webcrawl.analysis.ordering.timed import SimulatedPoliteness, timed_crawl

__all__ = ["PAGE_FRACTIONS", "country_comparison", "hot_page_comparison", "share_after"]

#: Fractions of the pages (and of the simulated time) the summaries read.
PAGE_FRACTIONS = (0.01, 0.1, 0.25, 0.5)

Progress = Callable[[str], None]


def share_after(order: np.ndarray, weights: np.ndarray, fractions: Sequence[float],
                n: int | None = None) -> list[float]:
    """Share of ``weights`` held by the first ``ceil(f * n)`` pages of ``order``.

    Examples
    --------
    >>> share_after(np.array([2, 0, 1, 3]), np.array([1.0, 1.0, 6.0, 2.0]), [0.25, 0.5])
    [0.6, 0.7]
    """
    total = float(weights.sum())
    n = weights.size if n is None else n
    held = np.concatenate([[0.0], np.cumsum(weights[order])])
    ks = np.minimum(order.size, np.ceil(np.asarray(fractions) * n - 1e-9).astype(np.int64))
    return [float(v) / total if total else 0.0 for v in held[ks]]


def _share_at_times(order: np.ndarray, ended: np.ndarray, weights: np.ndarray,
                    times: np.ndarray) -> list[float]:
    """Share of ``weights`` of the pages whose fetch had ended by each time."""
    by_end = np.argsort(ended, kind="stable")
    held = np.concatenate([[0.0], np.cumsum(weights[order[by_end]])])
    k = np.searchsorted(ended[by_end], times, side="right")
    total = float(weights.sum())
    return [float(v) / total if total else 0.0 for v in held[k]]


def country_comparison(graph: CapturedGraph, strategies: Sequence[str | Strategy],
                       politeness: SimulatedPoliteness, durations: np.ndarray,
                       scores: np.ndarray, *, fractions: Sequence[float] = PAGE_FRACTIONS,
                       seed: int = 0, curve_points: int = 100,
                       horizon: float | None = None,
                       progress: Progress | None = None) -> dict[str, dict[str, Any]]:
    """Baeza-Yates et al.'s comparison: PageRank captured per page and in time.

    Parameters
    ----------
    graph : CapturedGraph
        Every fetchable page is one the crawl may take.
    strategies : sequence of str or Strategy
        Specs, or fresh instances (e.g. ``HistoricalPageRank.from_scores``).
    politeness : SimulatedPoliteness
    durations : ndarray
        Fetch seconds of each node (from a
        :class:`~webcrawl.analysis.ordering.transfer.TransferModel`).
    scores : ndarray
        The final graph's PageRank by node (the measure, and the omniscient ordering's).
    fractions : sequence of float
        Fractions of the pages, and of the time ``horizon``, read.
    horizon : float, optional
        Seconds the time fractions and the curve's grid are taken of (default the
        longest simulated duration among ``strategies``): give the same horizon to
        compare runs of different orderings in separate calls.

    Returns
    -------
    dict
        Label -> ``{"pages": [...], "time": [...], "seconds": duration, "hours":
        grid, "capture": curve}`` (``pages``/``time`` at ``fractions``); the key
        ``"ideal (ceiling)"`` holds the pages in decreasing PageRank (per page only).
        The ``"horizon"`` of the time fractions is each run's ``"horizon"`` too.
    """
    runs: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for strategy in strategies:
        label = strategy if isinstance(strategy, str) else strategy.name
        if progress:
            progress(f"timed replay: {label}")
        crawl = timed_crawl(graph, strategy, politeness, durations, seed=seed,
                            final_scores=scores)
        runs[label] = (crawl.order, crawl.ended)
    n = int(np.count_nonzero(graph.fetchable))
    longest = horizon or max((float(e.max()) for _, e in runs.values() if e.size),
                             default=0.0) or 1.0
    grid = np.linspace(0.0, longest, curve_points + 1)
    out: dict[str, dict[str, Any]] = {}
    for label, (order, ended) in runs.items():
        out[label] = {"pages": share_after(order, scores, fractions, n),
                      "time": _share_at_times(order, ended, scores,
                                              np.asarray(fractions) * longest),
                      "seconds": float(ended.max()) if ended.size else 0.0,
                      "horizon": longest,
                      "hours": (grid / 3600).tolist(),
                      "capture": _share_at_times(order, ended, scores, grid)}
    ideal = np.argsort(-np.where(graph.fetchable, scores, -np.inf), kind="stable")[:n]
    out["ideal (ceiling)"] = {"pages": share_after(ideal, scores, fractions, n),
                              "time": [], "seconds": float("nan"), "horizon": longest,
                              "hours": [],
                              "capture": []}
    return out


def hot_page_comparison(graph: CapturedGraph, strategies: Sequence[str], threshold: int,
                        *, fractions: Sequence[float] = PAGE_FRACTIONS, seed: int = 0,
                        progress: Progress | None = None) -> dict[str, Any]:
    """Cho, Garcia-Molina and Page's comparison: hot pages crawled per page.

    Parameters
    ----------
    graph : CapturedGraph
    strategies : sequence of str
        Their orderings are ``bfs``, ``backlink`` (IB'(P), in-links seen so far),
        ``pagerank`` (IR'(P), PageRank of the pages seen so far) and ``random``.
    threshold : int
        ``G``: a page is hot when its in-link count in the whole graph is at least G.
    fractions : sequence of float

    Returns
    -------
    dict
        ``{"threshold": G, "hot": count, "pages": n, "orderings": {label: [P_ST at
        each fraction]}, "ideal (ceiling)": [...]}``.
    """
    from webcrawl.analysis.ordering.virtual import virtual_crawl

    adj = graph.adjacency.tocsc()
    in_links = np.diff(adj.indptr)  # distinct pages linking in (duplicates collapsed)
    hot = (in_links >= threshold).astype(np.float64)
    n = int(np.count_nonzero(graph.fetchable))
    orderings: dict[str, list[float]] = {}
    for name in strategies:
        if progress:
            progress(f"replay: {name}")
        crawl = virtual_crawl(graph, name, seed=seed)
        orderings[name] = share_after(np.asarray(crawl.order, dtype=np.int64), hot,
                                      fractions, n)
    best = np.argsort(-hot, kind="stable")[:n]
    return {"threshold": threshold, "hot": int(hot.sum()), "pages": n,
            "orderings": orderings, "ideal (ceiling)": share_after(best, hot, fractions, n)}
