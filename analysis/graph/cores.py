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

*Same-site links.* Trawling as Kumar et al. ran it ignores *nepotistic* links, those
between pages of one site, which endorse nothing: by default (``same_host_links="drop"``)
they are dropped before trawling whenever the site of every page is known (a
CapturedGraph's ``sites``, where mirrored hosts are one site, see
:mod:`webcrawl.analysis.graph.sites`; or ``hosts``); ``"keep"`` trawls every link.
On a documentation crawl
almost every link of the pruned graph is a same-site navigation link (99% of them on a
4,472-page crawl of the Rust documentation), and a sidebar of k entries whose pages each
link to all entries but themselves holds 2**k maximal cores (every subset of the k pages
is the fan set of one: the entries the others all link to); with same-host links kept
the count is exponential in the sidebar's length and only ``max_sets`` ends it.

*Diverse* cores (Kumar et al.: "fans on i distinct sites", no mirrors or
self-endorsement): same-site links dropped as above, and a core has i fans when its fans
sit on i distinct sites.  Kumar et al. removed mirrors before trawling; here a mirror
is one site with the host it copies, so its copies neither make nepotistic links look
remote nor count as fans of another site.

How
---
The filters are in :mod:`webcrawl.analysis.graph.trawling`, the enumeration in
:mod:`webcrawl.analysis.graph.bicliques`. Elimination with thresholds ``(min_i, min_j)``
to a fixed point; the generation filter on fans of out-degree exactly ``min_j`` (each
one's out-list, with all its common fans, is a core when they number ``min_i`` or more;
the fan is then pruned, which removes no other core); the two iterated until no fan has
out-degree ``min_j``; the residual enumerated core by core (closed center sets by
prefix-preserving closure extension, Uno et al.'s LCM, one vectorised pass over the
fans' out-lists per core). Memory holds the graph, a depth-first stack and a histogram
of core sizes, never the list of cores; the time is proportional to the cores found
(``max_sets`` bounds it).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from webcrawl.analysis.graph.bicliques import enumerate_cores
from webcrawl.analysis.graph.trawling import (
    Core,
    drop_same_host_links,
    eliminate,
    generate,
    generation_filter,
    prune,
    simple_adjacency,
)
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

#: What :class:`CoreConfig` may do with links between pages of one site.
SAME_HOST_LINKS = ("drop", "keep")


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
        first, and count a core's fans by their distinct sites (i fans on i
        distinct sites).
    same_host_links : {"drop", "keep"}, default "drop"
        Drop the links between pages of one host (Kumar et al.'s nepotistic links)
        before trawling, when the sites are known; ``"keep"`` trawls every link (on
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
class BipartiteCores:
    """Core counts per (i, j) (see the module docstring for the definitions).

    Attributes
    ----------
    i_values, j_values : ndarray of int64
        The numbers of fans (rows) and centers (columns) tabulated.
    counts : ndarray of int64, shape (len(i_values), len(j_values))
        ``counts[a, b]``: cores containing at least one K(i_values[a], j_values[b])
        (at least that many fans, or fan sites if diverse, and centers).  Monotone.
    maximal : ndarray of int64, same shape
        ``maximal[a, b]``: cores with exactly ``i_values[a]`` fans (fan sites if
        diverse) and exactly ``j_values[b]`` centers.
    cores : int
        Cores found with at least ``min_i`` fans (pages) and ``min_j`` centers.
    generated : int
        Of those, the cores the generation filter output (the rest come from the
        enumeration of the residual graph).
    links : int
        Links considered (after dropping self-loops and, if dropped, same-host links).
    same_host_links : int
        Same-site links dropped before trawling (0 when kept or the sites unknown).
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
    when the sites are known (Kumar et al.'s nepotistic links; ``same_host_links``);
    diverse cores [1]_ also count fans by host.

    Parameters
    ----------
    adjacency : scipy sparse array or CapturedGraph, shape (n, n)
        The link graph; weights and self-loops are ignored.
    config : CoreConfig, optional
        Ranges of i and j, diverse cores, limits.
    hosts : array_like of int, shape (n,), optional
        Site (or host) of each page, for dropping same-site links and
        ``config.diverse``.  Default: ``adjacency.sites`` of a CapturedGraph (its
        hosts, mirrored hosts as one site); a bare sparse array has none: every link
        is kept.

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
    hosts = getattr(adjacency, "sites", None) if hosts is None else hosts
    if config.diverse and hosts is None:
        raise ConfigError("diverse cores need the host of every page")
    host_of = np.asarray(hosts) if config.diverse else None
    adj = simple_adjacency(adjacency)
    same_host = 0
    if hosts is not None and (config.diverse or config.same_host_links == "drop"):
        kept = drop_same_host_links(adj, hosts)
        same_host, adj = int(adj.nnz - kept.nnz), kept
    n = adj.shape[0]
    s, t = config.min_i, config.min_j
    tally = _Tally(config, host_of)
    coo = adj.tocoo()
    row, col = prune(coo.row.astype(np.int64), coo.col.astype(np.int64), n, s, t)
    pruned_links = int(row.size)
    generated: set[bytes] = set()
    while True:   # elimination and generation, iterated
        csr = sp.csr_array((np.ones(row.size), (row, col)), shape=(n, n))
        named = np.diff(csr.indptr) == t
        if not named.any():
            break
        for centers, fans in generate(csr, csr.tocsc(), t):
            if fans.size >= s and centers.tobytes() not in generated:
                generated.add(centers.tobytes())
                tally.add(centers, fans)
        keep = ~named[row]
        row, col = prune(row[keep], col[keep], n, s, t)
    n_generated = tally.cores
    enumerate_cores(csr, s, t, tally.add, generated)
    i_values = np.arange(config.min_i, config.max_i + 1, dtype=np.int64)
    j_values = np.arange(config.min_j, config.max_j + 1, dtype=np.int64)
    at_least = tally.hist[::-1, ::-1].cumsum(axis=0).cumsum(axis=1)[::-1, ::-1]
    return BipartiteCores(i_values, j_values, at_least[:-1, :-1].copy(),
                          tally.hist[:-1, :-1].copy(), tally.cores, n_generated,
                          int(adj.nnz), same_host, pruned_links, int(row.size),
                          tally.examples(),
                          config.diverse)
