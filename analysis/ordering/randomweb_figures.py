"""What Bennouas and de Montgolfier report for their random web crawls, and the
readings of their measures: the ranges their figures show, the laws they fitted, and
sinks and the largest SCC with and without the crawl's frontier.

The paper measures on the crawled pages: "for discussing structural properties, the
crawled pages only are to be considered" (section 4.1), and figure 13 plots "the
proportion of sinks (pages with no crawled successors) among crawled pages".  That is
the reproduction (:func:`webcrawl.analysis.ordering.along.measure_along`, and the
``crawled`` fields of :class:`SinkReadings`).  Section 2 describes real crawls as having
"a lot of sinks (pages not crawled yet or with no external hyperlink)"; counting the
frontier (discovered pages not crawled) into the graph, the ``frontier`` fields, is a
diagnostic of how far that reading moves the figures, not the paper's measure.

References
----------
.. [1] T. Bennouas and F. de Montgolfier, "Random web crawls", WWW 2007.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph
from webcrawl.analysis.graph.captured import CapturedGraph
from webcrawl.storage.errors import ConfigError

__all__ = ["PAPER_CURVES", "PAPER_RANGES", "SinkReadings", "paper_curve", "sink_readings"]


#: What Bennouas and de Montgolfier report for BFS crawls of their model, as
#: ``quantity -> (low, high, where)``: the range a measurement along the crawl should
#: fall in.  Exponents: the model's parameters, "at any step ... with very small
#: deviation" (figures 1-2), PageRank "a Zipf law with exponent 2.1" (figure 10);
#: discovery rate "converges toward 40%" (figure 12, 10%-55% plotted); sinks 20%-50%
#: (figure 13); (4,4) cores "between n/100 and n/50" (figure 9, 0.01-0.035 plotted);
#: largest SCC toward two thirds with one seed (figure 7, 0.4-0.7 plotted);
#: clustering 0.15-0.4 (figure 6).
PAPER_RANGES: dict[str, tuple[float, float, str]] = {
    "in_exponent": (1.95, 2.25, "fig. 2: 2.1"),
    "out_exponent": (2.55, 2.9, "fig. 1: 2.72"),
    "pagerank_exponent": (1.95, 2.25, "fig. 10: 2.1"),
    "discovery": (0.25, 0.45, "fig. 12: toward 40%"),
    "sinks": (0.2, 0.5, "fig. 13: 20-50%"),
    "cores44": (0.01, 0.035, "fig. 9: n/100-n/50 (plotted 0.01-0.035)"),
    "scc": (0.4, 0.7, "fig. 7: toward 2/3"),
    "clustering": (0.15, 0.4, "fig. 6: 0.15-0.4"),
}


#: The laws Bennouas and de Montgolfier fitted to their BFS curves, as ``quantity ->
#: (a, b, where)`` meaning ``a + b ln(x)`` at x pages crawled (natural logarithm: the
#: discovery fit gives 42.5% at 2e7, "toward 40%").  Discovery rate, figure 12
#: (in percent there): ``4.4 ln x - 31.46``; sinks, figure 13 (BFS and DEG):
#: ``0.791703 - 0.0323677 ln x``; clustering, figure 6 (the first of its two fits;
#: the figure does not say which strategy each is): ``0.750029 - 0.0454094 ln x``.
#: The figures plot x from about 1e5 (sinks, discovery: up to 2e7; clustering: up to
#: 5e5); below that the laws are extrapolations (the discovery law is negative below
#: about 1,270 pages).
PAPER_CURVES: dict[str, tuple[float, float, str]] = {
    "discovery": (-0.3146, 0.044, "fig. 12: 4.4 ln x - 31.46 %"),
    "sinks": (0.791703, -0.0323677, "fig. 13: 0.7917 - 0.0324 ln x"),
    "clustering": (0.750029, -0.0454094, "fig. 6: 0.7500 - 0.0454 ln x"),
}


def paper_curve(quantity: str, pages: np.ndarray | list[int]) -> np.ndarray:
    """The paper's fitted law for ``quantity`` at the given numbers of crawled pages.

    Parameters
    ----------
    quantity : str
        A key of :data:`PAPER_CURVES` (``discovery``, ``sinks``, ``clustering``).
    pages : array_like of int
        Numbers of pages crawled (> 0).

    Returns
    -------
    ndarray of float64
        ``a + b ln(pages)``, as a fraction.

    Raises
    ------
    ConfigError
        On an unknown quantity or a non-positive page count.

    Examples
    --------
    >>> paper_curve("discovery", [20_000_000]).round(3).tolist()
    [0.425]

    References
    ----------
    .. [1] T. Bennouas and F. de Montgolfier, "Random web crawls", WWW 2007,
       figures 6, 12 and 13.
    """
    if quantity not in PAPER_CURVES:
        raise ConfigError(f"no fitted law for {quantity!r}; choose from "
                          f"{', '.join(PAPER_CURVES)}")
    x = np.asarray(pages, dtype=np.float64)
    if x.size and x.min() <= 0:
        raise ConfigError("page counts must be > 0")
    a, b, _ = PAPER_CURVES[quantity]
    return np.asarray(a + b * np.log(x), dtype=np.float64)


@dataclass(frozen=True)
class SinkReadings:
    """Sinks and largest SCC along a crawl: by the paper's definition, and with the
    frontier counted in (a diagnostic).

    Attributes
    ----------
    pages : ndarray of int64
        Checkpoints: pages crawled.
    frontier : ndarray of int64
        Pages discovered (linked from a crawled page) but not crawled yet.
    sinks_crawled, scc_crawled : ndarray of float64
        The paper's measures (section 4.1, figure 13): over the crawled pages and
        the links among them, the fraction of pages with no crawled successor, and
        the largest SCC's share.
    sinks_frontier, scc_frontier : ndarray of float64
        A diagnostic: over the crawled pages and the frontier (every link of a
        crawled page), the fraction of pages "not crawled yet or with no external
        hyperlink" (section 2's description of real crawls), and the largest SCC's
        share of all of them.
    """

    pages: np.ndarray
    frontier: np.ndarray
    sinks_crawled: np.ndarray
    scc_crawled: np.ndarray
    sinks_frontier: np.ndarray
    scc_frontier: np.ndarray

    def to_dict(self) -> dict[str, list[float]]:
        """JSON-ready lists."""
        return {k: getattr(self, k).tolist() for k in (
            "pages", "frontier", "sinks_crawled", "sinks_frontier", "scc_crawled",
            "scc_frontier")}


def sink_readings(graph: CapturedGraph, checkpoints: Sequence[int]) -> SinkReadings:
    """Sinks and largest SCC over the crawled pages (the paper's), and over crawled +
    frontier (a diagnostic).

    Bennouas and de Montgolfier measure on the crawled pages: "for discussing
    structural properties, the crawled pages only are to be considered" (section
    4.1), and figure 13 is "the proportion of sinks (pages with no crawled
    successors) among crawled pages"; the ``crawled`` readings are those, the same
    as :func:`webcrawl.analysis.ordering.along.measure_along`'s.  Section 2 describes
    real crawls' sinks as pages "not crawled yet or with no external hyperlink",
    which would count the frontier (discovered pages not crawled) into the graph:
    the ``frontier`` readings show how far that moves the figures.

    Parameters
    ----------
    graph : CapturedGraph
        A crawl with its ``fetch_order`` (e.g. ``random_web_crawl(...).graph``); only
        crawled pages have out-links.
    checkpoints : sequence of int
        Numbers of crawled pages to measure at (1..len(fetch_order)).

    Returns
    -------
    SinkReadings

    Raises
    ------
    ConfigError
        On a checkpoint outside ``1..len(fetch_order)``.

    Examples
    --------
    >>> from webcrawl.analysis.ordering.randomweb import random_web_crawl
    >>> web = random_web_crawl(20000, "BFS", max_pages=1000, seed=1)
    >>> r = sink_readings(web.graph, [1000])
    >>> bool(r.sinks_frontier[0] > r.sinks_crawled[0]), bool(r.frontier[0] > 0)
    (True, True)

    Notes
    -----
    Per checkpoint k: one subgraph extraction and one strongly-connected-components
    pass over the first k crawled pages (with their frontier: every target of their
    links), O(m) each.  A page's self-link is not an external hyperlink.

    References
    ----------
    .. [1] T. Bennouas and F. de Montgolfier, "Random web crawls", WWW 2007,
       sections 2 and 4.1, figures 7 and 13.
    """
    order = np.asarray(graph.fetch_order, dtype=np.int64)
    ks = np.asarray(list(checkpoints), dtype=np.int64)
    if ks.size == 0 or ks.min() < 1 or ks.max() > order.size:
        raise ConfigError(f"checkpoints must be in 1..{order.size}")
    adj = sp.csr_array(graph.adjacency)
    adj = sp.csr_array((np.ones(adj.nnz), adj.indices, adj.indptr), shape=adj.shape)
    adj.setdiag(0)
    adj.eliminate_zeros()
    out = np.zeros((4, ks.size))
    frontier = np.zeros(ks.size, dtype=np.int64)
    for p, k in enumerate(ks.tolist()):
        crawled = order[:k]
        rows = adj[crawled]
        nodes = np.union1d(crawled, rows.indices)      # crawled + frontier
        frontier[p] = nodes.size - k
        graphs = (sp.csr_array(rows[:, crawled]), _reindex(rows, crawled, nodes))
        for r, local in enumerate(graphs):
            size = local.shape[0]
            out[2 * r, p] = np.count_nonzero(np.diff(local.indptr) == 0) / size
            _, labels = csgraph.connected_components(local, directed=True,
                                                     connection="strong")
            out[2 * r + 1, p] = np.bincount(labels).max() / size
    return SinkReadings(ks, frontier, out[0], out[1], out[2], out[3])


def _reindex(rows: sp.csr_array, crawled: np.ndarray, nodes: np.ndarray) -> sp.csr_array:
    """The crawled pages' links on the node set ``nodes`` (crawled + frontier)."""
    coo = rows.tocoo()
    src = np.searchsorted(nodes, crawled[coo.row])
    dst = np.searchsorted(nodes, coo.col)
    return sp.csr_array((coo.data, (src, dst)), shape=(nodes.size, nodes.size))
