"""Bipartite cores: trawling the link graph for emerging communities (Kumar et al.).

A K(i, j) is i pages (*fans*) each linking to every page of a set of j pages
(*centers*).  Kumar, Raghavan, Rajagopalan and Tomkins define "a bipartite core C(i, j)
[as] a graph on i + j nodes that contains at least one K(i, j) as a subgraph" and find
the cores by *trawling*: an *elimination* filter (a fan needs out-degree >= j, a center
in-degree >= i; prune and iterate) and a *generation* filter (a fan of out-degree
exactly j names its only possible center set: output the core if i pages link to all
of it, then prune the fan), the two iterated, then the small residual graph enumerated.

What we count
-------------
A **core** here is a community found by trawling, counted once: a complete bipartite
subgraph (F, C) contained in no larger one (F is every page linking to all of C, C is
every page that all of F link to; a *maximal* biclique, or closed pair).  Every K(i, j)
lies in exactly one smallest such core, and a K(i', j') with i' >= i, j' >= j contains
many K(i, j).

``counts[i, j]`` (the headline) is the number of cores that **contain at least one
K(i, j)**: cores with ``|F| >= i`` and ``|C| >= j``.  It is monotone: non-increasing in
i and in j, and a C(4, 4) is always also a C(3, 3).  ``maximal[i, j]`` (a secondary
view) counts the cores with exactly i fans and exactly j centers: not monotone (forty
K(4, 4) and thirty-seven K(3, 4) give more (4, 4) than (3, 4) cores, as in Bennouas and
de Montgolfier's Fig. 8).  Neither counts every i-subset of a core's fans or every
j-subset of its centers: a K(100, 30) of navigation links would be C(100, 4) C(30, 4)
sub-bicliques, one community.  Self-loops are ignored, so a fan is never one of its own
centers.

*Same-host links.* Trawling as Kumar et al. ran it ignores *nepotistic* links, those
between pages of one site, which endorse nothing: by default (``same_host_links="drop"``)
they are dropped before trawling whenever the host of every page is known (a
CapturedGraph, or ``hosts``); ``"keep"`` trawls every link.  On a documentation crawl
almost every link of the pruned graph is a same-site navigation link (99% of them on a
4,472-page crawl of the Rust documentation), and a sidebar of k entries whose pages each
link to all entries but themselves holds 2**k maximal cores (every subset of the k pages
is the fan set of one: the entries the others all link to); with same-host links kept
the count is exponential in the sidebar's length and only ``max_sets`` ends it.

*Diverse* cores (Kumar et al.: "fans on i distinct sites", no mirrors or
self-endorsement): same-host links dropped as above, and a core has i fans when its fans
sit on i distinct hosts.

How
---
Elimination with thresholds ``(min_i, min_j)`` to a fixed point; the generation filter
on fans of out-degree exactly ``min_j`` (each one's out-list, with all its common fans,
is a core when they number ``min_i`` or more; the fan is then pruned, which removes no
other core); the two iterated until no fan has out-degree ``min_j``; the residual
enumerated core by core (closed center sets by prefix-preserving closure extension,
Uno et al.'s LCM, one vectorised pass over the fans' out-lists per core).  Memory holds
the graph, a depth-first stack and a histogram of core sizes, never the list of cores;
the time is proportional to the cores found (``max_sets`` bounds it).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from webcrawl.analysis._sparse import as_adjacency
from webcrawl.storage.errors import AnalysisError, ConfigError

__all__ = [
    "SAME_HOST_LINKS",
    "BipartiteCores",
    "Core",
    "CoreConfig",
    "bipartite_cores",
    "drop_same_host_links",
    "eliminate",
    "generation_filter",
]

#: What :class:`CoreConfig` may do with links between pages of one host.
SAME_HOST_LINKS = ("drop", "keep")
#: Nodes with at most this many fans find their children with one 64-bit mask per center.
_WORD = 64
#: Largest number of (fan, center) pairs gathered in one vectorised pass when growing a
#: core's children (a memory bound of the enumeration, about 100 MB; not a limit on the
#: result: larger passes are split).
_PASS_PAIRS = 4_000_000


@dataclass(frozen=True)
class CoreConfig:
    """Settings of :func:`bipartite_cores`.

    Attributes
    ----------
    max_i, max_j : int, default 4
        Largest numbers of fans and centers tabulated (cores with more are counted in
        ``counts`` all the same: they contain a K(max_i, max_j)).
    min_i : int, default 2
        Fewest fans of a core (the elimination threshold on in-degree).
    min_j : int, default 2
        Fewest centers of a core (the elimination threshold on out-degree).
    diverse : bool, default False
        Kumar et al.'s diverse cores: drop links between pages of the same host
        first, and count a core's fans by their distinct hosts (i fans on i
        distinct sites).
    same_host_links : {"drop", "keep"}, default "drop"
        Drop the links between pages of one host (Kumar et al.'s nepotistic links)
        before trawling, when the hosts are known; ``"keep"`` trawls every link (on
        navigation-heavy sites the number of cores can then grow exponentially: see
        the module docstring).
    max_sets : int, default 5_000_000
        Give up (AnalysisError) when more cores than this turn up; it bounds the time
        (about 10-50 microseconds a core), the memory does not grow with it.
    examples : int, default 10
        Number of example cores (most fans, among those with ``max_j`` centers or
        more) to keep.
    """

    max_i: int = 4
    max_j: int = 4
    min_i: int = 2
    min_j: int = 2
    diverse: bool = False
    same_host_links: str = "drop"
    max_sets: int = 5_000_000
    examples: int = 10

    def __post_init__(self) -> None:
        if self.same_host_links not in SAME_HOST_LINKS:
            raise ConfigError(f"same_host_links must be one of {SAME_HOST_LINKS}, got "
                              f"{self.same_host_links!r}")
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
    """Core counts per (i, j) (see the module docstring for the definitions).

    Attributes
    ----------
    i_values, j_values : ndarray of int64
        The numbers of fans (rows) and centers (columns) tabulated.
    counts : ndarray of int64, shape (len(i_values), len(j_values))
        ``counts[a, b]``: cores containing at least one K(i_values[a], j_values[b])
        (at least that many fans, or fan hosts if diverse, and centers).  Monotone.
    maximal : ndarray of int64, same shape
        ``maximal[a, b]``: cores with exactly ``i_values[a]`` fans (fan hosts if
        diverse) and exactly ``j_values[b]`` centers.
    cores : int
        Cores found with at least ``min_i`` fans (pages) and ``min_j`` centers.
    generated : int
        Of those, the cores the generation filter output (the rest come from the
        enumeration of the residual graph).
    links : int
        Links considered (after dropping self-loops and, if dropped, same-host links).
    same_host_links : int
        Same-host links dropped before trawling (0 when kept or the hosts unknown).
    pruned_links : int
        Links left by the first elimination (thresholds ``(min_i, min_j)``).
    residual_links : int
        Links left when elimination and generation stop.
    examples : list of Core
        Cores with ``max_j`` centers or more and the most fans.
    diverse : bool
        Whether same-host links were dropped and fans counted by host.
    """

    i_values: np.ndarray
    j_values: np.ndarray
    counts: np.ndarray
    maximal: np.ndarray
    cores: int
    generated: int
    links: int
    same_host_links: int
    pruned_links: int
    residual_links: int
    examples: list[Core]
    diverse: bool

    def count(self, i: int, j: int) -> int:
        """Number of C(i, j): cores containing at least one K(i, j)."""
        a, b = self._cell(i, j)
        return int(self.counts[a, b])

    def count_maximal(self, i: int, j: int) -> int:
        """Number of maximal cores with exactly i fans and exactly j centers."""
        a, b = self._cell(i, j)
        return int(self.maximal[a, b])

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


def _prune(row: np.ndarray, col: np.ndarray, n: int, i: int,
           j: int) -> tuple[np.ndarray, np.ndarray]:
    """Elimination on link arrays, to a fixed point."""
    while row.size:
        out_deg = np.bincount(row, minlength=n)
        in_deg = np.bincount(col, minlength=n)
        keep = (out_deg[row] >= j) & (in_deg[col] >= i)
        if keep.all():
            break
        row, col = row[keep], col[keep]
    return row, col


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
    row, col = _prune(coo.row.astype(np.int64), coo.col.astype(np.int64), n, i, j)
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
        One per center set, with every page linking to all of it as fans.

    References
    ----------
    .. [1] R. Kumar, P. Raghavan, S. Rajagopalan and A. Tomkins, "Trawling the Web
       for emerging cyber-communities", WWW 1999.
    """
    csr = _simple(pruned)
    return [Core(fans, centers)
            for centers, fans in _generate(csr, csr.tocsc(), j) if fans.size >= i]


def _generate(csr: sp.csr_array, csc: sp.csc_array,
              j: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """(center set, common fans) of every distinct out-list of the fans of degree j.

    All sets at once: each set's candidate fans are the in-list of its center with the
    fewest in-links, kept when they link to each of its other centers (a membership
    test by binary search in the sorted (fan, center) keys of the graph).  The cost is
    the sum over sets of that smallest in-degree, never a hub's in-list: intersecting
    whole in-lists made the generation filter quadratic in the hubs' in-degree (45% of
    the time of a 200,000-page copying graph, most of it at a million pages).
    """
    out_deg = np.diff(csr.indptr)
    named = np.flatnonzero(out_deg == j)
    if named.size == 0:
        return []
    rows = np.sort(csr.indices[csr.indptr[named][:, None] + np.arange(j)], axis=1)
    sets = np.unique(rows.astype(np.int64), axis=0)
    n = np.int64(csr.shape[0])
    in_deg = np.diff(csc.indptr).astype(np.int64)
    rarest = sets[np.arange(sets.shape[0]), np.argmin(in_deg[sets], axis=1)]
    size = in_deg[rarest]
    owner = np.repeat(np.arange(sets.shape[0]), size)
    start = np.repeat(csc.indptr[rarest].astype(np.int64) - np.cumsum(size) + size, size)
    fans = csc.indices[start + np.arange(int(size.sum()))].astype(np.int64)
    coo = csr.tocoo()
    keys = np.sort(coo.row.astype(np.int64) * n + coo.col.astype(np.int64))
    ok = np.ones(fans.size, dtype=bool)
    for k in range(j):                       # j is small: one vectorised test a center
        query = fans * n + sets[owner, k]
        at = np.minimum(np.searchsorted(keys, query), max(keys.size - 1, 0))
        ok &= keys[at] == query
    fans, owner = fans[ok], owner[ok]
    order = np.lexsort((fans, owner))
    fans, owner = fans[order], owner[order]
    bounds = np.searchsorted(owner, np.arange(sets.shape[0] + 1))
    return [(sets[k], fans[bounds[k]:bounds[k + 1]]) for k in range(sets.shape[0])]


class _Tally:
    """Histogram of core sizes, clipped one past the tabulated maxima, and examples."""

    def __init__(self, config: CoreConfig, host_of: np.ndarray | None) -> None:
        self.config = config
        self.host_of = host_of
        self.hist = np.zeros((config.max_i - config.min_i + 2,
                              config.max_j - config.min_j + 2), dtype=np.int64)
        self.cores = 0
        self._heap: list[tuple[int, int, tuple[int, ...], tuple[int, ...]]] = []

    def add(self, centers: np.ndarray, fans: np.ndarray) -> None:
        c = self.config
        self.cores += 1
        if self.cores > c.max_sets:
            raise AnalysisError(
                f"more than {c.max_sets} cores; raise max_sets (--max-sets), raise "
                "min_i or min_j"
                + (", or drop same-host links (--same-host-links drop)"
                   if c.same_host_links == "keep" else ""))
        size = int(fans.size) if self.host_of is None else \
            int(np.unique(self.host_of[fans]).size)
        if size < c.min_i:
            return
        a = min(size, c.max_i + 1) - c.min_i
        b = min(int(centers.size), c.max_j + 1) - c.min_j
        self.hist[a, b] += 1
        if c.examples and centers.size >= c.max_j:
            item = (size, -self.cores, tuple(fans.tolist()), tuple(centers.tolist()))
            if len(self._heap) < c.examples:
                heapq.heappush(self._heap, item)
            else:
                heapq.heappushpop(self._heap, item)

    def examples(self) -> list[Core]:
        best = sorted(self._heap, reverse=True)
        return [Core(np.asarray(f, np.int64), np.asarray(cs, np.int64))
                for _, _, f, cs in best]


def bipartite_cores(
    adjacency: Any,
    config: CoreConfig | None = None,
    *,
    hosts: Any = None,
) -> BipartiteCores:
    """Count Kumar et al.'s C(i, j) cores by trawling: elimination, generation, enumeration.

    A core is a complete bipartite subgraph (fans F, centers C) in no larger one; the
    headline count of C(i, j) is the number of cores that contain at least one
    K(i, j) (``|F| >= i``, ``|C| >= j``), and ``maximal`` counts them by exact size
    (see the module docstring).  Links between pages of one host are dropped first
    when the hosts are known (Kumar et al.'s nepotistic links; ``same_host_links``);
    diverse cores [1]_ also count fans by host.

    Parameters
    ----------
    adjacency : scipy sparse array or CapturedGraph, shape (n, n)
        The link graph; weights and self-loops are ignored.
    config : CoreConfig, optional
        Ranges of i and j, diverse cores, limits.
    hosts : array_like of int, shape (n,), optional
        Host of each page, for dropping same-host links and ``config.diverse``.
        Default: ``adjacency.hosts`` of a CapturedGraph (a bare sparse array has no
        hosts: every link is kept).

    Returns
    -------
    BipartiteCores
        ``counts`` (cores containing a K(i, j), monotone) and ``maximal`` (by exact
        size).

    Raises
    ------
    AnalysisError
        When more than ``config.max_sets`` cores turn up.
    ConfigError
        On bad settings, or ``diverse`` without hosts.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> fans, centers = [0, 0, 0, 1, 1, 1, 2, 2, 2], [3, 4, 5] * 3
    >>> A = sp.csr_array((np.ones(9), (fans, centers)), shape=(6, 6))   # a K(3, 3)
    >>> r = bipartite_cores(A, CoreConfig(max_i=3, max_j=3))
    >>> r.counts.tolist()   # rows i = 2, 3; columns j = 2, 3: the K(3, 3) holds all four
    [[1, 1], [1, 1]]
    >>> r.maximal.tolist()  # one maximal core, of exact size (3, 3)
    [[0, 0], [0, 1]]

    Notes
    -----
    Trawling as Kumar et al. describe it [1]_: (1) elimination with thresholds
    ``(min_i, min_j)`` iterated to a fixed point; (2) the generation filter on every
    fan of out-degree exactly ``min_j``: its out-list C and the pages linking to all
    of C form a core when they number ``min_i`` or more; the fan is pruned either way
    (a fan of out-degree ``min_j`` lies in no other core with ``min_j`` centers or more,
    so pruning it removes no other core; a core found again on the pruned graph is
    recognised by its center set and not counted twice); (1) and (2) repeated until
    no fan of out-degree ``min_j`` is left; (3) the residual graph's cores enumerated
    as closed center sets by prefix-preserving closure extension (Uno et al.'s LCM
    [3]_): each core's children are found in one vectorised pass over its fans'
    out-lists, so the Python loop runs over cores found (the output), never over
    all nodes or links.  Enumerating all maximal bicliques is output-sensitive but
    their number can be exponential in the worst case (Bennouas and de Montgolfier
    note the maximal core problem is NP-complete); ``max_sets`` bounds the work.

    References
    ----------
    .. [1] R. Kumar, P. Raghavan, S. Rajagopalan and A. Tomkins, "Trawling the Web
       for emerging cyber-communities", WWW 1999.
    .. [2] J. Kleinberg, R. Kumar, P. Raghavan, S. Rajagopalan and A. Tomkins, "The
       Web as a graph: measurements, models and methods", COCOON 1999.
    .. [3] T. Uno, T. Asai, Y. Uchida and H. Arimura, "An efficient algorithm for
       enumerating closed patterns in transaction databases", Discovery Science 2004.
    .. [4] T. Bennouas and F. de Montgolfier, "Random web crawls", WWW 2007, Fig. 8.
    """
    config = config or CoreConfig()
    hosts = getattr(adjacency, "hosts", None) if hosts is None else hosts
    if config.diverse and hosts is None:
        raise ConfigError("diverse cores need the host of every page")
    host_of = np.asarray(hosts) if config.diverse else None
    adj = _simple(adjacency)
    same_host = 0
    if hosts is not None and (config.diverse or config.same_host_links == "drop"):
        kept = drop_same_host_links(adj, hosts)
        same_host, adj = int(adj.nnz - kept.nnz), kept
    n = adj.shape[0]
    s, t = config.min_i, config.min_j
    tally = _Tally(config, host_of)
    coo = adj.tocoo()
    row, col = _prune(coo.row.astype(np.int64), coo.col.astype(np.int64), n, s, t)
    pruned_links = int(row.size)
    generated: set[bytes] = set()
    while True:   # elimination and generation, iterated
        csr = sp.csr_array((np.ones(row.size), (row, col)), shape=(n, n))
        named = np.diff(csr.indptr) == t
        if not named.any():
            break
        for centers, fans in _generate(csr, csr.tocsc(), t):
            if fans.size >= s and centers.tobytes() not in generated:
                generated.add(centers.tobytes())
                tally.add(centers, fans)
        keep = ~named[row]
        row, col = _prune(row[keep], col[keep], n, s, t)
    n_generated = tally.cores
    _enumerate(csr, s, t, tally, generated)
    i_values = np.arange(config.min_i, config.max_i + 1, dtype=np.int64)
    j_values = np.arange(config.min_j, config.max_j + 1, dtype=np.int64)
    at_least = tally.hist[::-1, ::-1].cumsum(axis=0).cumsum(axis=1)[::-1, ::-1]
    return BipartiteCores(i_values, j_values, at_least[:-1, :-1].copy(),
                          tally.hist[:-1, :-1].copy(), tally.cores, n_generated,
                          int(adj.nnz), same_host, pruned_links, int(row.size),
                          tally.examples(),
                          config.diverse)


def _out_lists(csr: sp.csr_array, fans: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The fans' out-links as (target, fan) arrays, read from the CSR arrays."""
    lo, hi = csr.indptr[fans], csr.indptr[fans + 1]
    size = hi - lo
    idx = np.repeat(lo - np.cumsum(size) + size, size) + np.arange(int(size.sum()))
    return csr.indices[idx].astype(np.int64), np.repeat(fans, size)


def _twins(csr: sp.csr_array) -> tuple[sp.csr_array, np.ndarray, np.ndarray]:
    """Merge the centers with identical in-lists (twins: every core holds all or none).

    Returns the graph with one column per class (the lowest-numbered twin, the others
    emptied), ``weight`` (class size of each representative, 0 elsewhere) and ``rep``
    (each center's representative).  Navigation links make such classes large: every
    page of a documentation book links to every entry of its sidebar, so the entries
    share one in-list, and a fan's out-list shrinks from the whole sidebar to a few
    representatives.  Classes come from two random 64-bit sums of each in-list, and
    every merge is checked entry by entry (a collision keeps the center on its own).
    """
    n = csr.shape[0]
    csc = csr.tocsc()
    csc.sort_indices()
    deg = np.diff(csc.indptr)
    rng = np.random.default_rng(0)
    keys = rng.integers(0, np.iinfo(np.int64).max, size=(2, n), dtype=np.int64)
    col = np.repeat(np.arange(n), deg)
    h = [np.bincount(col, weights=(k[csc.indices] % (1 << 30)).astype(np.float64),
                     minlength=n) for k in keys]      # exact in float64 below 2**23 links
    order = np.lexsort((np.arange(n), h[1], h[0], deg))
    first = np.r_[True, (np.diff(deg[order]) != 0) | (np.diff(h[0][order]) != 0) |
                  (np.diff(h[1][order]) != 0)]
    rep = np.empty(n, dtype=np.int64)
    rep[order] = order[np.maximum.accumulate(np.where(first, np.arange(n), 0))]
    rep[deg == 0] = np.flatnonzero(deg == 0)
    # Check every merge: same in-list, entry by entry.
    moved = np.flatnonzero(rep != np.arange(n))
    if moved.size:
        size = deg[moved]
        off = np.arange(int(size.sum())) - np.repeat(np.cumsum(size) - size, size)
        mine = csc.indices[np.repeat(csc.indptr[moved], size) + off]
        theirs = csc.indices[np.repeat(csc.indptr[rep[moved]], size) + off]
        bad = np.zeros(moved.size, dtype=bool)
        np.logical_or.at(bad, np.repeat(np.arange(moved.size), size), mine != theirs)
        rep[moved[bad]] = moved[bad]
    weight = np.bincount(rep, minlength=n) * (deg > 0)
    coo = csr.tocoo()
    keep = rep[coo.col] == coo.col
    merged = sp.csr_array((coo.data[keep], (coo.row[keep], coo.col[keep])), shape=(n, n))
    return merged, weight.astype(np.int64), rep


def _enumerate(csr: sp.csr_array, s: int, t: int, tally: _Tally,
               skip: set[bytes]) -> None:
    """Every closed pair (F, C) of the residual with |F| >= s, C non-empty (LCM [3]_).

    Twin centers are merged first (:func:`_twins`); a center set's size is the sum
    of its classes' sizes.  A node of the search is a closed set P (of classes) with
    its fans T = all pages linking to every center of P, and ``core`` the class whose
    addition made it.  Its children: for each class e > core not in P with >= s fans
    in T, T_e = the fans of T linking to e and Q = closure(T_e), kept when Q adds no
    class below e to P (prefix preservation: each closed set then has exactly one
    parent).  Cores with >= t centers go to the tally, except center sets ``skip``
    already counted by generation.
    """
    fans_all = np.flatnonzero(np.diff(csr.indptr) > 0).astype(np.int64)
    if fans_all.size < s:
        return
    merged, weight, rep = _twins(csr)
    members = np.argsort(rep, kind="stable")          # centers grouped by class
    starts = np.searchsorted(rep[members], np.arange(rep.size + 1))
    grow = _Growth(merged, s)
    # The root: all fans, and the centers all of them link to (usually none).
    col, _ = _out_lists(merged, fans_all)
    items, cnt = np.unique(col, return_counts=True)
    root = items[cnt == fans_all.size]
    stack: list[tuple[np.ndarray, np.ndarray, int]] = [(root, fans_all, -1)]
    while stack:
        P, T, core = stack.pop()
        size = int(weight[P].sum())
        if size >= t and T.size >= s:
            centers = P if size == P.size else np.sort(np.concatenate(
                [members[starts[c]:starts[c + 1]] for c in P.tolist()]))
            if not (size == t and centers.tobytes() in skip):
                tally.add(centers, T)
        if T.size > s:   # with exactly s fans, every center they share is in P already
            stack.extend(grow.children(P, T, core))


class _Growth:
    """The children of a closed center set (see :func:`_enumerate`), with scratch arrays
    of one entry per page reused from call to call (each call resets what it set)."""

    def __init__(self, csr: sp.csr_array, s: int) -> None:
        self.csr, self.s = csr, s
        n = csr.shape[0]
        self.count = np.zeros(n, dtype=np.int64)
        self.flag = np.zeros(n, dtype=bool)

    def children(self, P: np.ndarray, T: np.ndarray,
                 core: int) -> list[tuple[np.ndarray, np.ndarray, int]]:
        """For each candidate e: T_e from the fan-by-center incidence B of T, and
        closure(T_e) from the co-occurrence counts ``B[:, e]^T B`` (a sparse product,
        candidates in slices of at most ``_PASS_PAIRS`` gathered links)."""
        s = self.s
        col, fan = _out_lists(self.csr, T)          # grouped by fan, fans ascending
        items, cnt = np.unique(col, return_counts=True)
        self.count[items] = cnt
        self.flag[P] = True
        # Only centers outside P with >= s fans in T can join a child (P is in all).
        keep = (self.count[col] >= s) & ~self.flag[col]
        self.count[items] = 0
        frequent = items[(cnt >= s) & ~self.flag[items]]
        self.flag[P] = False
        cand = np.flatnonzero(frequent > core)
        if cand.size == 0:
            return []
        col, fan = col[keep], fan[keep]
        rows = np.searchsorted(T, fan)
        if T.size <= _WORD:
            return self._by_bitmask(P, T, core, col, rows)
        B = sp.csr_array((np.ones(col.size, dtype=np.int64),
                          (rows, np.searchsorted(frequent, col))),
                         shape=(T.size, frequent.size))
        by_center = B.T.tocsr()                     # row e: the fans of T linking to e
        by_center.sort_indices()
        fan_deg = np.diff(B.indptr)
        # Gathered links of candidate e: sum of its fans' degrees in B.
        cost = np.add.reduceat(np.r_[fan_deg[by_center.indices], 0],
                               by_center.indptr[:-1])[cand]
        out: list[tuple[np.ndarray, np.ndarray, int]] = []
        a = 0
        while a < cand.size:
            b = a + 1 + int(np.searchsorted(np.cumsum(cost[a + 1:]),
                                            _PASS_PAIRS - int(cost[a]), side="right"))
            part = cand[a:b]
            sub = by_center[part]
            co = sp.csr_array(sub @ B)              # co[k, x]: fans of T_e linking to x
            size = np.diff(sub.indptr)
            row = np.repeat(np.arange(part.size), np.diff(co.indptr))
            closed = co.data == size[row]
            c_row, c_item = row[closed], co.indices[closed]
            bad = np.zeros(part.size, dtype=bool)
            bad[c_row[c_item < part[c_row]]] = True   # a class below e joins: not ppc
            bounds = np.searchsorted(c_row, np.arange(part.size + 1))
            for k in np.flatnonzero(~bad).tolist():
                q = np.union1d(P, frequent[c_item[bounds[k]:bounds[k + 1]]])
                out.append((q, T[sub.indices[sub.indptr[k]:sub.indptr[k + 1]]],
                            int(frequent[part[k]])))
            a = b
        return out

    @staticmethod
    def _by_bitmask(P: np.ndarray, T: np.ndarray, core: int, col: np.ndarray,
                    rows: np.ndarray) -> list[tuple[np.ndarray, np.ndarray, int]]:
        """Children of a node with at most 64 fans: each center's fans in T as a bit
        mask; candidates with the same mask share one child (T_e and its closure, the
        centers whose mask contains it), whose only ppc parent edge is its smallest
        center: kept when that center is above ``core`` and has exactly that mask."""
        order = np.argsort(col, kind="stable")
        col = col[order]
        bits = np.left_shift(np.uint64(1), rows[order].astype(np.uint64))
        starts = np.flatnonzero(np.r_[True, col[1:] != col[:-1]])
        item = col[starts]
        mask = np.bitwise_or.reduceat(bits, starts)
        keys = np.unique(mask[item > core])
        out: list[tuple[np.ndarray, np.ndarray, int]] = []
        shifts = np.arange(T.size, dtype=np.uint64)
        step = max(1, _PASS_PAIRS // max(item.size, 1))
        for a in range(0, keys.size, step):
            k = keys[a:a + step]
            inside = (mask[None, :] & k[:, None]) == k[:, None]   # closure of each key
            first = np.argmax(inside, axis=1)
            smallest = item[first]
            # The child's parent edge is its smallest center: a candidate (above core)
            # whose mask is the key itself, not a superset.
            for r in np.flatnonzero((smallest > core) & (mask[first] == k)).tolist():
                fans = T[((k[r] >> shifts) & np.uint64(1)).astype(bool)]
                out.append((np.union1d(P, item[inside[r]]), fans, int(smallest[r])))
        return out
