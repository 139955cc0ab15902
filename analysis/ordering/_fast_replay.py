"""Compiled and vectorised replays of the bfs, random and backlink orderings (private).

:func:`webcrawl.analysis.ordering.virtual.virtual_crawl` hands its replay here when
the strategy is exactly one of these three (not a subclass) and no page budget is
set; the result is the one the generic replay gives (same order, priorities,
depths and discovery sequence: checked by randomised equivalence in the tests), at a
fraction of its time and memory:

* ``bfs``: every priority is 0, so the order is first-discovered-first: the discovery
  sequence is a queue (compiled), or, without numba, a level-synchronous
  breadth-first search vectorised with numpy.
  The pages of one level are taken in discovery order, and their new out-links are
  discovered in page order then link order: the first occurrences of a level's
  gathered out-links, in gather order, are the next discoveries.
* ``random``: each URL's priority is the next uniform draw of
  ``numpy.random.default_rng(seed)`` when it is discovered (the strategy's blocks of
  draws are one stream), so the k-th discovered node gets draw k; the replay is a
  4-ary heap keyed (priority descending, discovery sequence ascending) whose slots
  hold the keys themselves (a sift reads neighbouring slots, not two arrays per
  node compared: about three times faster than a heap of node ids).
* ``backlink``: priority = number of fetched pages linking to the URL; a fetch raises
  its open targets' counts by one, so the heap is *indexed* (each node once, raised
  in place: O(n) memory) instead of the generic replay's lazy heap of one Python
  tuple per update (O(m) entries, ~60 bytes each); each slot holds its key packed in
  one integer (count, then discovery sequence), and one array says where a node is
  (not discovered, out of the heap, or its slot): one look-up a link.

The order of a heap replay depends on the keys alone (they are distinct: the
discovery sequence breaks ties), not on the heap's shape or the order its updates
come in, so these loops give the generic replay's order.  The two heap replays run
in a numba-compiled loop when numba is installed (the optional extra
``webcrawl[fast]``); without it :func:`fast_replay` returns None and the generic
replay runs.  State: about 40 bytes a node, nothing per link.  The compiled loops
release the GIL: several orderings can be replayed at once on threads.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from webcrawl.analysis._compiled import compiled

__all__ = ["fast_order", "fast_replay", "have_compiler"]

#: Links gathered at once by the breadth-first replay (bounds its temporaries).
_GATHER = 1 << 24
#: ``slot`` of the backlink replay: a node not discovered yet; one discovered and not in
#: the heap (taken, or not fetchable).
_UNSEEN = -2
_OUT = -1
#: The heap's helpers, compiled with the replays that call them.
_HEAP = ("_before", "_put", "_sift_up", "_sift_down")


def have_compiler() -> bool:
    """Whether numba is importable (the random and backlink replays need it)."""
    return _compile("random") is not None


def _compile(name: str) -> Any:
    if name == "backlink":
        return compiled(_backlink_replay, *_HEAP)
    return compiled(_discovery_replay, "_discover", *_HEAP)


def fast_replay(strategy: Any, indptr: np.ndarray, indices: np.ndarray,
                fetchable: np.ndarray, seeds: np.ndarray,
                seed: int) -> tuple[np.ndarray, ...] | None:
    """``(order, priorities, depths, discovery)`` of a fresh ``strategy`` instance's
    ordering, or None when this module cannot replay it (then the caller runs the
    generic replay): only the stock bfs, random and backlink classes, not subclasses.

    ``indptr``/``indices`` are the canonical CSR arrays (distinct targets ascending),
    ``fetchable`` the nodes that may be taken, ``seeds`` the start nodes in order.
    """
    run = _replay(strategy, indptr, indices, fetchable, seeds, seed)
    if run is None or len(run) == 4:  # the vectorised bfs: already in this form
        return run
    order, priorities, depth, discovery, fetched, found = run
    order, priorities = order[:fetched], priorities[:fetched]
    return order.astype(np.int64), priorities, depth[order].astype(np.int64), \
        discovery[:found].astype(np.int64)


def fast_order(strategy: Any, indptr: np.ndarray, indices: np.ndarray,
               fetchable: np.ndarray, seeds: np.ndarray, seed: int) -> np.ndarray | None:
    """The ``order`` of :func:`fast_replay` alone, as the replay wrote it (int32 on a
    graph of int32 indices), or None as there: no int64 copies of the order, the
    depths and the discovery sequence (up to 28 bytes a node less at the peak)."""
    run = _replay(strategy, indptr, indices, fetchable, seeds, seed)
    if run is None:
        return None
    order: np.ndarray = run[0] if len(run) == 4 else run[0][:run[4]]
    return order


def _replay(strategy: Any, indptr: np.ndarray, indices: np.ndarray, fetchable: np.ndarray,
            seeds: np.ndarray, seed: int) -> tuple[Any, ...] | None:
    """The compiled loop's outputs (or the vectorised bfs's four arrays), or None."""
    from webcrawl.analysis.ordering.strategies.backlink import BacklinkCount
    from webcrawl.analysis.ordering.strategies.bfs import BreadthFirst
    from webcrawl.analysis.ordering.strategies.random_order import RandomOrder

    kinds: dict[type, str] = {BreadthFirst: "bfs", RandomOrder: "random",
                              BacklinkCount: "backlink"}
    name = kinds.get(type(strategy), "")
    run = _compile(name) if name else None
    if name == "bfs" and run is None:
        return _bfs(indptr, indices, fetchable, seeds)
    if run is None:
        return None
    # indptr as the graph holds it (int32 below 2**31 links): no int64 copy of it
    # per replay, 8 bytes a node each.
    arguments = [indptr, indices, fetchable, seeds.astype(np.int64)]
    if name != "backlink":  # bfs: no draws
        n = (indptr.size - 1) if name == "random" else 0
        arguments.append(np.random.default_rng(seed).random(n))
    result: tuple[Any, ...] = run(*arguments)
    return result


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


def _discovery_replay(indptr: Any, indices: Any, fetchable: Any, seeds: Any,
                      draws: Any) -> Any:  # pragma: no cover - compiled by numba
    """The bfs and random orderings' replay loop (plain Python, compiled by numba).

    ``draws`` empty (bfs): every priority is 0 and ties go to the node discovered
    first, so the discovery sequence is the queue.  Else (random) the k-th node
    discovered has priority ``draws[k]``, and the fetchable nodes wait in a 4-ary
    max-heap whose slots hold the keys themselves (the draw and the discovery
    sequence, the tie-break): a sift compares neighbouring slots instead of looking
    two arrays up per node compared.  Each node enters once and leaves once.
    """
    n = indptr.size - 1
    ranked = draws.size > 0
    depth = np.full(n, -1, dtype=np.int32)
    discovery = np.empty(n, dtype=indices.dtype)
    order = np.empty(n, dtype=indices.dtype)
    priorities = np.zeros(n, dtype=np.float64)
    key = np.empty(n if ranked else 0, dtype=np.float64)
    seq = np.empty(n if ranked else 0, dtype=np.int64)
    size = found = fetched = head = 0
    for s in seeds:
        if depth[s] < 0:
            depth[s] = 0
            size = _discover(s, found, discovery, fetchable, draws, key, seq, size)
            found += 1
    while True:
        if ranked:
            if size == 0:
                break
            priorities[fetched], at = key[0], seq[0]
            size -= 1
            if size > 0:
                _sift_down(key, seq, seq[:0], size, key[size], seq[size])
            page = discovery[at]
        else:
            while head < found and not fetchable[discovery[head]]:
                head += 1
            if head == found:
                break
            page = discovery[head]
            head += 1
        order[fetched] = page
        fetched += 1
        child = depth[page] + 1
        for k in range(indptr[page], indptr[page + 1]):
            t = indices[k]
            if depth[t] < 0:
                depth[t] = child
                size = _discover(t, found, discovery, fetchable, draws, key, seq, size)
                found += 1
    return order, priorities, depth, discovery, fetched, found


def _discover(v: int, found: int, discovery: Any, fetchable: Any, draws: Any, key: Any,
              seq: Any, size: int) -> int:  # pragma: no cover - compiled by numba
    """Record ``v`` as the ``found``-th node discovered; into the random replay's heap
    when it is fetchable.  The heap's new size."""
    discovery[found] = v
    if draws.size > 0 and fetchable[v]:
        _sift_up(key, seq, seq[:0], size, draws[found], found)
        return size + 1
    return size


