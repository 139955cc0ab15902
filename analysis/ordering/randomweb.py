"""The random-web-crawls model of Bennouas and de Montgolfier: links drawn at crawl time.

n pages get in- and out-degrees from two independent Zipf laws; a list L holds each
page ``d_in`` times; crawling page p takes its ``d_out(p)`` link targets from L.  The
crawl ordering (the Unvisited set as a queue, a stack, a heap by known in-degree, or
uniform) therefore shapes the graph itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph
from webcrawl.analysis.graph.captured import CapturedGraph
from webcrawl.analysis.ordering.strategies import Strategy, get_strategy
from webcrawl.analysis.ordering.virtual import VirtualCrawl, replay
from webcrawl.storage.errors import ConfigError

__all__ = [
    "DEGREE_LAWS",
    "GAMMA_IN",
    "GAMMA_OUT",
    "MIN_OUT_DEGREE",
    "MODEL_STRATEGIES",
    "PAPER_CURVES",
    "RandomWebCrawl",
    "SinkReadings",
    "paper_curve",
    "random_web_crawl",
    "sink_readings",
    "zipf_degree_counts",
    "zipf_degrees",
]

#: In-degree exponent measured by Broder et al. on the 1999 AltaVista crawl.
GAMMA_IN = 2.1
#: Out-degree exponent measured by Broder et al.
GAMMA_OUT = 2.72

#: Default smallest out-degree (see :func:`random_web_crawl`, Notes).
MIN_OUT_DEGREE = 3

#: The paper's four Unvisited-set disciplines and the strategies that implement them:
#: BFS a queue, DFS a stack, DEG a heap by known in-degree, RND uniform.
MODEL_STRATEGIES = {"BFS": "bfs", "DFS": "dfs", "DEG": "backlink", "RND": "random"}

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


@dataclass(frozen=True)
class RandomWebCrawl:
    """A crawl generated by the random-web-crawls model.

    Attributes
    ----------
    graph : CapturedGraph
        The crawl's graph over the *discovered* pages, node index = discovery rank
        (as a crawl database numbers URLs); ``crawled`` marks fetched pages,
        ``fetch_order`` the crawl order, ``seeds`` the start page(s) (several if the
        crawl had to be reseeded).  Links keep their multiplicity as weights.
    pages : ndarray of int64
        Model page id of each node.
    d_in, d_out : ndarray of int64, shape (n_model,)
        Preset in- and out-degrees of every model page.
    crawl : VirtualCrawl
        The replay record (``order`` in model page ids).
    """

    graph: CapturedGraph
    pages: np.ndarray
    d_in: np.ndarray
    d_out: np.ndarray
    crawl: VirtualCrawl


class _LinkDrawer:
    """Hands out the next ``d_out(p)`` entries of the shuffled list L."""

    def __init__(self, pool: np.ndarray, d_out: np.ndarray) -> None:
        self.pool, self.d_out, self.pos = pool, d_out, 0
        self.src: list[np.ndarray] = []
        self.dst: list[np.ndarray] = []

    def __call__(self, page: int) -> np.ndarray:
        end = min(self.pos + int(self.d_out[page]), self.pool.size)
        drawn = self.pool[self.pos : end]
        self.pos = end
        self.src.append(np.full(drawn.size, page, dtype=np.int64))
        self.dst.append(drawn)
        # Distinct targets in draw order: the page's "document order".
        _, first = np.unique(drawn, return_index=True)
        return drawn[np.sort(first)]


def random_web_crawl(
    n: int,
    strategy: str | Strategy = "BFS",
    *,
    max_pages: int | None = None,
    n_seeds: int = 1,
    gamma_in: float = GAMMA_IN,
    gamma_out: float = GAMMA_OUT,
    min_in_degree: int = 1,
    min_out_degree: int = MIN_OUT_DEGREE,
    max_degree: int | None = None,
    degree_law: str = "sampled",
    reseed: bool = True,
    seed: int = 0,
) -> RandomWebCrawl:
    """Generate a crawl with the random-web-crawls model.

    Parameters
    ----------
    n : int
        Number of model pages (the largest possible crawl).
    strategy : str or Strategy, default "BFS"
        ``"BFS"`` (queue), ``"DFS"`` (stack), ``"DEG"`` (heap by known in-degree) or
        ``"RND"`` (uniform), or any registered strategy name or a fresh instance
        (``"pagerank"``, ``"opic"`` ... work too).
    max_pages : int, optional
        Stop after this many crawled pages (default ``n``).  The paper finds the
        results most realistic below about 30% of n.
    n_seeds : int, default 1
        Number of start pages, drawn uniformly.
    gamma_in, gamma_out : float
        Zipf exponents of the preset in- and out-degrees (default 2.1 and 2.72).
    min_in_degree, min_out_degree : int
        Smallest preset degrees (default 1 and :data:`MIN_OUT_DEGREE` = 3; see Notes).
    max_degree : int, optional
        Degree truncation of the ``sampled`` law (default n).
    degree_law : {"sampled", "counts"}
        How the degrees are "set according to two independent Zipf laws" (see
        Notes): ``sampled`` draws each page's degrees independently from the
        probability law (:func:`zipf_degrees`); ``counts`` gives exactly
        ``k d**-gamma`` pages degree d, the paper's definition of a Zipf law
        (section 2.2, :func:`zipf_degree_counts`).
    reseed : bool, default True
        When the Unvisited set empties before ``max_pages``, continue from a
        uniformly random undiscovered page (as if submitted to the crawler);
        otherwise stop.
    seed : int, default 0
        Seeds the degrees, the shuffle of L, the start pages and the strategy.

    Returns
    -------
    RandomWebCrawl

    Raises
    ------
    ConfigError
        On bad sizes or exponents, an unknown strategy or degree law.

    Examples
    --------
    >>> web = random_web_crawl(2000, "BFS", max_pages=500, seed=1)
    >>> web.crawl.fetched, int(web.graph.crawled.sum())
    (500, 500)

    Notes
    -----
    *The model* ([1]_, section 4.2).  Degrees are preset for all n pages; the list L
    holds page p ``d_in(p)`` times and is shuffled once, so "remove an element of L
    at random" is "take the next element".  Crawling page p takes the next
    ``d_out(p)`` entries as its links (fewer if L runs out), so targets are drawn
    in proportion to preset in-degree, at crawl time, and may be known or unknown
    pages, or p itself.  Duplicate draws become link weights; the crawl discipline
    sees distinct targets, in draw order.

    *Smallest out-degree.*  The model needs the average out-degree "large enough"
    that the crawl does not stop ([1]_, section 4.2).  A Zipf(2.72) law starting at
    1 puts 81% of pages at out-degree 1 (mean 1.6): once the pages already known hold
    about 40% of L, a crawled page brings less than one new page and the frontier
    stalls (with ``sampled`` degrees, n = 1e6: 10,287 pages known after 10,000
    crawled; with ``counts``, n = 2e7: 470,673 after 400,000).  By default
    out-degrees start at 3 (mean about 6.0, near the 7.2 links per page of Broder et
    al.'s crawl); the exponent, which is what the paper and its figures fix, is
    unchanged.  ``min_out_degree=1`` gives the literal law.
    In-degrees start at 1 (mean about 5 for n = 1e5), so L runs out after roughly
    80% of the pages; the paper finds results most realistic below 30%.

    *Which Zipf law* ([1]_, sections 2.2 and 4.2).  The degrees are "set according to
    two independent Zipf laws", and section 2.2 defines a Zipf law twice: as a
    probability law, "log(Prob(X=d)) = -gamma log(d)", and "in other words, the
    number of vertices with degree d is k d^-gamma (k depends on the number of
    vertices n)".  ``degree_law="sampled"`` (the default) reads the first: each page
    draws its degrees independently, so single pages reach in-degrees near
    ``n**(1/1.1)`` (about 290,000 for n = 1e6, 5% of L); those hubs are found in the
    first BFS steps and take a large share of all later links.
    ``degree_law="counts"`` reads the second literally: no degree occurs that fewer
    than one page would have, so in-degrees stop near ``(2 n / zeta(2.1))**(1/2.1)``
    (780 for n = 1e6).  The readings give different crawls (measured in README,
    "Reproducing the papers"): with ``counts`` the discovery rate starts near 0 and
    rises with ln x close to figure 12's law, sinks fall through 20%-50% (figure 13)
    and the largest SCC grows through 0.4-0.7 (figure 7) around 2% of n, but without
    hubs there are almost no triangles or (4, 4) cores (figures 6, 8, 9); with
    ``sampled`` the hubs give the cores and PageRank law but the discovery rate is
    near 40% from the first thousand pages and sinks fall below 10%.  Neither
    reading gives every published figure at once.

    *Crawl disciplines* are the crawler's own strategy classes driven by
    :func:`webcrawl.analysis.ordering.virtual.replay`: ``bfs`` (FIFO), ``dfs`` (LIFO), ``backlink``
    (DEG: most known in-links, ties first discovered) and ``random``.

    *Complexity.*  O(n) vectorised set-up plus the part of L a crawl of
    ``max_pages`` can use (L itself is never built, see ``_shuffled_prefix``); the
    crawl itself is one heap operation per discovery and per priority update.

    References
    ----------
    .. [1] T. Bennouas and F. de Montgolfier, "Random web crawls", WWW 2007.
    .. [2] A. Broder et al., "Graph structure in the web", WWW 2000 (the exponents).
    """
    if n < 1:
        raise ConfigError(f"n must be >= 1, got {n}")
    if not 1 <= n_seeds <= n:
        raise ConfigError(f"n_seeds must be in 1..{n}, got {n_seeds}")
    if max_pages is not None and max_pages < 0:
        raise ConfigError(f"max_pages must be >= 0, got {max_pages}")
    rng = np.random.default_rng(seed)
    if degree_law == "counts":
        d_in = zipf_degree_counts(n, gamma_in, rng, min_degree=min_in_degree)
        d_out = zipf_degree_counts(n, gamma_out, rng, min_degree=min_out_degree)
    elif degree_law == "sampled":
        d_in = zipf_degrees(n, gamma_in, rng, min_degree=min_in_degree, max_degree=max_degree)
        d_out = zipf_degrees(n, gamma_out, rng, min_degree=min_out_degree,
                             max_degree=max_degree)
    else:
        raise ConfigError(f"unknown degree law {degree_law!r}; choose from "
                          f"{', '.join(DEGREE_LAWS)}")
    pool = _shuffled_prefix(d_in, _draws_needed(d_out, max_pages), rng)
    order = rng.permutation(n)  # start pages first, then reseeds
    seeds = order[:n_seeds]
    if isinstance(strategy, str):
        name = MODEL_STRATEGIES.get(strategy.upper(), strategy)
        instance = get_strategy(name)(seed=seed)
    else:
        instance = strategy
    drawer = _LinkDrawer(pool, d_out)
    next_candidate = [n_seeds]
    discovered = np.zeros(n, dtype=bool)
    discovered[seeds] = True

    def on_empty() -> int | None:
        # Skip candidates discovered meanwhile: amortised O(n) over the whole crawl.
        i = next_candidate[0]
        while i < n and discovered[order[i]]:
            i += 1
        next_candidate[0] = i + 1
        return int(order[i]) if i < n else None

    def out_links(page: int) -> np.ndarray:
        targets = drawer(page)
        discovered[targets] = True
        return targets

    crawl = replay(
        instance, n, seeds, out_links, max_pages=max_pages, on_empty=on_empty if reseed else None
    )
    return RandomWebCrawl(
        graph=_crawl_graph(crawl, drawer, n),
        pages=crawl.discovery,
        d_in=d_in,
        d_out=d_out,
        crawl=crawl,
    )


def _draws_needed(d_out: np.ndarray, max_pages: int | None) -> int:
    """Most entries of L a crawl of ``max_pages`` pages can take: the largest out-degrees."""
    if max_pages is None or max_pages >= d_out.size:
        return int(d_out.sum())
    return int(np.partition(d_out, d_out.size - max_pages)[d_out.size - max_pages:].sum())


def _shuffled_prefix(d_in: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray:
    """The first ``m`` entries of a uniform shuffle of L (page p ``d_in[p]`` times).

    Positions of L are drawn without replacement (a uniformly ordered sample of
    ``m`` of them, which is what the prefix of a uniform permutation is) and mapped to
    pages through the cumulative in-degrees, so L itself (about 6 n entries) is
    never built: a crawl of 1% of a model of millions of pages costs O(n + m).
    """
    ends = np.cumsum(d_in)
    total = int(ends[-1]) if ends.size else 0
    m = min(m, total)
    if m == total:
        return rng.permutation(np.repeat(np.arange(d_in.size, dtype=np.int64), d_in))
    picks = rng.choice(total, size=m, replace=False, shuffle=True)
    return np.searchsorted(ends, picks, side="right").astype(np.int64)


def _crawl_graph(crawl: VirtualCrawl, drawer: _LinkDrawer, n: int) -> CapturedGraph:
    """The crawl's graph over discovered pages, numbered in discovery order."""
    rank = np.full(n, -1, dtype=np.int64)
    rank[crawl.discovery] = np.arange(crawl.discovery.size)
    empty = np.empty(0, dtype=np.int64)
    src = rank[np.concatenate(drawer.src)] if drawer.src else empty
    dst = rank[np.concatenate(drawer.dst)] if drawer.dst else empty
    crawled = np.zeros(crawl.discovery.size, dtype=bool)
    crawled[rank[crawl.order]] = True
    seeds = rank[crawl.order[crawl.depths == 0]]
    return CapturedGraph.from_edges(
        src,
        dst,
        n=int(crawl.discovery.size),
        crawled=crawled,
        fetch_order=rank[crawl.order],
        seeds=seeds,
        collapse_duplicates=False,
    )


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
    """Sinks and largest SCC along a crawl under two readings of "the graph".

    Attributes
    ----------
    pages : ndarray of int64
        Checkpoints: pages crawled.
    frontier : ndarray of int64
        Pages discovered (linked from a crawled page) but not crawled yet.
    sinks_crawled, scc_crawled : ndarray of float64
        Over the crawled pages and the links among them: the fraction of pages with
        no link to another crawled page, and the largest SCC's share.
    sinks_frontier, scc_frontier : ndarray of float64
        Over the crawled pages and the frontier (every link of a crawled page): the
        fraction of pages "not crawled yet or with no external hyperlink" (section
        2 of the paper), and the largest SCC's share of all of them.
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
    """Sinks and largest SCC over the crawled pages, and over crawled + frontier.

    Bennouas and de Montgolfier define a sink as a page "not crawled yet or with no
    external hyperlink" (section 2), which counts the frontier (discovered pages not
    crawled) as part of the graph; their bow-tie (figure 7) is then measured on the
    same graph.  The crawled-only reading (:func:`webcrawl.analysis.ordering.along.
    measure_along`) keeps the crawled pages and the links among them.

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
       section 2, figures 7 and 13.
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
