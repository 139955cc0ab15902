"""The frontier: Mercator's split of ordering (front) and politeness (back).

The strategy gives each URL a priority (higher first; ties: lower URL id, i.e. first
discovered).  The frontier keeps

* a heap per host of ``(-priority, url_id)``, with **lazy deletion**: a priority update
  pushes a new entry and the old one is skipped when it surfaces (its priority no
  longer matches), so updates cost O(log n); when stale entries outnumber live ones
  the heap is rebuilt from its live entries (amortised O(1) per update), so memory
  stays proportional to the frontier however often priorities change.  New URLs that
  belong in a head wait as ids in a frontier-wide buffer until one of their hosts' heads
  is read (or :data:`PENDING_MAX` wait), then are appended to their heads, one step per
  host, and the heap order is restored when the host's best is next read (a
  last-in-first-out order sends every new URL to its host's head, where a push would
  sift it to the root); heads over their limit are compacted together, several hosts in
  one vectorised pass, each waiting at most :data:`_SLACK` entries beyond its limit.
  Past ``compiled_from`` URLs (:data:`~webcrawl.crawler.seen.COMPILED_MIN`) and with
  numba installed, :meth:`Frontier.add_many`'s per-URL work is one compiled loop;
* per host, only the best :data:`HEAD` URLs in that heap (its *head*); the others wait
  in the host's *overflow*, a growable array of 4-byte ids, every one ranked after the
  host's *cut* (the worst key moved to the head at its last refill).  When the head's
  best is no longer ahead of the cut, the next batch of the overflow's best moves up:
  FIFO orders read it in order; after priority updates it is sorted first.  A host's
  best URL is thus always in its head, and the frontier takes exactly the URLs unbounded
  heaps would.  Given a ``spill_dir``, overflows longer than ``spill_at`` ids go to an
  unlinked spill file there, in order, and come back a batch at a time
  (:mod:`webcrawl.crawler.overflow`; :meth:`Frontier.spill_overflows` keeps fewer in
  memory under a memory budget).  Per-URL fields (priority, host, head or overflow) are
  numpy arrays by URL id, so a frontier URL costs about 13 bytes, plus 4 for an overflow
  id held in memory, plus its share of the heads;
* a heap of *ready* hosts keyed by their best URL's ``(-priority, url_id)`` (entries
  are validated when popped, so a host whose best URL changed is simply re-pushed);
* a heap of *waiting* hosts keyed by the monotonic time they may be contacted again.

:meth:`Frontier.pop_ready` moves hosts whose time has come to the ready heap and returns
the host whose best URL the strategy ranks best among all ready hosts: "among ready
hosts always take the URL the strategy ranks best".  The caller then either takes that
URL (:meth:`take`) or uses the host slot for robots.txt, and later :meth:`release` s the
host with its next allowed time.  A host is never handed out twice at once.

Host order: ``Frontier(host_order="most-pending")`` keys the ready heap by the host's
pending URL count first (most first), then by its best URL: Baeza-Yates et al.'s
larger-sites-first, a strategy's :attr:`~webcrawl.analysis.ordering.strategies.Strategy.host_order`.
A host's count changes only when it gains a URL (a new entry is pushed, as for a
better priority) or when a URL is taken (the host is then busy, out of the heap), so
the lazy validation below keeps the key exact.

Event-driven callers set :attr:`Frontier.on_wait`: it is called with ``(host_id,
ready_at)`` whenever a host starts waiting (released with URLs left, or an idle host
receiving a URL), so a timer can wake exactly that host when its wait ends instead of
anyone polling :meth:`next_wakeup`.

Rank recording: when a URL is taken, its rank among *all* frontier URLs (0 = the best
URL anywhere, whatever its host's politeness state) is exact and O(log n): an
order-statistics index (sorted blocks of keys with a Fenwick tree over block sizes,
the ``sortedcontainers`` layout) answers "how many keys are smaller" with two
bisections and a prefix sum.  With zero delay on one host the rank is always 0.

Bulk updates: a recomputing strategy (PageRank) re-scores every frontier URL at once.
:meth:`Frontier.update_many` then assigns the priorities and rebuilds the host heaps,
the ready heap and the rank index from one numpy sort of all keys, several times
cheaper than a million lazy heap pushes and index moves (about 1 s against about 9 s
for a million URLs); host states and politeness times do not depend on priorities and
are kept.
"""

from __future__ import annotations

import gc
import heapq
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain
from operator import itemgetter
from pathlib import Path
from typing import Any

import numpy as np
from webcrawl.crawler.columns import Column
from webcrawl.crawler.overflow import SPILL_AT, SPILL_AT_TIGHT, Meter, Overflow, SpillFile
from webcrawl.crawler.ranks import RankIndex
from webcrawl.crawler.seen import COMPILED_MIN
from webcrawl.storage._compiled import compiled

__all__ = ["Frontier", "Taken", "compile_loops"]

_Key = tuple[float, int]  # (-priority, url_id): smaller is better
_WaitHook = Callable[[int, float], None]
_URL_ID = itemgetter(1)  # of a _Key

