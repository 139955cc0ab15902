"""The bow-tie decomposition of a directed graph (Broder et al. 2000)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Any

import numpy as np
import scipy.sparse as sp
from webcrawl.analysis._compiled import compiled
from webcrawl.analysis._sparse import as_links
from webcrawl.analysis.graph.connectivity import (
    Components,
    _components,
    _search,
    _strong_components,
    _weak_components,
    reach,
    transposed,
)

__all__ = ["BowTie", "Region", "bowtie"]


class Region(IntEnum):
    """Bow-tie region of a node (the values are the codes in :attr:`BowTie.labels`)."""

    SCC = 0
    IN = 1
    OUT = 2
    TENDRILS = 3
    TUBES = 4
    OTHER = 5
    DISCONNECTED = 6


@dataclass(frozen=True, eq=False)
class BowTie:
    """The outcome of :func:`bowtie`.

    Attributes
    ----------
    labels : ndarray of int8, shape (n,)
        :class:`Region` code of each node.
    scc_nodes : ndarray of int64
        Node indices of the largest strongly connected component, ascending.
    scc_sizes, scc_size_counts : ndarray of int64
        Distribution of strongly connected component sizes: ``scc_size_counts[k]``
        components have ``scc_sizes[k]`` nodes (sizes ascending).
    n_scc : int
        Number of strongly connected components.
    n_wcc : int
        Number of weakly connected components.
    largest_wcc : int
        Number of nodes of the largest weakly connected component.
    """

    labels: np.ndarray
    scc_nodes: np.ndarray
    scc_sizes: np.ndarray
    scc_size_counts: np.ndarray
    n_scc: int
    n_wcc: int
    largest_wcc: int

    @property
    def n(self) -> int:
        """Number of nodes."""
        return int(self.labels.size)

    @property
    def counts(self) -> dict[str, int]:
        """Number of nodes in each region, by region name (every region listed)."""
        per_code = np.bincount(self.labels, minlength=len(Region))
        return {region.name: int(per_code[region]) for region in Region}

    @property
    def fractions(self) -> dict[str, float]:
        """Fraction of all nodes in each region, by region name."""
        return {name: count / self.n for name, count in self.counts.items()}

    def nodes(self, region: Region | str) -> np.ndarray:
        """Node indices of one region, ascending."""
        code = Region[region] if isinstance(region, str) else Region(region)
        return np.flatnonzero(self.labels == code)


def bowtie(adjacency: Any) -> BowTie:
    """Bow-tie decomposition: where each node sits relative to the largest SCC.

    Parameters
    ----------
    adjacency : scipy sparse array or matrix, shape (n, n)
        Any non-zero entry ``[i, j]`` is a link from i to j.  A
        :class:`webcrawl.analysis.graph.captured.CapturedGraph` is accepted too.

    Returns
    -------
    BowTie
        Per-node region labels, region counts and fractions, the largest SCC, the
        distribution of SCC sizes and the weakly connected components.

    Raises
    ------
    EmptyGraphError
        If the graph has no nodes.
    ConfigError
        On a non-square or negative adjacency.

    Examples
    --------
    0 -> 1 -> 2 -> 0 is the core, 3 feeds it, it feeds 4, 5 hangs off 3, 6 -> 7 apart:

    >>> import scipy.sparse as sp
    >>> src, dst = [0, 1, 2, 3, 2, 3, 6], [1, 2, 0, 0, 4, 5, 7]
    >>> A = sp.csr_array(([1.0] * 7, (src, dst)), shape=(8, 8))
    >>> bt = bowtie(A)
    >>> [Region(code).name for code in bt.labels]
    ['SCC', 'SCC', 'SCC', 'IN', 'OUT', 'TENDRILS', 'DISCONNECTED', 'DISCONNECTED']
    >>> bt.counts["SCC"], bt.fractions["DISCONNECTED"], bt.n_wcc, bt.largest_wcc
    (3, 0.25, 2, 6)

    Notes
    -----
    *Definitions* (Broder et al.), with SCC the largest strongly connected component
    (ties: the one holding the lowest node index):

    - **SCC**: the nodes of that component.
    - **IN**: nodes that reach SCC but are not reachable from it.
    - **OUT**: nodes reachable from SCC that cannot reach it.
    - **TENDRILS**: nodes outside SCC, IN and OUT that are reachable from IN, or that
      reach OUT, but not both.  (Such paths never pass through SCC, else the node
      would be in IN or OUT.)
    - **TUBES**: nodes outside SCC, IN and OUT that are both reachable from IN and
      reach OUT: they lie on a path from IN to OUT that avoids SCC.
    - **DISCONNECTED**: nodes outside the weakly connected component holding SCC.
    - **OTHER**: the remaining nodes of SCC's weak component, attached only through
      tendrils (e.g. ``x -> t`` with ``t`` a tendril out of IN: ``x`` is neither
      reachable from IN nor reaches OUT).  Broder et al. do not name them; the strict
      definitions above leave them unclassified, so we count them apart rather than
      stretch TENDRILS.  Empty on many graphs.

    The regions partition the nodes.

    *Algorithm.*  Strong components by
    :func:`webcrawl.analysis.graph.connectivity.components` (Tarjan's, compiled, or
    scipy's Pearce's).  With numba (the optional extra ``webcrawl[fast]``), no
    transpose: a compiled forward search from SCC; what reaches SCC and what reaches
    OUT in one pass over the components in their numbering, which is reverse
    topological (each component is completed after every component it reaches;
    checked link by link, with the searches below as the fallback); a forward search
    from IN through the nodes outside SCC, IN and OUT; the weak components by a
    union-find over the links of the nodes those searches leave (every other node is
    in SCC's weak component).  O(n + m) time, one pass over the links besides the
    strong components and the forward search; memory beyond the adjacency about 30
    bytes a node.  Without numba: the transpose's index arrays (no values: 4 bytes a
    link, 6 while built), weak components over both, and four vectorised
    breadth-first searches (:func:`webcrawl.analysis.graph.connectivity.reachable`):
    forward from SCC and from IN on the adjacency, backward from SCC and from OUT on
    the transpose.

    References
    ----------
    .. [1] A. Broder, R. Kumar, F. Maghoul, P. Raghavan, S. Rajagopalan, R. Stata,
       A. Tomkins and J. Wiener, "Graph structure in the Web", Computer Networks
       33(1-6), 309-320, 2000.
    """
    adj = as_links(adjacency)
    strong = _strong_components(adj)  # adj checked already
    scc_nodes = np.flatnonzero(strong.labels == strong.largest)
    regions = _compiled_regions(adj, strong, scc_nodes)
    if regions is None:
        regions = _searched_regions(adj, scc_nodes)
    from_scc, to_scc, from_in, to_out, same_wcc, n_wcc, largest_wcc = regions
    in_scc = from_scc & to_scc
    in_set = to_scc & ~from_scc
    out_set = from_scc & ~to_scc
    labels = np.full(adj.shape[0], Region.OTHER, dtype=np.int8)
    labels[in_scc] = Region.SCC
    labels[in_set] = Region.IN
    labels[out_set] = Region.OUT
    labels[from_in ^ to_out] = Region.TENDRILS
    labels[from_in & to_out] = Region.TUBES
    labels[~same_wcc] = Region.DISCONNECTED
    scc_sizes, scc_size_counts = strong.size_distribution()
    return BowTie(
        labels=labels,
        scc_nodes=scc_nodes.astype(np.int64),
        scc_sizes=scc_sizes,
        scc_size_counts=scc_size_counts.astype(np.int64),
        n_scc=strong.count,
        n_wcc=n_wcc,
        largest_wcc=largest_wcc,
    )


#: The masks and weak-component figures the regions are drawn from: nodes reachable
#: from SCC, reaching SCC, reachable from IN and reaching OUT (the last two outside
#: SCC, IN and OUT), SCC's weak component, the number of weak components and the
#: largest one's size.
_Regions = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, int, int]


def _searched_regions(adj: sp.csr_array, scc_nodes: np.ndarray) -> _Regions:
    """The regions by four searches, two of them over the transpose, and scipy's weak
    components (the path without numba)."""
    indptr_t, indices_t = transposed(adj)  # the links backwards, without values
    weak = _components(*_weak_components(adj, indptr_t, indices_t))
    from_scc = reach(adj.indptr, adj.indices, scc_nodes)
    to_scc = reach(indptr_t, indices_t, scc_nodes)
    rest = ~(from_scc | to_scc)
    from_in = reach(adj.indptr, adj.indices, np.flatnonzero(to_scc & ~from_scc)) & rest
    to_out = reach(indptr_t, indices_t, np.flatnonzero(from_scc & ~to_scc)) & rest
    same_wcc = weak.labels == weak.labels[scc_nodes[0]]
    return from_scc, to_scc, from_in, to_out, same_wcc, weak.count, weak.largest_size


def _compiled_regions(adj: sp.csr_array, strong: Components,
                      scc_nodes: np.ndarray) -> _Regions | None:
    """The regions without the transpose (numba), or None (no numba, or strong
    components not numbered in reverse topological order).

    Forward searches from SCC and from IN; what reaches SCC and OUT in one pass over
    the components in their numbering (Tarjan's and Pearce's algorithms complete a
    component after every component it reaches: each link's target is in the same or
    a lower-numbered component, which the pass checks link by link); SCC's weak
    component and the others by a union-find over the links of the few nodes the
    searches leave (every other node is in SCC's weak component, and so is every
    link's other end but for links into those nodes from nodes that only reach OUT).
    """
    search = compiled(_search)
    backward = compiled(_reach_back)
    weak = compiled(_weak_rest, "_find")
    if search is None or backward is None or weak is None:
        return None
    indptr, indices = adj.indptr, adj.indices
    from_scc = np.zeros(adj.shape[0], dtype=bool)
    from_scc[scc_nodes] = True
    search(indptr, indices, scc_nodes, from_scc)
    out_set = from_scc.copy()
    out_set[scc_nodes] = False
    flags = backward(indptr, indices, strong.labels, strong.count, strong.largest, out_set)
    if flags.size == 0:
        return None
    to_scc = (flags & _TO_SCC) != 0
    to_out = (flags & _TO_OUT) != 0
    del flags, out_set
    in_set = to_scc & ~from_scc
    reached = from_scc | to_scc
    from_in = reached.copy()  # searched from IN through the rest only (see _search)
    search(indptr, indices, np.flatnonzero(in_set), from_in)
    from_in &= ~reached
    to_out &= ~reached
    searched = reached | from_in  # their links end in nodes searched: all known
    known = searched | to_out  # all in SCC's weak component
    root = int(scc_nodes[0])
    parent = weak(indptr, indices, known, searched, root)
    roots = parent == np.arange(parent.size)
    sizes = np.bincount(parent[~known], minlength=parent.size)[roots]
    same_wcc = known
    same_wcc |= parent == root
    sizes[np.flatnonzero(roots) == root] = np.count_nonzero(same_wcc)
    return (from_scc, to_scc, from_in, to_out, same_wcc, int(np.count_nonzero(roots)),
            int(sizes.max()))


#: Bits of :func:`_reach_back`'s per-node flags.
_DONE, _CURRENT, _TO_SCC, _TO_OUT = 1, 2, 4, 8


def _reach_back(indptr: Any, indices: Any, labels: Any, count: int, largest: int,
                out_set: Any) -> Any:  # pragma: no cover - compiled by numba
    """Per-node flags: ``_TO_SCC`` (reaches component ``largest``) and ``_TO_OUT``
    (reaches a node of ``out_set``), by one pass over the components in label order;
    an empty array if a link goes to a higher-numbered component (then the labels are
    not in reverse topological order and the caller searches instead)."""
    n = indptr.size - 1
    start = np.zeros(count + 1, dtype=np.int64)
    for v in range(n):
        start[labels[v] + 1] += 1
    for c in range(count):
        start[c + 1] += start[c]
    fill = start[:-1].copy()
    members = np.empty(n, dtype=np.int64)
    for v in range(n):
        members[fill[labels[v]]] = v
        fill[labels[v]] += 1
    flags = np.zeros(n, dtype=np.uint8)
    for c in range(count):
        lo, hi = start[c], start[c + 1]
        found = _TO_SCC if c == largest else 0
        for j in range(lo, hi):
            v = members[j]
            flags[v] = _CURRENT
            if out_set[v]:
                found |= _TO_OUT
        for j in range(lo, hi):
            v = members[j]
            for k in range(indptr[v], indptr[v + 1]):
                f = flags[indices[k]]
                if f & _DONE:
                    found |= f
                elif not f & _CURRENT:
                    return np.zeros(0, dtype=np.uint8)
        found = (found & (_TO_SCC | _TO_OUT)) | _DONE
        for j in range(lo, hi):
            flags[members[j]] = found
    return flags


def _weak_rest(indptr: Any, indices: Any, known: Any, searched: Any,
               root: int) -> Any:  # pragma: no cover - compiled by numba
    """Union-find parents (each node's set's root, fully compressed): every ``known``
    node joined to ``root``, then the links of the nodes not ``searched`` followed."""
    n = indptr.size - 1
    parent = np.arange(n, dtype=np.int64)
    for v in range(n):
        if known[v]:
            parent[v] = root
    for v in range(n):
        if not searched[v]:
            for k in range(indptr[v], indptr[v + 1]):
                a, b = _find(parent, v), _find(parent, indices[k])
                if a != b:
                    if b == root or (a != root and b < a):
                        a, b = b, a
                    parent[b] = a  # the root of SCC's component stays its root
    for v in range(n):
        parent[v] = _find(parent, v)
    return parent


def _find(parent: Any, v: int) -> int:  # pragma: no cover - compiled by numba
    while parent[v] != v:
        parent[v] = parent[parent[v]]
        v = parent[v]
    return v
