"""Link and partial-graph crawl-quality metrics: what a crawl order's links reveal.

:func:`discovery_rate` and :func:`sink_fraction` follow the links found as the crawl
grows; :func:`top_n_overlap` ranks the partial graph known at each checkpoint.
:func:`webcrawl.analysis.ordering.quality.crawl_quality` computes them all.

Time convention: the page at crawl position ``p`` (0-based) is fetched at time ``2p``
and its out-links become known at ``2p + 1``; seeds are known at ``-1``.  A URL is
*known* from the first of: being a seed, being linked from a fetched page, being
fetched (a fetched page was known before its fetch).

References
----------
.. [1] M. Najork and J. L. Wiener, "Breadth-first crawling yields high-quality pages",
   Proc. 10th International World Wide Web Conference, 2001.
.. [2] T. Bennouas and F. de Montgolfier, "Random web crawls", Proc. 16th
   International World Wide Web Conference, 2007.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from webcrawl.analysis._compiled import compiled
from webcrawl.analysis.ordering.quality_order import rank_positions
from webcrawl.storage.errors import ConfigError

__all__ = ["discovery_rate", "link_metrics", "sink_fraction", "top_n_overlap"]

#: Time code of a URL never known (larger than any ``2p + 1``).
_NEVER = np.iinfo(np.int64).max


# ------------------------------------------------------------------- link metrics


# discovery_rate and sink_fraction are counts over the links an order reveals, page by
# page in fetch order: one pass over each fetched page's row of the adjacency, with
# two numbers a node side by side (its position in the order, the first position
# that linked to it): 8 bytes a node, one cache line a link, nothing a link kept.
# Compiled (numba) the pass is one loop; without numba it goes through the order in chunks of about
# _CHUNK links, vectorised.  Both count the same integers, so the rates are identical
# (tested against each other and a step-by-step reference).

#: Links handled at once by the vectorised pass (bounds its temporaries: ~50 bytes a link).
_CHUNK = 1 << 22


@dataclass(frozen=True)
class _LinkCounts:
    """What one pass over an order's links counts."""

    total: np.ndarray      # links found per slice (int64)
    known: np.ndarray      # ... whose target was known when found
    crawled: np.ndarray    # ... whose target was fetched by then
    non_sinks: np.ndarray  # per checkpoint k: pages of the first k with a successor among them

    def rates(self) -> tuple[np.ndarray, np.ndarray]:
        """(known, crawled) fractions per slice; NaN where a slice found no link."""
        total = self.total.astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.known / total, self.crawled / total

    def sinks(self, checkpoints: np.ndarray) -> np.ndarray:
        """Fraction of sinks among the first k pages, per checkpoint k (NaN for k = 0)."""
        ks = np.asarray(checkpoints, dtype=np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(ks > 0, 1.0 - self.non_sinks / np.maximum(ks, 1), np.nan)


def _link_counts(adjacency: sp.csr_array, order: np.ndarray, bounds: np.ndarray,
                 checkpoints: np.ndarray, seeds: np.ndarray) -> _LinkCounts:
    """Count, in one pass over the links of ``order``'s pages, what
    :func:`discovery_rate` and :func:`sink_fraction` report.

    A link of the page at position ``p`` counts in slice ``i``, the last with
    ``bounds[i] <= p`` (a page past the last bound counts in one more slice, as
    ``bincount`` would).  A page stops being a sink once one of its successors (itself
    excluded) is in the order and both are fetched: at ``max(p, q) + 1`` pages.
    """
    order = np.asarray(order)
    if not np.issubdtype(order.dtype, np.integer):
        order = order.astype(np.int64)
    bounds = np.asarray(bounds, dtype=np.int64)
    if bounds.size < 2 or bounds[0] > 0 or np.any(np.diff(bounds) < 0):
        raise ConfigError("slice bounds must start at 0 and never decrease")
    adj = adjacency if isinstance(adjacency, sp.csr_array) else sp.csr_array(adjacency)
    indptr, indices = adj.indptr, adj.indices
    n = adj.shape[0]
    index = np.int32 if max(n, order.size) < np.iinfo(np.int32).max else np.int64
    # Per node, side by side (one cache line a link): its position in the order (-1:
    # none) and the first position whose page linked to it (order.size: none yet; -1
    # for a seed, known from the start).
    state = np.empty((n, 2), dtype=index)
    state[:, 0] = -1
    state[order, 0] = np.arange(order.size, dtype=index)
    if np.count_nonzero(state[:, 0] >= 0) != order.size:
        raise ConfigError("the crawl order fetches a node twice")
    state[:, 1] = order.size
    state[np.asarray(seeds, dtype=np.int64), 1] = -1
    ck = np.asarray(checkpoints, dtype=np.int64)
    by_k = np.argsort(ck, kind="stable")
    slices = bounds.size  # one more than the slices: pages past the last bound
    counts = np.zeros((3, slices), np.int64)  # links found, to known, to fetched URLs
    hist = np.zeros(ck.size + 1, dtype=np.int64)  # pages by the first checkpoint >= becomes
    run = compiled(_link_pass)
    if run is not None:
        run(indptr, indices, order, state, bounds, ck[by_k], counts, hist)
    else:
        _link_pass_numpy(indptr, indices, order, state, bounds, ck[by_k], counts, hist)
    total, known, crawled = counts
    keep = slices if total[-1] else slices - 1
    non_sinks = np.empty(ck.size, dtype=np.int64)
    non_sinks[by_k] = np.cumsum(hist)[:ck.size]
    return _LinkCounts(total[:keep], known[:keep], crawled[:keep], non_sinks)


def _link_pass(indptr: Any, indices: Any, order: Any, state: Any, bounds: Any,
               checkpoints: Any, counts: Any,
               hist: Any) -> None:  # pragma: no cover - compiled by numba
    """The counting pass of :func:`_link_counts` (plain Python, compiled by numba);
    ``checkpoints`` sorted."""
    s = -1
    never = order.size + 1
    for p in range(order.size):
        while s + 1 < bounds.size and bounds[s + 1] <= p:
            s += 1
        page = order[p]
        becomes = never
        for k in range(indptr[page], indptr[page + 1]):
            t = indices[k]
            q = state[t, 0]
            fetched = q >= 0 and q <= p
            counts[0, s] += 1
            if fetched or state[t, 1] < p:
                counts[1, s] += 1
            if fetched:
                counts[2, s] += 1
            if state[t, 1] > p:
                state[t, 1] = p
            if q >= 0 and t != page:
                becomes = min(becomes, max(p, q) + 1)
        if becomes < never:
            hist[np.searchsorted(checkpoints, becomes)] += 1


def _link_pass_numpy(indptr: np.ndarray, indices: np.ndarray, order: np.ndarray,
                     state: np.ndarray, bounds: np.ndarray, checkpoints: np.ndarray,
                     counts: np.ndarray, hist: np.ndarray) -> None:
    """:func:`_link_pass` vectorised, over chunks of about ``_CHUNK`` links."""
    position, linked = state[:, 0], state[:, 1]
    degree = (indptr[order + 1] - indptr[order]).astype(np.int64)
    ends = np.cumsum(degree)
    lo = 0
    while lo < order.size:
        hi = max(int(np.searchsorted(ends, (ends[lo - 1] if lo else 0) + _CHUNK,
                                     side="right")), lo + 1)
        pages, per_page = order[lo:hi], degree[lo:hi]
        pos = np.repeat(np.arange(lo, hi, dtype=np.int64), per_page)
        starts = indptr[pages].astype(np.int64)
        at = np.repeat(starts - np.cumsum(per_page) + per_page, per_page)
        at += np.arange(at.size, dtype=np.int64)
        dst = indices[at].astype(np.int64)
        q = position[dst].astype(np.int64)
        fetched = (q >= 0) & (q <= pos)
        # The first link to a target in the chunk (links are in position order).
        targets, first = np.unique(dst, return_index=True)
        linked[targets] = np.minimum(linked[targets], pos[first])
        is_known = fetched | (linked[dst] < pos)
        slice_of = np.searchsorted(bounds, pos, side="right") - 1
        for row, mask in enumerate((slice(None), is_known, fetched)):
            counts[row] += np.bincount(slice_of[mask], minlength=counts.shape[1])
        need = np.where((q >= 0) & (dst != np.repeat(pages, per_page)),
                        np.maximum(pos, q) + 1, _NEVER)
        linking = np.flatnonzero(per_page)
        if linking.size:  # each page's first link in the chunk's arrays
            firsts = ends[lo:hi] - per_page - (ends[lo - 1] if lo else 0)
            becomes = np.minimum.reduceat(need, firsts[linking])
            becomes = becomes[becomes < _NEVER]
            hist += np.bincount(np.searchsorted(checkpoints, becomes), minlength=hist.size)
        lo = hi


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

    Notes
    -----
    One pass over the fetched pages' links (compiled with numba when installed):
    O(n + m) time, 8 bytes a node of memory and nothing a link.

    References
    ----------
    .. [1] Bennouas and de Montgolfier 2007, figure 12 "discovery rate".
    """
    return _link_counts(adjacency, order, bounds, np.empty(0, np.int64),
                        np.asarray(seeds)).rates()


def sink_fraction(adjacency: sp.csr_array, order: np.ndarray,
                  checkpoints: np.ndarray) -> np.ndarray:
    """Fraction of the first k crawled pages with no successor among them, per k.

    Self-links do not count as successors.

    References
    ----------
    .. [1] Bennouas and de Montgolfier 2007, figure 13 (proportion of sinks).
    """
    order = np.asarray(order)
    counts = _link_counts(adjacency, order, np.array([0, max(order.size, 1)]),
                          np.asarray(checkpoints), np.empty(0, np.int64))
    return counts.sinks(np.asarray(checkpoints))


def link_metrics(adjacency: sp.csr_array, order: np.ndarray, bounds: np.ndarray, *,
                 seeds: np.ndarray | Sequence[int] = (0,),
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`discovery_rate` (known, crawled) and :func:`sink_fraction` at the slice
    ends ``bounds[1:]``, from one pass over the links."""
    bounds = np.asarray(bounds, dtype=np.int64)
    counts = _link_counts(adjacency, order, bounds, bounds[1:], np.asarray(seeds))
    known, crawled = counts.rates()
    return known, crawled, counts.sinks(bounds[1:])


# ------------------------------------------------------------ partial graphs


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
    from webcrawl.analysis.graph.pagerank_alg import pagerank

    links = _order_links(adjacency, order, np.asarray(seeds))
    final_rank = rank_positions(np.asarray(scores, dtype=np.float64))
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