_EMPTY, _WAITING, _READY, _BUSY = 0, 1, 2, 3
_TOLD = np.array([True, False, True, False])  # by state: told of a new URL (_notify)
_ABSENT, _IN_HEAD, _IN_OVERFLOW = 0, 1, 2
#: URLs a host keeps in its in-memory heap by default; the rest wait in its overflow.
HEAD = 64
#: Stale heap entries tolerated beyond twice the live ones before a rebuild.
_SLACK = 64
#: Hosts whose heads passed their limit that :meth:`Frontier.add_many` lets wait (each
#: at most :data:`_SLACK` entries beyond it) so that one vectorised pass compacts them
#: all: a compaction's fixed cost (some twenty numpy calls) is paid once for them.
COMPACT_HOSTS = 16
#: :meth:`Frontier.update_many` rebuilds for batches of at least this many pairs ...
BULK_MIN = 1000
#: ... covering at least this fraction of the frontier (see :meth:`Frontier.rebuilds`).
BULK_FRACTION = 0.25
#: ... on a frontier of at most this many URLs: a rebuild blocks the event loop for
#: about 1 s per million URLs (measured), so larger frontiers take chunked per-item
#: updates that let fetching go on in between.
BULK_MAX_FRONTIER = 200_000
#: URLs :meth:`Frontier.add_many` spills in bulk that wait before they are handed to
#: their hosts' overflows (grouped by host: one step per host, not per URL).
PENDING_MAX = 1 << 16
#: Batches of at most this many URLs run :func:`_admit`'s loop in Python, on lists:
#: a crawl's batch is a page's new links admitted to the frontier, 2.1 on average
#: (7,880 of 8,025 batches at most 8) on the 20,000-page site of ``bench_crawl.py``,
#: and each numpy call costs about a microsecond whatever its size; there,
#: :meth:`Frontier.add_many` took 85 us a batch through numpy and 28 us through this
#: loop (measured).
SMALL_BATCH = 8


@dataclass(frozen=True, slots=True)
class Taken:
    """A URL taken from the frontier."""

    url_id: int
    host_id: int
    priority: float
    rank: int | None


