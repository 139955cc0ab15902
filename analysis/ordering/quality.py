"""Crawl quality over time: how fast a crawl order finds the important pages.

Every metric takes a crawl *order* (node indices in fetch order, a recorded crawl's
``fetch_order`` or a virtual crawl's order), a :class:`~analysis.graph.captured.CapturedGraph`
and the PageRank of the *final* graph, and describes the crawl as it grows:

* :func:`slice_mean_pagerank`: average PageRank (mean 1 over the graph) of the pages
  fetched in each slice of the crawl (Najork and Wiener's day-by-day curve);
* :func:`pagerank_capture`: fraction of the total PageRank held by the first k pages
  (Bennouas and de Montgolfier's "PageRank capture");
* :func:`top_n_fetched`: fraction of the top-N pages fetched by the end of each slice;
* :func:`top_n_mean_slice`: the average slice ("crawl day") on which the top-N pages
  were fetched (Najork and Wiener's summary of an ordering);
* :func:`top_n_overlap`: overlap of the top-N by PageRank of the *partial* graph known
  at a checkpoint with the top-N of the final graph;
* :func:`discovery_rate`: probability that a link found in a slice points to a URL that
  was already known (and, as in the random-web-crawls paper, already crawled);
* :func:`sink_fraction`: fraction of the crawled pages with no crawled successor.

:func:`crawl_quality` computes them all into a :class:`QualityReport`, with the summary
figures used by ``webcrawl compare``.  Every metric is vectorised (cumulative sums,
``bincount``, ``searchsorted``); only the partial-graph PageRank loops, once per
checkpoint, each warm-started from the previous one.

Time convention used by the link metrics: the page at crawl position ``p`` (0-based)
is fetched at time ``2p`` and its out-links become known at ``2p + 1``; seeds are
known at ``-1``.  A URL is *known* from the first of: being a seed, being linked from a
fetched page, being fetched (a fetched page was known before its fetch).

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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import scipy.sparse as sp
from webcrawl.analysis.graph.captured import CapturedGraph
from webcrawl.analysis.graph.sites import drop_same_site_links
from webcrawl.analysis.ordering.quality_links import (
    discovery_rate,
    link_metrics,
    sink_fraction,
    top_n_overlap,
)
from webcrawl.analysis.ordering.quality_order import (
    capture_at_times,
    default_top_ns,
    ideal_order,
    pagerank_capture,
    rank_positions,
    slice_bounds,
    slice_mean_pagerank,
    time_slice_bounds,
    top_n_fetched,
    top_n_mean_slice,
)
from webcrawl.storage.errors import ConfigError, EmptyGraphError

if TYPE_CHECKING:
    from webcrawl.analysis.graph.kept import GraphSource

__all__ = [
    "QualityReport",
    "QualitySettings",
    "capture_at_times",
    "crawl_quality",
    "default_top_ns",
    "discovery_rate",
    "final_pagerank",
    "ideal_order",
    "pagerank_capture",
    "remote_adjacency",
    "sink_fraction",
    "slice_bounds",
    "slice_mean_pagerank",
    "summary_label",
    "time_slice_bounds",
    "top_n_fetched",
    "top_n_mean_slice",
    "top_n_overlap",
]


@dataclass(frozen=True)
class QualitySettings:
    """Settings of :func:`crawl_quality`.

    Attributes
    ----------
    slices : int
        Number of slices the crawl is cut into (default 20).
    by : {"pages", "time"}
        Slices of equal page counts (default) or of equal duration (needs fetch times).
    top_ns : tuple of int or None
        The N of the top-N metrics; None (default) means 1, 10, 100, ... up to n.
    checkpoints : int
        Number of partial-graph PageRank computations for :func:`top_n_overlap`
        (default 10, spread over the slice ends; 0 skips the metric).
    remote_only : bool
        Use PageRank over links between different sites only (Najork and Wiener's
        variant that removes self-endorsement; mirrored hosts are one site). Default False.
    alpha : float
        PageRank damping factor (default 0.85).
    tol : float
        PageRank tolerance for the final and the partial graphs (default 1e-10).
    summary_fractions : tuple of float
        Fractions of the crawl's pages at which the summary reports PageRank captured
        (default 1%, 10%, 25%, 50%, 100%).  The pages counted are the graph's
        fetchable ones (a finished crawl's order covers them all, so 100% is where it
        ends, on the ``all`` graph too, whose frontier is never fetched).
    summary_top_n : int
        The N of the summary's "top-N found" figure (default 100).
    summary_early_fraction : float
        Fraction of the crawl's pages for "top-N found by" and "mean PageRank of the
        first pages" (default 10%).
    """

    slices: int = 20
    by: Literal["pages", "time"] = "pages"
    top_ns: tuple[int, ...] | None = None
    checkpoints: int = 10
    remote_only: bool = False
    alpha: float = 0.85
    tol: float = 1e-10
    summary_fractions: tuple[float, ...] = (0.01, 0.1, 0.25, 0.5, 1.0)
    summary_top_n: int = 100
    summary_early_fraction: float = 0.1

    def __post_init__(self) -> None:
        if self.slices < 1:
            raise ConfigError(f"slices must be >= 1, got {self.slices}")
        if self.by not in ("pages", "time"):
            raise ConfigError(f"slices are 'pages' or 'time', got {self.by!r}")
        if self.top_ns is not None and (not self.top_ns or min(self.top_ns) < 1):
            raise ConfigError(f"top_ns must be positive integers, got {self.top_ns}")
        if self.checkpoints < 0:
            raise ConfigError(f"checkpoints must be >= 0, got {self.checkpoints}")
        if not 0.0 < self.alpha < 1.0:
            raise ConfigError(f"alpha must be in (0, 1), got {self.alpha}")
        if not self.tol > 0.0:
            raise ConfigError(f"tol must be positive, got {self.tol}")
        fractions = (*self.summary_fractions, self.summary_early_fraction)
        if any(not 0.0 < f <= 1.0 for f in fractions):
            raise ConfigError(f"summary fractions must be in (0, 1], got {fractions}")
        if self.summary_top_n < 1:
            raise ConfigError(f"summary_top_n must be >= 1, got {self.summary_top_n}")


@dataclass(frozen=True, eq=False)
class QualityReport:
    """All quality-over-time metrics of one crawl order (see :func:`crawl_quality`).

    Per-slice arrays have one entry per slice; ``slice_ends[i]`` is the number of pages
    crawled at the end of slice i.  ``capture[k]`` is the PageRank fraction held by the
    first k pages (k = 0..pages).  ``top_fetched[N]`` and ``overlap[N]`` are per slice end
    and per checkpoint (``checkpoint_pages``) respectively.  ``top_mean_slice[N]`` is
    ``(mean slice, fetched)``: the average 1-based slice on which the order fetched the
    top-N pages, and how many of them it fetched (Najork and Wiener).  ``graph`` names
    the graph measured (:meth:`~webcrawl.analysis.graph.captured.CapturedGraph.info`).
    """

    pages: int
    reference_pages: int
    slice_ends: np.ndarray
    slice_end_seconds: np.ndarray | None
    mean_pagerank: np.ndarray
    capture: np.ndarray
    top_fetched: dict[int, np.ndarray]
    checkpoint_pages: np.ndarray
    overlap: dict[int, np.ndarray]
    discovery_known: np.ndarray
    discovery_crawled: np.ndarray
    sinks: np.ndarray
    summary: dict[str, float]
    remote_only: bool = False
    notes: list[str] = field(default_factory=list)
    top_mean_slice: dict[int, tuple[float, int]] = field(default_factory=dict)
    graph: dict[str, Any] = field(default_factory=dict)

    def to_dict(self, *, capture_points: int = 200) -> dict[str, Any]:
        """A JSON-ready dict (NaN becomes None; capture sampled at ``capture_points``)."""
        ks = _sample_points(self.pages, capture_points)
        return {
            "graph": dict(self.graph),
            "pages": self.pages,
            "reference_pages": self.reference_pages,
            "remote_only": self.remote_only,
            "summary": {k: _finite_or_none(v) for k, v in self.summary.items()},
            "slice_ends": self.slice_ends.tolist(),
            "slice_end_seconds": (None if self.slice_end_seconds is None
                                  else self.slice_end_seconds.tolist()),
            "mean_pagerank": _json_list(self.mean_pagerank),
            "capture": {"pages": ks.tolist(), "fraction": _json_list(self.capture[ks])},
            "top_fetched": {str(n): _json_list(v) for n, v in self.top_fetched.items()},
            "top_mean_slice": {str(n): {"mean_slice": _finite_or_none(m), "fetched": c}
                               for n, (m, c) in self.top_mean_slice.items()},
            "checkpoint_pages": self.checkpoint_pages.tolist(),
            "overlap": {str(n): _json_list(v) for n, v in self.overlap.items()},
            "discovery_known": _json_list(self.discovery_known),
            "discovery_crawled": _json_list(self.discovery_crawled),
            "sinks": _json_list(self.sinks),
            "notes": list(self.notes),
        }


# ------------------------------------------------------------------------- PageRank


def remote_adjacency(graph: CapturedGraph) -> sp.csr_array:
    """The adjacency keeping only links between different sites ("remote links"; mirrored
    hosts are one site, :mod:`webcrawl.analysis.graph.sites`)."""
    return drop_same_site_links(graph.adjacency, graph.sites)


def final_pagerank(
    graph: CapturedGraph, *, remote_only: bool = False, alpha: float = 0.85,
    tol: float = 1e-10, source: GraphSource | None = None,
) -> np.ndarray:
    """PageRank of the final captured graph, as a probability vector (sum 1).

    Parameters
    ----------
    graph : CapturedGraph
    remote_only : bool
        Count only links between different sites (Najork and Wiener's variant).
    alpha, tol : float
        Passed to :func:`webcrawl.analysis.graph.pagerank_alg.pagerank`.
    source : GraphSource, optional
        Where ``graph`` was loaded from
        (:func:`webcrawl.analysis.graph.kept.load_source_graph`): the PageRank an
        earlier command kept for the same graph of the same file is used, bit for bit
        the one computed here (:func:`webcrawl.analysis.graph.kept.source_pagerank`),
        and one computed here is kept.  Not with ``remote_only``.

    Returns
    -------
    ndarray of float64, length n

    References
    ----------
    .. [1] Najork and Wiener 2001 (see the module docstring).
    """
    from webcrawl.analysis.graph.kept import source_pagerank

    if graph.n == 0:
        raise EmptyGraphError("the graph has no nodes")
    if remote_only:  # another graph than the one loaded: nothing to keep or reuse
        source = None
    adj = remote_adjacency(graph) if remote_only else graph.adjacency
    return np.asarray(source_pagerank(source, adj, alpha, tol=tol).scores, np.float64)


# ---------------------------------------------------------------------- all at once


def crawl_quality(
    graph: CapturedGraph,
    order: np.ndarray | Sequence[int] | None = None,
    *,
    settings: QualitySettings | None = None,
    scores: np.ndarray | None = None,
    fetch_times: np.ndarray | None = None,
    seeds: np.ndarray | Sequence[int] | None = None,
    rank: np.ndarray | None = None,
) -> QualityReport:
    """Every quality-over-time metric of one crawl order.

    Parameters
    ----------
    graph : CapturedGraph
        The final captured graph.
    order : array of int, optional
        Node indices in fetch order; default the graph's recorded ``fetch_order``.
    settings : QualitySettings, optional
    scores : ndarray, optional
        Final-graph PageRank; computed with :func:`final_pagerank` if omitted (pass it
        to share one computation between several orders of the same graph).
    fetch_times : ndarray, optional
        Fetch time of each order entry, for ``by="time"``; default the graph's
        ``fetch_times`` when ``order`` is the recorded order.
    seeds : array of int, optional
        The crawl's seeds; default ``graph.seeds``.
    rank : ndarray of int, optional
        ``rank_positions(scores)``, if already computed (pass it with ``scores`` to
        share one sort between several orders).

    Returns
    -------
    QualityReport

    Raises
    ------
    EmptyGraphError
        The graph or the order is empty.
    ConfigError
        Time slices without fetch times; an order with repeated or unknown nodes.

    Notes
    -----
    Summary percentages are of the *reference* page count, the graph's fetchable
    nodes (its pages; on the ``all`` graph also the redirects and error pages a crawl
    fetches, not its frontier), so orders of different lengths over one graph compare
    at the same k and a finished crawl's order ends at 100%; an order
    shorter than a requested k reports its value at its end.  Cost: one PageRank of
    the final graph plus ``checkpoints`` warm-started partial ones; everything else is
    O(n + m) work: one pass over the fetched pages' links (compiled when numba is
    installed) and array work on the order, a few arrays of the nodes, nothing a link
    (the partial graphs of ``checkpoints`` excepted).

    Examples
    --------
    >>> g = CapturedGraph.from_edges([0, 1, 2], [1, 2, 0])
    >>> r = crawl_quality(g, scores=np.array([0.5, 0.25, 0.25]),
    ...                   settings=QualitySettings(slices=3, checkpoints=0))
    >>> r.capture.tolist()
    [0.0, 0.5, 0.75, 1.0]

    References
    ----------
    .. [1] Najork and Wiener 2001; Bennouas and de Montgolfier 2007 (module docstring).
    """
    settings = settings or QualitySettings()
    if graph.n == 0:
        raise EmptyGraphError("the graph has no nodes")
    recorded = order is None
    order_a = np.asarray(graph.fetch_order if recorded else order)
    if not np.issubdtype(order_a.dtype, np.integer):  # an empty list; int32 orders stay
        order_a = order_a.astype(np.int64)
    if order_a.size == 0:
        raise EmptyGraphError("the crawl order is empty")
    if order_a.min() < 0 or order_a.max() >= graph.n:
        raise ConfigError("the crawl order holds node indices outside the graph")
    seeds_a = np.asarray(graph.seeds if seeds is None else seeds, dtype=np.int64)
    if scores is None:
        scores = final_pagerank(graph, remote_only=settings.remote_only,
                                alpha=settings.alpha, tol=settings.tol)
    scores = np.asarray(scores, dtype=np.float64)
    rank = rank_positions(scores) if rank is None else rank

    times = fetch_times if fetch_times is not None else (
        graph.fetch_times if recorded else None)
    seconds: np.ndarray | None = None
    if settings.by == "time":
        if times is None or len(times) != order_a.size:
            raise ConfigError("time slices need one fetch time per fetched page "
                              "(a virtual crawl has none: slice by pages)")
        times_a = np.asarray(times, dtype=np.float64)
        bounds = time_slice_bounds(times_a, settings.slices)
        seconds = np.linspace(0.0, times_a[-1] - times_a[0], settings.slices + 1)[1:]
    else:
        bounds = slice_bounds(order_a.size, settings.slices)

    top_ns = settings.top_ns or default_top_ns(graph.n)
    checkpoints = _checkpoints(bounds, settings.checkpoints)
    capture = pagerank_capture(order_a, scores)
    top = top_n_fetched(order_a, scores, bounds, top_ns, rank=rank)
    known, crawled, sinks = link_metrics(graph.adjacency, order_a, bounds, seeds=seeds_a)
    overlap = {}
    if checkpoints.size:
        adj = remote_adjacency(graph) if settings.remote_only else graph.adjacency
        overlap = top_n_overlap(adj, order_a, scores, checkpoints, top_ns, seeds=seeds_a,
                                alpha=settings.alpha, tol=settings.tol)
    reference = int(np.count_nonzero(graph.fetchable)) or order_a.size
    return QualityReport(
        pages=int(order_a.size),
        reference_pages=reference,
        slice_ends=bounds[1:].copy(),
        slice_end_seconds=seconds,
        mean_pagerank=slice_mean_pagerank(order_a, scores, bounds),
        capture=capture,
        top_fetched=top,
        checkpoint_pages=checkpoints,
        overlap=overlap,
        discovery_known=known,
        discovery_crawled=crawled,
        sinks=sinks,
        summary=_summary(order_a, scores, capture, reference, settings, rank),
        remote_only=settings.remote_only,
        top_mean_slice=top_n_mean_slice(order_a, scores, bounds, top_ns, rank=rank),
        graph=graph.info(),
    )


def _checkpoints(bounds: np.ndarray, count: int) -> np.ndarray:
    """At most ``count`` distinct slice ends, evenly spread, always including the last."""
    ends = np.unique(bounds[1:][bounds[1:] > 0])
    if count <= 0 or ends.size == 0:
        return np.empty(0, np.int64)
    pick = np.unique(np.rint(np.linspace(0, ends.size - 1, min(count, ends.size))))
    return ends[pick.astype(np.int64)]


def _summary(order: np.ndarray, scores: np.ndarray, capture: np.ndarray, reference: int,
             settings: QualitySettings, rank: np.ndarray) -> dict[str, float]:
    def at(fraction: float) -> int:
        return min(max(1, round(fraction * reference)), order.size)

    summary = {f"captured_at_{_pct(f)}": float(capture[at(f)])
               for f in settings.summary_fractions}
    early = at(settings.summary_early_fraction)
    t = min(settings.summary_top_n, scores.size)
    summary[f"top{t}_found_by_{_pct(settings.summary_early_fraction)}"] = float(
        np.count_nonzero(rank[order[:early]] < t) / t)
    normalised = scores * (scores.size / scores.sum())
    summary[f"mean_pagerank_first_{_pct(settings.summary_early_fraction)}"] = float(
        normalised[order[:early]].mean())
    return summary


def summary_label(key: str) -> str:
    """A short table header for a summary key (``captured_at_10pct`` -> ``PR@10%``)."""
    text = key.replace("pct", "%")
    if text.startswith("captured_at_") and text.endswith("_time"):
        return "PR@" + text.removeprefix("captured_at_").removesuffix("_time") + "t"
    if text.startswith("captured_at_"):
        return "PR@" + text.removeprefix("captured_at_")
    if text == "simulated_hours":
        return "hours"
    if text.startswith("top") and "_found_by_" in text:
        n, by = text.removeprefix("top").split("_found_by_")
        return f"top{n}@{by}"
    if text.startswith("mean_pagerank_first_"):
        return "meanPR first " + text.removeprefix("mean_pagerank_first_")
    return text


def _pct(fraction: float) -> str:
    return f"{fraction * 100:g}pct"


def _sample_points(pages: int, points: int) -> np.ndarray:
    """About ``points`` page counts in 0..pages, log-spaced (early crawl matters most)."""
    if pages <= points:
        return np.arange(pages + 1)
    logs = np.unique(np.rint(np.geomspace(1, pages, points)).astype(np.int64))
    return np.concatenate(([0], logs))


def _finite_or_none(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def _json_list(values: np.ndarray) -> list[float | None]:
    return [_finite_or_none(v) for v in np.asarray(values, dtype=np.float64).tolist()]
