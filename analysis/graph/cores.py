"""Bipartite cores: trawling the link graph for emerging communities (Kumar et al.).

An (i, j) core is a set of i pages (*fans*) each linking to every page of a set of j
pages (*centers*): a complete bipartite subgraph K(i, j).  Kumar, Raghavan,
Rajagopalan and Tomkins enumerate them with an *elimination* filter (a fan needs
out-degree >= j, a center in-degree >= i; prune and iterate) and a *generation*
filter (a fan of out-degree exactly j names its only possible center set; check
whether i - 1 other fans link to all of it).

What we count
-------------
``counts[i, j]`` is the number of **maximal** cores with exactly i fans and exactly j
centers: complete bipartite subgraphs (F, C) contained in no larger one, i.e. F is
every page linking to all of C, and no page outside C is linked to by all of F.
Every K(i', j') hides many smaller K(i, j) (all its subsets); Kumar et al. report a
community once, by its maximal core, after pruning by degree (pruning never removes
a link of a core above the thresholds, so it does not change which cores are
maximal).  Counts are therefore *not* monotone in i or j: a graph made of forty
K(4, 4) and thirty-seven K(3, 4) has more (4, 4) than (3, 4) cores, as in Bennouas
and de Montgolfier's Fig. 8 ((4, 4) = 40 > (3, 4) = 37).  Self-loops are ignored, so a
fan is never one of its own centers.

``center_sets[i, j]`` keeps the other, monotone count: center sets of exactly j pages
with at least i common fans (every sub-biclique, Agrawal and Srikant's frequent
itemsets when each fan's out-links form a transaction).

*Diverse* cores (Kumar et al.: "fans on i distinct sites", no mirrors or
self-endorsement): links between pages of the same host are dropped first, and a core
counts as having i fans when its fans sit on i distinct hosts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from webcrawl.analysis._sparse import as_adjacency
from webcrawl.storage.errors import AnalysisError, ConfigError

__all__ = [
    "BipartiteCores",
    "Core",
    "CoreConfig",
    "bipartite_cores",
    "drop_same_host_links",
    "eliminate",
    "generation_filter",
]


@dataclass(frozen=True)
class CoreConfig:
    """Settings of :func:`bipartite_cores`.

    Attributes
    ----------
    max_i, max_j : int, default 4
        Largest numbers of fans and centers counted.
    min_i : int, default 2
        Smallest number of fans counted.  1 counts every j-subset of every page's
        out-links, which is rarely wanted and can be huge.
    min_j : int, default 2
        Smallest number of centers counted (1: pages with in-degree >= i).
    diverse : bool, default False
        Kumar et al.'s diverse cores: drop links between pages of the same host
        first, and count a core's fans by their distinct hosts (i fans on i
        distinct sites).
    max_sets : int, default 2_000_000
        Give up (AnalysisError) when the enumeration holds more candidate center sets
        than this, rather than exhaust memory.
    examples : int, default 10
        Number of example cores (most fans, at ``j = max_j``) to keep.
    """

    max_i: int = 4
    max_j: int = 4
    min_i: int = 2
    min_j: int = 2
    diverse: bool = False
    max_sets: int = 2_000_000
    examples: int = 10

    def __post_init__(self) -> None:
        if self.min_i < 1 or self.min_j < 1:
            raise ConfigError("min_i and min_j must be at least 1")
        if self.max_i < self.min_i or self.max_j < self.min_j:
            raise ConfigError(f"need min_i <= max_i and min_j <= max_j, got "
                              f"i in [{self.min_i}, {self.max_i}], "
                              f"j in [{self.min_j}, {self.max_j}]")
        if self.max_sets < 1 or self.examples < 0:
            raise ConfigError("max_sets must be positive and examples non-negative")


@dataclass(frozen=True)
class Core:
    """One core: ``fans`` all link to every page of ``centers`` (node indices)."""

    fans: np.ndarray
    centers: np.ndarray


@dataclass(frozen=True)
class BipartiteCores:
    """Core counts per (i, j) (see the module docstring for the definition).

    Attributes
    ----------
    i_values, j_values : ndarray of int64
        The numbers of fans (rows) and centers (columns) counted.
    counts : ndarray of int64, shape (len(i_values), len(j_values))
        ``counts[a, b]``: maximal cores with exactly ``i_values[a]`` fans (distinct
        fan hosts if diverse) and exactly ``j_values[b]`` centers.
    center_sets : ndarray of int64, same shape
        ``center_sets[a, b]``: center sets of size ``j_values[b]`` with at least
        ``i_values[a]`` common fans (fan hosts if diverse); monotone, every
        sub-biclique counted.
    links : int
        Links considered (after dropping self-loops and, if diverse, same-host links).
    pruned_links : ndarray of int64, shape (len(j_values),)
        Links left by the elimination filter with thresholds (min_i, j).
    examples : list of Core
        Maximal cores with ``max_j`` centers and the most fans.
    diverse : bool
        Whether same-host links were dropped and fans counted by host.
    """

    i_values: np.ndarray
    j_values: np.ndarray
    counts: np.ndarray
    center_sets: np.ndarray
    links: int
    pruned_links: np.ndarray
    examples: list[Core]
    diverse: bool

    def count(self, i: int, j: int) -> int:
        """Number of maximal (i, j) cores (exactly i fans, exactly j centers)."""
        a, b = self._cell(i, j)
        return int(self.counts[a, b])

    def count_center_sets(self, i: int, j: int) -> int:
        """Number of j-page center sets with at least i common fans."""
        a, b = self._cell(i, j)
        return int(self.center_sets[a, b])

    def _cell(self, i: int, j: int) -> tuple[int, int]:
        a = int(np.searchsorted(self.i_values, i))
        b = int(np.searchsorted(self.j_values, j))
        if a >= self.i_values.size or self.i_values[a] != i or \
                b >= self.j_values.size or self.j_values[b] != j:
            raise KeyError((i, j))
        return a, b


def _simple(adjacency: Any) -> sp.csr_array:
    """0/1 CSR without self-loops."""
    adj = as_adjacency(adjacency)
    coo = adj.tocoo()
    off = coo.row != coo.col
    out = sp.csr_array((np.ones(int(off.sum())), (coo.row[off], coo.col[off])),
                       shape=adj.shape)
    out.sum_duplicates()
    out.data[:] = 1.0
    return out


def drop_same_host_links(adjacency: Any, hosts: Any) -> sp.csr_array:
    """Remove the links whose source and destination share a host (0/1 result)."""
    adj = _simple(adjacency)
    host = np.asarray(hosts)
    if host.shape != (adj.shape[0],):
        raise ConfigError(f"hosts must have length {adj.shape[0]}")
    coo = adj.tocoo()
    keep = host[coo.row] != host[coo.col]
    return sp.csr_array((coo.data[keep], (coo.row[keep], coo.col[keep])), shape=adj.shape)


def eliminate(adjacency: Any, i: int, j: int) -> sp.csr_array:
    """Kumar et al.'s elimination filter, iterated to a fixed point.

    Repeatedly drops the out-links of fans with out-degree < j and the in-links of
    centers with in-degree < i; no link of an (i, j) core is ever dropped.  Each pass
    is O(m) on the arrays of the remaining links.

    Parameters
    ----------
    adjacency : scipy sparse array, shape (n, n)
        The link graph (weights and self-loops ignored).
    i, j : int
        Fans and centers of the cores sought.

    Returns
    -------
    scipy.sparse.csr_array
        The pruned 0/1 adjacency, same shape.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> A = sp.csr_array((np.ones(5), ([0, 0, 1, 1, 2], [3, 4, 3, 4, 3])), shape=(5, 5))
    >>> eliminate(A, 2, 2).nnz
    4

    References
    ----------
    .. [1] R. Kumar, P. Raghavan, S. Rajagopalan and A. Tomkins, "Trawling the Web
       for emerging cyber-communities", WWW 1999.
    """
    if i < 1 or j < 1:
        raise ConfigError(f"i and j must be at least 1, got ({i}, {j})")
    adj = _simple(adjacency)
    n = adj.shape[0]
    coo = adj.tocoo()
    row, col = coo.row.astype(np.int64), coo.col.astype(np.int64)
    while row.size:
        out_deg = np.bincount(row, minlength=n)
        in_deg = np.bincount(col, minlength=n)
        keep = (out_deg[row] >= j) & (in_deg[col] >= i)
        if keep.all():
            break
        row, col = row[keep], col[keep]
    return sp.csr_array((np.ones(row.size), (row, col)), shape=(n, n))


def generation_filter(pruned: sp.csr_array, i: int, j: int) -> list[Core]:
    """Kumar et al.'s generation filter: cores named by fans of out-degree exactly j.

    For each fan whose out-degree (in the pruned graph) is exactly j, its out-links
    are the only center set it can support; the core exists when at least i pages
    (itself included) link to all of them.  Each center set is reported once.

    Parameters
    ----------
    pruned : scipy sparse array
        Output of :func:`eliminate` (the filter is exact on any graph, but only fans
        of out-degree exactly j are examined).
    i, j : int
        Fans and centers sought.

    Returns
    -------
    list of Core
    """
    csr = _simple(pruned)
    csc = csr.tocsc()
    out_deg = np.diff(csr.indptr)
    found: dict[tuple[int, ...], Core] = {}
    for fan in np.flatnonzero(out_deg == j):  # fans of degree exactly j only
        centers = csr.indices[csr.indptr[fan]:csr.indptr[fan + 1]]
        key = tuple(int(c) for c in np.sort(centers))
        if key in found:
            continue
        fans = _common_in(csc, np.asarray(key))
        if fans.size >= i:
            found[key] = Core(fans, np.asarray(key, dtype=np.int64))
    return list(found.values())


def _common_in(csc: sp.csc_array, centers: np.ndarray) -> np.ndarray:
    """Pages linking to every center (intersection of the in-lists)."""
    common = csc.indices[csc.indptr[centers[0]]:csc.indptr[centers[0] + 1]]
    for c in centers[1:]:
        common = np.intersect1d(common, csc.indices[csc.indptr[c]:csc.indptr[c + 1]],
                                assume_unique=True)
    return np.sort(common).astype(np.int64)


def bipartite_cores(
    adjacency: Any,
    config: CoreConfig | None = None,
    *,
    hosts: Any = None,
) -> BipartiteCores:
    """Count maximal (i, j) bipartite cores for every i, j in the configured ranges.

    A maximal (i, j) core (Kumar et al. [1]_) is a complete bipartite subgraph of i
    fans each linking to the same j centers that is contained in no larger one: the
    fans are all the pages linking to every center, and the fans share no other
    out-link.  Diverse cores [1]_ drop same-host links and count fans by host.

    Parameters
    ----------
    adjacency : scipy sparse array or CapturedGraph, shape (n, n)
        The link graph; weights and self-loops are ignored.
    config : CoreConfig, optional
        Ranges of i and j, diverse cores, limits.
    hosts : array_like of int, shape (n,), optional
        Host of each page, for ``config.diverse``.  Default: ``adjacency.hosts`` of
        a CapturedGraph.

    Returns
    -------
    BipartiteCores
        ``counts`` (maximal cores by exact size) and ``center_sets`` (the monotone
        frequent-set count).

    Raises
    ------
    AnalysisError
        When more than ``config.max_sets`` candidate center sets turn up.
    ConfigError
        On bad settings, or ``diverse`` without hosts.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> fans, centers = [0, 0, 0, 1, 1, 1, 2, 2, 2], [3, 4, 5] * 3
    >>> A = sp.csr_array((np.ones(9), (fans, centers)), shape=(6, 6))   # a K(3, 3)
    >>> r = bipartite_cores(A, CoreConfig(max_i=3, max_j=3))
    >>> r.counts.tolist()   # rows i = 2, 3; columns j = 2, 3: one maximal K(3, 3)
    [[0, 0], [0, 1]]
    >>> r.center_sets.tolist()   # its sub-bicliques, counted by center set
    [[3, 1], [3, 1]]

    Notes
    -----
    For each j the graph is pruned by :func:`eliminate` with thresholds
    ``(min_i, j)``; center sets are then grown one center at a time, keeping the set
    of common fans: pairs come from the sparse co-citation product ``B^T B`` of the
    pruned graph, larger sets from extending each set C by the centers ``c > max(C)``
    that at least ``min_i`` of C's fans link to (one vectorised pass over the fans'
    out-lists per set).  A center set C with common fans F is a maximal core when
    its closure (the pages all of F link to) is C itself; the closure is read from
    the same pass.  This generalises the generation filter (:func:`generation_
    filter`, fans of out-degree exactly j) to all cores.  The Python loop runs over
    center sets found (the output), never over all nodes or links.  Enumerating
    maximal bicliques is hard in general (Bennouas and de Montgolfier note the
    maximal core problem is NP-complete); the limit ``max_sets`` bounds the work.

    References
    ----------
    .. [1] R. Kumar, P. Raghavan, S. Rajagopalan and A. Tomkins, "Trawling the Web
       for emerging cyber-communities", WWW 1999.
    .. [2] J. Kleinberg, R. Kumar, P. Raghavan, S. Rajagopalan and A. Tomkins, "The
       Web as a graph: measurements, models and methods", COCOON 1999.
    .. [3] R. Agrawal and R. Srikant, "Fast algorithms for mining association rules",
       VLDB 1994.
    .. [4] T. Bennouas and F. de Montgolfier, "Random web crawls", WWW 2007, Fig. 8.
    """
    config = config or CoreConfig()
    host_of: np.ndarray | None = None
    if config.diverse:
        hosts = getattr(adjacency, "hosts", None) if hosts is None else hosts
        if hosts is None:
            raise ConfigError("diverse cores need the host of every page")
        adj = drop_same_host_links(adjacency, hosts)
        host_of = np.asarray(hosts)
    else:
        adj = _simple(adjacency)
    i_values = np.arange(config.min_i, config.max_i + 1, dtype=np.int64)
    j_values = np.arange(config.min_j, config.max_j + 1, dtype=np.int64)
    counts = np.zeros((i_values.size, j_values.size), dtype=np.int64)
    center_sets = np.zeros_like(counts)
    pruned_links = np.zeros(j_values.size, dtype=np.int64)
    examples: list[Core] = []
    for b, j in enumerate(j_values):
        pruned = eliminate(adj, config.min_i, int(j))
        pruned_links[b] = pruned.nnz
        sets = _center_sets(pruned, config.min_i, int(j), config.max_sets)
        support = np.asarray([_fan_count(fans, host_of) for _, fans in sets], dtype=np.int64)
        closed = np.asarray([_closure_size(pruned, fans) == j for _, fans in sets], dtype=bool)
        center_sets[:, b] = (support[None, :] >= i_values[:, None]).sum(axis=1)
        counts[:, b] = (closed[None, :] & (support[None, :] == i_values[:, None])).sum(axis=1)
        if j == config.max_j and config.examples:
            keep = np.flatnonzero(closed & (support >= config.min_i))
            top = keep[np.argsort(-support[keep], kind="stable")[:config.examples]]
            examples = [Core(sets[k][1], np.asarray(sets[k][0], np.int64)) for k in top]
    return BipartiteCores(i_values, j_values, counts, center_sets, int(adj.nnz),
                          pruned_links, examples, config.diverse)


def _fan_count(fans: np.ndarray, host_of: np.ndarray | None) -> int:
    """Fans of a core, or their distinct hosts for diverse cores."""
    return int(fans.size) if host_of is None else int(np.unique(host_of[fans]).size)


def _closure_size(pruned: sp.csr_array, fans: np.ndarray) -> int:
    """Number of pages every one of ``fans`` links to."""
    col, _ = _out_lists(pruned, fans)
    _, hits = np.unique(col, return_counts=True)
    return int(np.count_nonzero(hits == fans.size))


def _out_lists(pruned: sp.csr_array, fans: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The fans' out-links as (target, fan) arrays, read from the CSR arrays."""
    lo, hi = pruned.indptr[fans], pruned.indptr[fans + 1]
    size = hi - lo
    idx = np.repeat(lo - np.cumsum(size) + size, size) + np.arange(int(size.sum()))
    return pruned.indices[idx].astype(np.int64), np.repeat(fans, size)


