"""Enumerating the bipartite cores left after trawling: closed center sets (LCM).

After elimination and generation (:mod:`webcrawl.analysis.graph.trawling`) the residual
graph is small; every core in it is a *closed pair* (F, C): F every page linking to all
of C, C every page all of F link to.  They are enumerated by prefix-preserving closure
extension (Uno et al.'s LCM): each closed center set has exactly one parent, so the
search visits each core once, and each core's children are found in one vectorised
pass over its fans' out-lists.  Centers with identical in-lists (twins: a sidebar's
entries) are merged first.  Memory holds the graph, a depth-first stack and scratch
arrays of one entry per page; the Python loop runs over the cores found (the output).

References
----------
.. [1] T. Uno, T. Asai, Y. Uchida and H. Arimura, "An efficient algorithm for
   enumerating closed patterns in transaction databases", Discovery Science 2004.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.sparse as sp

__all__ = ["enumerate_cores"]

#: Nodes with at most this many fans find their children with one 64-bit mask per center.
_WORD = 64
#: Largest number of (fan, center) pairs gathered in one vectorised pass when growing a
#: core's children (a memory bound of the enumeration, about 100 MB; not a limit on the
#: result: larger passes are split).
_PASS_PAIRS = 4_000_000



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


def enumerate_cores(csr: sp.csr_array, s: int, t: int,
                    emit: Callable[[np.ndarray, np.ndarray], None],
                    skip: set[bytes]) -> None:
    """Every closed pair (F, C) of the residual with |F| >= s, C non-empty (LCM [1]_).

    Twin centers are merged first (:func:`_twins`); a center set's size is the sum
    of its classes' sizes.  A node of the search is a closed set P (of classes) with
    its fans T = all pages linking to every center of P, and ``core`` the class whose
    addition made it.  Its children: for each class e > core not in P with >= s fans
    in T, T_e = the fans of T linking to e and Q = closure(T_e), kept when Q adds no
    class below e to P (prefix preservation: each closed set then has exactly one
    parent).  Cores with >= t centers go to ``emit(centers, fans)``, except center
    sets ``skip`` already counted by generation.
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
                emit(centers, T)
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