def _group_key_order(group: np.ndarray, negs: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """``np.lexsort((ids, negs, group))`` for ids below 2**32, without lexsort's
    indirect multi-key merge sort (several times slower): the keys ``(-priority,
    url_id)`` become one integer (the priority's rank, then the id) for one quicksort,
    then a stable sort by group."""
    _, rank = np.unique(negs, return_inverse=True)
    order = np.argsort((rank.astype(np.uint64) << np.uint64(32)) | ids.astype(np.uint64))
    by = group[order]
    if len(by) and by[-1] < 1 << 16 and by.max() < 1 << 16:
        by = by.astype(np.uint16)  # a radix sort
    return order[np.argsort(by, kind="stable")]


def _grown(a: np.ndarray, size: int) -> np.ndarray:
    """``a`` followed by zeros, ``size`` entries (zero-filled: capacity not yet written
    costs no resident memory)."""
    out = np.zeros(size, dtype=a.dtype)
    out[:len(a)] = a
    return out


class _States(dict[int, int]):
    """Host states by host id (a dict; absent: ``_EMPTY``), mirrored in a numpy array
    (:attr:`array`) so a batch of hosts is read at once."""

    def __init__(self) -> None:
        super().__init__()
        self.array = np.zeros(64, dtype=np.uint8)

    def __setitem__(self, host_id: int, state: int) -> None:
        super().__setitem__(host_id, state)
        if host_id >= len(self.array):
            self.grow(host_id)
        self.array[host_id] = state

    def grow(self, host_id: int) -> None:
        """Make :attr:`array` cover ``host_id``."""
        n = len(self.array)
        if host_id >= n:
            self.array = _grown(self.array, max(host_id + 1, 2 * n))


@dataclass(slots=True, eq=False)
class _Overflow:
    """A host's URLs beyond its in-memory head: a FIFO of ids, spilled to disk when the
    frontier has a spill file (:mod:`webcrawl.crawler.overflow`).

    Every live entry's key is greater than ``cut``; the entries are in ascending key
    order while ``ordered``.  An entry is dead once its URL left the overflow (moved to
    the head, taken): it is skipped and dropped at the next sort.
    """

    cut: _Key
    fifo: Overflow = field(default_factory=Overflow)
    ordered: bool = True
    last: _Key | None = None


class Frontier:
    """Per-host priority queues under a ready-host heap; see the module docstring."""

    def __init__(self, *, record_rank: bool = True, host_order: str = "best-url",
                 head: int = HEAD, spill_dir: str | Path | None = None,
                 spill_at: int = SPILL_AT, compiled_from: int | None = None) -> None:
        if host_order not in ("best-url", "most-pending"):
            raise ValueError(f"unknown host order {host_order!r}")
        if head < 1:
            raise ValueError(f"head must be at least 1, not {head}")
        self.host_order = host_order
        self.head = head
        # By URL id: priority, host, and where the URL is (absent, head, overflow).
        # Zero-filled, so capacity not yet used costs no resident memory.
        self._prio = np.zeros(0)
        self._host_of = np.zeros(0, dtype=np.int32)
        self._where = np.zeros(0, dtype=np.uint8)
        self._n = 0                                 # frontier URLs
        self._top = 0                               # largest URL id added, plus one
        self._queues: dict[int, list[_Key]] = {}    # host -> heap of head keys (lazy)
        self._head_entries = 0                      # entries in all of them
        # host -> length of its queue's heap-ordered prefix, for queues with entries
        # appended after it (heap order is restored when the host's best is read)
        self._unheaped: dict[int, int] = {}
        self._overfull: set[int] = set()            # hosts over their head limit
        self._meter = Meter()                       # memory of all overflows
        self._over: dict[int, _Overflow] = {}       # host -> URLs beyond its head
        self._state = _States()                     # host -> _EMPTY/_WAITING/_READY/_BUSY
        self._ready_at: dict[int, float] = {}       # host -> monotonic time
        self._live = np.zeros(0, dtype=np.int64)    # by host: frontier URLs it holds
        self._queued = 0                            # hosts holding any
        # By host id, mirroring self._over: whether the host has an overflow, its cut.
        self._has_over = np.zeros(0, dtype=bool)
        self._cut_neg = np.zeros(0)
        self._cut_id = np.zeros(0, dtype=np.int64)
        # Overflow URLs add_many spilled in bulk, not yet in their hosts' FIFOs.
        self._pending = Column(np.uint32)
        # Head URLs add_many buffered, not yet in their hosts' queues; by host, whether
        # it has any.
        self._fresh = Column(np.uint32)
        self._has_fresh = np.zeros(0, dtype=bool)
        # (-prio, url_id, host), or (-pending, -prio, url_id, host) by most pending
        self._ready: list[tuple[float, ...]] = []
        self._waiting: list[tuple[float, int]] = []      # (ready_at, host)
        self._ranks = RankIndex() if record_rank else None
        # Overflows beyond spill_at ids go to an unlinked file in spill_dir (a cache: a
        # resume rebuilds the frontier from the crawl database).
        self._file = None if spill_dir is None else SpillFile(spill_dir, spill_at)
        # From this many URLs on, add_many's per-URL pass is one compiled loop (numba,
        # when installed) instead of some twenty numpy calls a batch.
        self._compiled_from = COMPILED_MIN if compiled_from is None else compiled_from
        self._told_at = np.zeros(0, dtype=np.int64)  # by host: scratch of _admit
        self.busy = 0
        #: called with (host_id, ready_at) when a host starts waiting (module doc)
        self.on_wait: _WaitHook | None = None

    # -- sizes ------------------------------------------------------------------
    def __len__(self) -> int:
        return self._n

    def __contains__(self, url_id: int) -> bool:
        return 0 <= url_id < len(self._where) and bool(self._where[url_id])

    def priority(self, url_id: int) -> float | None:
        if url_id not in self:
            return None
        return float(self._prio[url_id])

    def priorities(self) -> dict[int, float]:
        """Every frontier URL's priority, by id (a copy)."""
        ids = np.flatnonzero(self._where)
        return dict(zip(ids.tolist(), self._prio[ids].tolist(), strict=True))

    @property
    def queued_hosts(self) -> int:
        """Hosts holding at least one frontier URL."""
        return self._queued

    def host_size(self, host_id: int) -> int:
        """Entries in a host's in-memory heap (including stale ones: an upper bound)."""
        if host_id < len(self._has_fresh) and self._has_fresh[host_id]:
            self._place()
        return len(self._queues.get(host_id, ()))

    @property
    def spilled(self) -> int:
        """Overflow entries (URLs beyond the hosts' heads, and dead ones not yet dropped)."""
        return sum(len(o.fifo) for o in self._over.values()) + len(self._pending)

    @property
    def nbytes(self) -> int:
        """Memory held: the per-URL arrays and overflows, the heads estimated (120 B an
        entry, a key tuple in a heap), the rank index (12 B a key)."""
        arrays = 13 * self._top  # float64 + int32 + uint8 by URL id, as far as written
        over = self._meter.nbytes + self._pending.nbytes + self._fresh.nbytes
        heads = 120 * self._head_entries
        ranks = 0 if self._ranks is None else self._ranks.nbytes
        return int(arrays + over + heads + ranks)

    def _grow(self, url_id: int) -> None:
        n = len(self._prio)
        if url_id < n:
            return
        size = max(url_id + 1, n * 3 // 2 + 1024)
        self._prio, self._host_of, self._where = (
            _grown(a, size) for a in (self._prio, self._host_of, self._where))

    def _grow_hosts(self, host_id: int) -> None:
        n = len(self._has_over)
        if host_id < n:
            return
        size = max(host_id + 1, 2 * n, 64)
        (self._has_over, self._cut_neg, self._cut_id, self._live, self._has_fresh,
         self._told_at) = (_grown(a, size) for a in (
             self._has_over, self._cut_neg, self._cut_id, self._live, self._has_fresh,
             self._told_at))
        self._state.grow(size - 1)

    def _mark_cut(self, host_id: int, cut: _Key | None) -> None:
        """Mirror a host's overflow cut in the per-host arrays (None: no overflow)."""
        self._grow_hosts(host_id)
        if cut is None:
            self._has_over[host_id] = False
        else:
            self._has_over[host_id] = True
            self._cut_neg[host_id], self._cut_id[host_id] = cut

    def shrink_heads(self, head: int) -> None:
        """Keep at most ``head`` URLs per host in memory from now on; the others move
        to their hosts' overflows (no ordering changes)."""
        if head < 1:
            raise ValueError(f"head must be at least 1, not {head}")
        self.head = head
        self._place()
        self._compact([h for h, queue in self._queues.items() if len(queue) > head])

    def spill_overflows(self) -> None:
        """Hold fewer overflow ids in memory from now on and write out the longer tails
        now (no-op without a spill file)."""
        if self._file is None:
            return
        self._settle()
        self._file.tighten(SPILL_AT_TIGHT)
        for over in self._over.values():
            if len(over.fifo.tail) - over.fifo.start >= self._file.spill_at:
                over.fifo.flush()

    # -- front side -------------------------------------------------------------
    def add(self, url_id: int, host_id: int, priority: float) -> None:
        """Enqueue a new URL (ids must be unique)."""
        self._grow(url_id)
        self._top = max(self._top, url_id + 1)
        self._prio[url_id] = priority
        self._host_of[url_id] = host_id
        self._n += 1
        self._grow_hosts(host_id)
        if not self._live[host_id]:
            self._queued += 1
        self._live[host_id] += 1
        key = (-priority, url_id)
        if self._ranks is not None:
            self._ranks.add(key)
        over = self._over.get(host_id)
        if over is not None and key > over.cut:
            self._spill(over, url_id, key)
        else:
            self._where[url_id] = _IN_HEAD
            self._head_push(host_id, key)
        self._notify(host_id, key)

    def add_many(self, url_ids: np.ndarray, host_ids: np.ndarray,
                 priorities: np.ndarray) -> None:
        """:meth:`add` for each ``(url_id, host_id, priority)`` in order (ids unique and
        new), with the same takes to follow, without a Python step per URL: the
        per-URL arrays are written at once and each host is told once.  The URLs
        ranked after their host's cut (the usual case once a host has an overflow)
        wait in a frontier-wide buffer that is handed to the hosts' overflows grouped
        by host (:meth:`_settle`) before any overflow is read; the others wait in
        another, placed in their hosts' heads (:meth:`_place`) before any of those
        heads is read; each buffer is emptied once it holds :data:`PENDING_MAX` ids.
        A cut only moves down while URLs are added, so a URL after its host's cut
        before the batch is after it at its turn too.  One not after it goes to the
        head even if a compaction sets a better cut before it is placed: a head's best
        is checked against the cut before it is taken (:meth:`_best`)."""
        n = len(url_ids)
        if not n:
            return
        # (a batch is typically a page's links: each numpy call here costs as much as
        # a Python step per URL, so they are kept few; a batch of SMALL_BATCH URLs or
        # fewer runs the compiled loop's steps in Python, on lists; past compiled_from
        # URLs the compiled loop does the per-URL work)
        few = n <= SMALL_BATCH
        ids: Any
        hosts: Any
        prios: Any
        if few:
            ids, hosts = np.asarray(url_ids).tolist(), np.asarray(host_ids).tolist()
            prios = np.asarray(priorities, dtype=np.float64).tolist()
            top, top_host = max(ids), max(hosts)
        else:
            ids = np.asarray(url_ids, dtype=np.int64)
            hosts = np.asarray(host_ids, dtype=np.int64)
            prios = np.asarray(priorities, dtype=np.float64)
            top, top_host = int(ids.max()), int(hosts.max())
        self._grow(top)
        self._top = max(self._top, top + 1)
        self._n += n
        self._grow_hosts(top_host)
        self._state.grow(top_host)
        kernel = _admit if few else (
            compiled(_admit) if self._top >= self._compiled_from else None)
        if kernel is not None:
            spilled, placed, told, best_at = (
                [0] * n if few else np.empty(n, dtype=np.int64) for _ in range(4))
            queued, in_bulk, in_head, tells = kernel(
                ids, hosts, prios, self._prio, self._host_of, self._where, self._has_over,
                self._cut_neg, self._cut_id, self._live, self._has_fresh, self._state.array,
                _TOLD, self._told_at, spilled, placed, told, best_at)
            self._queued += queued
            if in_bulk:
                self._pending.extend(spilled[:in_bulk])
            if in_head:
                self._fresh.extend(placed[:in_head])
            tell = list(zip(list(told[:tells]), list(best_at[:tells]), strict=True))
        else:
            tell = self._admit(ids, hosts, prios)
        if self._ranks is not None:
            id_list, prio_list = (ids, prios) if few else (ids.tolist(), prios.tolist())
            for url_id, prio in zip(id_list, prio_list, strict=True):
                self._ranks.add((-prio, url_id))
        for host_id, k in tell:
            self._notify(int(host_id), (-float(prios[k]), int(ids[k])))
        if len(self._pending) >= PENDING_MAX:
            self._settle()
        if len(self._fresh) >= PENDING_MAX:
            self._place()

    def _admit(self, ids: np.ndarray, hosts: np.ndarray,
               prios: np.ndarray) -> list[tuple[int, int]]:
        """:meth:`add_many`'s per-URL work in numpy calls (the compiled loop's
        equivalent, :func:`_admit`): the per-URL arrays and host counts written, each
        URL in one of the two buffers; returns the hosts to tell, in the order they
        first appear, each with the position of its best new key."""
        negs = -prios
        self._prio[ids] = prios
        self._host_of[ids] = hosts
        cut_neg = self._cut_neg[hosts]
        bulk = self._has_over[hosts] & np.where(negs == cut_neg, ids > self._cut_id[hosts],
                                                negs > cut_neg)
        live = self._live
        held = live[hosts]
        np.add.at(live, hosts, 1)
        if not held.all():
            self._queued += len(set(hosts[held == 0].tolist()))
        in_bulk = int(np.count_nonzero(bulk))
        if in_bulk:
            spilled = ids if in_bulk == len(ids) else ids[bulk]
            self._where[spilled] = _IN_OVERFLOW
            self._pending.extend(spilled)
        if in_bulk < len(ids):
            placed = ids if not in_bulk else ids[~bulk]
            self._where[placed] = _IN_HEAD
            self._fresh.extend(placed)
            self._has_fresh[hosts if not in_bulk else hosts[~bulk]] = True
        # Only an empty or a ready host has anything to do with a new key.
        tell = np.flatnonzero(_TOLD[self._state.array[hosts]])
        if not len(tell):
            return []
        told = list(dict.fromkeys(hosts[tell].tolist()))
        order = np.lexsort((ids, negs, hosts))  # by host, then key: a host's best first
        best_at = order[np.searchsorted(hosts[order], told)].tolist()
        return list(zip(told, best_at, strict=True))

    def _place(self) -> None:
        """Append the URLs :meth:`add_many` buffered for the heads to their hosts'
        queues, one step per host (a last-in-first-out order sends every new URL to its
        host's head: a Python step per URL, or a key pushed on a heap, would be most of
        an add's cost); heads then over their limit are compacted together (see the
        module docstring).  Heap order is restored when a host's best is next read
        (:meth:`_heap_order`)."""
        fresh = self._fresh
        if not len(fresh):
            return
        self._fresh = Column(np.uint32)
        ids = fresh.array.astype(np.int64)
        hosts = self._host_of[ids]
        if len(hosts) > 1 and bool((hosts[1:] != hosts[:-1]).any()):
            order = np.argsort(hosts, kind="stable")
            ids, hosts = ids[order], hosts[order]
        self._has_fresh[hosts] = False
        m = len(ids)
        starts = np.flatnonzero(np.concatenate(([True], hosts[1:] != hosts[:-1])))
        keys = list(zip((-self._prio[ids]).tolist(), ids.tolist(), strict=True))
        queues, unheaped = self._queues, self._unheaped
        cap = 2 * self.head + _SLACK  # the head limit of a host holding `head` URLs
        full: list[int] = []
        for host_id, lo, hi in zip(hosts[starts].tolist(), starts.tolist(),
                                   [*starts[1:].tolist(), m], strict=True):
            queue = queues.get(host_id)
            if queue is None:
                queue = queues[host_id] = []
            if host_id not in unheaped:
                unheaped[host_id] = len(queue)
            queue.extend(keys[lo:hi])
            if len(queue) > cap:
                full.append(host_id)
        self._head_entries += m
        if full:
            overfull = self._overfull
            overfull.update(full)
            if (len(overfull) >= COMPACT_HOSTS
                    or any(len(queues[h]) > cap + _SLACK for h in full)):
                self._compact(sorted(overfull))

    def _settle(self) -> None:
        """Hand the URLs :meth:`add_many` spilled in bulk to their hosts' overflows,
        one step per host, in the order they were added (a host's FIFO stays
        ``ordered`` only if they follow its last key and one another in key order)."""
        pending = self._pending
        if not len(pending):
            return
        self._pending = Column(np.uint32)
        fifo_ids = pending.array
        ids = fifo_ids.astype(np.int64)
        hosts = self._host_of[ids].astype(np.int64)
        order = np.argsort(hosts, kind="stable")
        fifo_ids, ids, hosts = fifo_ids[order], ids[order], hosts[order]
        negs = -self._prio[ids]
        m = len(ids)
        starts = np.flatnonzero(np.concatenate(([True], hosts[1:] != hosts[:-1])))
        ends = np.append(starts[1:], m)
        down = ((negs[1:] < negs[:-1]) | ((negs[1:] == negs[:-1]) & (ids[1:] < ids[:-1])))
        down &= hosts[1:] == hosts[:-1]
        unordered = set((np.searchsorted(starts, np.flatnonzero(down), side="right")
                         - 1).tolist())
        overs = self._over
        negl, idl = negs.tolist(), ids.tolist()
        for g, (host_id, lo, hi) in enumerate(zip(hosts[starts].tolist(), starts.tolist(),
                                                  ends.tolist(), strict=True)):
            over = overs[host_id]
            if g in unordered or (over.last is not None
                                  and (negl[lo], idl[lo]) < over.last):
                over.ordered = False
            over.last = (negl[hi - 1], idl[hi - 1])
            over.fifo.extend(fifo_ids[lo:hi])

    def update(self, url_id: int, priority: float) -> None:
        """Change a frontier URL's priority (ignored for URLs already taken)."""
        if url_id not in self:
            return
        old = float(self._prio[url_id])
        if old == priority:
            return
        self._prio[url_id] = priority
        if self._ranks is not None:
            self._ranks.remove((-old, url_id))
            self._ranks.add((-priority, url_id))
        host_id = int(self._host_of[url_id])
        if self._has_fresh[host_id]:
            self._place()  # its buffered entry, if it has one, with its old key
        key = (-priority, url_id)
        if self._where[url_id] == _IN_OVERFLOW:
            over = self._over[host_id]
            if key > over.cut:
                over.ordered = False  # it keeps its place, now out of order
                return
            self._where[url_id] = _IN_HEAD  # its overflow entry is dead from now on
            # ... until a compaction spills it again, with another key, at its old place:
            # the next refill sorts (and drops the duplicate).
            over.ordered = False
        self._head_push(host_id, key)
        self._notify(host_id, key)

    def update_many(self, updates: Sequence[tuple[int, float]]) -> None:
        """Apply ``(url_id, priority)`` pairs as :meth:`update` would, one after another.

        Later pairs win and ids not in the frontier are ignored.  A batch that
        :meth:`rebuilds` (a recomputation that re-scores the whole frontier) only assigns
        the priorities, then rebuilds every structure wholesale in O(n log n) C-level
        work instead of O(batch log n) Python-level heap and index operations; host
        states, politeness times and the waiting heap do not depend on priorities and
        are kept as they are.  Smaller batches go through :meth:`update`.
        """
        if not self.rebuilds(len(updates)):
            for url_id, priority in updates:
                self.update(url_id, priority)
            return
        if not updates:
            return
        ids = np.fromiter((u for u, _ in updates), dtype=np.int64, count=len(updates))
        prios = np.fromiter((p for _, p in updates), dtype=np.float64, count=len(updates))
        ok = (ids >= 0) & (ids < len(self._prio))
        ids, prios = ids[ok], prios[ok]
        ok = self._where[ids] != _ABSENT
        ids, prios = ids[ok], prios[ok]
        _, last = np.unique(ids[::-1], return_index=True)  # the later pair wins
        keep = len(ids) - 1 - last
        ids, prios = ids[keep], prios[keep]
        if not len(ids):
            return
        before = self._prio[ids].copy()
        self._prio[ids] = prios
        if np.any(self._prio[ids] != before):
            self._rebuild_all()

    def rebuilds(self, batch: int) -> bool:
        """Whether :meth:`update_many` applies a batch of this size by a rebuild.

        A rebuild costs O(n log n) for the whole frontier of n URLs whatever the batch,
        per-item updates O(batch log n) with a much larger constant (Python heap pushes,
        index bisections, later lazy-deletion pops): so rebuild once the batch covers
        :data:`BULK_FRACTION` of the frontier and has at least :data:`BULK_MIN` pairs
        (below that a rebuild saves too little to matter), on a frontier of at most
        :data:`BULK_MAX_FRONTIER` URLs (above it one rebuild would stall fetching).
        """
        n = self._n
        return batch >= BULK_MIN and batch >= BULK_FRACTION * n and n <= BULK_MAX_FRONTIER

    def _rebuild_all(self) -> None:
        """Rebuild heads, overflows, the ready heap and the rank index from the arrays.

        One C-level sort of all keys ``(-priority, url_id)`` feeds everything: the
        rank index takes the sorted list as it is, each host's head is its first
        :attr:`head` keys in that order (a sorted list is a valid heap) and its
        overflow the rest, in order.
        """
        ids = np.flatnonzero(self._where)
        n = len(ids)
        negs = -self._prio[ids]
        order = np.lexsort((ids, negs))
        ids, negs = ids[order], negs[order]
        hosts = self._host_of[ids].astype(np.int64)
        by_host = np.argsort(hosts, kind="stable")  # stable: sorted within each host
        hosts = hosts[by_host]
        bounds = [0, *(np.flatnonzero(np.diff(hosts)) + 1).tolist(), n] if n else [0]
        # Millions of fresh tuples would trigger full collections for nothing (they
        # hold no references to other containers).
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            queues: dict[int, list[_Key]] = {host: [] for host in self._queues}
            for old in self._over.values():
                old.fifo.discard()
            self._pending = Column(np.uint32)  # their ids are in _where, as the rest
            self._fresh = Column(np.uint32)
            self._has_fresh[:] = False
            self._has_over[:] = False
            overs: dict[int, _Overflow] = {}
            head = self.head
            self._where[ids] = _IN_HEAD
            for host, lo, hi in zip(hosts[bounds[:-1]].tolist(), bounds[:-1], bounds[1:],
                                    strict=True):
                pos = by_host[lo:hi]
                top = pos[:head]
                queues[host] = list(zip(negs[top].tolist(), ids[top].tolist(), strict=True))
                if hi - lo > head:
                    rest = ids[pos[head:]]
                    self._where[rest] = _IN_OVERFLOW
                    over = overs[host] = self._new_overflow(queues[host][-1])
                    self._mark_cut(host, over.cut)
                    over.fifo.extend(rest)
            self._queues, self._over = queues, overs
            self._unheaped.clear()
            self._overfull.clear()
            self._head_entries = sum(len(q) for q in queues.values())
            self._compact_file()
            if self._ranks is not None:
                self._ranks.rebuild(list(zip(negs.tolist(), ids.tolist(), strict=True)))
            self._compact_ready()
        finally:
            if gc_was_enabled:
                gc.enable()

    def _head_push(self, host_id: int, key: _Key) -> None:
        queue = self._queues.get(host_id)
        if queue is None:
            queue = self._queues[host_id] = []
        self._unheaped.setdefault(host_id, len(queue))
        queue.append(key)
        self._head_entries += 1
        if len(queue) > 2 * min(int(self._live[host_id]), self.head) + _SLACK:
            self._compact([host_id])

    def _heap_order(self, host_id: int, queue: list[_Key] | None) -> None:
        """Restore the heap order of a host's queue after entries were appended: push
        them one by one, or heapify the whole queue if that takes fewer comparisons."""
        valid = self._unheaped.pop(host_id)
        if not queue:
            return
        appended = queue[valid:]
        if len(appended) * max(valid.bit_length(), 1) > len(queue):
            heapq.heapify(queue)
            return
        del queue[valid:]
        for key in appended:
            heapq.heappush(queue, key)

    def _notify(self, host_id: int, key: _Key) -> None:
        """A host gained a URL or a better priority: its place in the host heaps."""
        state = self._state.get(host_id, _EMPTY)
        if state == _READY:
            # The new entry may now be the host's best; an outdated entry is re-pushed
            # with the right key when it surfaces.
            best = key if self.host_order == "best-url" else self._best(host_id) or key
            heapq.heappush(self._ready, self._ready_key(host_id, best))
            if len(self._ready) > 2 * len(self._state) + _SLACK:
                self._compact_ready()
        elif state == _EMPTY:
            self._state[host_id] = _WAITING
            ready_at = self._ready_at.get(host_id, 0.0)
            heapq.heappush(self._waiting, (ready_at, host_id))
            if self.on_wait is not None:
                self.on_wait(host_id, ready_at)

    def _live_head(self, host_id: int, key: _Key) -> bool:
        neg, url_id = key
        # (an entry only ever enters its own host's heap)
        return bool(self._where[url_id] == _IN_HEAD and self._prio[url_id] == -neg)

    def _compact(self, hosts: list[int]) -> None:
        """Rebuild these hosts' heads from their live entries (drop superseded ones);
        keep the best :attr:`head` of each and spill the rest to its overflow (in key
        order, so they keep it ``ordered`` if they follow its last key).  One
        vectorised pass for all the hosts, a group sort by (host, key): a host's head
        takes every new URL of a last-in-first-out order, so this runs often."""
        if not hosts:
            return
        queues = self._queues
        heaps = [queues[h] for h in hosts]
        sizes = np.fromiter(map(len, heaps), dtype=np.int64, count=len(heaps))
        total = int(sizes.sum())
        # Only the ids are read (one C-level pass): a URL in a head has its current key
        # among its host's entries, so the live keys are its ids in the head with their
        # current priorities, each once; every other entry is superseded or gone.
        entries = list(chain.from_iterable(heaps))
        ids = np.array(list(map(_URL_ID, entries)), dtype=np.int64)
        group = np.repeat(np.arange(len(hosts), dtype=np.int64), sizes)
        pos = np.flatnonzero(self._where[ids] == _IN_HEAD)
        ids, group = ids[pos], group[pos]
        negs = -self._prio[ids]
        order = _group_key_order(group, negs, ids)
        negs, ids, group, pos = negs[order], ids[order], group[order], pos[order]
        fresh = True  # no id twice: every live entry holds its URL's current key
        if len(ids) > 1:  # an id pushed more than once (an update) is kept once
            first = np.ones(len(ids), dtype=bool)
            first[1:] = ids[1:] != ids[:-1]
            if not first.all():
                fresh = False
                negs, ids, group = negs[first], ids[first], group[first]
        head = self.head
        counts = np.bincount(group, minlength=len(hosts))
        starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        rank = np.arange(len(ids)) - starts[group]
        keep = rank < head
        if fresh:  # the entries themselves, no new tuples
            kept = list(map(entries.__getitem__, pos[keep].tolist()))
        else:
            kept = list(zip(negs[keep].tolist(), ids[keep].tolist(), strict=True))
        bounds = np.concatenate(([0], np.cumsum(np.minimum(counts, head)))).tolist()
        unheaped = self._unheaped
        for h, lo, hi in zip(hosts, bounds[:-1], bounds[1:], strict=True):
            queues[h] = kept[lo:hi]  # sorted: a valid heap
            unheaped.pop(h, None)
        self._head_entries += len(kept) - total
        self._overfull.difference_update(hosts)
        big = np.flatnonzero(counts > head)
        if not len(big):
            return
        at = starts[big] + head - 1  # each spilling host's cut, then its rest
        ends = starts[big] + counts[big]
        spilled_hosts = [hosts[g] for g in big.tolist()]
        k = len(big)
        pick = np.concatenate((at, at + 1, ends - 1))  # cut, first and last spilled
        keys = list(zip(negs[pick].tolist(), ids[pick].tolist(), strict=True))
        rest_ids = ids.astype(np.uint32)
        overs = self._over
        for j, (h, lo, hi) in enumerate(zip(spilled_hosts, (at + 1).tolist(), ends.tolist(),
                                            strict=True)):
            cut = keys[j]
            over = overs.get(h)
            if over is None:
                over = overs[h] = self._new_overflow(cut)
            elif cut < over.cut:
                over.cut = cut
            if over.last is not None and keys[k + j] < over.last:
                over.ordered = False
            over.last = keys[2 * k + j]
            over.fifo.extend(rest_ids[lo:hi])
        self._grow_hosts(max(spilled_hosts))
        where = np.asarray(spilled_hosts, dtype=np.int64)
        self._has_over[where] = True
        self._cut_neg[where] = [overs[h].cut[0] for h in spilled_hosts]
        self._cut_id[where] = [overs[h].cut[1] for h in spilled_hosts]
        self._where[ids[~keep]] = _IN_OVERFLOW

    def _new_overflow(self, cut: _Key) -> _Overflow:
        return _Overflow(cut=cut, fifo=Overflow(self._file, self._meter))

    def _compact_file(self) -> None:
        """Rewrite the spill file once most of it is garbage (ids read back)."""
        if self._file is not None and self._file.wants_compaction():
            self._file.compact(o.fifo for o in self._over.values())

    def _spill(self, over: _Overflow, url_id: int, key: _Key) -> None:
        """Append a URL to a host's overflow (never empty once it has a ``last``: an
        overflow read to its end is dropped)."""
        self._where[url_id] = _IN_OVERFLOW
        if over.last is not None and key < over.last:
            over.ordered = False
        over.last = key
        over.fifo.append(url_id)

    def _refill(self, host_id: int, over: _Overflow) -> None:
        """Move the best :attr:`head` overflow URLs to the head (cut: the worst moved).

        In order (FIFO orders, or no update since the last sort) this reads the next
        entries from ``start``; out of order it sorts the live entries by their keys
        first (O(n log n) of C-level work for n overflow URLs)."""
        self._settle()
        head = self.head
        fifo = over.fifo
        if not over.ordered:
            ids = fifo.drain()
            ids = np.unique(ids[self._where[ids] == _IN_OVERFLOW])
            ids = ids[np.lexsort((ids, -self._prio[ids]))]
            fifo.extend(ids)
            over.ordered = True
            over.last = (-float(self._prio[ids[-1]]), int(ids[-1])) if len(ids) else None
        parts: list[np.ndarray] = []
        need = head
        while need > 0:
            chunk = fifo.peek(2 * head)
            if not len(chunk):
                break
            live = np.flatnonzero(self._where[chunk] == _IN_OVERFLOW)
            use = live[:need]
            fifo.advance(int(use[-1]) + 1 if len(use) < len(live) else len(chunk))
            parts.append(chunk[use])
            need -= len(use)
        if fifo.empty:
            del self._over[host_id]
            self._mark_cut(host_id, None)
        self._compact_file()
        moved = np.concatenate(parts) if parts else np.empty(0, dtype=np.uint32)
        if not len(moved):
            return
        self._where[moved] = _IN_HEAD
        keys = list(zip((-self._prio[moved]).tolist(), moved.tolist(), strict=True))
        over.cut = keys[-1]
        if host_id in self._over:
            self._mark_cut(host_id, over.cut)
        queue = self._queues.setdefault(host_id, [])
        for key in keys:
            heapq.heappush(queue, key)
        self._head_entries += len(keys)

    def _compact_ready(self) -> None:
        """Rebuild the ready-host heap: one entry per ready host, keyed by its best URL."""
        ready: list[tuple[float, ...]] = []
        for host in [h for h, st in self._state.items() if st == _READY]:
            best = self._best(host)
            if best is None:
                self._state[host] = _EMPTY
            else:
                ready.append(self._ready_key(host, best))
        heapq.heapify(ready)
        self._ready = ready

    def _best(self, host_id: int) -> _Key | None:
        """The host's best key (its head's top), refilling the head from the overflow
        when the head is empty or its top is not below the cut."""
        if host_id < len(self._has_fresh) and self._has_fresh[host_id]:
            self._place()
        queue = self._queues.get(host_id)
        if host_id in self._unheaped:
            self._heap_order(host_id, queue)
        while True:
            while queue and not self._live_head(host_id, queue[0]):
                heapq.heappop(queue)  # taken, superseded, or spilled
                self._head_entries -= 1
            over = self._over.get(host_id)
            if over is None or (queue and queue[0] <= over.cut):
                return queue[0] if queue else None
            self._refill(host_id, over)
            queue = self._queues.get(host_id)

    def _ready_key(self, host_id: int, best: _Key) -> tuple[float, ...]:
        """The ready-heap key of a host whose best URL is ``best`` (smaller first)."""
        if self.host_order == "best-url":
            return (best[0], best[1], host_id)
        return (-float(self._live[host_id]), best[0], best[1], host_id)

    # -- back side --------------------------------------------------------------
    def _wake(self, now: float) -> None:
        waiting, state = self._waiting, self._state
        while waiting and waiting[0][0] <= now:
            when, host = heapq.heappop(waiting)
            if state.get(host) != _WAITING or self._ready_at.get(host, 0.0) != when:
                continue
            best = self._best(host)
            if best is None:
                state[host] = _EMPTY
                continue
            state[host] = _READY
            heapq.heappush(self._ready, self._ready_key(host, best))

    def pop_ready(self, now: float) -> int | None:
        """The ready host with the best URL (now busy), or None if no host is ready."""
        self._wake(now)
        ready, state = self._ready, self._state
        while ready:
            entry = heapq.heappop(ready)
            host = int(entry[-1])
            if state.get(host) != _READY:
                continue
            best = self._best(host)
            if best is None:
                state[host] = _EMPTY
                continue
            key = self._ready_key(host, best)
            if key != entry:
                heapq.heappush(ready, key)
                continue
            state[host] = _BUSY
            self.busy += 1
            return host
        return None

    def take(self, host_id: int) -> Taken | None:
        """Remove and return the best URL of a busy host (None if it has none left)."""
        best = self._best(host_id)
        if best is None:
            return None
        heapq.heappop(self._queues[host_id])
        self._head_entries -= 1
        neg, url_id = best
        rank = None
        if self._ranks is not None:
            rank = self._ranks.pop_rank(best)
        self._where[url_id] = _ABSENT
        self._n -= 1
        self._live[host_id] -= 1
        if not self._live[host_id]:
            self._queued -= 1
        return Taken(url_id, host_id, -neg, rank)

    def release(self, host_id: int, ready_at: float) -> None:
        """A busy host is done; it may be contacted again from ``ready_at`` (monotonic)."""
        if self._state.get(host_id) == _BUSY:
            self.busy -= 1
        self._ready_at[host_id] = ready_at
        if self._best(host_id) is None:
            self._state[host_id] = _EMPTY
            return
        self._state[host_id] = _WAITING
        heapq.heappush(self._waiting, (ready_at, host_id))
        if self.on_wait is not None:
            self.on_wait(host_id, ready_at)

    def next_wakeup(self) -> float | None:
        """The earliest time a waiting host becomes ready (None if none waits)."""
        waiting = self._waiting
        while waiting:
            when, host = waiting[0]
            if self._state.get(host) == _WAITING and self._ready_at.get(host, 0.0) == when:
                return when
            heapq.heappop(waiting)
        return None

    def has_ready(self) -> bool:
        return bool(self._ready)

    def drain(self) -> Iterator[int]:
        """Remove every remaining URL, yielding their ids (in id order)."""
        ids = np.flatnonzero(self._where).tolist()
        self._where[:] = _ABSENT
        self._n = 0
        self._live[:] = 0
        self._queued = 0
        self._queues.clear()
        self._unheaped.clear()
        self._overfull.clear()
        self._head_entries = 0
        for over in self._over.values():
            over.fifo.discard()
        self._over.clear()
        self._pending = Column(np.uint32)
        self._fresh = Column(np.uint32)
        self._has_fresh[:] = False
        self._has_over[:] = False
        self._compact_file()
        self._ready.clear()
        self._waiting.clear()
        busy = [h for h, s in self._state.items() if s == _BUSY]
        self._state = _States()
        for h in busy:
            self._state[h] = _BUSY
        self._ranks = RankIndex() if self._ranks is not None else None
        yield from ids


# -- compiled loop (numba, when installed: see Frontier's compiled_from) -------------

def _admit(ids: Any, hosts: Any, prios: Any, prio: Any, host_of: Any, where: Any,
           has_over: Any, cut_neg: Any, cut_id: Any, live: Any, has_fresh: Any,
           state: Any, told: Any, told_at: Any, spilled: Any, placed: Any, tell: Any,
           best_at: Any) -> Any:  # pragma: no cover - compiled by numba
    """:meth:`Frontier._admit` in one pass: per-URL arrays and host counts written,
    each URL's id into ``spilled`` (after its host's cut) or ``placed``; ``tell`` the
    hosts to tell (state ``told``), in the order they first appear, ``best_at`` the
    position of each one's best new key (``told_at``: a zeroed scratch array by host,
    zeroed again on return).  Returns the hosts newly holding URLs and how many ids
    went into ``spilled``, ``placed`` and ``tell``."""
    queued = n_spilled = n_placed = n_told = 0
    for k in range(len(ids)):
        url_id, h, neg = ids[k], hosts[k], -prios[k]
        prio[url_id] = prios[k]
        host_of[url_id] = h
        if live[h] == 0:
            queued += 1
        live[h] += 1
        if has_over[h] and (neg > cut_neg[h] or (neg == cut_neg[h] and url_id > cut_id[h])):
            where[url_id] = _IN_OVERFLOW
            spilled[n_spilled] = url_id
            n_spilled += 1
        else:
            where[url_id] = _IN_HEAD
            has_fresh[h] = True
            placed[n_placed] = url_id
            n_placed += 1
        if told[state[h]]:
            at = told_at[h]
            if at == 0:
                told_at[h] = k + 1
                tell[n_told] = h
                n_told += 1
            elif neg < -prios[at - 1] or (neg == -prios[at - 1] and url_id < ids[at - 1]):
                told_at[h] = k + 1
    for t in range(n_told):
        best_at[t] = told_at[tell[t]] - 1
        told_at[tell[t]] = 0
    return queued, n_spilled, n_placed, n_told


def compile_loops() -> bool:
    """Compile the frontier's loop now (or load it from numba's cache on disk) rather
    than at the first add past ``compiled_from`` URLs; False without numba."""
    if compiled(_admit) is None:
        return False
    frontier = Frontier(record_rank=False, compiled_from=0)
    frontier.add_many(np.array([0, 1]), np.array([0, 1]), np.array([0.0, 1.0]))
    return True
