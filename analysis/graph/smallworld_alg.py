"""Small-world structure: clustering, path lengths, diameter, and their growth along a crawl.

Watts and Strogatz call a graph small-world when its characteristic path length is
small (O(log n)) and its clustering coefficient high; Bennouas and de Montgolfier
measure both on web crawls (the directed graph taken as undirected for clustering)
and track them as the crawl grows.  Everything here works on a scipy CSR adjacency:
triangles come from sparse products, distances from scipy's BFS (unweighted
shortest paths) run from batches of sources.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph
from webcrawl.analysis._sparse import as_adjacency
from webcrawl.storage.errors import ConfigError, EmptyGraphError

__all__ = [
    "Clustering",
    "PathLengths",
    "SmallWorld",
    "SmallWorldSeries",
    "clustering",
    "path_lengths",
    "smallworld",
    "smallworld_along_order",
    "undirected_simple",
]

# Work budget (sum over a block's rows of the neighbours' degrees) of one block of
# the triangle count: bounds the memory of the block product (A @ A) at ~16 bytes each.
_TRIANGLE_BLOCK_WORK = 1_000_000
# Bytes of the dense (sources x n) distance block of one shortest-path batch.
_DISTANCE_BLOCK_BYTES = 64 * 2**20


@dataclass(frozen=True)
class Clustering:
    """Clustering of the graph taken as undirected (see :func:`clustering`).

    Attributes
    ----------
    average : float
        Mean over all nodes of the local coefficient (nodes of degree < 2 count 0,
        as in ``networkx.average_clustering``).
    transitivity : float
        Global coefficient: 3 x triangles / connected triples.
    local : ndarray of float64, shape (n,)
        Local coefficient of each node.
    triangles : ndarray of int64, shape (n,)
        Triangles through each node.
    """

    average: float
    transitivity: float
    local: np.ndarray
    triangles: np.ndarray


@dataclass(frozen=True)
class PathLengths:
    """Shortest-path statistics from a set of BFS sources (see :func:`path_lengths`).

    Attributes
    ----------
    characteristic_length : float
        Mean distance over the ordered pairs (s, t), s a source, t != s reachable
        from s (nan when no pair is connected).
    diameter : int
        Largest finite distance found: the exact diameter (of the reachable pairs)
        when every node is a source, a lower bound otherwise.
    distribution : ndarray of int64
        ``distribution[d]`` is the number of (source, target) pairs at distance d
        (``d >= 1``; ``distribution[0]`` is 0).
    sources : ndarray of int64
        The BFS sources used.
    exact : bool
        True when every node was a source.
    reachable_fraction : float
        Share of the ordered (source, other node) pairs that are connected.
    directed : bool
        Whether links were followed in their direction only.
    """

    characteristic_length: float
    diameter: int
    distribution: np.ndarray
    sources: np.ndarray
    exact: bool
    reachable_fraction: float
    directed: bool


@dataclass(frozen=True)
class SmallWorld:
    """Clustering plus directed and undirected path statistics of one graph."""

    n: int
    m: int
    clustering: Clustering
    directed: PathLengths
    undirected: PathLengths


@dataclass(frozen=True)
class SmallWorldSeries:
    """Small-world measures of the growing crawl, one entry per checkpoint.

    ``sizes[k]`` pages were crawled at checkpoint k; every other array is aligned.
    """

    sizes: np.ndarray
    links: np.ndarray
    average_clustering: np.ndarray
    transitivity: np.ndarray
    directed_length: np.ndarray
    directed_diameter: np.ndarray
    undirected_length: np.ndarray
    undirected_diameter: np.ndarray


def undirected_simple(adjacency: Any) -> sp.csr_array:
    """The simple undirected graph of ``adjacency``: 0/1, symmetric, no self-loops."""
    adj = as_adjacency(adjacency, allow_empty=True)
    coo = adj.tocoo()
    off = coo.row != coo.col
    row, col = coo.row[off], coo.col[off]
    sym = sp.csr_array((np.ones(2 * row.size), (np.concatenate([row, col]),
                                                np.concatenate([col, row]))),
                       shape=adj.shape)
    sym.sum_duplicates()
    sym.data[:] = 1.0
    return sym


def clustering(adjacency: Any) -> Clustering:
    """Average local and global clustering coefficient of the graph taken as undirected.

    Parameters
    ----------
    adjacency : scipy sparse array or CapturedGraph, shape (n, n)
        Directed link graph; directions, multiplicities and self-loops are dropped.

    Returns
    -------
    Clustering

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> tri = sp.csr_array((np.ones(4), ([0, 1, 2, 2], [1, 2, 0, 3])), shape=(4, 4))
    >>> c = clustering(tri)
    >>> c.local.round(3).tolist(), round(c.average, 4), round(c.transitivity, 4)
    ([1.0, 1.0, 0.333, 0.0], 0.5833, 0.6)

    Notes
    -----
    With U the undirected 0/1 adjacency, the triangles through node i are
    ``t_i = ((U @ U) * U)[i].sum() / 2`` (the diagonal of U^3 over 2), computed on
    the edges oriented toward higher degree (see ``_triangles``) so that hubs do not
    blow up the products; the local
    coefficient is ``2 t_i / (k_i (k_i - 1))`` and the transitivity
    ``sum(2 t_i) / sum(k_i (k_i - 1))``, the definitions of networkx
    (``average_clustering``, ``transitivity``).  The products are formed by blocks
    of rows sized by their work, so memory stays bounded; time O(m sqrt(m)).

    References
    ----------
    .. [1] D. J. Watts and S. H. Strogatz, "Collective dynamics of 'small-world'
       networks", Nature 393, 1998.
    .. [2] T. Bennouas and F. de Montgolfier, "Random web crawls", WWW 2007.
    """
    u = undirected_simple(adjacency)
    n = u.shape[0]
    if n == 0:
        raise EmptyGraphError("the graph has no nodes")
    degree = np.diff(u.indptr).astype(np.int64)
    triangles = _triangles(u, degree)
    pairs = degree * (degree - 1)
    local = np.divide(2.0 * triangles, pairs, out=np.zeros(n), where=pairs > 0)
    total_pairs = float(pairs.sum())
    transitivity = 2.0 * float(triangles.sum()) / total_pairs if total_pairs else 0.0
    return Clustering(float(local.mean()), transitivity, local, triangles)


def _triangles(u: sp.csr_array, degree: np.ndarray) -> np.ndarray:
    """Triangles through each node, with edges oriented from lower to higher degree.

    Orienting each edge toward the higher (degree, index) rank bounds every node's
    out-degree by sqrt(2m), so the products cost O(m sqrt(m)) instead of
    O(sum k_i^2), which hubs make huge.  A triangle a < b < c (by rank) is found
    once by each product: ``P = (D @ D) * D`` at (a, c), ``Q = (D^T @ D) * D`` at
    (b, c); node a collects row sums of P, b row sums of Q, c column sums of Q.
    """
    n = u.shape[0]
    rank = np.empty(n, dtype=np.int64)
    rank[np.lexsort((np.arange(n), degree))] = np.arange(n)
    coo = u.tocoo()
    up = rank[coo.row] < rank[coo.col]
    d = sp.csr_array((np.ones(int(up.sum())), (coo.row[up], coo.col[up])), shape=(n, n))
    d_t = d.T.tocsr()
    first = np.zeros(n)
    middle = np.zeros(n)
    last = np.zeros(n)
    out_deg = np.diff(d.indptr).astype(np.float64)
    for factor in (d, d_t):
        # Work of a block row: the out-degrees (in D) of its row's entries.
        work = np.cumsum(factor @ out_deg)
        for lo, hi in itertools.pairwise(_blocks(work, _TRIANGLE_BLOCK_WORK)):
            block = (factor[lo:hi] @ d).multiply(d[lo:hi])
            if factor is d:
                first[lo:hi] = np.asarray(block.sum(axis=1)).ravel()
            else:
                middle[lo:hi] = np.asarray(block.sum(axis=1)).ravel()
                last += np.asarray(block.sum(axis=0)).ravel()
    return np.asarray(np.rint(first + middle + last), dtype=np.int64)


def _blocks(cumulative: np.ndarray, budget: float) -> np.ndarray:
    """Row boundaries splitting rows into blocks of about ``budget`` cumulative work."""
    n = cumulative.size
    if n == 0:
        return np.array([0, 0])
    cuts = np.searchsorted(cumulative, np.arange(budget, cumulative[-1], budget))
    return np.unique(np.concatenate([[0], cuts, [n]]))


def path_lengths(
    adjacency: Any,
    *,
    directed: bool = True,
    sources: int | Sequence[int] | np.ndarray | None = None,
    seed: Any = None,
) -> PathLengths:
    """Characteristic path length, diameter and distance distribution by BFS.

    Parameters
    ----------
    adjacency : scipy sparse array or CapturedGraph, shape (n, n)
        The link graph (unweighted: every link has length 1).
    directed : bool, default True
        Follow links in their direction only; False takes the graph as undirected.
    sources : int or array_like of int, optional
        An int draws that many distinct sources uniformly at random (all nodes when
        it is >= n); an array gives the sources.  Default: every node (exact).
    seed : int or numpy.random.Generator, optional
        Random state for drawing the sources.

    Returns
    -------
    PathLengths

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> path = sp.csr_array((np.ones(3), ([0, 1, 2], [1, 2, 3])), shape=(4, 4))
    >>> r = path_lengths(path, directed=False)
    >>> r.characteristic_length, r.diameter, r.distribution.tolist()
    (1.6666666666666667, 3, [0, 6, 4, 2])
    >>> path_lengths(path).reachable_fraction
    0.5

    Notes
    -----
    The characteristic length averages over connected pairs only (Broder et al.'s
    "average connected distance"); on a strongly connected graph it equals
    ``networkx.average_shortest_path_length``, and with every node as a source the
    diameter equals ``networkx.diameter``.  With k sampled sources the mean is an
    unbiased estimate over pairs and the diameter a lower bound.  Sources run in
    batches through ``scipy.sparse.csgraph.shortest_path(unweighted=True)`` (one BFS
    each, O(n + m)); a batch's dense distance block is capped at 64 MiB.

    References
    ----------
    .. [1] D. J. Watts and S. H. Strogatz, "Collective dynamics of 'small-world'
       networks", Nature 393, 1998.
    .. [2] A. Broder et al., "Graph structure in the Web", WWW 2000.
    .. [3] T. Bennouas and F. de Montgolfier, "Random web crawls", WWW 2007.
    """
    adj = as_adjacency(adjacency)
    n = adj.shape[0]
    src = _sources(n, sources, seed)
    graph = adj if directed else undirected_simple(adj)
    batch = max(1, _DISTANCE_BLOCK_BYTES // (8 * n))
    hist = np.zeros(1, dtype=np.int64)
    for lo in range(0, src.size, batch):
        dist = csgraph.shortest_path(graph, directed=directed, unweighted=True,
                                     indices=src[lo:lo + batch])
        finite = dist[np.isfinite(dist)].astype(np.int64)
        counts = np.bincount(finite)
        if counts.size > hist.size:
            counts[:hist.size] += hist
            hist = counts
        else:
            hist[:counts.size] += counts
    hist[0] = 0  # a source's distance to itself
    pairs = int(hist.sum())
    length = float(np.arange(hist.size) @ hist / pairs) if pairs else float("nan")
    possible = src.size * (n - 1)
    return PathLengths(
        characteristic_length=length,
        diameter=int(np.flatnonzero(hist)[-1]) if pairs else 0,
        distribution=hist,
        sources=src,
        exact=src.size == n,
        reachable_fraction=pairs / possible if possible else 0.0,
        directed=directed,
    )


def _sources(n: int, sources: Any, seed: Any) -> np.ndarray:
    if sources is None:
        return np.arange(n, dtype=np.int64)
    if isinstance(sources, int | np.integer):
        k = int(sources)
        if k < 1:
            raise ConfigError(f"the number of sources must be at least 1, got {k}")
        if k >= n:
            return np.arange(n, dtype=np.int64)
        rng = np.random.default_rng(seed)
        return np.sort(rng.choice(n, size=k, replace=False)).astype(np.int64)
    src = np.unique(np.asarray(sources, dtype=np.int64))
    if src.size == 0 or src[0] < 0 or src[-1] >= n:
        raise ConfigError(f"sources must be node indices in [0, {n})")
    return src


def smallworld(adjacency: Any, *, sources: int | None = None, seed: Any = None) -> SmallWorld:
    """Clustering and directed and undirected path statistics of one graph.

    Parameters
    ----------
    adjacency : scipy sparse array or CapturedGraph
        The link graph.
    sources : int, optional
        Number of BFS sources (drawn once, shared by the directed and undirected
        runs); None: every node (exact, for small graphs).
    seed : int or numpy.random.Generator, optional
        Random state for the sources.

    Returns
    -------
    SmallWorld

    References
    ----------
    .. [1] T. Bennouas and F. de Montgolfier, "Random web crawls", WWW 2007.
    """
    adj = as_adjacency(adjacency)
    src = _sources(adj.shape[0], sources, seed)
    return SmallWorld(
        n=int(adj.shape[0]),
        m=int(adj.nnz),
        clustering=clustering(adj),
        directed=path_lengths(adj, directed=True, sources=src),
        undirected=path_lengths(adj, directed=False, sources=src),
    )


def smallworld_along_order(
    graph: Any,
    order: Sequence[int] | np.ndarray | None = None,
    checkpoints: int | Sequence[int] = 10,
    *,
    sources: int | None = 100,
    seed: Any = None,
) -> SmallWorldSeries:
    """Track the small-world measures as the graph grows along a crawl order.

    Parameters
    ----------
    graph : CapturedGraph or scipy sparse array
        The captured graph.
    order : array_like of int, optional
        Node indices in crawl order.  Default: ``graph.fetch_order``.
    checkpoints : int or sequence of int, default 10
        An int: that many evenly spaced prefix sizes ending at ``len(order)``; a
        sequence: the prefix sizes themselves.
    sources : int or None, default 100
        BFS sources per checkpoint (None: all nodes of the prefix, exact).
    seed : int or numpy.random.Generator, optional
        Random state for the sources.

    Returns
    -------
    SmallWorldSeries
        At checkpoint k, the measures of the subgraph induced by the first
        ``sizes[k]`` crawled pages (links among them only, as in Bennouas and de
        Montgolfier's "crawled pages only").

    References
    ----------
    .. [1] T. Bennouas and F. de Montgolfier, "Random web crawls", WWW 2007
       (Figures 5 and 6: path length, diameter and clustering across time).
    """
    adj = as_adjacency(graph)
    if order is None:
        order = getattr(graph, "fetch_order", None)
        if order is None:
            order = np.arange(adj.shape[0])
    order_a = np.asarray(order, dtype=np.int64)
    if order_a.size == 0:
        raise EmptyGraphError("the crawl order is empty")
    sizes = _checkpoint_sizes(order_a.size, checkpoints)
    rng = np.random.default_rng(seed)
    rows: list[tuple[int, float, float, float, int, float, int]] = []
    permuted = adj[order_a][:, order_a]  # prefix k is then a leading block
    for k in sizes:
        sub = permuted[:k, :k]
        sw = smallworld(sub, sources=sources, seed=rng)
        rows.append((sub.nnz, sw.clustering.average, sw.clustering.transitivity,
                     sw.directed.characteristic_length, sw.directed.diameter,
                     sw.undirected.characteristic_length, sw.undirected.diameter))
    cols = list(zip(*rows, strict=True))
    return SmallWorldSeries(
        sizes=sizes,
        links=np.asarray(cols[0], dtype=np.int64),
        average_clustering=np.asarray(cols[1]),
        transitivity=np.asarray(cols[2]),
        directed_length=np.asarray(cols[3]),
        directed_diameter=np.asarray(cols[4], dtype=np.int64),
        undirected_length=np.asarray(cols[5]),
        undirected_diameter=np.asarray(cols[6], dtype=np.int64),
    )


def _checkpoint_sizes(total: int, checkpoints: int | Sequence[int]) -> np.ndarray:
    if isinstance(checkpoints, int | np.integer):
        count = int(checkpoints)
        if count < 1:
            raise ConfigError(f"checkpoints must be at least 1, got {count}")
        sizes = np.unique(np.ceil(np.linspace(0, total, count + 1)[1:]).astype(np.int64))
    else:
        sizes = np.unique(np.asarray(checkpoints, dtype=np.int64))
    if sizes.size == 0 or sizes[0] < 1 or sizes[-1] > total:
        raise ConfigError(f"checkpoint sizes must be in [1, {total}]")
    return sizes
