"""Compiled and vectorised replays of the bfs, random and backlink orderings (private).

:func:`webcrawl.analysis.ordering.virtual.virtual_crawl` hands its replay here when
the strategy is exactly one of these three (not a subclass) and no page budget is
set; the result is the one the generic replay gives (same order, priorities,
depths and discovery sequence: checked by randomised equivalence in the tests), at a
fraction of its time and memory:

* ``bfs``: every priority is 0, so the order is first-discovered-first: a
  level-synchronous breadth-first search, vectorised with numpy (no compiler needed).
  The pages of one level are taken in discovery order, and their new out-links are
  discovered in page order then link order: the first occurrences of a level's
  gathered out-links, in gather order, are the next discoveries.
* ``random``: each URL's priority is the next uniform draw of
  ``numpy.random.default_rng(seed)`` when it is discovered (the strategy's blocks of
  draws are one stream), so the k-th discovered node gets draw k; the replay is a
  binary heap keyed (priority descending, discovery sequence ascending).
* ``backlink``: priority = number of fetched pages linking to the URL; a fetch raises
  its open targets' counts by one, so the heap is *indexed* (each node once, raised
  in place: O(n) memory) instead of the generic replay's lazy heap of one Python
  tuple per update (O(m) entries, ~60 bytes each).

The two heap replays run in a numba-compiled loop when numba is installed (the
optional extra ``webcrawl[fast]``); without it :func:`fast_replay` returns None and
the generic replay runs.  State: about 40 bytes a node, nothing per link.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from webcrawl.analysis._compiled import compiled

__all__ = ["fast_replay", "have_compiler"]

#: Links gathered at once by the breadth-first replay (bounds its temporaries).
_GATHER = 1 << 24



def have_compiler() -> bool:
    """Whether numba is importable (the random and backlink replays need it)."""
    return _compile() is not None


def _compile() -> Any:
    return compiled(_heap_replay, "_before", "_sift_up", "_sift_down")


def fast_replay(strategy: Any, indptr: np.ndarray, indices: np.ndarray,
                fetchable: np.ndarray, seeds: np.ndarray,
                seed: int) -> tuple[np.ndarray, ...] | None:
    """``(order, priorities, depths, discovery)`` of a fresh ``strategy`` instance's
    ordering, or None when this module cannot replay it (then the caller runs the
    generic replay): only the stock bfs, random and backlink classes, not subclasses.

    ``indptr``/``indices`` are the canonical CSR arrays (distinct targets ascending),
    ``fetchable`` the nodes that may be taken, ``seeds`` the start nodes in order.
    """
    from webcrawl.analysis.ordering.strategies.backlink import BacklinkCount
    from webcrawl.analysis.ordering.strategies.bfs import BreadthFirst
    from webcrawl.analysis.ordering.strategies.random_order import RandomOrder

    kind = type(strategy)
    if kind is BreadthFirst:
        return _bfs(indptr, indices, fetchable, seeds)
    name = {RandomOrder: "random", BacklinkCount: "backlink"}.get(kind, "")
    run = _compile()
    if run is None or name not in ("random", "backlink"):
        return None
    n = indptr.size - 1
    draws = np.random.default_rng(seed).random(n) if name == "random" else np.zeros(0)
    order, priorities, depth, discovery, fetched, found = run(
        indptr.astype(np.int64, copy=False), indices, fetchable, seeds.astype(np.int64),
        name == "backlink", draws)
    order, priorities = order[:fetched], priorities[:fetched]
    return order.astype(np.int64), priorities, depth[order].astype(np.int64), \
        discovery[:found].astype(np.int64)


def _bfs(indptr: np.ndarray, indices: np.ndarray, fetchable: np.ndarray,
         seeds: np.ndarray) -> tuple[np.ndarray, ...]:
    n = indptr.size - 1
    depth = np.full(n, -1, dtype=np.int32)
    _, first = np.unique(seeds, return_index=True)
    level_nodes = seeds[np.sort(first)].astype(np.int64)
    depth[level_nodes] = 0
    discovery = [level_nodes]
    order = []
    level = 0
    while level_nodes.size:
        pages = level_nodes[fetchable[level_nodes]]
        order.append(pages)
        level += 1
        found = []
        ends = np.cumsum(indptr[pages + 1] - indptr[pages])
        lo = 0
        while lo < pages.size:  # pages in runs of about _GATHER links
            hi = max(int(np.searchsorted(ends, (ends[lo - 1] if lo else 0) + _GATHER,
                                         side="right")), lo + 1)
            part = pages[lo:hi]
            starts = indptr[part].astype(np.int64)
            counts = indptr[part + 1].astype(np.int64) - starts
            positions = np.repeat(starts - np.cumsum(counts) + counts, counts)
            positions += np.arange(positions.size, dtype=np.int64)
            targets = indices[positions]
            targets = targets[depth[targets] < 0]
            new, at = np.unique(targets, return_index=True)
            new = new[np.argsort(at, kind="stable")].astype(np.int64)
            depth[new] = level
            found.append(new)
            lo = hi
        level_nodes = np.concatenate(found) if found else np.zeros(0, np.int64)
        discovery.append(level_nodes)
    order_arr = np.concatenate(order)
    return (order_arr, np.zeros(order_arr.size), depth[order_arr].astype(np.int64),
            np.concatenate(discovery))


def _heap_replay(indptr: Any, indices: Any, fetchable: Any, seeds: Any, backlink: bool,
                 draws: Any) -> Any:  # pragma: no cover - compiled by numba
    """The replay loop of the heap orderings (plain Python, compiled by numba).

    Heap entries are nodes; a node is before another when its priority is higher, or
    equal and it was discovered first.  ``where[v]`` is v's heap slot (-1: not in
    the heap) so that a backlink update raises v in place.
    """
    n = indptr.size - 1
    depth = np.full(n, -1, dtype=np.int32)
    seq = np.full(n, -1, dtype=np.int64)
    prio = np.zeros(n, dtype=np.float64)
    taken = np.zeros(n, dtype=np.bool_)
    where = np.full(n, -1, dtype=np.int64)
    heap = np.empty(n, dtype=np.int64)
    discovery = np.empty(n, dtype=np.int64)
    order = np.empty(n, dtype=np.int64)
    priorities = np.empty(n, dtype=np.float64)
    size = 0
    found = 0
    fetched = 0
    for s in seeds:
        if depth[s] >= 0:
            continue
        depth[s] = 0
        seq[s] = found
        discovery[found] = s
        prio[s] = draws[found] if not backlink else 0.0
        found += 1
        if fetchable[s]:
            heap[size] = s
            where[s] = size
            size += 1
            _sift_up(heap, where, prio, seq, size - 1)
    while size > 0:
        page = heap[0]
        size -= 1
        where[page] = -1
        if size > 0:
            last = heap[size]
            heap[0] = last
            where[last] = 0
            _sift_down(heap, where, prio, seq, size, 0)
        taken[page] = True
        order[fetched] = page
        priorities[fetched] = prio[page]
        fetched += 1
        child = depth[page] + 1
        for k in range(indptr[page], indptr[page + 1]):
            t = indices[k]
            if depth[t] < 0:
                depth[t] = child
                seq[t] = found
                discovery[found] = t
                prio[t] = draws[found] if not backlink else 0.0
                found += 1
                if fetchable[t]:
                    heap[size] = t
                    where[t] = size
                    size += 1
                    _sift_up(heap, where, prio, seq, size - 1)
        if backlink:
            for k in range(indptr[page], indptr[page + 1]):
                t = indices[k]
                if not taken[t] and fetchable[t]:
                    prio[t] += 1.0
                    _sift_up(heap, where, prio, seq, where[t])
    return order, priorities, depth, discovery, fetched, found


def _before(prio: Any, seq: Any, a: int, b: int) -> bool:  # pragma: no cover
    return bool(prio[a] > prio[b] or (prio[a] == prio[b] and seq[a] < seq[b]))


def _sift_up(heap: Any, where: Any, prio: Any, seq: Any, i: int) -> None:  # pragma: no cover
    node = heap[i]
    while i > 0:
        parent = (i - 1) >> 1
        other = heap[parent]
        if not _before(prio, seq, node, other):
            break
        heap[i] = other
        where[other] = i
        i = parent
    heap[i] = node
    where[node] = i


def _sift_down(heap: Any, where: Any, prio: Any, seq: Any, size: int,
               i: int) -> None:  # pragma: no cover
    node = heap[i]
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        if child + 1 < size and _before(prio, seq, heap[child + 1], heap[child]):
            child += 1
        if not _before(prio, seq, heap[child], node):
            break
        heap[i] = heap[child]
        where[heap[i]] = i
        i = child
    heap[i] = node
    where[node] = i
