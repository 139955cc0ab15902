"""Crawl quality over time: how fast a crawl order finds the important pages.

Every metric takes a crawl *order* (node indices in fetch order, a recorded crawl's
``fetch_order`` or a virtual crawl's order), a :class:`~analysis.graph.CapturedGraph`
and the PageRank of the *final* graph, and describes the crawl as it grows:

* :func:`slice_mean_pagerank`: average PageRank (mean 1 over the graph) of the pages
  fetched in each slice of the crawl (Najork and Wiener's day-by-day curve);
* :func:`pagerank_capture`: fraction of the total PageRank held by the first k pages
  (Bennouas and de Montgolfier's "PageRank capture");
* :func:`top_n_fetched`: fraction of the top-N pages fetched by the end of each slice;
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
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp

from analysis.graph import CapturedGraph
from storage.errors import ConfigError, EmptyGraphError

__all__ = [
    "QualityReport",
    "QualitySettings",
    "crawl_quality",
    "default_top_ns",
    "discovery_rate",
    "final_pagerank",
    "pagerank_capture",
    "remote_adjacency",
    "sink_fraction",
    "slice_bounds",
    "slice_mean_pagerank",
    "summary_label",
    "time_slice_bounds",
    "top_n_fetched",
    "top_n_overlap",
]

#: Time code of a URL never known (larger than any ``2p + 1``).
_NEVER = np.iinfo(np.int64).max


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
        Use PageRank over links between different hosts only (Najork and Wiener's
        variant that removes self-endorsement). Default False.
    alpha : float
        PageRank damping factor (default 0.85).
    tol : float
        PageRank tolerance for the final and the partial graphs (default 1e-10).
    summary_fractions : tuple of float
        Fractions of the crawl's pages at which the summary reports PageRank captured
        (default 1%, 10%, 50%).
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
    summary_fractions: tuple[float, ...] = (0.01, 0.1, 0.5)
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
    and per checkpoint (``checkpoint_pages``) respectively.
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

    def to_dict(self, *, capture_points: int = 200) -> dict[str, Any]:
        """A JSON-ready dict (NaN becomes None; capture sampled at ``capture_points``)."""
        ks = _sample_points(self.pages, capture_points)
        return {
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
            "checkpoint_pages": self.checkpoint_pages.tolist(),
            "overlap": {str(n): _json_list(v) for n, v in self.overlap.items()},
            "discovery_known": _json_list(self.discovery_known),
            "discovery_crawled": _json_list(self.discovery_crawled),
            "sinks": _json_list(self.sinks),
            "notes": list(self.notes),
        }


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


# ------------------------------------------------------------------------- PageRank


def remote_adjacency(graph: CapturedGraph) -> sp.csr_array:
    """The adjacency keeping only links between different hosts ("remote links")."""
    adj = sp.csr_array(graph.adjacency)
    src = np.repeat(np.arange(adj.shape[0]), np.diff(adj.indptr))
    hosts = np.asarray(graph.hosts)
    keep = hosts[src] != hosts[adj.indices]
    return sp.csr_array((adj.data[keep], (src[keep], adj.indices[keep])), shape=adj.shape)


def final_pagerank(
    graph: CapturedGraph, *, remote_only: bool = False, alpha: float = 0.85,
    tol: float = 1e-10,
) -> np.ndarray:
    """PageRank of the final captured graph, as a probability vector (sum 1).

    Parameters
    ----------
    graph : CapturedGraph
    remote_only : bool
        Count only links between different hosts (Najork and Wiener's variant).
    alpha, tol : float
        Passed to :func:`analysis.pagerank.pagerank`.

    Returns
    -------
    ndarray of float64, length n

    References
    ----------
    .. [1] Najork and Wiener 2001 (see the module docstring).
    """
    from analysis.pagerank import pagerank

    if graph.n == 0:
        raise EmptyGraphError("the graph has no nodes")
    adj = remote_adjacency(graph) if remote_only else graph.adjacency
    return np.asarray(pagerank(adj, alpha, tol=tol, normalize="sum").scores, np.float64)


def default_top_ns(n: int) -> tuple[int, ...]:
    """1, 10, 100, ... up to n (at least (1,))."""
    return tuple(10**e for e in range(int(math.log10(max(n, 1))) + 1))


def _rank_positions(scores: np.ndarray) -> np.ndarray:
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
                  top_ns: Sequence[int]) -> dict[int, np.ndarray]:
    """Fraction of the top-N pages (by final PageRank) fetched by the end of each slice.

    Ties in PageRank go to the lower node index.  Returns ``{N: array per slice end}``
    for each N <= n.

    References
    ----------
    .. [1] Najork and Wiener 2001, figures 2 and 3 (when the top-N pages were crawled).
    """
    rank = _rank_positions(np.asarray(scores, dtype=np.float64))[np.asarray(order)]
    out: dict[int, np.ndarray] = {}
    for n_top in top_ns:
        if n_top > scores.size:
            continue
        found = np.concatenate(([0], np.cumsum(rank < n_top)))
        out[int(n_top)] = found[bounds[1:]] / n_top
    return out


# ------------------------------------------------------------------- link metrics


@dataclass(frozen=True)
class _OrderLinks:
    """The links revealed by an order, grouped by the position of their source."""

    pos: np.ndarray          # crawl position of each link's source (non-decreasing)
    src: np.ndarray          # source node
    dst: np.ndarray          # target node
    weight: np.ndarray       # adjacency weight (link count)
    position: np.ndarray     # node -> crawl position, -1 if not in the order
    first_known: np.ndarray  # node -> time code it became known (see module docstring)


def _order_links(adjacency: sp.csr_array, order: np.ndarray,
                 seeds: np.ndarray) -> _OrderLinks:
    adj = sp.csr_array(adjacency)
    n = adj.shape[0]
    order = np.asarray(order, dtype=np.int64)
    position = np.full(n, -1, dtype=np.int64)
    position[order] = np.arange(order.size)
    if np.count_nonzero(position >= 0) != order.size:
        raise ConfigError("the crawl order fetches a node twice")
    rows = adj[order]  # CSR rows in fetch order: links come out sorted by position
    pos = np.repeat(np.arange(order.size, dtype=np.int64), np.diff(rows.indptr))
    dst = rows.indices.astype(np.int64)
    first_known = np.full(n, _NEVER, dtype=np.int64)
    # First occurrence of a target in position order = the link that revealed it.
    targets, first = np.unique(dst, return_index=True)
    first_known[targets] = 2 * pos[first] + 1
    first_known[order] = np.minimum(first_known[order], 2 * np.arange(order.size))
    first_known[np.asarray(seeds, dtype=np.int64)] = -1
    return _OrderLinks(pos=pos, src=order[pos], dst=dst, weight=rows.data.astype(np.float64),
                       position=position, first_known=first_known)


def discovery_rate(adjacency: sp.csr_array, order: np.ndarray, bounds: np.ndarray, *,
                   seeds: np.ndarray | Sequence[int] = (0,),
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Per slice, the probability that a link found points to an old URL.

    A link is a distinct (source, target) pair revealed by fetching its source.

    Returns
    -------
    known : ndarray of float64, one per slice
        Fraction of the slice's links whose target was already known (a seed, fetched,
        or linked from an earlier page) when the link was found.
    crawled : ndarray of float64, one per slice
        Fraction whose target was already fetched (the random-web-crawls paper's
        "probability of seeing an old vertex"; a self-link counts as old).
    Both are NaN for slices that found no link.

    References
    ----------
    .. [1] Bennouas and de Montgolfier 2007, figure 12 "discovery rate".
    """
    links = _order_links(adjacency, order, np.asarray(seeds))
    found_at = 2 * links.pos + 1
    known = links.first_known[links.dst] < found_at
    target_pos = links.position[links.dst]
    crawled = (target_pos >= 0) & (target_pos <= links.pos)
    slice_of = np.searchsorted(bounds, links.pos, side="right") - 1
    s = bounds.size - 1
    total = np.bincount(slice_of, minlength=s).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        rate_known = np.bincount(slice_of, weights=known, minlength=s) / total
        rate_crawled = np.bincount(slice_of, weights=crawled, minlength=s) / total
    return rate_known, rate_crawled


def sink_fraction(adjacency: sp.csr_array, order: np.ndarray,
                  checkpoints: np.ndarray) -> np.ndarray:
    """Fraction of the first k crawled pages with no successor among them, per k.

    Self-links do not count as successors.

    References
    ----------
    .. [1] Bennouas and de Montgolfier 2007, figure 13 (proportion of sinks).
    """
    links = _order_links(adjacency, order, np.empty(0, np.int64))
    target_pos = links.position[links.dst]
    inside = (target_pos >= 0) & (links.dst != links.src)
    # A page stops being a sink once both it and one of its successors are crawled.
    needed = np.maximum(links.pos[inside], target_pos[inside]) + 1
    becomes = np.full(order.size, _NEVER, dtype=np.int64)
    np.minimum.at(becomes, links.pos[inside], needed)
    non_sinks = np.searchsorted(np.sort(becomes), checkpoints, side="right")
    ks = np.asarray(checkpoints, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(ks > 0, 1.0 - non_sinks / np.maximum(ks, 1), np.nan)


def top_n_overlap(
    adjacency: sp.csr_array, order: np.ndarray, scores: np.ndarray,
    checkpoints: np.ndarray, top_ns: Sequence[int], *,
    seeds: np.ndarray | Sequence[int] = (0,), alpha: float = 0.85, tol: float = 1e-10,
) -> dict[int, np.ndarray]:
    """Overlap of the top-N of the partial graph at each checkpoint with the final top-N.

    The partial graph after k pages holds every URL known then (seeds, fetched pages
    and their link targets) and the links of the k fetched pages.  Its PageRank is
    computed at each checkpoint, warm-started from the previous checkpoint's scores.

    Parameters
    ----------
    adjacency : sparse array
        The final graph's adjacency (filter it first for the remote-links variant).
    order : ndarray of int
    scores : ndarray of float
        Final-graph PageRank (defines the final top-N; ties -> lower index).
    checkpoints : ndarray of int
        Page counts k at which to compute the partial PageRank.
    top_ns : sequence of int
    seeds, alpha, tol
        Seeds of the crawl; PageRank parameters.

    Returns
    -------
    dict
        ``{N: ndarray}``, the fraction of the final top-N that is in the partial top-N,
        one value per checkpoint.

    References
    ----------
    .. [1] Najork and Wiener 2001, figure 4 (top pages of the graph induced by the
       first days versus the final graph).
    """
    from analysis.pagerank import pagerank

    links = _order_links(adjacency, order, np.asarray(seeds))
    final_rank = _rank_positions(np.asarray(scores, dtype=np.float64))
    n = final_rank.size
    ns = [int(t) for t in top_ns if t <= n]
    out = {t: np.empty(len(checkpoints)) for t in ns}
    local = np.full(n, -1, dtype=np.int64)
    prev_nodes = np.empty(0, np.int64)
    prev_x = np.empty(0)
    for i, k in enumerate(np.asarray(checkpoints, dtype=np.int64)):
        nodes = np.flatnonzero(links.first_known < 2 * k)
        local[nodes] = np.arange(nodes.size)
        e = int(np.searchsorted(links.pos, k, side="left"))
        sub = sp.csr_array((links.weight[:e], (local[links.src[:e]], local[links.dst[:e]])),
                           shape=(nodes.size, nodes.size))
        # Warm start: known nodes only ever grow; newcomers start at the uniform value.
        x0 = np.full(nodes.size, 1.0 / nodes.size)
        x0[local[prev_nodes]] = prev_x * (prev_nodes.size / nodes.size)
        x = np.asarray(pagerank(sub, alpha, tol=tol, normalize="sum", x0=x0).scores)
        best = nodes[np.argsort(-x, kind="stable")]
        for t in ns:
            out[t][i] = np.count_nonzero(final_rank[best[:t]] < t) / t
        prev_nodes, prev_x = nodes, x
    return out


# ---------------------------------------------------------------------- all at once


def crawl_quality(
    graph: CapturedGraph,
    order: np.ndarray | Sequence[int] | None = None,
    *,
    settings: QualitySettings | None = None,
    scores: np.ndarray | None = None,
    fetch_times: np.ndarray | None = None,
    seeds: np.ndarray | Sequence[int] | None = None,
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
    Summary percentages are of the *reference* page count, the graph's crawled pages
    (so orders of different lengths over one graph compare at the same k); an order
    shorter than a requested k reports its value at its end.  Cost: one PageRank of
    the final graph plus ``checkpoints`` warm-started partial ones; everything else is
    O(n + m) array work.

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
    order_a = np.asarray(graph.fetch_order if recorded else order, dtype=np.int64)
    if order_a.size == 0:
        raise EmptyGraphError("the crawl order is empty")
    if order_a.min() < 0 or order_a.max() >= graph.n:
        raise ConfigError("the crawl order holds node indices outside the graph")
    seeds_a = np.asarray(graph.seeds if seeds is None else seeds, dtype=np.int64)
    adj = remote_adjacency(graph) if settings.remote_only else graph.adjacency
    if scores is None:
        scores = final_pagerank(graph, remote_only=settings.remote_only,
                                alpha=settings.alpha, tol=settings.tol)
    scores = np.asarray(scores, dtype=np.float64)

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
    top = top_n_fetched(order_a, scores, bounds, top_ns)
    known, crawled = discovery_rate(graph.adjacency, order_a, bounds, seeds=seeds_a)
    overlap = (top_n_overlap(adj, order_a, scores, checkpoints, top_ns, seeds=seeds_a,
                             alpha=settings.alpha, tol=settings.tol)
               if checkpoints.size else {})
    reference = int(np.count_nonzero(graph.crawled)) or order_a.size
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
        sinks=sink_fraction(graph.adjacency, order_a, bounds[1:]),
        summary=_summary(order_a, scores, capture, reference, settings),
        remote_only=settings.remote_only,
    )


def _checkpoints(bounds: np.ndarray, count: int) -> np.ndarray:
    """At most ``count`` distinct slice ends, evenly spread, always including the last."""
    ends = np.unique(bounds[1:][bounds[1:] > 0])
    if count <= 0 or ends.size == 0:
        return np.empty(0, np.int64)
    pick = np.unique(np.rint(np.linspace(0, ends.size - 1, min(count, ends.size))))
    return ends[pick.astype(np.int64)]


def _summary(order: np.ndarray, scores: np.ndarray, capture: np.ndarray, reference: int,
             settings: QualitySettings) -> dict[str, float]:
    def at(fraction: float) -> int:
        return min(max(1, round(fraction * reference)), order.size)

    summary = {f"captured_at_{_pct(f)}": float(capture[at(f)])
               for f in settings.summary_fractions}
    early = at(settings.summary_early_fraction)
    t = min(settings.summary_top_n, scores.size)
    rank = _rank_positions(scores)
    summary[f"top{t}_found_by_{_pct(settings.summary_early_fraction)}"] = float(
        np.count_nonzero(rank[order[:early]] < t) / t)
    normalised = scores * (scores.size / scores.sum())
    summary[f"mean_pagerank_first_{_pct(settings.summary_early_fraction)}"] = float(
        normalised[order[:early]].mean())
    return summary


def summary_label(key: str) -> str:
    """A short table header for a summary key (``captured_at_10pct`` -> ``PR@10%``)."""
    text = key.replace("pct", "%")
    if text.startswith("captured_at_"):
        return "PR@" + text.removeprefix("captured_at_")
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