def _backlink_replay(indptr: Any, indices: Any, fetchable: Any,
                     seeds: Any) -> Any:  # pragma: no cover - compiled by numba
    """The backlink ordering's replay loop (plain Python, compiled by numba).

    A 4-ary max-heap indexed by node (``slot[v]``: v's heap slot; ``_UNSEEN`` not
    discovered; ``_OUT`` discovered, never or no longer in the heap), each slot holding
    its node's key packed in one integer: ``count << 32 | (2**32 - 1 - sequence)``, so
    that one integer comparison orders by backlink count, then discovery.  A link
    from a fetched page raises its target's key by ``1 << 32`` in place: one look-up
    of ``slot`` a link, then a sift-up among the heap's slots.
    """
    n = indptr.size - 1
    depth = np.full(n, -1, dtype=np.int32)
    slot = np.full(n, _UNSEEN, dtype=np.int64)
    discovery = np.empty(n, dtype=indices.dtype)
    order = np.empty(n, dtype=indices.dtype)
    priorities = np.empty(n, dtype=np.float64)
    key = np.empty(n, dtype=np.uint64)
    node = np.empty(n, dtype=indices.dtype)
    low = np.uint64(0xFFFFFFFF)
    one = np.uint64(1) << np.uint64(32)
    size = 0
    found = 0
    fetched = 0
    for s in seeds:
        if slot[s] != _UNSEEN:
            continue
        depth[s] = 0
        discovery[found] = s
        slot[s] = _OUT
        if fetchable[s]:
            _sift_up(key, node, slot, size, low - np.uint64(found), s)
            size += 1
        found += 1
    while size > 0:
        top = key[0]
        page = node[0]
        slot[page] = _OUT
        size -= 1
        if size > 0:
            _sift_down(key, node, slot, size, key[size], node[size])
        order[fetched] = page
        priorities[fetched] = float(top >> np.uint64(32))
        fetched += 1
        child = depth[page] + 1
        for k in range(indptr[page], indptr[page + 1]):
            t = indices[k]
            at = slot[t]
            if at >= 0:
                _sift_up(key, node, slot, at, key[at] + one, t)
            elif at == _UNSEEN:
                depth[t] = child
                discovery[found] = t
                slot[t] = _OUT
                if fetchable[t]:  # discovered through this page: one backlink already
                    _sift_up(key, node, slot, size, one | (low - np.uint64(found)), t)
                    size += 1
                found += 1
    return order, priorities, depth, discovery, fetched, found


