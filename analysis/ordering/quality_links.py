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

import numpy as np
import scipy.sparse as sp
from webcrawl.analysis.ordering.quality_order import rank_positions
from webcrawl.storage.errors import ConfigError

__all__ = ["discovery_rate", "sink_fraction", "top_n_overlap"]

#: Time code of a URL never known (larger than any ``2p + 1``).
_NEVER = np.iinfo(np.int64).max


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