_CenterSet = tuple[tuple[int, ...], np.ndarray]


def _center_sets(pruned: sp.csr_array, s: int, j: int, max_sets: int) -> list[_CenterSet]:
    """Every set of j centers with >= s common fans, with its fans."""
    csc = pruned.tocsc()
    in_deg = np.diff(csc.indptr)
    if j == 1:
        singles = np.flatnonzero(in_deg >= s)
        _check_size(singles.size, max_sets)
        return [((int(c),), csc.indices[csc.indptr[c]:csc.indptr[c + 1]]) for c in singles]
    # Pairs: co-citation counts B^T B, upper triangle, at least s common fans.
    cocite = sp.triu(pruned.T @ pruned, k=1).tocoo()
    frequent = cocite.data >= s
    _check_size(int(frequent.sum()), max_sets)
    level: list[_CenterSet] = [
        ((int(a), int(b)), _common_in(csc, np.array([a, b])))
        for a, b in zip(cocite.row[frequent], cocite.col[frequent], strict=True)
    ]
    for _ in range(j - 2):
        grown: list[_CenterSet] = []
        for centers, fans in level:
            grown.extend(_extend(pruned, centers, fans, s))
            _check_size(len(grown), max_sets)
        level = grown
    return level


def _extend(pruned: sp.csr_array, centers: tuple[int, ...], fans: np.ndarray,
            s: int) -> list[_CenterSet]:
    """Children of a center set: add one center c > max(centers) with >= s fans."""
    col, fan_of = _out_lists(pruned, fans)
    later = col > centers[-1]
    col, fan_of = col[later], fan_of[later]
    if col.size == 0:
        return []
    _, inverse, counts = np.unique(col, return_inverse=True, return_counts=True)
    ok = counts[inverse] >= s
    if not ok.any():
        return []
    col, fan_of = col[ok], fan_of[ok]
    order = np.lexsort((fan_of, col))
    col, fan_of = col[order], fan_of[order]
    starts = np.flatnonzero(np.r_[True, col[1:] != col[:-1]])
    groups = np.split(fan_of, starts[1:])
    return [((*centers, int(col[a])), g) for a, g in zip(starts, groups, strict=True)]


def _check_size(count: int, max_sets: int) -> None:
    if count > max_sets:
        raise AnalysisError(
            f"more than {max_sets} candidate center sets; raise min_i, lower max_j, "
            "use diverse cores, or raise max_sets")