def _sift_up(key: Any, aux: Any, slot: Any, i: int, value: Any,
             a: int) -> None:  # pragma: no cover - compiled by numba
    """Put ``(value, a)`` in the heap's slot ``i`` and move it up to its place.

    The heap's order: higher ``key`` first, then lower ``aux`` (the random replay's
    discovery sequence; the backlink replay's keys are distinct, its ``aux`` the
    node).  ``slot[aux]`` follows each move when ``slot`` is not empty."""
    while i > 0:
        parent = (i - 1) >> 2
        if not _before(value, a, key[parent], aux[parent]):
            break
        _put(key, aux, slot, i, key[parent], aux[parent])
        i = parent
    _put(key, aux, slot, i, value, a)


def _sift_down(key: Any, aux: Any, slot: Any, size: int, value: Any,
               a: int) -> None:  # pragma: no cover - compiled by numba
    """Put ``(value, a)`` at the root of the heap of ``size`` and sift it down (the
    order of :func:`_sift_up`)."""
    i = 0
    while True:
        first = 4 * i + 1
        if first >= size:
            break
        best = first
        for c in range(first + 1, min(first + 4, size)):
            if _before(key[c], aux[c], key[best], aux[best]):
                best = c
        if not _before(key[best], aux[best], value, a):
            break
        _put(key, aux, slot, i, key[best], aux[best])
        i = best
    _put(key, aux, slot, i, value, a)


def _before(key: Any, aux: Any, other_key: Any,
            other_aux: Any) -> bool:  # pragma: no cover - compiled by numba
    return bool(key > other_key or (key == other_key and aux < other_aux))


def _put(key: Any, aux: Any, slot: Any, i: int, value: Any,
         a: int) -> None:  # pragma: no cover - compiled by numba
    key[i] = value
    aux[i] = a
    if slot.size > 0:
        slot[a] = i
