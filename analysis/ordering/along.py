"""Graph measurements along a crawl: what the crawl's graph looked like after k pages.

Bennouas and de Montgolfier plot every property of their random web crawls against
the number of pages crawled: degree laws (figures 1-2), clustering (6), bow-tie
regions (7), (4, 4) cores (9), the PageRank law (10), the discovery rate (12) and the
fraction of sinks (13).  :func:`measure_along` computes those at checkpoints of any
recorded or simulated crawl order, on the crawl graph as it stood: the first k
fetched pages and the links among them ("for discussing structural properties, the
crawled pages only are to be considered", section 4.1; sinks are "pages with no crawled
successors among crawled pages", figure 13), except the out-degree law, which counts
every link the k pages hold (the crawler knows them all).  (4, 4) cores are counted
as the paper counts them, cores of "at least four hubs and four authorities" (section
5.4, figure 9): ``cores44``; the count by exact size is kept beside it as a labelled
diagnostic, ``cores44_exact``.

References
----------
.. [1] T. Bennouas and F. de Montgolfier, "Random web crawls", WWW 2007.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from webcrawl.analysis.graph.bowtie_alg import Region, bowtie
from webcrawl.analysis.graph.captured import CapturedGraph
from webcrawl.analysis.graph.cores import CoreConfig, bipartite_cores
from webcrawl.analysis.graph.degree_dist import fit_power_law
from webcrawl.analysis.graph.pagerank_alg import pagerank
from webcrawl.analysis.graph.smallworld_alg import clustering
from webcrawl.analysis.ordering.quality_links import discovery_rate, sink_fraction
from webcrawl.storage.errors import AnalysisError, ConfigError

__all__ = ["ALONG_MEASURES", "AlongCrawl", "measure_along", "pagerank_power_law"]

#: Measures :func:`measure_along` knows, in output order.
ALONG_MEASURES: tuple[str, ...] = (
    "degrees", "sinks", "discovery", "bowtie", "cores", "clustering", "pagerank")
#: Smallest tail a degree or PageRank fit uses (fewer pages: nan).
_MIN_TAIL = 30
#: Candidate center sets at which the core count gives up (nan) at one checkpoint.
_CORE_MAX_SETS = 3_000_000


@dataclass(frozen=True, eq=False)
class AlongCrawl:
    """Measurements at each checkpoint (``nan`` where not measured or not defined).

    Attributes
    ----------
    pages : ndarray of int64
        Checkpoints: numbers of pages crawled.
    values : dict of str to ndarray of float64
        One array per quantity, aligned with ``pages``: ``in_exponent``,
        ``out_exponent`` (fitted power laws, Clauset et al.), ``sinks`` (fraction of
        crawled pages with no crawled successor), ``discovery`` (fraction of the links
        found since the previous checkpoint whose target was already crawled),
        ``scc``, ``in``, ``out``, ``other`` (bow-tie fractions), ``cores44``
        (cores of at least 4 fans and 4 centers per crawled page, the paper's count),
        ``cores44_exact`` (a diagnostic: cores of exactly 4 fans and 4 centers per
        crawled page), ``clustering`` (average local
        coefficient, undirected), ``pagerank_exponent`` (continuous power-law fit of
        the PageRank values).
    measures : tuple of str
        The measures asked for.
    """

    pages: np.ndarray
    values: dict[str, np.ndarray] = field(default_factory=dict)
    measures: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``{"pages": [...], "<quantity>": [... or None]}``."""
        def clean(a: np.ndarray) -> list[float | None]:
            return [float(v) if np.isfinite(v) else None for v in a.tolist()]
        return {"pages": self.pages.tolist(), "measures": list(self.measures),
                **{k: clean(v) for k, v in self.values.items()}}


def pagerank_power_law(scores: Any, *, min_tail: int = _MIN_TAIL) -> tuple[float, float]:
    """Exponent of a continuous power law fitted to PageRank values, and its x_min.

    Parameters
    ----------
    scores : array_like of float
        PageRank values (any normalisation: the fit is scale free).
    min_tail : int
        Smallest tail size considered.

    Returns
    -------
    alpha, x_min : float
        ``p(x) ~ x**-alpha`` for ``x >= x_min``; ``x_min`` chosen among the values by
        the smallest Kolmogorov-Smirnov distance (Clauset et al.).  ``nan`` for too
        few values.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = (1 - rng.random(20000)) ** (-1 / 1.1)      # Pareto, alpha = 2.1
    >>> round(pagerank_power_law(x)[0], 1)
    2.1

    Notes
    -----
    Continuous MLE ``alpha = 1 + n / sum ln(x_i / x_min)`` on the tail, for every
    candidate x_min (a vectorised pass over the sorted values); standard error
    ``(alpha - 1) / sqrt(n)``.  Bennouas and de Montgolfier (figure 10) and
    Pandurangan et al. report exponent 2.1, the in-degree's.

    References
    ----------
    .. [1] A. Clauset, C. R. Shalizi and M. E. J. Newman, "Power-law distributions in
       empirical data", SIAM Review 51(4), 2009.
    .. [2] G. Pandurangan, P. Raghavan and E. Upfal, "Using PageRank to characterize
       Web structure", COCOON 2002.
    """
    x = np.sort(np.asarray(scores, dtype=np.float64))
    x = x[x > 0]
    if x.size < min_tail:
        return float("nan"), float("nan")
    # Candidates: distinct values leaving at least min_tail points in the tail.
    starts = np.unique(np.searchsorted(x, x[: x.size - min_tail + 1], side="left"))
    starts = starts[:: max(1, starts.size // 400)]        # at most ~400 candidates
    logs = np.log(x)
    suffix = np.cumsum(logs[::-1])[::-1]                   # sum of logs from i on
    n_tail = x.size - starts
    alpha = 1.0 + n_tail / (suffix[starts] - n_tail * logs[starts])
    best_ks, best = np.inf, 0
    for k, (s, a) in enumerate(zip(starts.tolist(), alpha.tolist(), strict=True)):
        tail = x[s:]
        model = 1.0 - (tail / tail[0]) ** (1.0 - a)
        emp = np.arange(tail.size) / tail.size
        ks = float(np.max(np.abs(model - emp)))
        if ks < best_ks:
            best_ks, best = ks, k
    return float(alpha[best]), float(x[starts[best]])


def measure_along(
    graph: CapturedGraph,
    checkpoints: int | Sequence[int] = 10,
    measures: Sequence[str] = ALONG_MEASURES,
) -> AlongCrawl:
    """Measure the crawl graph after each checkpoint's number of fetched pages.

    Parameters
    ----------
    graph : CapturedGraph
        A crawl with its ``fetch_order`` (a recorded crawl, a virtual one or a
        :func:`webcrawl.analysis.ordering.randomweb.random_web_crawl`).
    checkpoints : int or sequence of int, default 10
        Numbers of crawled pages to measure at, or how many, log-spaced from 100 (or
        the crawl's size if smaller) to the whole crawl.
    measures : sequence of str
        Any of :data:`ALONG_MEASURES`.

    Returns
    -------
    AlongCrawl

    Raises
    ------
    ConfigError
        On an unknown measure or a checkpoint outside ``1..len(fetch_order)``.

    Examples
    --------
    >>> from webcrawl.analysis.ordering.randomweb import random_web_crawl
    >>> web = random_web_crawl(20000, "BFS", max_pages=2000, seed=1)
    >>> a = measure_along(web.graph, [500, 2000], ["sinks", "discovery"])
    >>> a.pages.tolist(), bool(0 < a.values["sinks"][0] < 1)
    ([500, 2000], True)

    Notes
    -----
    The cost is one subgraph extraction per checkpoint plus the measures on it:
    linear for degrees, sinks, discovery, bow-tie and PageRank; clustering is
    O(sum of squared degrees); cores run the pruned enumeration of
    :func:`webcrawl.analysis.graph.cores.bipartite_cores` (``nan`` if it exceeds its limit).
    """
    unknown = sorted(set(measures) - set(ALONG_MEASURES))
    if unknown:
        raise ConfigError(f"unknown measure(s) {', '.join(unknown)}; choose from "
                          f"{', '.join(ALONG_MEASURES)}")
    order = np.asarray(graph.fetch_order, dtype=np.int64)
    total = int(order.size)
    if total == 0:
        raise ConfigError("the crawl fetched no page")
    if isinstance(checkpoints, int | np.integer):
        lo = min(100, total)
        ks = np.unique(np.geomspace(lo, total, max(int(checkpoints), 1)).round().astype(np.int64))
    else:
        ks = np.unique(np.asarray(list(checkpoints), dtype=np.int64))
    if ks.size == 0 or ks.min() < 1 or ks.max() > total:
        raise ConfigError(f"checkpoints must be in 1..{total}")
    adj = sp.csr_array(graph.adjacency)
    adj = sp.csr_array((np.ones(adj.nnz), adj.indices, adj.indptr), shape=adj.shape)
    nan = np.full(ks.size, np.nan)
    values: dict[str, np.ndarray] = {}
    if "sinks" in measures:
        values["sinks"] = np.asarray(sink_fraction(adj, order, ks), dtype=np.float64)
    if "discovery" in measures:
        bounds = np.r_[0, ks]
        values["discovery"] = np.asarray(
            discovery_rate(adj, order, bounds, seeds=graph.seeds)[1], dtype=np.float64)[:ks.size]
    per_point = [m for m in measures if m in ("degrees", "bowtie", "cores", "clustering",
                                              "pagerank")]
    keys = {"degrees": ("in_exponent", "out_exponent"),
            "bowtie": ("scc", "in", "out", "other"), "cores": ("cores44", "cores44_exact"),
            "clustering": ("clustering",), "pagerank": ("pagerank_exponent",)}
    for m in per_point:
        for key in keys[m]:
            values[key] = nan.copy()
    for p, k in enumerate(ks.tolist()):
        nodes = order[:k]
        sub = adj[nodes][:, nodes]
        if "degrees" in measures:
            values["in_exponent"][p] = _exponent(np.diff(sub.tocsc().indptr))
            values["out_exponent"][p] = _exponent(np.diff(adj.indptr)[nodes])
        if "bowtie" in measures:
            labels = bowtie(sub).labels
            values["scc"][p] = np.mean(labels == Region.SCC)
            values["in"][p] = np.mean(labels == Region.IN)
            values["out"][p] = np.mean(labels == Region.OUT)
            values["other"][p] = np.mean((labels != Region.SCC) & (labels != Region.IN)
                                         & (labels != Region.OUT))
        if "cores" in measures:
            at_least, exact = _cores44(sub)
            values["cores44"][p] = at_least / k
            values["cores44_exact"][p] = exact / k
        if "clustering" in measures:
            values["clustering"][p] = clustering(sub).average
        if "pagerank" in measures:
            values["pagerank_exponent"][p] = pagerank_power_law(pagerank(sub).scores)[0]
    return AlongCrawl(ks, values, tuple(measures))


def _exponent(degrees: np.ndarray) -> float:
    positive = degrees[degrees > 0]
    if positive.size < _MIN_TAIL:
        return float("nan")
    try:
        return float(fit_power_law(positive, min_tail=_MIN_TAIL).alpha)
    except AnalysisError:
        return float("nan")


def _cores44(sub: sp.csr_array) -> tuple[float, float]:
    """Cores with at least 4 fans and 4 centers (the paper's), and with exactly 4 and 4."""
    try:
        r = bipartite_cores(sub, CoreConfig(min_i=4, max_i=4, min_j=4, max_j=4, examples=0,
                                            max_sets=_CORE_MAX_SETS))
    except AnalysisError:
        return float("nan"), float("nan")
    return float(r.count(4, 4)), float(r.count_maximal(4, 4))
